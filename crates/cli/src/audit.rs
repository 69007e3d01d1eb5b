//! `lumo audit …` (read, export and verify the audit log) and the gate
//! settings `lumo serve` and `lumo call` share: the policy file `lumo.toml`
//! (re-read on change), where the log is and how much of it to keep, the
//! per-client rate window for writes, and the tool groups turned off.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use lumo_browser::origin::{OriginLists, OriginPattern};
use lumo_host::{Audit, AuditFilter, AuditLog, AuditRecord, ConfirmMode, Gate, Retention};

/// The default write window. The seed's 30 per 60 s is its model for a provider's
/// writes; an agent driving the browser clicks and types faster than that in
/// ordinary work, so built-in actions get four times the room (still a brake on a
/// runaway loop). `--rate-limit 30/60s` restores the seed's figure.
const DEFAULT_RATE: &str = "120/60s";

/// Gate settings: policy file, audit log, rate window, tool groups. A flag or
/// environment variable wins over `lumo.toml`, which wins over the default.
#[derive(Args, Clone, Debug)]
pub(crate) struct GateArgs {
    /// Policy file (default: $XDG_CONFIG_HOME/lumo/lumo.toml, else ~/.config/lumo/lumo.toml, if there); re-read on change.
    #[arg(long, env = "LUMO_CONFIG", value_name = "PATH")]
    config: Option<PathBuf>,
    /// The audit log file (default: $LUMO_DATA_DIR/audit.db, else $XDG_DATA_HOME/lumo/audit.db, else ~/.local/share/lumo/audit.db).
    #[arg(long, env = "LUMO_AUDIT_DB", value_name = "PATH")]
    audit_db: Option<PathBuf>,
    /// Keep at most N audit records (the newest; 0 keeps all) [default: 1000000].
    #[arg(long, env = "LUMO_AUDIT_KEEP", value_name = "N")]
    audit_keep: Option<u64>,
    /// Drop audit records older than DAYS (0 keeps them) [default: 180].
    #[arg(long, env = "LUMO_AUDIT_MAX_AGE_DAYS", value_name = "DAYS")]
    audit_max_age_days: Option<u64>,
    /// Writes (tools not marked read-only) allowed per client per window, like 30/60s; 0 turns the limit off [default: 120/60s].
    #[arg(long, env = "LUMO_RATE_LIMIT", value_name = "N/WINDOW", value_parser = parse_rate)]
    rate_limit: Option<RateSpec>,
    /// Tool groups to turn off, comma-separated: evaluate, uploads, network_bodies, page_tools (or none).
    #[arg(long, env = "LUMO_DISABLE", value_name = "GROUPS", value_delimiter = ',')]
    disable: Option<Vec<String>>,
    /// Consequential page tools: ask the user (MCP elicitation), allow without asking, or deny [default: ask].
    #[arg(long, env = "LUMO_CONFIRM", value_name = "ask|allow|deny", value_parser = ConfirmMode::parse)]
    confirm: Option<ConfirmMode>,
}

/// `lumo.toml`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PolicyFile {
    /// Like `--rate-limit`.
    rate_limit: Option<String>,
    /// Like `--confirm`.
    confirm: Option<String>,
    /// Like `--redact` (added to the secrets given there and in `LUMO_REDACT`).
    #[serde(default)]
    redact: Vec<String>,
    #[serde(default)]
    browse: BrowseSection,
    #[serde(default)]
    audit: AuditSection,
    #[serde(default)]
    tools: ToolsSection,
    #[serde(default)]
    providers: crate::providers::ProvidersSection,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct AuditSection {
    keep: Option<u64>,
    max_age_days: Option<u64>,
}

/// Like `--browse-allow` / `--browse-block`: a list given on the command line wins.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BrowseSection {
    allow: Option<Vec<String>>,
    block: Option<Vec<String>>,
}

#[derive(Debug, Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolsSection {
    disable: Option<Vec<String>>,
}

/// Where `lumo.toml` is looked for when no --config is given.
fn default_config() -> Option<PathBuf> {
    let non_empty = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    non_empty("XDG_CONFIG_HOME")
        .or_else(|| non_empty("HOME").map(|h| h.join(".config")))
        .map(|d| d.join("lumo/lumo.toml"))
}

fn read_policy(path: &std::path::Path) -> anyhow::Result<PolicyFile> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("cannot read the policy file {}", path.display()))?;
    toml::from_str(&text).map_err(|e| anyhow::anyhow!("the policy file {} is not valid: {e}", path.display()))
}

