//! A compact binary encoding of [`EditOp`], the payload of an edit-log record.
//!
//! Layout: one tag byte, then the op's fields in declaration order. Integers are
//! unsigned LEB128 varints, byte strings and strings are a varint length and the bytes,
//! options are a 0/1 byte and the value, a block is (id, gs, num_bytes), a permission
//! is (owner, group, mode). Decoding never panics: bad input is an [`EditDecodeError`].

use crate::edit::EditOp;
use crate::fsdir::{BlockInfo, PermissionStatus};

/// Why a payload is not an edit op.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EditDecodeError {
    #[error("edit record ends early at byte {0}")]
    Truncated(usize),
    #[error("unknown edit op tag {0}")]
    UnknownTag(u8),
    #[error("bad value at byte {at}: {what}")]
    Bad { at: usize, what: &'static str },
    #[error("{0} trailing bytes after the edit op")]
    Trailing(usize),
}

const MKDIR: u8 = 1;
const ADD_FILE: u8 = 2;
const ADD_BLOCK: u8 = 3;
const UPDATE_LAST_BLOCK: u8 = 4;
const ABANDON_BLOCK: u8 = 5;
const CLOSE_FILE: u8 = 6;
const REOPEN_FILE: u8 = 7;
const SET_GENSTAMP: u8 = 8;
const DELETE: u8 = 9;
const RENAME: u8 = 10;
const SET_REPLICATION: u8 = 11;
const SET_PERMISSION: u8 = 12;
const SET_OWNER: u8 = 13;
const SET_TIMES: u8 = 14;

struct W(Vec<u8>);

impl W {
    fn u(&mut self, mut v: u64) {
        loop {
            let b = (v & 0x7f) as u8;
            v >>= 7;
            if v == 0 {
                self.0.push(b);
                return;
            }
            self.0.push(b | 0x80);
        }
    }
    fn bytes(&mut self, b: &[u8]) {
        self.u(b.len() as u64);
        self.0.extend_from_slice(b);
    }
    fn opt_u(&mut self, v: Option<u64>) {
        match v {
            Some(x) => {
                self.0.push(1);
                self.u(x);
            }
            None => self.0.push(0),
        }
    }
    fn opt_s(&mut self, v: &Option<String>) {
        match v {
            Some(x) => {
                self.0.push(1);
                self.bytes(x.as_bytes());
            }
            None => self.0.push(0),
        }
    }
    fn block(&mut self, b: &BlockInfo) {
        self.u(b.id);
        self.u(b.gs);
        self.u(b.num_bytes);
    }
    fn perm(&mut self, p: &PermissionStatus) {
        self.bytes(p.owner.as_bytes());
        self.bytes(p.group.as_bytes());
        self.u(u64::from(p.mode));
    }
}

struct R<'a> {
    b: &'a [u8],
    at: usize,
}

impl R<'_> {
    fn byte(&mut self) -> Result<u8, EditDecodeError> {
        let v = *self
            .b
            .get(self.at)
            .ok_or(EditDecodeError::Truncated(self.at))?;
        self.at += 1;
        Ok(v)
    }
    fn u(&mut self) -> Result<u64, EditDecodeError> {
        let start = self.at;
        let mut v = 0u64;
        for shift in (0..64).step_by(7) {
            let b = self.byte()?;
            v |= u64::from(b & 0x7f) << shift;
            if b & 0x80 == 0 {
                return Ok(v);
            }
        }
        Err(EditDecodeError::Bad {
            at: start,
            what: "varint too long",
        })
    }
    fn u16(&mut self) -> Result<u16, EditDecodeError> {
        let at = self.at;
        u16::try_from(self.u()?).map_err(|_| EditDecodeError::Bad {
            at,
            what: "value over 16 bits",
        })
    }
    fn bytes(&mut self) -> Result<Vec<u8>, EditDecodeError> {
        let at = self.at;
        let n =
            usize::try_from(self.u()?).map_err(|_| EditDecodeError::Bad { at, what: "length" })?;
        let end = self
            .at
            .checked_add(n)
            .ok_or(EditDecodeError::Bad { at, what: "length" })?;
        let s = self
            .b
            .get(self.at..end)
            .ok_or(EditDecodeError::Truncated(self.b.len()))?;
        self.at = end;
        Ok(s.to_vec())
    }
    fn string(&mut self) -> Result<String, EditDecodeError> {
        let at = self.at;
        String::from_utf8(self.bytes()?).map_err(|_| EditDecodeError::Bad {
            at,
            what: "not UTF-8",
        })
    }
    fn flag(&mut self) -> Result<bool, EditDecodeError> {
        let at = self.at;
        match self.byte()? {
            0 => Ok(false),
            1 => Ok(true),
            _ => Err(EditDecodeError::Bad {
                at,
                what: "option flag",
            }),
        }
    }
    fn opt_u(&mut self) -> Result<Option<u64>, EditDecodeError> {
        Ok(if self.flag()? { Some(self.u()?) } else { None })
    }
    fn opt_s(&mut self) -> Result<Option<String>, EditDecodeError> {
        Ok(if self.flag()? {
            Some(self.string()?)
        } else {
            None
        })
    }
    fn block(&mut self) -> Result<BlockInfo, EditDecodeError> {
        Ok(BlockInfo {
            id: self.u()?,
            gs: self.u()?,
            num_bytes: self.u()?,
        })
    }
    fn perm(&mut self) -> Result<PermissionStatus, EditDecodeError> {
        Ok(PermissionStatus {
            owner: self.string()?,
            group: self.string()?,
            mode: self.u16()?,
        })
    }
}

