//! Launched mode: lumo brings the bridge up inside the Chromium it started,
//! so providers work without the user's own Chrome (and every test runs headless).
//!
//! On first need it starts a bridge endpoint on a free loopback port with a
//! throwaway secret, loads the bridge extension (built into the binary and
//! written to a temporary folder) and the configured provider extensions
//! with CDP `Extensions.loadUnpacked` over lumo's own pipe, and pairs the
//! bridge with no user step: it writes the endpoint and a one-time code into
//! the bridge's storage from its service worker. If the browser restarts, the
//! next need does it all again.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use lumo_browser::Session;
use lumo_cdp::{CdpError, Connection};
use lumo_protocol::ExtensionId;
use serde_json::{Value, json};

use super::link::Link;
use crate::bridge::{self, Bridge, BridgeOptions};

/// The bridge extension's files, built in so an installed lumo needs no checkout.
const BRIDGE_FILES: &[(&str, &str)] = &[
    ("manifest.json", include_str!("../../../../extension/bridge/manifest.json")),
    ("worker.js", include_str!("../../../../extension/bridge/worker.js")),
    ("state.js", include_str!("../../../../extension/bridge/state.js")),
    ("relay.js", include_str!("../../../../extension/bridge/relay.js")),
    ("providers.js", include_str!("../../../../extension/bridge/providers.js")),
    ("popup.html", include_str!("../../../../extension/bridge/popup.html")),
    ("popup.js", include_str!("../../../../extension/bridge/popup.js")),
    ("wake.html", include_str!("../../../../extension/bridge/wake.html")),
    ("wake.js", include_str!("../../../../extension/bridge/wake.js")),
];

/// How long the bridge has to connect after it was paired.
const CONNECT_WITHIN: Duration = Duration::from_secs(15);

/// Brings the bridge up in lumo's own browser.
pub struct Launcher {
    session: Arc<Session>,
    extensions: Vec<PathBuf>,
    up: tokio::sync::Mutex<Option<Up>>,
}

struct Up {
    cdp: Connection,
    _bridge: Bridge,
    _dir: tempfile::TempDir,
}

impl Launcher {
    /// A launcher for `session`'s browser that also loads the unpacked
    /// provider extensions in `extensions`.
    pub fn new(session: Arc<Session>, extensions: Vec<PathBuf>) -> Self {
        Self { session, extensions, up: tokio::sync::Mutex::new(None) }
    }

    pub(crate) fn loads_extensions(&self) -> bool {
        !self.extensions.is_empty()
    }

    /// The browser's CDP connection, if the bridge is up in it.
    pub(crate) async fn connection(&self) -> Option<Connection> {
        self.up.lock().await.as_ref().filter(|u| !u.cdp.is_closed()).map(|u| u.cdp.clone())
    }

    /// Drops the bridge endpoint and its temporary folder.
    pub(crate) async fn shutdown(&self) {
        self.up.lock().await.take();
    }

    /// Makes sure the bridge runs in the current browser and is connected to
    /// `link`; each provider extension it loads goes to `loaded`.
    pub(crate) async fn ensure(&self, link: &Link, loaded: impl Fn(ExtensionId)) -> Result<(), String> {
        let mut up = self.up.lock().await;
        if let Some(current) = up.as_ref().filter(|u| !u.cdp.is_closed()) {
            let _ = &current.cdp;
            return if link.wait_connected(CONNECT_WITHIN).await {
                Ok(())
            } else {
                Err("the bridge extension in lumo's browser stopped answering".into())
            };
        }
        *up = None;
        let started = Instant::now();
        let cdp = self.session.browser_connection().await.map_err(|f| f.to_string())?;
        // Owned like a profile: the next lumo removes it if this one is killed.
        let dir = lumo_cdp::owned_temp_dir("bridge")
            .map_err(|e| format!("cannot make a folder for the bridge extension: {e}"))?;
        let extension = dir.path().join("bridge");
        write_bridge(&extension).map_err(|e| format!("cannot write the bridge extension: {e}"))?;
        let mut options = BridgeOptions::new(([127, 0, 0, 1], 0).into(), dir.path().join("state"));
        options.providers = link.clone();
        // Port 0 is never taken by another lumo, so this bridge always owns its address.
        let (bridge, role) = bridge::start(options).await.map_err(|e| e.to_string())?;
        let (bridge::Role::Owner(addr) | bridge::Role::Attached(addr)) = role;
        let id = load(&cdp, &extension).await?;
        if id.as_str() != bridge::EXTENSION_ID {
            return Err(format!("the bridge extension loaded as {}, not {}", id.as_str(), bridge::EXTENSION_ID));
        }
        for path in &self.extensions {
            let id = load(&cdp, path).await?;
            tracing::info!(path = %path.display(), id = id.as_str(), "loaded a provider extension");
            loaded(id);
        }
        let code = bridge::auth::Store::open(&dir.path().join("state"))
            .and_then(|s| s.new_pair_code())
            .map_err(|e| format!("cannot make a pairing code: {e}"))?;
        let server = format!("ws://{addr}/bridge");
        let pairing = format!(
            "chrome.storage.local.set({{server: {}, pairCode: {}}}).then(() => true)",
            Value::from(server),
            Value::from(code)
        );
        in_worker(&cdp, bridge::EXTENSION_ID, &pairing).await?;
        *up = Some(Up { cdp, _bridge: bridge, _dir: dir });
        drop(up);
        if !link.wait_connected(CONNECT_WITHIN).await {
            return Err(format!(
                "the bridge extension did not connect within {} s of pairing",
                CONNECT_WITHIN.as_secs()
            ));
        }
        tracing::info!(ms = started.elapsed().as_millis() as u64, "bridge up in lumo's browser");
        Ok(())
    }
}

