//! The bridge folders of launched mode (`$TMPDIR/lumo-bridge-*`) after a
//! SIGKILL: the killed lumo cannot remove its folder, so the next `lumo serve`
//! sweeps it, like a stale profile, and never a live lumo's.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::Lumo;
use serde_json::json;

fn bridge_dirs(tmp: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(tmp)
        .expect("tmp")
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("lumo-bridge-"))
        .map(|e| e.path())
        .collect();
    found.sort();
    found
}

/// A lumo (in TMPDIR `tmp`) that brought the bridge up in its browser, and the folder it made.
async fn lumo_with_bridge(tmp: &Path) -> (Lumo, PathBuf) {
    let before = bridge_dirs(tmp);
    let lumo = Lumo::start_with(&[], &[("TMPDIR", tmp.as_os_str())]).await;
    // Any provider makes lumo bring the bridge up (this one is not installed).
    lumo.ok("ext_provider_add", json!({"id": "bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb"})).await;
    let made: Vec<PathBuf> = bridge_dirs(tmp).into_iter().filter(|d| !before.contains(d)).collect();
    assert_eq!(made.len(), 1, "one new bridge folder: {made:?}");
    (lumo, made[0].clone())
}

#[tokio::test(flavor = "multi_thread")]
async fn the_next_lumo_sweeps_the_bridge_folder_of_a_killed_one() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir(&tmp).expect("tmp");

    let (killed, stale) = lumo_with_bridge(&tmp).await;
    let status = std::process::Command::new("kill").args(["-9", &killed.pid.to_string()]).status().expect("kill");
    assert!(status.success());
    let deadline = Instant::now() + Duration::from_secs(10);
    while !killed.client.is_closed() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(stale.is_dir(), "a killed lumo cannot remove its bridge folder");

    // The next lumo sweeps it at start, then makes its own.
    let (live, kept) = lumo_with_bridge(&tmp).await;
    assert!(!stale.exists(), "the killed lumo's bridge folder is swept: {:?}", bridge_dirs(&tmp));
    // A lumo starting while that one lives leaves its folder alone.
    let other = Lumo::start_with(&[], &[("TMPDIR", tmp.as_os_str())]).await;
    other.ok("ext_providers", json!({"refresh": false})).await;
    assert_eq!(bridge_dirs(&tmp), vec![kept.clone()], "a live lumo's bridge folder stays");
    other.stop().await;
    live.stop().await;
    let deadline = Instant::now() + Duration::from_secs(5);
    while kept.exists() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(!kept.exists(), "lumo removes its own bridge folder when it exits");
}
