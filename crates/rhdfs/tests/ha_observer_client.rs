//! rhdfs's own client reading from an observer (issue 14's observer reads, client side): three
//! NameNodes of nameservice `ns` in one process, one made an observer with
//! `haadmin -transitionToObserver`.
//!
//! - A FileSystem configured with ConfiguredFailoverProxyProvider writes and reads through the
//!   active only: the observer serves it nothing.
//! - A FileSystem configured with ObserverReadProxyProvider writes a file through the active
//!   and reads it back at once from the observer (read-your-writes: the observer's served
//!   counter grows and the file's status shows what was written).
//! - With the observer cut off from Raft, the same client writes another file; its read then
//!   waits on the observer (its wait counter grows) until, healed, the observer applied the
//!   client's state id, and answers the new bytes. So does the read of a second client that
//!   read before the write and msyncs before every read
//!   (`dfs.client.failover.observer.auto-msync-period.ns` = 0): its state id is the active's,
//!   so the observer does not answer it from the older state (no such file).
//! - With the observer crashed, reads fall back to the active.

use anyhow::Context;
use rhdfs_client::FileSystem;
use rhdfs_testkit::cluster::{data, read_file, write_file};

use crate::common::haadmin::haadmin;
use crate::common::procs::wait_for;
use crate::ha_observer::{DEADLINE, OBSERVER_PROVIDER, cut_off_observer, start, state_id};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rhdfs_client_reads_its_writes_from_an_observer() -> anyhow::Result<()> {
    let (mut c, _ports) = start().await.context("start")?;
    let conf = c.client_conf().clone();
    let plain = FileSystem::connect_with(Some("hdfs://ns"), conf.clone())
        .await
        .context("plain connect")?;
    // A write answered: a leader is elected (on a busy machine leadership may still move).
    plain.mkdirs("/plain", None).await.context("mkdirs")?;
    // A NameNode that is not the active made an observer (retried should leadership move
    // between the look and the transition).
    let deadline = tokio::time::Instant::now() + DEADLINE;
    let obs = loop {
        let active = c.wait_active(DEADLINE).await.context("wait_active")?;
        let candidate = (0..3).find(|i| *i != active).unwrap_or_default();
        let id = format!("nn{}", candidate + 1);
        let answer = haadmin(&conf, &["-transitionToObserver", &id]).await;
        if matches!(answer, Ok((0, _, _))) {
            break candidate;
        }
        anyhow::ensure!(
            tokio::time::Instant::now() < deadline,
            "no NameNode became an observer: {answer:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    let observer = c
        .namenode(obs)
        .map(|nn| nn.namesystem().clone())
        .ok_or_else(|| anyhow::anyhow!("no observer"))?;
    let reads = observer.ha_role().observer_reads();

    // ConfiguredFailoverProxyProvider: everything through the active.
    let (served, waited) = (reads.served(), reads.waited());
    let first = data(150_000, 1);
    write_file(&plain, "/plain/a", &first)
        .await
        .context("plain write")?;
    assert!(read_file(&plain, "/plain/a").await.context("plain read")? == first);
    assert_eq!(
        plain
            .status("/plain/a")
            .await
            .context("plain status")?
            .length,
        first.len() as u64
    );
    assert_eq!(
        (reads.served(), reads.waited()),
        (served, waited),
        "the observer served a client of ConfiguredFailoverProxyProvider"
    );

    // ObserverReadProxyProvider: reads from the observer see the client's writes.
    let mut obs_conf = conf.clone();
    obs_conf.set("dfs.client.failover.proxy.provider.ns", OBSERVER_PROVIDER);
    let mut msync_conf = obs_conf.clone();
    msync_conf.set("dfs.client.failover.observer.auto-msync-period.ns", "0");
    let fs = FileSystem::connect_with(Some("hdfs://ns"), obs_conf)
        .await
        .context("observer client connect")?;
    let served = reads.served();
    let second = data(200_000, 2);
    write_file(&fs, "/plain/b", &second)
        .await
        .context("observer client write")?;
    let status = fs.status("/plain/b").await.context("status b")?;
    assert_eq!(status.length, second.len() as u64);
    assert!(read_file(&fs, "/plain/b").await.context("read b")? == second);
    assert!(read_file(&fs, "/plain/a").await.context("read a")? == first);
    assert!(
        reads.served() > served,
        "the observer served none of the client's reads"
    );

    // The second client's first read, before the next write.
    let other = FileSystem::connect_with(Some("hdfs://ns"), msync_conf)
        .await
        .context("auto-msync client connect")?;
    assert_eq!(
        other
            .status("/plain/a")
            .await
            .context("other status a")?
            .length,
        first.len() as u64
    );

    // A lagging observer: the client's read waits for its own write's state id, the other
    // client's (msync first) for the active's.
    let active = c.wait_active(DEADLINE).await.context("wait_active 2")?;
    let member = cut_off_observer(&c, obs, active).await?;
    let third = data(120_000, 3);
    // Two voters left; the standby must not depose the active (it did when it had campaigned
    // in the active's term: openraft's default mode ordered such votes by node id).
    write_file(&fs, "/plain/c", &third)
        .await
        .context("write c with the observer cut off")?;
    let active = c.wait_active(DEADLINE).await.context("wait_active 3")?;
    assert!(
        state_id(&c, obs) < state_id(&c, active),
        "the cut-off observer applied the new edits"
    );
    let (served, waited) = (reads.served(), reads.waited());
    let read = read_file(&fs, "/plain/c");
    let other_read = read_file(&other, "/plain/c");
    let heal = async {
        wait_for("both reads waiting on the observer", DEADLINE, || async {
            Ok(reads.waited() >= waited + 2)
        })
        .await?;
        member.faults.heal_all();
        anyhow::Ok(())
    };
    let (bytes, other_bytes, healed) = tokio::join!(read, other_read, heal);
    healed?;
    assert!(
        bytes.context("read c")? == third,
        "the read after the heal gave other bytes"
    );
    assert!(
        other_bytes.context("other client's read of c")? == third,
        "the auto-msync client's read gave other bytes"
    );
    assert!(
        reads.served() > served,
        "the observer served no waiting read"
    );

    // The observer gone: reads fall back to the active.
    c.crash_namenode(obs).await;
    assert!(
        read_file(&fs, "/plain/c")
            .await
            .context("read c, no observer")?
            == third
    );
    assert_eq!(
        fs.status("/plain/a")
            .await
            .context("status a, no observer")?
            .length,
        first.len() as u64
    );

    other.close().await;
    fs.close().await;
    plain.close().await;
    c.shutdown().await;
    Ok(())
}
