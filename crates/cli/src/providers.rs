//! Provider extensions on the command line: `--provider` / `--load-extension`
//! (and `lumo.toml` `[providers]`), `lumo providers` (each provider's state)
//! and `lumo providers check` (the contract's invariants, one by one).

use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use lumo_browser::Session;
use lumo_host::providers::{Launcher, Link, ProviderView, Providers, view_line};
use lumo_protocol::{ExtensionId, is_extension_id};

/// Which providers lumo uses.
#[derive(Args, Clone, Debug, Default)]
pub(crate) struct ProviderArgs {
    /// A provider extension's ID (repeatable; LUMO_PROVIDERS, comma-separated; lumo.toml [providers] ids).
    #[arg(long = "provider", value_name = "ID", env = "LUMO_PROVIDERS", value_delimiter = ',', value_parser = parse_id)]
    providers: Vec<ExtensionId>,
    /// An unpacked provider extension to load into the browser lumo launches; it becomes a provider
    /// (repeatable; lumo.toml [providers] load).
    #[arg(long = "load-extension", value_name = "DIR")]
    load: Vec<PathBuf>,
}

/// `lumo.toml` `[providers]`.
#[derive(Debug, Default, Clone, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ProvidersSection {
    /// Provider extension IDs.
    #[serde(default)]
    ids: Vec<String>,
    /// Unpacked provider extensions to load into the launched browser.
    #[serde(default)]
    load: Vec<PathBuf>,
}

fn parse_id(text: &str) -> Result<ExtensionId, String> {
    let text = text.trim();
    if !is_extension_id(text) {
        return Err(format!(
            "{text:?} is not an extension ID: write the 32 letters a to p that chrome://extensions shows"
        ));
    }
    ExtensionId::new(text).map_err(|e| e.to_string())
}

impl ProviderArgs {
    /// The providers hub for `session`: over the user's bridge (`link`), or brought up in
    /// the launched browser. Flags win over `lumo.toml`; both add up.
    pub(crate) fn hub(
        &self,
        session: &Arc<Session>,
        section: ProvidersSection,
        link: Option<Link>,
    ) -> anyhow::Result<Arc<Providers>> {
        let mut ids = self.providers.clone();
        for id in &section.ids {
            ids.push(parse_id(id).map_err(|e| anyhow::anyhow!("lumo.toml [providers] ids: {e}"))?);
        }
        let load: Vec<PathBuf> = self.load.iter().chain(section.load.iter()).cloned().collect();
        for dir in &load {
            if !dir.join("manifest.json").is_file() {
                bail!(
                    "--load-extension {}: no manifest.json there (give an unpacked extension's folder)",
                    dir.display()
                );
            }
        }
        let hub = match link {
            Some(link) => {
                if !load.is_empty() {
                    bail!(
                        "--load-extension needs the browser lumo launches; with --bridge install the provider in your Chrome and give --provider ID"
                    );
                }
                Providers::new(link, None)
            }
            None => Providers::new(Link::default(), Some(Launcher::new(session.clone(), load))),
        };
        for id in ids {
            hub.add(id);
        }
        Ok(hub)
    }
}

/// `lumo providers`.
#[derive(Args)]
pub(crate) struct ProvidersCommand {
    #[command(subcommand)]
    command: Option<ProvidersSub>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Subcommand)]
enum ProvidersSub {
    /// Probe one provider and exercise the contract's invariants; exit 0 only if all hold.
    Check {
        /// The provider: its extension ID (installed in --user-data-dir), or an unpacked extension's folder.
        provider: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        browser: crate::browser_args::BrowserArgs,
    },
}

impl ProvidersCommand {
    /// The browser options in force: `check`'s own, else those given to `providers`.
    pub(crate) fn browser<'a>(
        &'a self,
        outer: &'a crate::browser_args::BrowserArgs,
    ) -> &'a crate::browser_args::BrowserArgs {
        match &self.command {
            Some(ProvidersSub::Check { browser, .. }) => browser,
            None => outer,
        }
    }
}

/// Runs `lumo providers [check]` in a browser lumo launches.
pub(crate) async fn run(
    command: ProvidersCommand,
    args: &ProviderArgs,
    section: ProvidersSection,
    session: Arc<Session>,
) -> anyhow::Result<i32> {
    match command.command {
        None => {
            let hub = args.hub(&session, section, None)?;
            if !hub.configured() {
                bail!("no providers configured: give --provider ID or --load-extension DIR (or lumo.toml [providers])");
            }
            let views = hub.refresh_all().await;
            session.shutdown().await;
            print_views(&views, command.json)?;
            Ok(0)
        }
        Some(ProvidersSub::Check { provider, json, .. }) => {
            let mut args = args.clone();
            let id = if is_extension_id(&provider) {
                Some(parse_id(&provider).map_err(anyhow::Error::msg)?)
            } else {
                args.load.push(PathBuf::from(&provider));
                None
            };
            let hub = args.hub(&session, ProvidersSection::default(), None)?;
            if let Some(id) = &id {
                hub.add(id.clone());
            }
            let checks = crate::check::run(&hub, id).await;
            session.shutdown().await;
            let failed = checks.iter().filter(|c| !c.pass).count();
            if json || command.json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&serde_json::json!({"pass": failed == 0, "invariants": checks}))?
                );
            } else {
                for c in &checks {
                    println!("{}  {:<34} {}", if c.pass { "PASS" } else { "FAIL" }, c.invariant, c.detail);
                }
                println!(
                    "{}",
                    if failed == 0 {
                        "all invariants hold".to_string()
                    } else {
                        format!("{failed} invariant(s) broken")
                    }
                );
            }
            Ok(if failed == 0 { 0 } else { 1 })
        }
    }
}

fn print_views(views: &[ProviderView], json: bool) -> anyhow::Result<()> {
    if json {
        println!("{}", serde_json::to_string_pretty(views).context("serialize")?);
    } else {
        for v in views {
            println!("{}", view_line(v));
        }
    }
    Ok(())
}
