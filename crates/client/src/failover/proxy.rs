//! [`NameNodeProxy`]: a FileSystem's NameNode endpoint — one `RpcClient`, or one per NameNode of
//! an HA nameservice with failover between them (see the parent module for the design), and
//! with ObserverReadProxyProvider coordinated reads sent to observers (`observer`).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::time::Duration;

use bytes::Bytes;
use prost::Message;
use rand::seq::SliceRandom;
use rhdfs_conf::clock::SharedClock;
use rhdfs_conf::ha::Nameservice;
use rhdfs_ipc::alignment::ClientAlignment;
use rhdfs_ipc::{ClientConfig, IpcError, RpcClient};
use rhdfs_proto::client_methods::is_coordinated_read;
use rhdfs_proto::hdfs::{
    HaServiceStateRequestProto, HaServiceStateResponseProto, MsyncRequestProto,
};
use rhdfs_proto::protocols::CLIENT_PROTOCOL;
use tracing::{debug, info, warn};

use super::observer::{
    AfterFailure, MsyncDue, ObserverReads, ObserverSettings, Seen, after_observer_failure,
};
use super::{FailoverSettings, should_fail_over};

/// How the proxy sleeps between rounds and bounds a probe (injected so tests need not wait).
pub type SleepFn = Arc<dyn Fn(Duration) -> Pin<Box<dyn Future<Output = ()> + Send>> + Send + Sync>;

/// The NameNode side of a FileSystem. Cheap to clone; clones share the NameNodes, which one is
/// current, and the call numbering.
#[derive(Clone)]
pub struct NameNodeProxy {
    inner: Arc<Inner>,
}

struct Inner {
    /// One client per NameNode, in the order they are tried; all share one client id.
    targets: Vec<Target>,
    /// Index into `targets` of the NameNode calls go to first.
    current: AtomicUsize,
    /// Call ids of this proxy's calls (failover only: a single client numbers its own).
    next_call_id: AtomicI32,
    settings: FailoverSettings,
    sleep: SleepFn,
    /// With ObserverReadProxyProvider: where coordinated reads go.
    observer: Option<ObserverReads>,
}

struct Target {
    /// The NameNode id (`nn1`), or its address without HA.
    id: String,
    client: RpcClient,
}

impl std::fmt::Debug for NameNodeProxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let ids: Vec<&str> = self.inner.targets.iter().map(|t| t.id.as_str()).collect();
        f.debug_struct("NameNodeProxy")
            .field("namenodes", &ids)
            .field("current", &self.current_namenode())
            .field("observer_reads", &self.inner.observer.is_some())
            .finish()
    }
}

/// Sleeps on the tokio timer.
pub fn tokio_sleep() -> SleepFn {
    Arc::new(|d| Box::pin(tokio::time::sleep(d)))
}

impl NameNodeProxy {
    /// One NameNode, no failover: calls go straight to `client`.
    pub fn single(client: RpcClient) -> Self {
        let id = client.addr().to_string();
        Self::from_targets(
            vec![Target { id, client }],
            FailoverSettings::default(),
            tokio_sleep(),
            None,
        )
    }

    /// The NameNodes of `ns` (shuffled when `settings.random_order`, from `seed` or
    /// `RHDFS_SEED`), connected lazily, as `user`. With `observer` (ObserverReadProxyProvider
    /// configured: its settings and the clock of its probe period) every call carries the
    /// client's state id and coordinated reads go to observers.
    pub fn for_nameservice(
        ns: &Nameservice,
        user: &str,
        mut cfg: ClientConfig,
        settings: FailoverSettings,
        seed: Option<u64>,
        sleep: SleepFn,
        observer: Option<(ObserverSettings, SharedClock)>,
    ) -> Self {
        // One state for the client's connections to every NameNode (Hadoop's ClientGSIContext,
        // made only by ObserverReadProxyProvider).
        let observer = observer.map(|(s, clock)| {
            let alignment = Arc::new(ClientAlignment::new());
            cfg.alignment = Some(Arc::clone(&alignment));
            ObserverReads::new(s, clock, alignment, ns.namenodes.len())
        });
        let client_id = RpcClient::new_client_id();
        let mut targets: Vec<Target> = ns
            .namenodes
            .iter()
            .map(|nn| Target {
                id: nn.id.clone(),
                client: RpcClient::lazy(
                    &nn.rpc_addr(),
                    CLIENT_PROTOCOL,
                    user,
                    cfg.clone(),
                    client_id.clone(),
                ),
            })
            .collect();
        if settings.random_order {
            targets.shuffle(&mut rhdfs_conf::rng::seeded_rng(seed));
        }
        Self::from_targets(targets, settings, sleep, observer)
    }

