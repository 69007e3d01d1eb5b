//! The secrets lumo hides (`--redact`, `LUMO_REDACT`) and the log writer that
//! hides them, with every credential-shaped value, from log lines.

use std::io::Write;
use std::sync::{Arc, OnceLock};

use lumo_protocol::redact::Redactor;

/// Set once in `main`, before the first log line or tool call.
static REDACTOR: OnceLock<Arc<Redactor>> = OnceLock::new();

/// Sets the secrets to hide: the `--redact` values, then `LUMO_REDACT` (comma-separated).
pub(crate) fn init(flags: &[String]) {
    let from_env = std::env::var("LUMO_REDACT").unwrap_or_default();
    let secrets = flags.iter().cloned().chain(from_env.split(',').map(|s| s.trim().to_string()));
    let _ = REDACTOR.set(Arc::new(Redactor::new(secrets)));
}

/// The redactor every gate and the log writer use.
pub(crate) fn redactor() -> Arc<Redactor> {
    REDACTOR.get().cloned().unwrap_or_default()
}

/// Log lines to stderr, credentials (URL tokens included) and listed secrets hidden.
pub(crate) struct LogWriter;

impl Write for LogWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // The fmt layer writes one whole formatted event per call: redact it as a line.
        let line = String::from_utf8_lossy(buf);
        std::io::stderr().write_all(redactor().log(&line).as_bytes())?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
    }
}
