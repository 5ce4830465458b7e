//! ACLs and extended attributes on the client: entries parsed and printed as Hadoop's
//! AclEntry does, the AclStatus answer, xattr names and value codecs (XAttrCodec), and
//! the ClientProtocol calls.

use bytes::Bytes;
use rhdfs_proto::hdfs::acl_entry_proto::{AclEntryScopeProto, AclEntryTypeProto};
use rhdfs_proto::hdfs::{
    AclEntryProto, GetAclStatusRequestProto, GetAclStatusResponseProto, GetXAttrsRequestProto,
    GetXAttrsResponseProto, ListXAttrsRequestProto, ListXAttrsResponseProto,
    ModifyAclEntriesRequestProto, ModifyAclEntriesResponseProto, RemoveAclEntriesRequestProto,
    RemoveAclEntriesResponseProto, RemoveAclRequestProto, RemoveAclResponseProto,
    RemoveDefaultAclRequestProto, RemoveDefaultAclResponseProto, RemoveXAttrRequestProto,
    RemoveXAttrResponseProto, SetAclRequestProto, SetAclResponseProto, SetXAttrRequestProto,
    SetXAttrResponseProto, XAttrProto,
};

use crate::error::{ClientError, Result, class};
use crate::filesystem::FileSystem;

/// An ACL entry type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AclType {
    User,
    Group,
    Mask,
    Other,
}

impl AclType {
    pub fn name(self) -> &'static str {
        match self {
            AclType::User => "user",
            AclType::Group => "group",
            AclType::Mask => "mask",
            AclType::Other => "other",
        }
    }
}

/// One ACL entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclEntry {
    pub default: bool,
    pub kind: AclType,
    pub name: Option<String>,
    /// rwx bits.
    pub perm: u8,
}

/// `rwx`-style text of permission bits.
pub fn perm_symbol(p: u8) -> String {
    [(4, 'r'), (2, 'w'), (1, 'x')]
        .iter()
        .map(|(b, c)| if p & b != 0 { *c } else { '-' })
        .collect()
}

impl std::fmt::Display for AclEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.default {
            f.write_str("default:")?;
        }
        write!(
            f,
            "{}:{}:{}",
            self.kind.name(),
            self.name.as_deref().unwrap_or(""),
            perm_symbol(self.perm)
        )
    }
}

fn illegal(msg: String) -> ClientError {
    ClientError::remote(class::HADOOP_ILLEGAL_ARGUMENT, msg)
}

impl AclEntry {
    pub fn new(default: bool, kind: AclType, name: Option<&str>, perm: u8) -> Self {
        AclEntry {
            default,
            kind,
            name: name.map(str::to_string),
            perm,
        }
    }

    /// Hadoop's AclEntry.parseAclEntry: `[default:]type:[name][:perm]`.
    pub fn parse(s: &str, with_perm: bool) -> Result<Self> {
        let invalid = || illegal(format!("Invalid <aclSpec> : {s}"));
        // Java's String.split drops trailing empty fields.
        let mut parts: Vec<&str> = s.split(':').collect();
        while parts.last() == Some(&"") {
            parts.pop();
        }
        if parts.is_empty() {
            return Err(invalid());
        }
        let mut i = 0;
        let default = parts[0] == "default";
        if default {
            i += 1;
        }
        let t = parts.get(i).ok_or_else(invalid)?;
        let kind = match t.to_ascii_uppercase().as_str() {
            "USER" => AclType::User,
            "GROUP" => AclType::Group,
            "MASK" => AclType::Mask,
            "OTHER" => AclType::Other,
            _ => return Err(illegal(format!("Invalid type of acl in <aclSpec> :{s}"))),
        };
        i += 1;
        let name = parts
            .get(i)
            .filter(|n| !n.is_empty())
            .map(|n| n.to_string());
        i += 1;
        let mut perm = 0;
        if with_perm {
            let p = parts.get(i).ok_or_else(invalid)?;
            perm = (0..8u8)
                .find(|b| perm_symbol(*b) == *p)
                .ok_or_else(|| illegal(format!("Invalid permission in <aclSpec> : {s}")))?;
            i += 1;
        }
        if parts.len() > i {
            return Err(invalid());
        }
        Ok(AclEntry {
            default,
            kind,
            name,
            perm,
        })
    }

