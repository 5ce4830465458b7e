//! The Prometheus text exposition format (0.0.4), written so that `promtool check metrics`
//! finds nothing to say: every family has HELP and TYPE, its samples follow it together,
//! counters end in `_total` and nothing else does, histograms have cumulative `le` buckets
//! ending in `+Inf` equal to `_count`, label values are escaped.

use std::collections::HashSet;
use std::fmt::Write as _;

use crate::histogram::{BOUNDS, HistogramSnapshot};

/// Labels of one sample: `(name, value)` pairs.
pub type Labels = Vec<(&'static str, String)>;

/// A `/metrics` document being written.
#[derive(Debug, Default)]
pub struct Exposition {
    out: String,
    families: HashSet<String>,
}

fn escape(v: &str) -> String {
    let mut s = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            c => s.push(c),
        }
    }
    s
}

fn help_text(h: &str) -> String {
    h.replace('\\', "\\\\").replace('\n', "\\n")
}

/// A sample value: integers as integers, others with enough digits.
pub fn value(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            "+Inf".into()
        } else {
            "-Inf".into()
        }
    } else if v.fract() == 0.0 && v.abs() < 9.0e15 {
        format!("{}", v as i64)
    } else {
        format!("{v}")
    }
}

fn label_set(labels: &[(&str, String)], extra: Option<(&str, &str)>) -> String {
    let mut parts: Vec<String> = labels
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", escape(v)))
        .collect();
    if let Some((k, v)) = extra {
        parts.push(format!("{k}=\"{v}\""));
    }
    if parts.is_empty() {
        String::new()
    } else {
        format!("{{{}}}", parts.join(","))
    }
}

impl Exposition {
    pub fn new() -> Self {
        Self::default()
    }

    fn head(&mut self, name: &str, kind: &str, help: &str) -> bool {
        debug_assert_eq!(
            kind == "counter",
            name.ends_with("_total"),
            "{name}: only counters end in _total"
        );
        if !self.families.insert(name.to_string()) {
            debug_assert!(false, "metric family {name} written twice");
            return false;
        }
        let _ = writeln!(
            self.out,
            "# HELP {name} {}\n# TYPE {name} {kind}",
            help_text(help)
        );
        true
    }

    /// One unlabelled gauge.
    pub fn gauge(&mut self, name: &str, help: &str, v: f64) {
        self.gauges(name, help, [(Vec::new(), v)]);
    }

    /// One unlabelled counter (`name` ends in `_total`).
    pub fn counter(&mut self, name: &str, help: &str, v: f64) {
        self.counters(name, help, [(Vec::new(), v)]);
    }

    /// A gauge family with one sample per label set (nothing written without samples).
    pub fn gauges(
        &mut self,
        name: &str,
        help: &str,
        samples: impl IntoIterator<Item = (Labels, f64)>,
    ) {
        self.family(name, "gauge", help, samples);
    }

    /// A counter family (`name` ends in `_total`).
    pub fn counters(
        &mut self,
        name: &str,
        help: &str,
        samples: impl IntoIterator<Item = (Labels, f64)>,
    ) {
        self.family(name, "counter", help, samples);
    }

    fn family(
        &mut self,
        name: &str,
        kind: &str,
        help: &str,
        samples: impl IntoIterator<Item = (Labels, f64)>,
    ) {
        let samples: Vec<_> = samples.into_iter().collect();
        if samples.is_empty() || !self.head(name, kind, help) {
            return;
        }
        for (labels, v) in samples {
            let _ = writeln!(self.out, "{name}{} {}", label_set(&labels, None), value(v));
        }
    }

    /// A histogram family (`name` carries its unit, `_seconds`).
    pub fn histograms<'a>(
        &mut self,
        name: &str,
        help: &str,
        samples: impl IntoIterator<Item = (Labels, &'a HistogramSnapshot)>,
    ) {
        let samples: Vec<_> = samples.into_iter().collect();
        if samples.is_empty() || !self.head(name, "histogram", help) {
            return;
        }
        for (labels, h) in samples {
            for (b, c) in BOUNDS.iter().zip(&h.cumulative) {
                let le = value(*b);
                let le = if le.contains('.') {
                    le
                } else {
                    format!("{le}.0")
                };
                let _ = writeln!(
                    self.out,
                    "{name}_bucket{} {c}",
                    label_set(&labels, Some(("le", &le)))
                );
            }
            let _ = writeln!(
                self.out,
                "{name}_bucket{} {}",
                label_set(&labels, Some(("le", "+Inf"))),
                h.count
            );
            let ls = label_set(&labels, None);
            let _ = writeln!(self.out, "{name}_sum{ls} {}", h.sum.as_secs_f64());
            let _ = writeln!(self.out, "{name}_count{ls} {}", h.count);
        }
    }

    /// One unlabelled histogram.
    pub fn histogram(&mut self, name: &str, help: &str, h: &HistogramSnapshot) {
        self.histograms(name, help, [(Vec::new(), h)]);
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Histogram;
    use std::time::Duration;

    #[test]
    fn families_and_samples() {
        let mut e = Exposition::new();
        e.gauge("x_bytes", "Some \"bytes\".", 3.0);
        e.counters(
            "y_total",
            "Ys.",
            [(vec![("method", "a\"b".to_string())], 2.0)],
        );
        e.gauges("empty", "Nothing.", []);
        let h = Histogram::new();
        h.observe(Duration::from_millis(2));
        e.histogram("z_seconds", "Zs.", &h.snapshot());
        let t = e.finish();
        assert!(
            t.starts_with("# HELP x_bytes Some \"bytes\".\n# TYPE x_bytes gauge\nx_bytes 3\n"),
            "{t}"
        );
        assert!(t.contains("y_total{method=\"a\\\"b\"} 2\n"), "{t}");
        assert!(!t.contains("empty"));
        assert!(t.contains("z_seconds_bucket{le=\"0.0025\"} 1\n"), "{t}");
        assert!(t.contains("z_seconds_bucket{le=\"10.0\"} 1\n"), "{t}");
        assert!(
            t.contains("z_seconds_bucket{le=\"+Inf\"} 1\nz_seconds_sum 0.002\nz_seconds_count 1\n"),
            "{t}"
        );
    }

    #[test]
    fn values() {
        assert_eq!(value(1.0), "1");
        assert_eq!(value(0.5), "0.5");
        assert_eq!(value(f64::INFINITY), "+Inf");
    }
}