fn write_bridge(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    for (name, text) in BRIDGE_FILES {
        std::fs::write(dir.join(name), text)?;
    }
    Ok(())
}

/// Loads the unpacked extension at `path` into the browser behind `cdp` and returns its ID.
pub async fn load_unpacked(cdp: &Connection, path: &Path) -> Result<ExtensionId, String> {
    load(cdp, path).await
}

async fn load(cdp: &Connection, path: &Path) -> Result<ExtensionId, String> {
    let path = path.canonicalize().map_err(|e| format!("extension folder {}: {e}", path.display()))?;
    let answer = cdp
        .call("Extensions.loadUnpacked", json!({"path": path.display().to_string()}), None)
        .await
        .map_err(|e| format!("cannot load the extension {} into the browser: {e} (providers need the browser lumo launches, or --bridge)", path.display()))?;
    let id = answer["id"].as_str().unwrap_or_default();
    ExtensionId::new(id).map_err(|_| format!("the browser gave the extension {} the ID {id:?}", path.display()))
}

/// Evaluates `expression` (awaited) in extension `id`'s service worker. A worker
/// that goes away under the evaluation (Chromium recycled it, or it was still going
/// away when it was found: the attach finds no such target, or the evaluation "No
/// SW") is looked up again, twice at most, so `expression` must be safe to run
/// again (the callers set storage keys).
pub async fn in_worker(cdp: &Connection, id: &str, expression: &str) -> Result<Value, String> {
    let mut tries = 0;
    loop {
        match in_worker_once(cdp, id, expression).await {
            Ok(value) => return Ok(value),
            Err(Try::Gone(_)) if tries < 2 => tries += 1,
            Err(Try::Gone(e) | Try::Failed(e)) => return Err(e),
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Why one try of [`in_worker`] failed.
enum Try {
    /// The worker went away under it: look it up again.
    Gone(String),
    Failed(String),
}

async fn in_worker_once(cdp: &Connection, id: &str, expression: &str) -> Result<Value, Try> {
    let deadline = Instant::now() + Duration::from_secs(10);
    let target = loop {
        let targets = cdp.call("Target.getTargets", json!({}), None).await.map_err(|e| Try::Failed(e.to_string()))?;
        let found = targets["targetInfos"].as_array().into_iter().flatten().find(|t| {
            t["type"] == "service_worker"
                && t["url"].as_str().unwrap_or_default().starts_with(&format!("chrome-extension://{id}/"))
        });
        if let Some(t) = found {
            break t["targetId"].as_str().unwrap_or_default().to_string();
        }
        if Instant::now() > deadline {
            return Err(Try::Failed(format!("the service worker of extension {id} did not start")));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let attached =
        cdp.call("Target.attachToTarget", json!({"targetId": target, "flatten": true}), None).await.map_err(|e| {
            let gone = matches!(e, CdpError::Protocol { code, .. } if code == lumo_cdp::INVALID_PARAMS);
            let message = format!("cannot attach to the worker of {id}: {e}");
            if gone { Try::Gone(message) } else { Try::Failed(message) }
        })?;
    let session = attached["sessionId"].as_str().unwrap_or_default().to_string();
    let result = async {
        // The target shows up before the worker's top level ran.
        loop {
            let ready = cdp
                .call(
                    "Runtime.evaluate",
                    json!({"expression": "typeof chrome?.runtime?.sendMessage", "returnByValue": true}),
                    Some(&session),
                )
                .await;
            if ready.is_ok_and(|r| r["result"]["value"] == "function") {
                break;
            }
            if Instant::now() > deadline {
                return Err(Try::Failed(format!("the service worker of extension {id} never got chrome.runtime")));
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        let answer = cdp
            .call(
                "Runtime.evaluate",
                json!({"expression": expression, "awaitPromise": true, "returnByValue": true}),
                Some(&session),
            )
            .await
            .map_err(|e| {
                let message = e.to_string();
                if message.contains("No SW") { Try::Gone(message) } else { Try::Failed(message) }
            })?;
        if let Some(exception) = answer.get("exceptionDetails") {
            let message = format!("in the worker of {id}: {exception}");
            return Err(if message.contains("No SW") { Try::Gone(message) } else { Try::Failed(message) });
        }
        Ok(answer["result"]["value"].clone())
    }
    .await;
    let _ = cdp.call("Target.detachFromTarget", json!({"sessionId": session}), None).await;
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bridge_file_is_built_in() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension/bridge");
        let mut on_disk: Vec<String> = std::fs::read_dir(&dir)
            .expect("extension/bridge")
            .filter_map(|e| e.ok()?.file_name().into_string().ok())
            .collect();
        on_disk.sort();
        let mut built_in: Vec<String> = BRIDGE_FILES.iter().map(|(n, _)| n.to_string()).collect();
        built_in.sort();
        assert_eq!(built_in, on_disk, "add the new bridge file to BRIDGE_FILES");
    }
}
