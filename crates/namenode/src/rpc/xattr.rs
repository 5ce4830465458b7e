//! setXAttr, getXAttrs, listXAttrs, removeXAttr.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    GetXAttrsRequestProto, GetXAttrsResponseProto, ListXAttrsRequestProto, ListXAttrsResponseProto,
    RemoveXAttrRequestProto, RemoveXAttrResponseProto, SetXAttrRequestProto, SetXAttrResponseProto,
    XAttrProto,
};

use super::ClientProtocolService;
use crate::fsdir::xattr::{XAttr, XAttrNs};

fn bad(what: &str) -> RpcError {
    RpcError::new(super::errors::ILLEGAL_ARGUMENT, what.to_string())
}

pub fn xattr_from_proto(p: &XAttrProto) -> Result<XAttr, RpcError> {
    let ns = u8::try_from(p.namespace)
        .ok()
        .and_then(XAttrNs::from_u8)
        .ok_or_else(|| bad("bad XAttr namespace"))?;
    if p.name.is_empty() {
        return Err(bad("XAttr name cannot be empty."));
    }
    Ok(XAttr {
        ns,
        name: p.name.clone(),
        value: p.value.as_ref().map(|v| v.to_vec()),
    })
}

pub fn xattr_to_proto(x: &XAttr) -> XAttrProto {
    XAttrProto {
        namespace: x.ns as i32,
        name: x.name.clone(),
        value: x.value.clone().map(Bytes::from),
    }
}

/// The one xattr a setXAttr / removeXAttr request must carry.
fn required_xattr(x: Option<&XAttrProto>) -> Result<XAttr, RpcError> {
    xattr_from_proto(x.ok_or_else(|| bad("XAttr cannot be null."))?)
}

impl ClientProtocolService {
    pub(super) async fn set_xattr(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: SetXAttrRequestProto = decode_request(body)?;
        let x = required_xattr(req.x_attr.as_ref())?;
        let caller = self.caller(ctx).await;
        let now = self.fs.now();
        let flag = req.flag.unwrap_or(0);
        self.fs.with_ns_op("set_xattr", |ns| {
            ns.set_xattr(&caller, &req.src, x, flag, now)
        })?;
        Ok(encode_response(&SetXAttrResponseProto {}))
    }

    /// A setXAttr another NameNode ran and committed.
    pub(super) async fn set_xattr_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&SetXAttrResponseProto {}))
    }

    pub(super) async fn get_xattrs(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: GetXAttrsRequestProto = decode_request(body)?;
        let names = req
            .x_attrs
            .iter()
            .map(xattr_from_proto)
            .collect::<Result<Vec<_>, _>>()?;
        let caller = self.caller(ctx).await;
        let found = self
            .fs
            .with_ns_op("get_xattrs", |ns| ns.get_xattrs(&caller, &req.src, &names))?;
        Ok(encode_response(&GetXAttrsResponseProto {
            x_attrs: found.iter().map(xattr_to_proto).collect(),
        }))
    }

    pub(super) async fn list_xattrs(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: ListXAttrsRequestProto = decode_request(body)?;
        let caller = self.caller(ctx).await;
        let found = self
            .fs
            .with_ns_op("list_xattrs", |ns| ns.list_xattrs(&caller, &req.src))?;
        Ok(encode_response(&ListXAttrsResponseProto {
            x_attrs: found.iter().map(xattr_to_proto).collect(),
        }))
    }

    pub(super) async fn remove_xattr(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: RemoveXAttrRequestProto = decode_request(body)?;
        let x = required_xattr(req.x_attr.as_ref())?;
        let caller = self.caller(ctx).await;
        let now = self.fs.now();
        self.fs.with_ns_op("remove_xattr", |ns| {
            ns.remove_xattr(&caller, &req.src, x, now)
        })?;
        Ok(encode_response(&RemoveXAttrResponseProto {}))
    }

    /// A removeXAttr another NameNode ran and committed.
    pub(super) async fn remove_xattr_replayed(
        &self,
        _ctx: &CallContext,
        _body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        Ok(encode_response(&RemoveXAttrResponseProto {}))
    }
}
