//! truncate and concat on the client (DistributedFileSystem.truncate / concat).

use rhdfs_proto::hdfs::{
    ConcatRequestProto, ConcatResponseProto, IsFileClosedRequestProto, IsFileClosedResponseProto,
    TruncateRequestProto, TruncateResponseProto,
};

use crate::error::{ClientError, Result};
use crate::filesystem::FileSystem;

impl FileSystem {
    /// Truncates `p` to `new_length` bytes: true when done at once (the new length is on
    /// a block boundary), false when the last block is being recovered and the file is
    /// closed at the new length once that recovery ends.
    pub async fn truncate(&self, p: &str, new_length: i64) -> Result<bool> {
        let resp: TruncateResponseProto = self
            .call(
                "truncate",
                &TruncateRequestProto {
                    src: self.resolve(p)?,
                    // A negative length goes as its two's complement, as Java's client sends it.
                    new_length: new_length as u64,
                    client_name: self.client_name().to_string(),
                },
            )
            .await?;
        Ok(resp.result)
    }

    /// Moves the blocks of `srcs` to the end of `target` (all in one directory) and
    /// removes the sources.
    pub async fn concat(&self, target: &str, srcs: &[&str]) -> Result<()> {
        let srcs = srcs
            .iter()
            .map(|s| self.resolve(s))
            .collect::<std::result::Result<Vec<_>, ClientError>>()?;
        let _: ConcatResponseProto = self
            .call(
                "concat",
                &ConcatRequestProto {
                    trg: self.resolve(target)?,
                    srcs,
                },
            )
            .await?;
        Ok(())
    }

    /// True when `p` is not open for write (DistributedFileSystem.isFileClosed): how a
    /// client learns that a truncate's block recovery ended.
    pub async fn is_file_closed(&self, p: &str) -> Result<bool> {
        let resp: IsFileClosedResponseProto = self
            .call(
                "isFileClosed",
                &IsFileClosedRequestProto {
                    src: self.resolve(p)?,
                },
            )
            .await?;
        Ok(resp.result)
    }
}
