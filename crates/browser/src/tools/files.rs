//! File uploads: `file_upload` answers an open file chooser, or sets the
//! files of an `<input type=file>` by ref.

use std::path::Path;

use lumo_protocol::ErrorCode;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

use super::tab_tool::{Ctx, OnTab, TabUse, on_tab};
use crate::action::Reach;
use crate::error::refuse;
use crate::helper::{self, element};
use crate::page::check_ref;
use crate::tool::{Hints, Outcome, Tool};

pub(crate) fn tools() -> Vec<Tool<Ctx>> {
    vec![
        Tool::new(
            "file_upload",
            "Choose local files for the open file chooser, or for an <input type=file> by ref.",
            Hints::ACT,
            upload,
        )
        .untrusted(),
    ]
}

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
struct UploadArgs {
    /// Absolute paths of local files.
    paths: Vec<String>,
    /// The file input, when no file chooser is open.
    #[serde(rename = "ref")]
    target: Option<String>,
}

async fn upload(session: Ctx, args: UploadArgs) -> Outcome {
    if args.paths.is_empty() {
        return Err(refuse(ErrorCode::InvalidArguments, "paths: give at least one absolute file path"));
    }
    for (i, path) in args.paths.iter().enumerate() {
        let problem = if !Path::new(path).is_absolute() {
            Some("is not an absolute path")
        } else {
            match tokio::fs::metadata(path).await {
                Ok(m) if m.is_file() => None,
                Ok(_) => Some("is not a file"),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => Some("does not exist"),
                Err(_) => Some("cannot be read"),
            }
        };
        if let Some(problem) = problem {
            return Err(refuse(ErrorCode::InvalidArguments, format!("paths[{i}]: {path} {problem}")));
        }
    }
    if let Some(r) = &args.target {
        check_ref(r)?;
    }
    let names: Vec<&str> =
        args.paths.iter().map(|p| Path::new(p).file_name().and_then(|n| n.to_str()).unwrap_or(p)).collect();
    let args = &args;
    on_tab(&session, TabUse::PAGE.settling(Reach::InPlace), |OnTab { live, tab }| async move {
        let chooser = tab.state().file_chooser.clone();
        let count = args.paths.len();
        let several = |multiple: bool| {
            if count > 1 && !multiple {
                Err(refuse(ErrorCode::InvalidArguments, format!("paths: {count} files given, but it takes one")))
            } else {
                Ok(())
            }
        };
        match (chooser, &args.target) {
            (Some(chooser), _) => {
                several(chooser.multiple)?;
                live.call(
                    &tab,
                    "DOM.setFileInputFiles",
                    json!({"files": args.paths, "backendNodeId": chooser.backend_node_id}),
                )
                .await?;
                tab.state().file_chooser = None;
                Ok(format!("Chose {count} file(s) in the file chooser: {}.", names.join(", ")))
            }
            (None, Some(r)) => {
                let object = element(&live, &tab, r).await?;
                let input = helper::file_input(&live, &tab, &object).await?;
                several(input.multiple)?;
                live.call_in(
                    &object.session,
                    "DOM.setFileInputFiles",
                    json!({"files": args.paths, "objectId": object.object}),
                )
                .await?;
                Ok(format!("Chose {count} file(s) for {r}: {}.", names.join(", ")))
            }
            (None, None) => Err(refuse(
                ErrorCode::InvalidArguments,
                "ref: no file chooser is open; give the ref of an <input type=file>, or click the upload button first",
            )),
        }
    })
    .await
}
