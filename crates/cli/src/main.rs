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

mod audit;

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
        /// Let consequential WebMCP page tools run when the client cannot ask the user to confirm.
        #[arg(long)]
        allow_consequential: bool,
        #[command(flatten)]
        browser: BrowserArgs,
        #[command(flatten)]
        gate: audit::GateArgs,
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
        /// Let consequential WebMCP page tools run (there is no one to ask).
        #[arg(long)]
        allow_consequential: bool,
        #[command(flatten)]
        browser: BrowserArgs,
        #[command(flatten)]
        gate: audit::GateArgs,
    },
    /// Read, export and verify the audit log of tool calls.
    Audit(audit::AuditArgs),
    /// For site developers: list or call the WebMCP tools a page registers.
    Webmcp {
        #[command(subcommand)]
        command: WebmcpCommand,
    },
}

#[derive(Subcommand)]
enum WebmcpCommand {
    /// Open URL and list its page tools.
    List {
        /// The page (WebMCP needs a secure context: https, http://localhost or http://127.0.0.1).
        url: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Wait until at least N tools are registered (up to --wait seconds).
        #[arg(long, value_name = "N", default_value_t = 1)]
        wait_for_tools: usize,
        /// How long to wait for tools, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 5)]
        wait: u64,
        #[command(flatten)]
        browser: BrowserArgs,
    },
    /// Open URL and call one of its page tools.
    Call {
        /// The page.
        url: String,
        /// The tool's name as the page registered it (or its webmcp_ name).
        tool: String,
        /// Its input as a JSON object.
        #[arg(default_value = "{}")]
        input: String,
        /// Print the whole result as JSON.
        #[arg(long)]
        json: bool,
        /// How long to wait for the tool to be registered, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 5)]
        wait: u64,
        /// Let a consequential tool run.
        #[arg(long)]
        allow_consequential: bool,
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
    gate_with(browser, false)
}

fn gate_with(browser: &BrowserArgs, allow_consequential: bool) -> (Arc<Session>, Arc<Gate>) {
    let session = Arc::new(Session::new(browser.source()));
    (session.clone(), Arc::new(Gate::new(Catalog::builtin(session)).allow_consequential(allow_consequential)))
}

/// Why a page has no usable WebMCP, or None when its tools are there.
async fn open_for_webmcp(
    gate: &Gate,
    session: &Session,
    url: &str,
    want: usize,
    wait: std::time::Duration,
) -> anyhow::Result<Result<usize, String>> {
    let opened = gate
        .call("browser_navigate", serde_json::json!({"url": url}), tokio_util::sync::CancellationToken::new())
        .await?;
    if opened.is_error {
        return Ok(Err(format!("could not open {url}: {}", opened.text)));
    }
    let available = session.webmcp_available().await.map_err(|e| anyhow::anyhow!(e.message))?;
    if !available {
        return Ok(Err(format!(
            "the page has no document.modelContext: this browser has no WebMCP (it needs Chromium with --enable-features=WebMCP), or {url} is not a secure context (https, http://localhost, http://127.0.0.1)"
        )));
    }
    let count = session.wait_for_page_tools(want, wait).await.map_err(|e| anyhow::anyhow!(e.message))?;
    if count < want.max(1) {
        return Ok(Err(format!(
            "document.modelContext exists but the page registered {count} tool(s) within {}s (wanted {})",
            wait.as_secs(),
            want.max(1)
        )));
    }
    // Apps add, remove and re-add tools just after load: let it settle.
    tokio::time::sleep(std::time::Duration::from_millis(300)).await;
    Ok(Ok(count))
}

async fn webmcp(command: WebmcpCommand) -> anyhow::Result<()> {
    match command {
        WebmcpCommand::List { url, json, wait_for_tools, wait, browser } => {
            let (session, gate) = gate(&browser);
            let opened =
                open_for_webmcp(&gate, &session, &url, wait_for_tools, std::time::Duration::from_secs(wait)).await;
            let tools = gate.catalog().page_tools();
            session.shutdown().await;
            if let Err(why) = opened? {
                eprintln!("unsupported / not verified: {why}");
                std::process::exit(2);
            }
            if json {
                let list: Vec<serde_json::Value> = tools
                    .iter()
                    .map(|t| {
                        serde_json::json!({"name": t.name, "exposedName": t.exposed.as_ref().ok(), "refused": t.exposed.as_ref().err(),
                            "description": t.description, "inputSchema": t.input_schema,
                            "annotations": {"readOnlyHint": t.read_only, "consequentialHint": t.consequential, "untrustedContentHint": t.untrusted_content},
                            "declarative": t.declarative, "frame": {"id": t.frame_id, "url": t.frame_url, "origin": t.origin, "main": t.main_frame}})
                    })
                    .collect();
                println!("{}", serde_json::to_string_pretty(&list)?);
            } else {
                let rows: Vec<[String; 4]> = tools
                    .iter()
                    .map(|t| {
                        let hints = t.hint_words();
                        // A refusal's reason goes last so the columns stay narrow.
                        let (name, note) = match &t.exposed {
                            Ok(exposed) => (format!("{} ({exposed})", t.name), String::new()),
                            Err(why) => (format!("{} (REFUSED)", t.name), format!("  refused: {why}")),
                        };
                        let frame = if t.main_frame { t.origin.clone() } else { format!("{} [iframe]", t.origin) };
                        [name, hints.join(","), t.schema_summary(), format!("{frame}{note}")]
                    })
                    .collect();
                let header = ["NAME".to_string(), "ANNOTATIONS".into(), "ARGUMENTS".into(), "FRAME".into()];
                let widths: Vec<usize> =
                    (0..3).map(|i| rows.iter().chain([&header]).map(|r| r[i].len()).max().unwrap_or(0)).collect();
                for row in [&header].into_iter().chain(rows.iter()) {
                    println!(
                        "{:w0$}  {:w1$}  {:w2$}  {}",
                        row[0],
                        row[1],
                        row[2],
                        row[3],
                        w0 = widths[0],
                        w1 = widths[1],
                        w2 = widths[2]
                    );
                }
            }
            Ok(())
        }
        WebmcpCommand::Call { url, tool, input, json, wait, allow_consequential, browser } => {
            let input: serde_json::Value =
                serde_json::from_str(&input).with_context(|| format!("the input is not JSON: {input}"))?;
            if !input.is_object() {
                bail!("the input must be a JSON object");
            }
            let (session, gate) = gate_with(&browser, allow_consequential);
            let opened = open_for_webmcp(&gate, &session, &url, 1, std::time::Duration::from_secs(wait)).await;
            let result = match &opened {
                Ok(Ok(_)) => Some(
                    gate.call(
                        "webmcp_call",
                        serde_json::json!({"name": tool, "input": input}),
                        tokio_util::sync::CancellationToken::new(),
                    )
                    .await,
                ),
                _ => None,
            };
            session.shutdown().await;
            if let Err(why) = opened? {
                eprintln!("unsupported / not verified: {why}");
                std::process::exit(2);
            }
            let Some(result) = result else { bail!("no result") };
            print_output(result?, json)
        }
    }
}

/// Ctrl-C or SIGTERM.
async fn stop_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    {
        let mut term = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(term) => term,
            Err(_) => return ctrl_c.await,
        };
        tokio::select! {
            () = ctrl_c => {}
            _ = term.recv() => {}
        }
    }
    #[cfg(not(unix))]
    ctrl_c.await;
}

