//! Hadoop-style `/jmx`: beans named by JMX object names (`Hadoop:service=NameNode,name=X`)
//! with typed attributes, rendered as JMXJsonServlet renders them, and its two queries:
//! `?qry=<object name pattern>` (`*` and `?` wildcards in the domain and in values, `,*` for
//! "any further keys", default `*:*`) and `?get=<bean>::<attribute>` (one attribute; a
//! missing attribute answers 404 with `result: ERROR`, a `get` without `::` 400 with
//! "query format is not as expected.", a malformed name 400).

use std::fmt::Write as _;

use rhdfs_conf::json;

/// A bean attribute's value.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    Int(i64),
    Float(f64),
    Str(String),
    Bool(bool),
    /// A JSON array or object written as is (composite and tabular attributes).
    Json(String),
}

impl From<u64> for Val {
    fn from(v: u64) -> Self {
        Val::Int(i64::try_from(v).unwrap_or(i64::MAX))
    }
}
impl From<usize> for Val {
    fn from(v: usize) -> Self {
        Val::from(v as u64)
    }
}
impl From<i64> for Val {
    fn from(v: i64) -> Self {
        Val::Int(v)
    }
}
impl From<f64> for Val {
    fn from(v: f64) -> Self {
        Val::Float(v)
    }
}
impl From<bool> for Val {
    fn from(v: bool) -> Self {
        Val::Bool(v)
    }
}
impl From<&str> for Val {
    fn from(v: &str) -> Self {
        Val::Str(v.to_string())
    }
}
impl From<String> for Val {
    fn from(v: String) -> Self {
        Val::Str(v)
    }
}

impl Val {
    fn to_json(&self) -> String {
        match self {
            Val::Int(n) => n.to_string(),
            Val::Float(f) => json::number(*f),
            Val::Str(s) => json::string(s),
            Val::Bool(b) => b.to_string(),
            Val::Json(j) => j.clone(),
        }
    }
}

/// One bean: its object name, its `modelerType` and attributes in order.
#[derive(Debug, Clone, PartialEq)]
pub struct Bean {
    pub name: String,
    pub modeler_type: String,
    pub attrs: Vec<(String, Val)>,
}

impl Bean {
    pub fn new(name: impl Into<String>, modeler_type: impl Into<String>) -> Self {
        Bean {
            name: name.into(),
            modeler_type: modeler_type.into(),
            attrs: Vec::new(),
        }
    }

    /// Adds an attribute (builder style).
    pub fn with(mut self, key: impl Into<String>, v: impl Into<Val>) -> Self {
        self.attrs.push((key.into(), v.into()));
        self
    }

    /// Adds an attribute.
    pub fn push(&mut self, key: impl Into<String>, v: impl Into<Val>) {
        self.attrs.push((key.into(), v.into()));
    }

    pub fn get(&self, key: &str) -> Option<&Val> {
        self.attrs.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }

    fn head(&self, s: &mut String) {
        let _ = write!(
            s,
            "  {{\n    \"name\" : {},\n    \"modelerType\" : {}",
            json::string(&self.name),
            json::string(&self.modeler_type)
        );
    }

    fn render(&self) -> String {
        let mut s = String::new();
        self.head(&mut s);
        for (k, v) in &self.attrs {
            let _ = write!(s, ",\n    {} : {}", json::string(k), v.to_json());
        }
        s.push_str("\n  }");
        s
    }
}

/// A JMX object name or pattern: `domain:key=value,...` with an optional `*` entry.
#[derive(Debug, PartialEq)]
struct ObjectName {
    domain: String,
    props: Vec<(String, String)>,
    /// `,*`: beans may have keys beyond `props`.
    any_more: bool,
}

impl ObjectName {
    fn parse(s: &str) -> Option<ObjectName> {
        let (domain, rest) = s.split_once(':')?;
        if rest.is_empty() {
            return None;
        }
        let mut props = Vec::new();
        let mut any_more = false;
        for p in rest.split(',') {
            if p == "*" {
                if any_more {
                    return None;
                }
                any_more = true;
                continue;
            }
            let (k, v) = p.split_once('=')?;
            if k.is_empty() || v.is_empty() || props.iter().any(|(pk, _)| pk == k) {
                return None;
            }
            props.push((k.to_string(), v.to_string()));
        }
        Some(ObjectName {
            domain: domain.to_string(),
            props,
            any_more,
        })
    }

    /// Whether the bean name `name` (not a pattern) matches this pattern.
    fn matches(&self, name: &ObjectName) -> bool {
        if !glob(&self.domain, &name.domain) {
            return false;
        }
        if !self.any_more && self.props.len() != name.props.len() {
            return false;
        }
        self.props
            .iter()
            .all(|(k, pat)| name.props.iter().any(|(nk, nv)| nk == k && glob(pat, nv)))
    }
}

/// `*` matches any run of characters, `?` any one.
fn glob(pattern: &str, s: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), s.chars().collect());
    let (mut pi, mut ti) = (0, 0);
    let (mut star, mut mark) = (None, 0);
    while ti < t.len() {
        if pi < p.len() && (p[pi] == '?' || p[pi] == t[ti]) {
            pi += 1;
            ti += 1;
        } else if pi < p.len() && p[pi] == '*' {
            star = Some(pi);
            mark = ti;
            pi += 1;
        } else if let Some(sp) = star {
            pi = sp + 1;
            mark += 1;
            ti = mark;
        } else {
            return false;
        }
    }
    while pi < p.len() && p[pi] == '*' {
        pi += 1;
    }
    pi == p.len()
}

/// The answer to a `/jmx` request.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    pub status: u16,
    pub body: String,
}

