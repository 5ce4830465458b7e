//! Extended attributes: the namespaces, the prefixed names clients use, and Hadoop's
//! rules on which caller may see or change which namespace (XAttrPermissionFilter).

use crate::error::{FsError, FsResult};

/// The one security xattr a client may set (without a value).
pub const UNREADABLE_BY_SUPERUSER: &str = "security.hdfs.unreadable.by.superuser";

/// An xattr namespace; the numbers are XAttrProto's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum XAttrNs {
    User = 0,
    Trusted = 1,
    Security = 2,
    System = 3,
    Raw = 4,
}

impl XAttrNs {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => XAttrNs::User,
            1 => XAttrNs::Trusted,
            2 => XAttrNs::Security,
            3 => XAttrNs::System,
            4 => XAttrNs::Raw,
            _ => return None,
        })
    }
    pub fn prefix(self) -> &'static str {
        match self {
            XAttrNs::User => "user",
            XAttrNs::Trusted => "trusted",
            XAttrNs::Security => "security",
            XAttrNs::System => "system",
            XAttrNs::Raw => "raw",
        }
    }
}

/// One extended attribute; `value` None is an attribute set without a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct XAttr {
    pub ns: XAttrNs,
    pub name: String,
    pub value: Option<Vec<u8>>,
}

impl XAttr {
    /// "user.name".
    pub fn prefixed_name(&self) -> String {
        format!("{}.{}", self.ns.prefix(), self.name)
    }
    pub fn same_name(&self, o: &XAttr) -> bool {
        self.ns == o.ns && self.name == o.name
    }
}

/// Splits "user.name" into namespace and name (Hadoop's XAttrHelper.buildXAttr rules:
/// the prefix is case-insensitive, the name may not be empty).
pub fn parse_name(prefixed: &str) -> FsResult<(XAttrNs, String)> {
    let bad = || {
        FsError::IllegalArgument(
            "An XAttr name must be prefixed with user/trusted/security/system/raw, followed by a '.'"
                .into(),
        )
    };
    let (prefix, name) = prefixed.split_once('.').ok_or_else(bad)?;
    let ns = match prefix.to_ascii_lowercase().as_str() {
        "user" => XAttrNs::User,
        "trusted" => XAttrNs::Trusted,
        "security" => XAttrNs::Security,
        "system" => XAttrNs::System,
        "raw" => XAttrNs::Raw,
        _ => return Err(bad()),
    };
    if name.is_empty() {
        return Err(FsError::IllegalArgument(
            "XAttr name cannot be empty.".into(),
        ));
    }
    Ok((ns, name.to_string()))
}

/// May this caller name the attribute in an API call at all? (user: anyone; trusted: the
/// superuser; the unreadable-by-superuser marker, without a value; nothing else: raw needs
/// a /.reserved/raw path, which rhdfs does not serve.)
pub fn check_api_access(x: &XAttr, superuser: bool) -> FsResult<()> {
    match x.ns {
        XAttrNs::User => return Ok(()),
        XAttrNs::Trusted if superuser => return Ok(()),
        _ => {}
    }
    let name = x.prefixed_name();
    if name == UNREADABLE_BY_SUPERUSER {
        if x.value.is_some() {
            return Err(FsError::AccessControl(format!(
                "Attempt to set a value for '{name}'. Values are not allowed for this xattr."
            )));
        }
        return Ok(());
    }
    Err(FsError::AccessControl(format!(
        "User doesn't have permission for xattr: {name}"
    )))
}

/// The attributes a caller gets back from getXAttrs/listXAttrs.
pub fn visible(x: &XAttr, superuser: bool) -> bool {
    match x.ns {
        XAttrNs::User => true,
        XAttrNs::Trusted => superuser,
        _ => x.prefixed_name() == UNREADABLE_BY_SUPERUSER,
    }
}

/// Counted against dfs.namenode.fs-limits.max-xattrs-per-inode.
pub fn counts_against_limit(x: &XAttr) -> bool {
    matches!(x.ns, XAttrNs::User | XAttrNs::Trusted)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x(ns: XAttrNs, name: &str, value: Option<&[u8]>) -> XAttr {
        XAttr {
            ns,
            name: name.into(),
            value: value.map(<[u8]>::to_vec),
        }
    }

    #[test]
    fn names_and_namespaces() {
        assert_eq!(
            parse_name("USER.a.b").unwrap(),
            (XAttrNs::User, "a.b".into())
        );
        assert!(matches!(
            parse_name("foo.a"),
            Err(FsError::IllegalArgument(_))
        ));
        assert!(matches!(
            parse_name("user."),
            Err(FsError::IllegalArgument(_))
        ));
        assert!(matches!(
            parse_name("user"),
            Err(FsError::IllegalArgument(_))
        ));
    }

    #[test]
    fn namespace_rules() {
        assert!(check_api_access(&x(XAttrNs::User, "a", None), false).is_ok());
        assert!(check_api_access(&x(XAttrNs::Trusted, "a", None), false).is_err());
        assert!(check_api_access(&x(XAttrNs::Trusted, "a", None), true).is_ok());
        assert!(check_api_access(&x(XAttrNs::System, "a", None), true).is_err());
        assert!(check_api_access(&x(XAttrNs::Raw, "a", None), true).is_err());
        let marker = x(XAttrNs::Security, "hdfs.unreadable.by.superuser", None);
        assert!(check_api_access(&marker, false).is_ok());
        let with_value = x(
            XAttrNs::Security,
            "hdfs.unreadable.by.superuser",
            Some(b"1"),
        );
        assert!(check_api_access(&with_value, false).is_err());
        assert!(!visible(&x(XAttrNs::Trusted, "a", None), false));
        assert!(visible(&x(XAttrNs::Trusted, "a", None), true));
    }
}
