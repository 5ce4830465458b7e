//! Hadoop-style configuration: XML resources, finals, `${var}` expansion, deprecated aliases
//! and typed getters.

use std::borrow::Cow;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use quick_xml::Reader;
use quick_xml::events::Event;

use crate::error::ConfError;
use crate::parse::{self, TimeUnit};

/// How many `${...}` substitutions one value may go through (as Hadoop).
const MAX_SUBST: usize = 20;

/// Old key names and the keys that replaced them. A value set under either name is stored
/// under the new one and read back under both.
const DEPRECATED_KEYS: &[(&str, &str)] = &[
    ("fs.default.name", "fs.defaultFS"),
    ("dfs.replication.min", "dfs.namenode.replication.min"),
    (
        "dfs.replication.interval",
        "dfs.namenode.redundancy.interval.seconds",
    ),
    (
        "dfs.namenode.replication.interval",
        "dfs.namenode.redundancy.interval.seconds",
    ),
    (
        "dfs.max-repl-streams",
        "dfs.namenode.replication.max-streams",
    ),
    (
        "dfs.replication.pending.timeout.sec",
        "dfs.namenode.reconstruction.pending.timeout-sec",
    ),
    (
        "dfs.namenode.replication.pending.timeout-sec",
        "dfs.namenode.reconstruction.pending.timeout-sec",
    ),
    (
        "dfs.replication.considerLoad",
        "dfs.namenode.redundancy.considerLoad",
    ),
    (
        "dfs.namenode.replication.considerLoad",
        "dfs.namenode.redundancy.considerLoad",
    ),
    (
        "dfs.namenode.replication.considerLoad.factor",
        "dfs.namenode.redundancy.considerLoad.factor",
    ),
    ("dfs.block.size", "dfs.blocksize"),
    ("io.bytes.per.checksum", "dfs.bytes-per-checksum"),
    ("dfs.write.packet.size", "dfs.client-write-packet-size"),
    ("dfs.socket.timeout", "dfs.client.socket-timeout"),
    ("dfs.read.prefetch.size", "dfs.client.read.prefetch.size"),
    ("dfs.name.dir", "dfs.namenode.name.dir"),
    ("dfs.name.edits.dir", "dfs.namenode.edits.dir"),
    ("dfs.data.dir", "dfs.datanode.data.dir"),
    ("dfs.permissions", "dfs.permissions.enabled"),
    (
        "dfs.permissions.supergroup",
        "dfs.permissions.superusergroup",
    ),
    ("dfs.umaskmode", "fs.permissions.umask-mode"),
    (
        "dfs.safemode.threshold.pct",
        "dfs.namenode.safemode.threshold-pct",
    ),
    ("dfs.safemode.extension", "dfs.namenode.safemode.extension"),
    (
        "dfs.safemode.min.datanodes",
        "dfs.namenode.safemode.min.datanodes",
    ),
    ("dfs.http.address", "dfs.namenode.http-address"),
    ("dfs.https.address", "dfs.namenode.https-address"),
    (
        "dfs.secondary.http.address",
        "dfs.namenode.secondary.http-address",
    ),
    ("dfs.max.objects", "dfs.namenode.max.objects"),
    (
        "dfs.access.time.precision",
        "dfs.namenode.accesstime.precision",
    ),
    (
        "dfs.datanode.max.xcievers",
        "dfs.datanode.max.transfer.threads",
    ),
    (
        "dfs.balance.bandwidthPerSec",
        "dfs.datanode.balance.bandwidthPerSec",
    ),
    (
        "heartbeat.recheck.interval",
        "dfs.namenode.heartbeat.recheck-interval",
    ),
    ("slave.host.name", "dfs.datanode.hostname"),
    ("fs.checkpoint.period", "dfs.namenode.checkpoint.period"),
    ("fs.checkpoint.dir", "dfs.namenode.checkpoint.dir"),
    (
        "fs.checkpoint.edits.dir",
        "dfs.namenode.checkpoint.edits.dir",
    ),
    ("topology.script.file.name", "net.topology.script.file.name"),
    (
        "topology.node.switch.mapping.impl",
        "net.topology.node.switch.mapping.impl",
    ),
    ("dfs.df.interval", "fs.df.interval"),
];

