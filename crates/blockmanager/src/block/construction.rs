//! A block's under-construction parts, as Hadoop's BlockUnderConstructionFeature: the
//! pipeline it is expected to be written to and, while its writer is gone, its recovery.
//!
//! Memory: one word, `None`, for every block that is not being written or recovered —
//! almost all of them. The pipeline and the recovery share the one box (they had a word
//! each, which made `BlockInfo` 80 bytes where it is now 72).

use super::{BlockRecovery, ExpectedLocation};

#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Parts {
    expected: Vec<ExpectedLocation>,
    recovery: Option<BlockRecovery>,
}

impl Parts {
    fn is_empty(&self) -> bool {
        self.expected.is_empty() && self.recovery.is_none()
    }
}

/// The pipeline (read as a slice, empty when none) and the recovery of one block.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Construction(Option<Box<Parts>>);

impl Construction {
    /// Neither a pipeline nor a recovery.
    pub const NONE: Construction = Construction(None);

    pub fn is_empty(&self) -> bool {
        self.0.is_none()
    }

    /// Changes the parts, then drops the box if they are both empty.
    fn edit<T>(&mut self, f: impl FnOnce(&mut Parts) -> T) -> T {
        let parts = self.0.get_or_insert_with(Default::default);
        let out = f(parts);
        if parts.is_empty() {
            self.0 = None;
        }
        out
    }

    /// The expected pipeline locations (empty when none).
    pub fn expected(&self) -> &[ExpectedLocation] {
        self.0.as_deref().map_or(&[], |p| p.expected.as_slice())
    }

    /// Replaces the pipeline (the recovery is kept).
    pub fn set_expected(&mut self, expected: Vec<ExpectedLocation>) {
        if expected.is_empty() && self.0.is_none() {
            return;
        }
        self.edit(|p| p.expected = expected);
    }

    pub fn push_expected(&mut self, e: ExpectedLocation) {
        self.edit(|p| p.expected.push(e));
    }

    /// Forgets the pipeline (the recovery is kept).
    pub fn clear_expected(&mut self) {
        self.set_expected(Vec::new());
    }

    pub fn recovery(&self) -> Option<&BlockRecovery> {
        self.0.as_deref().and_then(|p| p.recovery.as_ref())
    }

    /// Replaces the recovery (the pipeline is kept).
    pub fn set_recovery(&mut self, recovery: Option<BlockRecovery>) {
        if recovery.is_none() && self.0.is_none() {
            return;
        }
        self.edit(|p| p.recovery = recovery);
    }

    /// Removes the recovery and returns it (the pipeline is kept).
    pub fn take_recovery(&mut self) -> Option<BlockRecovery> {
        self.0.as_ref()?.recovery.as_ref()?;
        self.edit(|p| p.recovery.take())
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn loc(n: &str) -> ExpectedLocation {
        ExpectedLocation {
            dn_uuid: Arc::from(n),
            storage_id: Arc::from(n),
        }
    }

    #[test]
    fn one_word_and_no_box_when_empty() {
        assert_eq!(std::mem::size_of::<Construction>(), 8);
        let mut c = Construction::default();
        c.set_expected(Vec::new());
        c.set_recovery(None);
        assert_eq!(c.take_recovery(), None);
        c.clear_expected();
        assert!(c.0.is_none());
        assert!(c.expected().is_empty());
        assert_eq!(c.recovery(), None);
    }

    #[test]
    fn pipeline_and_recovery_change_independently() {
        let mut c = Construction::default();
        c.set_expected(vec![loc("a")]);
        c.push_expected(loc("b"));
        assert_eq!(c.expected(), &[loc("a"), loc("b")]);
        let rec = BlockRecovery {
            recovery_id: 7,
            primary: Some(Arc::from("a")),
            tried: vec![Arc::from("a")],
        };
        c.set_recovery(Some(rec.clone()));
        c.clear_expected();
        assert!(c.expected().is_empty());
        assert_eq!(c.recovery(), Some(&rec));
        c.set_expected(vec![loc("c")]);
        assert_eq!(c.take_recovery(), Some(rec));
        assert_eq!(c.recovery(), None);
        assert_eq!(c.expected(), &[loc("c")]);
        c.clear_expected();
        assert!(c.0.is_none());
    }
}
