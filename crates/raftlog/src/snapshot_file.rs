//! The state machine's current snapshot on disk: `<dir>/raft_snapshot`, replaced atomically.
//!
//! ```text
//! "RHDFSRS1"
//! [u8 has last log id][u64 term][u64 node id][u64 index]        last_log_id
//! [u8 has membership log id][u64 term][u64 node id][u64 index]  last_membership.log_id
//! membership (codec's layout)
//! [u32 len][snapshot id utf-8]
//! [u64 len][application bytes]
//! [u32 BE CRC32C of everything before]
//! ```

use std::path::Path;

use openraft::{BasicNode, LogId, SnapshotMeta, StoredMembership};
use rhdfs_editlog::fs::FileSystem;

use crate::codec::{NO_NODE, Reader, decode_membership, encode_membership, log_id};
use crate::error::{RaftLogError, Result};

/// Name of the snapshot file.
pub const SNAPSHOT_FILE: &str = "raft_snapshot";
const SNAPSHOT_TMP: &str = "raft_snapshot.tmp";
const MAGIC: [u8; 8] = *b"RHDFSRS1";

type Meta = SnapshotMeta<u64, BasicNode>;

fn put_log_id(out: &mut Vec<u8>, id: Option<LogId<u64>>) {
    out.push(u8::from(id.is_some()));
    let (t, n, i) = id.map_or((0, NO_NODE, 0), |l| (l.leader_id.term, NO_NODE, l.index));
    out.extend_from_slice(&t.to_be_bytes());
    out.extend_from_slice(&n.to_be_bytes());
    out.extend_from_slice(&i.to_be_bytes());
}

fn get_log_id(r: &mut Reader<'_>) -> Result<Option<LogId<u64>>> {
    let has = r.u8()? != 0;
    let term = r.u64()?;
    let _leader_node = r.u64()?;
    let index = r.u64()?;
    Ok(has.then(|| log_id(term, index)))
}

/// The file's bytes for `meta` and `data`.
pub fn encode(meta: &Meta, data: &[u8]) -> Vec<u8> {
    let mut out = MAGIC.to_vec();
    put_log_id(&mut out, meta.last_log_id);
    put_log_id(&mut out, *meta.last_membership.log_id());
    encode_membership(meta.last_membership.membership(), &mut out);
    let id = meta.snapshot_id.as_bytes();
    out.extend_from_slice(&u32::try_from(id.len()).unwrap_or(u32::MAX).to_be_bytes());
    out.extend_from_slice(id);
    out.extend_from_slice(&(data.len() as u64).to_be_bytes());
    out.extend_from_slice(data);
    let crc = crc32c::crc32c(&out);
    out.extend_from_slice(&crc.to_be_bytes());
    out
}

/// Reads back what [`encode`] wrote.
pub fn decode(bytes: &[u8]) -> Result<(Meta, Vec<u8>)> {
    let err = |reason: String| RaftLogError::Decode {
        what: "raft snapshot file",
        reason,
    };
    let body_len = bytes
        .len()
        .checked_sub(4)
        .ok_or_else(|| err("shorter than its checksum".into()))?;
    let (body, crc) = bytes.split_at(body_len);
    if Reader::new(crc, "raft snapshot file").u32()? != crc32c::crc32c(body) {
        return Err(err("checksum mismatch".into()));
    }
    let mut r = Reader::new(body, "raft snapshot file");
    if r.take(8)? != MAGIC {
        return Err(err("bad magic".into()));
    }
    let last_log_id = get_log_id(&mut r)?;
    let membership_id = get_log_id(&mut r)?;
    let membership = decode_membership(&mut r)?;
    let id_len = r.count(1)?;
    let snapshot_id = std::str::from_utf8(r.take(id_len)?)
        .map_err(|e| err(e.to_string()))?
        .to_string();
    let data_len = usize::try_from(r.u64()?).map_err(|e| err(e.to_string()))?;
    let data = r.take(data_len)?.to_vec();
    r.end()?;
    let meta = Meta {
        last_log_id,
        last_membership: StoredMembership::new(membership_id, membership),
        snapshot_id,
    };
    Ok((meta, data))
}

/// Replaces `<dir>/raft_snapshot` durably. Blocking.
pub fn save(fs: &dyn FileSystem, dir: &Path, meta: &Meta, data: &[u8]) -> Result<()> {
    fs.create_dir_all(dir)
        .map_err(|e| RaftLogError::io("create directory", dir, e))?;
    let tmp = dir.join(SNAPSHOT_TMP);
    let dst = dir.join(SNAPSHOT_FILE);
    let mut file = fs
        .create(&tmp)
        .map_err(|e| RaftLogError::io("create", &tmp, e))?;
    file.write_all(&encode(meta, data))
        .and_then(|()| file.sync())
        .map_err(|e| RaftLogError::io("write", &tmp, e))?;
    drop(file);
    fs.rename(&tmp, &dst)
        .map_err(|e| RaftLogError::io("rename", &tmp, e))?;
    fs.sync_dir(dir)
        .map_err(|e| RaftLogError::io("sync directory", dir, e))
}

/// The snapshot saved in `dir`, if any. Blocking.
pub fn load(fs: &dyn FileSystem, dir: &Path) -> Result<Option<(Meta, Vec<u8>)>> {
    let path = dir.join(SNAPSHOT_FILE);
    if !fs.exists(&path) {
        return Ok(None);
    }
    let bytes = fs
        .read(&path)
        .map_err(|e| RaftLogError::io("read", &path, e))?;
    decode(&bytes).map(Some)
}
