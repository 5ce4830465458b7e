//! Issue 5, "What must work" item 5: fsck (the NameNode's `/fsck`) and `dfsadmin -report`
//! print Hadoop's format line by line on a cluster with healthy, under-replicated,
//! corrupt and missing blocks, and their counts match the block manager's.

use crate::common;

use std::time::Duration;

use hdfs_native::WriteOptions;
use rhdfs_blockmanager::views::{BlockView, ReplicaStatus};
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::fsck::dfsadmin::{self, ReportFilter};
use rhdfs_namenode::fsdir::FsPath;
use rhdfs_namenode::http::client::get;

const TIMEOUT: Duration = Duration::from_secs(60);

/// The blocks (id) of a file, from the namespace.
fn block_ids(cluster: &MiniCluster, path: &str) -> anyhow::Result<Vec<u64>> {
    let p = FsPath::parse(path).map_err(|e| anyhow::anyhow!("{e}"))?;
    cluster
        .namenode()
        .namesystem()
        .with_ns(|ns| {
            let dir = ns.dir();
            let id = dir.resolve(&p).last()?;
            Some(
                dir.get(id)?
                    .as_file()?
                    .blocks
                    .iter()
                    .map(|b| b.id)
                    .collect(),
            )
        })
        .ok_or_else(|| anyhow::anyhow!("{path} is not a file"))
}

fn view(cluster: &MiniCluster, id: u64) -> anyhow::Result<BlockView> {
    cluster
        .namenode()
        .block_manager()
        .block_views(&[id])
        .pop()
        .flatten()
        .ok_or_else(|| anyhow::anyhow!("block {id} unknown"))
}

fn live_counts(cluster: &MiniCluster, ids: &[u64]) -> Vec<usize> {
    cluster
        .namenode()
        .block_manager()
        .block_views(ids)
        .into_iter()
        .map(|v| v.map_or(0, |v| v.live))
        .collect()
}

async fn fsck(cluster: &MiniCluster, query: &str) -> anyhow::Result<String> {
    let addr = common::nn_http(cluster)?;
    let (code, body) = get(&addr, query, TIMEOUT).await?;
    anyhow::ensure!(code == 200, "HTTP {code}: {body}");
    Ok(body)
}

fn locations(v: &BlockView) -> String {
    let parts: Vec<String> = v
        .replicas
        .iter()
        .map(|r| {
            format!(
                "DatanodeInfoWithStorage[{},{},DISK]({})",
                r.xfer_addr,
                r.storage_id,
                r.status.label()
            )
        })
        .collect();
    format!("  [{}]", parts.join(", "))
}

