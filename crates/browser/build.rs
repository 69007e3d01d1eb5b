//! Assembles the in-page helper: the files listed in `src/js/parts.txt`, in
//! that order, become one script in `$OUT_DIR/helper.js`. No bundler: the
//! parts are plain scripts joined inside one function, so they share its scope
//! (and nothing of it reaches the global object but `__lumo`). The JS tests
//! (`crates/browser/tests/js`) run this same file. `extract.js` (page_extract)
//! becomes `$OUT_DIR/reader.js`, installed only where a page is first read.

use std::error::Error;
use std::fs;
use std::path::Path;

fn main() -> Result<(), Box<dyn Error>> {
    let js = Path::new("src/js");
    // The whole folder: a changed part, a new part or a changed list rebuilds.
    println!("cargo::rerun-if-changed=src/js");
    let list = fs::read_to_string(js.join("parts.txt"))?;
    // Installed once per document: a second run (a retried install) keeps the first's refs.
    let mut script = String::from(
        "// lumo's in-page helper, assembled from crates/browser/src/js/ (parts.txt).\n(() => {\nif (globalThis.__lumo) return;\n",
    );
    for part in list.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')) {
        let text = fs::read_to_string(js.join(part)).map_err(|e| format!("src/js/parts.txt names {part}: {e}"))?;
        script.push_str(&format!("// --- {part}\n{text}"));
        if !text.ends_with('\n') {
            script.push('\n');
        }
    }
    script.push_str("})();\n");
    let out = std::env::var("OUT_DIR")?;
    fs::write(Path::new(&out).join("helper.js"), script)?;
    // page_extract's reader: a function of the helper parts it shares, handed to
    // the helper of the world it is evaluated in (installed when first needed).
    let reader = fs::read_to_string(js.join("extract.js"))?;
    fs::write(
        Path::new(&out).join("reader.js"),
        format!("// lumo's reader, from crates/browser/src/js/extract.js.\nglobalThis.__lumo.addReader(\n{reader});\n"),
    )?;
    Ok(())
}
