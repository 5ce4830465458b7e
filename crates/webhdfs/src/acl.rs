//! The ACL and extended-attribute operations (GETACLSTATUS, SETACL, MODIFYACLENTRIES,
//! REMOVEACLENTRIES, REMOVEDEFAULTACL, REMOVEACL, GETXATTRS, LISTXATTRS, SETXATTR,
//! REMOVEXATTR): their parameters with Hadoop's names, domains and messages, their JSON as
//! Hadoop's JsonUtil writes it, and the ClientProtocol call each makes as the requesting user.

use rhdfs_client::FileSystem;
use rhdfs_client::acl::{AclEntry, AclStatus, decode_xattr_value, encode_xattr_value};
use rhdfs_conf::json::string;
use rhdfs_http::Request;

use crate::error::{Failure, WebError};
use crate::op::Op;
use crate::params;

/// Hadoop's default `dfs.webhdfs.acl.provider.permission.pattern`, named in its error.
const ACL_PATTERN: &str = "^(default:)?(user|group|mask|other):[[A-Za-z_][A-Za-z0-9._-]]*:([rwx-]{3})?(,(default:)?(user|group|mask|other):[[A-Za-z_][A-Za-z0-9._-]]*:([rwx-]{3})?)*$";

/// What an ACL or xattr operation answers: a JSON body, or an empty 200.
pub enum Answer {
    Json(String),
    Empty,
}

/// Runs `op` on `path` as `fs`'s user.
pub(crate) async fn run(
    op: Op,
    fs: &FileSystem,
    path: &str,
    req: &Request,
) -> Result<Answer, Failure> {
    Ok(match op {
        Op::GetAclStatus => Answer::Json(acl_status_json(&fs.get_acl_status(path).await?)),
        Op::SetAcl => {
            fs.set_acl(path, &acl_spec(req, op, true)?).await?;
            Answer::Empty
        }
        Op::ModifyAclEntries => {
            fs.modify_acl_entries(path, &acl_spec(req, op, true)?)
                .await?;
            Answer::Empty
        }
        Op::RemoveAclEntries => {
            fs.remove_acl_entries(path, &acl_spec(req, op, false)?)
                .await?;
            Answer::Empty
        }
        Op::RemoveDefaultAcl => {
            fs.remove_default_acl(path).await?;
            Answer::Empty
        }
        Op::RemoveAcl => {
            fs.remove_acl(path).await?;
            Answer::Empty
        }
        Op::GetXAttrs => {
            let encoding = encoding(req, op)?;
            let names = xattr_names(req);
            let found = fs.get_xattr_values(path, &names).await?;
            Answer::Json(xattrs_json(&found, encoding))
        }
        Op::ListXAttrs => Answer::Json(xattr_names_json(&fs.list_xattrs(path).await?)),
        Op::SetXAttr => {
            let name = required_name(req, op)?;
            let flag = set_flag(req, op)?;
            let value = params::string(req, "xattr.value")
                .map(xattr_value)
                .transpose()?;
            fs.set_xattr(path, name, value, flag).await?;
            Answer::Empty
        }
        Op::RemoveXAttr => {
            fs.remove_xattr(path, required_name(req, op)?).await?;
            Answer::Empty
        }
        other => {
            return Err(WebError::unsupported(format!("{} is not supported", other.name())).into());
        }
    })
}

/// `aclspec`, required, in Hadoop's default pattern, parsed as AclEntry.parseAclSpec does
/// (with permissions, or without them for REMOVEACLENTRIES).
pub fn acl_spec(req: &Request, op: Op, with_perm: bool) -> Result<Vec<AclEntry>, WebError> {
    let spec = params::required(params::string(req, "aclspec"), "aclspec", op.name())?;
    if !spec.split(',').all(acl_entry_matches) {
        return Err(WebError::illegal_argument(format!(
            "Invalid value for webhdfs parameter \"aclspec\": Invalid value: \"{spec}\" does not belong to the domain {ACL_PATTERN}"
        )));
    }
    rhdfs_client::acl::parse_acl_spec(spec, with_perm).map_err(WebError::from)
}

