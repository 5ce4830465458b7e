//! listOpenFiles (dfsadmin -listOpenFiles): files open for write, one page per call, in
//! inode id order after the request's `id`; with BLOCKING_DECOMMISSION only those holding
//! up a decommission. Superuser only.

use bytes::Bytes;
use rhdfs_ipc::{CallContext, RpcError, decode_request, encode_response};
use rhdfs_proto::hdfs::{
    ListOpenFilesRequestProto, ListOpenFilesResponseProto, OpenFilesBatchResponseProto,
    OpenFilesTypeProto,
};

use super::ClientProtocolService;

impl ClientProtocolService {
    pub(super) async fn list_open_files(
        &self,
        ctx: &CallContext,
        body: &Bytes,
    ) -> Result<Bytes, RpcError> {
        let req: ListOpenFilesRequestProto = decode_request(body)?;
        self.require_superuser(ctx).await?;
        let all = OpenFilesTypeProto::AllOpenFiles as i32;
        let blocking = OpenFilesTypeProto::BlockingDecommission as i32;
        // Clients before the types field existed ask for every open file.
        let types = if req.types.is_empty() {
            vec![all]
        } else {
            req.types.clone()
        };
        let blocking_only = if types.contains(&all) {
            false
        } else if types.contains(&blocking) {
            true
        } else {
            return Err(RpcError::new(
                rhdfs_ipc::exceptions::ILLEGAL_ARGUMENT,
                format!("Unknown OpenFileType: {types:?}"),
            ));
        };
        let after = u64::try_from(req.id).unwrap_or(0);
        let path = req.path.clone().unwrap_or_default();
        let fs = self.fs.clone();
        let (entries, has_more) =
            tokio::task::spawn_blocking(move || fs.list_open_files(after, &path, blocking_only))
                .await
                .map_err(|e| RpcError::io(format!("listOpenFiles failed: {e}")))?;
        Ok(encode_response(&ListOpenFilesResponseProto {
            entries: entries
                .into_iter()
                .map(|e| OpenFilesBatchResponseProto {
                    id: i64::try_from(e.id).unwrap_or(i64::MAX),
                    path: e.path,
                    client_name: e.client_name,
                    client_machine: e.client_machine,
                })
                .collect(),
            has_more,
            types,
        }))
    }
}

/// The client side (`dfsadmin -listOpenFiles [-blockingDecommission] [-path P]`): every
/// page from the NameNode at `addr` as `user`, printed as Hadoop's DFSAdmin does (a
/// header, then client host, client name and path per file).
pub async fn list(
    addr: &str,
    user: &str,
    blocking_decommission: bool,
    path: &str,
) -> Result<String, rhdfs_ipc::IpcError> {
    let client =
        rhdfs_ipc::RpcClient::connect(addr, rhdfs_proto::protocols::CLIENT_PROTOCOL, user).await?;
    let kind = if blocking_decommission {
        OpenFilesTypeProto::BlockingDecommission
    } else {
        OpenFilesTypeProto::AllOpenFiles
    };
    let mut out = format!(
        "{:<20}\t{:<20}\t{}\n",
        "Client Host", "Client Name", "Open File Path"
    );
    let mut id = 0i64;
    loop {
        let r: ListOpenFilesResponseProto = client
            .call(
                "listOpenFiles",
                &ListOpenFilesRequestProto {
                    id,
                    types: vec![kind as i32],
                    path: Some(path.to_string()),
                },
            )
            .await?;
        for e in &r.entries {
            out.push_str(&format!(
                "{:<20}\t{:<20}\t{:>20}\n",
                e.client_machine, e.client_name, e.path
            ));
        }
        match r.entries.last() {
            Some(last) if r.has_more => id = last.id,
            _ => return Ok(out),
        }
    }
}
