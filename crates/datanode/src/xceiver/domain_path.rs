//! Whether a domain socket path is safe to listen on, with the rules Hadoop's DataNode applies
//! before binding (DomainSocket's path validation): every directory from the root down to the
//! socket's own directory must be owned by root or by the user the DataNode runs as, must not
//! be writable by everyone unless its sticky bit is set, and must not be writable by its group
//! unless that group is root's or the sticky bit is set. Otherwise another local user could
//! replace the socket and receive the block descriptors meant for clients, or impersonate the
//! DataNode to them. An unsafe path stops the DataNode from starting, as in Hadoop.

use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Component, Path, PathBuf};

const WRITABLE_BY_GROUP: u32 = 0o020;
const WRITABLE_BY_OTHERS: u32 = 0o002;
const STICKY: u32 = 0o1000;

/// Checks the directories holding the socket at `path` (relative paths from the current
/// directory), for a process whose effective user id is `euid`. The error names the first
/// unsafe directory, what is wrong with it and its owner and mode. Blocking.
pub(crate) fn check(path: &Path, euid: u32) -> Result<(), String> {
    let full = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir()
            .map_err(|e| {
                format!(
                    "cannot resolve the domain socket path {}: {e}",
                    path.display()
                )
            })?
            .join(path)
    };
    let Some(dir) = full.parent() else {
        return Err(format!(
            "the domain socket path {} names no file",
            full.display()
        ));
    };
    let mut at = PathBuf::new();
    for c in dir.components() {
        match c {
            Component::CurDir => continue,
            other => at.push(other),
        }
        let m = std::fs::metadata(&at).map_err(|e| {
            format!(
                "cannot check {} on the domain socket path {}: {e}",
                at.display(),
                full.display()
            )
        })?;
        let mode = m.permissions().mode() & 0o7777;
        let unsafe_because = if !m.is_dir() {
            Some("is not a directory".to_string())
        } else if m.uid() != 0 && m.uid() != euid {
            Some(format!(
                "is owned by user id {}, neither root nor this DataNode's user ({euid})",
                m.uid()
            ))
        } else if mode & WRITABLE_BY_OTHERS != 0 && mode & STICKY == 0 {
            Some("is writable by every user and has no sticky bit".to_string())
        } else if mode & WRITABLE_BY_GROUP != 0 && m.gid() != 0 && mode & STICKY == 0 {
            Some(format!(
                "is writable by its group (group id {}, not root's) and has no sticky bit",
                m.gid()
            ))
        } else {
            None
        };
        if let Some(why) = unsafe_because {
            return Err(format!(
                "the domain socket path {} is not safe: the directory {} {why} (owner {}, mode 0{mode:o}); fix it or choose another {}",
                full.display(),
                at.display(),
                m.uid(),
                rhdfs_conf::keys::DFS_DOMAIN_SOCKET_PATH_KEY
            ));
        }
    }
    Ok(())
}

/// The effective user id of this process.
pub(crate) fn effective_uid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn chmod(p: &Path, mode: u32) {
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }

    #[test]
    fn directories_on_the_path_are_checked() {
        let base = tempfile::tempdir().expect("tempdir");
        let me = effective_uid();
        let a = base.path().join("a");
        let b = a.join("b");
        std::fs::create_dir_all(&b).expect("mkdir");
        chmod(base.path(), 0o700);
        chmod(&a, 0o755);
        chmod(&b, 0o700);
        let sock = b.join("dn.9866.sock");
        assert_eq!(check(&sock, me), Ok(()));

        chmod(&a, 0o777);
        let err = check(&sock, me).expect_err("world-writable");
        assert!(
            err.contains(&format!(
                "the directory {} is writable by every user",
                a.display()
            )) && err.contains("mode 0777")
                && err.contains("dfs.domain.socket.path"),
            "{err}"
        );
        chmod(&a, 0o1777);
        assert_eq!(check(&sock, me), Ok(()), "sticky, as /tmp");

        // Owned by someone else (and not root): only testable where we may give files away.
        chmod(&a, 0o755);
        if me == 0 {
            std::os::unix::fs::chown(&b, Some(4321), None).expect("chown");
            let err = check(&sock, me).expect_err("other owner");
            assert!(err.contains("owned by user id 4321"), "{err}");
            std::os::unix::fs::chown(&b, Some(0), Some(4321)).expect("chown");
            chmod(&b, 0o770);
            let err = check(&sock, me).expect_err("group-writable");
            assert!(
                err.contains("writable by its group (group id 4321"),
                "{err}"
            );
            chmod(&b, 0o1770);
            assert_eq!(check(&sock, me), Ok(()));
        } else {
            assert!(check(&sock, me + 1).is_err(), "owned by another user");
        }

        let file = base.path().join("f");
        std::fs::write(&file, b"x").expect("file");
        assert!(
            check(&file.join("dn.sock"), me).is_err(),
            "a file on the way"
        );
        assert!(check(&base.path().join("missing/dn.sock"), me).is_err());
    }
}
