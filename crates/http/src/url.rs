//! Percent-encoding of paths and query components.

fn hex(b: u8) -> Option<u8> {
    (b as char).to_digit(16).map(|d| d as u8)
}

/// Decodes `%XX` escapes and `+` (form encoding, as Java's servlet parameters are).
pub fn decode_component(s: &str) -> String {
    decode(s, true)
}

/// Decodes `%XX` escapes of a URL path (`+` stays a plus sign).
pub fn decode_path(s: &str) -> String {
    decode(s, false)
}

fn decode(s: &str, plus_is_space: bool) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' if plus_is_space => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h * 16 + l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// Percent-encodes a path or query value (unreserved characters and `/` kept).
pub fn encode_component(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// Percent-encodes a query value, `/` included.
pub fn encode_query_value(s: &str) -> String {
    encode_component(s).replace('/', "%2F")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        assert_eq!(decode_component("100%"), "100%");
        assert_eq!(decode_component("%zz"), "%zz");
        assert_eq!(decode_component("a+b%2Fc"), "a b/c");
        assert_eq!(decode_path("a+b%20c"), "a+b c");
        assert_eq!(encode_component("/a b/c&d"), "/a%20b/c%26d");
        assert_eq!(encode_query_value("/a b"), "%2Fa%20b");
        for s in ["/x y/ü", "a&b=c", "%41", "+"] {
            assert_eq!(decode_path(&encode_component(s)), s);
        }
    }

    #[test]
    fn trailing_percent() {
        assert_eq!(decode_component("a%4"), "a%4");
        assert_eq!(decode_component("a%"), "a%");
    }
}
