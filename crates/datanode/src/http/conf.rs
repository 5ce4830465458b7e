//! `/conf`: the DataNode's configuration as Hadoop's ConfServlet shows it (XML, or JSON with
//! `format=json`), values of sensitive keys replaced by `<redacted>` as Hadoop's
//! ConfigRedactor does (patterns from `hadoop.security.sensitive-config-keys`).

use rhdfs_conf::Configuration;

const SENSITIVE_KEY: &str = "hadoop.security.sensitive-config-keys";
/// Hadoop's default patterns (a key matching any, case-insensitively, is redacted).
const SENSITIVE_DEFAULT: &str = "secret$,password$,ssl.keystore.pass$,fs.s3.*[Ss]ecret.?[Kk]ey,fs.s3a.*.server-side-encryption.key,fs.azure.account.key.*,credential$,oauth.*secret,oauth.*password,oauth.*token,hadoop.security.sensitive-config-keys";
pub(crate) const REDACTED: &str = "<redacted>";

/// A tiny regex subset the patterns use: `.` any char, `X*` / `X?` repetition of the
/// previous item, `[..]` classes, `$` end; unanchored at the start (Java's `find`).
fn matches(pattern: &str, key: &str) -> bool {
    #[derive(Clone)]
    enum Item {
        Any,
        Lit(char),
        Class(Vec<char>),
    }
    let mut items: Vec<(Item, char)> = Vec::new(); // (item, quantifier: ' ', '*', '?')
    let mut anchored_end = false;
    let mut chars = pattern.chars().peekable();
    while let Some(c) = chars.next() {
        let item = match c {
            '.' => Item::Any,
            '$' if chars.peek().is_none() => {
                anchored_end = true;
                continue;
            }
            '[' => {
                let mut set = Vec::new();
                for d in chars.by_ref() {
                    if d == ']' {
                        break;
                    }
                    set.push(d.to_ascii_lowercase());
                }
                Item::Class(set)
            }
            '\\' => Item::Lit(chars.next().unwrap_or('\\').to_ascii_lowercase()),
            c => Item::Lit(c.to_ascii_lowercase()),
        };
        let q = match chars.peek() {
            Some('*') | Some('?') => chars.next().unwrap_or(' '),
            _ => ' ',
        };
        items.push((item, q));
    }
    let key: Vec<char> = key.to_ascii_lowercase().chars().collect();
    fn one(item: &Item, c: char) -> bool {
        match item {
            Item::Any => true,
            Item::Lit(l) => *l == c,
            Item::Class(set) => set.contains(&c),
        }
    }
    fn at(items: &[(Item, char)], key: &[char], end: bool) -> bool {
        let Some(((item, q), rest)) = items.split_first() else {
            return !end || key.is_empty();
        };
        match q {
            '*' => {
                let mut i = 0;
                loop {
                    if at(rest, &key[i..], end) {
                        return true;
                    }
                    if i < key.len() && one(item, key[i]) {
                        i += 1;
                    } else {
                        return false;
                    }
                }
            }
            '?' => {
                (!key.is_empty() && one(item, key[0]) && at(rest, &key[1..], end))
                    || at(rest, key, end)
            }
            _ => !key.is_empty() && one(item, key[0]) && at(rest, &key[1..], end),
        }
    }
    (0..=key.len()).any(|start| at(&items, &key[start..], anchored_end))
}

/// Whether `key`'s value must not be shown.
pub(crate) fn is_sensitive(conf: &Configuration, key: &str) -> bool {
    conf.get_trimmed(SENSITIVE_KEY)
        .unwrap_or(SENSITIVE_DEFAULT)
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .any(|p| matches(p, key))
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// The document and its content type; `format` is `xml` (default) or `json`.
pub(crate) fn render(conf: &Configuration, format: Option<&str>) -> (&'static str, String) {
    let entries: Vec<(String, String)> = conf
        .iter()
        .map(|(k, v)| {
            let v = if is_sensitive(conf, k) {
                REDACTED.to_string()
            } else {
                v.to_string()
            };
            (k.to_string(), v)
        })
        .collect();
    if format == Some("json") {
        let props: Vec<String> = entries
            .iter()
            .map(|(k, v)| {
                format!(
                    "{{\"key\":{},\"value\":{},\"isFinal\":false,\"resource\":\"rhdfs\"}}",
                    rhdfs_conf::json::string(k),
                    rhdfs_conf::json::string(v)
                )
            })
            .collect();
        return (
            "application/json; charset=utf-8",
            format!("{{\"properties\":[{}]}}\n", props.join(",")),
        );
    }
    let mut out = String::from(
        "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<configuration>\n",
    );
    for (k, v) in entries {
        out.push_str(&format!(
            "<property><name>{}</name><value>{}</value></property>\n",
            xml_escape(&k),
            xml_escape(&v)
        ));
    }
    out.push_str("</configuration>\n");
    ("text/xml; charset=utf-8", out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hadoops_patterns() {
        let c = Configuration::new();
        for k in [
            "fs.s3a.secret.key",
            "ssl.server.keystore.password",
            "my.credential",
            "fs.azure.account.key.x.blob.core.windows.net",
            "dfs.webhdfs.oauth2.access.token.provider.oauth.secret",
            "fs.s3n.awsSecretKey",
        ] {
            assert!(is_sensitive(&c, k), "{k}");
        }
        // As in Java: `.?` allows one character between "secret" and "key", not "Access".
        for k in [
            "dfs.replication",
            "dfs.secret.dir",
            "fs.defaultFS",
            "fs.s3.awsSecretAccessKey",
        ] {
            assert!(!is_sensitive(&c, k), "{k}");
        }
    }

    #[test]
    fn redacts_values() {
        let mut c = Configuration::new();
        c.set("dfs.replication", "2");
        c.set("x.password", "hunter2");
        let (_, xml) = render(&c, None);
        assert!(
            xml.contains("<name>dfs.replication</name><value>2</value>"),
            "{xml}"
        );
        assert!(!xml.contains("hunter2"));
        assert!(xml.contains("&lt;redacted&gt;"));
        let (_, json) = render(&c, Some("json"));
        assert!(json.contains("\"value\":\"<redacted>\""), "{json}");
    }
}
