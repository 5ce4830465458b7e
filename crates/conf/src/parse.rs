//! Value parsers following Hadoop's `Configuration` rules. Each returns a short reason on
//! failure; [`crate::Configuration`] wraps it with the key and the offending value.

use std::time::Duration;

/// The unit a bare number (one without a suffix) is read in by
/// [`crate::Configuration::get_duration`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeUnit {
    Nanoseconds,
    Microseconds,
    Milliseconds,
    Seconds,
    Minutes,
    Hours,
    Days,
}

impl TimeUnit {
    /// The suffix Hadoop uses for this unit.
    pub fn suffix(self) -> &'static str {
        match self {
            TimeUnit::Nanoseconds => "ns",
            TimeUnit::Microseconds => "us",
            TimeUnit::Milliseconds => "ms",
            TimeUnit::Seconds => "s",
            TimeUnit::Minutes => "m",
            TimeUnit::Hours => "h",
            TimeUnit::Days => "d",
        }
    }

    /// `n` of this unit as a [`Duration`]; `None` on overflow.
    pub fn duration(self, n: u64) -> Option<Duration> {
        Some(match self {
            TimeUnit::Nanoseconds => Duration::from_nanos(n),
            TimeUnit::Microseconds => Duration::from_micros(n),
            TimeUnit::Milliseconds => Duration::from_millis(n),
            TimeUnit::Seconds => Duration::from_secs(n),
            TimeUnit::Minutes => Duration::from_secs(n.checked_mul(60)?),
            TimeUnit::Hours => Duration::from_secs(n.checked_mul(3600)?),
            TimeUnit::Days => Duration::from_secs(n.checked_mul(86_400)?),
        })
    }

    /// `d` expressed as a whole number of this unit (truncating), saturating at `u64::MAX`.
    pub fn count(self, d: Duration) -> u64 {
        let n = match self {
            TimeUnit::Nanoseconds => d.as_nanos(),
            TimeUnit::Microseconds => d.as_micros(),
            TimeUnit::Milliseconds => d.as_millis(),
            TimeUnit::Seconds => u128::from(d.as_secs()),
            TimeUnit::Minutes => u128::from(d.as_secs() / 60),
            TimeUnit::Hours => u128::from(d.as_secs() / 3600),
            TimeUnit::Days => u128::from(d.as_secs() / 86_400),
        };
        u64::try_from(n).unwrap_or(u64::MAX)
    }
}

/// Order matters: longer suffixes ending in `s` are tried before `s` itself.
const SUFFIX_ORDER: [TimeUnit; 7] = [
    TimeUnit::Nanoseconds,
    TimeUnit::Microseconds,
    TimeUnit::Milliseconds,
    TimeUnit::Seconds,
    TimeUnit::Minutes,
    TimeUnit::Hours,
    TimeUnit::Days,
];

/// Parses a time duration: an integer optionally followed by one of the suffixes
/// `ns us ms s m h d` (case-insensitive); a bare number is in `unit`.
pub fn parse_duration(value: &str, unit: TimeUnit) -> Result<Duration, String> {
    let v = value.trim().to_ascii_lowercase();
    let (num, unit) = match SUFFIX_ORDER.iter().find(|u| v.ends_with(u.suffix())) {
        Some(u) => (&v[..v.len() - u.suffix().len()], *u),
        None => (v.as_str(), unit),
    };
    let n: i64 = num.trim().parse().map_err(|_| {
        "not a time duration (integer with optional ns/us/ms/s/m/h/d suffix)".to_string()
    })?;
    let n = u64::try_from(n).map_err(|_| "negative time duration".to_string())?;
    unit.duration(n)
        .ok_or_else(|| "time duration out of range".to_string())
}

/// Parses a byte size: an integer optionally followed by one binary prefix
/// `k m g t p e` (case-insensitive, powers of 1024).
pub fn parse_size(value: &str) -> Result<u64, String> {
    let v = value.trim();
    let last = v
        .chars()
        .last()
        .ok_or_else(|| "empty size".to_string())?
        .to_ascii_lowercase();
    let shift = match last {
        'k' => Some(10),
        'm' => Some(20),
        'g' => Some(30),
        't' => Some(40),
        'p' => Some(50),
        'e' => Some(60),
        _ => None,
    };
    let (num, shift) = match shift {
        Some(s) => (&v[..v.len() - 1], s),
        None => (v, 0u32),
    };
    let n: i64 = num
        .trim()
        .parse()
        .map_err(|_| "not a size (integer with optional k/m/g/t/p/e suffix)".to_string())?;
    let n = u64::try_from(n).map_err(|_| "negative size".to_string())?;
    n.checked_mul(1u64 << shift)
        .filter(|r| *r <= i64::MAX as u64)
        .ok_or_else(|| "size out of range".to_string())
}

/// Parses a signed integer; `0x`/`0X` (optionally after `-`) selects hexadecimal.
pub fn parse_i64(value: &str) -> Result<i64, String> {
    let v = value.trim();
    let (neg, rest) = match v.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, v.strip_prefix('+').unwrap_or(v)),
    };
    let hex = rest.strip_prefix("0x").or_else(|| rest.strip_prefix("0X"));
    let parsed = match hex {
        Some(h) => {
            if h.starts_with(['+', '-']) {
                return Err("not an integer".to_string());
            }
            let digits = if neg { format!("-{h}") } else { h.to_string() };
            i64::from_str_radix(&digits, 16)
        }
        None => v.parse::<i64>(),
    };
    parsed.map_err(|e| format!("not an integer ({e})"))
}

/// Parses a boolean: `true` or `false`, case-insensitive.
pub fn parse_bool(value: &str) -> Result<bool, String> {
    let v = value.trim();
    if v.eq_ignore_ascii_case("true") {
        Ok(true)
    } else if v.eq_ignore_ascii_case("false") {
        Ok(false)
    } else {
        Err("not a boolean (true or false)".to_string())
    }
}

/// Parses a floating-point number, tolerating a trailing `f`/`F`/`d`/`D` as Java does.
pub fn parse_f64(value: &str) -> Result<f64, String> {
    let v = value.trim();
    let v = match v.strip_suffix(['f', 'F', 'd', 'D']) {
        Some(s) if !s.is_empty() => s,
        _ => v,
    };
    v.parse::<f64>()
        .map_err(|_| "not a floating-point number".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers() {
        assert_eq!(parse_i64("0x10"), Ok(16));
        assert_eq!(parse_i64("-0x10"), Ok(-16));
        assert_eq!(parse_i64("+5"), Ok(5));
        assert!(parse_i64("0x-1").is_err());
        assert!(parse_i64("").is_err());
        assert!(parse_i64("1_000").is_err());
    }

    #[test]
    fn time_units_round_trip() {
        for u in SUFFIX_ORDER {
            let d = u.duration(5).expect("in range");
            assert_eq!(u.count(d), 5);
            assert_eq!(
                parse_duration(&format!("5{}", u.suffix()), TimeUnit::Days),
                Ok(d)
            );
        }
        assert!(TimeUnit::Days.duration(u64::MAX).is_none());
    }

    #[test]
    fn floats_and_bools() {
        assert_eq!(parse_f64("0.32f"), Ok(0.32));
        assert_eq!(parse_f64("1.5D"), Ok(1.5));
        assert!(parse_f64("f").is_err());
        assert_eq!(parse_bool("True"), Ok(true));
        assert!(parse_bool("1").is_err());
    }
}
