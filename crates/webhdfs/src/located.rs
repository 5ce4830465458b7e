//! `{"LocatedBlocks":{...}}` (GET_BLOCK_LOCATIONS): the NameNode's LocatedBlocks as Hadoop's
//! JsonUtil writes them — keys in sorted order, every block with its token (URL-safe base64 of
//! the token's Writable form), ExtendedBlock, storage types and full DatanodeInfo objects.

use rhdfs_conf::json::string;
use rhdfs_proto::common::TokenProto;
use rhdfs_proto::hdfs::{
    DatanodeInfoProto, ExtendedBlockProto, LocatedBlockProto, LocatedBlocksProto,
};

/// The whole answer.
pub fn located_blocks(lbs: &LocatedBlocksProto) -> String {
    let blocks: Vec<String> = lbs.blocks.iter().map(located_block).collect();
    let last = lbs
        .last_block
        .as_ref()
        .map_or_else(|| "null".to_string(), located_block);
    format!(
        "{{\"LocatedBlocks\":{{\"fileLength\":{},\"isLastBlockComplete\":{},\"isUnderConstruction\":{},\"lastLocatedBlock\":{last},\"locatedBlocks\":[{}]}}}}",
        lbs.file_length,
        lbs.is_last_block_complete,
        lbs.under_construction,
        blocks.join(",")
    )
}

fn located_block(lb: &LocatedBlockProto) -> String {
    let locations: Vec<String> = lb.locs.iter().map(datanode_info).collect();
    let types: Vec<String> = (0..lb.locs.len())
        .map(|i| {
            let t = lb.storage_types.get(i).copied().unwrap_or(1);
            string(rhdfs_proto::storage_type_name(t))
        })
        .collect();
    format!(
        "{{\"block\":{},\"blockToken\":{{\"urlString\":{}}},\"cachedLocations\":[],\"isCorrupt\":{},\"locations\":[{}],\"startOffset\":{},\"storageTypes\":[{}]}}",
        extended_block(&lb.b),
        string(&token_url_string(&lb.block_token)),
        lb.corrupt,
        locations.join(","),
        lb.offset,
        types.join(",")
    )
}

fn extended_block(b: &ExtendedBlockProto) -> String {
    format!(
        "{{\"blockId\":{},\"blockPoolId\":{},\"generationStamp\":{},\"numBytes\":{}}}",
        b.block_id,
        string(&b.pool_id),
        b.generation_stamp,
        b.num_bytes.unwrap_or(0)
    )
}

fn admin_state(s: Option<i32>) -> &'static str {
    match s.unwrap_or(0) {
        1 => "DECOMMISSION_INPROGRESS",
        2 => "DECOMMISSIONED",
        3 => "ENTERING_MAINTENANCE",
        4 => "IN_MAINTENANCE",
        _ => "NORMAL",
    }
}

/// One DatanodeInfo as JsonUtil's map of it.
fn datanode_info(d: &DatanodeInfoProto) -> String {
    let id = &d.id;
    let upgrade = d
        .upgrade_domain
        .as_deref()
        .map(|u| format!("\"upgradeDomain\":{},", string(u)))
        .unwrap_or_default();
    format!(
        "{{\"adminState\":\"{}\",\"blockPoolUsed\":{},\"cacheCapacity\":{},\"cacheUsed\":{},\"capacity\":{},\"dfsUsed\":{},\"hostName\":{},\"infoPort\":{},\"infoSecurePort\":{},\"ipAddr\":{},\"ipcPort\":{},\"lastBlockReportMonotonic\":{},\"lastBlockReportTime\":{},\"lastUpdate\":{},\"lastUpdateMonotonic\":{},\"name\":{},\"networkLocation\":{},\"remaining\":{},\"storageID\":{},{upgrade}\"xceiverCount\":{},\"xferPort\":{}}}",
        admin_state(d.admin_state),
        d.block_pool_used.unwrap_or(0),
        d.cache_capacity.unwrap_or(0),
        d.cache_used.unwrap_or(0),
        d.capacity.unwrap_or(0),
        d.dfs_used.unwrap_or(0),
        string(&id.host_name),
        id.info_port,
        id.info_secure_port.unwrap_or(0),
        string(&id.ip_addr),
        id.ipc_port,
        d.last_block_report_monotonic.unwrap_or(0),
        d.last_block_report_time.unwrap_or(0),
        d.last_update.unwrap_or(0),
        d.last_update_monotonic.unwrap_or(0),
        string(&format!("{}:{}", id.ip_addr, id.xfer_port)),
        string(d.location.as_deref().unwrap_or("/default-rack")),
        d.remaining.unwrap_or(0),
        string(&id.datanode_uuid),
        d.xceiver_count.unwrap_or(0),
        id.xfer_port
    )
}

