//! Typed query parameters with Hadoop's names, defaults and validation messages.

use rhdfs_http::Request;

use crate::error::WebError;

fn invalid(name: &str, why: impl std::fmt::Display) -> WebError {
    WebError::illegal_argument(format!(
        "Invalid value for webhdfs parameter \"{name}\": {why}"
    ))
}

/// A parameter's value, `None` when absent or empty (Hadoop treats both as the default).
pub fn string<'a>(req: &'a Request, name: &str) -> Option<&'a str> {
    req.param(name).filter(|v| !v.is_empty())
}

/// `true`/`false` in any case.
pub fn boolean(req: &Request, name: &str, default: bool) -> Result<bool, WebError> {
    match string(req, name) {
        None => Ok(default),
        Some(v) if v.eq_ignore_ascii_case("true") => Ok(true),
        Some(v) if v.eq_ignore_ascii_case("false") => Ok(false),
        Some(v) => Err(invalid(
            name,
            format!("Failed to parse \"{v}\" to Boolean."),
        )),
    }
}

/// A decimal integer in `[min, i64::MAX]`.
pub fn long(req: &Request, name: &str, min: i64) -> Result<Option<i64>, WebError> {
    let Some(v) = string(req, name) else {
        return Ok(None);
    };
    let n: i64 = v.parse().map_err(|_| {
        invalid(
            name,
            format!("Failed to parse \"{v}\" as a radix-10 long integer."),
        )
    })?;
    if n < min {
        return Err(invalid(
            name,
            format!("Invalid parameter range: {name} = {n} < {min}"),
        ));
    }
    Ok(Some(n))
}

/// A non-negative integer.
pub fn unsigned(req: &Request, name: &str) -> Result<Option<u64>, WebError> {
    Ok(long(req, name, 0)?.map(|n| n as u64))
}

/// `replication`: 1..=32767.
pub fn replication(req: &Request) -> Result<Option<u16>, WebError> {
    match long(req, "replication", 1)? {
        None => Ok(None),
        Some(n) if n <= i64::from(i16::MAX) => Ok(Some(n as u16)),
        Some(n) => Err(invalid(
            "replication",
            format!("Invalid parameter range: replication = {n} > {}", i16::MAX),
        )),
    }
}

/// `permission`: an octal string up to 01777.
pub fn permission(req: &Request, default: u16) -> Result<u16, WebError> {
    let Some(v) = string(req, "permission") else {
        return Ok(default);
    };
    match u16::from_str_radix(v, 8) {
        Ok(p) if p <= 0o1777 => Ok(p),
        Ok(p) => Err(invalid(
            "permission",
            format!("Invalid parameter range: permission = {p:o} > 1777"),
        )),
        Err(_) => Err(invalid(
            "permission",
            format!("Failed to parse \"{v}\" as a radix-8 short integer."),
        )),
    }
}

/// `fsaction` (CHECKACCESS): `[r-][w-][x-]` as rwx bits; required.
pub fn fs_action(req: &Request, op: &str) -> Result<u16, WebError> {
    let Some(v) = string(req, "fsaction") else {
        return Err(WebError::illegal_argument(format!(
            "Required param fsaction for op: {op} is null or empty"
        )));
    };
    let b = v.as_bytes();
    let ok = b.len() == 3
        && matches!(b[0], b'r' | b'-')
        && matches!(b[1], b'w' | b'-')
        && matches!(b[2], b'x' | b'-');
    if !ok {
        return Err(invalid(
            "fsaction",
            format!("Invalid value: \"{v}\" does not belong to the domain [r-][w-][x-]"),
        ));
    }
    Ok((u16::from(b[0] == b'r') << 2) | (u16::from(b[1] == b'w') << 1) | u16::from(b[2] == b'x'))
}

/// Hadoop's validateOpParams: the parameter must be present and non-empty.
pub fn required<T>(v: Option<T>, name: &str, op: &str) -> Result<T, WebError> {
    v.ok_or_else(|| {
        WebError::illegal_argument(format!(
            "Required param {name} for op: {op} is null or empty"
        ))
    })
}

/// `newlength` (TRUNCATE): a non-negative length, required.
pub fn new_length(req: &Request) -> Result<u64, WebError> {
    required(unsigned(req, "newlength")?, "newlength", "TRUNCATE")
}

/// `sources` (CONCAT): comma-separated paths, required.
pub fn sources(req: &Request) -> Result<Vec<String>, WebError> {
    let v = required(string(req, "sources"), "sources", "CONCAT")?;
    Ok(v.split(',').map(str::to_string).collect())
}

