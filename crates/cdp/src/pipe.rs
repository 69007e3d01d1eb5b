//! CDP over the launched browser's `--remote-debugging-pipe`: Chromium reads
//! commands on its fd 3 and writes answers and events on its fd 4, each
//! message a JSON text ended by a NUL byte.
//!
//! Why a pipe and not a port: no other local process can reach the browser,
//! and when lumo dies (even by SIGKILL) the kernel closes lumo's ends of the
//! pipe, upon which Chromium exits by itself (checked with Chromium 156:
//! gone about 0.5 s after the pipe closed, children included).

use futures_util::Stream;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::unix::pipe;

use crate::connection::Connection;
use crate::connection::MAX_MESSAGE;
use crate::error::CdpError;

/// Runs a [`Connection`] over the two pipe ends lumo keeps: `from_browser`
/// (the browser's fd 4) and `to_browser` (the browser's fd 3).
pub(crate) fn connection(from_browser: pipe::Receiver, to_browser: pipe::Sender) -> Connection {
    let outgoing = futures_util::sink::unfold(to_browser, |mut to_browser, text: String| async move {
        let mut frame = text.into_bytes();
        frame.push(0);
        to_browser.write_all(&frame).await.map_err(|_| CdpError::ConnectionLost)?;
        Ok::<_, CdpError>(to_browser)
    });
    Connection::over(messages(from_browser, MAX_MESSAGE), outgoing)
}

/// Splits what `reader` yields at NUL bytes into UTF-8 messages of at most
/// `limit` bytes. The stream ends at end of file; a message over the limit
/// or not UTF-8 ends it with an error (the framing can no longer be trusted).
pub(crate) fn messages<R>(reader: R, limit: usize) -> impl Stream<Item = Result<String, CdpError>> + Send
where
    R: tokio::io::AsyncRead + Unpin + Send,
{
    struct State<R> {
        reader: R,
        buffer: Vec<u8>,
        /// Where the search for the next NUL goes on (bytes before it have none).
        scanned: usize,
        done: bool,
    }
    let state = State { reader, buffer: Vec::new(), scanned: 0, done: false };
    futures_util::stream::unfold(state, move |mut state| async move {
        if state.done {
            return None;
        }
        loop {
            if let Some(at) = state.buffer[state.scanned..].iter().position(|&b| b == 0) {
                let end = state.scanned + at;
                let rest = state.buffer.split_off(end + 1);
                let mut message = std::mem::replace(&mut state.buffer, rest);
                message.pop(); // the NUL
                state.scanned = 0;
                let item = String::from_utf8(message)
                    .map_err(|e| CdpError::Malformed(format!("a message on the pipe is not UTF-8: {e}")));
                state.done = item.is_err();
                return Some((item, state));
            }
            state.scanned = state.buffer.len();
            if state.buffer.len() > limit {
                state.done = true;
                let error = CdpError::Malformed(format!("a message on the pipe is over {limit} bytes"));
                return Some((Err(error), state));
            }
            state.buffer.reserve(64 * 1024);
            match state.reader.read_buf(&mut state.buffer).await {
                Ok(0) | Err(_) => return None,
                Ok(_) => {}
            }
        }
    })
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[tokio::test]
    async fn messages_split_at_nul_across_reads_and_stop_at_the_limit() {
        let (mut writer, reader) = tokio::io::duplex(8);
        let feeder = tokio::spawn(async move {
            writer.write_all(b"{\"id\":1}\0{\"id\"").await.expect("write");
            writer.write_all(b":2}\0\0").await.expect("write");
            // The reader gives up past the limit, so this write may find the pipe closed.
            let _ = writer.write_all(&[b'x'; 40]).await;
        });
        let got: Vec<_> = messages(reader, 32).collect().await;
        feeder.await.expect("feeder");
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!(got[0].as_deref().ok(), Some("{\"id\":1}"));
        assert_eq!(got[1].as_deref().ok(), Some("{\"id\":2}"));
        assert_eq!(got[2].as_deref().ok(), Some(""));
        assert!(matches!(&got[3], Err(CdpError::Malformed(m)) if m.contains("over 32 bytes")), "{got:?}");
    }
}
