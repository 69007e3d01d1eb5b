//! `lumo providers check`: passes on the reference provider, and fails on each
//! deliberately broken test provider naming the invariant it breaks.

use std::path::{Path, PathBuf};

use lumo_testkit::copy_dir;
use serde_json::Value;

fn extensions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../extension")
}

/// Runs the check; returns the exit code and the verdicts by invariant.
fn check(provider: &Path) -> (i32, Vec<(String, bool, String)>) {
    assert!(provider.join("kit").is_dir(), "{} has no kit/: run scripts/setup --providers", provider.display());
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_lumo"));
    command.args(["providers", "check"]).arg(provider).arg("--json");
    if Path::new("/usr/lib/chromium/chromium").is_file() {
        command.env("LUMO_BROWSER", "/usr/lib/chromium/chromium");
    }
    let out = command.output().expect("run lumo providers check");
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr))
    });
    let verdicts = report["invariants"]
        .as_array()
        .expect("invariants")
        .iter()
        .map(|c| {
            (
                c["invariant"].as_str().unwrap_or_default().to_string(),
                c["pass"] == true,
                c["detail"].as_str().unwrap_or_default().to_string(),
            )
        })
        .collect();
    (out.status.code().unwrap_or(-1), verdicts)
}

#[test]
fn the_reference_provider_passes_every_invariant() {
    // A copy with a policy preset that authorizes lumo's bridge (what the user does in its options page).
    let dir = tempfile::tempdir().expect("tempdir");
    let copy = dir.path().join("userscripts");
    copy_dir(&extensions().join("userscripts"), &copy);
    std::fs::write(copy.join("lumo-policy.preset.json"), r#"{"allowlist": ["hjfgijdboblbpgomjhgpbhfiobiokomm"]}"#)
        .expect("preset");
    let (code, verdicts) = check(&copy);
    let names: Vec<&str> = verdicts.iter().map(|(n, _, _)| n.as_str()).collect();
    assert_eq!(
        names,
        [
            "probe_shape",
            "ok_true_on_policy_failure",
            "authorization_by_sender_id",
            "name_rules",
            "port_name",
            "is_error_on_business_failure",
            "reinitialize_after_worker_restart",
            "rate_limit"
        ]
    );
    let failed: Vec<_> = verdicts.iter().filter(|(_, pass, _)| !pass).collect();
    assert!(failed.is_empty(), "{failed:#?}");
    assert_eq!(code, 0);
}

#[test]
fn each_broken_provider_fails_naming_its_invariant() {
    let cases = [
        ("any-port-name", "port_name"),
        ("auth-by-name", "authorization_by_sender_id"),
        ("no-iserror", "is_error_on_business_failure"),
        ("no-rate-limit", "rate_limit"),
        ("policy-not-ok", "ok_true_on_policy_failure"),
        ("too-many-tools", "name_rules"),
        ("long-names", "name_rules"),
    ];
    for (provider, invariant) in cases {
        let (code, verdicts) = check(&extensions().join("test-providers").join(provider));
        let verdict =
            verdicts.iter().find(|(n, _, _)| n == invariant).unwrap_or_else(|| panic!("{provider}: {verdicts:#?}"));
        assert!(!verdict.1, "{provider} must fail {invariant}: {verdicts:#?}");
        assert_eq!(code, 1, "{provider}: exit status");
        // The break is that one: the probe itself is fine where the provider answers it properly.
        if provider != "policy-not-ok" {
            assert!(verdicts[0].1, "{provider}: probe_shape {verdicts:#?}");
        }
    }
}
