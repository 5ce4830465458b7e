//! A client started while its one NameNode is down waits for it, as Hadoop's client does: the
//! refused connect is retried (`ipc.client.connect.max.retries` times,
//! `ipc.client.connect.retry.interval` apart, each retry logged) and the call goes through
//! once the NameNode is back. With no retries configured the refusal is the answer at once.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use common::client_conf;
use rhdfs_client::FileSystem;
use rhdfs_minicluster::MiniCluster;
use tracing::Subscriber;
use tracing::instrument::WithSubscriber;
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::{Layer, Registry};

/// Counts the client's connect-retry warnings.
struct Retries(Arc<AtomicUsize>);

impl<S: Subscriber> Layer<S> for Retries {
    fn on_event(&self, event: &tracing::Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == tracing::Level::WARN
            && event.metadata().target().starts_with("rhdfs_ipc")
        {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_started_while_the_namenode_is_down_waits_for_it() -> anyhow::Result<()> {
    let mut c = MiniCluster::builder()
        .datanodes(1)
        .conf("dfs.namenode.safemode.extension", "0")
        .build()
        .await?;
    let uri = c.uri();
    c.stop_namenode().await;

    // No retries: refused at once.
    let refused = FileSystem::connect_with(
        Some(&uri),
        client_conf(&[("ipc.client.connect.max.retries", "0")]),
    )
    .await;
    let Err(e) = refused else {
        anyhow::bail!("connected though nothing listens on the NameNode's port");
    };
    assert!(e.to_string().contains("refused"), "{e}");

    // Retries: the client waits, and is through once the NameNode is back.
    let retries = Arc::new(AtomicUsize::new(0));
    let logged = Registry::default().with(Retries(Arc::clone(&retries)));
    let waiting = tokio::spawn(
        async move {
            let fs = FileSystem::connect_with(
                Some(&uri),
                client_conf(&[
                    ("ipc.client.connect.max.retries", "1000000"),
                    ("ipc.client.connect.retry.interval", "10"),
                ]),
            )
            .await?;
            let root = fs.get_file_info("/").await?;
            anyhow::Ok(root.is_some_and(|s| s.is_dir))
        }
        .with_subscriber(logged),
    );
    // The NameNode starts only once the client has been refused and has said it retries.
    while retries.load(Ordering::SeqCst) == 0 {
        anyhow::ensure!(
            !waiting.is_finished(),
            "the client gave up: {:?}",
            waiting.await
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    c.start_namenode(&[]).await?;
    assert!(
        waiting.await??,
        "getFileInfo(/) after the NameNode came back"
    );
    assert!(retries.load(Ordering::SeqCst) >= 1);
    c.shutdown().await;
    Ok(())
}