    fn from_targets(
        targets: Vec<Target>,
        settings: FailoverSettings,
        sleep: SleepFn,
        observer: Option<ObserverReads>,
    ) -> Self {
        NameNodeProxy {
            inner: Arc::new(Inner {
                targets,
                current: AtomicUsize::new(0),
                next_call_id: AtomicI32::new(0),
                settings,
                sleep,
                observer,
            }),
        }
    }

    /// The client's state id (the highest any NameNode answered) when it reads from
    /// observers; `None` without ObserverReadProxyProvider.
    pub fn state_id(&self) -> Option<i64> {
        let o = self.inner.observer.as_ref()?;
        Some(o.alignment().last_seen_state_id())
    }

    /// The id (address without HA) of the NameNode calls go to first.
    pub fn current_namenode(&self) -> &str {
        let i = self.inner.current.load(Ordering::Acquire);
        &self.inner.targets[i % self.inner.targets.len()].id
    }

    /// The client id every call carries.
    pub fn client_id(&self) -> &Bytes {
        self.inner.targets[0].client.client_id()
    }

    /// Calls `method` with `req` and decodes the response as `Resp`.
    pub async fn call<Req: Message, Resp: Message + Default>(
        &self,
        method: &str,
        req: &Req,
    ) -> Result<Resp, IpcError> {
        rhdfs_ipc::decode_response(method, self.call_raw(method, &req.encode_to_vec()).await?)
    }

    /// Calls `method` with an encoded request, failing over between NameNodes; with
    /// ObserverReadProxyProvider a coordinated read goes to an observer first.
    pub async fn call_raw(&self, method: &str, body: &[u8]) -> Result<Bytes, IpcError> {
        let inner = &*self.inner;
        if inner.targets.len() == 1 {
            return inner.targets[0].client.call_raw(method, body).await;
        }
        let call_id = self.next_call_id();
        let Some(observer) = &inner.observer else {
            return self.call_active(method, body, call_id).await;
        };
        if is_coordinated_read(method) && observer.should_find_observer() {
            self.msync_if_due(observer).await?;
            if let Some(answer) = self
                .read_from_observers(observer, method, body, call_id)
                .await
            {
                return answer;
            }
            self.skip_known_observers(observer);
        }
        self.call_active(method, body, call_id).await
    }

    /// Before a read goes to an observer: an msync to the active when one is due (Hadoop's
    /// initializeMsync and autoMsyncIfNecessary), so the client's state becomes the active's
    /// and the read sees what was written before — by this client or, for a later read with
    /// an auto-msync period, by others.
    async fn msync_if_due(&self, observer: &ObserverReads) -> Result<(), IpcError> {
        match observer.msync_due() {
            MsyncDue::No => Ok(()),
            MsyncDue::EveryRead => self.msync().await,
            MsyncDue::Once => {
                let _turn = observer.msync_turn().await;
                // Another read's msync may have ended while this one waited.
                if observer.msync_due() == MsyncDue::No {
                    return Ok(());
                }
                self.msync().await
            }
        }
    }

