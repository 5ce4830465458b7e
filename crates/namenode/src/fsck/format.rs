//! Java's text forms that Hadoop's operator output relies on: `Float.toString`,
//! `Date.toString` (UTC), and fsck's summary blocks (the Result classes' text).

use std::fmt::Write as _;

/// Java's `Float.toString`: "100.0", "33.333332", "5.0E-4".
pub fn java_float(v: f32) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        let s = format!("{v}");
        if s.contains('.') { s } else { format!("{s}.0") }
    } else {
        let s = format!("{v:e}");
        let (m, e) = s.split_once('e').unwrap_or((&s, "0"));
        let m = if m.contains('.') {
            m.to_string()
        } else {
            format!("{m}.0")
        };
        format!("{m}E{e}")
    }
}

/// Java's `Date.toString()` in UTC: "Wed Dec 02 15:01:16 UTC 2026".
pub fn java_date(epoch_ms: u64) -> String {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let secs = epoch_ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = rhdfs_conf::time::civil_from_days(days as i64);
    format!(
        "{} {} {:02} {:02}:{:02}:{:02} UTC {}",
        DAYS[(days % 7) as usize],
        MONTHS[(m - 1) as usize],
        d,
        rem / 3600,
        (rem % 3600) / 60,
        rem % 60,
        y
    )
}

/// Counters of one fsck result (Hadoop's NamenodeFsck.Result).
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct FsckResult {
    pub missing_ids: Vec<String>,
    pub missing_size: u64,
    pub corrupt_files: u64,
    pub corrupt_blocks: u64,
    pub corrupt_size: u64,
    pub excessive_replicas: u64,
    pub missing_replicas: u64,
    pub decommissioned_replicas: u64,
    pub decommissioning_replicas: u64,
    pub num_under_min_replicated_blocks: u64,
    pub num_over_replicated_blocks: u64,
    pub num_under_replicated_blocks: u64,
    pub num_mis_replicated_blocks: u64,
    pub num_min_replicated_blocks: u64,
    pub total_blocks: u64,
    pub num_expected_replicas: u64,
    pub total_open_files_blocks: u64,
    pub total_files: u64,
    pub total_open_files: u64,
    pub total_size: u64,
    pub total_open_files_size: u64,
    pub total_replicas: u64,
    pub num_blocks_queued_for_replication: u64,
}

fn pct(n: u64, total: u64) -> String {
    java_float((n * 100) as f32 / total as f32)
}

impl FsckResult {
    /// No missing and no corrupt blocks.
    pub fn is_healthy(&self) -> bool {
        self.missing_ids.is_empty() && self.corrupt_blocks == 0
    }

    pub fn add_missing(&mut self, id: String, size: u64) {
        self.missing_ids.push(id);
        self.missing_size += size;
    }

    pub fn add_corrupt(&mut self, size: u64) {
        self.corrupt_blocks += 1;
        self.corrupt_size += size;
    }

    fn replication_factor(&self) -> f32 {
        if self.total_blocks == 0 {
            0.0
        } else {
            self.total_replicas as f32 / self.total_blocks as f32
        }
    }

    fn head(&self, s: &mut String, blocks: &str, avg: &str, open: &str) {
        let _ = write!(s, " Total size:\t{} B", self.total_size);
        if self.total_open_files_size != 0 {
            let _ = write!(
                s,
                " (Total open files size: {} B)",
                self.total_open_files_size
            );
        }
        let _ = write!(s, "\n Total files:\t{}", self.total_files);
        if self.total_open_files != 0 {
            let _ = write!(
                s,
                " (Files currently being written: {})",
                self.total_open_files
            );
        }
        let _ = write!(s, "\n {blocks}:\t{}", self.total_blocks);
        if let Some(size) = self.total_size.checked_div(self.total_blocks) {
            let _ = write!(s, " ({avg} {size} B)");
        }
        if self.total_open_files_blocks != 0 {
            let _ = write!(s, " ({open}: {})", self.total_open_files_blocks);
        }
    }

    fn with_pct(&self, s: &mut String, label: &str, n: u64) {
        let _ = write!(s, "\n {label}{n}");
        if self.total_blocks > 0 {
            let _ = write!(s, " ({} %)", pct(n, self.total_blocks));
        }
    }

