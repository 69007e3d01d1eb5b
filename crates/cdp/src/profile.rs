//! lumo's temporary folders (`$TMPDIR/lumo-<kind>-*`: browser profiles, the
//! bridge extension's files): each made with a file naming the lumo process
//! that owns it, removed when that lumo is done with it, and swept at the next
//! start when its owner died without cleaning up (SIGKILL).
//!
//! A folder is only ever removed when it carries lumo's prefix, belongs to
//! this user, has an owner file, its owner is gone, and no Chromium holds
//! its profile lock: never someone else's folder, never a live lumo's.

use std::io;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The prefix of every temporary folder lumo owns (`lumo-<kind>-`).
const PREFIX: &str = "lumo-";
/// The file in a temporary folder that names its owner: `PID START\n`,
/// START being the process's start time (so a reused pid is not taken for it).
pub(crate) const OWNER_FILE: &str = "lumo-owner";

/// Removes the temporary folders (in `$TMPDIR`) left by lumo processes that
/// are gone, e.g. killed by SIGKILL; returns how many. Making a temporary
/// folder ([`owned_temp_dir`], e.g. launching a browser) does this too.
pub fn sweep_stale_temp_dirs() -> usize {
    let removed = sweep_stale(&std::env::temp_dir());
    if !removed.is_empty() {
        tracing::info!(count = removed.len(), "removed temporary folders left by lumo processes that are gone");
    }
    removed.len()
}

/// Sweeps stale folders from the temporary folder, then makes a new one,
/// `$TMPDIR/lumo-<kind>-…`, owned by this process (removed when dropped).
pub fn owned_temp_dir(kind: &str) -> io::Result<tempfile::TempDir> {
    sweep_stale_temp_dirs();
    let dir = tempfile::Builder::new().prefix(&format!("{PREFIX}{kind}-")).tempdir()?;
    let me = std::process::id();
    let start = process_start(me).unwrap_or(0);
    std::fs::write(dir.path().join(OWNER_FILE), format!("{me} {start}\n"))?;
    Ok(dir)
}

/// A new temporary browser profile owned by this process.
pub(crate) fn create() -> io::Result<tempfile::TempDir> {
    owned_temp_dir("profile")
}

/// Removes the stale lumo folders in `dir`; returns what it removed.
pub(crate) fn sweep_stale(dir: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    // Without /proc (not Linux) nobody can tell whether an owner lives: keep everything.
    let Some(my_uid) = std::fs::metadata("/proc/self").ok().map(|m| m.uid()) else { return removed };
    let Ok(entries) = std::fs::read_dir(dir) else { return removed };
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry.file_name().to_str().is_some_and(|n| n.starts_with(PREFIX))
            && std::fs::symlink_metadata(&path).is_ok_and(|m| m.is_dir() && m.uid() == my_uid);
        if !ours || !is_stale(&path) {
            continue;
        }
        match std::fs::remove_dir_all(&path) {
            Ok(()) => removed.push(path),
            Err(e) => tracing::warn!(path = %path.display(), error = %e, "cannot remove a stale temporary folder"),
        }
    }
    removed
}

/// True when the folder has an owner file, its owner is gone and no live Chromium locks it (a profile).
fn is_stale(profile: &Path) -> bool {
    let Ok(owner) = std::fs::read_to_string(profile.join(OWNER_FILE)) else { return false };
    let mut fields = owner.split_whitespace().map(str::parse::<u64>);
    let (Some(Ok(pid)), Some(Ok(start))) = (fields.next(), fields.next()) else { return false };
    let Ok(pid) = u32::try_from(pid) else { return false };
    let owner_alive = match process_start(pid) {
        None => false,
        // Start time unknown when written: a live pid counts as the owner.
        Some(now) => start == 0 || now == start,
    };
    if owner_alive {
        return false;
    }
    // Chromium's lock is a symlink to `HOST-PID`; its browser may still be exiting.
    let locked_by_live = std::fs::read_link(profile.join("SingletonLock"))
        .ok()
        .and_then(|target| target.to_str()?.rsplit_once('-')?.1.parse::<u32>().ok())
        .is_some_and(|pid| process_start(pid).is_some());
    !locked_by_live
}

/// A process's start time (clock ticks after boot, field 22 of `/proc/PID/stat`), if it runs.
fn process_start(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold anything: count after the last ')'.
    let after = &stat[stat.rfind(')')? + 1..];
    // After ')' come field 3 (state) onwards, so field 22 is the 20th.
    let start = after.split_whitespace().nth(19)?.parse().ok()?;
    // A zombie has exited; it only waits to be reaped.
    (after.split_whitespace().next()? != "Z").then_some(start)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sweep_removes_only_folders_of_dead_owners() {
        let root = tempfile::tempdir().expect("tempdir");
        let make = |name: &str, owner: Option<String>| {
            let dir = root.path().join(name);
            std::fs::create_dir(&dir).expect("mkdir");
            if let Some(owner) = owner {
                std::fs::write(dir.join(OWNER_FILE), owner).expect("owner file");
            }
            dir
        };
        let me = std::process::id();
        let my_start = process_start(me).expect("this process runs");
        // A pid above the kernel's maximum (4194304) never runs.
        let dead = make("lumo-profile-dead", Some("4194305 1\n".into()));
        let live = make("lumo-profile-live", Some(format!("{me} {my_start}\n")));
        let reused = make("lumo-profile-reused", Some(format!("{me} {}\n", my_start + 1)));
        let no_owner = make("lumo-profile-noowner", None);
        let foreign = make("other-dead", Some("4194305 1\n".into()));
        let locked = make("lumo-profile-locked", Some("4194305 1\n".into()));
        let bridge = make("lumo-bridge-dead", Some("4194305 1\n".into()));
        std::os::unix::fs::symlink(format!("host-{me}"), locked.join("SingletonLock")).expect("symlink");

        let mut removed = sweep_stale(root.path());
        removed.sort();
        let mut expected = vec![dead.clone(), reused.clone(), bridge.clone()];
        expected.sort();
        assert_eq!(removed, expected);
        for kept in [&live, &no_owner, &foreign, &locked] {
            assert!(kept.is_dir(), "{} must stay", kept.display());
        }
    }
}
