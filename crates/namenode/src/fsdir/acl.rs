//! POSIX ACLs as HDFS keeps them: the entry type, the transformations of
//! modifyAclEntries/removeAclEntries/removeDefaultAcl/setAcl (Hadoop's AclTransformation
//! rules: sorted entries, masks recalculated, default base entries copied from the access
//! ones), the split of a full ACL into permission bits + the stored entries, and the
//! default ACL a new child inherits.
//!
//! Stored form (as Hadoop's AclFeature): an inode with an extended ACL keeps the access
//! entries other than `user::`, `mask::` and `other::` (the named users, `group::`, the
//! named groups) followed by every default entry; the mode's group bits are the mask.

use std::cmp::Ordering;

use crate::error::{FsError, FsResult};

/// Hadoop's limit on the entries of one scope.
pub const MAX_ENTRIES: usize = 32;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AclType {
    User = 0,
    Group = 1,
    Mask = 2,
    Other = 3,
}

impl AclType {
    pub fn from_u8(v: u8) -> Option<Self> {
        Some(match v {
            0 => AclType::User,
            1 => AclType::Group,
            2 => AclType::Mask,
            3 => AclType::Other,
            _ => return None,
        })
    }
    pub fn name(self) -> &'static str {
        match self {
            AclType::User => "user",
            AclType::Group => "group",
            AclType::Mask => "mask",
            AclType::Other => "other",
        }
    }
}

/// One ACL entry: scope (default or access), type, optional name, rwx bits.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AclEntry {
    pub default: bool,
    pub kind: AclType,
    pub name: Option<String>,
    pub perm: u8,
}

impl AclEntry {
    pub fn new(default: bool, kind: AclType, name: Option<&str>, perm: u8) -> Self {
        AclEntry {
            default,
            kind,
            name: name.map(str::to_string),
            perm: perm & 7,
        }
    }

    /// Hadoop's entry order: access before default, then user, group, mask, other, the
    /// unnamed entry before the named ones, names in order.
    pub fn key_cmp(&self, o: &AclEntry) -> Ordering {
        (self.default, self.kind)
            .cmp(&(o.default, o.kind))
            .then_with(|| match (&self.name, &o.name) {
                (None, None) => Ordering::Equal,
                (None, Some(_)) => Ordering::Less,
                (Some(_), None) => Ordering::Greater,
                (Some(a), Some(b)) => a.cmp(b),
            })
    }

    fn same_key(&self, o: &AclEntry) -> bool {
        self.key_cmp(o) == Ordering::Equal
    }

    fn base(default: bool, kind: AclType, perm: u8) -> Self {
        AclEntry::new(default, kind, None, perm)
    }
}

/// `rwx`-style text of permission bits.
pub fn perm_symbol(p: u8) -> String {
    let mut s = String::with_capacity(3);
    s.push(if p & 4 != 0 { 'r' } else { '-' });
    s.push(if p & 2 != 0 { 'w' } else { '-' });
    s.push(if p & 1 != 0 { 'x' } else { '-' });
    s
}

impl std::fmt::Display for AclEntry {
    /// Hadoop's AclEntry.toString ("default:user:bob:rwx").
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.default {
            f.write_str("default:")?;
        }
        write!(
            f,
            "{}:{}:{}",
            self.kind.name(),
            self.name.as_deref().unwrap_or(""),
            perm_symbol(self.perm)
        )
    }
}

fn acl_err(msg: impl Into<String>) -> FsError {
    FsError::Acl(msg.into())
}

/// The minimal ACL the mode implies.
pub fn minimal_acl(mode: u16) -> Vec<AclEntry> {
    vec![
        AclEntry::base(false, AclType::User, ((mode >> 6) & 7) as u8),
        AclEntry::base(false, AclType::Group, ((mode >> 3) & 7) as u8),
        AclEntry::base(false, AclType::Other, (mode & 7) as u8),
    ]
}

