//! FsShell's output formats: human-readable sizes, `-ls` lines, `-stat` formats and the
//! column tables of `-du` and `-df`.

use rhdfs_client::{FileStatus, permission_string, time};

/// Hadoop's TraditionalBinaryPrefix rendering with one decimal: `12`, `2.9 K`, `1 M`, `100 G`.
pub fn human(n: u64) -> String {
    const UNITS: [&str; 6] = ["K", "M", "G", "T", "P", "E"];
    if n < 1024 {
        return n.to_string();
    }
    let mut i = 0;
    while i + 1 < UNITS.len() && n >= 1u64 << (10 * (i + 2)) {
        i += 1;
    }
    let shift = 10 * (i + 1);
    if n & ((1u64 << shift) - 1) == 0 {
        return format!("{} {}", n >> shift, UNITS[i]);
    }
    let mut s = format!("{:.1}", n as f64 / (1u64 << shift) as f64);
    if s.starts_with("1024") && i + 1 < UNITS.len() {
        i += 1;
        s = format!("{:.1}", n as f64 / (1u64 << (10 * (i + 1))) as f64);
    }
    format!("{s} {}", UNITS[i])
}

/// A size either raw or human-readable.
pub fn size(n: u64, human_readable: bool) -> String {
    if human_readable {
        human(n)
    } else {
        n.to_string()
    }
}

/// Column widths for a batch of `-ls` lines.
#[derive(Debug, Clone, Copy)]
pub struct LsWidths {
    repl: usize,
    owner: usize,
    group: usize,
    len: usize,
}

impl LsWidths {
    /// Column by column, the wider of two.
    pub fn max(&self, o: &LsWidths) -> LsWidths {
        LsWidths {
            repl: self.repl.max(o.repl),
            owner: self.owner.max(o.owner),
            group: self.group.max(o.group),
            len: self.len.max(o.len),
        }
    }

    pub fn of(items: &[FileStatus], human_readable: bool) -> Self {
        let mut w = LsWidths {
            repl: 3,
            owner: 0,
            group: 0,
            len: 10,
        };
        for s in items {
            w.repl = w.repl.max(repl_str(s).len());
            w.owner = w.owner.max(s.owner.len());
            w.group = w.group.max(s.group.len());
            w.len = w.len.max(size(s.length, human_readable).len());
        }
        w
    }
}

fn repl_str(s: &FileStatus) -> String {
    if s.is_dir {
        "-".to_string()
    } else {
        s.replication.to_string()
    }
}

/// One `-ls` line for `s` shown as `shown`.
pub fn ls_line(s: &FileStatus, shown: &str, w: &LsWidths, human_readable: bool) -> String {
    let kind = if s.is_dir {
        'd'
    } else if s.is_symlink {
        'l'
    } else {
        '-'
    };
    let acl = if s.has_acl { '+' } else { ' ' };
    let owner = if w.owner > 0 {
        format!("{:<width$} ", s.owner, width = w.owner)
    } else {
        s.owner.clone()
    };
    let group = if w.group > 0 {
        format!("{:<width$} ", s.group, width = w.group)
    } else {
        s.group.clone()
    };
    format!(
        "{kind}{}{acl}{:>rw$} {owner}{group}{:>lw$} {} {shown}",
        permission_string(s.permission),
        repl_str(s),
        size(s.length, human_readable),
        time::format_minutes(s.modification_time),
        rw = w.repl,
        lw = w.len,
    )
}

/// `-stat FORMAT` for one status.
pub fn stat(fmt: &str, s: &FileStatus) -> String {
    let mut out = String::new();
    let mut chars = fmt.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('a') => out.push_str(&format!("{:o}", s.permission & 0o1777)),
            Some('A') => out.push_str(&permission_string(s.permission)),
            Some('b') => out.push_str(&s.length.to_string()),
            Some('F') => out.push_str(if s.is_dir {
                "directory"
            } else if s.is_symlink {
                "symlink"
            } else {
                "regular file"
            }),
            Some('g') => out.push_str(&s.group),
            Some('n') => out.push_str(s.name()),
            Some('o') => out.push_str(&s.block_size.to_string()),
            Some('r') => out.push_str(&s.replication.to_string()),
            Some('u') => out.push_str(&s.owner),
            Some('x') => out.push_str(&time::format_seconds(s.access_time)),
            Some('X') => out.push_str(&s.access_time.to_string()),
            Some('y') => out.push_str(&time::format_seconds(s.modification_time)),
            Some('Y') => out.push_str(&s.modification_time.to_string()),
            Some('%') => out.push('%'),
            Some(other) => {
                out.push('%');
                out.push(other);
            }
            None => out.push('%'),
        }
    }
    out
}

