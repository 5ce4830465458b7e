//! The client side of `dfsadmin`: the `-report` text in Hadoop's format (DFSAdmin.report
//! and DatanodeInfo.getDatanodeReport), built from ClientProtocol answers.

use std::fmt::Write as _;

use rhdfs_blockmanager::views::byte_desc;
use rhdfs_ipc::{IpcError, RpcClient};
use rhdfs_proto::hdfs::datanode_info_proto::AdminState;
use rhdfs_proto::hdfs::{
    DatanodeInfoProto, GetDatanodeReportRequestProto, GetDatanodeReportResponseProto,
    GetFsReplicatedBlockStatsRequestProto, GetFsReplicatedBlockStatsResponseProto,
    GetFsStatsResponseProto, GetFsStatusRequestProto, GetSlowDatanodeReportRequestProto,
    GetSlowDatanodeReportResponseProto, SafeModeActionProto, SetSafeModeRequestProto,
    SetSafeModeResponseProto,
};

use rhdfs_proto::hdfs::{
    EvictWritersRequestProto, EvictWritersResponseProto, GetDatanodeInfoRequestProto,
    GetDatanodeInfoResponseProto, MetaSaveRequestProto, MetaSaveResponseProto,
    ShutdownDatanodeRequestProto, ShutdownDatanodeResponseProto, TriggerBlockReportRequestProto,
    TriggerBlockReportResponseProto,
};
use rhdfs_proto::protocols::{CLIENT_DATANODE_PROTOCOL, CLIENT_PROTOCOL};

use super::format::java_date;

/// Which node lists `-report` prints (none set = all of them).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReportFilter {
    pub live: bool,
    pub dead: bool,
    pub decommissioning: bool,
    /// `-slownodes`: the nodes getSlowDatanodeReport names.
    pub slow: bool,
}

impl ReportFilter {
    fn all(&self) -> bool {
        !self.live && !self.dead && !self.decommissioning && !self.slow
    }
}

/// What the report is made of.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ReportData {
    pub safe_mode: bool,
    pub stats: GetFsStatsResponseProto,
    pub replicated: Option<GetFsReplicatedBlockStatsResponseProto>,
    pub live: Vec<DatanodeInfoProto>,
    pub dead: Vec<DatanodeInfoProto>,
    pub decommissioning: Vec<DatanodeInfoProto>,
    pub slow: Vec<DatanodeInfoProto>,
    /// rhdfs's account of each slow node (getSlowDatanodeReport field 1001).
    pub slow_details: Vec<rhdfs_proto::hdfs::SlowNodeDetailProto>,
}

fn percent2(v: f64) -> String {
    format!("{v:.2}%")
}

