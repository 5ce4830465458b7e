//! `/jmx` (JSON beans named as Hadoop's: FSNamesystem, FSNamesystemState, plus the
//! block manager's lock hold statistics and rhdfs's DatanodeLiveness counters) and
//! `/metrics` (Prometheus text).

use std::fmt::Write as _;

use crate::namesystem::Namesystem;

/// A JSON value of a bean attribute.
enum Val {
    Num(u64),
    Str(String),
}

fn bean(name: &str, attrs: &[(String, Val)]) -> String {
    let mut s = format!("  {{\n    \"name\" : {}", rhdfs_conf::json::string(name));
    for (k, v) in attrs {
        let v = match v {
            Val::Num(n) => n.to_string(),
            Val::Str(t) => rhdfs_conf::json::string(t),
        };
        let _ = write!(s, ",\n    {} : {v}", rhdfs_conf::json::string(k));
    }
    s.push_str("\n  }");
    s
}

/// Matches a JMX object name against `qry` ('*' matches any run of characters).
fn matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let mut rest = name;
    for (i, p) in parts.iter().enumerate() {
        if i == 0 {
            match rest.strip_prefix(p) {
                Some(r) => rest = r,
                None => return false,
            }
        } else if i == parts.len() - 1 {
            return rest.ends_with(p);
        } else {
            match rest.find(p) {
                Some(pos) => rest = &rest[pos + p.len()..],
                None => return false,
            }
        }
    }
    true
}

fn beans(fs: &Namesystem, host: &str) -> Vec<(String, Vec<(String, Val)>)> {
    let bm = fs.block_manager();
    let s = bm.fs_stats();
    let files_total = fs.with_ns(|ns| ns.dir().inode_count()) as u64;
    let nodes = bm.node_counts();
    let (future, orphans) = (fs.future_replicas(), fs.orphan_counts());
    let a = |k: &str, v: Val| (k.to_string(), v);
    let fsn = vec![
        a("modelerType", Val::Str("FSNamesystem".into())),
        a("tag.Context", Val::Str("dfs".into())),
        a("tag.HAState", Val::Str("active".into())),
        a("tag.Hostname", Val::Str(host.to_string())),
        a("MissingBlocks", Val::Num(s.missing_blocks)),
        a("MissingReplOneBlocks", Val::Num(s.missing_repl_one)),
        a("CapacityTotal", Val::Num(s.capacity)),
        a("CapacityUsed", Val::Num(s.used)),
        a("CapacityRemaining", Val::Num(s.remaining)),
        a("BlocksTotal", Val::Num(s.blocks_total)),
        a("FilesTotal", Val::Num(files_total)),
        a("UnderReplicatedBlocks", Val::Num(s.under_replicated)),
        a("LowRedundancyBlocks", Val::Num(s.under_replicated)),
        a("CorruptBlocks", Val::Num(s.corrupt_blocks)),
        a(
            "PostponedMisreplicatedBlocks",
            Val::Num(bm.postponed_misreplicated_blocks() as u64),
        ),
        a(
            "PendingDeletionBlocks",
            Val::Num(s.pending_deletion + s.pending_deletion_commands),
        ),
        a("NumLiveDataNodes", Val::Num(s.live_datanodes)),
        a("NumDeadDataNodes", Val::Num(s.dead_datanodes)),
        a("BlocksInFuture", Val::Num(future.replicas)),
        a("BytesInFuture", Val::Num(future.bytes)),
        a("HeldOrphanReplicas", Val::Num(orphans.replicas)),
        a("HeldOrphanBytes", Val::Num(orphans.bytes)),
    ];
    let state = vec![
        a("modelerType", Val::Str("FSNamesystemState".into())),
        a("CapacityTotal", Val::Num(s.capacity)),
        a("CapacityUsed", Val::Num(s.used)),
        a("CapacityRemaining", Val::Num(s.remaining)),
        a("BlocksTotal", Val::Num(s.blocks_total)),
        a("FilesTotal", Val::Num(files_total)),
        a("PendingReplicationBlocks", Val::Num(0)),
        a("UnderReplicatedBlocks", Val::Num(s.under_replicated)),
        a("NumLiveDataNodes", Val::Num(nodes.live as u64)),
        a("NumDeadDataNodes", Val::Num(nodes.dead as u64)),
        a("FSState", Val::Str("Operational".into())),
    ];
    let mut locks = vec![a("modelerType", Val::Str("BlockManagerLocks".into()))];
    // Block-manager locks and the namespace lock (lock "namesystem").
    for st in bm.lock_stats().into_iter().chain(fs.ns_lock_stats()) {
        let p = format!("{}.{}", st.lock, st.op);
        locks.push(a(&format!("{p}.Count"), Val::Num(st.count)));
        locks.push(a(
            &format!("{p}.MaxHoldMicros"),
            Val::Num(st.max_hold.as_micros() as u64),
        ));
        locks.push(a(
            &format!("{p}.TotalHoldMicros"),
            Val::Num(st.total_hold.as_micros() as u64),
        ));
        locks.push(a(
            &format!("{p}.MaxWaitMicros"),
            Val::Num(st.max_wait.as_micros() as u64),
        ));
    }
    // Not one of Hadoop's beans: DataNode liveness events, hence the rhdfs domain.
    let c = bm.liveness_counters();
    let liveness = vec![
        a("modelerType", Val::Str("DatanodeLiveness".into())),
        a("Registrations", Val::Num(c.registrations)),
        a("DeclaredDead", Val::Num(c.declared_dead)),
        a("HeartbeatScans", Val::Num(c.heartbeat_scans)),
        a("HeartbeatScansSkipped", Val::Num(c.skipped_scans)),
    ];
    // Not one of Hadoop's beans: the blocks map against the namespace (equal once
    // deletions are removed from the map), and the held orphans.
    let consistency = vec![
        a("modelerType", Val::Str("BlockConsistency".into())),
        a(
            "NamespaceBlocks",
            Val::Num(fs.with_ns(|ns| ns.total_blocks()) as u64),
        ),
        a("BlocksMapBlocks", Val::Num(s.blocks_total)),
        a("PendingRemovalBlocks", Val::Num(s.pending_removal)),
        a("HeldOrphanReplicas", Val::Num(orphans.replicas)),
        a("ReplicasInFuture", Val::Num(future.replicas)),
    ];
    vec![
        ("Hadoop:service=NameNode,name=FSNamesystem".to_string(), fsn),
        (
            "Hadoop:service=NameNode,name=FSNamesystemState".to_string(),
            state,
        ),
        (
            "Hadoop:service=NameNode,name=BlockManagerLocks".to_string(),
            locks,
        ),
        (
            "rhdfs:service=NameNode,name=DatanodeLiveness".to_string(),
            liveness,
        ),
        (
            "rhdfs:service=NameNode,name=BlockConsistency".to_string(),
            consistency,
        ),
        (
            "Hadoop:service=NameNode,name=NameNodeStatus".to_string(),
            super::slow_nodes::slow_node_attributes(bm)
                .into_iter()
                .map(|(k, v)| a(k, Val::Str(v)))
                .collect(),
        ),
    ]
}

