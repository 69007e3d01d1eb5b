//! Reading the log back: filters (tool, source, outcome, time range) and the
//! time formats `lumo audit` takes and prints (RFC 3339, or relative like `1h`).

use rusqlite::types::Value as SqlValue;
use rusqlite::{Connection, OptionalExtension};

use super::chain::Record;
use super::store::{COLUMNS, row_to_record};

/// Which records to read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only this tool.
    pub tool: Option<String>,
    /// Only this source (`builtin`, `page`, `provider`).
    pub source: Option<String>,
    /// Only this outcome (`ok`, or an error code like `rate_limited`).
    pub outcome: Option<String>,
    /// At or after, Unix milliseconds.
    pub since_ms: Option<i64>,
    /// Before, Unix milliseconds.
    pub until_ms: Option<i64>,
}

/// Runs `filter`: oldest first, or with `newest` the newest n, newest first.
pub(crate) fn select(
    conn: &Connection,
    filter: &Filter,
    newest: Option<usize>,
    mut each: impl FnMut(Record) -> bool,
) -> rusqlite::Result<()> {
    let mut clauses = Vec::new();
    let mut values: Vec<SqlValue> = Vec::new();
    for (column, value) in [("tool", &filter.tool), ("source", &filter.source), ("outcome", &filter.outcome)] {
        if let Some(v) = value {
            values.push(SqlValue::Text(v.clone()));
            clauses.push(format!("{column} = ?{}", values.len()));
        }
    }
    if let Some(since) = filter.since_ms {
        values.push(SqlValue::Integer(since));
        clauses.push(format!("at_ms >= ?{}", values.len()));
    }
    if let Some(until) = filter.until_ms {
        values.push(SqlValue::Integer(until));
        clauses.push(format!("at_ms < ?{}", values.len()));
    }
    let mut sql = format!("SELECT {COLUMNS} FROM records");
    if !clauses.is_empty() {
        sql.push_str(" WHERE ");
        sql.push_str(&clauses.join(" AND "));
    }
    match newest {
        Some(n) => sql.push_str(&format!(" ORDER BY id DESC LIMIT {n}")),
        None => sql.push_str(" ORDER BY id"),
    }
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map(rusqlite::params_from_iter(values), row_to_record)?;
    for row in rows {
        if !each(row?) {
            break;
        }
    }
    Ok(())
}

/// One record.
pub(crate) fn by_id(conn: &Connection, id: i64) -> rusqlite::Result<Option<Record>> {
    conn.query_row(&format!("SELECT {COLUMNS} FROM records WHERE id = ?1"), [id], row_to_record).optional()
}

/// Reads `1h`, `30m`, `2d`, `45s`, `1w` (that long before `now_ms`) or an RFC 3339
/// time (`2026-12-01T07:00:00Z`, `2026-12-01T09:00:00+02:00`, `2026-12-01`), as Unix ms.
pub fn parse_time(text: &str, now_ms: i64) -> Result<i64, String> {
    let text = text.trim();
    let bad = || {
        format!(
            "{text:?} is not a time: give RFC 3339 (2026-12-01T07:00:00Z or 2026-12-01) or an age like 90s, 15m, 1h, 2d, 1w"
        )
    };
    if let Some(unit) = text.chars().last().filter(|c| "smhdw".contains(*c)) {
        let number = &text[..text.len() - 1];
        if !number.is_empty() && number.bytes().all(|b| b.is_ascii_digit()) {
            let n: i64 = number.parse().map_err(|_| bad())?;
            let unit_ms = match unit {
                's' => 1_000,
                'm' => 60_000,
                'h' => 3_600_000,
                'd' => 86_400_000,
                _ => 7 * 86_400_000,
            };
            return Ok(now_ms.saturating_sub(n.saturating_mul(unit_ms)));
        }
    }
    parse_rfc3339(text).ok_or_else(bad)
}

fn digits(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit())).then(|| s.parse().ok()).flatten()
}

fn parse_rfc3339(text: &str) -> Option<i64> {
    let (date, time) = match text.find(['T', 't', ' ']) {
        Some(i) => (&text[..i], Some(&text[i + 1..])),
        None => (text, None),
    };
    let mut parts = date.split('-');
    let (y, m, d) = (digits(parts.next()?)?, digits(parts.next()?)?, digits(parts.next()?)?);
    if parts.next().is_some() || !(1..=12).contains(&m) || !(1..=31).contains(&d) {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    let Some(time) = time else { return Some(ms) };
    let (clock, offset_ms) = if let Some(clock) = time.strip_suffix(['Z', 'z']) {
        (clock, 0)
    } else {
        let i = time.rfind(['+', '-'])?;
        let (h, m) = time[i + 1..].split_once(':')?;
        let sign = if time.as_bytes()[i] == b'-' { -1 } else { 1 };
        (&time[..i], sign * (digits(h)? * 3_600_000 + digits(m)? * 60_000))
    };
    let (clock, fraction) = clock.split_once('.').unwrap_or((clock, ""));
    let mut hms = clock.split(':');
    let (h, mi, s) = (digits(hms.next()?)?, digits(hms.next()?)?, digits(hms.next()?)?);
    if hms.next().is_some() || h > 23 || mi > 59 || s > 60 {
        return None;
    }
    let frac_ms = if fraction.is_empty() {
        0
    } else {
        digits(fraction)?;
        format!("{fraction:0<3}")[..3].parse::<i64>().ok()?
    };
    ms += h * 3_600_000 + mi * 60_000 + s * 1_000 + frac_ms;
    Some(ms - offset_ms)
}

/// Unix ms as RFC 3339 UTC with milliseconds.
pub fn format_time(ms: i64) -> String {
    let days = ms.div_euclid(86_400_000);
    let rest = ms.rem_euclid(86_400_000);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}.{:03}Z",
        rest / 3_600_000,
        rest / 60_000 % 60,
        rest / 1_000 % 60,
        rest % 1_000
    )
}

// Howard Hinnant's civil calendar algorithms (proleptic Gregorian, days since 1970-01-01).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (yoe + era * 400 + i64::from(m <= 2), m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_read_and_print() {
        let t = parse_time("2026-12-01T07:13:14Z", 0).expect("rfc3339");
        assert_eq!(format_time(t), "2026-12-01T07:13:14.000Z");
        assert_eq!(parse_time("2026-12-01T09:13:14.5+02:00", 0), Ok(t + 500));
        assert_eq!(parse_time("1970-01-01", 0), Ok(0));
        assert_eq!(format_time(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(parse_time("2000-02-29T00:00:00Z", 0), Ok(951_782_400_000));
    }

    #[test]
    fn ages_count_back_from_now() {
        assert_eq!(parse_time("1h", 10_000_000), Ok(10_000_000 - 3_600_000));
        assert_eq!(parse_time("90s", 100_000), Ok(10_000));
        assert_eq!(parse_time("2d", 0), Ok(-2 * 86_400_000));
    }

    #[test]
    fn nonsense_is_refused_with_the_formats() {
        for bad in ["yesterday", "1y", "h", "2026-13-01", "2026-12-01T25:00:00Z", "2026-12-01T07:00"] {
            let err = parse_time(bad, 0).expect_err(bad);
            assert!(err.contains("RFC 3339"), "{err}");
        }
    }
}