    pub fn to_proto(&self) -> AclEntryProto {
        AclEntryProto {
            r#type: match self.kind {
                AclType::User => AclEntryTypeProto::User,
                AclType::Group => AclEntryTypeProto::Group,
                AclType::Mask => AclEntryTypeProto::Mask,
                AclType::Other => AclEntryTypeProto::Other,
            } as i32,
            scope: if self.default {
                AclEntryScopeProto::Default
            } else {
                AclEntryScopeProto::Access
            } as i32,
            permissions: i32::from(self.perm),
            name: self.name.clone(),
        }
    }

    pub fn from_proto(p: &AclEntryProto) -> Self {
        let kind = match AclEntryTypeProto::try_from(p.r#type) {
            Ok(AclEntryTypeProto::Group) => AclType::Group,
            Ok(AclEntryTypeProto::Mask) => AclType::Mask,
            Ok(AclEntryTypeProto::Other) => AclType::Other,
            _ => AclType::User,
        };
        AclEntry {
            default: p.scope == AclEntryScopeProto::Default as i32,
            kind,
            name: p.name.clone(),
            perm: (p.permissions & 7) as u8,
        }
    }
}

/// Hadoop's AclEntry.parseAclSpec: comma-separated entries (empty ones skipped).
pub fn parse_acl_spec(spec: &str, with_perm: bool) -> Result<Vec<AclEntry>> {
    spec.split(',')
        .filter(|s| !s.is_empty())
        .map(|s| AclEntry::parse(s, with_perm))
        .collect()
}

/// What getAclStatus answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AclStatus {
    pub owner: String,
    pub group: String,
    pub sticky: bool,
    /// The extended entries (no access `user::`, `mask::`, `other::`).
    pub entries: Vec<AclEntry>,
    pub permission: Option<u16>,
}

/// The full ACL from permission bits and the extended entries (Hadoop's
/// AclUtil.getAclFromPermAndEntries).
pub fn acl_from_perm_and_entries(mode: u16, entries: &[AclEntry]) -> Vec<AclEntry> {
    let bits = |s: u16| ((mode >> s) & 7) as u8;
    let split = entries
        .iter()
        .position(|e| e.default)
        .unwrap_or(entries.len());
    let mut out = vec![AclEntry::new(false, AclType::User, None, bits(6))];
    out.extend(entries[..split].iter().cloned());
    let middle = if split > 0 {
        AclType::Mask
    } else {
        AclType::Group
    };
    out.push(AclEntry::new(false, middle, None, bits(3)));
    out.push(AclEntry::new(false, AclType::Other, None, bits(0)));
    out.extend(entries[split..].iter().cloned());
    out
}

/// An xattr value's text as FsShell prints it (`text`, `hex`, `base64`).
pub fn encode_xattr_value(v: &[u8], encoding: &str) -> String {
    match encoding {
        "hex" => {
            let mut s = String::from("0x");
            for b in v {
                s.push_str(&format!("{b:02x}"));
            }
            s
        }
        "base64" => format!("0s{}", base64_encode(v)),
        _ => format!("\"{}\"", String::from_utf8_lossy(v)),
    }
}

/// An xattr value from FsShell's text (`0x..` hex, `0s..` base64, `"quoted"` or plain).
pub fn decode_xattr_value(s: &str) -> Result<Vec<u8>> {
    let lower = s.get(..2).map(str::to_ascii_lowercase);
    match lower.as_deref() {
        Some("0x") => {
            let h = &s[2..];
            if !h.len().is_multiple_of(2) {
                return Err(illegal(format!("Invalid hex value: {s}")));
            }
            (0..h.len())
                .step_by(2)
                .map(|i| {
                    u8::from_str_radix(&h[i..i + 2], 16)
                        .map_err(|_| illegal(format!("Invalid hex value: {s}")))
                })
                .collect()
        }
        Some("0s") => {
            base64_decode(&s[2..]).ok_or_else(|| illegal(format!("Invalid base64 value: {s}")))
        }
        _ => {
            let t = if s.len() >= 2 && s.starts_with('"') && s.ends_with('"') {
                &s[1..s.len() - 1]
            } else {
                s
            };
            Ok(t.as_bytes().to_vec())
        }
    }
}

const B64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

fn base64_encode(v: &[u8]) -> String {
    let mut s = String::new();
    for c in v.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= c.len() {
                s.push(B64[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                s.push('=');
            }
        }
    }
    s
}

fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    let (mut acc, mut bits) = (0u32, 0);
    for c in s.bytes().filter(|c| *c != b'=') {
        let v = B64.iter().position(|x| *x == c)? as u32;
        acc = (acc << 6) | v;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// Splits "user.name" into XAttrProto's namespace number and the name (Hadoop's
/// XAttrHelper rules).
pub fn xattr_proto(prefixed: &str, value: Option<Vec<u8>>) -> Result<XAttrProto> {
    let bad = || {
        illegal(
            "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'"
                .into(),
        )
    };
    let (prefix, name) = prefixed.split_once('.').ok_or_else(bad)?;
    let ns = match prefix.to_ascii_lowercase().as_str() {
        "user" => 0,
        "trusted" => 1,
        "security" => 2,
        "system" => 3,
        "raw" => 4,
        _ => return Err(bad()),
    };
    if name.is_empty() {
        return Err(illegal("XAttr name cannot be empty.".into()));
    }
    Ok(XAttrProto {
        namespace: ns,
        name: name.to_string(),
        value: value.map(Bytes::from),
    })
}

/// "user.name" of an XAttrProto.
pub fn prefixed_name(x: &XAttrProto) -> String {
    let ns = ["user", "trusted", "security", "system", "raw"]
        .get(x.namespace as usize)
        .copied()
        .unwrap_or("user");
    format!("{ns}.{}", x.name)
}

/// The order a Java `HashMap<String, _>` (default capacity, as DFSClient's xattr map)
/// iterates `names` inserted in this order.
pub fn java_hashmap_order(names: Vec<String>) -> Vec<String> {
    let mut cap = 16usize;
    while names.len() > cap * 3 / 4 {
        cap *= 2;
    }
    let bucket = |s: &str| {
        let h = s
            .encode_utf16()
            .fold(0u32, |h, c| h.wrapping_mul(31).wrapping_add(u32::from(c)));
        let h = h ^ (h >> 16);
        (h as usize) & (cap - 1)
    };
    let mut indexed: Vec<(usize, usize, String)> = names
        .into_iter()
        .enumerate()
        .map(|(i, n)| (bucket(&n), i, n))
        .collect();
    indexed.sort();
    indexed.into_iter().map(|(_, _, n)| n).collect()
}

impl FileSystem {
    pub async fn get_acl_status(&self, p: &str) -> Result<AclStatus> {
        let src = self.resolve(p)?;
        let r: GetAclStatusResponseProto = self
            .call("getAclStatus", &GetAclStatusRequestProto { src })
            .await?;
        let s = r.result;
        Ok(AclStatus {
            owner: s.owner,
            group: s.group,
            sticky: s.sticky,
            entries: s.entries.iter().map(AclEntry::from_proto).collect(),
            permission: s.permission.map(|p| (p.perm & 0o7777) as u16),
        })
    }

    fn spec(entries: &[AclEntry]) -> Vec<AclEntryProto> {
        entries.iter().map(AclEntry::to_proto).collect()
    }

    pub async fn modify_acl_entries(&self, p: &str, entries: &[AclEntry]) -> Result<()> {
        let req = ModifyAclEntriesRequestProto {
            src: self.resolve(p)?,
            acl_spec: Self::spec(entries),
        };
        let _: ModifyAclEntriesResponseProto = self.call("modifyAclEntries", &req).await?;
        Ok(())
    }

    pub async fn remove_acl_entries(&self, p: &str, entries: &[AclEntry]) -> Result<()> {
        let req = RemoveAclEntriesRequestProto {
            src: self.resolve(p)?,
            acl_spec: Self::spec(entries),
        };
        let _: RemoveAclEntriesResponseProto = self.call("removeAclEntries", &req).await?;
        Ok(())
    }

    pub async fn remove_default_acl(&self, p: &str) -> Result<()> {
        let req = RemoveDefaultAclRequestProto {
            src: self.resolve(p)?,
        };
        let _: RemoveDefaultAclResponseProto = self.call("removeDefaultAcl", &req).await?;
        Ok(())
    }

    pub async fn remove_acl(&self, p: &str) -> Result<()> {
        let req = RemoveAclRequestProto {
            src: self.resolve(p)?,
        };
        let _: RemoveAclResponseProto = self.call("removeAcl", &req).await?;
        Ok(())
    }

    pub async fn set_acl(&self, p: &str, entries: &[AclEntry]) -> Result<()> {
        let req = SetAclRequestProto {
            src: self.resolve(p)?,
            acl_spec: Self::spec(entries),
        };
        let _: SetAclResponseProto = self.call("setAcl", &req).await?;
        Ok(())
    }

    /// setXAttr with `flag` (1 = CREATE, 2 = REPLACE; FsShell sends both).
    pub async fn set_xattr(
        &self,
        p: &str,
        name: &str,
        value: Option<Vec<u8>>,
        flag: u32,
    ) -> Result<()> {
        let req = SetXAttrRequestProto {
            src: self.resolve(p)?,
            x_attr: Some(xattr_proto(name, value)?),
            flag: Some(flag),
        };
        let _: SetXAttrResponseProto = self.call("setXAttr", &req).await?;
        Ok(())
    }

    /// (prefixed name, value) of the named attributes, or of all visible ones when
    /// `names` is empty, in the NameNode's order.
    pub async fn get_xattrs(&self, p: &str, names: &[&str]) -> Result<Vec<(String, Vec<u8>)>> {
        Ok(self
            .get_xattr_values(p, names)
            .await?
            .into_iter()
            .map(|(n, v)| (n, v.unwrap_or_default()))
            .collect())
    }

    /// As [`FileSystem::get_xattrs`], with None for an attribute that has no value.
    pub async fn get_xattr_values(
        &self,
        p: &str,
        names: &[&str],
    ) -> Result<Vec<(String, Option<Vec<u8>>)>> {
        let req = GetXAttrsRequestProto {
            src: self.resolve(p)?,
            x_attrs: names
                .iter()
                .map(|n| xattr_proto(n, None))
                .collect::<Result<_>>()?,
        };
        let r: GetXAttrsResponseProto = self.call("getXAttrs", &req).await?;
        Ok(r.x_attrs
            .iter()
            .map(|x| (prefixed_name(x), x.value.as_ref().map(|v| v.to_vec())))
            .collect())
    }

    pub async fn list_xattrs(&self, p: &str) -> Result<Vec<String>> {
        let req = ListXAttrsRequestProto {
            src: self.resolve(p)?,
        };
        let r: ListXAttrsResponseProto = self.call("listXAttrs", &req).await?;
        Ok(r.x_attrs.iter().map(prefixed_name).collect())
    }

    pub async fn remove_xattr(&self, p: &str, name: &str) -> Result<()> {
        let req = RemoveXAttrRequestProto {
            src: self.resolve(p)?,
            x_attr: Some(xattr_proto(name, None)?),
        };
        let _: RemoveXAttrResponseProto = self.call("removeXAttr", &req).await?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn specs_parse_as_hadoop() {
        let e =
            parse_acl_spec("user::rwx,default:user:bob:r-x,group::r--,other::---", true).unwrap();
        let text: Vec<String> = e.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            text,
            [
                "user::rwx",
                "default:user:bob:r-x",
                "group::r--",
                "other::---"
            ]
        );
        assert_eq!(
            parse_acl_spec("user:bob", false).unwrap()[0]
                .name
                .as_deref(),
            Some("bob")
        );
        assert!(parse_acl_spec("user:bob:rwz", true).is_err());
        assert!(parse_acl_spec("bogus:bob:rwx", true).is_err());
        assert!(parse_acl_spec("user:bob:rwx:extra", true).is_err());
    }

    #[test]
    fn xattr_values_round_trip() {
        for enc in ["text", "hex", "base64"] {
            let t = encode_xattr_value(b"hello!", enc);
            assert_eq!(decode_xattr_value(&t).unwrap(), b"hello!");
        }
        assert_eq!(encode_xattr_value(b"\x01\xff", "hex"), "0x01ff");
        assert_eq!(encode_xattr_value(b"ab", "base64"), "0sYWI=");
        assert_eq!(decode_xattr_value("plain").unwrap(), b"plain");
    }

    #[test]
    fn java_hashmap_iteration_order() {
        // "user.a".hashCode() lands in bucket 5 of 16, "user.b" in bucket 4.
        let order = java_hashmap_order(vec!["user.a".into(), "user.b".into()]);
        assert_eq!(order, ["user.b", "user.a"]);
    }
}
