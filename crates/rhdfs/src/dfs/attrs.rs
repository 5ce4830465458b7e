//! -chmod, -chown, -chgrp (with -R).

use rhdfs_client::FileStatus;

use super::{ShResult, Shell, ShellError, need_args, parse_flags};

/// Applies an octal or symbolic (`u+x,go-w`, `a=r`, `+t`) mode to `cur`.
pub(crate) fn apply_mode(spec: &str, cur: u16, is_dir: bool) -> Option<u16> {
    if !spec.is_empty() && spec.chars().all(|c| c.is_digit(8)) {
        return u16::from_str_radix(spec, 8).ok().filter(|m| *m <= 0o1777);
    }
    let mut mode = cur;
    for clause in spec.split(',') {
        let who_end = clause.find(['+', '-', '=']).unwrap_or(clause.len());
        let (who, rest) = clause.split_at(who_end);
        if rest.is_empty() || !who.chars().all(|c| "ugoa".contains(c)) {
            return None;
        }
        let mut mask: u16 = 0;
        for c in if who.is_empty() {
            "a".chars()
        } else {
            who.chars()
        } {
            mask |= match c {
                'u' => 0o700,
                'g' => 0o070,
                'o' => 0o007,
                _ => 0o777,
            };
        }
        let mut chars = rest.chars().peekable();
        while let Some(op) = chars.next() {
            let mut bits: u16 = 0;
            let mut sticky = false;
            while let Some(&c) = chars.peek() {
                if "+-=".contains(c) {
                    break;
                }
                chars.next();
                match c {
                    'r' => bits |= 0o444,
                    'w' => bits |= 0o222,
                    'x' => bits |= 0o111,
                    'X' => {
                        if is_dir || mode & 0o111 != 0 {
                            bits |= 0o111
                        }
                    }
                    't' => sticky = true,
                    _ => return None,
                }
            }
            let b = bits & mask;
            match op {
                '+' => mode |= b,
                '-' => mode &= !b,
                '=' => mode = (mode & !mask) | b,
                _ => return None,
            }
            if sticky {
                if op == '-' {
                    mode &= !0o1000
                } else {
                    mode |= 0o1000
                }
            }
        }
    }
    Some(mode)
}

impl Shell<'_> {
    pub(crate) async fn for_each_recursive(
        &mut self,
        args: &[String],
        recursive: bool,
        mut f: impl AsyncFnMut(&mut Self, &FileStatus, &str),
    ) -> ShResult {
        for arg in args {
            let Some((shown, items)) = self.expand(arg).await? else {
                continue;
            };
            let mut stack: Vec<FileStatus> = items.into_iter().rev().collect();
            while let Some(s) = stack.pop() {
                let disp = shown.show(&s.path);
                f(self, &s, &disp).await;
                if recursive && s.is_dir {
                    match self.fs.list_status(&s.path).await {
                        Ok(c) => stack.extend(c.into_iter().rev()),
                        Err(e) => self.path_error(&disp, &e),
                    }
                }
            }
        }
        Ok(())
    }

    pub(crate) async fn chmod(&mut self, a: &[String]) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["R"], &[])?;
        need_args(&args, 2)?;
        let spec = args[0].clone();
        if apply_mode(&spec, 0, false).is_none() {
            return Err(ShellError::Usage(format!(
                "chmod : mode '{spec}' does not match the expected pattern."
            )));
        }
        let recursive = flags.iter().any(|f| f == "R");
        self.for_each_recursive(&args[1..], recursive, async |sh, s, disp| {
            let Some(m) = apply_mode(&spec, s.permission, s.is_dir) else {
                return;
            };
            if let Err(e) = sh.fs.set_permission(&s.path, m).await {
                sh.path_error(disp, &e);
            }
        })
        .await
    }

    pub(crate) async fn chown(&mut self, a: &[String], group_only: bool) -> ShResult {
        let (flags, _, args) = parse_flags(a, &["R"], &[])?;
        need_args(&args, 2)?;
        let spec = args[0].clone();
        let (owner, group) = if group_only {
            (None, Some(spec.clone()))
        } else {
            match spec.split_once(':') {
                Some((o, g)) => (
                    (!o.is_empty()).then(|| o.to_string()),
                    (!g.is_empty()).then(|| g.to_string()),
                ),
                None => (Some(spec.clone()), None),
            }
        };
        if owner.is_none() && group.is_none() {
            return Err(ShellError::Usage(format!(
                "'{spec}' does not match expected pattern for [owner][:group]."
            )));
        }
        let recursive = flags.iter().any(|f| f == "R");
        self.for_each_recursive(&args[1..], recursive, async |sh, s, disp| {
            if let Err(e) = sh
                .fs
                .set_owner(&s.path, owner.as_deref(), group.as_deref())
                .await
            {
                sh.path_error(disp, &e);
            }
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use super::apply_mode;

    #[test]
    fn modes() {
        assert_eq!(apply_mode("755", 0, false), Some(0o755));
        assert_eq!(apply_mode("1777", 0, true), Some(0o1777));
        assert_eq!(apply_mode("u+x", 0o644, false), Some(0o744));
        assert_eq!(apply_mode("go-w", 0o666, false), Some(0o644));
        assert_eq!(apply_mode("a=r", 0o777, false), Some(0o444));
        assert_eq!(apply_mode("+t", 0o777, true), Some(0o1777));
        assert_eq!(apply_mode("u+x,g+w", 0o600, false), Some(0o720));
        assert_eq!(apply_mode("a+X", 0o644, true), Some(0o755));
        assert_eq!(apply_mode("a+X", 0o644, false), Some(0o644));
        assert_eq!(apply_mode("q+x", 0o644, false), None);
        assert_eq!(apply_mode("999", 0, false), None);
    }
}
