//! Two NameNodes and one JournalNode (`rhdfs journalnode`, a log-only Raft voter) in one
//! process (issue 14):
//! - the active dies and the other NameNode wins with the JournalNode's vote;
//! - the JournalNode compacts its log: it takes the active's image as its Raft snapshot
//!   (fetched over HTTP once its log holds enough entries past its snapshot) and purges
//!   behind it; a NameNode that was down meanwhile, back when the active is gone, is brought
//!   up to date by the JournalNode from that image and then becomes active with every file.

use rhdfs_client::FileSystem;
use rhdfs_conf::Configuration;
use rhdfs_minicluster::ha::HaMiniCluster;
use rhdfs_namenode::ha::journal_node::JournalNode;
use rhdfs_testkit::cluster::{data, read_file, write_file};
use rhdfs_testkit::ports::{self, ReservedPort};

use crate::common::procs::wait_for;
use crate::ha_raft::{DEADLINE, EXTRA, client_conf, wait_identical, wait_other_active, wait_raft};

/// A nameservice of two NameNodes and a JournalNode: the NameNodes' configuration, the
/// JournalNode's, the reserved ports (NameNode RPC ports first) and the JournalNode's
/// directory. `http`: the NameNodes' HTTP ports are fixed too (the JournalNode fetches
/// images from them).
struct Journaled {
    conf: Configuration,
    jn_conf: Configuration,
    reserved: Vec<ReservedPort>,
    _jn_dir: tempfile::TempDir,
}

fn journaled(more: &[(&str, &str)], http: bool) -> anyhow::Result<Journaled> {
    let reserved = (0..if http { 5 } else { 3 })
        .map(|_| ports::reserve())
        .collect::<Result<Vec<_>, _>>()?;
    let port = |i: usize| reserved[i].port();
    let jn_dir = tempfile::tempdir()?;
    let mut conf = Configuration::new();
    for (k, v) in EXTRA.iter().chain(more) {
        conf.set(k, v.to_string());
    }
    conf.set("dfs.nameservices", "ns");
    conf.set("dfs.ha.namenodes.ns", "nn1,nn2");
    for (i, nn) in ["nn1", "nn2"].into_iter().enumerate() {
        conf.set(
            &format!("dfs.namenode.rpc-address.ns.{nn}"),
            format!("127.0.0.1:{}", port(i)),
        );
        if http {
            conf.set(
                &format!("dfs.namenode.http-address.ns.{nn}"),
                format!("127.0.0.1:{}", port(3 + i)),
            );
        }
    }
    conf.set(
        "dfs.namenode.shared.edits.dir",
        format!("qjournal://127.0.0.1:{}/ns", port(2)),
    );
    let mut jn_conf = conf.clone();
    jn_conf.set(
        "dfs.journalnode.rpc-address",
        format!("127.0.0.1:{}", port(2)),
    );
    jn_conf.set(
        "dfs.journalnode.edits.dir",
        jn_dir.path().to_string_lossy().into_owned(),
    );
    Ok(Journaled {
        conf,
        jn_conf,
        reserved,
        _jn_dir: jn_dir,
    })
}

impl Journaled {
    fn namenode_ports(&self) -> [u16; 2] {
        [self.reserved[0].port(), self.reserved[1].port()]
    }
}

/// The last index of member `i`'s Raft log.
fn last_index(c: &HaMiniCluster, i: usize) -> u64 {
    c.namenode(i)
        .and_then(|nn| nn.ha_member())
        .and_then(|m| m.raft.metrics().borrow().last_log_index)
        .unwrap_or(0)
}

