//! What a committed create or append left in the namespace: the answer to a retry of the
//! call that reaches a NameNode which applied the call's edits but did not run it (after an
//! HA failover, `retry_cache::Lookup::Replay`). Running the call again would fail (the file
//! is already open by its client), so the answer is read back instead.

use super::AppendResult;
use super::{FileStatus, Namespace};
use crate::error::FsResult;
use crate::fsdir::FsPath;
use crate::fsdir::permission::{Caller, not_a_directory};

impl Namespace {
    /// The id of the file at `src` when it is open for write by `client_name` (what a
    /// create or an append of that client leaves); None otherwise.
    fn open_by(&self, caller: &Caller, src: &str, client_name: &str) -> FsResult<Option<u64>> {
        let path = FsPath::parse(src)?;
        let r = self.resolve(&path);
        if let Some(e) = not_a_directory(&path, &r, false) {
            return Err(e);
        }
        self.checker(caller).check_traverse(&r)?;
        Ok(r.last().filter(|id| {
            self.dir
                .get(*id)
                .and_then(|i| i.as_file())
                .and_then(|f| f.uc())
                .is_some_and(|uc| uc.client_name == client_name)
        }))
    }

    /// create's answer for a file `client_name` created at `src`; None when the namespace
    /// does not hold it open by that client (the call's edits were not all committed).
    pub fn created_status(
        &self,
        caller: &Caller,
        src: &str,
        client_name: &str,
    ) -> FsResult<Option<FileStatus>> {
        Ok(self
            .open_by(caller, src, client_name)?
            .and_then(|id| Some((id, self.dir.get(id)?)))
            .map(|(id, i)| self.status_of(id, i, Vec::new(), false)))
    }

    /// append's answer for a file `client_name` re-opened at `src` with `flag`; None when
    /// the namespace does not hold it open by that client.
    pub fn appended(
        &self,
        caller: &Caller,
        src: &str,
        client_name: &str,
        flag: u32,
    ) -> FsResult<Option<AppendResult>> {
        Ok(self
            .open_by(caller, src, client_name)?
            .and_then(|id| self.append_result(id, flag)))
    }
}
