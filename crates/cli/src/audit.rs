//! `lumo audit …` (read, export and verify the audit log) and the gate
//! settings `lumo serve` and `lumo call` share: where the log is, how much
//! of it to keep, and the per-client rate window for writes.

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use lumo_host::{Audit, AuditFilter, AuditLog, AuditRecord, Gate, Retention};

/// Gate settings: audit log and rate window.
#[derive(Args, Clone, Debug)]
pub(crate) struct GateArgs {
    /// The audit log file (default: $LUMO_DATA_DIR/audit.db, else $XDG_DATA_HOME/lumo/audit.db, else ~/.local/share/lumo/audit.db).
    #[arg(long, env = "LUMO_AUDIT_DB", value_name = "PATH")]
    audit_db: Option<PathBuf>,
    /// Keep at most N audit records (the newest; 0 keeps all).
    #[arg(long, env = "LUMO_AUDIT_KEEP", value_name = "N", default_value_t = 1_000_000)]
    audit_keep: u64,
    /// Drop audit records older than DAYS (0 keeps them).
    #[arg(long, env = "LUMO_AUDIT_MAX_AGE_DAYS", value_name = "DAYS", default_value_t = 180)]
    audit_max_age_days: u64,
    /// Writes (tools not marked read-only) allowed per client per window, like 30/60s; 0 turns the limit off.
    #[arg(long, env = "LUMO_RATE_LIMIT", value_name = "N/WINDOW", default_value = "30/60s", value_parser = parse_rate)]
    rate_limit: RateSpec,
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

impl GateArgs {
    /// `gate` with its audit log opened and its rate window set.
    pub(crate) fn apply(&self, gate: Gate) -> anyhow::Result<Gate> {
        let path = log_path(self.audit_db.clone())?;
        let retention = Retention {
            max_records: self.audit_keep,
            max_age: (self.audit_max_age_days > 0).then(|| Duration::from_secs(self.audit_max_age_days * 86_400)),
        };
        let audit = Audit::open(&path, retention)
            .with_context(|| "cannot open the audit log (choose another file with --audit-db PATH)")?;
        Ok(gate.with_audit(audit).with_rate_limit(self.rate_limit.0))
    }
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
    /// Only this source: builtin, page or provider.
    #[arg(long, value_parser = ["builtin", "page", "provider"])]
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