async fn wait_journal(
    journal: &JournalNode,
    what: &str,
    f: impl Fn(&openraft::RaftMetrics<u64, openraft::BasicNode>) -> bool,
) -> anyhow::Result<openraft::RaftMetrics<u64, openraft::BasicNode>> {
    wait_for(&format!("the JournalNode: {what}"), DEADLINE, || async {
        Ok(f(&journal.metrics()))
    })
    .await?;
    Ok(journal.metrics())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn two_namenodes_and_a_journal_node_fail_over() -> anyhow::Result<()> {
    let j = journaled(&[], false)?;
    let journal = JournalNode::start(&j.jn_conf).await?;
    assert_eq!(journal.id(), 3, "the JournalNode follows the two NameNodes");
    let mut c = HaMiniCluster::start(None, &j.namenode_ports(), 1, &j.conf).await?;
    let first = c.wait_active(DEADLINE).await?;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    let one = data(300_000, 1);
    write_file(&fs, "/jn/one", &one).await?;
    // The JournalNode holds the log.
    let leader_last = last_index(&c, first);
    wait_journal(&journal, "the leader's log", |m| {
        m.last_log_index.unwrap_or(0) >= leader_last
    })
    .await?;
    // So does the other NameNode (a standby with an empty log, just started, cannot win;
    // it would compete with the JournalNode's late campaign for many election timeouts).
    wait_raft(&c, 1 - first, "the leader's log", |m| {
        m.last_log_index.unwrap_or(0) >= leader_last
    })
    .await?;
    // The active dies: the other NameNode wins with the JournalNode's vote.
    c.crash_namenode(first).await;
    let second = wait_other_active(&c, first).await?;
    assert_eq!(read_file(&fs, "/jn/one").await?, one);
    let two = data(200_000, 2);
    write_file(&fs, "/jn/two", &two).await?;
    c.restart_namenode(first).await?;
    let txid = c
        .namenode(second)
        .expect("running")
        .namesystem()
        .with_ns(|ns| ns.last_txid());
    wait_identical(&c, txid).await?;
    fs.close().await;
    c.shutdown().await;
    journal.shutdown().await;
    Ok(())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_journal_node_compacts_its_log_and_restores_a_namenode_from_an_image()
-> anyhow::Result<()> {
    let j = journaled(
        &[
            ("rhdfs.ha.raft.log.retained.entries", "4"),
            ("dfs.namenode.checkpoint.check.period", "1"),
        ],
        true,
    )?;
    let journal = JournalNode::start(&j.jn_conf).await?;
    let mut c = HaMiniCluster::start(None, &j.namenode_ports(), 1, &j.conf).await?;
    let first = c.wait_active(DEADLINE).await?;
    let victim = 1 - first;
    let fs = FileSystem::connect_with(Some("hdfs://ns"), client_conf(&c)).await?;
    let keep = data(600_000, 1);
    write_file(&fs, "/jn/keep", &keep).await?;
    write_file(&fs, "/jn/gone", &data(200_000, 2)).await?;
    let leader_last = last_index(&c, first);
    let victim_last = wait_raft(&c, victim, "the leader's log", |m| {
        m.last_applied.is_some_and(|l| l.index >= leader_last)
    })
    .await?
    .last_log_index
    .unwrap_or(0);
    c.crash_namenode(victim).await;

    // While it is down: a delete, a new file, enough entries to purge past it, and a
    // checkpoint of the active (its newest image).
    assert!(fs.delete("/jn/gone", false).await?);
    let fresh = data(500_000, 3);
    write_file(&fs, "/jn/new", &fresh).await?;
    for i in 0..40 {
        fs.mkdirs(&format!("/jn/d{i}"), None).await?;
    }
    let active = c.namenode(first).expect("running").namesystem().clone();
    active.durable().expect("storage").checkpoint().await?;
    let image_txid = active.with_ns(|ns| ns.last_txid());
    // The JournalNode takes that image as its snapshot and purges its log behind it.
    let m = wait_journal(&journal, "a snapshot and a purge past the victim", |m| {
        m.snapshot.is_some_and(|s| s.index > victim_last)
            && m.purged.is_some_and(|p| p.index > victim_last)
    })
    .await?;
    let jn_snapshot = m.snapshot.map_or(0, |s| s.index);
    assert!(
        m.last_log_index.unwrap_or(0) >= leader_last,
        "the JournalNode's log: {m:?}"
    );

    // The active dies; the victim comes back. Only the JournalNode holds what the victim
    // lacks, and no longer as log entries: it sends its snapshot, then the rest of its log,
    // and hands leadership to the victim.
    c.crash_namenode(first).await;
    c.restart_namenode(victim).await?;
    wait_raft(&c, victim, "the JournalNode's snapshot installed", |m| {
        m.snapshot.is_some_and(|s| s.index >= jn_snapshot)
    })
    .await?;
    let now = wait_other_active(&c, first).await?;
    assert_eq!(now, victim);
    let restored = c.namenode(victim).expect("running").namesystem().clone();
    assert!(restored.with_ns(|ns| ns.last_txid()) >= image_txid);
    let ids: Vec<u64> =
        restored.with_ns(|ns| ns.loaded_blocks().iter().map(|b| b.block.id).collect());
    let bm = restored.block_manager().clone();
    wait_for(
        "replicas in the restored NameNode's block map",
        DEADLINE,
        || async { Ok(ids.iter().all(|&id| !bm.locations(id).is_empty())) },
    )
    .await?;
    assert_eq!(read_file(&fs, "/jn/keep").await?, keep);
    assert_eq!(read_file(&fs, "/jn/new").await?, fresh);
    assert!(fs.get_file_info("/jn/gone").await?.is_none());
    assert!(fs.get_file_info("/jn/d39").await?.is_some());
    fs.mkdirs("/jn/after", None).await?;

    // The old active returns as a standby with the same namespace.
    c.restart_namenode(first).await?;
    let txid = restored.with_ns(|ns| ns.last_txid());
    wait_identical(&c, txid).await?;
    fs.close().await;
    c.shutdown().await;
    journal.shutdown().await;
    Ok(())
}
