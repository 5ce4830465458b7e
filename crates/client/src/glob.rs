//! Hadoop-style glob patterns for one path component: `*`, `?`, `[abc]`, `[a-z]`, `[^x]`,
//! `{a,b}` (nestable) and `\` escapes.

/// True if `s` contains an unescaped glob metacharacter.
pub fn has_glob(s: &str) -> bool {
    let mut esc = false;
    for c in s.chars() {
        if esc {
            esc = false;
            continue;
        }
        match c {
            '\\' => esc = true,
            '*' | '?' | '[' | '{' => return true,
            _ => {}
        }
    }
    false
}

/// Removes glob escapes (`\x` → `x`).
pub fn unescape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut esc = false;
    for c in s.chars() {
        if esc || c != '\\' {
            out.push(c);
            esc = false;
        } else {
            esc = true;
        }
    }
    out
}

/// Expands the top-level `{a,b}` alternatives of a whole path pattern, so that a brace may
/// contain slashes (`/a/{b,c/d}`).
pub fn expand_braces(pattern: &str) -> Vec<String> {
    let chars: Vec<char> = pattern.chars().collect();
    let mut i = 0;
    let mut esc = false;
    while i < chars.len() {
        let c = chars[i];
        if esc {
            esc = false;
        } else if c == '\\' {
            esc = true;
        } else if c == '{'
            && let Some((alts, end)) = split_alternatives(&chars, i)
        {
            let prefix: String = chars[..i].iter().collect();
            let suffix: String = chars[end + 1..].iter().collect();
            let mut out = Vec::new();
            for alt in alts {
                for rest in expand_braces(&format!("{alt}{suffix}")) {
                    out.push(format!("{prefix}{rest}"));
                }
            }
            return out;
        }
        i += 1;
    }
    vec![pattern.to_string()]
}

/// For `{` at `open`, the alternatives (top level commas) and the index of the matching `}`.
fn split_alternatives(chars: &[char], open: usize) -> Option<(Vec<String>, usize)> {
    let mut depth = 0;
    let mut alts = Vec::new();
    let mut cur = String::new();
    let mut esc = false;
    for (j, &c) in chars.iter().enumerate().skip(open) {
        if esc {
            cur.push(c);
            esc = false;
            continue;
        }
        match c {
            '\\' => {
                cur.push(c);
                esc = true;
            }
            '{' => {
                if depth > 0 {
                    cur.push(c);
                }
                depth += 1;
            }
            '}' => {
                depth -= 1;
                if depth == 0 {
                    alts.push(cur);
                    return Some((alts, j));
                }
                cur.push(c);
            }
            ',' if depth == 1 => alts.push(std::mem::take(&mut cur)),
            c => cur.push(c),
        }
    }
    None
}

/// Matches one path component against a brace-free pattern.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    match_from(&p, &n)
}

fn match_from(p: &[char], n: &[char]) -> bool {
    let Some((&c, rest)) = p.split_first() else {
        return n.is_empty();
    };
    match c {
        '*' => (0..=n.len()).any(|k| match_from(rest, &n[k..])),
        '?' => !n.is_empty() && match_from(rest, &n[1..]),
        '\\' => match rest.split_first() {
            Some((&lit, rest2)) => n.first() == Some(&lit) && match_from(rest2, &n[1..]),
            None => n.first() == Some(&'\\') && n.len() == 1,
        },
        '[' => match class_end(rest) {
            Some(end) => {
                let Some(&ch) = n.first() else { return false };
                class_matches(&rest[..end], ch) && match_from(&rest[end + 1..], &n[1..])
            }
            None => n.first() == Some(&'[') && match_from(rest, &n[1..]),
        },
        '{' => {
            let Some((alts, end)) = split_alternatives(p, 0) else {
                return n.first() == Some(&'{') && match_from(rest, &n[1..]);
            };
            let tail: String = p[end + 1..].iter().collect();
            alts.iter().any(|a| {
                let full: Vec<char> = format!("{a}{tail}").chars().collect();
                match_from(&full, n)
            })
        }
        lit => n.first() == Some(&lit) && match_from(rest, &n[1..]),
    }
}

fn class_end(p: &[char]) -> Option<usize> {
    let mut i = 0;
    if p.first() == Some(&'^') || p.first() == Some(&'!') {
        i += 1;
    }
    if p.get(i) == Some(&']') {
        i += 1;
    }
    while i < p.len() {
        if p[i] == ']' {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn class_matches(class: &[char], ch: char) -> bool {
    let (negate, body) = match class.first() {
        Some('^') | Some('!') => (true, &class[1..]),
        _ => (false, class),
    };
    let mut found = false;
    let mut i = 0;
    while i < body.len() {
        let lo = body[i];
        if i + 2 < body.len() && body[i + 1] == '-' {
            if lo <= ch && ch <= body[i + 2] {
                found = true;
            }
            i += 3;
        } else {
            if lo == ch {
                found = true;
            }
            i += 1;
        }
    }
    found != negate
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_matching() {
        assert!(matches("*.txt", "a.txt"));
        assert!(!matches("*.txt", "a.txd"));
        assert!(matches("a?c", "abc"));
        assert!(!matches("a?c", "ac"));
        assert!(matches("[ab]x", "bx"));
        assert!(matches("[a-c]x", "cx"));
        assert!(!matches("[^a-c]x", "cx"));
        assert!(matches("{foo,ba*}", "bar"));
        assert!(matches("x{1,2}y", "x2y"));
        assert!(!matches("x{1,2}y", "x3y"));
        assert!(matches("a\\*", "a*"));
        assert!(!matches("a\\*", "ab"));
        assert!(matches("*", ""));
    }

    #[test]
    fn detection_and_braces() {
        assert!(has_glob("/a/*"));
        assert!(!has_glob("/a/\\*"));
        assert!(!has_glob("/a/b"));
        assert_eq!(unescape("a\\*b"), "a*b");
        assert_eq!(expand_braces("/a/{b,c/d}/e"), vec!["/a/b/e", "/a/c/d/e"]);
        assert_eq!(expand_braces("/{x,y}{1,2}").len(), 4);
        assert_eq!(expand_braces("/plain"), vec!["/plain"]);
    }
}