/// One entry of [`ACL_PATTERN`]: `[default:]type:[name]:[perm]`.
fn acl_entry_matches(e: &str) -> bool {
    let e = e.strip_prefix("default:").unwrap_or(e);
    let Some((kind, rest)) = e.split_once(':') else {
        return false;
    };
    if !matches!(kind, "user" | "group" | "mask" | "other") {
        return false;
    }
    let Some((name, perm)) = rest.split_once(':') else {
        return false;
    };
    let name_ok = name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
    let perm_ok = perm.is_empty()
        || (perm.len() == 3 && perm.bytes().all(|b| matches!(b, b'r' | b'w' | b'x' | b'-')));
    name_ok && perm_ok
}

/// Every non-empty `xattr.name` (the parameter repeats; none means all attributes).
pub fn xattr_names(req: &Request) -> Vec<&str> {
    req.param_pairs()
        .filter(|(k, v)| *k == "xattr.name" && !v.is_empty())
        .map(|(_, v)| v)
        .collect()
}

fn required_name(req: &Request, op: Op) -> Result<&str, WebError> {
    params::required(params::string(req, "xattr.name"), "xattr.name", op.name())
}

/// `encoding` (XAttrCodec: text, hex, base64, any case), required for GETXATTRS.
pub fn encoding(req: &Request, op: Op) -> Result<&'static str, WebError> {
    let v = params::required(params::string(req, "encoding"), "encoding", op.name())?;
    match v.to_ascii_uppercase().as_str() {
        "TEXT" => Ok("text"),
        "HEX" => Ok("hex"),
        "BASE64" => Ok("base64"),
        other => Err(WebError::illegal_argument(format!(
            "Invalid value for webhdfs parameter \"encoding\": No enum constant org.apache.hadoop.fs.XAttrCodec.{other}"
        ))),
    }
}

/// `flag` (XAttrSetFlag: CREATE, REPLACE, comma-separated, any case) as setXAttr's bits;
/// required for SETXATTR.
pub fn set_flag(req: &Request, op: Op) -> Result<u32, WebError> {
    let v = params::required(params::string(req, "flag"), "flag", op.name())?;
    let mut bits = 0;
    for f in v.split(',') {
        bits |= match f.trim().to_ascii_uppercase().as_str() {
            "CREATE" => 1,
            "REPLACE" => 2,
            other => {
                return Err(WebError::illegal_argument(format!(
                    "Invalid value for webhdfs parameter \"flag\": No enum constant org.apache.hadoop.fs.XAttrSetFlag.{other}"
                )));
            }
        };
    }
    Ok(bits)
}

/// An `xattr.value` decoded as Hadoop's XAttrCodec.decodeValue does: `"quoted"` text, `0x`
/// hex (a bad digit or an odd length is commons-codec's DecoderException, as an IOException),
/// `0s` base64 (commons-codec's decoder, which skips characters outside its alphabets), else
/// the text itself.
pub fn xattr_value(v: &str) -> Result<Vec<u8>, WebError> {
    let quoted = v.len() >= 2 && v.starts_with('"') && v.ends_with('"');
    let prefix = v.get(..2).map(str::to_ascii_lowercase);
    match prefix.as_deref() {
        Some("0x") if !quoted => {
            let digits: Vec<char> = v[2..].chars().collect();
            let decoder =
                |m: String| WebError::io(format!("org.apache.commons.codec.DecoderException: {m}"));
            if !digits.len().is_multiple_of(2) {
                return Err(decoder("Odd number of characters.".into()));
            }
            let digit = |i: usize| {
                digits[i].to_digit(16).ok_or_else(|| {
                    decoder(format!(
                        "Illegal hexadecimal character {} at index {i}",
                        digits[i]
                    ))
                })
            };
            (0..digits.len())
                .step_by(2)
                .map(|i| Ok((digit(i)? * 16 + digit(i + 1)?) as u8))
                .collect()
        }
        Some("0s") if !quoted => {
            let cleaned: String = v[2..]
                .chars()
                .filter_map(|c| match c {
                    '-' => Some('+'),
                    '_' => Some('/'),
                    c if c.is_ascii_alphanumeric() || c == '+' || c == '/' => Some(c),
                    _ => None,
                })
                .collect();
            Ok(decode_xattr_value(&format!("0s{cleaned}"))?)
        }
        _ => Ok(decode_xattr_value(v)?),
    }
}

