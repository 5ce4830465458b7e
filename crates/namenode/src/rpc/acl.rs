//! getAclStatus, modifyAclEntries, removeAclEntries, removeDefaultAcl, removeAcl, setAcl.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::acl_entry_proto::{AclEntryScopeProto, AclEntryTypeProto, FsActionProto};
use rhdfs_proto::hdfs::{
    AclEntryProto, AclStatusProto, FsPermissionProto, GetAclStatusRequestProto,
    GetAclStatusResponseProto, ModifyAclEntriesRequestProto, ModifyAclEntriesResponseProto,
    RemoveAclEntriesRequestProto, RemoveAclEntriesResponseProto, RemoveAclRequestProto,
    RemoveAclResponseProto, RemoveDefaultAclRequestProto, RemoveDefaultAclResponseProto,
    SetAclRequestProto, SetAclResponseProto,
};

use super::ClientProtocolService;
use crate::fsdir::acl::{AclEntry, AclType};
use crate::namespace::AclChange;

/// An entry from the wire (unknown enum values fail the call).
pub fn entry_from_proto(p: &AclEntryProto) -> Result<AclEntry, RpcError> {
    let bad =
        |what: &str| RpcError::new(super::errors::ILLEGAL_ARGUMENT, format!("bad ACL {what}"));
    let kind = match AclEntryTypeProto::try_from(p.r#type).map_err(|_| bad("entry type"))? {
        AclEntryTypeProto::User => AclType::User,
        AclEntryTypeProto::Group => AclType::Group,
        AclEntryTypeProto::Mask => AclType::Mask,
        AclEntryTypeProto::Other => AclType::Other,
    };
    let default = AclEntryScopeProto::try_from(p.scope).map_err(|_| bad("scope"))?
        == AclEntryScopeProto::Default;
    let perm = FsActionProto::try_from(p.permissions).map_err(|_| bad("permission"))? as u8;
    Ok(AclEntry::new(default, kind, p.name.as_deref(), perm))
}

pub fn entry_to_proto(e: &AclEntry) -> AclEntryProto {
    let kind = match e.kind {
        AclType::User => AclEntryTypeProto::User,
        AclType::Group => AclEntryTypeProto::Group,
        AclType::Mask => AclEntryTypeProto::Mask,
        AclType::Other => AclEntryTypeProto::Other,
    };
    AclEntryProto {
        r#type: kind as i32,
        scope: if e.default {
            AclEntryScopeProto::Default
        } else {
            AclEntryScopeProto::Access
        } as i32,
        permissions: i32::from(e.perm),
        name: e.name.clone(),
    }
}

fn spec(entries: &[AclEntryProto]) -> Result<Vec<AclEntry>, RpcError> {
    entries.iter().map(entry_from_proto).collect()
}

impl ClientProtocolService {
    pub(super) async fn get_acl_status(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetAclStatusRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let st = self
            .fs
            .with_ns_op("get_acl_status", |ns| ns.get_acl_status(&caller, &req.src))?;
        Ok(encode_response(&GetAclStatusResponseProto {
            result: AclStatusProto {
                owner: st.owner,
                group: st.group,
                sticky: st.sticky,
                entries: st.entries.iter().map(entry_to_proto).collect(),
                permission: Some(FsPermissionProto {
                    perm: u32::from(st.mode),
                }),
            },
        }))
    }

    async fn change_acl(
        &self,
        ctx: &CallContext,
        src: &str,
        change: AclChange,
        entries: &[AclEntryProto],
    ) -> Result<(), RpcError> {
        let spec = spec(entries)?;
        let caller = self.caller(ctx).await;
        let now = self.fs.now();
        self.fs.with_ns_op("change_acl", |ns| {
            ns.change_acl(&caller, src, change, &spec, now)
        })?;
        Ok(())
    }

    pub(super) async fn modify_acl_entries(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: ModifyAclEntriesRequestProto = decode_request(body)?;
        self.change_acl(ctx, &req.src, AclChange::Modify, &req.acl_spec)
            .await?;
        Ok(encode_response(&ModifyAclEntriesResponseProto {}))
    }

    pub(super) async fn remove_acl_entries(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: RemoveAclEntriesRequestProto = decode_request(body)?;
        self.change_acl(ctx, &req.src, AclChange::RemoveEntries, &req.acl_spec)
            .await?;
        Ok(encode_response(&RemoveAclEntriesResponseProto {}))
    }

    pub(super) async fn remove_default_acl(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: RemoveDefaultAclRequestProto = decode_request(body)?;
        self.change_acl(ctx, &req.src, AclChange::RemoveDefault, &[])
            .await?;
        Ok(encode_response(&RemoveDefaultAclResponseProto {}))
    }

    pub(super) async fn remove_acl(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: RemoveAclRequestProto = decode_request(body)?;
        self.change_acl(ctx, &req.src, AclChange::RemoveAll, &[])
            .await?;
        Ok(encode_response(&RemoveAclResponseProto {}))
    }

    pub(super) async fn set_acl(&self, ctx: &CallContext, body: &Bytes) -> Result<Bytes, RpcError> {
        let req: SetAclRequestProto = decode_request(body)?;
        self.change_acl(ctx, &req.src, AclChange::Set, &req.acl_spec)
            .await?;
        Ok(encode_response(&SetAclResponseProto {}))
    }
}
