//! The log file: `<dir>/<name>`, rolled by size to `<name>.1`, `<name>.2`, ... as log4j's
//! RollingFileAppender (Hadoop's `hadoop.log.maxfilesize`, `hadoop.log.maxbackupindex`).

use std::path::PathBuf;

use file_rotate::compression::Compression;
use file_rotate::suffix::AppendCount;
use file_rotate::{ContentLimit, FileRotate};

use crate::LogError;

/// Where the log file goes and when it is rolled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileSettings {
    pub dir: PathBuf,
    /// File name, e.g. `rhdfs-alice-namenode-host1.log`.
    pub name: String,
    pub max_file_size: u64,
    pub max_backups: usize,
}

impl FileSettings {
    pub(crate) fn open(&self) -> Result<FileRotate<AppendCount>, LogError> {
        std::fs::create_dir_all(&self.dir).map_err(|source| LogError::Dir {
            dir: self.dir.clone(),
            source,
        })?;
        Ok(FileRotate::new(
            self.dir.join(&self.name),
            AppendCount::new(self.max_backups.max(1)),
            ContentLimit::BytesSurpassed(
                usize::try_from(self.max_file_size.max(1)).unwrap_or(usize::MAX),
            ),
            Compression::None,
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    #[test]
    fn rolls_by_size_keeping_backups() {
        let dir = tempfile::tempdir().unwrap();
        let s = FileSettings {
            dir: dir.path().join("logs"),
            name: "x.log".into(),
            max_file_size: 100,
            max_backups: 2,
        };
        let mut f = s.open().unwrap();
        // One write per line, as the non-blocking appender hands over whole events; the
        // roll happens between writes, so no line is split across files.
        for i in 0..20 {
            let line = format!("line {i:03} {}\n", "x".repeat(40));
            f.write_all(line.as_bytes()).unwrap();
        }
        f.flush().unwrap();
        let mut names: Vec<String> = std::fs::read_dir(&s.dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        assert_eq!(names, vec!["x.log", "x.log.1", "x.log.2"]);
        let last = std::fs::read_to_string(s.dir.join("x.log")).unwrap();
        assert!(last.contains("line 019"), "{last}");
        for name in &names {
            let text = std::fs::read_to_string(s.dir.join(name)).unwrap();
            assert!(
                text.lines().all(|l| l.starts_with("line ")),
                "{name}: {text}"
            );
        }
    }
}