/// The full ACL of an inode (Hadoop's readINodeLogicalAcl): user::, the stored access
/// entries, mask:: (the group bits) and other::, then the default entries; the minimal ACL
/// when nothing is stored.
pub fn logical_acl(mode: u16, stored: &[AclEntry]) -> Vec<AclEntry> {
    if stored.is_empty() {
        return minimal_acl(mode);
    }
    let split = stored
        .iter()
        .position(|e| e.default)
        .unwrap_or(stored.len());
    let (access, defaults) = stored.split_at(split);
    let mut out = Vec::with_capacity(stored.len() + 3);
    if access.is_empty() {
        out.extend(minimal_acl(mode));
    } else {
        out.push(AclEntry::base(
            false,
            AclType::User,
            ((mode >> 6) & 7) as u8,
        ));
        out.extend(access.iter().cloned());
        out.push(AclEntry::base(
            false,
            AclType::Mask,
            ((mode >> 3) & 7) as u8,
        ));
        out.push(AclEntry::base(false, AclType::Other, (mode & 7) as u8));
    }
    out.extend(defaults.iter().cloned());
    out
}

/// A full, valid ACL turned into (new mode, entries to store) for an inode whose mode is
/// `mode` (the sticky bit is kept). Fails for default entries on a file.
pub fn to_stored(acl: &[AclEntry], mode: u16, is_dir: bool) -> FsResult<(u16, Vec<AclEntry>)> {
    let split = acl.iter().position(|e| e.default).unwrap_or(acl.len());
    let (access, defaults) = acl.split_at(split);
    if !defaults.is_empty() && !is_dir {
        return Err(acl_err(
            "Invalid ACL: only directories may have a default ACL.",
        ));
    }
    let find = |kind: AclType| {
        access
            .iter()
            .find(|e| e.kind == kind && e.name.is_none())
            .map_or(0, |e| u16::from(e.perm))
    };
    let sticky = mode & 0o1000;
    let mut stored = Vec::new();
    let new_mode = if access.len() > 3 {
        stored.extend(
            access
                .iter()
                .filter(|e| {
                    !(e.name.is_none()
                        && matches!(e.kind, AclType::User | AclType::Mask | AclType::Other))
                })
                .cloned(),
        );
        sticky | find(AclType::User) << 6 | find(AclType::Mask) << 3 | find(AclType::Other)
    } else {
        sticky | find(AclType::User) << 6 | find(AclType::Group) << 3 | find(AclType::Other)
    };
    stored.extend(defaults.iter().cloned());
    Ok((new_mode, stored))
}

/// Entries of an ACL spec from a client: sorted, no duplicates, within the size limit.
fn validated_spec(spec: &[AclEntry]) -> FsResult<Vec<AclEntry>> {
    if spec.len() > MAX_ENTRIES {
        return Err(acl_err(format!(
            "Invalid ACL: ACL spec has {} entries, which exceeds maximum of {MAX_ENTRIES}.",
            spec.len()
        )));
    }
    let mut s = spec.to_vec();
    s.sort_by(AclEntry::key_cmp);
    Ok(s)
}

fn find_key<'a>(list: &'a [AclEntry], key: &AclEntry) -> Option<&'a AclEntry> {
    list.iter().find(|e| e.same_key(key))
}

/// Which scopes a transformation touched, and the masks it was given (index 0 = access,
/// 1 = default).
#[derive(Default)]
struct Dirt {
    provided_mask: [Option<AclEntry>; 2],
    mask_dirty: [bool; 2],
    scope_dirty: [bool; 2],
}

fn si(e: &AclEntry) -> usize {
    usize::from(e.default)
}

/// modifyAclEntries.
pub fn merge_entries(existing: &[AclEntry], spec: &[AclEntry]) -> FsResult<Vec<AclEntry>> {
    let spec = validated_spec(spec)?;
    let mut out = Vec::new();
    let mut d = Dirt::default();
    let mut found: Vec<&AclEntry> = Vec::new();
    for e in existing {
        if let Some(s) = find_key(&spec, e) {
            found.push(s);
            d.scope_dirty[si(s)] = true;
            if s.kind == AclType::Mask {
                d.provided_mask[si(s)] = Some(s.clone());
                d.mask_dirty[si(s)] = true;
            } else {
                out.push(s.clone());
            }
        } else if e.kind == AclType::Mask {
            d.provided_mask[si(e)] = Some(e.clone());
        } else {
            out.push(e.clone());
        }
    }
    for s in &spec {
        if found.iter().any(|f| f.same_key(s)) {
            continue;
        }
        d.scope_dirty[si(s)] = true;
        if s.kind == AclType::Mask {
            d.provided_mask[si(s)] = Some(s.clone());
            d.mask_dirty[si(s)] = true;
        } else {
            out.push(s.clone());
        }
    }
    finish(out, d)
}

