//! File names inside a storage directory's `current/` (Hadoop's names, 19-digit txids).

/// Name of the subdirectory holding everything.
pub const CURRENT_DIR: &str = "current";
/// Name of the storage version file.
pub const VERSION_FILE: &str = "VERSION";
/// Name of the file holding the first txid of the newest segment started.
pub const SEEN_TXID_FILE: &str = "seen_txid";

/// `edits_inprogress_<first>`.
pub fn inprogress_name(first: u64) -> String {
    format!("edits_inprogress_{first:019}")
}

/// `edits_<first>-<last>`.
pub fn finalized_name(first: u64, last: u64) -> String {
    format!("edits_{first:019}-{last:019}")
}

/// `fsimage_<txid>`.
pub fn image_name(txid: u64) -> String {
    format!("fsimage_{txid:019}")
}

/// `fsimage.ckpt_<txid>`: an image being written.
pub fn image_ckpt_name(txid: u64) -> String {
    format!("fsimage.ckpt_{txid:019}")
}

/// What a file in `current/` is, judged by its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `edits_<first>-<last>`.
    Finalized { first: u64, last: u64 },
    /// `edits_inprogress_<first>`.
    InProgress { first: u64 },
    /// `fsimage_<txid>`.
    Image { txid: u64 },
    /// `fsimage.ckpt_<txid>`.
    ImageCkpt { txid: u64 },
}

fn txid(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// Classifies a file name; `None` for anything else (VERSION, `*.corrupt`, temp files).
pub fn parse_name(name: &str) -> Option<FileKind> {
    if let Some(rest) = name.strip_prefix("edits_inprogress_") {
        return txid(rest).map(|first| FileKind::InProgress { first });
    }
    if let Some(rest) = name.strip_prefix("edits_") {
        let (a, b) = rest.split_once('-')?;
        let (first, last) = (txid(a)?, txid(b)?);
        return (first <= last).then_some(FileKind::Finalized { first, last });
    }
    if let Some(rest) = name.strip_prefix("fsimage.ckpt_") {
        return txid(rest).map(|txid| FileKind::ImageCkpt { txid });
    }
    if let Some(rest) = name.strip_prefix("fsimage_") {
        return txid(rest).map(|txid| FileKind::Image { txid });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        assert_eq!(inprogress_name(1), "edits_inprogress_0000000000000000001");
        assert_eq!(
            finalized_name(1, 22),
            "edits_0000000000000000001-0000000000000000022"
        );
        assert_eq!(image_name(0), "fsimage_0000000000000000000");
        assert_eq!(
            parse_name(&finalized_name(3, 9)),
            Some(FileKind::Finalized { first: 3, last: 9 })
        );
        assert_eq!(
            parse_name(&inprogress_name(7)),
            Some(FileKind::InProgress { first: 7 })
        );
        assert_eq!(
            parse_name(&image_name(42)),
            Some(FileKind::Image { txid: 42 })
        );
        assert_eq!(
            parse_name(&image_ckpt_name(42)),
            Some(FileKind::ImageCkpt { txid: 42 })
        );
        assert_eq!(parse_name("edits_inprogress_5.corrupt"), None);
        assert_eq!(parse_name("fsimage_5.md5"), None);
        assert_eq!(parse_name("edits_9-3"), None);
        assert_eq!(parse_name("VERSION"), None);
    }
}