fn groups(names: &[String]) -> anyhow::Result<Vec<lumo_host::ToolGroup>> {
    names
        .iter()
        .filter(|n| !n.trim().is_empty() && n.trim() != "none")
        .map(|n| lumo_host::ToolGroup::parse(n).map_err(anyhow::Error::msg))
        .collect()
}

impl GateArgs {
    /// The policy file in force: --config (must exist), else the default one if it exists.
    fn policy_path(&self) -> Option<PathBuf> {
        self.config.clone().or_else(default_config)
    }

    fn load(&self) -> anyhow::Result<PolicyFile> {
        match self.policy_path() {
            Some(path) if self.config.is_some() || path.is_file() => read_policy(&path),
            _ => Ok(PolicyFile::default()),
        }
    }

    fn rate(&self, file: &PolicyFile) -> anyhow::Result<Option<(usize, Duration)>> {
        if let Some(spec) = self.rate_limit {
            return Ok(spec.0);
        }
        let text = file.rate_limit.as_deref().unwrap_or(DEFAULT_RATE);
        parse_rate(text).map(|s| s.0).map_err(|e| anyhow::anyhow!("lumo.toml rate_limit: {e}"))
    }

    fn confirm_mode(&self, file: &PolicyFile) -> anyhow::Result<ConfirmMode> {
        match (self.confirm, file.confirm.as_deref()) {
            (Some(mode), _) => Ok(mode),
            (None, Some(text)) => ConfirmMode::parse(text).map_err(|e| anyhow::anyhow!("lumo.toml confirm: {e}")),
            (None, None) => Ok(ConfirmMode::Ask),
        }
    }

    fn disabled(&self, file: &PolicyFile) -> anyhow::Result<Vec<lumo_host::ToolGroup>> {
        groups(self.disable.as_ref().or(file.tools.disable.as_ref()).map_or(&[][..], Vec::as_slice))
    }

    /// The `[providers]` section of the policy file in force.
    pub(crate) fn providers_section(&self) -> anyhow::Result<crate::providers::ProvidersSection> {
        Ok(self.load()?.providers)
    }

    fn retention(&self, file: &PolicyFile) -> Retention {
        let keep = self.audit_keep.or(file.audit.keep).unwrap_or(1_000_000);
        let days = self.audit_max_age_days.or(file.audit.max_age_days).unwrap_or(180);
        Retention { max_records: keep, max_age: (days > 0).then(|| Duration::from_secs(days * 86_400)) }
    }

    /// The origin lists in force: each list given on the command line (`given`), else the file's.
    fn origin_lists(&self, file: &PolicyFile, given: &OriginLists) -> anyhow::Result<OriginLists> {
        let parse = |patterns: &Option<Vec<String>>, key: &str| -> anyhow::Result<Vec<OriginPattern>> {
            patterns
                .iter()
                .flatten()
                .map(|p| {
                    OriginPattern::parse(p).map_err(|e| {
                        anyhow::anyhow!(
                            "lumo.toml browse.{key}: {e}; write [scheme://]host[:port], e.g. https://*.example.com or http://localhost:8080"
                        )
                    })
                })
                .collect()
        };
        let allow = if given.allow.is_empty() { parse(&file.browse.allow, "allow")? } else { given.allow.clone() };
        let block = if given.block.is_empty() { parse(&file.browse.block, "block")? } else { given.block.clone() };
        Ok(OriginLists { allow, block })
    }

    /// The origin lists to start with (see [`GateArgs::watch`] for later changes).
    pub(crate) fn initial_origins(&self, given: &OriginLists) -> anyhow::Result<OriginLists> {
        self.origin_lists(&self.load()?, given)
    }

    /// `gate` with its audit log opened, its rate window set, its tool groups on or off
    /// and the file's secrets hidden.
    pub(crate) fn apply(&self, gate: Gate) -> anyhow::Result<Gate> {
        let file = self.load()?;
        let path = log_path(self.audit_db.clone())?;
        let audit = Audit::open(&path, self.retention(&file))
            .with_context(|| "cannot open the audit log (choose another file with --audit-db PATH)")?;
        let gate = gate.with_audit(audit).with_rate_limit(self.rate(&file)?);
        gate.set_disabled_groups(&self.disabled(&file)?);
        gate.set_confirm_mode(self.confirm_mode(&file)?);
        gate.set_redactor(crate::redaction::with_file_secrets(&file.redact));
        Ok(gate)
    }