/// The `/jmx` JSON document (`{"beans" : [...]}`), optionally filtered by `qry`.
pub fn jmx(fs: &Namesystem, host: &str, qry: Option<&str>) -> String {
    let list: Vec<String> = beans(fs, host)
        .into_iter()
        .filter(|(name, _)| qry.is_none_or(|q| matches(q, name)))
        .map(|(name, attrs)| bean(&name, &attrs))
        .collect();
    format!("{{\n  \"beans\" : [\n{}\n  ]\n}}\n", list.join(",\n"))
}

/// Prometheus text exposition of the namesystem figures and the lock statistics.
pub fn prometheus(fs: &Namesystem) -> String {
    let bm = fs.block_manager();
    let s = bm.fs_stats();
    let files_total = fs.with_ns(|ns| ns.dir().inode_count()) as u64;
    let mut out = String::new();
    let mut gauge = |name: &str, help: &str, v: u64| {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}");
    };
    gauge(
        "rhdfs_namenode_capacity_total_bytes",
        "Configured capacity of live DataNodes.",
        s.capacity,
    );
    gauge(
        "rhdfs_namenode_capacity_used_bytes",
        "DFS used on live DataNodes.",
        s.used,
    );
    gauge(
        "rhdfs_namenode_capacity_remaining_bytes",
        "DFS remaining on live DataNodes.",
        s.remaining,
    );
    gauge(
        "rhdfs_namenode_blocks_total",
        "Blocks in the blocks map.",
        s.blocks_total,
    );
    gauge(
        "rhdfs_namenode_files_total",
        "Inodes in the namespace.",
        files_total,
    );
    gauge(
        "rhdfs_namenode_under_replicated_blocks",
        "Blocks with fewer live replicas than expected.",
        s.under_replicated,
    );
    gauge(
        "rhdfs_namenode_corrupt_blocks",
        "Blocks with corrupt replicas.",
        s.corrupt_blocks,
    );
    gauge(
        "rhdfs_namenode_missing_blocks",
        "Blocks with no live replica.",
        s.missing_blocks,
    );
    gauge(
        "rhdfs_namenode_postponed_misreplicated_blocks",
        "Over-replicated blocks waiting for stale storages to report.",
        bm.postponed_misreplicated_blocks() as u64,
    );
    gauge(
        "rhdfs_namenode_pending_deletion_blocks",
        "Replicas waiting for deletion.",
        s.pending_deletion + s.pending_deletion_commands,
    );
    let orphans = fs.orphan_counts();
    gauge(
        "rhdfs_namenode_held_orphan_replicas",
        "Replicas of blocks the namespace does not know, held on the DataNodes instead of deleted.",
        orphans.replicas,
    );
    gauge(
        "rhdfs_namenode_held_orphan_bytes",
        "Bytes of the held orphan replicas.",
        orphans.bytes,
    );
    let future = fs.future_replicas();
    gauge(
        "rhdfs_namenode_replicas_in_future",
        "Held replicas with a generation stamp newer than the namespace's (they keep start-up safe mode on).",
        future.replicas,
    );
    gauge(
        "rhdfs_namenode_bytes_in_future",
        "Bytes of the held replicas with a generation stamp newer than the namespace's.",
        future.bytes,
    );
    gauge(
        "rhdfs_namenode_live_datanodes",
        "Live DataNodes.",
        s.live_datanodes,
    );
    gauge(
        "rhdfs_namenode_dead_datanodes",
        "Dead DataNodes.",
        s.dead_datanodes,
    );
    let c = bm.liveness_counters();
    for (name, help, v) in [
        (
            "rhdfs_namenode_datanode_registrations_total",
            "DataNode registrations (re-registrations included).",
            c.registrations,
        ),
        (
            "rhdfs_namenode_datanodes_declared_dead_total",
            "DataNodes the heartbeat checker declared dead.",
            c.declared_dead,
        ),
        (
            "rhdfs_namenode_heartbeat_scans_total",
            "Heartbeat checker passes that scanned.",
            c.heartbeat_scans,
        ),
        (
            "rhdfs_namenode_heartbeat_scans_skipped_total",
            "Heartbeat checker passes skipped after the checker was held up.",
            c.skipped_scans,
        ),
    ] {
        let _ = writeln!(
            out,
            "# HELP {name} {help}\n# TYPE {name} counter\n{name} {v}"
        );
    }
    let mut stats = bm.lock_stats();
    stats.extend(fs.ns_lock_stats());
    let series: [(&str, &str, &str); 4] = [
        (
            "rhdfs_blockmanager_lock_holds_total",
            "counter",
            "Lock acquisitions per lock and operation.",
        ),
        (
            "rhdfs_blockmanager_lock_max_hold_seconds",
            "gauge",
            "Longest hold per lock and operation.",
        ),
        (
            "rhdfs_blockmanager_lock_hold_seconds_total",
            "counter",
            "Total hold time per lock and operation.",
        ),
        (
            "rhdfs_blockmanager_lock_max_wait_seconds",
            "gauge",
            "Longest wait per lock and operation.",
        ),
    ];
    for (i, (name, kind, help)) in series.iter().enumerate() {
        let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
        for st in &stats {
            let v = match i {
                0 => st.count.to_string(),
                1 => format!("{:.6}", st.max_hold.as_secs_f64()),
                2 => format!("{:.6}", st.total_hold.as_secs_f64()),
                _ => format!("{:.6}", st.max_wait.as_secs_f64()),
            };
            let _ = writeln!(out, "{name}{{lock=\"{}\",op=\"{}\"}} {v}", st.lock, st.op);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn patterns() {
        assert!(matches(
            "Hadoop:service=NameNode,name=FSNamesystem",
            "Hadoop:service=NameNode,name=FSNamesystem"
        ));
        assert!(!matches(
            "Hadoop:service=NameNode,name=FSNamesystem",
            "Hadoop:service=NameNode,name=FSNamesystemState"
        ));
        assert!(matches(
            "Hadoop:service=NameNode,*",
            "Hadoop:service=NameNode,name=X"
        ));
        assert!(matches(
            "*State",
            "Hadoop:service=NameNode,name=FSNamesystemState"
        ));
    }

    #[test]
    fn json_escapes() {
        assert_eq!(rhdfs_conf::json::string("a\"b\\\n"), "\"a\\\"b\\\\\\n\"");
        let b = bean(
            "n",
            &[
                ("k".into(), Val::Num(1)),
                ("s".into(), Val::Str("v".into())),
            ],
        );
        assert_eq!(
            b,
            "  {\n    \"name\" : \"n\",\n    \"k\" : 1,\n    \"s\" : \"v\"\n  }"
        );
    }
}