    /// The "Replicated Blocks:" section (ReplicationResult.toString).
    pub fn replicated_text(&self, replication: u16, min_replication: u16) -> String {
        let mut s = String::new();
        self.head(
            &mut s,
            "Total blocks (validated)",
            "avg. block size",
            "Total open file blocks (not validated)",
        );
        if self.corrupt_files > 0 || self.num_under_min_replicated_blocks > 0 {
            s.push_str("\n  ********************************");
            if self.num_under_min_replicated_blocks > 0 {
                let _ = write!(
                    s,
                    "\n  UNDER MIN REPL'D BLOCKS:\t{}",
                    self.num_under_min_replicated_blocks
                );
                if self.total_blocks > 0 {
                    let _ = write!(
                        s,
                        " ({} %)",
                        pct(self.num_under_min_replicated_blocks, self.total_blocks)
                    );
                }
                let _ = write!(s, "\n  MINIMAL BLOCK REPLICATION:\t{min_replication}");
            }
            if self.corrupt_files > 0 {
                let _ = write!(s, "\n  CORRUPT FILES:\t{}", self.corrupt_files);
                if self.missing_size > 0 {
                    let _ = write!(
                        s,
                        "\n  MISSING BLOCKS:\t{}\n  MISSING SIZE:\t\t{} B",
                        self.missing_ids.len(),
                        self.missing_size
                    );
                }
                if self.corrupt_blocks > 0 {
                    let _ = write!(
                        s,
                        "\n  CORRUPT BLOCKS: \t{}\n  CORRUPT SIZE:\t\t{} B",
                        self.corrupt_blocks, self.corrupt_size
                    );
                }
            }
            s.push_str("\n  ********************************");
        }
        self.with_pct(
            &mut s,
            "Minimally replicated blocks:\t",
            self.num_min_replicated_blocks,
        );
        self.with_pct(
            &mut s,
            "Over-replicated blocks:\t",
            self.num_over_replicated_blocks,
        );
        self.with_pct(
            &mut s,
            "Under-replicated blocks:\t",
            self.num_under_replicated_blocks,
        );
        self.with_pct(
            &mut s,
            "Mis-replicated blocks:\t\t",
            self.num_mis_replicated_blocks,
        );
        let _ = write!(
            s,
            "\n Default replication factor:\t{replication}\n Average block replication:\t{}\n Missing blocks:\t\t{}\n Corrupt blocks:\t\t{}\n Missing replicas:\t\t{}",
            java_float(self.replication_factor()),
            self.missing_ids.len(),
            self.corrupt_blocks,
            self.missing_replicas
        );
        self.tail(
            &mut s,
            "DecommissionedReplicas:\t",
            "DecommissioningReplicas:\t",
        );
        s
    }

    fn tail(&self, s: &mut String, decommissioned: &str, decommissioning: &str) {
        if self.total_replicas > 0 {
            let _ = write!(
                s,
                " ({} %)",
                java_float(
                    (self.missing_replicas * 100) as f32 / self.num_expected_replicas as f32
                )
            );
        }
        if self.decommissioned_replicas > 0 {
            let _ = write!(s, "\n {decommissioned}{}", self.decommissioned_replicas);
        }
        if self.decommissioning_replicas > 0 {
            let _ = write!(s, "\n {decommissioning}{}", self.decommissioning_replicas);
        }
        let _ = write!(
            s,
            "\n Blocks queued for replication:\t{}",
            self.num_blocks_queued_for_replication
        );
    }