fn print_output(output: lumo_host::GateOutput, json: bool) -> anyhow::Result<()> {
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
        Command::Serve { http, token, allow_origins, allow_consequential, browser, gate: gate_args } => {
            let session = Arc::new(Session::new(browser.source()));
            let gate = Gate::new(Catalog::builtin(session.clone())).allow_consequential(allow_consequential);
            let gate = Arc::new(gate_args.apply(gate)?);
            gate_args.watch(gate.clone());
            let served = match http {
                Some(addr) => tokio::select! {
                    served = lumo_host::serve_http(gate.clone(), HttpOptions { addr, token, allowed_origins: allow_origins }) => served.map_err(anyhow::Error::from),
                    // Stop cleanly on Ctrl-C / SIGTERM so the audit log is flushed.
                    () = stop_signal() => Ok(()),
                },
                None => lumo_host::serve_stdio(gate.clone()).await.map_err(anyhow::Error::from),
            };
            session.shutdown().await;
            audit::flush(&gate);
            served
        }
        Command::Audit(args) => audit::run(args),
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
        Command::Webmcp { command } => webmcp(command).await,
        Command::Call { tool, args, json, allow_consequential, browser, gate: gate_args } => {
            let args: serde_json::Value =
                serde_json::from_str(&args).with_context(|| format!("the arguments are not JSON: {args}"))?;
            if !args.is_object() {
                bail!("the arguments must be a JSON object, like '{{\"url\": \"https://example.com\"}}'");
            }
            let session = Arc::new(Session::new(browser.source()));
            let gate = Gate::new(Catalog::builtin(session.clone())).allow_consequential(allow_consequential);
            let gate = gate_args.apply(gate)?;
            let result = gate.call(&tool, args, tokio_util::sync::CancellationToken::new()).await;
            session.shutdown().await;
            audit::flush(&gate);
            print_output(result?, json)
        }
    }
}
