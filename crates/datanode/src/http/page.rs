//! `/`: the DataNode's overview: identity and activity, its block pool with the NameNode
//! connection (state, last heartbeat, last full block report), its volumes (in service and
//! failed) and the recent block transfers, with links to the other endpoints. The figures
//! come from the same readings as `/jmx` (`DataNodeInfo`'s VolumeInfo and
//! BPServiceActorInfo, `FSDatasetState`).

use std::sync::atomic::Ordering;
use std::time::SystemTime;

use rhdfs_http::html::escape;

use super::{Status, now_ms};
use crate::metrics::Activity;

/// `at_ms` (ms since the epoch; 0 = never) as seconds ago, the epoch figure in its title.
fn ago(at_ms: u64, now_ms: u64) -> String {
    if at_ms == 0 {
        return "never".into();
    }
    format!("{} s ago", now_ms.saturating_sub(at_ms) / 1000)
}

/// A table with an id (for tests and scripts), a head row and escaped cells.
fn table(id: &str, head: &[&str], rows: &[Vec<String>]) -> String {
    let mut s = format!("<table id=\"{id}\" border=\"1\">\n<tr>");
    for h in head {
        s.push_str(&format!("<th>{}</th>", escape(h)));
    }
    s.push_str("</tr>\n");
    for r in rows {
        s.push_str("<tr>");
        for c in r {
            s.push_str(&format!("<td>{}</td>", escape(c)));
        }
        s.push_str("</tr>\n");
    }
    s.push_str("</table>\n");
    s
}

fn summary(st: &Status) -> String {
    let id = &st.identity;
    let a = &st.activity;
    let g = Activity::get;
    let rows: Vec<(String, String)> = vec![
        (
            "Version".into(),
            rhdfs_metrics::build::version_with_revision(),
        ),
        ("Datanode UUID".into(), id.datanode_uuid.clone()),
        (
            "Cluster ID".into(),
            st.actor.cluster_id().unwrap_or_else(|| "-".into()),
        ),
        (
            "Started (ms since the epoch)".into(),
            st.started_ms.to_string(),
        ),
        ("Host".into(), format!("{} ({})", id.host_name, id.ip_addr)),
        (
            "Ports".into(),
            format!(
                "data {}, IPC {}, HTTP {}",
                id.xfer_port, id.ipc_port, id.info_port
            ),
        ),
        (
            "Xceivers".into(),
            st.xceivers.load(Ordering::Relaxed).to_string(),
        ),
        (
            "Replications in progress".into(),
            st.actor.xmits_in_progress().to_string(),
        ),
        (
            "Blocks read / written / replicated".into(),
            format!(
                "{} / {} / {}",
                g(&a.blocks_read),
                g(&a.blocks_written),
                g(&a.blocks_replicated)
            ),
        ),
        (
            "Bytes read / written".into(),
            format!("{} / {}", g(&a.bytes_read), g(&a.bytes_written)),
        ),
    ];
    let mut s = String::from("<table id=\"summary\">\n");
    for (k, v) in rows {
        s.push_str(&format!(
            "<tr><th align=\"left\">{}</th><td>{}</td></tr>\n",
            escape(&k),
            escape(&v)
        ));
    }
    s.push_str("</table>\n");
    s
}

fn block_pools(st: &Status, now: u64) -> String {
    let a = &st.activity;
    let row = vec![
        st.actor.block_pool_id().unwrap_or_else(|| "-".into()),
        st.namenode.clone(),
        st.actor_state().to_string(),
        ago(Activity::get(&a.last_heartbeat_ms), now),
        ago(Activity::get(&a.last_block_report_ms), now),
    ];
    table(
        "block-pools",
        &[
            "Block pool",
            "NameNode address",
            "Actor state",
            "Last heartbeat",
            "Last block report",
        ],
        &[row],
    )
}

fn volumes(st: &Status) -> String {
    let rows: Vec<Vec<String>> = st
        .dataset
        .volumes()
        .iter()
        .zip(st.dataset.storage_stats())
        .map(|(v, s)| {
            vec![
                v.base.display().to_string(),
                v.storage_id.clone(),
                // The only storage type rhdfs volumes have (and report to the NameNode).
                "DISK".into(),
                s.space.capacity.to_string(),
                s.dfs_used.to_string(),
                v.reserved().to_string(),
                s.space.available.to_string(),
                s.replicas.to_string(),
                if s.failed { "failed" } else { "in service" }.into(),
            ]
        })
        .collect();
    let mut out = table(
        "volumes",
        &[
            "Directory",
            "Storage ID",
            "Storage type",
            "Capacity",
            "DFS used",
            "Reserved",
            "Available",
            "Replicas",
            "State",
        ],
        &rows,
    );
    let failed: Vec<Vec<String>> = st
        .dataset
        .volume_failures()
        .into_iter()
        .map(|f| {
            vec![
                f.location,
                f.date_ms.to_string(),
                f.capacity_lost.to_string(),
            ]
        })
        .collect();
    out.push_str("<h3>Failed volumes</h3>\n");
    out.push_str(&table(
        "failed-volumes",
        &[
            "Location",
            "Failed at (ms since the epoch)",
            "Estimated capacity lost",
        ],
        &failed,
    ));
    out
}

fn transfers(st: &Status, now: u64) -> String {
    let rows: Vec<Vec<String>> = st
        .activity
        .recent
        .newest_first()
        .into_iter()
        .map(|t| {
            let ended = t
                .ended
                .duration_since(SystemTime::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            vec![
                ago(ended, now),
                t.kind.name().into(),
                t.peer,
                format!("blk_{}", t.block_id),
                t.bytes.to_string(),
                format!("{:.3}", t.took.as_secs_f64() * 1000.0),
            ]
        })
        .collect();
    table(
        "transfers",
        &["Ended", "Kind", "Peer", "Block", "Bytes", "Took (ms)"],
        &rows,
    )
}

pub(crate) fn overview(st: &Status) -> String {
    let id = &st.identity;
    let now = now_ms();
    let mut body = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>DataNode {h}</title></head><body>\n<h1>DataNode {h}</h1>\n",
        h = escape(&format!("{}:{}", id.host_name, id.xfer_port))
    );
    body.push_str(&summary(st));
    body.push_str("<h2>Block pools</h2>\n");
    body.push_str(&block_pools(st, now));
    body.push_str("<h2>Volumes</h2>\n");
    body.push_str(&volumes(st));
    body.push_str(&format!(
        "<h2>Recent transfers</h2>\n<p>The latest {} reads, writes and copies, the newest first.</p>\n",
        crate::metrics::transfers::RECENT_TRANSFERS
    ));
    body.push_str(&transfers(st, now));
    body.push_str("<ul>\n<li><a href=\"/jmx\">/jmx</a></li>\n<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n<li><a href=\"/conf\">/conf</a></li>\n<li><a href=\"/logs/\">/logs/</a></li>\n</ul>\n</body></html>\n");
    body
}