    async fn msync(&self) -> Result<(), IpcError> {
        let msync = MsyncRequestProto {}.encode_to_vec();
        self.call_active("msync", &msync, self.next_call_id())
            .await
            .map(drop)
    }

    fn next_call_id(&self) -> i32 {
        self.inner.next_call_id.fetch_add(1, Ordering::Relaxed) & i32::MAX
    }

    /// Sends coordinated read `method` to the observers in the cursor's order, each tried at
    /// most once; `None` when it goes to the active (no observer, each failed it, or one
    /// answered ObserverRetryOnActiveException).
    async fn read_from_observers(
        &self,
        observer: &ObserverReads,
        method: &str,
        body: &[u8],
        call_id: i32,
    ) -> Option<Result<Bytes, IpcError>> {
        let targets = &self.inner.targets;
        let mut found = false;
        let mut attempt: i32 = 0;
        for _ in 0..targets.len() {
            let (idx, known) = observer.current();
            let seen = match known {
                Some(seen) => seen,
                None => {
                    let seen = self.probe(observer, idx).await;
                    observer.probed(idx, seen);
                    seen
                }
            };
            if seen != Seen::Observer {
                debug!("{method}: skipping NameNode {} ({seen:?})", targets[idx].id);
                observer.advance(idx);
                continue;
            }
            found = true;
            let target = &targets[idx];
            let (err, sent) = match target.client.ensure_connected().await {
                Err(IpcError::Closed) => return Some(Err(IpcError::Closed)),
                Err(e) => (e, false),
                Ok(()) => match target
                    .client
                    .call_raw_as(method, body, call_id, attempt)
                    .await
                {
                    Ok(answer) => {
                        observer.round_ended(true);
                        return Some(Ok(answer));
                    }
                    Err(e) => (e, true),
                },
            };
            attempt = attempt.saturating_add(1);
            match after_observer_failure(&err, sent, method) {
                AfterFailure::Active => {
                    debug!(
                        "{method}: observer {} asks for the active ({err})",
                        target.id
                    );
                    observer.round_ended(true);
                    return None;
                }
                AfterFailure::NextObserver => {
                    warn!(
                        "{method} to observer {} failed ({err}); trying the next",
                        target.id
                    );
                    observer.advance(idx);
                }
                AfterFailure::Fail => return Some(Err(err)),
            }
        }
        if !found {
            debug!("{method}: no observer found; reading from the active");
        }
        observer.round_ended(found);
        None
    }

    /// NameNode `idx`'s HA state (`getHAServiceState`, answered by any NameNode); unreachable
    /// when no answer came within the probe timeout (Hadoop's getHAServiceStateWithTimeout:
    /// a NameNode that accepts connections but does not answer — in a long pause — is skipped
    /// for this round rather than holding up every read).
    async fn probe(&self, observer: &ObserverReads, idx: usize) -> Seen {
        let ask = self.ask_state(idx);
        let Some(limit) = observer.probe_timeout() else {
            return Seen::from_probe(ask.await);
        };
        tokio::select! {
            biased;
            answer = ask => Seen::from_probe(answer),
            () = (self.inner.sleep)(limit) => {
                warn!(
                    "getHAServiceState to NameNode {} not answered within {limit:?}; skipping it",
                    self.inner.targets[idx].id
                );
                Seen::Unreachable
            }
        }
    }

    /// Asks NameNode `idx` for its HA state, connecting first if needed.
    async fn ask_state(&self, idx: usize) -> Result<HaServiceStateResponseProto, IpcError> {
        let target = &self.inner.targets[idx];
        target.client.ensure_connected().await?;
        let req = HaServiceStateRequestProto {}.encode_to_vec();
        let body = target
            .client
            .call_raw_as("getHAServiceState", &req, self.next_call_id(), 0)
            .await?;
        rhdfs_ipc::decode_response("getHAServiceState", body)
    }

