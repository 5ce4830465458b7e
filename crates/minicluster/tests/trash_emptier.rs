//! The NameNode's trash emptier: one pass over every user's `.Trash` deletes checkpoints
//! older than `fs.trash.interval` (and only those) and turns `Current` into a checkpoint
//! named for the pass, through the NameNode's RPC port as the superuser. The pass is run
//! with an explicit time; the NameNode's own loop only decides when.

use rhdfs_client::FileSystem;
use rhdfs_conf::time::format_checkpoint;
use rhdfs_minicluster::MiniCluster;
use rhdfs_namenode::trash_emptier::empty_once;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_checkpoints_current_and_drops_old_checkpoints() -> anyhow::Result<()> {
    let c = MiniCluster::builder()
        .datanodes(1)
        .conf("fs.trash.interval", "10")
        .build()
        .await?;
    let fs = FileSystem::connect(&c.uri()).await?;
    let now: u64 = 1_780_000_000_000;
    let minute = 60_000;
    let old = format!(
        "/user/alice/.Trash/{}",
        format_checkpoint(now - 11 * minute)
    );
    let recent = format!("/user/bob/.Trash/{}", format_checkpoint(now - 9 * minute));
    for d in [
        "/user/alice/.Trash/Current/data",
        old.as_str(),
        recent.as_str(),
        "/user/carol/.Trash/notacheckpoint",
        "/user/dave",
    ] {
        fs.mkdirs(d, None).await?;
    }
    let mut w = fs
        .create("/user/alice/.Trash/Current/data/f", Default::default())
        .await?;
    w.write(b"deleted by alice").await?;
    w.close().await?;

    // alice, bob and carol have a trash; dave has none.
    assert_eq!(empty_once(&fs, 10.0, now).await, 3);
    let exists = |p: String| {
        let fs = &fs;
        async move { fs.get_file_info(&p).await.map(|s| s.is_some()) }
    };
    let made = format!("/user/alice/.Trash/{}", format_checkpoint(now));
    assert!(
        !exists(old.clone()).await?,
        "checkpoint older than the interval kept"
    );
    assert!(!exists("/user/alice/.Trash/Current".into()).await?);
    assert!(
        exists(format!("{made}/data/f")).await?,
        "Current not checkpointed"
    );
    assert!(exists(recent.clone()).await?, "recent checkpoint deleted");
    assert!(exists("/user/carol/.Trash/notacheckpoint".into()).await?);

    // Eleven minutes on, alice's new checkpoint is old enough to go too.
    assert_eq!(empty_once(&fs, 10.0, now + 11 * minute).await, 3);
    assert!(!exists(made).await?);
    assert!(!exists(recent).await?);
    fs.close().await;
    c.shutdown().await;
    Ok(())
}