/// Hadoop's Token.encodeToUrlString: the Writable form (vint-prefixed identifier and
/// password, then kind and service as Text) in URL-safe base64 without padding.
pub fn token_url_string(t: &TokenProto) -> String {
    let mut w = Vec::new();
    for field in [
        &t.identifier[..],
        &t.password[..],
        t.kind.as_bytes(),
        t.service.as_bytes(),
    ] {
        write_vlong(&mut w, field.len() as i64);
        w.extend_from_slice(field);
    }
    base64_url(&w)
}

/// Hadoop's WritableUtils.writeVLong.
fn write_vlong(out: &mut Vec<u8>, v: i64) {
    if (-112..=127).contains(&v) {
        out.push(v as u8);
        return;
    }
    let (mut len, x) = if v < 0 { (-120i32, !v) } else { (-112i32, v) };
    let mut tmp = x;
    while tmp != 0 {
        tmp >>= 8;
        len -= 1;
    }
    out.push(len as i8 as u8);
    let n = if len < -120 {
        -(len + 120)
    } else {
        -(len + 112)
    };
    for i in (0..n).rev() {
        out.push((x >> (i * 8)) as u8);
    }
}

fn base64_url(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    let mut s = String::with_capacity(data.len().div_ceil(3) * 4);
    for c in data.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(c.get(1).copied().unwrap_or(0)) << 8)
            | u32::from(c.get(2).copied().unwrap_or(0));
        for i in 0..=c.len() {
            s.push(A[((n >> (18 - 6 * i)) & 63) as usize] as char);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn empty_token_is_hadoops_url_string() {
        // Four zero-length fields: what Hadoop writes for an unsecured cluster's block token.
        assert_eq!(token_url_string(&TokenProto::default()), "AAAAAA");
        let t = TokenProto {
            identifier: vec![1, 2, 3].into(),
            password: vec![0xff; 200].into(),
            kind: "HDFS_BLOCK_TOKEN".into(),
            service: String::new(),
        };
        let s = token_url_string(&t);
        assert!(s.starts_with("AwECA4_I"), "{s}");
        assert!(
            !s.contains('=') && !s.contains('+') && !s.contains('/'),
            "{s}"
        );
    }

    #[test]
    fn vlongs() {
        let enc = |v| {
            let mut o = Vec::new();
            write_vlong(&mut o, v);
            o
        };
        assert_eq!(enc(0), [0]);
        assert_eq!(enc(127), [127]);
        assert_eq!(enc(200), [0x8f, 200]);
        assert_eq!(enc(300), [0x8e, 1, 44]);
        assert_eq!(enc(-113), [0x87, 112]);
    }

    #[test]
    fn base64_urls() {
        assert_eq!(base64_url(b""), "");
        assert_eq!(base64_url(b"f"), "Zg");
        assert_eq!(base64_url(b"fo"), "Zm8");
        assert_eq!(base64_url(b"foo"), "Zm9v");
        assert_eq!(base64_url(&[0xfb, 0xff]), "-_8");
    }
}