/// Compares line by line; lines of `want` that end with '*' match by prefix.
fn assert_lines(got: &str, want: &str) {
    let g: Vec<&str> = got.split('\n').collect();
    let w: Vec<&str> = want.split('\n').collect();
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        match b.strip_suffix('*') {
            Some(prefix) => assert!(a.starts_with(prefix), "line {i}: {a:?} !~ {b:?}\n{got}"),
            None => assert_eq!(a, b, "line {i}\n--- got:\n{got}"),
        }
    }
    assert_eq!(g.len(), w.len(), "line count\n--- got:\n{got}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fsck_and_report_match_hadoop() -> anyhow::Result<()> {
    let mut cluster = MiniCluster::builder()
        .datanodes(3)
        .conf("dfs.heartbeat.interval", "1")
        .conf("dfs.namenode.heartbeat.recheck-interval", "500")
        .build()
        .await?;
    let client = common::native_client(&cluster.uri())?;
    let user = common::current_user();
    let bm = cluster.namenode().block_manager();
    let pool = bm.block_pool_id().to_string();
    client.mkdirs("/ops", 0o755, true).await?;

    // Healthy at first: three replicas, and one replica.
    let write = |path: &'static str, len: usize, repl: u32| {
        let client = &client;
        async move {
            let data = common::random_bytes(len, len as u64);
            common::native_write(
                client,
                path,
                &data,
                WriteOptions::default().replication(repl),
                len,
            )
            .await
        }
    };
    write("/ops/healthy3", 3000, 3).await?;
    write("/ops/one", 4000, 1).await?;
    let h3 = block_ids(&cluster, "/ops/healthy3")?[0];
    let one = block_ids(&cluster, "/ops/one")?[0];
    common::poll_until("all replicas reported", TIMEOUT, || {
        let live = live_counts(&cluster, &[h3, one]);
        async move {
            if live == [3, 1] {
                Ok(())
            } else {
                Err(format!("live {live:?}"))
            }
        }
    })
    .await?;
    let healthy = fsck(&cluster, &format!("/fsck?ugi={user}&path=/")).await?;
    assert!(
        healthy.ends_with("\n\nThe filesystem under path '/' is HEALTHY"),
        "{healthy}"
    );
    assert!(
        healthy.contains("\nStatus: HEALTHY\n Number of data-nodes:\t3\n"),
        "{healthy}"
    );

    // Stop the DataNode holding /ops/one: its block goes missing, /ops/healthy3 is
    // under-replicated (no fourth node to copy to).
    let holder = view(&cluster, one)?.replicas[0].xfer_addr.clone();
    let idx = (0..3)
        .find(|i| {
            cluster.datanode(*i).is_some_and(|d| {
                d.xfer_addr().port().to_string() == holder.rsplit(':').next().unwrap_or("")
            })
        })
        .ok_or_else(|| anyhow::anyhow!("no DataNode at {holder}"))?;
    cluster.stop_datanode(idx).await?;
    common::poll_until("the DataNode declared dead", TIMEOUT, || {
        let dead = bm.node_counts().dead;
        async move {
            if dead == 1 {
                Ok(())
            } else {
                Err(format!("{dead} dead"))
            }
        }
    })
    .await?;

    // The heartbeat checker drops the dead node's replicas from the blocks map.
    common::poll_until("the dead node's replicas dropped", TIMEOUT, || {
        let missing = bm.fs_stats().missing_blocks;
        async move {
            if missing == 1 {
                Ok(())
            } else {
                Err(format!("{missing} missing"))
            }
        }
    })
    .await?;

    // Written on the two survivors: healthy with 2, and 1 replica then reported bad.
    write("/ops/after2", 1000, 2).await?;
    write("/ops/corrupt1", 2000, 1).await?;
    let a2 = block_ids(&cluster, "/ops/after2")?[0];
    let c1 = block_ids(&cluster, "/ops/corrupt1")?[0];
    common::poll_until("new replicas reported", TIMEOUT, || {
        let live = live_counts(&cluster, &[a2, c1]);
        async move {
            if live == [2, 1] {
                Ok(())
            } else {
                Err(format!("live {live:?}"))
            }
        }
    })
    .await?;
    let cv = view(&cluster, c1)?;
    let r = &cv.replicas[0];
    bm.report_bad_block(cv.block, &r.dn_uuid, Some(&r.storage_id));
    let cv = view(&cluster, c1)?;
    assert!(cv.is_corrupt && cv.replicas[0].status == ReplicaStatus::Corrupt);

    let (va2, vh3, vone) = (
        view(&cluster, a2)?,
        view(&cluster, h3)?,
        view(&cluster, one)?,
    );
    assert_eq!((va2.live, vh3.live, vone.live), (2, 2, 0));
    let blk = |v: &BlockView| format!("{pool}:blk_{}_{}", v.block.id, v.block.gs);
    let repl = cluster
        .conf()
        .get("dfs.replication")
        .unwrap_or("3")
        .to_string();

    let got = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&files=1&blocks=1&locations=1&replicadetails=1&path=/ops"),
    )
    .await?;
    let want = format!(
        "FSCK started by {user} (auth:SIMPLE) from /127.0.0.1 for path /ops at *

/ops <dir>
/ops/after2 1000 bytes, replicated: replication=2, 1 block(s):  OK
0. {a2b} len=1000 Live_repl=2{a2l}

/ops/corrupt1 2000 bytes, replicated: replication=1, 1 block(s): 
/ops/corrupt1: CORRUPT blockpool {pool} block blk_{c1id}
 CORRUPT 1 blocks of total size 2000 B
0. {c1b} len=2000 Live_repl=0{c1l}

/ops/healthy3 3000 bytes, replicated: replication=3, 1 block(s):  Under replicated {h3b}. Target Replicas is 3 but found 2 live replica(s), 0 decommissioned replica(s), 0 decommissioning replica(s).
0. {h3b} len=3000 Live_repl=2{h3l}

/ops/one 4000 bytes, replicated: replication=1, 1 block(s):  MISSING 1 blocks of total size 4000 B
0. {oneb} len=4000 MISSING!


Status: CORRUPT
 Number of data-nodes:\t2
 Number of racks:\t\t1
 Total dirs:\t\t\t1
 Total symlinks:\t\t0

Replicated Blocks:
 Total size:\t10000 B
 Total files:\t4
 Total blocks (validated):\t4 (avg. block size 2500 B)
  ********************************
  UNDER MIN REPL'D BLOCKS:\t2 (50.0 %)
  MINIMAL BLOCK REPLICATION:\t1
  CORRUPT FILES:\t2
  MISSING BLOCKS:\t1
  MISSING SIZE:\t\t4000 B
  CORRUPT BLOCKS: \t1
  CORRUPT SIZE:\t\t2000 B
  ********************************
 Minimally replicated blocks:\t2 (50.0 %)
 Over-replicated blocks:\t0 (0.0 %)
 Under-replicated blocks:\t1 (25.0 %)
 Mis-replicated blocks:\t\t0 (0.0 %)
 Default replication factor:\t{repl}
 Average block replication:\t1.0
 Missing blocks:\t\t1
 Corrupt blocks:\t\t1
 Missing replicas:\t\t1 (14.285714 %)
 Blocks queued for replication:\t0

Erasure Coded Block Groups:
 Total size:\t0 B
 Total files:\t0
 Total block groups (validated):\t0
 Minimally erasure-coded block groups:\t0
 Over-erasure-coded block groups:\t0
 Under-erasure-coded block groups:\t0
 Unsatisfactory placement block groups:\t0
 Average block group size:\t0.0
 Missing block groups:\t\t0
 Corrupt block groups:\t\t0
 Missing internal blocks:\t0
 Blocks queued for replication:\t0
FSCK ended at *


The filesystem under path '/ops' is CORRUPT",
        a2b = blk(&va2),
        a2l = locations(&va2),
        c1id = cv.block.id,
        c1b = blk(&cv),
        c1l = locations(&cv),
        h3b = blk(&vh3),
        h3l = locations(&vh3),
        oneb = blk(&vone),
    );
    assert_lines(&got, &want);

    // Counts agree with the block manager's.
    let stats = bm.fs_stats();
    assert_eq!(stats.under_replicated, 1, "{stats:?}");
    assert_eq!(stats.corrupt_blocks, 1);
    assert_eq!(stats.missing_blocks, 2, "missing + only-corrupt");

    // Without -files: the problems only.
    let short = fsck(&cluster, &format!("/fsck?ugi={user}&path=/ops")).await?;
    assert!(short.contains(&format!(
        "\n/ops/corrupt1: CORRUPT blockpool {pool} block blk_{}\n\n/ops/corrupt1: CORRUPT 1 blocks of total size 2000 B.\n/ops/healthy3:  Under replicated {}. Target Replicas",
        cv.block.id,
        blk(&vh3)
    )), "{short}");
    assert!(
        short.contains("\n/ops/one: MISSING 1 blocks of total size 4000 B.\nStatus: CORRUPT\n"),
        "{short}"
    );

    // -racks
    let racks = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&files=1&blocks=1&racks=1&path=/ops/after2"),
    )
    .await?;
    let rack_list: Vec<String> = va2
        .replicas
        .iter()
        .map(|r| format!("/default-rack/{}", r.xfer_addr))
        .collect();
    assert!(
        racks.contains(&format!(
            "0. {} len=1000 Live_repl=2  [{}]\n",
            blk(&va2),
            rack_list.join(", ")
        )),
        "{racks}"
    );
    assert!(racks.ends_with("is HEALTHY"), "{racks}");

    // -list-corruptfileblocks
    let list = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&listcorruptfileblocks=1&path=/"),
    )
    .await?;
    let mut wanted = [(c1, "/ops/corrupt1"), (one, "/ops/one")];
    wanted.sort();
    let body: Vec<&str> = list.lines().skip(1).collect();
    assert_eq!(body[0], "Cookie:\t2", "{list}");
    assert_eq!(body[1], format!("blk_{}\t{}", wanted[0].0, wanted[0].1));
    assert_eq!(body[2], format!("blk_{}\t{}", wanted[1].0, wanted[1].1));
    assert!(
        list.contains("The filesystem under path '/' has 2 CORRUPT files"),
        "{list}"
    );
    let more = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&listcorruptfileblocks=1&startblockafter=2&path=/"),
    )
    .await?;
    assert!(more.contains("has no more CORRUPT files"), "{more}");

    // dfsadmin -report
    let nn = cluster.namenode().rpc_addr().to_string();
    let report = dfsadmin::report(&nn, &user, ReportFilter::default()).await?;
    let lines: Vec<&str> = report.lines().collect();
    assert!(lines[0].starts_with("Configured Capacity: "), "{report}");
    assert!(lines[1].starts_with("Present Capacity: "));
    assert!(lines[2].starts_with("DFS Remaining: "));
    assert!(lines[3].starts_with("DFS Used: "));
    assert!(lines[4].starts_with("DFS Used%: ") && lines[4].ends_with('%'));
    assert_eq!(
        &lines[5..19],
        &[
            "Replicated Blocks:",
            "\tUnder replicated blocks: 1",
            "\tBlocks with corrupt replicas: 1",
            "\tMissing blocks: 2",
            "\tMissing blocks (with replication factor 1): 2",
            "\tLow redundancy blocks with highest priority to recover: 0",
            "\tPending deletion blocks: 0",
            "Erasure Coded Block Groups: ",
            "\tLow redundancy block groups: 0",
            "\tBlock groups with corrupt internal blocks: 0",
            "\tMissing block groups: 0",
            "\tLow redundancy blocks with highest priority to recover: 0",
            "\tPending deletion blocks: 0",
            "",
        ][..],
        "{report}"
    );
    assert_eq!(
        lines[19],
        "-------------------------------------------------"
    );
    assert_eq!(lines[20], "Live datanodes (2):");
    assert_eq!(lines[21], "");
    let names = [
        "Name: ",
        "Hostname: ",
        "Decommission Status : Normal",
        "Configured Capacity: ",
        "DFS Used: ",
        "Non DFS Used: ",
        "DFS Remaining: ",
        "DFS Used%: ",
        "DFS Remaining%: ",
        "Configured Cache Capacity: 0 (0 B)",
        "Cache Used: 0 (0 B)",
        "Cache Remaining: 0 (0 B)",
        "Cache Used%: 100.00%",
        "Cache Remaining%: 0.00%",
        "Xceivers: ",
        "Last contact: ",
        "Last Block Report: ",
        "Num of Blocks: ",
    ];
    for (n, section) in [22usize, 22 + 20].iter().enumerate() {
        for (i, prefix) in names.iter().enumerate() {
            let l = lines[section + i];
            assert!(l.starts_with(prefix), "node {n} line {i}: {l:?}\n{report}");
        }
        assert_eq!(lines[section + names.len()], "");
        assert_eq!(lines[section + names.len() + 1], "");
    }
    assert_eq!(lines[62], "Dead datanodes (1):", "{report}");
    assert!(
        lines[64].starts_with(&format!("Name: {holder}")),
        "{report}"
    );
    let dead_only = dfsadmin::report(
        &nn,
        &user,
        ReportFilter {
            dead: true,
            ..ReportFilter::default()
        },
    )
    .await?;
    assert!(
        dead_only.contains(
            "-------------------------------------------------\nDead datanodes (1):\n\nName: "
        ),
        "{dead_only}"
    );
    assert!(!dead_only.contains("Live datanodes"));

    // metasave
    let dir = tempfile::tempdir()?;
    let file = dir.path().join("meta.txt");
    dfsadmin::meta_save(&nn, &user, &file.to_string_lossy()).await?;
    let meta = std::fs::read_to_string(&file)?;
    assert!(
        meta.contains("Live Datanodes: 2\nDead Datanodes: 1\n"),
        "{meta}"
    );
    assert!(
        meta.contains("Metasave: Blocks waiting for reconstruction: 3\n"),
        "{meta}"
    );
    assert!(
        meta.contains("Metasave: Number of datanodes: 3\n"),
        "{meta}"
    );

    // /jmx and /metrics
    let jmx = fsck(
        &cluster,
        "/jmx?qry=Hadoop:service=NameNode,name=FSNamesystem",
    )
    .await?;
    assert!(
        jmx.contains("\"name\" : \"Hadoop:service=NameNode,name=FSNamesystem\""),
        "{jmx}"
    );
    assert!(jmx.contains("\"MissingBlocks\" : 2"), "{jmx}");
    assert!(!jmx.contains("FSNamesystemState"));
    let prom = fsck(&cluster, "/metrics").await?;
    assert!(
        prom.contains("rhdfs_blockmanager_lock_max_hold_seconds{lock=\"blocks\""),
        "{prom}"
    );
    assert!(
        prom.contains("\nrhdfs_namenode_missing_blocks 2\n"),
        "{prom}"
    );

    // -delete removes the corrupt files; the rest is then healthy (under-replication is
    // not corruption).
    let del = fsck(&cluster, &format!("/fsck?ugi={user}&delete=1&path=/ops")).await?;
    assert!(del.ends_with("is CORRUPT"), "{del}");
    let after = fsck(&cluster, &format!("/fsck?ugi={user}&path=/ops")).await?;
    assert!(after.contains(" Total files:\t2\n"), "{after}");
    assert!(
        after.ends_with("The filesystem under path '/ops' is HEALTHY"),
        "{after}"
    );
    let missing = fsck(&cluster, &format!("/fsck?ugi={user}&path=/nope")).await?;
    assert!(
        missing.ends_with("\n\nPath '/nope' does not exist"),
        "{missing}"
    );

    // A file open for write: counted apart by default, listed with -openforwrite.
    let open = client
        .create("/ops/open", WriteOptions::default().replication(2))
        .await?;
    let default = fsck(&cluster, &format!("/fsck?ugi={user}&path=/ops")).await?;
    assert!(
        default.contains(" Total files:\t2 (Files currently being written: 1)\n"),
        "{default}"
    );
    let ofw = fsck(
        &cluster,
        &format!("/fsck?ugi={user}&openforwrite=1&files=1&path=/ops"),
    )
    .await?;
    assert!(
        ofw.contains(
            "\n/ops/open 0 bytes, replicated: replication=2, 0 block(s), OPENFORWRITE:  OK\n"
        ),
        "{ofw}"
    );
    assert!(ofw.contains(" Total files:\t3\n"), "{ofw}");
    drop(open);

    cluster.shutdown().await;
    Ok(())
}
