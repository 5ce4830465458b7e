//! Calendar formatting without a date library (UTC; Hadoop prints local time, which is UTC
//! on the machines this runs on).

/// (year, month, day) of a day count since 1970-01-01 (proleptic Gregorian).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Days since 1970-01-01 of a civil date.
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// Broken-down UTC time of epoch milliseconds: (y, mo, d, h, mi, s).
pub fn utc(ms: u64) -> (i64, u32, u32, u32, u32, u32) {
    let secs = (ms / 1000) as i64;
    let (y, mo, d) = civil_from_days(secs.div_euclid(86_400));
    let rem = secs.rem_euclid(86_400);
    (
        y,
        mo,
        d,
        (rem / 3600) as u32,
        ((rem % 3600) / 60) as u32,
        (rem % 60) as u32,
    )
}

/// `yyyy-MM-dd HH:mm` (FsShell -ls).
pub fn format_minutes(ms: u64) -> String {
    let (y, mo, d, h, mi, _) = utc(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}")
}

/// `yyyy-MM-dd HH:mm:ss` (FsShell -stat).
pub fn format_seconds(ms: u64) -> String {
    let (y, mo, d, h, mi, s) = utc(ms);
    format!("{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{s:02}")
}

/// Trash checkpoint name `yyMMddHHmmss`.
pub fn format_checkpoint(ms: u64) -> String {
    let (y, mo, d, h, mi, s) = utc(ms);
    format!("{:02}{mo:02}{d:02}{h:02}{mi:02}{s:02}", y.rem_euclid(100))
}

/// Epoch ms of a `yyMMddHHmmss` checkpoint name (20yy), or `None`.
pub fn parse_checkpoint(name: &str) -> Option<u64> {
    if name.len() != 12 || !name.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n = |i: usize| name[i..i + 2].parse::<u32>().ok();
    let (y, mo, d, h, mi, s) = (n(0)?, n(2)?, n(4)?, n(6)?, n(8)?, n(10)?);
    if !(1..=12).contains(&mo) || !(1..=31).contains(&d) || h > 23 || mi > 59 || s > 59 {
        return None;
    }
    let days = days_from_civil(2000 + i64::from(y), mo, d);
    let secs = days * 86_400 + i64::from(h * 3600 + mi * 60 + s);
    u64::try_from(secs).ok().map(|s| s * 1000)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats() {
        assert_eq!(format_minutes(0), "1970-01-01 00:00");
        // 2026-12-02 14:39:02 UTC
        assert_eq!(format_seconds(1_796_222_342_466), "2026-12-02 14:39:02");
        assert_eq!(format_minutes(1_796_222_342_466), "2026-12-02 14:39");
        assert_eq!(format_checkpoint(1_796_222_342_466), "261202143902");
        assert_eq!(parse_checkpoint("261202143902"), Some(1_796_222_342_000));
        assert_eq!(parse_checkpoint("Current"), None);
        assert_eq!(civil_from_days(days_from_civil(2000, 2, 29)), (2000, 2, 29));
    }
}
