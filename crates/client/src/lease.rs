//! Background lease renewal: while any file of this client is open for write, renewLease is
//! sent every `interval` (half the NameNode's 60 s soft limit, like the Java client).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use rhdfs_conf::clock::SharedClock;
use rhdfs_proto::hdfs::{RenewLeaseRequestProto, RenewLeaseResponseProto};
use tracing::{debug, warn};

use crate::failover::NameNodeProxy;

/// Default renewal interval: half of the 60 s lease soft limit.
pub const RENEW_INTERVAL_DEFAULT: Duration = Duration::from_secs(30);

#[derive(Debug)]
pub(crate) struct LeaseRenewer {
    nn: NameNodeProxy,
    client_name: String,
    clock: SharedClock,
    interval: Duration,
    open: AtomicUsize,
    running: AtomicBool,
    renewals: AtomicUsize,
}

/// Held by every open output stream; the lease stops being renewed when the last is dropped.
#[derive(Debug)]
pub(crate) struct LeaseGuard {
    renewer: Arc<LeaseRenewer>,
}

impl Drop for LeaseGuard {
    fn drop(&mut self) {
        self.renewer.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl LeaseRenewer {
    pub(crate) fn new(
        nn: NameNodeProxy,
        client_name: String,
        clock: SharedClock,
        interval: Duration,
    ) -> Arc<Self> {
        Arc::new(LeaseRenewer {
            nn,
            client_name,
            clock,
            interval,
            open: AtomicUsize::new(0),
            running: AtomicBool::new(false),
            renewals: AtomicUsize::new(0),
        })
    }

    /// Registers an open file, starting the renewal task if it is not running.
    pub(crate) fn acquire(self: &Arc<Self>) -> LeaseGuard {
        self.open.fetch_add(1, Ordering::AcqRel);
        if self
            .running
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
        {
            // The interval counts from now, not from whenever the task first runs.
            let since = self.clock.monotonic();
            let me = Arc::clone(self);
            tokio::spawn(async move { me.run(since).await });
        }
        LeaseGuard {
            renewer: Arc::clone(self),
        }
    }

    /// Number of successful renewLease calls so far.
    pub(crate) fn renewals(&self) -> usize {
        self.renewals.load(Ordering::Acquire)
    }

    async fn run(self: Arc<Self>, since: Duration) {
        let mut last = since;
        let tick = (self.interval / 10).clamp(Duration::from_millis(10), Duration::from_secs(1));
        loop {
            tokio::time::sleep(tick).await;
            if self.open.load(Ordering::Acquire) == 0 {
                self.running.store(false, Ordering::Release);
                // A writer may have opened between the check and the store.
                if self.open.load(Ordering::Acquire) == 0
                    || self
                        .running
                        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                        .is_err()
                {
                    return;
                }
            }
            let now = self.clock.monotonic();
            if now.saturating_sub(last) < self.interval {
                continue;
            }
            let req = RenewLeaseRequestProto {
                client_name: self.client_name.clone(),
                namespaces: Vec::new(),
            };
            match self
                .nn
                .call::<_, RenewLeaseResponseProto>("renewLease", &req)
                .await
            {
                Ok(_) => {
                    debug!(client = %self.client_name, "lease renewed");
                    self.renewals.fetch_add(1, Ordering::AcqRel);
                    last = now;
                }
                Err(e) => warn!(client = %self.client_name, "renewLease failed: {e}"),
            }
        }
    }
}