/// The key that replaced `key`, if `key` is a deprecated name.
pub fn deprecated_key_target(key: &str) -> Option<&'static str> {
    DEPRECATED_KEYS
        .iter()
        .find(|(old, _)| *old == key)
        .map(|(_, new)| *new)
}

fn canonical(key: &str) -> &str {
    deprecated_key_target(key).unwrap_or(key)
}

#[derive(Clone, Debug)]
struct Entry {
    raw: String,
    source: String,
    /// `raw` with `${...}` expanded; filled on first read, cleared by any mutation.
    expanded: OnceLock<String>,
}

/// A set of Hadoop configuration properties.
///
/// Later resources override earlier ones unless the earlier one marked the key `<final>`;
/// [`Configuration::set`] always overrides. Values are expanded (`${key}`, `${env.VAR}`,
/// `${env.VAR:-default}`, `${env.VAR-default}`, `${user.name}`) when read.
#[derive(Clone, Debug, Default)]
pub struct Configuration {
    props: BTreeMap<String, Entry>,
    finals: BTreeSet<String>,
}

/// Iterator over `(key, raw value)` pairs of set keys, in key order.
pub struct Iter<'a> {
    inner: std::collections::btree_map::Iter<'a, String, Entry>,
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a str, &'a str);
    fn next(&mut self) -> Option<Self::Item> {
        self.inner.next().map(|(k, e)| (k.as_str(), e.raw.as_str()))
    }
}

impl<'a> IntoIterator for &'a Configuration {
    type Item = (&'a str, &'a str);
    type IntoIter = Iter<'a>;
    fn into_iter(self) -> Iter<'a> {
        self.iter()
    }
}

impl Configuration {
    /// An empty configuration (no resources; every getter returns its default).
    pub fn new() -> Self {
        Self::default()
    }

    /// Loads `core-site.xml` then `hdfs-site.xml` from `dir` (each only if present).
    pub fn load_dir(dir: impl AsRef<Path>) -> Result<Self, ConfError> {
        let mut conf = Self::new();
        conf.add_dir(dir)?;
        Ok(conf)
    }

