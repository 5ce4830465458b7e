//! One HA member asking another for a transition, as ZKFC does (`REQUEST_BY_ZKFC`): to become
//! active, or to stand by (a leader yields, a standby holds its elections).
//!
//! A hand-over asks several members at once ([`ask_each_within`]), each under a short bound:
//! a member whose machine is down answers neither the connection nor the call, and waiting for
//! the IPC client's own timeouts (`ipc.client.connect.timeout`, 20 s; `ipc.client.rpc-timeout.ms`,
//! 120 s) would hold the hand-over up by that much.

use std::future::Future;
use std::time::Duration;

use rhdfs_ipc::{ClientConfig, RpcClient};
use rhdfs_proto::common::{
    HaRequestSource, HaStateChangeRequestInfoProto, TransitionToActiveRequestProto,
    TransitionToActiveResponseProto, TransitionToStandbyRequestProto,
    TransitionToStandbyResponseProto,
};
use rhdfs_proto::protocols::HA_SERVICE_PROTOCOL;
use tokio::task::JoinSet;
use tracing::Instrument;

/// Asks the member at `addr` to become active (`to_active`) or to stand by, as ZKFC.
pub(crate) async fn ask_member(
    addr: &str,
    ipc: ClientConfig,
    to_active: bool,
) -> Result<(), String> {
    let user = tokio::task::spawn_blocking(rhdfs_conf::user::current_user)
        .await
        .map_err(|e| e.to_string())?;
    let client = RpcClient::connect_with(addr, HA_SERVICE_PROTOCOL, &user, ipc)
        .await
        .map_err(|e| format!("connecting to {addr}: {e}"))?;
    let req_info = HaStateChangeRequestInfoProto {
        req_source: HaRequestSource::RequestByZkfc as i32,
    };
    let asked = if to_active {
        client
            .call::<_, TransitionToActiveResponseProto>(
                "transitionToActive",
                &TransitionToActiveRequestProto { req_info },
            )
            .await
            .map(drop)
    } else {
        client
            .call::<_, TransitionToStandbyResponseProto>(
                "transitionToStandby",
                &TransitionToStandbyRequestProto { req_info },
            )
            .await
            .map(drop)
    };
    client.close().await;
    let what = if to_active {
        "become active"
    } else {
        "stand by"
    };
    asked.map_err(|e| format!("asking {addr} to {what}: {e}"))
}

/// Runs every ask at once, each given at most `bound`; returns once all answered or ran out
/// of time (so after `bound` at most), with the members that refused, failed or did not
/// answer in time, and why. An ask still waiting at the bound is dropped (its connection
/// closed).
pub(crate) async fn ask_each_within<F>(asks: Vec<(u64, F)>, bound: Duration) -> Vec<(u64, String)>
where
    F: Future<Output = Result<(), String>> + Send + 'static,
{
    let mut set = JoinSet::new();
    for (id, ask) in asks {
        set.spawn(
            async move {
                let answer = match tokio::time::timeout(bound, ask).await {
                    Ok(r) => r,
                    Err(_) => Err(format!("no answer within {bound:?}")),
                };
                (id, answer)
            }
            .in_current_span(),
        );
    }
    let mut failed = Vec::new();
    while let Some(done) = set.join_next().await {
        match done {
            Ok((_, Ok(()))) => {}
            Ok((id, Err(e))) => failed.push((id, e)),
            // A panicking ask: nothing to name it by but the panic.
            Err(e) => failed.push((0, format!("the ask failed: {e}"))),
        }
    }
    failed.sort_by_key(|(id, _)| *id);
    failed
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    type Ask = Pin<Box<dyn Future<Output = Result<(), String>> + Send>>;

    /// The asks run at once: two members that each answer only once the other was asked
    /// both answer, and one that never answers is skipped at the bound without holding up
    /// their answers. (One after another, the first of the two would wait for an ask not
    /// made yet and run out of time.)
    #[tokio::test]
    async fn asks_run_at_once_and_a_silent_member_is_skipped() {
        let both_asked = Arc::new(tokio::sync::Barrier::new(2));
        let answered = Arc::new(AtomicUsize::new(0));
        let waits_for_the_other = |id: u64| -> (u64, Ask) {
            let (both_asked, answered) = (both_asked.clone(), answered.clone());
            (
                id,
                Box::pin(async move {
                    both_asked.wait().await;
                    answered.fetch_add(1, Ordering::SeqCst);
                    Ok(())
                }),
            )
        };
        let asks: Vec<(u64, Ask)> = vec![
            waits_for_the_other(2),
            (3, Box::pin(std::future::pending())),
            waits_for_the_other(4),
            (5, Box::pin(async { Err("refused".to_string()) })),
        ];
        let failed = ask_each_within(asks, Duration::from_secs(1)).await;
        assert_eq!(answered.load(Ordering::SeqCst), 2);
        let ids: Vec<u64> = failed.iter().map(|(id, _)| *id).collect();
        assert_eq!(ids, vec![3, 5], "{failed:?}");
        assert!(failed[0].1.contains("no answer within"), "{failed:?}");
        assert_eq!(failed[1].1, "refused");
    }

    /// Asks that all answer end without waiting for the bound (an hour here).
    #[tokio::test]
    async fn answered_asks_do_not_wait_for_the_bound() {
        let asks: Vec<(u64, Ask)> = vec![
            (2, Box::pin(async { Ok(()) })),
            (3, Box::pin(async { Ok(()) })),
        ];
        assert!(
            ask_each_within(asks, Duration::from_secs(3600))
                .await
                .is_empty()
        );
    }

    /// A member whose port accepts connections and never answers (a hung machine, as far as
    /// the asker can tell) is skipped once the bound is over, the connection still open on
    /// its side: the real ask over IPC, on the real clock.
    #[tokio::test]
    async fn a_member_that_accepts_and_never_answers_is_skipped() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("address").to_string();
        let (accepted_tx, accepted_rx) = std::sync::mpsc::channel();
        let holder = std::thread::spawn(move || {
            // Accept, read nothing, answer nothing; hold the connection until the asker has
            // given up (its end closed: the read sees end of file).
            let (mut conn, _) = listener.accept().expect("accept");
            accepted_tx.send(()).expect("test alive");
            let mut sink = Vec::new();
            std::io::Read::read_to_end(&mut conn, &mut sink).map(|_| sink.len())
        });
        let ipc = ClientConfig::default();
        assert!(ipc.connect_timeout > Duration::from_secs(1));
        let asks = vec![(7, ask_member_owned(addr, ipc))];
        let failed = ask_each_within(asks, Duration::from_millis(200)).await;
        accepted_rx.recv().expect("the ask connected");
        assert_eq!(failed.len(), 1, "{failed:?}");
        assert_eq!(failed[0].0, 7);
        assert!(failed[0].1.contains("no answer within"), "{failed:?}");
        // The asker dropped the connection when it gave up: the holder sees it close, having
        // received at most the connection's preamble and first request.
        let read = holder.join().expect("holder thread");
        assert!(read.is_ok(), "{read:?}");
    }

    fn ask_member_owned(addr: String, ipc: ClientConfig) -> Ask {
        Box::pin(async move { ask_member(&addr, ipc, false).await })
    }
}
