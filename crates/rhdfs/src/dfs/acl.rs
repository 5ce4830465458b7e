//! -getfacl and -setfacl, worded and laid out as Hadoop's AclCommands.

use rhdfs_client::FileStatus;
use rhdfs_client::acl::{
    AclEntry, AclStatus, AclType, acl_from_perm_and_entries, parse_acl_spec, perm_symbol,
};

use super::{ShResult, Shell, ShellError};

fn usage(msg: &str) -> ShellError {
    ShellError::Usage(msg.to_string())
}

/// The lines FsShell prints for one scope of an ACL (with `#effective:` where the mask
/// narrows an entry).
fn scope_lines(status: Option<&AclStatus>, mode: u16, entries: &[AclEntry], out: &mut Vec<String>) {
    if entries.is_empty() {
        return;
    }
    if entries.len() == 3 {
        out.extend(entries.iter().map(ToString::to_string));
        return;
    }
    let default_mask = status
        .and_then(|s| s.entries.len().checked_sub(2).map(|i| s.entries[i].perm))
        .unwrap_or(7);
    for e in entries {
        let narrowed = e.kind != AclType::Mask && (e.name.is_some() || e.kind == AclType::Group);
        let effective = match (narrowed, e.default) {
            (false, _) => e.perm,
            (true, false) => e.perm & ((mode >> 3) & 7) as u8,
            (true, true) => e.perm & default_mask,
        };
        if effective != e.perm {
            out.push(format!("{e}\t#effective:{}", perm_symbol(effective)));
        } else {
            out.push(e.to_string());
        }
    }
}

/// getfacl's text for one path.
pub(crate) fn getfacl_text(shown: &str, st: &FileStatus, status: Option<&AclStatus>) -> String {
    let mode = st.permission;
    let mut lines = vec![
        format!("# file: {shown}"),
        format!("# owner: {}", st.owner),
        format!("# group: {}", st.group),
    ];
    if mode & 0o1000 != 0 {
        lines.push(format!(
            "# flags: --{}",
            if mode & 1 != 0 { 't' } else { 'T' }
        ));
    }
    let entries = status.map_or(&[][..], |s| &s.entries[..]);
    let acl = acl_from_perm_and_entries(mode, entries);
    let split = acl.iter().position(|e| e.default).unwrap_or(acl.len());
    scope_lines(status, mode, &acl[..split], &mut lines);
    scope_lines(status, mode, &acl[split..], &mut lines);
    let mut s = lines.join("\n");
    s.push_str("\n\n");
    s
}

/// Which change -setfacl makes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Op {
    RemoveAll,
    RemoveDefault,
    Modify,
    Remove,
    Set,
}

impl Shell<'_> {
    pub(crate) async fn getfacl(&mut self, a: &[String]) -> ShResult {
        let mut recursive = false;
        let mut i = 0;
        while let Some(s) = a.get(i).filter(|s| s.starts_with('-') && s.len() > 1) {
            match s.as_str() {
                "-R" => recursive = true,
                "-e" => {}
                other => return Err(usage(&format!("Illegal option {other}"))),
            }
            i += 1;
        }
        let args = &a[i..];
        if args.is_empty() {
            return Err(usage("<path> is missing"));
        }
        if args.len() > 1 {
            return Err(usage("Too many arguments"));
        }
        self.for_each_recursive(args, recursive, async |sh, st, disp| {
            let status = if st.has_acl {
                match sh.fs.get_acl_status(&st.path).await {
                    Ok(s) => Some(s),
                    Err(e) => {
                        sh.path_error(disp, &e);
                        return;
                    }
                }
            } else {
                None
            };
            let text = getfacl_text(disp, st, status.as_ref());
            let _ = sh.out.write_all(text.as_bytes());
        })
        .await
    }

    pub(crate) async fn setfacl(&mut self, a: &[String]) -> ShResult {
        let mut recursive = false;
        let mut ops: Vec<(Op, Option<String>)> = Vec::new();
        let mut i = 0;
        while let Some(s) = a.get(i).filter(|s| s.starts_with('-') && s.len() > 1) {
            let with_value = |op| -> ShResult<(Op, Option<String>)> {
                let v = a
                    .get(i + 1)
                    .ok_or_else(|| usage(&format!("Illegal option {s}")))?;
                Ok((op, Some(v.clone())))
            };
            match s.as_str() {
                "-R" => recursive = true,
                "-b" => ops.push((Op::RemoveAll, None)),
                "-k" => ops.push((Op::RemoveDefault, None)),
                "-m" => ops.push(with_value(Op::Modify)?),
                "-x" => ops.push(with_value(Op::Remove)?),
                "--set" => ops.push(with_value(Op::Set)?),
                other => return Err(usage(&format!("Illegal option {other}"))),
            }
            i += if matches!(s.as_str(), "-m" | "-x" | "--set") {
                2
            } else {
                1
            };
        }
        let mut args: Vec<String> = a[i..].to_vec();
        if ops.len() != 1 {
            return Err(usage(
                "Specified flags contains both remove and modify flags",
            ));
        }
        let (op, spec) = ops.remove(0);
        // The spec is the value FsShell's option parser took; the path follows.
        let mut entries = Vec::new();
        if let Some(spec) = spec {
            if args.is_empty() {
                return Err(usage("Missing either <acl_spec> or <path>"));
            }
            entries = parse_acl_spec(&spec, op != Op::Remove).map_err(|e| usage(&e.message()))?;
            if entries.is_empty() {
                return Err(usage("Missing <acl_spec> entry"));
            }
        }
        if args.is_empty() {
            return Err(usage("<path> is missing"));
        }
        if args.len() > 1 {
            return Err(usage("Too many arguments"));
        }
        let access: Vec<AclEntry> = entries.iter().filter(|e| !e.default).cloned().collect();
        let paths = std::mem::take(&mut args);
        self.for_each_recursive(&paths, recursive, async |sh, st, disp| {
            let list = if recursive && !st.is_dir && matches!(op, Op::Modify | Op::Set) {
                &access
            } else {
                &entries
            };
            let r = match op {
                Op::RemoveAll => sh.fs.remove_acl(&st.path).await,
                Op::RemoveDefault => sh.fs.remove_default_acl(&st.path).await,
                Op::Modify if list.is_empty() => Ok(()),
                Op::Modify => sh.fs.modify_acl_entries(&st.path, list).await,
                Op::Remove => sh.fs.remove_acl_entries(&st.path, list).await,
                Op::Set if list.is_empty() => Ok(()),
                Op::Set => sh.fs.set_acl(&st.path, list).await,
            };
            if let Err(e) = r {
                sh.path_error(disp, &e);
            }
        })
        .await
    }
}