/// removeAclEntries.
pub fn filter_entries(existing: &[AclEntry], spec: &[AclEntry]) -> FsResult<Vec<AclEntry>> {
    let spec = validated_spec(spec)?;
    let mut out = Vec::new();
    let mut d = Dirt::default();
    for e in existing {
        if find_key(&spec, e).is_some() {
            d.scope_dirty[si(e)] = true;
            if e.kind == AclType::Mask {
                d.mask_dirty[si(e)] = true;
            }
        } else if e.kind == AclType::Mask {
            d.provided_mask[si(e)] = Some(e.clone());
        } else {
            out.push(e.clone());
        }
    }
    finish(out, d)
}

/// removeDefaultAcl.
pub fn filter_default(existing: &[AclEntry]) -> FsResult<Vec<AclEntry>> {
    let out: Vec<AclEntry> = existing.iter().filter(|e| !e.default).cloned().collect();
    build_and_validate(out)
}

/// setAcl: each scope named in the spec is replaced, the other kept.
pub fn replace_entries(existing: &[AclEntry], spec: &[AclEntry]) -> FsResult<Vec<AclEntry>> {
    let spec = validated_spec(spec)?;
    let mut out = Vec::new();
    let mut d = Dirt::default();
    for s in &spec {
        d.scope_dirty[si(s)] = true;
        if s.kind == AclType::Mask {
            d.provided_mask[si(s)] = Some(s.clone());
            d.mask_dirty[si(s)] = true;
        } else {
            out.push(s.clone());
        }
    }
    for e in existing {
        if d.scope_dirty[si(e)] {
            continue;
        }
        if e.kind == AclType::Mask {
            d.provided_mask[si(e)] = Some(e.clone());
        } else {
            out.push(e.clone());
        }
    }
    finish(out, d)
}

fn finish(mut out: Vec<AclEntry>, d: Dirt) -> FsResult<Vec<AclEntry>> {
    copy_defaults_if_needed(&mut out);
    calculate_masks(&mut out, d)?;
    build_and_validate(out)
}

/// A default ACL without some of user::, group::, other:: takes them from the access ACL.
fn copy_defaults_if_needed(acl: &mut Vec<AclEntry>) {
    if !acl.iter().any(|e| e.default) {
        return;
    }
    let mut copied = Vec::new();
    for kind in [AclType::User, AclType::Group, AclType::Other] {
        let has_default = acl
            .iter()
            .any(|e| e.default && e.kind == kind && e.name.is_none());
        if has_default {
            continue;
        }
        if let Some(a) = acl
            .iter()
            .find(|e| !e.default && e.kind == kind && e.name.is_none())
        {
            copied.push(AclEntry::base(true, kind, a.perm));
        }
    }
    acl.extend(copied);
}

fn calculate_masks(acl: &mut Vec<AclEntry>, d: Dirt) -> FsResult<()> {
    let mut found = [false; 2];
    let mut union = [0u8; 2];
    let mut needed = [false; 2];
    for e in acl.iter() {
        let s = si(e);
        found[s] = true;
        if e.kind == AclType::Group || e.name.is_some() {
            union[s] |= e.perm;
        }
        if e.name.is_some() {
            needed[s] = true;
        }
    }
    for s in 0..2 {
        if !found[s] {
            continue;
        }
        let provided = &d.provided_mask[s];
        if provided.is_none() && needed[s] && d.mask_dirty[s] {
            return Err(acl_err(
                "Invalid ACL: mask is required and cannot be deleted if the ACL contains named entries.",
            ));
        }
        match provided {
            Some(m) if !d.scope_dirty[s] || d.mask_dirty[s] => acl.push(m.clone()),
            Some(_) => acl.push(AclEntry::base(s == 1, AclType::Mask, union[s])),
            None if needed[s] => acl.push(AclEntry::base(s == 1, AclType::Mask, union[s])),
            None => {}
        }
    }
    Ok(())
}

