//! The `lumo` binary: an MCP host that gives AI agents the browser.
//!
//! `lumo serve` speaks MCP (stdio by default, `--http ADDR` for Streamable
//! HTTP); `lumo tools` lists the tools; `lumo call TOOL JSON` runs one call.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use lumo_browser::origin::{OriginLists, SharedOrigins};
use lumo_browser::{Session, UrlPolicy};
use lumo_host::{Catalog, Gate, HttpOptions, SessionLimits};
use output::emit;

mod audit;
mod bridge;
mod browser_args;
mod check;
mod output;
mod providers;
mod redaction;
mod steps;

use browser_args::BrowserArgs;

#[derive(Parser)]
#[command(name = "lumo", version, about = "An MCP host that gives AI agents the browser.")]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// A secret to hide in every answer and log line, shown as [redacted] (repeatable;
    /// LUMO_REDACT adds more, comma-separated).
    #[arg(long = "redact", value_name = "SECRET", global = true)]
    redact: Vec<String>,
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
        /// HTTP: most MCP sessions open at once; the next initialize gets 503.
        #[arg(long, value_name = "N", default_value_t = 64, value_parser = clap::value_parser!(u32).range(1..=100_000))]
        max_sessions: u32,
        /// HTTP: close a session no request touched for this many seconds (default 30 minutes).
        #[arg(long, value_name = "SECONDS", default_value_t = 1800, value_parser = clap::value_parser!(u32).range(1..=604_800))]
        session_idle: u32,
        /// Let consequential WebMCP page tools run when the client cannot ask the user to confirm.
        #[arg(long)]
        allow_consequential: bool,
        #[command(flatten)]
        browser: BrowserArgs,
        #[command(flatten)]
        gate: audit::GateArgs,
        #[command(flatten)]
        bridge: bridge::BridgeArgs,
        #[command(flatten)]
        providers: providers::ProviderArgs,
    },
    /// Provider extensions: each one's state (probed now), or `check` one against the contract.
    Providers {
        #[command(flatten)]
        command: providers::ProvidersCommand,
        #[command(flatten)]
        providers: providers::ProviderArgs,
        #[command(flatten)]
        browser: BrowserArgs,
        #[command(flatten)]
        gate: audit::GateArgs,
    },
    /// Print a one-time code that pairs the bridge extension with this lumo.
    Pair {
        #[command(flatten)]
        dir: bridge::DirArg,
    },
    /// List the tools (a table, or --json).
    Tools {
        /// Print the MCP tool list as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Run one tool call and print the answer.
    Call {
        /// A tool name (e.g. browser_navigate), then its arguments as a JSON object
        /// (default {}); repeat for several calls in one browser: TOOL '{json}' TOOL …
        #[arg(required = true, value_name = "TOOL ['{json}']")]
        steps: Vec<String>,
        /// Print the whole result as JSON (one line per call).
        #[arg(long)]
        json: bool,
        /// Record the calls as an animated GIF at FILE, one caption per call.
        #[arg(long, value_name = "FILE")]
        record: Option<PathBuf>,
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
        /// How long to wait for tools once the page is open, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 5)]
        wait: u64,
        #[command(flatten)]
        browser: BrowserArgs,
        #[command(flatten)]
        gate: audit::GateArgs,
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
        /// How long to wait for the tool to be registered once the page is open, in seconds.
        #[arg(long, value_name = "SECONDS", default_value_t = 5)]
        wait: u64,
        /// Let a consequential tool run.
        #[arg(long)]
        allow_consequential: bool,
        #[command(flatten)]
        browser: BrowserArgs,
        #[command(flatten)]
        gate: audit::GateArgs,
    },
}

/// A gate with the audit log, rate window and policy of `gate_args` (serve, call, webmcp).
fn gated(
    browser: &BrowserArgs,
    allow_consequential: bool,
    gate_args: &audit::GateArgs,
) -> anyhow::Result<(Arc<Session>, Arc<Gate>)> {
    let origins = gate_args.initial_origins(&browser.origin_lists())?;
    // A bad extractor definition stops lumo at start, naming the file and the field.
    lumo_browser::extractors::load(&browser.extractor_dirs())?;
    let (session, gate) = bare_gate(browser, origins, allow_consequential);
    Ok((session, Arc::new(gate_args.apply(gate)?)))
}

