//! A compact binary encoding of [`EditOp`], the payload of an edit-log record.
//!
//! Layout: one tag byte, then the op's fields in declaration order. Integers are
//! unsigned LEB128 varints, byte strings and strings are a varint length and the bytes,
//! options are a 0/1 byte and the value, a block is (id, gs, num_bytes), a permission
//! is (owner, group, mode). Decoding never panics: bad input is an [`EditDecodeError`].

use crate::codec::{CodecError, R, W};
use crate::edit::EditOp;

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
const REASSIGN_LEASE: u8 = 15;
const HOLD_ORPHANS: u8 = 16;
const RELEASE_ORPHANS: u8 = 17;
// Tags 30–39: quotas.
const SET_QUOTA: u8 = 30;
const SET_TYPE_QUOTA: u8 = 31;
const SET_ACL: u8 = 20;
const SET_XATTR: u8 = 21;
const REMOVE_XATTR: u8 = 22;
// Tags 40–49: truncate and concat.
const TRUNCATE: u8 = 40;
const CONCAT: u8 = 41;

impl From<CodecError> for EditDecodeError {
    fn from(e: CodecError) -> Self {
        match e {
            CodecError::Truncated(at) => EditDecodeError::Truncated(at),
            CodecError::Bad { at, what } => EditDecodeError::Bad { at, what },
        }
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
            new_block,
        } => {
            w.0.push(REOPEN_FILE);
            w.u(*file);
            w.bytes(client_name.as_bytes());
            w.bytes(client_machine.as_bytes());
            w.0.push(u8::from(*new_block));
        }
        EditOp::ReassignLease { file, holder } => {
            w.0.push(REASSIGN_LEASE);
            w.u(*file);
            w.bytes(holder.as_bytes());
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
        EditOp::HoldOrphans {
            floor,
            block_id,
            gs,
        } => {
            w.0.push(HOLD_ORPHANS);
            w.u(*floor);
            w.u(*block_id);
            w.u(*gs);
        }
        EditOp::ReleaseOrphans => w.0.push(RELEASE_ORPHANS),
        EditOp::SetQuota {
            id,
            ns_quota,
            ds_quota,
        } => {
            // Quotas travel as the two's complement of -1 ("none") like in the image.
            w.0.push(SET_QUOTA);
            w.u(*id);
            w.u(*ns_quota as u64);
            w.u(*ds_quota as u64);
        }
        EditOp::SetTypeQuota {
            id,
            storage_type,
            quota,
        } => {
            w.0.push(SET_TYPE_QUOTA);
            w.u(*id);
            w.0.push(*storage_type);
            w.u(*quota as u64);
        }
        EditOp::SetAcl { id, mode, entries } => {
            w.0.push(SET_ACL);
            w.u(*id);
            w.u(u64::from(*mode));
            w.acl(entries);
        }
        EditOp::SetXAttr { id, xattr } => {
            w.0.push(SET_XATTR);
            w.u(*id);
            w.xattr(xattr);
        }
        EditOp::RemoveXAttr { id, ns, name } => {
            w.0.push(REMOVE_XATTR);
            w.u(*id);
            w.0.push(*ns as u8);
            w.bytes(name.as_bytes());
        }
        EditOp::Truncate {
            file,
            new_length,
            mtime,
            client_name,
            client_machine,
        } => {
            w.0.push(TRUNCATE);
            w.u(*file);
            w.u(*new_length);
            w.u(*mtime);
            w.bytes(client_name.as_bytes());
            w.bytes(client_machine.as_bytes());
        }
        EditOp::Concat {
            target,
            srcs,
            mtime,
        } => {
            w.0.push(CONCAT);
            w.u(*target);
            w.u(srcs.len() as u64);
            for s in srcs {
                w.u(*s);
            }
            w.u(*mtime);
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
            // Absent in records from before the flag.
            new_block: if r.at < payload.len() {
                r.flag()?
            } else {
                false
            },
        },
        REASSIGN_LEASE => EditOp::ReassignLease {
            file: r.u()?,
            holder: r.string()?,
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
        HOLD_ORPHANS => EditOp::HoldOrphans {
            floor: r.u()?,
            block_id: r.u()?,
            gs: r.u()?,
        },
        RELEASE_ORPHANS => EditOp::ReleaseOrphans,
        SET_TIMES => EditOp::SetTimes {
            id: r.u()?,
            mtime: r.opt_u()?,
            atime: r.opt_u()?,
        },
        SET_QUOTA => EditOp::SetQuota {
            id: r.u()?,
            ns_quota: r.u()? as i64,
            ds_quota: r.u()? as i64,
        },
        SET_TYPE_QUOTA => EditOp::SetTypeQuota {
            id: r.u()?,
            storage_type: r.byte()?,
            quota: r.u()? as i64,
        },
        SET_ACL => EditOp::SetAcl {
            id: r.u()?,
            mode: r.u16()?,
            entries: r.acl()?,
        },
        SET_XATTR => EditOp::SetXAttr {
            id: r.u()?,
            xattr: r.xattr()?,
        },
        REMOVE_XATTR => EditOp::RemoveXAttr {
            id: r.u()?,
            ns: r.xattr_ns()?,
            name: r.string()?,
        },
        TRUNCATE => EditOp::Truncate {
            file: r.u()?,
            new_length: r.u()?,
            mtime: r.u()?,
            client_name: r.string()?,
            client_machine: r.string()?,
        },
        CONCAT => {
            let target = r.u()?;
            let n = r.len()?;
            let mut srcs = Vec::with_capacity(n.min(1 << 12));
            for _ in 0..n {
                srcs.push(r.u()?);
            }
            EditOp::Concat {
                target,
                srcs,
                mtime: r.u()?,
            }
        }
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
    use crate::fsdir::{FileBlock, PermissionStatus};

    fn samples() -> Vec<EditOp> {
        let perm = PermissionStatus {
            owner: "root".into(),
            group: "supergroup".into(),
            mode: 0o1755,
        };
        let b = FileBlock {
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
                new_block: true,
            },
            EditOp::ReassignLease {
                file: 16387,
                holder: "HDFS_NameNode".into(),
            },
            EditOp::SetGenstamp { gs: 1002 },
            EditOp::HoldOrphans {
                floor: 1002,
                block_id: (1 << 30) + 77,
                gs: 2040,
            },
            EditOp::ReleaseOrphans,
            EditOp::SetAcl {
                id: 16390,
                mode: 0o1770,
                entries: vec![
                    crate::fsdir::acl::AclEntry::new(
                        false,
                        crate::fsdir::acl::AclType::User,
                        Some("bob"),
                        7,
                    ),
                    crate::fsdir::acl::AclEntry::new(
                        true,
                        crate::fsdir::acl::AclType::Mask,
                        None,
                        5,
                    ),
                ],
            },
            EditOp::SetXAttr {
                id: 16390,
                xattr: crate::fsdir::xattr::XAttr {
                    ns: crate::fsdir::xattr::XAttrNs::Trusted,
                    name: "a.b".into(),
                    value: Some(vec![0, 1, 255]),
                },
            },
            EditOp::SetXAttr {
                id: 16390,
                xattr: crate::fsdir::xattr::XAttr {
                    ns: crate::fsdir::xattr::XAttrNs::User,
                    name: "n".into(),
                    value: None,
                },
            },
            EditOp::RemoveXAttr {
                id: 16390,
                ns: crate::fsdir::xattr::XAttrNs::User,
                name: "n".into(),
            },
            EditOp::Truncate {
                file: 16387,
                new_length: 150,
                mtime: 6,
                client_name: "DFSClient_2".into(),
                client_machine: "10.0.0.1".into(),
            },
            EditOp::Concat {
                target: 16387,
                srcs: vec![16388, 16389],
                mtime: 7,
            },
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
            EditOp::SetQuota {
                id: 16386,
                ns_quota: -1,
                ds_quota: 1 << 40,
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
                if let EditOp::ReopenFile {
                    file,
                    client_name,
                    client_machine,
                    ..
                } = &op
                    && cut == bytes.len() - 1
                {
                    // Without its last byte: a record from before the NEW_BLOCK flag.
                    let old = EditOp::ReopenFile {
                        file: *file,
                        client_name: client_name.clone(),
                        client_machine: client_machine.clone(),
                        new_block: false,
                    };
                    assert_eq!(decode(&bytes[..cut]), Ok(old));
                    continue;
                }
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