    /// Before a read falls back to the active: moves the failover path off NameNodes last
    /// seen as observers (it moves off a standby by itself; an observer would serve the read
    /// again, or make it wait again).
    fn skip_known_observers(&self, observer: &ObserverReads) {
        let inner = &*self.inner;
        let n = inner.targets.len();
        for _ in 1..n {
            let idx = inner.current.load(Ordering::Acquire) % n;
            if observer.seen(idx) != Some(Seen::Observer) {
                return;
            }
            let _ = inner.current.compare_exchange(
                idx,
                (idx + 1) % n,
                Ordering::AcqRel,
                Ordering::Acquire,
            );
        }
    }

    /// Calls `method` as call `call_id` on the NameNode taken as active, failing over
    /// between NameNodes (ConfiguredFailoverProxyProvider's path).
    async fn call_active(
        &self,
        method: &str,
        body: &[u8],
        call_id: i32,
    ) -> Result<Bytes, IpcError> {
        let inner = &*self.inner;
        let n = inner.targets.len();
        let mut failovers: u32 = 0;
        let mut tried_this_round = 0;
        let mut rounds = 0;
        let mut slept = Duration::ZERO;
        let patience = inner.settings.hadoop_wait();
        loop {
            let idx = inner.current.load(Ordering::Acquire) % n;
            let target = &inner.targets[idx];
            let (err, sent) = match target.client.ensure_connected().await {
                // Closed by `close`: nothing to fail over to.
                Err(IpcError::Closed) => return Err(IpcError::Closed),
                Err(e) => (e, false),
                Ok(()) => {
                    let retry = i32::try_from(failovers).unwrap_or(i32::MAX);
                    match target
                        .client
                        .call_raw_as(method, body, call_id, retry)
                        .await
                    {
                        Ok(answer) => {
                            if let Some(o) = &inner.observer
                                && o.seen(idx) != Some(Seen::Observer)
                            {
                                o.reached_active();
                            }
                            return Ok(answer);
                        }
                        Err(e) => (e, true),
                    }
                }
            };
            let spent = failovers >= inner.settings.max_attempts && slept >= patience;
            if spent || !should_fail_over(&err, sent, method) {
                return Err(err);
            }
            failovers += 1;
            let next = (idx + 1) % n;
            // Another call may have moved on already; then its choice stands.
            if inner
                .current
                .compare_exchange(idx, next, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                info!(
                    "{method} to NameNode {} failed ({err}); failing over to {}",
                    target.id, inner.targets[next].id
                );
            }
            tried_this_round += 1;
            if tried_this_round >= n {
                tried_this_round = 0;
                rounds += 1;
                let pause = inner.settings.sleep_after_round(rounds);
                debug!("every NameNode failed {method}; sleeping {pause:?} before the next round");
                (inner.sleep)(pause).await;
                slept = slept.saturating_add(pause);
            }
        }
    }

