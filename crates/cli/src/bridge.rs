//! `lumo pair` and `lumo serve --bridge`: the CLI side of the bridge
//! extension (see `lumo_host::bridge`).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use anyhow::Context;
use clap::Args;
use lumo_host::Audit;
use lumo_host::bridge::{self, Bridge, BridgeOptions, Role};

/// Where the bridge keeps its secret and pending pairing code.
#[derive(Args, Clone)]
pub(crate) struct DirArg {
    /// Bridge state folder (default: $XDG_STATE_HOME/lumo, else ~/.local/state/lumo).
    #[arg(long, value_name = "DIR", env = "LUMO_BRIDGE_DIR")]
    bridge_dir: Option<PathBuf>,
}

impl DirArg {
    fn dir(&self) -> anyhow::Result<PathBuf> {
        if let Some(dir) = &self.bridge_dir {
            return Ok(dir.clone());
        }
        let state = std::env::var_os("XDG_STATE_HOME")
            .map(PathBuf::from)
            .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".local/state")));
        Ok(state.context("neither XDG_STATE_HOME nor HOME is set: give --bridge-dir")?.join("lumo"))
    }
}

/// `lumo serve` options for the bridge.
#[derive(Args, Clone)]
pub(crate) struct BridgeArgs {
    /// Drive the user's own Chrome through the bridge extension, which connects to ADDR (loopback).
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = bridge::DEFAULT_ADDR,
          conflicts_with_all = ["cdp_endpoint", "browser", "user_data_dir", "headful"])]
    bridge: Option<SocketAddr>,
    #[command(flatten)]
    dir: DirArg,
    /// Lifetime of the extension's access tokens, in seconds (short ones are for tests).
    #[arg(long, value_name = "SECONDS", default_value_t = 3600, hide = true)]
    bridge_token_ttl: u64,
    /// How long a browser tool call waits for the extension to (re)connect, in seconds.
    #[arg(long, value_name = "SECONDS", default_value_t = 20)]
    bridge_wait: u64,
}

impl BridgeArgs {
    /// The bridge when `--bridge` was given (its relay exists; nothing listens until [`start`]).
    pub(crate) fn bridge(&self, providers: lumo_host::providers::Link) -> anyhow::Result<Option<Bridge>> {
        let Some(addr) = self.bridge else { return Ok(None) };
        let mut options = BridgeOptions::new(addr, self.dir.dir()?);
        options.providers = providers;
        options.token_ttl = Duration::from_secs(self.bridge_token_ttl.max(1));
        options.wait = Duration::from_secs(self.bridge_wait);
        Ok(Some(Bridge::new(options)?))
    }
}

/// Owns the bridge address, or attaches to the lumo that owns it; refused connections go to `audit`.
pub(crate) async fn start(bridge: &Bridge, audit: Option<Audit>) -> anyhow::Result<()> {
    match bridge.start(audit).await? {
        Role::Owner(addr) => eprintln!("lumo: bridge listening on ws://{addr}/bridge"),
        Role::Attached(addr) => eprintln!(
            "lumo: another lumo owns the bridge on ws://{addr}/bridge; this one drives the shared tabs through it"
        ),
    }
    Ok(())
}

/// `lumo pair`: prints a one-time code for the extension's popup.
pub(crate) fn pair(dir: &DirArg) -> anyhow::Result<()> {
    let code = bridge::auth::Store::open(&dir.dir()?)?.new_pair_code()?;
    println!("{code}");
    eprintln!(
        "Enter this code in the lumo bridge extension's popup within {} minutes (it works once).",
        bridge::auth::PAIR_CODE_TTL.as_secs() / 60
    );
    Ok(())
}
