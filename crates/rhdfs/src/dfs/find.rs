//! -find (FsShell's shell.find.Find): `<path> ... <expression> ...` with the expressions Hadoop
//! registers — `-name`/`-iname` (glob on the last path component), `-print`/`-print0` and the
//! `-a`/`-and` operator (adjacent expressions are and-ed, `(` `)` group) — applied to every
//! path below each argument, pre-order, children in listing order. Without an action in the
//! expression each passing path is printed.

use rhdfs_client::glob;

use super::{ShResult, Shell, ShellError, need_args};

/// A parsed find expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr {
    And(Vec<Expr>),
    Name { pattern: String, ignore_case: bool },
    Print { nul: bool },
}

impl Expr {
    fn is_action(&self) -> bool {
        match self {
            Expr::And(c) => c.iter().any(Expr::is_action),
            Expr::Name { .. } => false,
            Expr::Print { .. } => true,
        }
    }
}

/// Parses expression arguments up to the end or a closing `)`; Hadoop's IOException text for
/// an unknown one.
fn parse(args: &mut std::collections::VecDeque<String>) -> Result<Option<Expr>, String> {
    let mut parts = Vec::new();
    while let Some(arg) = args.pop_front() {
        match arg.as_str() {
            "(" => {
                if let Some(e) = parse(args)? {
                    parts.push(e);
                }
            }
            ")" => break,
            "-a" | "-and" => {}
            "-print" | "-print0" => parts.push(Expr::Print {
                nul: arg == "-print0",
            }),
            "-name" | "-iname" => {
                let Some(pattern) = args.pop_front() else {
                    return Err("Fatal internal error".into());
                };
                let ignore_case = arg == "-iname";
                let pattern = if ignore_case {
                    pattern.to_lowercase()
                } else {
                    pattern
                };
                parts.push(Expr::Name {
                    pattern,
                    ignore_case,
                });
            }
            _ => return Err(format!("Unexpected argument: {arg}")),
        }
    }
    Ok(match parts.len() {
        0 => None,
        1 => parts.pop(),
        _ => Some(Expr::And(parts)),
    })
}

/// The root expression: `-print` alone when empty, `<expr> -a -print` without an action.
fn root_expression(args: &[String]) -> Result<Expr, String> {
    let mut q: std::collections::VecDeque<String> = args.iter().cloned().collect();
    let e = parse(&mut q)?.unwrap_or(Expr::Print { nul: false });
    Ok(if e.is_action() {
        e
    } else {
        Expr::And(vec![e, Expr::Print { nul: false }])
    })
}

impl Shell<'_> {
    pub(crate) async fn find(&mut self, a: &[String]) -> ShResult {
        // CommandFormat(1, MAX, "L", "H", unknown options kept): leading -L/-H are dropped.
        let mut args = a.to_vec();
        let mut pos = 0;
        while pos < args.len() {
            let s = &args[pos];
            if !s.starts_with('-') || s == "-" {
                break;
            }
            if s == "--" {
                args.remove(pos);
                break;
            }
            if s == "-L" || s == "-H" {
                args.remove(pos);
            } else {
                pos += 1;
            }
        }
        need_args(&args, 1)?;
        let split = args
            .iter()
            .position(|s| s.starts_with('-'))
            .unwrap_or(args.len());
        let mut paths = args[..split].to_vec();
        if paths.is_empty() {
            paths.push(".".into());
        }
        let expr = root_expression(&args[split..]).map_err(ShellError::Fatal)?;
        for arg in &paths {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            let mut stack: Vec<rhdfs_client::FileStatus> = items.into_iter().rev().collect();
            while let Some(st) = stack.pop() {
                let shown_path = shown.show(&st.path);
                let name = if shown_path == "." {
                    "."
                } else {
                    st.path.rsplit('/').next().unwrap_or("")
                };
                self.apply(&expr, &shown_path, name)?;
                if st.is_dir {
                    match self.fs.list_status(&st.path).await {
                        Ok(children) => stack.extend(children.into_iter().rev()),
                        Err(e) => self.path_error(&shown_path, &e),
                    }
                }
            }
        }
        Ok(())
    }

    /// Evaluates `e` on one path; true = PASS.
    fn apply(&mut self, e: &Expr, shown: &str, name: &str) -> ShResult<bool> {
        Ok(match e {
            Expr::And(children) => {
                for c in children {
                    if !self.apply(c, shown, name)? {
                        return Ok(false);
                    }
                }
                true
            }
            Expr::Name {
                pattern,
                ignore_case,
            } => {
                if *ignore_case {
                    glob::matches(pattern, &name.to_lowercase())
                } else {
                    glob::matches(pattern, name)
                }
            }
            Expr::Print { nul } => {
                write!(self.out, "{shown}{}", if *nul { '\0' } else { '\n' })?;
                true
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn expressions_as_hadoop_builds_them() {
        let print = Expr::Print { nul: false };
        let name = |p: &str, ic| Expr::Name {
            pattern: p.into(),
            ignore_case: ic,
        };
        assert_eq!(root_expression(&[]), Ok(print.clone()));
        assert_eq!(
            root_expression(&args("-name *.txt")),
            Ok(Expr::And(vec![name("*.txt", false), print.clone()]))
        );
        assert_eq!(
            root_expression(&args("-iname A* -print0")),
            Ok(Expr::And(vec![name("a*", true), Expr::Print { nul: true }]))
        );
        assert_eq!(
            root_expression(&args("-print -and ( -name x )")),
            Ok(Expr::And(vec![print.clone(), name("x", false)]))
        );
        assert_eq!(
            root_expression(&args("-name x -foo")),
            Err("Unexpected argument: -foo".into())
        );
    }
}
