//! Installing another member's image: an HA member whose Raft log fell behind the others'
//! snapshots takes the image they were built from instead of the edits it missed.

use super::{Durable, PersistError};

impl Durable {
    /// Saves `payload` as the image for `txid` and starts the edit log over after it, so
    /// the next start loads this image and the edits applied after it. The edit log must
    /// hold nothing past `txid`. Excludes a checkpoint in progress. Blocking: call from a
    /// blocking thread.
    ///
    /// Crash safety: the image is durable before any segment is removed; a crash between
    /// the two leaves segments that end at or before `txid`, which a start after the
    /// newest image skips.
    pub fn install_image(&self, txid: u64, payload: &[u8]) -> Result<(), PersistError> {
        let _one = self.checkpointing.blocking_lock();
        self.images.save_image(txid, payload)?;
        self.log.restart_after(txid)?;
        self.saved.send_replace(txid);
        tracing::info!(
            txid,
            bytes = payload.len(),
            "installed an image from another NameNode"
        );
        Ok(())
    }
}