/// DatanodeInfo.getDatanodeReport(), UTC dates. `Name: ip:port (hostname)` uses the
/// host name the node registered with in place of Hadoop's reverse DNS lookup.
pub fn datanode_text(d: &DatanodeInfoProto) -> String {
    let c = d.capacity.unwrap_or(0);
    let r = d.remaining.unwrap_or(0);
    let u = d.dfs_used.unwrap_or(0);
    let non_dfs = d.non_dfs_used.unwrap_or(0);
    let used_pct = if c == 0 {
        100.0
    } else {
        f64::from(u as f32 * 100.0 / c as f32)
    };
    let remaining_pct = if c == 0 {
        0.0
    } else {
        f64::from(r as f32 * 100.0 / c as f32)
    };
    let cc = d.cache_capacity.unwrap_or(0);
    let cu = d.cache_used.unwrap_or(0);
    let cr = cc.saturating_sub(cu);
    let (cache_used_pct, cache_rem_pct) = if cc == 0 {
        (100.0, 0.0)
    } else {
        (
            f64::from(cu as f32 * 100.0 / cc as f32),
            f64::from(cr as f32 * 100.0 / cc as f32),
        )
    };
    let id = &d.id;
    let mut s = String::new();
    let _ = write!(s, "Name: {}:{}", id.ip_addr, id.xfer_port);
    if !id.host_name.is_empty() {
        let _ = write!(s, " ({})", id.host_name);
    }
    s.push('\n');
    let _ = writeln!(s, "Hostname: {}", id.host_name);
    if let Some(loc) = d.location.as_deref()
        && loc != "/default-rack"
    {
        let _ = writeln!(s, "Rack: {loc}");
    }
    if let Some(ud) = d.upgrade_domain.as_deref() {
        let _ = writeln!(s, "Upgrade domain: {ud}");
    }
    let status = match d.admin_state.and_then(|a| AdminState::try_from(a).ok()) {
        Some(AdminState::Decommissioned) => "Decommissioned",
        Some(AdminState::DecommissionInprogress) => "Decommission in progress",
        Some(AdminState::InMaintenance) => "In maintenance",
        Some(AdminState::EnteringMaintenance) => "Entering maintenance",
        _ => "Normal",
    };
    let _ = writeln!(s, "Decommission Status : {status}");
    // rhdfs: why a decommission is stuck and how to fix it (absent from Hadoop's report).
    if let Some(note) = d.rhdfs_admin_note.as_deref().filter(|n| !n.is_empty()) {
        let _ = writeln!(s, "Decommission Blocked: {note}");
    }
    let _ = writeln!(s, "Configured Capacity: {c} ({})", byte_desc(c));
    let _ = writeln!(s, "DFS Used: {u} ({})", byte_desc(u));
    let _ = writeln!(s, "Non DFS Used: {non_dfs} ({})", byte_desc(non_dfs));
    let _ = writeln!(s, "DFS Remaining: {r} ({})", byte_desc(r));
    let _ = writeln!(s, "DFS Used%: {}", percent2(used_pct));
    let _ = writeln!(s, "DFS Remaining%: {}", percent2(remaining_pct));
    let _ = writeln!(s, "Configured Cache Capacity: {cc} ({})", byte_desc(cc));
    let _ = writeln!(s, "Cache Used: {cu} ({})", byte_desc(cu));
    let _ = writeln!(s, "Cache Remaining: {cr} ({})", byte_desc(cr));
    let _ = writeln!(s, "Cache Used%: {}", percent2(cache_used_pct));
    let _ = writeln!(s, "Cache Remaining%: {}", percent2(cache_rem_pct));
    let _ = writeln!(s, "Xceivers: {}", d.xceiver_count.unwrap_or(0));
    let _ = writeln!(s, "Last contact: {}", java_date(d.last_update.unwrap_or(0)));
    let last_br = d.last_block_report_time.unwrap_or(0);
    let _ = writeln!(
        s,
        "Last Block Report: {}",
        if last_br != 0 {
            java_date(last_br)
        } else {
            "Never".to_string()
        }
    );
    let _ = writeln!(s, "Num of Blocks: {}", d.num_blocks.unwrap_or(0));
    // rhdfs: the node's failed volumes (Hadoop's report has no such lines; its web UI has
    // "Failed Volumes" and a "Volume Failures" table with these columns).
    if let Some(n) = d.rhdfs_volume_failures.filter(|n| *n > 0) {
        let _ = writeln!(s, "Failed Volumes: {n}");
        if let Some(date) = d.rhdfs_last_volume_failure_date {
            let lost = d.rhdfs_estimated_capacity_lost.unwrap_or(0);
            let _ = writeln!(s, "Last Failure Date: {}", java_date(date));
            let _ = writeln!(s, "Estimated Capacity Lost: {lost} ({})", byte_desc(lost));
            let _ = writeln!(
                s,
                "Failed Storage Locations: {}",
                d.rhdfs_failed_storage_locations.join(", ")
            );
        }
    }
    s
}

fn nodes_section(s: &mut String, nodes: &[DatanodeInfoProto], asked: bool, state: &str) {
    if !nodes.is_empty() || asked {
        let _ = writeln!(s, "{state} datanodes ({}):\n", nodes.len());
    }
    for d in nodes {
        // println(getDatanodeReport()) and then println(): two empty lines follow.
        let _ = writeln!(s, "{}", datanode_text(d));
        s.push('\n');
    }
}