    /// Re-reads the policy file when it changes and applies it from the next call on:
    /// rate limit, tool groups, confirmation, secrets, audit retention and the origin
    /// lists of `browser` (those of `given`, from the command line, stay).
    pub(crate) fn watch(
        &self,
        gate: std::sync::Arc<Gate>,
        browser: std::sync::Arc<lumo_browser::Session>,
        given: OriginLists,
    ) {
        let Some(path) = self.policy_path() else { return };
        let args = self.clone();
        tokio::spawn(async move {
            let stamp = |p: &std::path::Path| std::fs::metadata(p).and_then(|m| m.modified()).ok();
            let mut seen = stamp(&path);
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                let now = stamp(&path);
                if now == seen {
                    continue;
                }
                seen = now;
                let applied = args.load().and_then(|file| {
                    let settings = (args.rate(&file)?, args.disabled(&file)?, args.confirm_mode(&file)?);
                    Ok((settings, args.origin_lists(&file, &given)?, args.retention(&file), file.redact))
                });
                match applied {
                    Ok(((rate, disabled, confirm), origins, retention, secrets)) => {
                        gate.set_rate_limit(rate);
                        gate.set_disabled_groups(&disabled);
                        gate.set_confirm_mode(confirm);
                        gate.set_redactor(crate::redaction::with_file_secrets(&secrets));
                        if let Some(audit) = gate.audit() {
                            audit.set_retention(retention);
                        }
                        browser.set_origin_lists(origins).await;
                        tracing::info!(path = %path.display(), "policy re-read");
                    }
                    Err(e) => tracing::warn!(error = %e, "keeping the previous policy"),
                }
            }
        });
    }
}

/// `N/WINDOW`, or off.
#[derive(Clone, Copy, Debug)]
pub(crate) struct RateSpec(Option<(usize, Duration)>);

fn parse_rate(text: &str) -> Result<RateSpec, String> {
    let bad =
        || format!("{text:?} is not a rate limit: write N/WINDOW like 30/60s, 100/5m or 10/1h, or 0 to turn it off");
    let text = text.trim();
    if text == "0" || text.eq_ignore_ascii_case("off") {
        return Ok(RateSpec(None));
    }
    let (count, window) = text.split_once('/').ok_or_else(bad)?;
    let count: usize = count.trim().parse().map_err(|_| bad())?;
    let window = window.trim();
    let (number, unit) = window.split_at(window.find(|c: char| !c.is_ascii_digit()).unwrap_or(window.len()));
    let number: u64 = number.parse().map_err(|_| bad())?;
    let seconds = match unit {
        "" | "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        _ => return Err(bad()),
    };
    if seconds == 0 {
        return Err(bad());
    }
    Ok(RateSpec((count > 0).then_some((count, Duration::from_secs(seconds)))))
}

fn log_path(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    given
        .or_else(lumo_host::default_audit_path)
        .context("no place for the audit log: set LUMO_DATA_DIR, XDG_DATA_HOME or HOME, or pass --audit-db PATH")
}

/// Waits for the gate's audit records to reach the disk.
pub(crate) fn flush(gate: &Gate) {
    if let Some(audit) = gate.audit()
        && !audit.flush(Duration::from_secs(10))
    {
        eprintln!("warning: the audit log {} could not be flushed in 10 s", audit.path().display());
    }
}

/// `lumo audit`.
#[derive(Args)]
pub(crate) struct AuditArgs {
    /// The audit log file (default as for lumo serve).
    #[arg(long, env = "LUMO_AUDIT_DB", value_name = "PATH", global = true)]
    audit_db: Option<PathBuf>,
    #[command(subcommand)]
    command: AuditCommand,
}

#[derive(Subcommand)]
enum AuditCommand {
    /// Print the newest records.
    Tail {
        /// How many.
        #[arg(short = 'n', long = "lines", default_value_t = 20)]
        n: usize,
        #[command(flatten)]
        filter: FilterArgs,
    },
    /// Print one record in full (JSON).
    Show {
        /// The record's id (first column of tail).
        id: i64,
    },
    /// Check the hash chain: exit 0 when intact, 1 naming the first broken record.
    Verify,
    /// Print records as JSON lines, oldest first.
    Export {
        /// One JSON object per line (the only format).
        #[arg(long, required = true)]
        jsonl: bool,
        #[command(flatten)]
        filter: FilterArgs,
    },
}