/// Column alignment in a [`table`].
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// Rows joined with two spaces, each column padded to its widest cell; the last column is
/// not padded when left-aligned.
pub fn table(rows: &[Vec<String>], align: &[Align]) -> Vec<String> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let mut widths = vec![0; cols];
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            widths[i] = widths[i].max(c.chars().count());
        }
    }
    rows.iter()
        .map(|r| {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate() {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = widths[i] - c.chars().count();
                let right = align.get(i).copied().unwrap_or(Align::Left) == Align::Right;
                if right {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    if i + 1 < r.len() {
                        line.push_str(&" ".repeat(pad));
                    }
                }
            }
            line
        })
        .collect()
}

/// `-count` columns (with `-q` the four quota columns first).
pub fn count_line(
    summary: &rhdfs_client::ContentSummary,
    quotas: bool,
    human_readable: bool,
    shown: &str,
) -> String {
    let mut out = String::new();
    if quotas {
        out.push_str(&quota_usage(summary, human_readable));
    }
    out.push_str(&format!(
        "{:>12} {:>12} {:>18} {shown}",
        summary.directory_count,
        summary.file_count,
        size(summary.length, human_readable)
    ));
    out
}

/// A signed figure, raw or human-readable (TraditionalBinaryPrefix keeps the sign).
fn signed(v: i64, human_readable: bool) -> String {
    if v < 0 {
        format!("-{}", size(v.unsigned_abs(), human_readable))
    } else {
        size(v as u64, human_readable)
    }
}

/// QuotaUsage's columns (`-count -q`, `-count -u`): quota, remaining, space quota,
/// remaining space, as Hadoop's QuotaUsage.getQuotaUsage: a namespace quota shows only
/// when positive, a space quota when not negative; `-h` formats all four.
pub fn quota_usage(summary: &rhdfs_client::ContentSummary, human_readable: bool) -> String {
    let f = |v: i64| signed(v, human_readable);
    let (q, rq) = if summary.quota > 0 {
        let used = (summary.directory_count + summary.file_count) as i64;
        (f(summary.quota), f(summary.quota.saturating_sub(used)))
    } else {
        ("none".to_string(), "inf".to_string())
    };
    let (sq, rsq) = if summary.space_quota >= 0 {
        (
            f(summary.space_quota),
            f(summary
                .space_quota
                .saturating_sub(summary.space_consumed as i64)),
        )
    } else {
        ("none".to_string(), "inf".to_string())
    };
    format!("{q:>12} {rq:>15} {sq:>15} {rsq:>15} ")
}