    /// The "Erasure Coded Block Groups:" section (ErasureCodingResult.toString).
    pub fn erasure_coded_text(&self) -> String {
        let mut s = String::new();
        self.head(
            &mut s,
            "Total block groups (validated)",
            "avg. block group size",
            "Total open file block groups (not validated)",
        );
        if self.corrupt_files > 0 || self.num_under_min_replicated_blocks > 0 {
            s.push_str("\n  ********************************");
            if self.num_under_min_replicated_blocks > 0 {
                let _ = write!(
                    s,
                    "\n  UNRECOVERABLE BLOCK GROUPS:\t{}",
                    self.num_under_min_replicated_blocks
                );
            }
            if self.corrupt_files > 0 {
                let _ = write!(s, "\n  CORRUPT FILES:\t{}", self.corrupt_files);
            }
            s.push_str("\n  ********************************");
        }
        self.with_pct(
            &mut s,
            "Minimally erasure-coded block groups:\t",
            self.num_min_replicated_blocks,
        );
        self.with_pct(
            &mut s,
            "Over-erasure-coded block groups:\t",
            self.num_over_replicated_blocks,
        );
        self.with_pct(
            &mut s,
            "Under-erasure-coded block groups:\t",
            self.num_under_replicated_blocks,
        );
        self.with_pct(
            &mut s,
            "Unsatisfactory placement block groups:\t",
            self.num_mis_replicated_blocks,
        );
        let _ = write!(
            s,
            "\n Average block group size:\t{}\n Missing block groups:\t\t{}\n Corrupt block groups:\t\t{}\n Missing internal blocks:\t{}",
            java_float(self.replication_factor()),
            self.missing_ids.len(),
            self.corrupt_blocks,
            self.missing_replicas
        );
        self.tail(
            &mut s,
            "Decommissioned internal blocks:\t",
            "Decommissioning internal blocks:\t",
        );
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_floats() {
        assert_eq!(java_float(100.0), "100.0");
        assert_eq!(java_float(0.0), "0.0");
        assert_eq!(java_float(100.0 / 3.0), "33.333332");
        assert_eq!(java_float(200.0 / 3.0), "66.666664");
        assert_eq!(java_float(3.0), "3.0");
        assert_eq!(java_float(8.0 / 3.0), "2.6666667");
        assert_eq!(java_float(0.0005), "5.0E-4");
    }

    #[test]
    fn java_dates() {
        assert_eq!(java_date(0), "Thu Jan 01 00:00:00 UTC 1970");
        assert_eq!(java_date(1_796_223_676_000), "Wed Dec 02 15:01:16 UTC 2026");
        assert_eq!(java_date(951_782_400_000), "Tue Feb 29 00:00:00 UTC 2000");
    }

    #[test]
    fn empty_replicated_section() {
        let r = FsckResult::default();
        assert_eq!(
            r.replicated_text(3, 1),
            " Total size:\t0 B\n Total files:\t0\n Total blocks (validated):\t0\n Minimally replicated blocks:\t0\n Over-replicated blocks:\t0\n Under-replicated blocks:\t0\n Mis-replicated blocks:\t\t0\n Default replication factor:\t3\n Average block replication:\t0.0\n Missing blocks:\t\t0\n Corrupt blocks:\t\t0\n Missing replicas:\t\t0\n Blocks queued for replication:\t0"
        );
        assert_eq!(
            r.erasure_coded_text(),
            " Total size:\t0 B\n Total files:\t0\n Total block groups (validated):\t0\n Minimally erasure-coded block groups:\t0\n Over-erasure-coded block groups:\t0\n Under-erasure-coded block groups:\t0\n Unsatisfactory placement block groups:\t0\n Average block group size:\t0.0\n Missing block groups:\t\t0\n Corrupt block groups:\t\t0\n Missing internal blocks:\t0\n Blocks queued for replication:\t0"
        );
    }

    #[test]
    fn under_replicated_and_missing() {
        let r = FsckResult {
            total_size: 30,
            total_files: 3,
            total_blocks: 3,
            num_min_replicated_blocks: 2,
            num_under_replicated_blocks: 1,
            num_under_min_replicated_blocks: 1,
            corrupt_files: 1,
            missing_ids: vec!["x".into()],
            missing_size: 10,
            total_replicas: 5,
            num_expected_replicas: 9,
            missing_replicas: 1,
            ..FsckResult::default()
        };
        let t = r.replicated_text(3, 1);
        assert!(t.starts_with(" Total size:\t30 B\n Total files:\t3\n Total blocks (validated):\t3 (avg. block size 10 B)\n  ********************************\n  UNDER MIN REPL'D BLOCKS:\t1 (33.333332 %)\n  MINIMAL BLOCK REPLICATION:\t1\n  CORRUPT FILES:\t1\n  MISSING BLOCKS:\t1\n  MISSING SIZE:\t\t10 B\n  ********************************\n Minimally replicated blocks:\t2 (66.666664 %)"), "{t}");
        assert!(
            t.contains("\n Average block replication:\t1.6666666\n"),
            "{t}"
        );
        assert!(
            t.contains("\n Missing replicas:\t\t1 (11.111111 %)\n"),
            "{t}"
        );
    }
}
