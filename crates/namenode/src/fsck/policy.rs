//! `fsck -storagepolicies`: how the replicas of the checked blocks are spread over storage
//! types, matched against Hadoop's built-in block storage policies (the summary Hadoop's
//! StoragePolicySummary prints).
//!
//! rhdfs keeps no per-file storage policy, so every file has the default policy, HOT.

use std::collections::HashMap;
use std::fmt::Write as _;

/// Storage types in Hadoop's `StorageType` declaration order (fastest first), which is
/// the order they are sorted and printed in.
const TYPE_ORDER: [(i32, &str); 6] = [
    (4, "RAM_DISK"),
    (6, "NVDIMM"),
    (2, "SSD"),
    (1, "DISK"),
    (3, "ARCHIVE"),
    (5, "PROVIDED"),
];

/// Rank of a StorageTypeProto value in [`TYPE_ORDER`] (unknown values count as DISK).
fn rank(t: i32) -> usize {
    TYPE_ORDER.iter().position(|(v, _)| *v == t).unwrap_or(3)
}

/// Hadoop's default policy suite in policy-id order: (name, storage types by rank).
const POLICIES: [(&str, &[usize]); 8] = [
    ("PROVIDED", &[5, 3]),
    ("COLD", &[4]),
    ("WARM", &[3, 4]),
    ("HOT", &[3]),
    ("ONE_SSD", &[2, 3]),
    ("ALL_SSD", &[2]),
    ("ALL_NVDIMM", &[1]),
    ("LAZY_PERSIST", &[0, 3]),
];

/// The policy every file has here.
pub const DEFAULT_POLICY: &str = "HOT";

/// The first policy whose storage types describe `sorted` (replica types sorted by rank):
/// the policy's own types first, then its last type repeated for the remaining replicas.
fn matching_policy(sorted: &[usize]) -> Option<&'static str> {
    POLICIES.iter().find_map(|(name, types)| {
        let mut p = types.to_vec();
        p.sort_unstable();
        let last = *p.last()?;
        let fits = p.len() <= sorted.len()
            && sorted[..p.len()] == p[..]
            && sorted[p.len()..].iter().all(|t| *t == last);
        fits.then_some(*name)
    })
}

/// Block counts per (specified policy, replica storage types).
#[derive(Debug, Default, Clone)]
pub struct StoragePolicySummary {
    counts: HashMap<(&'static str, Vec<usize>), u64>,
    total: u64,
}

impl StoragePolicySummary {
    /// Counts one block whose located replicas have `types` (StorageTypeProto values).
    pub fn add(&mut self, types: &[i32], specified: &'static str) {
        let mut sorted: Vec<usize> = types.iter().map(|t| rank(*t)).collect();
        sorted.sort_unstable();
        *self.counts.entry((specified, sorted)).or_insert(0) += 1;
        self.total += 1;
    }

    fn descriptor(sorted: &[usize], actual: Option<&str>) -> String {
        let mut parts = Vec::new();
        for (r, (_, name)) in TYPE_ORDER.iter().enumerate() {
            let n = sorted.iter().filter(|t| **t == r).count();
            if n > 0 {
                parts.push(format!("{name}:{n}"));
            }
        }
        let mut s = parts.join(",");
        if let Some(a) = actual {
            let _ = write!(s, "({a})");
        }
        s
    }

    /// The section as Hadoop prints it (starts with a blank line, ends with a newline).
    pub fn text(&self) -> String {
        let mut rows: Vec<(&(&'static str, Vec<usize>), &u64)> = self.counts.iter().collect();
        // Most blocks first; ties in a fixed order.
        rows.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
        let mut ok = String::from(
            "\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\n",
        );
        let mut bad = String::new();
        for ((specified, sorted), n) in rows {
            let actual = matching_policy(sorted);
            let pct = format!("{:.4}%", *n as f64 * 100.0 / self.total as f64);
            let desc = Self::descriptor(sorted, actual);
            if actual == Some(*specified) {
                let _ = writeln!(ok, "{desc:<25} {n:>10}  {pct:>20}");
            } else {
                if bad.is_empty() {
                    bad.push_str(
                        "\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n",
                    );
                }
                let _ = writeln!(bad, "{desc:<35} {specified:<20} {n:>10}  {pct:>20}");
            }
        }
        if bad.is_empty() {
            bad.push_str("\nAll blocks satisfy specified storage policy.\n");
        }
        ok + &bad
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policies_match_as_hadoop() {
        let r = |ts: &[i32]| {
            let mut v: Vec<usize> = ts.iter().map(|t| rank(*t)).collect();
            v.sort_unstable();
            matching_policy(&v)
        };
        assert_eq!(r(&[1, 1, 1]), Some("HOT"));
        assert_eq!(r(&[1]), Some("HOT"));
        assert_eq!(r(&[2, 1, 1]), Some("ONE_SSD"));
        assert_eq!(r(&[3, 1]), Some("WARM"));
        assert_eq!(r(&[3, 3]), Some("COLD"));
        assert_eq!(r(&[2, 2]), Some("ALL_SSD"));
        assert_eq!(r(&[4, 1]), Some("LAZY_PERSIST"));
        assert_eq!(r(&[5, 1]), Some("PROVIDED"));
        // As Hadoop: the extra DISK replicas sort before PROVIDED, so nothing matches.
        assert_eq!(r(&[5, 1, 1]), None);
        assert_eq!(r(&[]), None);
        assert_eq!(r(&[2, 3]), None);
    }

    #[test]
    fn summary_text() {
        let mut s = StoragePolicySummary::default();
        for _ in 0..3 {
            s.add(&[1, 1], DEFAULT_POLICY);
        }
        s.add(&[1], DEFAULT_POLICY);
        assert_eq!(
            s.text(),
            "\nBlocks satisfying the specified storage policy:\n\
             Storage Policy                  # of blocks       % of blocks\n\
             DISK:2(HOT)                        3              75.0000%\n\
             DISK:1(HOT)                        1              25.0000%\n\
             \nAll blocks satisfy specified storage policy.\n"
        );
        // A block with no replica left matches no policy.
        s.add(&[], DEFAULT_POLICY);
        let t = s.text();
        assert!(t.contains(
            "\nBlocks NOT satisfying the specified storage policy:\nStorage Policy                  Specified Storage Policy      # of blocks       % of blocks\n                                    HOT                           1              20.0000%\n"
        ), "{t}");
        assert!(t.contains("DISK:2(HOT)                        3              60.0000%\n"));
        assert_eq!(
            StoragePolicySummary::default().text(),
            "\nBlocks satisfying the specified storage policy:\nStorage Policy                  # of blocks       % of blocks\n\nAll blocks satisfy specified storage policy.\n"
        );
    }
}