/// The headers JMXJsonServlet sends with every answer.
pub const HEADERS: [(&str, &str); 2] = [
    ("Access-Control-Allow-Methods", "GET"),
    ("Access-Control-Allow-Origin", "*"),
];

/// The content type of a `/jmx` answer.
pub const CONTENT_TYPE: &str = "application/json; charset=utf8";

fn error(status: u16, message: &str) -> Answer {
    Answer {
        status,
        body: format!(
            "{{\n  \"result\" : \"ERROR\",\n  \"message\" : {}\n}}\n",
            json::string(message)
        ),
    }
}

fn malformed() -> Answer {
    Answer {
        status: 400,
        body: "{ }\n".into(),
    }
}

/// Answers `?qry=` / `?get=` (either may be absent) over `beans`.
pub fn answer(beans: &[Bean], qry: Option<&str>, get: Option<&str>) -> Answer {
    let named = |b: &Bean| ObjectName::parse(&b.name);
    if let Some(get) = get {
        let parts: Vec<&str> = get.split("::").collect();
        let [bean, attr] = parts[..] else {
            return error(400, "query format is not as expected.");
        };
        let Some(pattern) = ObjectName::parse(bean) else {
            return malformed();
        };
        let mut out = Vec::new();
        for b in beans
            .iter()
            .filter(|b| named(b).is_some_and(|n| pattern.matches(&n)))
        {
            let mut s = String::new();
            b.head(&mut s);
            match b.get(attr) {
                Some(v) => {
                    let _ = write!(s, ",\n    {} : {}\n  }}", json::string(attr), v.to_json());
                    out.push(s);
                }
                None => {
                    let _ = write!(
                        s,
                        ",\n    \"result\" : \"ERROR\",\n    \"message\" : {}\n  }}",
                        json::string(&format!("No attribute with name {attr} was found."))
                    );
                    out.push(s);
                    return Answer {
                        status: 404,
                        body: document(&out),
                    };
                }
            }
        }
        return Answer {
            status: 200,
            body: document(&out),
        };
    }
    let Some(pattern) = ObjectName::parse(qry.unwrap_or("*:*")) else {
        return malformed();
    };
    let out: Vec<String> = beans
        .iter()
        .filter(|b| named(b).is_some_and(|n| pattern.matches(&n)))
        .map(Bean::render)
        .collect();
    Answer {
        status: 200,
        body: document(&out),
    }
}

fn document(beans: &[String]) -> String {
    if beans.is_empty() {
        return "{\n  \"beans\" : [ ]\n}\n".into();
    }
    format!("{{\n  \"beans\" : [\n{}\n  ]\n}}\n", beans.join(",\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn beans() -> Vec<Bean> {
        vec![
            Bean::new("Hadoop:service=NameNode,name=FSNamesystem", "FSNamesystem")
                .with("BlocksTotal", 3u64)
                .with("tag.HAState", "active"),
            Bean::new(
                "Hadoop:service=NameNode,name=FSNamesystemState",
                "FSNamesystemState",
            )
            .with("FSState", "Operational"),
            Bean::new("rhdfs:service=NameNode,name=X", "X").with("Ratio", 0.5),
        ]
    }

    #[test]
    fn patterns() {
        let p = |s: &str| ObjectName::parse(s).expect("parses");
        let n = p("Hadoop:service=NameNode,name=FSNamesystem");
        assert!(p("*:*").matches(&n));
        assert!(p("Hadoop:*").matches(&n));
        assert!(p("Hadoop:name=FSNamesystem,*").matches(&n));
        assert!(p("Hadoop:name=FSNamesystem,service=NameNode").matches(&n));
        assert!(!p("Hadoop:name=FSNamesystem").matches(&n));
        assert!(p("Hadoop:service=NameNode,name=FSName*").matches(&n));
        assert!(p("H?doop:service=*,name=*system").matches(&n));
        assert!(!p("Hadoop:service=NameNode,name=FSNamesystemState").matches(&n));
        assert!(ObjectName::parse("Hadoop").is_none());
        assert!(ObjectName::parse("Hadoop:").is_none());
        assert!(ObjectName::parse("Hadoop:name").is_none());
    }

    #[test]
    fn qry_and_get() {
        let b = beans();
        let all = answer(&b, None, None);
        assert_eq!(all.status, 200);
        assert!(all.body.contains("\"Ratio\" : 0.5"), "{}", all.body);
        let one = answer(&b, Some("Hadoop:service=NameNode,name=FSNamesystem"), None);
        assert!(one.body.contains("\"BlocksTotal\" : 3"));
        assert!(!one.body.contains("FSState"));
        let none = answer(&b, Some("Hadoop:service=DataNode,*"), None);
        assert_eq!(none.body, "{\n  \"beans\" : [ ]\n}\n");
        assert_eq!(answer(&b, Some("nocolon"), None).status, 400);
        let got = answer(
            &b,
            None,
            Some("Hadoop:service=NameNode,name=FSNamesystem::tag.HAState"),
        );
        assert_eq!(got.status, 200);
        assert!(
            got.body.contains("\"tag.HAState\" : \"active\""),
            "{}",
            got.body
        );
        assert!(!got.body.contains("BlocksTotal"));
        let missing = answer(
            &b,
            None,
            Some("Hadoop:service=NameNode,name=FSNamesystem::Nope"),
        );
        assert_eq!(missing.status, 404);
        assert!(
            missing
                .body
                .contains("\"message\" : \"No attribute with name Nope was found.\"")
        );
        let bad = answer(&b, None, Some("Hadoop:service=NameNode,name=FSNamesystem"));
        assert_eq!(bad.status, 400);
        assert!(bad.body.contains("query format is not as expected."));
    }
}