/// Encodes `op` as an edit-log payload.
pub fn encode(op: &EditOp) -> Vec<u8> {
    let mut w = W(Vec::with_capacity(64));
    match op {
        EditOp::Mkdir {
            id,
            parent,
            name,
            perm,
            mtime,
        } => {
            w.0.push(MKDIR);
            w.u(*id);
            w.u(*parent);
            w.bytes(name);
            w.perm(perm);
            w.u(*mtime);
        }
        EditOp::AddFile {
            id,
            parent,
            name,
            perm,
            mtime,
            replication,
            block_size,
            client_name,
            client_machine,
            replaced,
        } => {
            w.0.push(ADD_FILE);
            w.u(*id);
            w.u(*parent);
            w.bytes(name);
            w.perm(perm);
            w.u(*mtime);
            w.u(u64::from(*replication));
            w.u(*block_size);
            w.bytes(client_name.as_bytes());
            w.bytes(client_machine.as_bytes());
            w.opt_u(*replaced);
        }
        EditOp::AddBlock { file, block } => {
            w.0.push(ADD_BLOCK);
            w.u(*file);
            w.block(block);
        }
        EditOp::UpdateLastBlock { file, block } => {
            w.0.push(UPDATE_LAST_BLOCK);
            w.u(*file);
            w.block(block);
        }
        EditOp::AbandonBlock { file, block_id } => {
            w.0.push(ABANDON_BLOCK);
            w.u(*file);
            w.u(*block_id);
        }
        EditOp::CloseFile { file, mtime, atime } => {
            w.0.push(CLOSE_FILE);
            w.u(*file);
            w.u(*mtime);
            w.u(*atime);
        }
        EditOp::ReopenFile {
            file,
            client_name,
            client_machine,
        } => {
            w.0.push(REOPEN_FILE);
            w.u(*file);
            w.bytes(client_name.as_bytes());
            w.bytes(client_machine.as_bytes());
        }
        EditOp::SetGenstamp { gs } => {
            w.0.push(SET_GENSTAMP);
            w.u(*gs);
        }
        EditOp::Delete { id, mtime } => {
            w.0.push(DELETE);
            w.u(*id);
            w.u(*mtime);
        }
        EditOp::Rename {
            id,
            dst_parent,
            dst_name,
            replaced,
            mtime,
        } => {
            w.0.push(RENAME);
            w.u(*id);
            w.u(*dst_parent);
            w.bytes(dst_name);
            w.opt_u(*replaced);
            w.u(*mtime);
        }
        EditOp::SetReplication { id, replication } => {
            w.0.push(SET_REPLICATION);
            w.u(*id);
            w.u(u64::from(*replication));
        }
        EditOp::SetPermission { id, mode } => {
            w.0.push(SET_PERMISSION);
            w.u(*id);
            w.u(u64::from(*mode));
        }
        EditOp::SetOwner { id, owner, group } => {
            w.0.push(SET_OWNER);
            w.u(*id);
            w.opt_s(owner);
            w.opt_s(group);
        }
        EditOp::SetTimes { id, mtime, atime } => {
            w.0.push(SET_TIMES);
            w.u(*id);
            w.opt_u(*mtime);
            w.opt_u(*atime);
        }
    }
    w.0
}