/// The whole `dfsadmin -report` text.
pub fn report_text(data: &ReportData, filter: ReportFilter) -> String {
    let st = &data.stats;
    let mut s = String::new();
    if data.safe_mode {
        s.push_str("Safe mode is ON\n");
    }
    let present = st.used + st.remaining;
    let _ = writeln!(
        s,
        "Configured Capacity: {} ({})",
        st.capacity,
        byte_desc(st.capacity)
    );
    let _ = writeln!(s, "Present Capacity: {present} ({})", byte_desc(present));
    let _ = writeln!(
        s,
        "DFS Remaining: {} ({})",
        st.remaining,
        byte_desc(st.remaining)
    );
    let _ = writeln!(s, "DFS Used: {} ({})", st.used, byte_desc(st.used));
    let used_pct = if present == 0 {
        0.0
    } else {
        st.used as f64 / present as f64 * 100.0
    };
    let _ = writeln!(s, "DFS Used%: {}", percent2(used_pct));
    let (under, corrupt, missing, missing_one, highest, pending) = match &data.replicated {
        Some(r) => (
            r.low_redundancy,
            r.corrupt_blocks,
            r.missing_blocks,
            r.missing_repl_one_blocks,
            r.highest_prio_low_redundancy_blocks,
            r.pending_deletion_blocks,
        ),
        None => (
            st.under_replicated,
            st.corrupt_blocks,
            st.missing_blocks,
            st.missing_repl_one_blocks.unwrap_or(0),
            None,
            st.pending_deletion_blocks.unwrap_or(0),
        ),
    };
    s.push_str("Replicated Blocks:\n");
    let _ = writeln!(s, "\tUnder replicated blocks: {under}");
    let _ = writeln!(s, "\tBlocks with corrupt replicas: {corrupt}");
    let _ = writeln!(s, "\tMissing blocks: {missing}");
    let _ = writeln!(
        s,
        "\tMissing blocks (with replication factor 1): {missing_one}"
    );
    if let Some(h) = highest {
        let _ = writeln!(
            s,
            "\tLow redundancy blocks with highest priority to recover: {h}"
        );
    }
    let _ = writeln!(s, "\tPending deletion blocks: {pending}");
    // rhdfs's held orphans (`rhdfs_blockmanager::orphans`): shown only when there are some,
    // so the report reads as Hadoop's otherwise.
    let held = st.rhdfs_held_orphan_replicas.unwrap_or(0);
    if held > 0 {
        let bytes = st.rhdfs_held_orphan_bytes.unwrap_or(0);
        let _ = writeln!(
            s,
            "\tHeld orphan replicas: {held} ({}), of which with generation stamps in future: {}",
            byte_desc(bytes),
            st.blocks_in_future.unwrap_or(0)
        );
    }
    s.push_str("Erasure Coded Block Groups: \n");
    s.push_str("\tLow redundancy block groups: 0\n");
    s.push_str("\tBlock groups with corrupt internal blocks: 0\n");
    s.push_str("\tMissing block groups: 0\n");
    s.push_str("\tLow redundancy blocks with highest priority to recover: 0\n");
    s.push_str("\tPending deletion blocks: 0\n");
    s.push('\n');
    s.push_str("-------------------------------------------------\n");
    let all = filter.all();
    if all || filter.live {
        nodes_section(&mut s, &data.live, filter.live, "Live");
    }
    if all || filter.dead {
        nodes_section(&mut s, &data.dead, filter.dead, "Dead");
    }
    if all || filter.decommissioning {
        nodes_section(
            &mut s,
            &data.decommissioning,
            filter.decommissioning,
            "Decommissioning",
        );
    }
    if all || filter.slow {
        if !data.slow.is_empty() || filter.slow {
            let _ = writeln!(s, "Slow datanodes ({}):\n", data.slow.len());
        }
        for d in &data.slow {
            let _ = writeln!(s, "{}", datanode_text(d));
            s.push_str(&super::slow_details::detail_text(
                &data.slow_details,
                &d.id.datanode_uuid,
            ));
            s.push('\n');
        }
    }
    s
}

/// DatanodeReportTypeProto values.
const LIVE: i32 = 2;
const DEAD: i32 = 3;
const DECOMMISSIONING: i32 = 4;