#[derive(Args)]
struct FilterArgs {
    /// Only this tool.
    #[arg(long)]
    tool: Option<String>,
    /// Only this source: builtin, page, provider, or bridge (refused bridge connections).
    #[arg(long, value_parser = ["builtin", "page", "provider", "bridge"])]
    source: Option<String>,
    /// Only this outcome: ok, or an error code like forbidden or rate_limited.
    #[arg(long)]
    outcome: Option<String>,
    /// At or after: RFC 3339 (2026-12-01T07:00:00Z) or an age (90s, 15m, 1h, 2d, 1w).
    #[arg(long, value_name = "TIME")]
    since: Option<String>,
    /// Before: RFC 3339 or an age.
    #[arg(long, value_name = "TIME")]
    until: Option<String>,
}

impl FilterArgs {
    fn filter(self) -> anyhow::Result<AuditFilter> {
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
        let time =
            |t: Option<String>| t.map(|t| lumo_host::parse_time(&t, now)).transpose().map_err(anyhow::Error::msg);
        Ok(AuditFilter {
            tool: self.tool,
            source: self.source,
            outcome: self.outcome,
            since_ms: time(self.since)?,
            until_ms: time(self.until)?,
        })
    }
}

fn json(record: &AuditRecord) -> serde_json::Value {
    let mut value = serde_json::to_value(record).unwrap_or_default();
    value["time"] = lumo_host::format_time(record.at_ms).into();
    value
}

/// Runs `lumo audit …`.
pub(crate) fn run(args: AuditArgs) -> anyhow::Result<()> {
    let path = log_path(args.audit_db)?;
    let log = AuditLog::open(&path)?;
    match args.command {
        AuditCommand::Tail { n, filter } => {
            let records = log.tail(&filter.filter()?, n)?;
            println!(
                "{:>7}  {:24}  {:16}  {:>7}  {:8}  {:24}  {:28}  CLIENT / SESSION",
                "ID", "TIME", "OUTCOME", "MS", "SOURCE", "TOOL", "TARGET"
            );
            for r in records {
                println!(
                    "{:>7}  {:24}  {:16}  {:>7}  {:8}  {:24}  {:28}  {} / {}",
                    r.id,
                    lumo_host::format_time(r.at_ms),
                    r.outcome,
                    r.duration_ms,
                    r.source,
                    r.tool,
                    if r.target.is_empty() { "-" } else { &r.target },
                    r.client,
                    r.session
                );
            }
        }
        AuditCommand::Show { id } => match log.get(id)? {
            Some(record) => println!("{}", serde_json::to_string_pretty(&json(&record))?),
            None => bail!("no audit record {id} in {} (see lumo audit tail)", path.display()),
        },
        AuditCommand::Verify => match log.verify()? {
            Ok(done) => {
                let from =
                    if done.anchor > 0 { format!(", kept from after record {}", done.anchor) } else { String::new() };
                println!("ok: {} records, hash chain intact{from} ({})", done.records, path.display());
            }
            Err(broken) => {
                eprintln!("BROKEN at record {}: {broken} ({})", broken.id, path.display());
                std::process::exit(1);
            }
        },
        AuditCommand::Export { jsonl: _, filter } => {
            use std::io::Write;
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            let mut failed = None;
            log.each(&filter.filter()?, |record| match writeln!(out, "{}", json(&record)) {
                Ok(()) => true,
                Err(e) => {
                    failed = Some(e);
                    false
                }
            })?;
            if let Some(e) = failed {
                return Err(e.into());
            }
            out.flush()?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rate_limits_parse() {
        let rate = |t: &str| parse_rate(t).map(|r| r.0);
        assert_eq!(rate("30/60s"), Ok(Some((30, Duration::from_secs(60)))));
        assert_eq!(rate("100/5m"), Ok(Some((100, Duration::from_secs(300)))));
        assert_eq!(rate("10/1h"), Ok(Some((10, Duration::from_secs(3600)))));
        assert_eq!(rate("5/30"), Ok(Some((5, Duration::from_secs(30)))));
        assert_eq!(rate("0"), Ok(None));
        assert_eq!(rate("0/60s"), Ok(None));
        for bad in ["30", "30/0s", "x/60s", "30/60y", "30/"] {
            assert!(rate(bad).expect_err(bad).contains("N/WINDOW"));
        }
    }
}