    /// Adds `core-site.xml` then `hdfs-site.xml` from `dir` (each only if present).
    pub fn add_dir(&mut self, dir: impl AsRef<Path>) -> Result<(), ConfError> {
        let dir = dir.as_ref();
        if !dir.is_dir() {
            return Err(ConfError::Io {
                path: dir.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "configuration directory not found",
                ),
            });
        }
        for name in ["core-site.xml", "hdfs-site.xml"] {
            let p = dir.join(name);
            if p.is_file() {
                self.add_resource(&p)?;
            }
        }
        Ok(())
    }

    /// The configuration in `$HADOOP_CONF_DIR` if that is set (and non-empty), else empty.
    pub fn from_env() -> Result<Self, ConfError> {
        match std::env::var_os("HADOOP_CONF_DIR") {
            Some(d) if !d.is_empty() => Self::load_dir(PathBuf::from(d)),
            _ => Ok(Self::new()),
        }
    }

    /// Adds one XML resource file; its properties override earlier non-final ones.
    pub fn add_resource(&mut self, path: impl AsRef<Path>) -> Result<(), ConfError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| ConfError::Io {
            path: path.to_path_buf(),
            source,
        })?;
        self.add_xml_str(&text, &path.display().to_string())
    }

    /// Adds the properties of an XML document given as text; `source` names it in errors.
    pub fn add_xml_str(&mut self, xml: &str, source: &str) -> Result<(), ConfError> {
        let props = parse_xml(xml, source)?;
        for p in props {
            let key = canonical(&p.name).to_string();
            if self.finals.contains(&key) {
                if p.value.as_deref() != self.get_raw(&key) {
                    tracing::warn!("{source}: attempt to override final parameter {key}; ignoring");
                }
                continue;
            }
            if let Some(v) = p.value {
                self.insert(key.clone(), v, source.to_string());
            }
            if p.is_final {
                self.finals.insert(key);
            }
        }
        Ok(())
    }

    fn insert(&mut self, key: String, value: String, source: String) {
        for e in self.props.values_mut() {
            e.expanded = OnceLock::new();
        }
        self.props.insert(
            key,
            Entry {
                raw: value,
                source,
                expanded: OnceLock::new(),
            },
        );
    }

    /// Sets `key` (a deprecated name sets its replacement). Overrides even final keys.
    pub fn set(&mut self, key: &str, value: impl Into<String>) {
        let key = canonical(key.trim()).to_string();
        self.insert(key, value.into(), "programmatically".to_string());
    }

    /// Sets `key` only if it has no value yet.
    pub fn set_if_unset(&mut self, key: &str, value: impl Into<String>) {
        if !self.contains(key) {
            self.set(key, value);
        }
    }

    /// Removes `key` (and its final mark).
    pub fn unset(&mut self, key: &str) {
        let key = canonical(key.trim());
        self.finals.remove(key);
        if self.props.remove(key).is_some() {
            for e in self.props.values_mut() {
                e.expanded = OnceLock::new();
            }
        }
    }

    /// Applies one `-D` definition, `key=value` (value may be empty or contain `=`).
    pub fn apply_define(&mut self, def: &str) -> Result<(), ConfError> {
        match def.split_once('=') {
            Some((k, v)) if !k.trim().is_empty() => {
                self.set(k.trim(), v);
                Ok(())
            }
            _ => Err(ConfError::InvalidDefine(def.to_string())),
        }
    }

    /// Whether `key` (or what it is a deprecated name of) has a value.
    pub fn contains(&self, key: &str) -> bool {
        self.props.contains_key(canonical(key.trim()))
    }

    /// Whether `key` was marked final by a resource.
    pub fn is_final(&self, key: &str) -> bool {
        self.finals.contains(canonical(key.trim()))
    }

    /// The value as written, without `${...}` expansion.
    pub fn get_raw(&self, key: &str) -> Option<&str> {
        self.props
            .get(canonical(key.trim()))
            .map(|e| e.raw.as_str())
    }

    /// Which resource (file path or "programmatically") set `key`.
    pub fn source_of(&self, key: &str) -> Option<&str> {
        self.props
            .get(canonical(key.trim()))
            .map(|e| e.source.as_str())
    }

    /// The value of `key` with `${...}` expanded (untrimmed), or `None` when unset.
    /// If expansion runs into a reference cycle the partly expanded value is returned and a
    /// warning logged; [`Configuration::try_get`] reports that as an error instead.
    pub fn get(&self, key: &str) -> Option<&str> {
        let e = self.props.get(canonical(key.trim()))?;
        Some(e.expanded.get_or_init(|| match self.expand(&e.raw) {
            Ok(v) => v,
            Err(err) => {
                tracing::warn!("configuration key {key}: {err}");
                e.raw.clone()
            }
        }))
    }

    /// Like [`Configuration::get`], but a substitution cycle is an error.
    pub fn try_get(&self, key: &str) -> Result<Option<String>, ConfError> {
        match self.get_raw(key) {
            None => Ok(None),
            Some(raw) => self.expand(raw).map(Some),
        }
    }

    /// The expanded value of `key`, or `default` (itself expanded) when unset.
    pub fn get_str(&self, key: &str, default: &str) -> String {
        match self.get(key) {
            Some(v) => v.to_string(),
            None => self.expand(default).unwrap_or_else(|_| default.to_string()),
        }
    }

    /// The expanded, trimmed value; `None` when unset or empty.
    pub fn get_trimmed(&self, key: &str) -> Option<&str> {
        self.get(key).map(str::trim).filter(|v| !v.is_empty())
    }

    fn typed<T>(
        &self,
        key: &str,
        default: T,
        f: impl FnOnce(&str) -> Result<T, String>,
    ) -> Result<T, ConfError> {
        match self.get_trimmed(key) {
            None => Ok(default),
            Some(v) => f(v).map_err(|reason| ConfError::invalid(key, v, reason)),
        }
    }

    /// A signed 64-bit integer (decimal, or hex with `0x`). Unset or empty → `default`.
    pub fn get_i64(&self, key: &str, default: i64) -> Result<i64, ConfError> {
        self.typed(key, default, parse::parse_i64)
    }

    /// A non-negative 64-bit integer.
    pub fn get_u64(&self, key: &str, default: u64) -> Result<u64, ConfError> {
        self.typed(key, default, |v| {
            let n = parse::parse_i64(v)?;
            u64::try_from(n).map_err(|_| "must not be negative".to_string())
        })
    }

    /// A signed 32-bit integer.
    pub fn get_i32(&self, key: &str, default: i32) -> Result<i32, ConfError> {
        self.typed(key, default, |v| {
            let n = parse::parse_i64(v)?;
            i32::try_from(n).map_err(|_| "out of range for a 32-bit integer".to_string())
        })
    }

    /// A non-negative 32-bit integer.
    pub fn get_u32(&self, key: &str, default: u32) -> Result<u32, ConfError> {
        self.typed(key, default, |v| {
            let n = parse::parse_i64(v)?;
            u32::try_from(n)
                .map_err(|_| "out of range for a non-negative 32-bit integer".to_string())
        })
    }

    /// A non-negative integer as `usize`.
    pub fn get_usize(&self, key: &str, default: usize) -> Result<usize, ConfError> {
        self.typed(key, default, |v| {
            let n = parse::parse_i64(v)?;
            usize::try_from(n).map_err(|_| "must not be negative".to_string())
        })
    }

    /// A floating-point number (a trailing `f`/`d` is accepted).
    pub fn get_f64(&self, key: &str, default: f64) -> Result<f64, ConfError> {
        self.typed(key, default, parse::parse_f64)
    }

    /// A boolean, `true`/`false` in any case.
    pub fn get_bool(&self, key: &str, default: bool) -> Result<bool, ConfError> {
        self.typed(key, default, parse::parse_bool)
    }

    /// A time duration: suffixes `ns us ms s m h d`; a bare number is in `unit`.
    pub fn get_duration(
        &self,
        key: &str,
        default: Duration,
        unit: TimeUnit,
    ) -> Result<Duration, ConfError> {
        self.typed(key, default, |v| parse::parse_duration(v, unit))
    }

    /// A byte count: binary prefixes `k m g t p e` in any case (`64m` = 64 MiB).
    pub fn get_size(&self, key: &str, default: u64) -> Result<u64, ConfError> {
        self.typed(key, default, parse::parse_size)
    }

    /// Comma-separated values, each trimmed, empty ones dropped. Unset → empty.
    pub fn get_list(&self, key: &str) -> Vec<String> {
        self.get(key)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|s| !s.is_empty())
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// `(key, raw value)` for every set key, in key order.
    pub fn iter(&self) -> Iter<'_> {
        Iter {
            inner: self.props.iter(),
        }
    }

    /// Number of set keys.
    pub fn len(&self) -> usize {
        self.props.len()
    }

    /// Whether no key is set.
    pub fn is_empty(&self) -> bool {
        self.props.is_empty()
    }

    /// Copies every key of `other` into `self` (overriding).
    pub fn merge(&mut self, other: &Configuration) {
        for (k, e) in &other.props {
            self.insert(k.clone(), e.raw.clone(), e.source.clone());
        }
        self.finals.extend(other.finals.iter().cloned());
    }

    /// The configuration as a Hadoop XML document (raw values, finals marked).
    pub fn to_xml_string(&self) -> String {
        let mut out = String::from(
            "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n<configuration>\n",
        );
        for (k, e) in &self.props {
            let _ = write!(
                out,
                "<property>\n  <name>{}</name>\n  <value>{}</value>\n",
                escape_xml(k),
                escape_xml(&e.raw)
            );
            if self.finals.contains(k) {
                out.push_str("  <final>true</final>\n");
            }
            let _ = writeln!(
                out,
                "  <source>{}</source>\n</property>",
                escape_xml(&e.source)
            );
        }
        out.push_str("</configuration>\n");
        out
    }

    /// Writes [`Configuration::to_xml_string`] to `path`.
    pub fn write_xml(&self, path: impl AsRef<Path>) -> Result<(), ConfError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_xml_string()).map_err(|source| ConfError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Expands `${...}` references in `expr` the way Hadoop does: at most [`MAX_SUBST`]
    /// substitutions; an unresolvable reference stops expansion and is left as written; a
    /// value that refers to itself is left unexpanded.
    pub fn expand(&self, expr: &str) -> Result<String, ConfError> {
        let mut eval = expr.to_string();
        for _ in 0..MAX_SUBST {
            let Some((start, end)) = find_var(&eval) else {
                return Ok(eval);
            };
            let var = &eval[start + 2..end - 1];
            let Some(val) = self.lookup_var(var) else {
                return Ok(eval);
            };
            if val.contains(&eval[start..end]) {
                return Ok(eval);
            }
            eval = format!("{}{}{}", &eval[..start], val, &eval[end..]);
        }
        if find_var(&eval).is_none() {
            return Ok(eval);
        }
        Err(ConfError::SubstitutionDepth {
            depth: MAX_SUBST,
            expr: expr.to_string(),
        })
    }

    fn lookup_var(&self, var: &str) -> Option<Cow<'_, str>> {
        if let Some(name) = var.strip_prefix("env.").filter(|n| !n.is_empty()) {
            if let Some(v) = env_lookup(name) {
                return Some(Cow::Owned(v));
            }
        } else if let Some(v) = system_property(var) {
            return Some(Cow::Owned(v));
        }
        self.get_raw(var).map(Cow::Borrowed)
    }
}