fn bare_gate(browser: &BrowserArgs, origins: OriginLists, allow_consequential: bool) -> (Arc<Session>, Gate) {
    let session = session_of(browser, origins);
    let gate = Gate::new(Catalog::builtin(session.clone())).allow_consequential(allow_consequential);
    (session, gate.redact(redaction::redactor()))
}

/// The browser handle of `browser`'s settings, with these origin lists (shared, so a
/// policy re-read can replace them).
fn session_of(browser: &BrowserArgs, origins: OriginLists) -> Arc<Session> {
    let policy = UrlPolicy { allow_file_urls: browser.allow_file_urls, origins: SharedOrigins::new(origins) };
    Arc::new(Session::new(browser.source()).with_url_policy(policy).with_extractor_dirs(browser.extractor_dirs()))
}

/// How long the page's tool set must stay unchanged before `lumo webmcp list`
/// takes it as complete (apps register over a second or more after load).
const QUIET: std::time::Duration = std::time::Duration::from_millis(1000);

/// Why the page's tools could not be read.
enum NotReady {
    /// No usable WebMCP at all (no browser support, not a secure context, did not open).
    Unsupported(String),
    /// WebMCP works but the page registered fewer tools than expected in time.
    TooFew(String),
}

/// Opens `url` and waits until the page registered `want` tools (at least one)
/// and then changed none for [`QUIET`], or `wait` passes. With `tool` it waits
/// for that tool instead (then briefly for the set to settle). `wait` counts
/// from the moment the page is open: starting the browser and loading the page
/// can take seconds on a busy machine, and the page registers nothing before.
async fn open_for_webmcp(
    gate: &Gate,
    session: &Session,
    url: &str,
    want: usize,
    tool: Option<&str>,
    wait: std::time::Duration,
) -> anyhow::Result<Result<usize, NotReady>> {
    let opened = gate
        .call("browser_navigate", serde_json::json!({"url": url}), tokio_util::sync::CancellationToken::new())
        .await?;
    if opened.is_error {
        return Ok(Err(NotReady::Unsupported(format!("could not open {url}: {}", opened.text))));
    }
    let deadline = tokio::time::Instant::now() + wait;
    let available =
        session.webmcp_available().await.map_err(|e| anyhow::anyhow!(lumo_browser::ToolError::from(e).message))?;
    if !available {
        return Ok(Err(NotReady::Unsupported(format!(
            "the page has no document.modelContext: this browser has no WebMCP (it needs Chromium with --enable-features=WebMCP), or {url} is not a secure context (https, http://localhost, http://127.0.0.1)"
        ))));
    }
    let want = want.max(1);
    let quiet = if tool.is_some() { std::time::Duration::from_millis(300) } else { QUIET };
    let fingerprint = |tools: &[lumo_browser::PageTool]| tools.iter().map(|t| t.generation).collect::<Vec<_>>();
    let mut last = fingerprint(&session.page_tools());
    let mut since = tokio::time::Instant::now();
    loop {
        let tools = session.page_tools();
        let now = fingerprint(&tools);
        if now != last {
            last = now;
            since = tokio::time::Instant::now();
        }
        let enough = match tool {
            Some(name) => tools.iter().any(|t| t.name == name || t.exposed.as_deref() == Ok(name)),
            None => tools.len() >= want,
        };
        if enough && since.elapsed() >= quiet {
            return Ok(Ok(tools.len()));
        }
        if tokio::time::Instant::now() >= deadline {
            if enough {
                eprintln!("note: the page was still changing its tools when --wait ({}s) ran out", wait.as_secs());
                return Ok(Ok(tools.len()));
            }
            let why = match tool {
                Some(name) => format!(
                    "the page registered no tool {name:?} within {}s (it registered {}: {})",
                    wait.as_secs(),
                    tools.len(),
                    tools.iter().map(|t| t.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
                None => format!(
                    "the page registered {} of the {want} expected tool(s) within {}s (raise --wait, or lower --wait-for-tools)",
                    tools.len(),
                    wait.as_secs()
                ),
            };
            return Ok(Err(NotReady::TooFew(why)));
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Reports why the page's tools could not be read and exits 2.
fn not_ready(why: NotReady) -> ! {
    match why {
        NotReady::Unsupported(why) => eprintln!("unsupported / not verified: {why}"),
        NotReady::TooFew(why) => eprintln!("error: {why}"),
    }
    std::process::exit(2);
}

async fn webmcp(command: WebmcpCommand) -> anyhow::Result<()> {
    match command {
        WebmcpCommand::List { url, json, wait_for_tools, wait, browser, gate: gate_args } => {
            let (session, gate) = gated(&browser, false, &gate_args)?;
            let opened =
                open_for_webmcp(&gate, &session, &url, wait_for_tools, None, std::time::Duration::from_secs(wait))
                    .await;
            let tools = gate.catalog().page_tools();
            session.shutdown().await;
            audit::flush(&gate);
            if let Err(why) = opened? {
                not_ready(why);
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
                emit(serde_json::to_string_pretty(&list)?, 0);
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
                    emit(
                        format_args!(
                            "{:w0$}  {:w1$}  {:w2$}  {}",
                            row[0],
                            row[1],
                            row[2],
                            row[3],
                            w0 = widths[0],
                            w1 = widths[1],
                            w2 = widths[2]
                        ),
                        0,
                    );
                }
            }
            Ok(())
        }
        WebmcpCommand::Call { url, tool, input, json, wait, allow_consequential, browser, gate: gate_args } => {
            let input: serde_json::Value =
                serde_json::from_str(&input).with_context(|| format!("the input is not JSON: {input}"))?;
            if !input.is_object() {
                bail!("the input must be a JSON object");
            }
            let (session, gate) = gated(&browser, allow_consequential, &gate_args)?;
            let opened =
                open_for_webmcp(&gate, &session, &url, 1, Some(&tool), std::time::Duration::from_secs(wait)).await;
            let result = match &opened {
                Ok(Ok(_)) => {
                    // The page's tools as they are now are what this call may run.
                    gate.list();
                    Some(
                        gate.call(
                            "webmcp_call",
                            serde_json::json!({"name": tool, "input": input}),
                            tokio_util::sync::CancellationToken::new(),
                        )
                        .await,
                    )
                }
                _ => None,
            };
            session.shutdown().await;
            audit::flush(&gate);
            if let Err(why) = opened? {
                not_ready(why);
            }
            let Some(result) = result else { bail!("no result") };
            print_output(result?, json)
        }
    }
}

/// SIGTERM, SIGINT and SIGHUP, caught so that lumo closes its browser before it exits.
struct StopSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
    hup: tokio::signal::unix::Signal,
}

impl StopSignals {
    fn listen() -> anyhow::Result<Self> {
        use tokio::signal::unix::{SignalKind, signal};
        let listen = |kind: SignalKind| signal(kind).context("cannot listen for signals");
        Ok(Self {
            term: listen(SignalKind::terminate())?,
            int: listen(SignalKind::interrupt())?,
            hup: listen(SignalKind::hangup())?,
        })
    }

    /// Waits for the first of them; returns its name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
            _ = self.hup.recv() => "SIGHUP",
        }
    }
}

/// Prints an answer; exits 1 when it is a tool error.
fn print_output(output: lumo_host::GateOutput, json: bool) -> anyhow::Result<()> {
    let failed = output.is_error;
    output::show(output, json);
    if failed {
        std::process::exit(1);
    }
    Ok(())
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let cli = Cli::parse();
    redaction::init(&cli.redact);
    // Logs go to stderr (stdout belongs to the MCP stream), credentials hidden.
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_env("LUMO_LOG").unwrap_or_else(|_| "warn".into()))
        .with_writer(|| redaction::LogWriter)
        .with_ansi(false)
        .init();
    match cli.command {
        Command::Serve {
            http,
            token,
            allow_origins,
            max_sessions,
            session_idle,
            allow_consequential,
            mut browser,
            gate: gate_args,
            bridge,
            providers,
        } => {
            // Kept alive while serving: the extension's endpoint.
            let link = lumo_host::providers::Link::default();
            let bridge = bridge.bridge(link.clone())?;
            browser.relay = bridge.as_ref().map(|b| b.relay().connection().clone());
            // Listen before anything starts, so a signal never finds the default (exit at once) in place.
            let mut stop = StopSignals::listen()?;
            // Profiles and bridge folders left by a lumo that was killed (its browser died with it),
            // swept beside start-up: a full temporary folder should not delay the first answer.
            tokio::task::spawn_blocking(lumo_cdp::sweep_stale_temp_dirs);
            let origins = gate_args.initial_origins(&browser.origin_lists())?;
            // A bad extractor definition stops lumo at start, naming the file and the field.
            lumo_browser::extractors::load(&browser.extractor_dirs())?;
            let session = session_of(&browser, origins);
            let link = bridge.as_ref().map(|_| link);
            let hub = providers.hub(&session, gate_args.providers_section()?, link)?;
            let catalog = Catalog::builtin(session.clone()).with_providers(hub.clone());
            let gate = Gate::new(catalog).allow_consequential(allow_consequential).redact(redaction::redactor());
            let gate = Arc::new(gate_args.apply(gate)?);
            hub.start();
            gate_args.watch(gate.clone(), session.clone(), browser.origin_lists());
            if let Some(bridge) = &bridge {
                bridge::start(bridge, gate.audit().cloned()).await?;
            }
            let serving = async {
                match http {
                    Some(addr) => {
                        let limits = SessionLimits {
                            max_sessions: max_sessions as usize,
                            idle_timeout: std::time::Duration::from_secs(u64::from(session_idle)),
                        };
                        lumo_host::serve_http(
                            gate.clone(),
                            HttpOptions { addr, token, allowed_origins: allow_origins, limits },
                        )
                        .await
                        .map_err(anyhow::Error::from)
                    }
                    None => lumo_host::serve_stdio(gate.clone()).await.map_err(anyhow::Error::from),
                }
            };
            // Stop serving on a signal (stdio: also at the end of stdin), by dropping the server.
            let served = tokio::select! {
                served = serving => served,
                name = stop.next() => {
                    tracing::info!(signal = name, "stopping");
                    Ok(())
                }
            };
            session.shutdown().await;
            let _ = tokio::time::timeout(std::time::Duration::from_secs(1), hub.shutdown()).await;
            // The audit log's last records are on disk before lumo leaves.
            audit::flush(&gate);
            if let Err(e) = served {
                eprintln!("Error: {e:#}");
                std::process::exit(1);
            }
            // Leave now: the runtime would otherwise wait for the thread blocked reading stdin.
            std::process::exit(0);
        }
        Command::Audit(args) => audit::run(args),
        Command::Pair { dir } => bridge::pair(&dir),
        Command::Providers { command, providers, browser, gate } => {
            lumo_cdp::sweep_stale_temp_dirs();
            let chosen = command.browser(&browser);
            let session = session_of(chosen, chosen.origin_lists());
            let status = providers::run(command, &providers, gate.providers_section()?, session).await?;
            std::process::exit(status);
        }
        Command::Tools { json } => {
            let session = session_of(
                &BrowserArgs {
                    browser: None,
                    cdp_endpoint: None,
                    user_data_dir: None,
                    headful: false,
                    allow_file_urls: false,
                    relay: None,
                    browser_args: Vec::new(),
                    browse_allow: Vec::new(),
                    browse_block: Vec::new(),
                    extractors: Vec::new(),
                },
                OriginLists::default(),
            );
            // What `serve` lists before any provider answered: the built-ins and the ext_* tools.
            let hub = lumo_host::providers::Providers::new(lumo_host::providers::Link::default(), None);
            let specs = Gate::new(Catalog::builtin(session).with_providers(hub)).specs();
            if json {
                let list: Vec<serde_json::Value> = specs
                    .iter()
                    .map(|s| {
                        serde_json::json!({"name": s.name, "description": s.description, "inputSchema": s.input_schema,
                            "annotations": {"readOnlyHint": s.hints.read_only, "destructiveHint": s.hints.destructive, "openWorldHint": s.hints.open_world}})
                    })
                    .collect();
                emit(serde_json::to_string_pretty(&list)?, 0);
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
                    emit(format_args!("{:width$}  {:5}  {}", s.name, hint, s.description), 0);
                }
            }
            Ok(())
        }
        Command::Webmcp { command } => {
            let mut stop = StopSignals::listen()?;
            tokio::select! {
                done = webmcp(command) => done,
                // Dropping `webmcp` drops its session and with it the browser; and when
                // this process ends, so does the browser's pipe, which ends the browser.
                name = stop.next() => bail!("stopped by {name}"),
            }
        }
        Command::Call { steps, json, record, allow_consequential, browser, gate: gate_args } => {
            let steps = steps::parse(&steps)?;
            let mut stop = StopSignals::listen()?;
            let (session, gate) = gated(&browser, allow_consequential, &gate_args)?;
            let status = tokio::select! {
                status = steps::run(&gate, &steps, record.as_deref(), json) => status,
                name = stop.next() => {
                    // Shutting down saves a recording in the data dir.
                    session.shutdown().await;
                    audit::flush(&gate);
                    bail!("stopped by {name} before the calls were done");
                }
            };
            session.shutdown().await;
            audit::flush(&gate);
            std::process::exit(status?);
        }
    }
}