/// `{"AclStatus":{"entries":[...],"group":...,"owner":...,"permission":"1775","stickyBit":...}}`:
/// the extended entries as AclEntry prints them, the permission in octal with the sticky bit.
pub fn acl_status_json(st: &AclStatus) -> String {
    let entries: Vec<String> = st.entries.iter().map(|e| string(&e.to_string())).collect();
    let permission = st
        .permission
        .map(|p| format!(",\"permission\":\"{:o}\"", p & 0o1777))
        .unwrap_or_default();
    format!(
        "{{\"AclStatus\":{{\"entries\":[{}],\"group\":{},\"owner\":{}{permission},\"stickyBit\":{}}}}}",
        entries.join(","),
        string(&st.group),
        string(&st.owner),
        st.sticky
    )
}

/// `{"XAttrs":[{"name":"user.a","value":"0x6869"},...]}`, each value in `encoding`
/// (XAttrCodec: text quoted, hex `0x..`, base64 `0s..`), null for an attribute without one.
pub fn xattrs_json(found: &[(String, Option<Vec<u8>>)], encoding: &str) -> String {
    let list: Vec<String> = found
        .iter()
        .map(|(name, value)| {
            let value = match value {
                Some(v) if !v.is_empty() => string(&encode_xattr_value(v, encoding)),
                _ => "null".to_string(),
            };
            format!("{{\"name\":{},\"value\":{value}}}", string(name))
        })
        .collect();
    format!("{{\"XAttrs\":[{}]}}", list.join(","))
}

