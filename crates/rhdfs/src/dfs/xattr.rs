//! -getfattr and -setfattr, worded and laid out as Hadoop's XAttrCommands.

use rhdfs_client::acl::{decode_xattr_value, encode_xattr_value, java_hashmap_order, xattr_proto};

use super::{ShResult, Shell, ShellError};

fn usage(msg: &str) -> ShellError {
    ShellError::Usage(msg.to_string())
}

/// Takes `opt` and its value out of `args` (Hadoop's StringUtils.popOptionWithArgument).
fn pop_with_arg(args: &mut Vec<String>, opt: &str) -> ShResult<Option<String>> {
    let Some(i) = args
        .iter()
        .take_while(|a| *a != "--")
        .position(|a| a == opt)
    else {
        return Ok(None);
    };
    if i + 1 >= args.len() {
        return Err(usage(&format!("option {opt} requires 1 argument.")));
    }
    let v = args.remove(i + 1);
    args.remove(i);
    Ok(Some(v))
}

fn pop(args: &mut Vec<String>, opt: &str) -> bool {
    match args
        .iter()
        .take_while(|a| *a != "--")
        .position(|a| a == opt)
    {
        Some(i) => {
            args.remove(i);
            true
        }
        None => false,
    }
}

/// A bad name is FsShell's HadoopIllegalArgumentException (usage, exit 255).
fn check_name(name: Option<&String>) -> ShResult {
    if let Some(n) = name {
        xattr_proto(n, None).map_err(|e| usage(&e.message()))?;
    }
    Ok(())
}

fn xattr_line(name: &str, value: &[u8], encoding: &str) -> String {
    if value.is_empty() {
        format!("{name}\n")
    } else {
        format!("{name}={}\n", encode_xattr_value(value, encoding))
    }
}

impl Shell<'_> {
    pub(crate) async fn getfattr(&mut self, a: &[String]) -> ShResult {
        let mut args = a.to_vec();
        let name = pop_with_arg(&mut args, "-n")?;
        let encoding = match pop_with_arg(&mut args, "-e")? {
            None => "text".to_string(),
            Some(en) => match en.to_ascii_lowercase().as_str() {
                e @ ("text" | "hex" | "base64") => e.to_string(),
                _ => {
                    return Err(usage(&format!(
                        "Invalid/unsupported encoding option specified: {en}"
                    )));
                }
            },
        };
        let recursive = pop(&mut args, "-R");
        let dump = pop(&mut args, "-d");
        if !dump && name.is_none() {
            return Err(usage("Must specify '-n name' or '-d' option."));
        }
        if args.is_empty() {
            return Err(usage("<path> is missing."));
        }
        if args.len() > 1 {
            return Err(usage("Too many arguments."));
        }
        check_name(name.as_ref())?;
        self.for_each_recursive(&args, recursive, async |sh, st, disp| {
            let _ = sh.out.write_all(format!("# file: {disp}\n").as_bytes());
            let wanted: Vec<&str> = match (&name, dump) {
                (_, true) | (None, _) => Vec::new(),
                (Some(n), false) => vec![n.as_str()],
            };
            match sh.fs.get_xattrs(&st.path, &wanted).await {
                Ok(found) => {
                    let mut text = String::new();
                    if dump {
                        // FsShell iterates the Java HashMap the client builds.
                        let names =
                            java_hashmap_order(found.iter().map(|(n, _)| n.clone()).collect());
                        for n in names {
                            if let Some((_, v)) = found.iter().find(|(m, _)| *m == n) {
                                text.push_str(&xattr_line(&n, v, &encoding));
                            }
                        }
                    } else if let (Some(n), Some((_, v))) = (&name, found.first()) {
                        text.push_str(&xattr_line(n, v, &encoding));
                    }
                    let _ = sh.out.write_all(text.as_bytes());
                }
                Err(e) => sh.path_error(disp, &e),
            }
        })
        .await
    }

    pub(crate) async fn setfattr(&mut self, a: &[String]) -> ShResult {
        let mut args = a.to_vec();
        let name = pop_with_arg(&mut args, "-n")?;
        let value = match pop_with_arg(&mut args, "-v")? {
            Some(v) => Some(decode_xattr_value(&v).map_err(|e| usage(&e.message()))?),
            None => None,
        };
        let xname = pop_with_arg(&mut args, "-x")?;
        if name.is_some() && xname.is_some() {
            return Err(usage(
                "Can not specify both '-n name' and '-x name' option.",
            ));
        }
        if name.is_none() && xname.is_none() {
            return Err(usage("Must specify '-n name' or '-x name' option."));
        }
        if args.is_empty() {
            return Err(usage("<path> is missing."));
        }
        if args.len() > 1 {
            return Err(usage("Too many arguments."));
        }
        check_name(name.as_ref().or(xname.as_ref()))?;
        self.for_each_recursive(&args, false, async |sh, st, disp| {
            let r = match (&name, &xname) {
                (Some(n), _) => sh.fs.set_xattr(&st.path, n, value.clone(), 3).await,
                (None, Some(x)) => sh.fs.remove_xattr(&st.path, x).await,
                (None, None) => Ok(()),
            };
            if let Err(e) = r {
                sh.path_error(disp, &e);
            }
        })
        .await
    }
}
