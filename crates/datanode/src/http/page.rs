//! `/`: a small overview of the DataNode: identity, NameNode connection, volumes and
//! transfers, with links to the other endpoints.

use std::sync::atomic::Ordering;

use super::Status;
use crate::metrics::Activity;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

pub(crate) fn overview(st: &Status) -> String {
    let id = &st.identity;
    let a = &st.activity;
    let g = Activity::get;
    let mut rows: Vec<(String, String)> = vec![
        (
            "Version".into(),
            rhdfs_metrics::build::version_with_revision(),
        ),
        ("Datanode UUID".into(), id.datanode_uuid.clone()),
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
            "NameNode".into(),
            format!(
                "{} ({})",
                st.namenode,
                if st.actor.is_registered() {
                    "registered"
                } else {
                    "connecting"
                }
            ),
        ),
        (
            "Block pool".into(),
            st.actor.block_pool_id().unwrap_or_else(|| "-".into()),
        ),
        (
            "Xceivers".into(),
            st.xceivers.load(Ordering::Relaxed).to_string(),
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
    for (v, s) in st.dataset.volumes().iter().zip(st.dataset.storage_stats()) {
        if s.failed {
            continue;
        }
        rows.push((
            format!("Volume {}", v.base.display()),
            format!(
                "{}: {} replicas, {} bytes used, {} of {} bytes available",
                v.storage_id, s.replicas, s.dfs_used, s.space.available, s.space.capacity
            ),
        ));
    }
    for f in st.dataset.volume_failures() {
        rows.push((
            format!("Failed volume {}", f.location),
            format!(
                "failed at {} ms since the epoch, about {} bytes of capacity lost",
                f.date_ms, f.capacity_lost
            ),
        ));
    }
    let mut body = format!(
        "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>DataNode {h}</title></head><body>\n<h1>DataNode {h}</h1>\n<table>\n",
        h = escape(&format!("{}:{}", id.host_name, id.xfer_port))
    );
    for (k, v) in rows {
        body.push_str(&format!(
            "<tr><th align=\"left\">{}</th><td>{}</td></tr>\n",
            escape(&k),
            escape(&v)
        ));
    }
    body.push_str("</table>\n<ul>\n<li><a href=\"/jmx\">/jmx</a></li>\n<li><a href=\"/metrics\">/metrics</a> (Prometheus)</li>\n<li><a href=\"/conf\">/conf</a></li>\n</ul>\n</body></html>\n");
    body
}