async fn nodes(client: &RpcClient, kind: i32) -> Result<Vec<DatanodeInfoProto>, IpcError> {
    let r: GetDatanodeReportResponseProto = client
        .call(
            "getDatanodeReport",
            &GetDatanodeReportRequestProto { r#type: kind },
        )
        .await?;
    Ok(r.di)
}

/// Asks the NameNode (a ClientProtocol connection) for everything `-report` prints.
pub async fn fetch_report(
    client: &RpcClient,
    filter: ReportFilter,
) -> Result<ReportData, IpcError> {
    let stats: GetFsStatsResponseProto = client
        .call("getFsStats", &GetFsStatusRequestProto {})
        .await?;
    let replicated = client
        .call::<_, GetFsReplicatedBlockStatsResponseProto>(
            "getFsReplicatedBlockStats",
            &GetFsReplicatedBlockStatsRequestProto {},
        )
        .await
        .ok();
    let safe: SetSafeModeResponseProto = client
        .call(
            "setSafeMode",
            &SetSafeModeRequestProto {
                action: SafeModeActionProto::SafemodeGet as i32,
                checked: Some(false),
            },
        )
        .await?;
    let all = filter.all();
    let live = if all || filter.live {
        nodes(client, LIVE).await?
    } else {
        Vec::new()
    };
    let dead = if all || filter.dead {
        nodes(client, DEAD).await?
    } else {
        Vec::new()
    };
    let decommissioning = if all || filter.decommissioning {
        nodes(client, DECOMMISSIONING).await?
    } else {
        Vec::new()
    };
    let (slow, slow_details) = if all || filter.slow {
        let r: GetSlowDatanodeReportResponseProto = client
            .call(
                "getSlowDatanodeReport",
                &GetSlowDatanodeReportRequestProto {},
            )
            .await?;
        (r.datanode_info_proto, r.rhdfs_slow_node_details)
    } else {
        (Vec::new(), Vec::new())
    };
    Ok(ReportData {
        safe_mode: safe.result,
        stats,
        replicated,
        live,
        dead,
        decommissioning,
        slow,
        slow_details,
    })
}

/// `dfsadmin -report`: connects to the NameNode at `addr` (host:port) as `user` and
/// returns the report text.
pub async fn report(addr: &str, user: &str, filter: ReportFilter) -> Result<String, IpcError> {
    let client = RpcClient::connect(addr, CLIENT_PROTOCOL, user).await?;
    let data = fetch_report(&client, filter).await?;
    Ok(report_text(&data, filter))
}

/// DatanodeReportTypeProto ALL.
const ALL: i32 = 1;

/// `dfsadmin -printTopology` from a datanode report: one block per rack, racks and then
/// nodes (`ip:port`) in sorted order, each node followed by its host name and a blank
/// line after each rack, as Hadoop's DFSAdmin prints it. Hadoop looks the host name up
/// by reverse DNS; the name the DataNode registered with is shown here.
pub fn topology_text(nodes: &[DatanodeInfoProto]) -> String {
    use std::collections::{BTreeMap, BTreeSet};
    let mut racks: BTreeMap<&str, BTreeSet<(String, &str)>> = BTreeMap::new();
    for d in nodes {
        let rack = d.location.as_deref().unwrap_or("/default-rack");
        let name = format!("{}:{}", d.id.ip_addr, d.id.xfer_port);
        racks
            .entry(rack)
            .or_default()
            .insert((name, d.id.host_name.as_str()));
    }
    let mut s = String::new();
    for (rack, nodes) in racks {
        let _ = writeln!(s, "Rack: {rack}");
        for (name, host) in nodes {
            if host.is_empty() {
                let _ = writeln!(s, "   {name}");
            } else {
                let _ = writeln!(s, "   {name} ({host})");
            }
        }
        s.push('\n');
    }
    s
}

/// `dfsadmin -printTopology`: every DataNode the NameNode at `addr` knows, by rack.
pub async fn print_topology(addr: &str, user: &str) -> Result<String, IpcError> {
    let client = RpcClient::connect(addr, CLIENT_PROTOCOL, user).await?;
    Ok(topology_text(&nodes(&client, ALL).await?))
}

/// `dfsadmin -metasave FILE`: the NameNode writes FILE in its log directory.
pub async fn meta_save(addr: &str, user: &str, filename: &str) -> Result<(), IpcError> {
    let client = RpcClient::connect(addr, CLIENT_PROTOCOL, user).await?;
    let _: MetaSaveResponseProto = client
        .call(
            "metaSave",
            &MetaSaveRequestProto {
                filename: filename.to_string(),
            },
        )
        .await?;
    Ok(())
}

/// One ClientDatanodeProtocol call to the DataNode at `datanode_ipc_addr` as `user`.
async fn call_datanode<Req: prost::Message, Resp: prost::Message + Default>(
    datanode_ipc_addr: &str,
    user: &str,
    method: &str,
    req: &Req,
) -> Result<Resp, IpcError> {
    let client = RpcClient::connect(datanode_ipc_addr, CLIENT_DATANODE_PROTOCOL, user).await?;
    client.call(method, req).await
}

/// `dfsadmin -getDatanodeInfo host:ipc_port`: Hadoop's DatanodeLocalInfo report line.
pub async fn get_datanode_info(datanode_ipc_addr: &str, user: &str) -> Result<String, IpcError> {
    let r: GetDatanodeInfoResponseProto = call_datanode(
        datanode_ipc_addr,
        user,
        "getDatanodeInfo",
        &GetDatanodeInfoRequestProto {},
    )
    .await?;
    let i = r.local_info;
    Ok(format!(
        "Uptime: {}, Software version: {}, Config version: {}",
        i.uptime, i.software_version, i.config_version
    ))
}

/// `dfsadmin -shutdownDatanode host:ipc_port [upgrade]` (ClientDatanodeProtocol).
pub async fn shutdown_datanode(
    datanode_ipc_addr: &str,
    user: &str,
    for_upgrade: bool,
) -> Result<(), IpcError> {
    let _: ShutdownDatanodeResponseProto = call_datanode(
        datanode_ipc_addr,
        user,
        "shutdownDatanode",
        &ShutdownDatanodeRequestProto { for_upgrade },
    )
    .await?;
    Ok(())
}

/// `dfsadmin -evictWriters host:ipc_port` (ClientDatanodeProtocol).
pub async fn evict_writers(datanode_ipc_addr: &str, user: &str) -> Result<(), IpcError> {
    let _: EvictWritersResponseProto = call_datanode(
        datanode_ipc_addr,
        user,
        "evictWriters",
        &EvictWritersRequestProto {},
    )
    .await?;
    Ok(())
}

/// `dfsadmin -triggerBlockReport [-incremental] host:ipc_port` (ClientDatanodeProtocol).
pub async fn trigger_block_report(
    datanode_ipc_addr: &str,
    user: &str,
    incremental: bool,
) -> Result<(), IpcError> {
    let _: TriggerBlockReportResponseProto = call_datanode(
        datanode_ipc_addr,
        user,
        "triggerBlockReport",
        &TriggerBlockReportRequestProto {
            incremental,
            nn_address: None,
        },
    )
    .await?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_proto::hdfs::DatanodeIdProto;

    #[test]
    fn topology_groups_nodes_by_rack_in_order() {
        let at = |ip: &str, port: u32, host: &str, rack: Option<&str>| DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: ip.into(),
                host_name: host.into(),
                xfer_port: port,
                ..DatanodeIdProto::default()
            },
            location: rack.map(str::to_string),
            ..DatanodeInfoProto::default()
        };
        let text = topology_text(&[
            at("10.0.0.2", 9866, "dn2", Some("/r2")),
            at("10.0.0.1", 9866, "dn1", Some("/r1")),
            at("10.0.0.3", 9866, "", Some("/r1")),
            at("10.0.0.4", 9866, "dn4", None),
        ]);
        assert_eq!(
            text,
            "Rack: /default-rack\n   10.0.0.4:9866 (dn4)\n\n\
             Rack: /r1\n   10.0.0.1:9866 (dn1)\n   10.0.0.3:9866\n\n\
             Rack: /r2\n   10.0.0.2:9866 (dn2)\n\n"
        );
        assert_eq!(topology_text(&[]), "");
    }

    fn node() -> DatanodeInfoProto {
        DatanodeInfoProto {
            id: DatanodeIdProto {
                ip_addr: "172.18.0.3".into(),
                host_name: "89c6388b311e".into(),
                datanode_uuid: "u".into(),
                xfer_port: 9866,
                info_port: 9864,
                ipc_port: 9867,
                info_secure_port: Some(0),
            },
            capacity: Some(274_877_906_944),
            dfs_used: Some(4096),
            remaining: Some(271_212_994_560),
            non_dfs_used: Some(1_605_505_024),
            last_update: Some(1_771_960_651_000),
            xceiver_count: Some(1),
            location: Some("/default-rack".into()),
            admin_state: Some(0),
            cache_capacity: Some(0),
            cache_used: Some(0),
            last_block_report_time: Some(1_771_960_357_000),
            num_blocks: Some(0),
            ..DatanodeInfoProto::default()
        }
    }

    #[test]
    fn datanode_section_matches_hadoop() {
        let expected = "Name: 172.18.0.3:9866 (89c6388b311e)\nHostname: 89c6388b311e\nDecommission Status : Normal\nConfigured Capacity: 274877906944 (256 GB)\nDFS Used: 4096 (4 KB)\nNon DFS Used: 1605505024 (1.50 GB)\nDFS Remaining: 271212994560 (252.59 GB)\nDFS Used%: 0.00%\nDFS Remaining%: 98.67%\nConfigured Cache Capacity: 0 (0 B)\nCache Used: 0 (0 B)\nCache Remaining: 0 (0 B)\nCache Used%: 100.00%\nCache Remaining%: 0.00%\nXceivers: 1\nLast contact: Tue Feb 24 19:17:31 UTC 2026\nLast Block Report: Tue Feb 24 19:12:37 UTC 2026\nNum of Blocks: 0\n";
        assert_eq!(datanode_text(&node()), expected);
    }

    #[test]
    fn report_matches_hadoop() {
        let data = ReportData {
            stats: GetFsStatsResponseProto {
                capacity: 274_877_906_944,
                used: 4096,
                remaining: 271_212_994_560,
                ..GetFsStatsResponseProto::default()
            },
            replicated: Some(GetFsReplicatedBlockStatsResponseProto {
                highest_prio_low_redundancy_blocks: Some(0),
                ..GetFsReplicatedBlockStatsResponseProto::default()
            }),
            live: vec![node()],
            ..ReportData::default()
        };
        let text = report_text(&data, ReportFilter::default());
        let head = "Configured Capacity: 274877906944 (256 GB)\nPresent Capacity: 271212998656 (252.59 GB)\nDFS Remaining: 271212994560 (252.59 GB)\nDFS Used: 4096 (4 KB)\nDFS Used%: 0.00%\nReplicated Blocks:\n\tUnder replicated blocks: 0\n\tBlocks with corrupt replicas: 0\n\tMissing blocks: 0\n\tMissing blocks (with replication factor 1): 0\n\tLow redundancy blocks with highest priority to recover: 0\n\tPending deletion blocks: 0\nErasure Coded Block Groups: \n\tLow redundancy block groups: 0\n\tBlock groups with corrupt internal blocks: 0\n\tMissing block groups: 0\n\tLow redundancy blocks with highest priority to recover: 0\n\tPending deletion blocks: 0\n\n-------------------------------------------------\nLive datanodes (1):\n\nName: 172.18.0.3:9866 (89c6388b311e)\n";
        assert!(text.starts_with(head), "{text}");
        assert!(text.ends_with("Num of Blocks: 0\n\n\n"), "{text}");
        let dead_only = report_text(
            &data,
            ReportFilter {
                dead: true,
                ..ReportFilter::default()
            },
        );
        assert!(dead_only.ends_with(
            "-------------------------------------------------\nDead datanodes (0):\n\n"
        ));
    }
}
