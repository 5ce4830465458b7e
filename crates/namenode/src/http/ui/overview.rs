//! `/dfshealth.html` (Overview), `/datanodes.html` and `/startup.html`: the NameNode's state
//! as Hadoop's web UI shows it, rendered from the namesystem and the block manager (call off
//! the async threads: the block manager's counters are read in bounded chunks).

use rhdfs_blockmanager::ReportKind;
use rhdfs_blockmanager::views::byte_desc;

use super::page::{bar, layout, rows_table};
use crate::namesystem::Namesystem;
use rhdfs_http::html::escape;

/// The Overview page.
pub fn overview(fs: &Namesystem, host: &str, conf: &rhdfs_conf::Configuration) -> String {
    let bm = fs.block_manager();
    let s = bm.fs_stats();
    let info = bm.namespace_info().clone();
    let nodes = bm.datanode_report(ReportKind::All);
    let count = |st: &str| {
        nodes
            .iter()
            .filter(|d| d.admin_state.hadoop_name() == st)
            .count()
    };
    let (inodes, safe_mode, reason) = fs.with_ns(|ns| {
        (
            ns.dir().inode_count(),
            ns.in_safe_mode(),
            ns.startup_safe_mode_reason().map(str::to_string),
        )
    });
    let last_txid = fs.durable().map(|d| d.log().last_txid());
    let safe = match (safe_mode, reason) {
        (true, Some(why)) => format!("<span class=\"warn\">ON</span>. {}", escape(&why)),
        (true, None) => "<span class=\"warn\">ON</span> (entered manually)".to_string(),
        (false, _) => "OFF".to_string(),
    };
    let b = |v: u64| escape(&byte_desc(v)).into_owned();
    let summary: Vec<(&str, String)> = vec![
        ("Started as", escape(host).into_owned()),
        ("Version", format!("rhdfs {}", env!("CARGO_PKG_VERSION"))),
        ("Cluster ID", escape(&info.cluster_id).into_owned()),
        ("Block Pool ID", escape(&info.block_pool_id).into_owned()),
        ("Safe mode", safe),
        ("Files And Directories", inodes.to_string()),
        ("Blocks", s.blocks_total.to_string()),
        ("Configured Capacity", b(s.capacity)),
        (
            "DFS Used",
            format!("{} {}", b(s.used), bar(s.used, s.capacity)),
        ),
        ("DFS Remaining", b(s.remaining)),
        ("Live Nodes", s.live_datanodes.to_string()),
        ("Dead Nodes", s.dead_datanodes.to_string()),
        (
            "Decommissioning Nodes",
            count("Decommission In Progress").to_string(),
        ),
        ("Decommissioned Nodes", count("Decommissioned").to_string()),
        (
            "Entering Maintenance Nodes",
            count("Entering Maintenance").to_string(),
        ),
        ("In Maintenance Nodes", count("In Maintenance").to_string()),
        ("Under-Replicated Blocks", s.under_replicated.to_string()),
        ("Blocks With Corrupt Replicas", s.corrupt_blocks.to_string()),
        ("Missing Blocks", s.missing_blocks.to_string()),
        (
            "Pending Deletion Blocks",
            s.pending_deletion_blocks().to_string(),
        ),
        (
            "Last Transaction ID",
            last_txid.map(|t| t.to_string()).unwrap_or_default(),
        ),
    ];
    let dirs: Vec<(&str, String)> = vec![
        (
            "Name directories",
            escape(&conf.get_list("dfs.namenode.name.dir").join(", ")).into_owned(),
        ),
        (
            "Edits directories",
            escape(&conf.get_list("dfs.namenode.edits.dir").join(", ")).into_owned(),
        ),
    ];
    let body = format!(
        "<h2>Summary</h2>\n{}<h2>NameNode Storage</h2>\n{}",
        rows_table("summary", &summary),
        rows_table("storage", &dirs)
    );
    layout(
        &format!("Overview '{host}' (active)"),
        "/dfshealth.html",
        &body,
    )
}

