//! `/`: a small overview page of the NameNode (what Hadoop's web UI shows first: safe mode,
//! DataNodes, capacity, files and blocks) with links to the other endpoints.

use crate::namesystem::Namesystem;

fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            c => out.push(c),
        }
    }
    out
}

/// The page (reads the block manager's counters in its bounded chunks; call it off the
/// async threads).
pub fn page(fs: &Namesystem, host: &str) -> String {
    let bm = fs.block_manager();
    let s = bm.fs_stats();
    let (inodes, safe_mode, reason) = fs.with_ns(|ns| {
        (
            ns.dir().inode_count(),
            ns.in_safe_mode(),
            ns.startup_safe_mode_reason().map(str::to_string),
        )
    });
    let (future, orphans) = (fs.future_replicas(), fs.orphan_counts());
    let bytes = rhdfs_blockmanager::views::byte_desc;
    let rows: Vec<(&str, String)> = vec![
        ("Block pool", fs.block_pool_id().to_string()),
        (
            "Safe mode",
            match (safe_mode, reason) {
                (true, Some(why)) => format!("ON. {why}"),
                (true, None) => "ON (turned on manually)".to_string(),
                (false, _) => "OFF".to_string(),
            },
        ),
        ("Live DataNodes", s.live_datanodes.to_string()),
        ("Dead DataNodes", s.dead_datanodes.to_string()),
        ("Configured capacity", bytes(s.capacity)),
        ("DFS used", bytes(s.used)),
        ("DFS remaining", bytes(s.remaining)),
        ("Files and directories", inodes.to_string()),
        ("Blocks", s.blocks_total.to_string()),
        ("Under-replicated blocks", s.under_replicated.to_string()),
        ("Blocks with corrupt replicas", s.corrupt_blocks.to_string()),
        ("Missing blocks", s.missing_blocks.to_string()),
        (
            "Pending deletion blocks",
            s.pending_deletion_blocks().to_string(),
        ),
        (
            "Held orphan replicas",
            format!("{} ({})", orphans.replicas, bytes(orphans.bytes)),
        ),
        (
            "Replicas with generation stamps in future",
            format!("{} ({})", future.replicas, bytes(future.bytes)),
        ),
    ];
    let mut body = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>NameNode {h}</title></head><body>\n<h1>NameNode {h}</h1>\n<table>\n",
        h = escape(host)
    );
    for (k, v) in rows {
        body.push_str(&format!(
            "<tr><th align=\"left\">{k}</th><td>{}</td></tr>\n",
            escape(&v)
        ));
    }
    body.push_str(
        "</table>\n<ul>\n<li><a href=\"/fsck?path=%2F\">/fsck</a> (the file system check)</li>\n<li><a href=\"/jmx\">/jmx</a> (FSNamesystem beans, lock holds)</li>\n<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n<li><a href=\"/webhdfs/v1/?op=LISTSTATUS\">/webhdfs/v1</a> (WebHDFS)</li>\n</ul>\n</body></html>\n",
    );
    body
}

#[cfg(test)]
mod tests {
    #[test]
    fn escapes_markup() {
        assert_eq!(
            super::escape("<a & \"b\">"),
            "&lt;a &amp; &quot;b&quot;&gt;"
        );
    }
}