/// `${env.NAME}`, `${env.NAME:-default}` (default when unset or empty),
/// `${env.NAME-default}` (default when unset).
fn env_lookup(spec: &str) -> Option<String> {
    let bytes = spec.as_bytes();
    for (i, &c) in bytes.iter().enumerate() {
        if c == b':' && i + 1 < bytes.len() && bytes[i + 1] == b'-' {
            return match std::env::var(&spec[..i]) {
                Ok(v) if !v.is_empty() => Some(v),
                _ => Some(spec[i + 2..].to_string()),
            };
        } else if c == b'-' {
            return Some(std::env::var(&spec[..i]).unwrap_or_else(|_| spec[i + 1..].to_string()));
        }
    }
    std::env::var(spec).ok()
}

/// The few Java system properties Hadoop configurations commonly refer to.
fn system_property(name: &str) -> Option<String> {
    match name {
        "user.name" => Some(crate::user::current_user()),
        "user.home" => std::env::var("HOME").ok(),
        "user.dir" => std::env::current_dir()
            .ok()
            .map(|p| p.display().to_string()),
        "java.io.tmpdir" => Some(std::env::temp_dir().display().to_string()),
        _ => None,
    }
}

/// The byte range of the first `${name}` whose name has no `}`, `$` or space.
fn find_var(s: &str) -> Option<(usize, usize)> {
    let mut from = 0;
    while let Some(off) = s[from..].find("${") {
        let start = from + off;
        let rest = &s[start + 2..];
        let name_len = rest.find(['}', '$', ' ']).unwrap_or(rest.len());
        if name_len > 0 && rest[name_len..].starts_with('}') {
            return Some((start, start + 2 + name_len + 1));
        }
        from = start + 2;
    }
    None
}