/// `storagetype` (SETQUOTABYSTORAGETYPE), any case, as a `StorageTypeProto` value; Java's
/// `StorageType.valueOf` message for a name it does not know (or none).
pub fn storage_type(req: &Request) -> Result<i32, WebError> {
    let name = string(req, "storagetype")
        .unwrap_or("")
        .to_ascii_uppercase();
    rhdfs_client::STORAGE_TYPE_NAMES
        .iter()
        .position(|t| *t == name)
        .map(|i| i as i32 + 1)
        .ok_or_else(|| {
            WebError::illegal_argument(format!(
                "No enum constant org.apache.hadoop.fs.StorageType.{name}"
            ))
        })
}

/// `namespacequota` / `storagespacequota` (SETQUOTA): from -1 (clear the quota) to
/// Long.MAX_VALUE, the default (leave it as it is).
pub fn quota(req: &Request, name: &str) -> Result<i64, WebError> {
    Ok(long(req, name, rhdfs_client::quota::QUOTA_RESET)?
        .unwrap_or(rhdfs_client::quota::QUOTA_DONT_SET))
}

/// `destination`: an absolute path.
pub fn destination(req: &Request) -> Result<String, WebError> {
    match string(req, "destination") {
        Some(d) if d.starts_with('/') => Ok(d.to_string()),
        Some(d) => Err(invalid(
            "destination",
            format!("Invalid parameter value: destination = {d} is not an absolute path"),
        )),
        None => Err(WebError::illegal_argument(
            "Required param destination for op: RENAME is null or empty",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(q: &str) -> Request {
        crate::test_request("GET", "/webhdfs/v1/x", q)
    }

    #[test]
    fn booleans() {
        assert_eq!(
            boolean(&req("overwrite=TRUE"), "overwrite", false),
            Ok(true)
        );
        assert_eq!(boolean(&req("overwrite="), "overwrite", true), Ok(true));
        assert_eq!(boolean(&req(""), "recursive", false), Ok(false));
        let e = boolean(&req("recursive=yes"), "recursive", false).expect_err("bad");
        assert_eq!(e.status(), 400);
        assert!(e.message.contains("\"recursive\""), "{}", e.message);
    }

    #[test]
    fn numbers() {
        assert_eq!(unsigned(&req("offset=10"), "offset"), Ok(Some(10)));
        assert_eq!(unsigned(&req(""), "offset"), Ok(None));
        assert!(unsigned(&req("offset=-1"), "offset").is_err());
        assert!(unsigned(&req("offset=x"), "offset").is_err());
        assert_eq!(
            long(&req("modificationtime=-1"), "modificationtime", -1),
            Ok(Some(-1))
        );
        assert_eq!(replication(&req("replication=2")), Ok(Some(2)));
        assert!(replication(&req("replication=0")).is_err());
        assert!(replication(&req("replication=40000")).is_err());
    }

    #[test]
    fn permissions_and_destinations() {
        assert_eq!(permission(&req("permission=1777"), 0o755), Ok(0o1777));
        assert_eq!(permission(&req(""), 0o644), Ok(0o644));
        assert!(permission(&req("permission=2000"), 0o755).is_err());
        assert!(permission(&req("permission=9"), 0o755).is_err());
        assert_eq!(destination(&req("destination=%2Fa%2Fb")), Ok("/a/b".into()));
        assert!(destination(&req("destination=a")).is_err());
        assert!(destination(&req("")).is_err());
    }

    #[test]
    fn quotas() {
        assert_eq!(quota(&req("namespacequota=10"), "namespacequota"), Ok(10));
        assert_eq!(quota(&req("namespacequota=-1"), "namespacequota"), Ok(-1));
        assert_eq!(quota(&req(""), "storagespacequota"), Ok(i64::MAX));
        let e = quota(&req("storagespacequota=-2"), "storagespacequota").expect_err("range");
        assert_eq!(
            e.message,
            "Invalid value for webhdfs parameter \"storagespacequota\": Invalid parameter range: storagespacequota = -2 < -1"
        );
    }

    #[test]
    fn fs_actions() {
        assert_eq!(fs_action(&req("fsaction=rwx"), "CHECKACCESS"), Ok(7));
        assert_eq!(fs_action(&req("fsaction=r-x"), "CHECKACCESS"), Ok(5));
        assert_eq!(fs_action(&req("fsaction=---"), "CHECKACCESS"), Ok(0));
        let e = fs_action(&req(""), "CHECKACCESS").expect_err("missing");
        assert_eq!(
            e.message,
            "Required param fsaction for op: CHECKACCESS is null or empty"
        );
        let e = fs_action(&req("fsaction=rw"), "CHECKACCESS").expect_err("bad");
        assert_eq!(
            e.message,
            "Invalid value for webhdfs parameter \"fsaction\": Invalid value: \"rw\" does not belong to the domain [r-][w-][x-]"
        );
    }
}
