//! MCP over stdin/stdout, one JSON-RPC message per line.
//!
//! rmcp's stdio transport silently drops a line that is not JSON. JSON-RPC 2.0
//! asks for a `-32700 Parse error` reply with `id: null`, and a client that sent
//! garbage learns nothing otherwise; so lumo reads the lines itself: a line that
//! is not JSON gets `-32700`, JSON that is no JSON-RPC message gets `-32600`
//! (both with `id: null`, and lumo keeps serving); an unknown notification is
//! ignored, as JSON-RPC wants for notifications. A reply cannot start a storm:
//! an echoed error reply is itself a valid message that needs no answer.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Stdin, Stdout};
use tokio::sync::Mutex;

/// Longest line read (as rmcp's own limit); longer ones are dropped with an error reply.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// stdin/stdout as an rmcp transport that answers unparsable lines.
pub(crate) struct StdioTransport {
    reader: BufReader<Stdin>,
    /// The line being read: kept across cancelled reads (rmcp polls `receive` in a `select!`).
    line: Vec<u8>,
    /// Skipping the rest of an over-long line.
    discarding: bool,
    writer: Arc<Mutex<Option<Stdout>>>,
}

impl StdioTransport {
    pub(crate) fn new() -> Self {
        Self {
            reader: BufReader::new(tokio::io::stdin()),
            line: Vec::new(),
            discarding: false,
            writer: Arc::new(Mutex::new(Some(tokio::io::stdout()))),
        }
    }

    /// Reads up to the next newline. `Ok(false)` at the end of input.
    async fn read_line(&mut self) -> std::io::Result<bool> {
        loop {
            let available = self.reader.fill_buf().await?;
            if available.is_empty() {
                return Ok(false);
            }
            let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
                Some(i) => (&available[..i], Some(i + 1)),
                None => (available, None),
            };
            if !self.discarding {
                if self.line.len() + chunk.len() > MAX_LINE {
                    self.discarding = true;
                    self.line.clear();
                } else {
                    self.line.extend_from_slice(chunk);
                }
            }
            let used = done.unwrap_or(available.len());
            self.reader.consume(used);
            if done.is_some() {
                return Ok(true);
            }
        }
    }

    async fn reply(&self, reply: Value) {
        let _ = write_line(&self.writer, reply.to_string().into_bytes()).await;
    }
}

async fn write_line(writer: &Mutex<Option<Stdout>>, mut bytes: Vec<u8>) -> std::io::Result<()> {
    bytes.push(b'\n');
    let mut writer = writer.lock().await;
    let Some(out) = writer.as_mut() else {
        return Err(std::io::Error::new(std::io::ErrorKind::NotConnected, "stdout is closed"));
    };
    out.write_all(&bytes).await?;
    out.flush().await
}

fn error_reply(code: i64, message: String) -> Value {
    json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}})
}

/// What to do with one line.
enum Parsed {
    Message(Box<ClientJsonRpcMessage>),
    Reply(Value),
    Skip,
}

fn parse(line: &[u8]) -> Parsed {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    let line = line.strip_prefix(b"\xEF\xBB\xBF".as_slice()).unwrap_or(line);
    if line.iter().all(u8::is_ascii_whitespace) {
        return Parsed::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(value) => value,
        Err(e) => {
            return Parsed::Reply(error_reply(
                -32700,
                format!("Parse error: the line is not JSON ({e}); send one JSON-RPC message per line"),
            ));
        }
    };
    match serde_json::from_value::<ClientJsonRpcMessage>(value.clone()) {
        Ok(message) => Parsed::Message(Box::new(message)),
        // A notification never gets an answer; unknown ones (other protocols' chatter) are ignored.
        Err(_) if value.get("method").is_some() && value.get("id").is_none() => Parsed::Skip,
        // An answer to nothing lumo asked is dropped too: replying could loop with a confused peer.
        Err(_) if value.get("method").is_none() && (value.get("result").is_some() || value.get("error").is_some()) => {
            Parsed::Skip
        }
        Err(e) => {
            Parsed::Reply(error_reply(-32600, format!("Invalid Request: not a JSON-RPC 2.0 request lumo knows ({e})")))
        }
    }
}

impl Transport<RoleServer> for StdioTransport {
    type Error = std::io::Error;

    fn send(&mut self, item: ServerJsonRpcMessage) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let writer = self.writer.clone();
        async move {
            let bytes = serde_json::to_vec(&item).map_err(std::io::Error::other)?;
            write_line(&writer, bytes).await
        }
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        loop {
            match self.read_line().await {
                Ok(true) => {}
                Ok(false) => return None,
                Err(e) => {
                    tracing::error!(error = %e, "reading stdin failed");
                    return None;
                }
            }
            let line = std::mem::take(&mut self.line);
            if std::mem::take(&mut self.discarding) {
                self.reply(error_reply(-32600, format!("Invalid Request: the line is over {MAX_LINE} bytes"))).await;
                continue;
            }
            match parse(&line) {
                Parsed::Message(message) => return Some(*message),
                Parsed::Reply(reply) => {
                    tracing::debug!(%reply, "answered an unusable stdin line");
                    self.reply(reply).await;
                }
                Parsed::Skip => {}
            }
        }
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.writer.lock().await.take();
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reply_code(line: &str) -> Option<i64> {
        match parse(line.as_bytes()) {
            Parsed::Reply(r) => {
                assert!(r["id"].is_null(), "{r}");
                r["error"]["code"].as_i64()
            }
            _ => None,
        }
    }

    #[test]
    fn garbage_gets_a_parse_error_with_a_null_id() {
        assert_eq!(reply_code("this is not json"), Some(-32700));
        assert_eq!(reply_code("{\"jsonrpc\": \"2.0\", "), Some(-32700));
    }

    #[test]
    fn json_that_is_no_request_gets_invalid_request() {
        assert_eq!(reply_code("[1, 2]"), Some(-32600));
        assert_eq!(reply_code("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":42}"), Some(-32600));
    }

    #[test]
    fn blank_lines_unknown_notifications_and_stray_answers_are_ignored() {
        for line in [
            "",
            "  \r",
            "{\"jsonrpc\":\"2.0\",\"method\":\"$/lsp\"}",
            "{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32700,\"message\":\"x\"}}",
        ] {
            assert!(matches!(parse(line.as_bytes()), Parsed::Skip | Parsed::Message(_)), "{line:?}");
        }
    }

    #[test]
    fn requests_pass() {
        let line = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
        assert!(matches!(parse(line.as_bytes()), Parsed::Message(_)));
    }
}