/// Decodes an edit-log payload written by [`encode`].
pub fn decode(payload: &[u8]) -> Result<EditOp, EditDecodeError> {
    let mut r = R { b: payload, at: 0 };
    let op = match r.byte()? {
        MKDIR => EditOp::Mkdir {
            id: r.u()?,
            parent: r.u()?,
            name: r.bytes()?,
            perm: r.perm()?,
            mtime: r.u()?,
        },
        ADD_FILE => EditOp::AddFile {
            id: r.u()?,
            parent: r.u()?,
            name: r.bytes()?,
            perm: r.perm()?,
            mtime: r.u()?,
            replication: r.u16()?,
            block_size: r.u()?,
            client_name: r.string()?,
            client_machine: r.string()?,
            replaced: r.opt_u()?,
        },
        ADD_BLOCK => EditOp::AddBlock {
            file: r.u()?,
            block: r.block()?,
        },
        UPDATE_LAST_BLOCK => EditOp::UpdateLastBlock {
            file: r.u()?,
            block: r.block()?,
        },
        ABANDON_BLOCK => EditOp::AbandonBlock {
            file: r.u()?,
            block_id: r.u()?,
        },
        CLOSE_FILE => EditOp::CloseFile {
            file: r.u()?,
            mtime: r.u()?,
            atime: r.u()?,
        },
        REOPEN_FILE => EditOp::ReopenFile {
            file: r.u()?,
            client_name: r.string()?,
            client_machine: r.string()?,
        },
        SET_GENSTAMP => EditOp::SetGenstamp { gs: r.u()? },
        DELETE => EditOp::Delete {
            id: r.u()?,
            mtime: r.u()?,
        },
        RENAME => EditOp::Rename {
            id: r.u()?,
            dst_parent: r.u()?,
            dst_name: r.bytes()?,
            replaced: r.opt_u()?,
            mtime: r.u()?,
        },
        SET_REPLICATION => EditOp::SetReplication {
            id: r.u()?,
            replication: r.u16()?,
        },
        SET_PERMISSION => EditOp::SetPermission {
            id: r.u()?,
            mode: r.u16()?,
        },
        SET_OWNER => EditOp::SetOwner {
            id: r.u()?,
            owner: r.opt_s()?,
            group: r.opt_s()?,
        },
        SET_TIMES => EditOp::SetTimes {
            id: r.u()?,
            mtime: r.opt_u()?,
            atime: r.opt_u()?,
        },
        t => return Err(EditDecodeError::UnknownTag(t)),
    };
    if r.at != payload.len() {
        return Err(EditDecodeError::Trailing(payload.len() - r.at));
    }
    Ok(op)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn samples() -> Vec<EditOp> {
        let perm = PermissionStatus {
            owner: "root".into(),
            group: "supergroup".into(),
            mode: 0o1755,
        };
        let b = BlockInfo {
            id: (1 << 30) + 1,
            gs: 1001,
            num_bytes: u64::MAX,
        };
        vec![
            EditOp::Mkdir {
                id: 16386,
                parent: 16385,
                name: "é/x".as_bytes().to_vec(),
                perm: perm.clone(),
                mtime: 1,
            },
            EditOp::AddFile {
                id: 16387,
                parent: 16386,
                name: b"f".to_vec(),
                perm,
                mtime: 2,
                replication: 3,
                block_size: 134217728,
                client_name: "DFSClient_1".into(),
                client_machine: "127.0.0.1".into(),
                replaced: Some(9),
            },
            EditOp::AddBlock {
                file: 16387,
                block: b,
            },
            EditOp::UpdateLastBlock {
                file: 16387,
                block: b,
            },
            EditOp::AbandonBlock {
                file: 16387,
                block_id: b.id,
            },
            EditOp::CloseFile {
                file: 16387,
                mtime: 3,
                atime: 4,
            },
            EditOp::ReopenFile {
                file: 16387,
                client_name: "c".into(),
                client_machine: String::new(),
            },
            EditOp::SetGenstamp { gs: 1002 },
            EditOp::Delete {
                id: 16387,
                mtime: 5,
            },
            EditOp::Rename {
                id: 1,
                dst_parent: 2,
                dst_name: b"n".to_vec(),
                replaced: None,
                mtime: 6,
            },
            EditOp::SetReplication {
                id: 1,
                replication: 512,
            },
            EditOp::SetPermission { id: 1, mode: 0o777 },
            EditOp::SetOwner {
                id: 1,
                owner: Some("bob".into()),
                group: None,
            },
            EditOp::SetTimes {
                id: 1,
                mtime: None,
                atime: Some(7),
            },
        ]
    }

    #[test]
    fn round_trips_every_op() {
        for op in samples() {
            let bytes = encode(&op);
            assert_eq!(decode(&bytes).unwrap(), op);
        }
    }

    #[test]
    fn rejects_damage_without_panicking() {
        for op in samples() {
            let bytes = encode(&op);
            for cut in 0..bytes.len() {
                assert!(decode(&bytes[..cut]).is_err(), "{op:?} cut at {cut}");
            }
            let mut longer = bytes.clone();
            longer.push(0);
            assert_eq!(decode(&longer), Err(EditDecodeError::Trailing(1)));
        }
        assert_eq!(decode(&[99]), Err(EditDecodeError::UnknownTag(99)));
        assert!(
            decode(&[
                SET_GENSTAMP,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0xff,
                0x01
            ])
            .is_err()
        );
    }
}