/// The `-count -t` columns of each storage type in `types`: its quota and what remains of
/// it, or `none` and `inf`.
pub fn type_quota_usage(
    summary: &rhdfs_client::ContentSummary,
    types: &[String],
    human_readable: bool,
) -> String {
    types
        .iter()
        .map(|t| {
            let u = summary.type_usage(t);
            let (q, rq) = if u.quota >= 0 {
                (
                    signed(u.quota, human_readable),
                    signed(u.quota.saturating_sub(u.consumed as i64), human_readable),
                )
            } else {
                ("none".to_string(), "inf".to_string())
            };
            format!("{q:>14} {rq:>18} ")
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn st(dir: bool, len: u64, owner: &str, group: &str) -> FileStatus {
        FileStatus {
            path: "/a/b".into(),
            length: len,
            is_dir: dir,
            is_symlink: false,
            symlink: None,
            permission: if dir { 0o755 } else { 0o644 },
            owner: owner.into(),
            group: group.into(),
            modification_time: 1_796_222_342_466,
            access_time: 1_796_222_342_292,
            replication: if dir { 0 } else { 3 },
            block_size: if dir { 0 } else { 134217728 },
            file_id: 1,
            children_num: 0,
            has_acl: false,
        }
    }

    #[test]
    fn human_sizes() {
        assert_eq!(human(0), "0");
        assert_eq!(human(12), "12");
        assert_eq!(human(3000), "2.9 K");
        assert_eq!(human(1048576), "1 M");
        assert_eq!(human(107374182400), "100 G");
        assert_eq!(human(106300440576), "99 G");
        assert_eq!(human(1053576), "1.0 M");
        assert_eq!(human(1024 * 1024 - 1), "1.0 M");
    }

    #[test]
    fn ls_lines_match_fsshell() {
        let items = vec![
            st(true, 0, "root", "supergroup"),
            st(false, 12, "root", "supergroup"),
        ];
        let w = LsWidths::of(&items, false);
        assert_eq!(
            ls_line(&items[0], "/a/b", &w, false),
            "drwxr-xr-x   - root supergroup          0 2026-12-02 14:39 /a/b"
        );
        assert_eq!(
            ls_line(&items[1], "/a/f.txt", &w, false),
            "-rw-r--r--   3 root supergroup         12 2026-12-02 14:39 /a/f.txt"
        );
        let h = vec![st(false, 3000, "root", "supergroup")];
        let w = LsWidths::of(&h, true);
        assert_eq!(
            ls_line(&h[0], "/a/b/r3k", &w, true),
            "-rw-r--r--   3 root supergroup      2.9 K 2026-12-02 14:39 /a/b/r3k"
        );
        let mixed = vec![
            st(false, 12, "bob", "grp2"),
            st(false, 0, "root", "supergroup"),
        ];
        let w = LsWidths::of(&mixed, false);
        assert_eq!(
            ls_line(&mixed[0], "/a/c.txt", &w, false),
            "-rw-r--r--   3 bob  grp2               12 2026-12-02 14:39 /a/c.txt"
        );
    }

    #[test]
    fn stat_formats() {
        let s = st(false, 12, "root", "supergroup");
        assert_eq!(
            stat("%n %b %F %g %o %r %u %y %Y %x %X %a %A %%", &s),
            "b 12 regular file supergroup 134217728 3 root 2026-12-02 14:39:02 1796222342466 \
             2026-12-02 14:39:02 1796222342292 644 rw-r--r-- %"
        );
        assert_eq!(stat("%F", &st(true, 0, "r", "g")), "directory");
    }

    #[test]
    fn tables() {
        let rows = vec![
            vec!["3000".into(), "3000".into(), "/a/b".into()],
            vec!["12".into(), "12".into(), "/a/f.txt".into()],
        ];
        assert_eq!(
            table(&rows, &[Align::Left, Align::Left, Align::Left]),
            vec!["3000  3000  /a/b", "12    12    /a/f.txt"]
        );
        let df = vec![
            vec![
                "Filesystem".into(),
                "Size".into(),
                "Used".into(),
                "Available".into(),
                "Use%".into(),
            ],
            vec![
                "hdfs://127.0.0.1:39401".into(),
                "107374182400".into(),
                "1048576".into(),
                "106300440576".into(),
                "0%".into(),
            ],
        ];
        let a = [
            Align::Left,
            Align::Right,
            Align::Right,
            Align::Right,
            Align::Right,
        ];
        assert_eq!(
            table(&df, &a),
            vec![
                "Filesystem                      Size     Used     Available  Use%",
                "hdfs://127.0.0.1:39401  107374182400  1048576  106300440576    0%"
            ]
        );
    }

    #[test]
    fn count_lines() {
        let s = rhdfs_client::ContentSummary {
            length: 3012,
            file_count: 2,
            directory_count: 2,
            quota: -1,
            space_consumed: 3012,
            space_quota: -1,
            types: Default::default(),
        };
        assert_eq!(
            count_line(&s, false, false, "/a"),
            "           2            2               3012 /a"
        );
        assert_eq!(
            count_line(&s, true, false, "/a"),
            "        none             inf            none             inf            2            2               3012 /a"
        );
        assert_eq!(
            count_line(&s, true, true, "/a"),
            "        none             inf            none             inf            2            2              2.9 K /a"
        );
        let q = rhdfs_client::ContentSummary {
            quota: i64::MAX,
            space_quota: 1024,
            ..s
        };
        assert_eq!(
            quota_usage(&q, true),
            "       8.0 E           8.0 E             1 K          -1.9 K "
        );
        assert_eq!(
            quota_usage(&q, false),
            "9223372036854775807 9223372036854775803            1024           -1988 "
        );
    }
}
