//! The browser options every browser-driving command shares (`--browser`,
//! `--cdp-endpoint`, `--user-data-dir`, `--browse-allow`, `--extractors`, …) and the
//! browser source they select.

use std::path::PathBuf;

use clap::Args;
use lumo_browser::BrowserSource;
use lumo_browser::origin::{OriginLists, OriginPattern};
use lumo_cdp::LaunchOptions;

#[derive(Args, Clone)]
pub(crate) struct BrowserArgs {
    /// Chromium or Chrome executable (default: LUMO_BROWSER, then the usual places).
    #[arg(long, value_name = "PATH")]
    pub(crate) browser: Option<PathBuf>,
    /// Attach to a running browser (ws://… or http://host:port) instead of starting one.
    #[arg(long, value_name = "URL", conflicts_with_all = ["browser", "user_data_dir", "headful"])]
    pub(crate) cdp_endpoint: Option<String>,
    /// Use this persistent profile instead of a fresh temporary one.
    #[arg(long, value_name = "DIR")]
    pub(crate) user_data_dir: Option<PathBuf>,
    /// Show the browser window.
    #[arg(long)]
    pub(crate) headful: bool,
    /// Let lumo open and read local files (file: URLs); refused by default.
    #[arg(long)]
    pub(crate) allow_file_urls: bool,
    /// An extra Chromium command-line flag for the browser lumo launches (repeatable).
    #[arg(long = "browser-arg", value_name = "FLAG", allow_hyphen_values = true)]
    pub(crate) browser_args: Vec<String>,
    /// Set by `serve --bridge`: the CDP connection over the bridge relay.
    #[arg(skip)]
    pub(crate) relay: Option<lumo_cdp::Connection>,
    /// Only open and read pages of these origins (repeatable; e.g. https://*.example.com,
    /// http://localhost:8080; LUMO_BROWSE_ALLOW, comma-separated).
    #[arg(long = "browse-allow", value_name = "PATTERN", env = "LUMO_BROWSE_ALLOW", value_delimiter = ',', value_parser = parse_origin)]
    pub(crate) browse_allow: Vec<OriginPattern>,
    /// Never open or read pages of these origins, even on the allow list (repeatable;
    /// LUMO_BROWSE_BLOCK, comma-separated).
    #[arg(long = "browse-block", value_name = "PATTERN", env = "LUMO_BROWSE_BLOCK", value_delimiter = ',', value_parser = parse_origin)]
    pub(crate) browse_block: Vec<OriginPattern>,
    /// A folder of extractor definitions (*.json) for page_extract {extractor} (repeatable; LUMO_EXTRACTORS,
    /// comma-separated); $XDG_CONFIG_HOME/lumo/extractors (else ~/.config/lumo/extractors) is always read.
    #[arg(long = "extractors", value_name = "DIR", env = "LUMO_EXTRACTORS", value_delimiter = ',')]
    pub(crate) extractors: Vec<PathBuf>,
}

fn parse_origin(pattern: &str) -> Result<OriginPattern, String> {
    OriginPattern::parse(pattern)
        .map_err(|e| format!("{e}; write [scheme://]host[:port], e.g. https://*.example.com or http://localhost:8080"))
}

impl BrowserArgs {
    /// The origin lists given on the command line (or in the environment).
    pub(crate) fn origin_lists(&self) -> OriginLists {
        OriginLists { allow: self.browse_allow.clone(), block: self.browse_block.clone() }
    }

    /// The extractor folders: the config dir's, then --extractors.
    pub(crate) fn extractor_dirs(&self) -> Vec<PathBuf> {
        let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
        let config = non_empty("XDG_CONFIG_HOME").or_else(|| non_empty("HOME").map(|h| h.join(".config")));
        config.map(|d| d.join("lumo/extractors")).into_iter().chain(self.extractors.iter().cloned()).collect()
    }

    pub(crate) fn source(&self) -> BrowserSource {
        if let Some(relay) = &self.relay {
            return BrowserSource::Bridge(relay.clone());
        }
        match &self.cdp_endpoint {
            Some(endpoint) => BrowserSource::Attach(endpoint.clone()),
            None => BrowserSource::Launch(LaunchOptions {
                executable: self.browser.clone(),
                user_data_dir: self.user_data_dir.clone(),
                headless: !self.headful,
                extra_args: self.browser_args.clone(),
                ..LaunchOptions::default()
            }),
        }
    }
}
