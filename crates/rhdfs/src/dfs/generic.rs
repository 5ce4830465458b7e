//! Hadoop's generic options before a `rhdfs dfs` command (`-D k=v`, `-Dk=v`, `-conf FILE`,
//! `-fs URI`), split from the command once: [`super::run`] reads the command to choose its
//! thread, [`super::run_with`] applies the options in the order they were typed.

/// One generic option, with its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Generic<'a> {
    /// `-D key=value` or `-Dkey=value`.
    Define(&'a str),
    /// `-conf FILE`: a configuration resource.
    Conf(&'a str),
    /// `-fs URI`: the default filesystem.
    Fs(&'a str),
}

/// `rhdfs dfs` arguments split at the command.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Split<'a> {
    /// The generic options, in the order typed.
    pub options: Vec<Generic<'a>>,
    /// The command and its arguments; or, when the last generic option lacks its value,
    /// the message saying so.
    pub rest: Result<&'a [String], &'static str>,
}

impl<'a> Split<'a> {
    pub(crate) fn of(args: &'a [String]) -> Self {
        let mut options = Vec::new();
        let mut i = 0;
        while let Some(a) = args.get(i) {
            let (with_value, missing): (fn(&'a str) -> Generic<'a>, _) = match a.as_str() {
                "-D" => (Generic::Define, "-D: missing key=value"),
                "-fs" => (Generic::Fs, "-fs: missing URI"),
                "-conf" => (Generic::Conf, "-conf: missing file"),
                s if s.starts_with("-D") && s.len() > 2 => {
                    options.push(Generic::Define(&s[2..]));
                    i += 1;
                    continue;
                }
                _ => break,
            };
            let Some(v) = args.get(i + 1) else {
                return Split {
                    options,
                    rest: Err(missing),
                };
            };
            options.push(with_value(v));
            i += 2;
        }
        Split {
            options,
            rest: Ok(&args[i..]),
        }
    }

    /// The command as typed (`-cat`), if there is one.
    pub(crate) fn command(&self) -> Option<&'a str> {
        self.rest.ok()?.first().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn command_follows_the_generic_options() {
        let args = strings(&["-cat", "/f"]);
        let split = Split::of(&args);
        assert_eq!(split.command(), Some("-cat"));
        assert!(split.options.is_empty());
        let args = strings(&[
            "-D",
            "k=v",
            "-fs",
            "hdfs://h:1",
            "-Dx=y",
            "-conf",
            "c.xml",
            "-put",
            "a",
        ]);
        let split = Split::of(&args);
        assert_eq!(
            split.options,
            [
                Generic::Define("k=v"),
                Generic::Fs("hdfs://h:1"),
                Generic::Define("x=y"),
                Generic::Conf("c.xml"),
            ]
        );
        assert_eq!(split.rest, Ok(&args[7..]));
        assert_eq!(split.command(), Some("-put"));
    }

    #[test]
    fn an_option_value_is_never_the_command() {
        let args = strings(&["-fs", "-cat"]);
        let split = Split::of(&args);
        assert_eq!(split.options, [Generic::Fs("-cat")]);
        assert_eq!(split.command(), None);
        let args = strings(&[]);
        assert_eq!(Split::of(&args).command(), None);
    }

    #[test]
    fn a_missing_value_is_reported_after_the_options_before_it() {
        let args = strings(&["-Da=b", "-conf"]);
        let split = Split::of(&args);
        assert_eq!(split.options, [Generic::Define("a=b")]);
        assert_eq!(split.rest, Err("-conf: missing file"));
        assert_eq!(split.command(), None);
        for (flag, msg) in [("-D", "-D: missing key=value"), ("-fs", "-fs: missing URI")] {
            let args = strings(&[flag]);
            assert_eq!(Split::of(&args).rest, Err(msg));
        }
    }
}
