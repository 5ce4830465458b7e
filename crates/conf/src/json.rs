//! The two JSON literals the daemons' `/jmx` pages and metrics reports are built from
//! (a string with its escapes, a number that always reads back as a double).

use std::fmt::Write as _;

/// `s` as a quoted JSON string: quote, backslash and control characters escaped.
pub fn string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `v` as a JSON number with a decimal point (`3.0`, not `3`); not-finite values,
/// which JSON cannot carry, become `0.0`.
pub fn number(v: f64) -> String {
    if !v.is_finite() {
        return "0.0".into();
    }
    let s = format!("{v}");
    if s.contains('.') || s.contains('e') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_are_escaped() {
        assert_eq!(string("a\"b\\\n"), "\"a\\\"b\\\\\\n\"");
        assert_eq!(string("\t\r\u{1}é"), "\"\\t\\r\\u0001é\"");
    }

    #[test]
    fn numbers_read_back_as_doubles() {
        assert_eq!(number(3.0), "3.0");
        assert_eq!(number(2.5), "2.5");
        assert_eq!(number(f64::NAN), "0.0");
        assert_eq!(number(f64::INFINITY), "0.0");
    }
}
