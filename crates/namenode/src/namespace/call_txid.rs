//! The last transaction id the running RPC call logged, so the call is answered once its
//! own edits are durable (Hadoop's FSEditLog keeps the same in a thread-local,
//! `myTransactionId`, for `logSync`) instead of once every edit logged by anyone up to the
//! moment of its sync: under load that moment is later, and waiting for it made a call that
//! already synced (a create whose commit synced its edits) wait for the next group commit.
//!
//! [`track`] runs a call's future with a slot; [`Namespace::log_and_apply`] notes each txid
//! it logs from inside one. Edits logged elsewhere (another task, no slot) note nothing.
//!
//! [`Namespace::log_and_apply`]: super::Namespace::log_and_apply

use std::cell::Cell;

tokio::task_local! {
    static LOGGED: Cell<Option<u64>>;
}

/// Runs `call` and returns its output with the last txid it logged (None: it logged none
/// from its own task).
pub async fn track<F: Future>(call: F) -> (F::Output, Option<u64>) {
    LOGGED
        .scope(Cell::new(None), async {
            let out = call.await;
            (out, LOGGED.with(Cell::get))
        })
        .await
}

/// Notes that the running call logged `txid` (nothing outside [`track`]).
pub(super) fn note(txid: u64) {
    // Outside a tracked call (start-up, lease recovery, tests) there is no slot.
    let _ = LOGGED.try_with(|slot| slot.set(Some(txid)));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_call_sees_the_last_txid_it_noted_and_no_other_tasks() {
        let ((), none) = track(async {}).await;
        assert_eq!(none, None);
        let ((), last) = track(async {
            note(7);
            note(9);
            // Another task's edits are not this call's.
            tokio::spawn(async { note(11) }).await.unwrap();
        })
        .await;
        assert_eq!(last, Some(9));
        // Outside a tracked call nothing is kept and nothing fails.
        note(3);
        let ((), fresh) = track(async {}).await;
        assert_eq!(fresh, None);
    }
}