    /// Closes every NameNode connection; later calls fail with [`IpcError::Closed`].
    pub async fn close(&self) {
        for t in &self.inner.targets {
            t.client.close().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_conf::clock::ManualClock;
    use rhdfs_conf::ha::NameNodeAddrs;
    use tokio::io::AsyncReadExt;

    fn dead() -> (String, u16) {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = l.local_addr().expect("addr").port();
        ("127.0.0.1".to_string(), port)
    }

    /// Every NameNode unreachable: each round tries them all without sleeping, rounds are
    /// separated by the doubling, capped sleep, and the call gives up with the last connection
    /// error once it has made max_attempts failovers and slept as long as Hadoop's client
    /// would over as many (200 + 250 + 250 + 250 ms here).
    #[tokio::test]
    async fn rounds_back_off_and_give_up() {
        let ns = Nameservice {
            id: "ns".into(),
            namenodes: (1..=2)
                .map(|i| NameNodeAddrs {
                    id: format!("nn{i}"),
                    rpc: dead(),
                    http: None,
                })
                .collect(),
        };
        let settings = FailoverSettings {
            max_attempts: 5,
            sleep_base: Duration::from_millis(100),
            sleep_max: Duration::from_millis(250),
            random_order: false,
        };
        let slept = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sleep: SleepFn = {
            let slept = slept.clone();
            Arc::new(move |d| {
                slept.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                Box::pin(async {})
            })
        };
        let proxy = NameNodeProxy::for_nameservice(
            &ns,
            "u",
            ClientConfig::default(),
            settings,
            None,
            sleep,
            None,
        );
        let err = proxy.call_raw("getFileInfo", &[]).await.unwrap_err();
        assert!(matches!(err, IpcError::Io(_)), "{err:?}");
        // 5 failovers are made by round 3, but only 300 ms slept of Hadoop's 950: rounds go
        // on until 1,050 ms are (10 failovers over 2 NameNodes, back at the first).
        let ms: Vec<u128> = slept
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(Duration::as_millis)
            .collect();
        assert_eq!(ms, [100, 200, 250, 250, 250]);
        assert_eq!(proxy.current_namenode(), "nn1");
        proxy.close().await;
        assert!(matches!(
            proxy.call_raw("getFileInfo", &[]).await,
            Err(IpcError::Closed)
        ));
    }

    /// A NameNode that takes the probe and never answers (a long pause) is unreachable for
    /// the round once the probe timeout — asked of the injected sleep — runs out.
    #[tokio::test]
    async fn an_unanswered_probe_times_out() {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind");
        let port = listener.local_addr().expect("addr").port();
        // The hung NameNode: reads until the probe arrived, then says so and holds the
        // connection open without answering.
        let probe_arrived = Arc::new(tokio::sync::Notify::new());
        let server = {
            let probe_arrived = Arc::clone(&probe_arrived);
            tokio::spawn(async move {
                let (mut sock, _) = listener.accept().await.expect("accept");
                let mut got = Vec::new();
                let mut buf = [0u8; 4096];
                while !got
                    .windows(b"getHAServiceState".len())
                    .any(|w| w == b"getHAServiceState")
                {
                    let n = sock.read(&mut buf).await.expect("read");
                    assert!(n > 0, "the client closed before probing");
                    got.extend_from_slice(&buf[..n]);
                }
                probe_arrived.notify_one();
                std::future::pending::<()>().await;
            })
        };
        let ns = Nameservice {
            id: "ns".into(),
            namenodes: vec![
                NameNodeAddrs {
                    id: "nn1".into(),
                    rpc: ("127.0.0.1".to_string(), port),
                    http: None,
                },
                NameNodeAddrs {
                    id: "nn2".into(),
                    rpc: dead(),
                    http: None,
                },
            ],
        };
        // The timeout "runs out" once the NameNode holds the probe.
        let asked = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sleep: SleepFn = {
            let asked = Arc::clone(&asked);
            let probe_arrived = Arc::clone(&probe_arrived);
            Arc::new(move |d| {
                asked.lock().unwrap_or_else(|e| e.into_inner()).push(d);
                let probe_arrived = Arc::clone(&probe_arrived);
                Box::pin(async move { probe_arrived.notified().await })
            })
        };
        let settings = ObserverSettings {
            probe_timeout: Some(Duration::from_millis(1500)),
            ..ObserverSettings::default()
        };
        let proxy = NameNodeProxy::for_nameservice(
            &ns,
            "u",
            ClientConfig::default(),
            FailoverSettings {
                random_order: false,
                ..FailoverSettings::default()
            },
            None,
            sleep,
            Some((settings, ManualClock::shared(0))),
        );
        let observer = proxy.inner.observer.as_ref().expect("observer reads");
        assert_eq!(proxy.probe(observer, 0).await, Seen::Unreachable);
        // Still holding the connection: the answer was the timeout's, not a closed socket's.
        assert!(!server.is_finished());
        assert_eq!(
            *asked.lock().unwrap_or_else(|e| e.into_inner()),
            [Duration::from_millis(1500)]
        );
        server.abort();
        proxy.close().await;
    }
}