/// The Datanodes page: one row per node, sortable by clicking a heading.
pub fn datanodes(fs: &Namesystem, now_ms: u64) -> String {
    let bm = fs.block_manager();
    let mut nodes = bm.datanode_report(ReportKind::All);
    let dead: std::collections::HashSet<String> = bm
        .datanode_report(ReportKind::Dead)
        .into_iter()
        .map(|d| d.id.uuid)
        .collect();
    nodes.sort_by(|a, b| a.id.host_name.cmp(&b.id.host_name));
    let mut rows = String::new();
    let mut failures = String::new();
    for d in &nodes {
        if let Some(s) = &d.volume_failure_summary {
            let (date, lost) = (s.last_volume_failure_date, s.estimated_capacity_lost_total);
            failures.push_str(&format!(
                "<tr><td>{name}</td><td>{when}</td><td class=\"n\">{n}</td><td class=\"n\" data-v=\"{lost}\">{lostd}</td><td>{locs}</td></tr>\n",
                name = escape(&format!("{} ({}:{})", d.id.host_name, d.id.ip_addr, d.id.xfer_port)),
                when = escape(&crate::fsck::format::java_date(date)),
                n = d.volume_failures,
                lostd = escape(&byte_desc(lost)),
                locs = escape(&s.failed_storage_locations.join(", ")),
            ));
        }
        let state = if dead.contains(&d.id.uuid) {
            "Dead"
        } else {
            d.admin_state.hadoop_name()
        };
        let (cap, used, rem) = (d.capacity, d.dfs_used, d.remaining);
        let contact = now_ms.saturating_sub(d.last_update_ms) / 1000;
        rows.push_str(&format!(
            "<tr><td>{name}</td><td>{addr}</td><td>{rack}</td><td>{state}</td><td class=\"n\" data-v=\"{contact}\">{contact}s</td>\
             <td class=\"n\" data-v=\"{cap}\">{capd}</td><td class=\"n\" data-v=\"{used}\">{usedd} {bar}</td><td class=\"n\" data-v=\"{rem}\">{remd}</td>\
             <td class=\"n\">{blocks}</td><td class=\"n\">{xc}</td><td class=\"n\">{vf}</td></tr>\n",
            name = escape(&d.id.host_name),
            addr = escape(&format!("{}:{}", d.id.ip_addr, d.id.xfer_port)),
            rack = escape(&d.location),
            capd = escape(&byte_desc(cap)),
            usedd = escape(&byte_desc(used)),
            bar = bar(used, cap),
            remd = escape(&byte_desc(rem)),
            blocks = d.num_blocks.unwrap_or(0),
            xc = d.xceiver_count,
            vf = d.volume_failures,
        ));
    }
    // Hadoop's "Volume Failures" section: only nodes with a failed volume.
    if !failures.is_empty() {
        failures = format!(
            "<h2>Volume Failures</h2>\n<table id=\"volume-failures\"><thead><tr><th>Node</th><th>Last Failure Date</th>\
             <th>Failed Volumes</th><th>Estimated Capacity Lost</th><th>Failed Storage Locations</th></tr></thead>\n\
             <tbody>{failures}</tbody></table>\n"
        );
    }
    let body = format!(
        "<p>{} DataNodes ({} dead). Click a heading to sort.</p>\n\
         <table id=\"datanodes\"><thead><tr><th>Node</th><th>Transfer address</th><th>Rack</th><th>State</th>\
         <th>Last contact</th><th>Capacity</th><th>Used</th><th>Remaining</th><th>Blocks</th><th>Xceivers</th>\
         <th>Failed Volumes</th></tr></thead>\n\
         <tbody>{rows}</tbody></table>\n{failures}<script>{SORT}</script>\n",
        nodes.len(),
        dead.len()
    );
    layout("Datanode Information", "/datanodes.html", &body)
}

/// Sorts a table's body by the clicked column (numbers by their `data-v`).
const SORT: &str = "document.querySelectorAll('th').forEach(function(th,i){th.style.cursor='pointer';\
th.onclick=function(){var tb=th.closest('table').tBodies[0];var rows=[].slice.call(tb.rows);\
var asc=th.dataset.asc!=='1';th.dataset.asc=asc?'1':'0';rows.sort(function(a,b){\
var x=a.cells[i],y=b.cells[i];var p=x.dataset.v,q=y.dataset.v;\
var r=(p!==undefined&&q!==undefined)?(Number(p)-Number(q)):x.textContent.localeCompare(y.textContent);\
return asc?r:-r;});rows.forEach(function(r){tb.appendChild(r);});};});";

/// The Startup Progress page, as Hadoop's: overall elapsed time and percent complete, then
/// each phase (loading the image, the edits, saving a checkpoint, safe mode) with its status,
/// count of total, percent and elapsed time, and why safe mode is still on.
pub fn startup(fs: &Namesystem) -> String {
    let (safe_mode, reason) = fs.with_ns(|ns| {
        (
            ns.in_safe_mode(),
            ns.startup_safe_mode_reason().map(str::to_string),
        )
    });
    let last_txid = fs.durable().map(|d| d.log().last_txid()).unwrap_or(0);
    let Some(v) = fs.startup_progress().map(|p| p.view()) else {
        let body = rows_table(
            "startup",
            &[("Status", "Not started by this process".into())],
        );
        return layout("Startup Progress", "/startup.html", &body);
    };
    let secs = |ms: u64| format!("{:.1} sec", ms as f64 / 1000.0);
    let pct = |p: f64| format!("{:.0}%", p * 100.0);
    let summary: Vec<(&str, String)> = vec![
        ("Elapsed Time", secs(v.elapsed_ms)),
        ("Percent Complete", pct(v.percent_complete)),
        ("Namespace at transaction", last_txid.to_string()),
        (
            "Safe mode",
            match (safe_mode, reason) {
                (true, Some(why)) => format!("ON: {}", escape(&why)),
                (true, None) => "ON (entered manually)".to_string(),
                (false, _) => "OFF".to_string(),
            },
        ),
    ];
    let mut body = rows_table("startup", &summary);
    body.push_str(
        "<table id=\"phases\">\n<thead><tr><th>Phase</th><th>Status</th><th>Completed</th>\
         <th>Total</th><th>Percent Complete</th><th>Elapsed Time</th></tr></thead><tbody>\n",
    );
    for p in &v.phases {
        body.push_str(&format!(
            "<tr data-phase=\"{}\"><td>{}</td><td>{}</td><td class=\"n\">{}</td>\
             <td class=\"n\">{}</td><td class=\"n\">{}</td><td class=\"n\">{}</td></tr>\n",
            p.phase.name(),
            p.phase.description(),
            p.status.name(),
            p.count,
            p.total,
            pct(p.percent_complete),
            secs(p.elapsed_ms)
        ));
    }
    body.push_str("</tbody></table>\n");
    layout("Startup Progress", "/startup.html", &body)
}