fn build_and_validate(mut acl: Vec<AclEntry>) -> FsResult<Vec<AclEntry>> {
    if acl.len() > MAX_ENTRIES {
        return Err(acl_err(format!(
            "Invalid ACL: ACL has {} entries, which exceeds maximum of {MAX_ENTRIES}.",
            acl.len()
        )));
    }
    acl.sort_by(AclEntry::key_cmp);
    for w in acl.windows(2) {
        if w[0].same_key(&w[1]) {
            return Err(acl_err(
                "Invalid ACL: multiple entries with same scope, type and name.",
            ));
        }
    }
    for e in &acl {
        if e.name.is_some() && matches!(e.kind, AclType::Mask | AclType::Other) {
            return Err(acl_err(format!(
                "Invalid ACL: this entry type must not have a name: {e}."
            )));
        }
    }
    let has_defaults = acl.iter().any(|e| e.default);
    for kind in [AclType::User, AclType::Group, AclType::Other] {
        let has = |default: bool| {
            acl.iter()
                .any(|e| e.default == default && e.kind == kind && e.name.is_none())
        };
        if !has(false) {
            return Err(acl_err(
                "Invalid ACL: the user, group and other entries are required.",
            ));
        }
        if has_defaults && !has(true) {
            return Err(acl_err(
                "Invalid default ACL: the user, group and other entries are required.",
            ));
        }
    }
    Ok(acl)
}

/// What a new child of a directory with a default ACL gets (Hadoop's
/// copyINodeDefaultAcl): `None` when the parent has no default ACL (the umask applies);
/// otherwise the child's mode and stored entries, its requested `mode` filtering the
/// copied user, mask (or group of a minimal default ACL) and other permissions.
pub fn inherit(
    parent_stored: &[AclEntry],
    mode: u16,
    child_is_dir: bool,
) -> Option<(u16, Vec<AclEntry>)> {
    let defaults: Vec<&AclEntry> = parent_stored.iter().filter(|e| e.default).collect();
    if defaults.is_empty() {
        return None;
    }
    let minimal = defaults.len() == 3;
    let (u, g, o) = (
        ((mode >> 6) & 7) as u8,
        ((mode >> 3) & 7) as u8,
        (mode & 7) as u8,
    );
    let access: Vec<AclEntry> = defaults
        .iter()
        .map(|e| {
            let perm = match (e.kind, &e.name) {
                (AclType::User, None) => e.perm & u,
                (AclType::Group, None) if minimal => e.perm & g,
                (AclType::Mask, _) => e.perm & g,
                (AclType::Other, _) => e.perm & o,
                _ => e.perm,
            };
            AclEntry::new(false, e.kind, e.name.as_deref(), perm)
        })
        .collect();
    let mut full = access;
    if child_is_dir {
        full.extend(defaults.iter().map(|e| (*e).clone()));
    }
    // A valid default ACL copied into the access scope is valid.
    to_stored(&full, mode & 0o1000, child_is_dir).ok()
}

