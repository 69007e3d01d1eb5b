//! The `lumo` binary: an MCP host that gives AI agents the browser.
//!
//! `lumo serve` speaks MCP (stdio by default, `--http ADDR` for Streamable
//! HTTP); `lumo tools` lists the tools; `lumo call TOOL JSON` runs one call.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Args, Parser, Subcommand};
use lumo_browser::{BrowserSource, Session};
use lumo_cdp::LaunchOptions;
use lumo_host::{Catalog, Gate, HttpOptions};

#[derive(Parser)]
#[command(name = "lumo", version, about = "An MCP host that gives AI agents the browser.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve MCP: on stdio (default) or Streamable HTTP (--http).
    Serve {
        /// Listen for Streamable HTTP at ADDR (e.g. 127.0.0.1:8931) instead of stdio; the endpoint is /mcp.
        #[arg(long, value_name = "ADDR")]
        http: Option<SocketAddr>,
        /// Bearer token HTTP clients must send (required beyond loopback).
        #[arg(long, env = "LUMO_TOKEN", hide_env_values = true)]
        token: Option<String>,
        /// A browser origin allowed to call over HTTP (repeatable); none by default.
        #[arg(long = "allow-origin", value_name = "ORIGIN")]
        allow_origins: Vec<String>,
        #[command(flatten)]
        browser: BrowserArgs,
    },
    /// List the tools (a table, or --json).
    Tools {
        /// Print the MCP tool list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool call and print the answer.
    Call {
        /// Tool name, e.g. browser_navigate.
        tool: String,
        /// Arguments as a JSON object.
        #[arg(default_value = "{}")]
        args: String,
        /// Print the whole result as JSON.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        browser: BrowserArgs,
    },
}

#[derive(Args, Clone)]
struct BrowserArgs {
    /// Chromium or Chrome executable (default: LUMO_BROWSER, then the usual places).
    #[arg(long, value_name = "PATH")]
    browser: Option<PathBuf>,
    /// Attach to a running browser (ws://… or http://host:port) instead of starting one.
    #[arg(long, value_name = "URL", conflicts_with_all = ["browser", "user_data_dir", "headful"])]
    cdp_endpoint: Option<String>,
    /// Use this persistent profile instead of a fresh temporary one.
    #[arg(long, value_name = "DIR")]
    user_data_dir: Option<PathBuf>,
    /// Show the browser window.
    #[arg(long)]
    headful: bool,
}

impl BrowserArgs {
    fn source(&self) -> BrowserSource {
        match &self.cdp_endpoint {
            Some(endpoint) => BrowserSource::Attach(endpoint.clone()),
            None => BrowserSource::Launch(LaunchOptions {
                executable: self.browser.clone(),
                user_data_dir: self.user_data_dir.clone(),
                headless: !self.headful,
                ..LaunchOptions::default()
            }),
        }
    }
}

fn gate(browser: &BrowserArgs) -> (Arc<Session>, Arc<Gate>) {
    let session = Arc::new(Session::new(browser.source()));
    (session.clone(), Arc::new(Gate::new(Catalog::builtin(session))))
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Logs go to stderr: stdout belongs to the MCP stream.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("LUMO_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .init();
    let cli = Cli::parse();
    match cli.command {
        Command::Serve { http, token, allow_origins, browser } => {
            let (session, gate) = gate(&browser);
            let served = match http {
                Some(addr) => lumo_host::serve_http(gate, HttpOptions { addr, token, allowed_origins: allow_origins })
                    .await
                    .map_err(anyhow::Error::from),
                None => lumo_host::serve_stdio(gate).await.map_err(anyhow::Error::from),
            };
            session.shutdown().await;
            served
        }
        Command::Tools { json } => {
            let (_, gate) =
                gate(&BrowserArgs { browser: None, cdp_endpoint: None, user_data_dir: None, headful: false });
            let specs = gate.specs();
            if json {
                let list: Vec<serde_json::Value> = specs
                    .iter()
                    .map(|s| {
                        serde_json::json!({"name": s.name, "description": s.description, "inputSchema": s.input_schema,
                            "annotations": {"readOnlyHint": s.hints.read_only, "destructiveHint": s.hints.destructive, "openWorldHint": s.hints.open_world}})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                let width = specs.iter().map(|s| s.name.len()).max().unwrap_or(0);
                for s in &specs {
                    let hint = if s.hints.read_only {
                        "read"
                    } else if s.hints.destructive {
                        "DESTR"
                    } else {
                        "act"
                    };
                    println!("{:width$}  {:5}  {}", s.name, hint, s.description);
                }
            }
            Ok(())
        }
        Command::Call { tool, args, json, browser } => {
            let args: serde_json::Value =
                serde_json::from_str(&args).with_context(|| format!("the arguments are not JSON: {args}"))?;
            if !args.is_object() {
                bail!("the arguments must be a JSON object, like '{{\"url\": \"https://example.com\"}}'");
            }
            let (session, gate) = gate(&browser);
            let result = gate.call(&tool, args, tokio_util::sync::CancellationToken::new()).await;
            session.shutdown().await;
            let output = result?;
            if json {
                println!(
                    "{}",
                    serde_json::json!({"text": output.text, "structured": output.structured, "isError": output.is_error,
                        "images": output.images.iter().map(|i| serde_json::json!({"mime": i.mime, "bytes": i.data.len()})).collect::<Vec<_>>()})
                );
            } else {
                println!("{}", output.text);
                for image in &output.images {
                    println!("[image {} — {} base64 bytes]", image.mime, image.data.len());
                }
            }
            if output.is_error {
                std::process::exit(1);
            }
            Ok(())
        }
    }
}
