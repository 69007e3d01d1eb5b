//! The secrets lumo hides (`--redact`, `LUMO_REDACT`) and the log writer that
//! hides them, with every credential-shaped value, from log lines.

use std::io::Write;
use std::sync::{Arc, OnceLock, RwLock};

use lumo_protocol::redact::Redactor;

/// The secrets given on the command line and in the environment (set once in `main`).
static GIVEN: OnceLock<Vec<String>> = OnceLock::new();
/// Those and the policy file's (`redact = [...]`), replaced when the file changes.
static REDACTOR: RwLock<Option<Arc<Redactor>>> = RwLock::new(None);

/// Sets the secrets to hide: the `--redact` values, then `LUMO_REDACT` (comma-separated).
pub(crate) fn init(flags: &[String]) {
    let from_env = std::env::var("LUMO_REDACT").unwrap_or_default();
    let secrets: Vec<String> = flags.iter().cloned().chain(from_env.split(',').map(|s| s.trim().to_string())).collect();
    let _ = GIVEN.set(secrets);
    with_file_secrets(&[]);
}

/// Hides the policy file's `secrets` too, on top of the given ones (they add up: a secret
/// named anywhere stays hidden); returns the redactor now in force.
pub(crate) fn with_file_secrets(secrets: &[String]) -> Arc<Redactor> {
    let all = GIVEN.get().into_iter().flatten().chain(secrets).cloned();
    let redactor = Arc::new(Redactor::new(all));
    *REDACTOR.write().unwrap_or_else(|e| e.into_inner()) = Some(redactor.clone());
    redactor
}

/// The redactor every gate and the log writer use.
pub(crate) fn redactor() -> Arc<Redactor> {
    REDACTOR.read().unwrap_or_else(|e| e.into_inner()).clone().unwrap_or_default()
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