/// Hadoop's FSPermissionChecker with an ACL: the owner gets the user bits; a named user
/// entry or any matching group entry, each limited by the mask (the group bits), decides
/// next; `other` only when no entry matched.
pub fn acl_allows(
    mode: u16,
    stored: &[AclEntry],
    is_owner: bool,
    user: &str,
    in_group: impl Fn(&str) -> bool,
    owning_group: &str,
    bits: u8,
) -> bool {
    let bits = bits & 7;
    if is_owner {
        return ((mode >> 6) as u8) & bits == bits;
    }
    let mask = ((mode >> 3) & 7) as u8;
    let mut matched = false;
    for e in stored.iter().take_while(|e| !e.default) {
        match (e.kind, &e.name) {
            (AclType::User, Some(n)) if n == user => {
                return e.perm & mask & bits == bits;
            }
            (AclType::Group, name) if in_group(name.as_deref().unwrap_or(owning_group)) => {
                if e.perm & mask & bits == bits {
                    return true;
                }
                matched = true;
            }
            _ => {}
        }
    }
    !matched && (mode as u8) & 7 & bits == bits
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(default: bool, kind: AclType, name: Option<&str>, perm: u8) -> AclEntry {
        AclEntry::new(default, kind, name, perm)
    }

    #[test]
    fn modify_adds_named_user_and_mask() {
        let existing = minimal_acl(0o750);
        let acl = merge_entries(&existing, &[e(false, AclType::User, Some("bob"), 7)]).unwrap();
        let text: Vec<String> = acl.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            text,
            [
                "user::rwx",
                "user:bob:rwx",
                "group::r-x",
                "mask::rwx",
                "other::---"
            ]
        );
        let (mode, stored) = to_stored(&acl, 0o1750, true).unwrap();
        assert_eq!(mode, 0o1770);
        assert_eq!(stored.len(), 2);
        assert_eq!(logical_acl(mode, &stored), acl);
    }

    #[test]
    fn default_entries_copy_base_entries_and_dirs_only() {
        let acl = merge_entries(
            &minimal_acl(0o755),
            &[e(true, AclType::User, Some("bob"), 5)],
        )
        .unwrap();
        let text: Vec<String> = acl.iter().map(|x| x.to_string()).collect();
        assert_eq!(
            text,
            [
                "user::rwx",
                "group::r-x",
                "other::r-x",
                "default:user::rwx",
                "default:user:bob:r-x",
                "default:group::r-x",
                "default:mask::r-x",
                "default:other::r-x"
            ]
        );
        assert!(matches!(
            to_stored(&acl, 0o755, false),
            Err(FsError::Acl(_))
        ));
        let (mode, stored) = to_stored(&acl, 0o755, true).unwrap();
        assert_eq!(mode, 0o755);
        assert_eq!(stored.len(), 5);
        assert_eq!(
            filter_default(&logical_acl(mode, &stored)).unwrap(),
            minimal_acl(0o755)
        );
    }

    #[test]
    fn removing_the_mask_with_named_entries_fails() {
        let acl = merge_entries(
            &minimal_acl(0o750),
            &[e(false, AclType::User, Some("bob"), 7)],
        )
        .unwrap();
        let err = filter_entries(&acl, &[e(false, AclType::Mask, None, 0)]).unwrap_err();
        assert!(matches!(err, FsError::Acl(m) if m.contains("mask is required")));
        let acl = filter_entries(&acl, &[e(false, AclType::User, Some("bob"), 0)]).unwrap();
        // The mask stays (recalculated) once an ACL had one.
        assert_eq!(acl.len(), 4);
    }

    #[test]
    fn set_requires_base_entries_and_rejects_duplicates() {
        let err = replace_entries(
            &minimal_acl(0o755),
            &[e(false, AclType::User, Some("a"), 7)],
        )
        .unwrap_err();
        assert!(matches!(err, FsError::Acl(m) if m.contains("user, group and other")));
        let err = replace_entries(
            &minimal_acl(0o755),
            &[
                e(false, AclType::User, None, 7),
                e(false, AclType::User, None, 5),
                e(false, AclType::Group, None, 5),
                e(false, AclType::Other, None, 0),
            ],
        )
        .unwrap_err();
        assert!(matches!(err, FsError::Acl(m) if m.contains("multiple entries")));
    }

    #[test]
    fn access_checks_use_named_entries_and_mask() {
        let acl = merge_entries(
            &minimal_acl(0o750),
            &[
                e(false, AclType::User, Some("bob"), 7),
                e(false, AclType::User, Some("eve"), 0),
                e(false, AclType::Mask, None, 5),
            ],
        )
        .unwrap();
        let (mode, stored) = to_stored(&acl, 0o750, true).unwrap();
        let no_groups = |_: &str| false;
        assert!(acl_allows(mode, &stored, false, "bob", no_groups, "g", 4));
        // The mask limits bob to r-x.
        assert!(!acl_allows(mode, &stored, false, "bob", no_groups, "g", 2));
        // eve is denied by her entry even where "other" would not matter.
        assert!(!acl_allows(mode, &stored, false, "eve", no_groups, "g", 4));
        // Owning-group members get group:: & mask.
        assert!(acl_allows(
            mode,
            &stored,
            false,
            "amy",
            |g| g == "g",
            "g",
            5
        ));
        assert!(!acl_allows(mode, &stored, false, "amy", no_groups, "g", 4));
    }

    #[test]
    fn children_inherit_the_default_acl() {
        let acl = merge_entries(
            &minimal_acl(0o755),
            &[e(true, AclType::User, Some("bob"), 7)],
        )
        .unwrap();
        let (_, parent) = to_stored(&acl, 0o755, true).unwrap();
        let (mode, stored) = inherit(&parent, 0o644, false).unwrap();
        // mask = default mask & group bits of the requested mode.
        assert_eq!(mode, 0o644);
        let text: Vec<String> = logical_acl(mode, &stored)
            .iter()
            .map(|x| x.to_string())
            .collect();
        assert_eq!(
            text,
            [
                "user::rw-",
                "user:bob:rwx",
                "group::r-x",
                "mask::r--",
                "other::r--"
            ]
        );
        let (_, dir) = inherit(&parent, 0o755, true).unwrap();
        assert_eq!(dir.iter().filter(|e| e.default).count(), 5);
        assert!(inherit(&stored, 0o644, false).is_none());
    }
}