fn escape_xml(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if (c as u32) < 0x20 => {
                // Not representable in XML 1.0; drop rather than emit an unreadable file.
            }
            c => out.push(c),
        }
    }
    out
}

struct RawProperty {
    name: String,
    value: Option<String>,
    is_final: bool,
}

#[derive(Clone, Copy, PartialEq)]
enum Field {
    None,
    Name,
    Value,
    Final,
}

fn xml_err(source: &str, message: impl std::fmt::Display) -> ConfError {
    ConfError::Xml {
        source_name: source.to_string(),
        message: message.to_string(),
    }
}

/// Parses `<configuration><property><name/><value/><final/></property>...`. Attributes
/// `name`, `value`, `final` on `<property>` are accepted too; other elements are ignored.
fn parse_xml(xml: &str, source: &str) -> Result<Vec<RawProperty>, ConfError> {
    let mut reader = Reader::from_str(xml);
    reader.config_mut().check_end_names = true;
    let mut out = Vec::new();
    let mut depth = 0usize;
    let mut saw_root = false;
    let mut cur: Option<PropBuilder> = None;
    let mut field = Field::None;
    let mut text = String::new();

    loop {
        let pos = reader.buffer_position();
        let ev = reader
            .read_event()
            .map_err(|e| xml_err(source, format!("near byte {pos}: {e}")))?;
        match ev {
            Event::Start(e) => {
                let tag = utf8(e.local_name().as_ref(), source)?;
                if depth == 0 {
                    saw_root = true;
                    if tag != "configuration" {
                        tracing::warn!(
                            "{source}: top-level element is <{tag}>, not <configuration>"
                        );
                    }
                }
                depth += 1;
                if tag == "property" && cur.is_none() {
                    cur = Some(PropBuilder::from_attributes(&e, source)?);
                    field = Field::None;
                } else if cur.is_some() && field == Field::None {
                    field = match tag.as_str() {
                        "name" => Field::Name,
                        "value" => Field::Value,
                        "final" => Field::Final,
                        _ => Field::None,
                    };
                    text.clear();
                }
            }
            Event::Empty(e) => {
                let tag = utf8(e.local_name().as_ref(), source)?;
                if depth == 0 {
                    saw_root = true;
                }
                if tag == "property" && cur.is_none() {
                    let p = PropBuilder::from_attributes(&e, source)?;
                    if let Some(p) = p.finish() {
                        out.push(p);
                    }
                } else if let Some(c) = cur.as_mut()
                    && tag == "value"
                    && field == Field::None
                {
                    c.value = Some(String::new());
                }
            }
            Event::End(e) => {
                depth = depth.saturating_sub(1);
                let tag = utf8(e.local_name().as_ref(), source)?;
                let closes_field = matches!(
                    (field, tag.as_str()),
                    (Field::Name, "name") | (Field::Value, "value") | (Field::Final, "final")
                );
                if closes_field {
                    if let Some(c) = cur.as_mut() {
                        let t = std::mem::take(&mut text);
                        match field {
                            Field::Name => c.name = t.trim().to_string(),
                            Field::Value => c.value = Some(t),
                            Field::Final => c.is_final = t.trim() == "true",
                            Field::None => {}
                        }
                    }
                    field = Field::None;
                } else if tag == "property"
                    && field == Field::None
                    && let Some(p) = cur.take().and_then(PropBuilder::finish)
                {
                    out.push(p);
                }
            }
            Event::Text(t) if field != Field::None => {
                let s = t.unescape().map_err(|err| xml_err(source, err))?;
                text.push_str(&s);
            }
            Event::CData(t) if field != Field::None => {
                text.push_str(&utf8(t.as_ref(), source)?);
            }
            Event::Eof => break,
            _ => {}
        }
    }
    if !saw_root {
        return Err(xml_err(source, "no root element"));
    }
    if depth != 0 {
        return Err(xml_err(
            source,
            "unexpected end of document (unclosed element)",
        ));
    }
    Ok(out)
}

fn utf8(b: &[u8], source: &str) -> Result<String, ConfError> {
    std::str::from_utf8(b)
        .map(str::to_string)
        .map_err(|e| xml_err(source, e))
}

struct PropBuilder {
    name: String,
    value: Option<String>,
    is_final: bool,
}

impl PropBuilder {
    fn from_attributes(
        e: &quick_xml::events::BytesStart<'_>,
        source: &str,
    ) -> Result<Self, ConfError> {
        let mut p = PropBuilder {
            name: String::new(),
            value: None,
            is_final: false,
        };
        for a in e.attributes() {
            let a = a.map_err(|err| xml_err(source, err))?;
            let v = a
                .unescape_value()
                .map_err(|err| xml_err(source, err))?
                .into_owned();
            match a.key.local_name().as_ref() {
                b"name" => p.name = v.trim().to_string(),
                b"value" => p.value = Some(v),
                b"final" => p.is_final = v.trim() == "true",
                _ => {}
            }
        }
        Ok(p)
    }

    fn finish(self) -> Option<RawProperty> {
        if self.name.is_empty() {
            return None;
        }
        Some(RawProperty {
            name: self.name,
            value: self.value,
            is_final: self.is_final,
        })
    }
}