/// `{"XAttrNames":"[\"user.a\",\"user.b\"]"}`: as Hadoop writes it, a JSON string holding
/// the JSON array of names.
pub fn xattr_names_json(names: &[String]) -> String {
    let inner: Vec<String> = names.iter().map(|n| string(n)).collect();
    format!(
        "{{\"XAttrNames\":{}}}",
        string(&format!("[{}]", inner.join(",")))
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use rhdfs_client::acl::AclType;

    fn req(q: &str) -> Request {
        crate::test_request("PUT", "/webhdfs/v1/x", q)
    }

    #[test]
    fn acl_specs_in_hadoops_domain() {
        let e = acl_spec(
            &req("aclspec=user%3Abob%3Ar-x%2Cdefault%3Agroup%3A%3Arwx"),
            Op::SetAcl,
            true,
        )
        .expect("spec");
        assert_eq!(e.len(), 2);
        assert_eq!(e[0].to_string(), "user:bob:r-x");
        assert_eq!(e[1].to_string(), "default:group::rwx");
        // REMOVEACLENTRIES names entries without permissions.
        let e = acl_spec(&req("aclspec=user:bob:"), Op::RemoveAclEntries, false).expect("spec");
        assert_eq!(
            (e[0].kind, e[0].name.as_deref()),
            (AclType::User, Some("bob"))
        );
        for bad in [
            "user:bob",
            "USER:bob:rwx",
            "user:b@b:rwx",
            "user:bob:rw",
            "user::rwx,",
        ] {
            let r = req(&format!(
                "aclspec={}",
                rhdfs_http::url::encode_query_value(bad)
            ));
            let e = acl_spec(&r, Op::SetAcl, true).expect_err(bad);
            assert_eq!(e.status(), 400);
            assert_eq!(
                e.message,
                format!(
                    "Invalid value for webhdfs parameter \"aclspec\": Invalid value: \"{bad}\" does not belong to the domain {ACL_PATTERN}"
                )
            );
        }
        let e = acl_spec(&req(""), Op::ModifyAclEntries, true).expect_err("missing");
        assert_eq!(
            e.message,
            "Required param aclspec for op: MODIFYACLENTRIES is null or empty"
        );
    }

    #[test]
    fn xattr_parameters() {
        let r = req("xattr.name=user.a&xattr.name=&xattr.name=user.b");
        assert_eq!(xattr_names(&r), ["user.a", "user.b"]);
        assert_eq!(encoding(&req("encoding=hex"), Op::GetXAttrs), Ok("hex"));
        assert_eq!(
            encoding(&req("encoding=BASE64"), Op::GetXAttrs),
            Ok("base64")
        );
        let e = encoding(&req(""), Op::GetXAttrs).expect_err("required");
        assert_eq!(
            e.message,
            "Required param encoding for op: GETXATTRS is null or empty"
        );
        let e = encoding(&req("encoding=utf8"), Op::GetXAttrs).expect_err("bad");
        assert!(e.message.ends_with("XAttrCodec.UTF8"), "{}", e.message);
        assert_eq!(set_flag(&req("flag=create"), Op::SetXAttr), Ok(1));
        assert_eq!(set_flag(&req("flag=CREATE,REPLACE"), Op::SetXAttr), Ok(3));
        let e = set_flag(&req("flag=upsert"), Op::SetXAttr).expect_err("bad");
        assert_eq!(
            e.message,
            "Invalid value for webhdfs parameter \"flag\": No enum constant org.apache.hadoop.fs.XAttrSetFlag.UPSERT"
        );
        let e = required_name(&req(""), Op::RemoveXAttr).expect_err("required");
        assert_eq!(
            e.message,
            "Required param xattr.name for op: REMOVEXATTR is null or empty"
        );
    }

    #[test]
    fn xattr_values_as_xattr_codec_decodes_them() {
        assert_eq!(xattr_value("0x6869"), Ok(b"hi".to_vec()));
        assert_eq!(xattr_value("0XFF00"), Ok(vec![255, 0]));
        assert_eq!(xattr_value("\"0x12\""), Ok(b"0x12".to_vec()));
        assert_eq!(xattr_value("0saGk="), Ok(b"hi".to_vec()));
        assert_eq!(xattr_value("0saG k=\n"), Ok(b"hi".to_vec()));
        assert_eq!(xattr_value("plain"), Ok(b"plain".to_vec()));
        let e = xattr_value("0x123").expect_err("odd");
        assert_eq!(
            (e.class.as_str(), e.message.as_str(), e.status()),
            (
                "java.io.IOException",
                "org.apache.commons.codec.DecoderException: Odd number of characters.",
                403
            )
        );
        let e = xattr_value("0x12zz").expect_err("bad digit");
        assert_eq!(
            e.message,
            "org.apache.commons.codec.DecoderException: Illegal hexadecimal character z at index 2"
        );
    }

    #[test]
    fn json_as_hadoop_writes_it() {
        let st = AclStatus {
            owner: "alice".into(),
            group: "staff".into(),
            sticky: true,
            entries: vec![
                AclEntry::new(false, AclType::User, Some("bob"), 5),
                AclEntry::new(true, AclType::Group, None, 7),
            ],
            permission: Some(0o1775),
        };
        assert_eq!(
            acl_status_json(&st),
            "{\"AclStatus\":{\"entries\":[\"user:bob:r-x\",\"default:group::rwx\"],\"group\":\"staff\",\"owner\":\"alice\",\"permission\":\"1775\",\"stickyBit\":true}}"
        );
        let found = vec![
            ("user.a".to_string(), Some(b"hi".to_vec())),
            ("user.empty".to_string(), None),
        ];
        assert_eq!(
            xattrs_json(&found, "hex"),
            "{\"XAttrs\":[{\"name\":\"user.a\",\"value\":\"0x6869\"},{\"name\":\"user.empty\",\"value\":null}]}"
        );
        assert_eq!(
            xattrs_json(&found[..1], "text"),
            "{\"XAttrs\":[{\"name\":\"user.a\",\"value\":\"\\\"hi\\\"\"}]}"
        );
        assert_eq!(
            xattrs_json(&found[..1], "base64"),
            "{\"XAttrs\":[{\"name\":\"user.a\",\"value\":\"0saGk=\"}]}"
        );
        assert_eq!(xattrs_json(&[], "hex"), "{\"XAttrs\":[]}");
        assert_eq!(
            xattr_names_json(&["user.a".into(), "user.b".into()]),
            "{\"XAttrNames\":\"[\\\"user.a\\\",\\\"user.b\\\"]\"}"
        );
        assert_eq!(xattr_names_json(&[]), "{\"XAttrNames\":\"[]\"}");
    }
}
