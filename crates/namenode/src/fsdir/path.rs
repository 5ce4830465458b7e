//! Path parsing and validation: absolute paths only, duplicate and trailing slashes
//! normalised, `.`, `..` and components containing `:` rejected.

use crate::error::{FsError, FsResult};

/// A validated absolute path: its normalised text and its components (root excluded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FsPath {
    text: String,
    components: Vec<Vec<u8>>,
}

impl FsPath {
    /// Parses and validates `src`.
    pub fn parse(src: &str) -> FsResult<Self> {
        if !src.starts_with('/') {
            return Err(FsError::InvalidPath(src.to_string()));
        }
        let mut components = Vec::new();
        for c in src.split('/') {
            if c.is_empty() {
                continue;
            }
            if c == "." || c == ".." || c.contains(':') {
                return Err(FsError::InvalidPath(src.to_string()));
            }
            components.push(c.as_bytes().to_vec());
        }
        Ok(Self::from_components(components))
    }

    pub fn root() -> Self {
        Self::from_components(Vec::new())
    }

    fn from_components(components: Vec<Vec<u8>>) -> Self {
        let mut text = String::new();
        for c in &components {
            text.push('/');
            text.push_str(&String::from_utf8_lossy(c));
        }
        if text.is_empty() {
            text.push('/');
        }
        FsPath { text, components }
    }

    pub fn as_str(&self) -> &str {
        &self.text
    }

    pub fn components(&self) -> &[Vec<u8>] {
        &self.components
    }

    pub fn is_root(&self) -> bool {
        self.components.is_empty()
    }

    /// The last component (empty for the root).
    pub fn name(&self) -> &[u8] {
        self.components.last().map(Vec::as_slice).unwrap_or(&[])
    }

    /// The parent path (the root's parent is the root).
    pub fn parent(&self) -> FsPath {
        let n = self.components.len().saturating_sub(1);
        Self::from_components(self.components[..n].to_vec())
    }

    /// The path of the first `n` components.
    pub fn prefix(&self, n: usize) -> FsPath {
        Self::from_components(self.components[..n.min(self.components.len())].to_vec())
    }

    /// This path with `name` appended.
    pub fn child(&self, name: &[u8]) -> FsPath {
        let mut c = self.components.clone();
        c.push(name.to_vec());
        Self::from_components(c)
    }

    /// True when `self` is `other` or lies below it.
    pub fn is_under(&self, other: &FsPath) -> bool {
        self.components.len() >= other.components.len()
            && self.components[..other.components.len()] == other.components[..]
    }
}

impl std::fmt::Display for FsPath {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalises_slashes() {
        let p = FsPath::parse("//a///b/").unwrap();
        assert_eq!(p.as_str(), "/a/b");
        assert_eq!(p.components().len(), 2);
        assert_eq!(FsPath::parse("/").unwrap().as_str(), "/");
        assert!(FsPath::parse("/").unwrap().is_root());
        assert_eq!(p.parent().as_str(), "/a");
        assert_eq!(p.name(), b"b");
    }

    #[test]
    fn rejects_bad_paths() {
        for bad in ["", "a/b", "/a/./b", "/a/../b", "/a:b", "/..", "relative"] {
            let e = FsPath::parse(bad).unwrap_err();
            assert!(matches!(e, FsError::InvalidPath(_)), "{bad}");
        }
        assert_eq!(
            FsPath::parse("/a/../b").unwrap_err().to_string(),
            "Invalid path name /a/../b"
        );
    }

    #[test]
    fn under() {
        let a = FsPath::parse("/a").unwrap();
        let ab = FsPath::parse("/a/b").unwrap();
        assert!(ab.is_under(&a));
        assert!(a.is_under(&a));
        assert!(!a.is_under(&ab));
        assert!(!FsPath::parse("/ab").unwrap().is_under(&a));
    }
}
