//! What `lumo` prints on stdout: lines that end lumo quietly when the pipe
//! closes, and tool answers as text or JSON.

/// Writes a line to stdout. A closed pipe (`lumo … | head`) is not an error:
/// lumo ends quietly with `status`, the exit status it was going to have.
pub(crate) fn emit(line: impl std::fmt::Display, status: i32) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = writeln!(out, "{line}").and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(status);
        }
        eprintln!("lumo: cannot write to stdout: {e}");
        std::process::exit(1);
    }
}

/// Prints an answer (text, or JSON on one line).
pub(crate) fn show(output: lumo_host::GateOutput, json: bool) {
    let status = if output.is_error { 1 } else { 0 };
    if json {
        emit(
            serde_json::json!({"text": output.text, "structured": output.structured, "isError": output.is_error,
                "images": output.images.iter().map(|i| serde_json::json!({"mime": i.mime, "bytes": i.data.len()})).collect::<Vec<_>>()}),
            status,
        );
    } else {
        emit(&output.text, status);
        for image in &output.images {
            emit(format_args!("[image {} — {} base64 bytes]", image.mime, image.data.len()), status);
        }
    }
}
