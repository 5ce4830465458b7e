//! One audit line, laid out as Hadoop's DefaultAuditLogger writes it through log4j's
//! `%d{ISO8601} %p %c{2}: %m%n`:
//!
//! `2026-12-03 21:55:55,123 INFO FSNamesystem.audit: allowed=true\tugi=alice (auth:SIMPLE)\t
//! ip=/127.0.0.1\tcmd=mkdirs\tsrc=/a\tdst=null\tperm=alice:supergroup:rwxr-xr-x\tproto=rpc`

use std::borrow::Cow;
use std::fmt::Write;
use std::net::IpAddr;

/// An audited operation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuditEvent<'a> {
    pub allowed: bool,
    /// The effective user (SIMPLE authentication).
    pub user: &'a str,
    pub ip: Option<IpAddr>,
    pub cmd: Cow<'a, str>,
    pub src: Option<&'a str>,
    pub dst: Option<&'a str>,
    /// `owner:group:rwxr-xr-x` of the path after the operation, for those Hadoop logs it.
    pub perm: Option<String>,
    /// `rpc` or `webhdfs`.
    pub proto: &'a str,
}

impl AuditEvent<'_> {
    /// The line (with its newline) as written at `now_ms`.
    pub fn line(&self, now_ms: u64) -> String {
        let mut s = String::with_capacity(160);
        self.write_line(now_ms, &mut s);
        s
    }

    /// Appends the line (with its newline) as written at `now_ms` to `s`.
    pub fn write_line(&self, now_ms: u64, s: &mut String) {
        write_timestamp(now_ms, s);
        s.push_str(" INFO FSNamesystem.audit: allowed=");
        s.push_str(if self.allowed { "true" } else { "false" });
        s.push_str("\tugi=");
        s.push_str(self.user);
        s.push_str(" (auth:SIMPLE)\t");
        match self.ip {
            Some(ip) => {
                let _ = write!(s, "ip=/{ip}\t");
            }
            None => s.push_str("ip=null\t"),
        }
        s.push_str("cmd=");
        s.push_str(&self.cmd);
        s.push_str("\tsrc=");
        s.push_str(&or_null(self.src));
        s.push_str("\tdst=");
        s.push_str(&or_null(self.dst));
        s.push_str("\tperm=");
        s.push_str(self.perm.as_deref().unwrap_or("null"));
        s.push_str("\tproto=");
        s.push_str(self.proto);
        s.push('\n');
    }
}

fn or_null(s: Option<&str>) -> Cow<'_, str> {
    match s {
        Some(s) => escape_java(s),
        None => Cow::Borrowed("null"),
    }
}

/// log4j's ISO8601 date (`yyyy-MM-dd HH:mm:ss,SSS`), UTC.
pub fn timestamp(ms: u64) -> String {
    let mut s = String::with_capacity(23);
    write_timestamp(ms, &mut s);
    s
}

fn write_timestamp(ms: u64, s: &mut String) {
    let (y, mo, d, h, mi, sec) = rhdfs_client::time::utc(ms);
    let _ = write!(
        s,
        "{y:04}-{mo:02}-{d:02} {h:02}:{mi:02}:{sec:02},{:03}",
        ms % 1000
    );
}

/// Java string escaping as commons-text's `escapeJava` (Hadoop escapes src and dst with it,
/// so a path cannot break a line): quotes, backslashes and control characters escaped,
/// characters outside printable ASCII as `\uXXXX` (UTF-16 units).
pub fn escape_java(s: &str) -> Cow<'_, str> {
    if s.bytes()
        .all(|b| (32..0x7f).contains(&b) && b != b'"' && b != b'\\')
    {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\u{c}' => out.push_str("\\f"),
            '\r' => out.push_str("\\r"),
            c if (' '..='\u{7e}').contains(&c) => out.push(c),
            c => {
                let mut units = [0u16; 2];
                for u in c.encode_utf16(&mut units) {
                    let _ = write!(out, "\\u{:04X}", u);
                }
            }
        }
    }
    Cow::Owned(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoop_layout() {
        let e = AuditEvent {
            allowed: true,
            user: "alice",
            ip: Some("127.0.0.1".parse().unwrap()),
            cmd: Cow::Borrowed("mkdirs"),
            src: Some("/a b"),
            dst: None,
            perm: Some("alice:supergroup:rwxr-xr-x".into()),
            proto: "rpc",
        };
        // 2026-12-03 21:55:55.123 UTC
        assert_eq!(
            e.line(1_796_334_955_123),
            "2026-12-03 21:55:55,123 INFO FSNamesystem.audit: allowed=true\tugi=alice (auth:SIMPLE)\t\
             ip=/127.0.0.1\tcmd=mkdirs\tsrc=/a b\tdst=null\tperm=alice:supergroup:rwxr-xr-x\tproto=rpc\n"
        );
    }

    #[test]
    fn escapes_like_commons_text() {
        assert_eq!(escape_java("/plain"), "/plain");
        assert_eq!(escape_java("/a\tb\nc\"d\\"), "/a\\tb\\nc\\\"d\\\\");
        assert_eq!(escape_java("/é"), "/\\u00E9");
        assert_eq!(escape_java("/\u{1F600}"), "/\\uD83D\\uDE00");
        assert_eq!(escape_java("\u{1}"), "\\u0001");
    }
}
