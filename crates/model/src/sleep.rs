//! What sleep sets need to know of a step: its name across states and
//! whom it touches.

use crate::Fingerprint;

/// A step as sleep sets see it (see [`Model::sleep_key`](crate::Model::sleep_key)).
///
/// Two keys are *independent* when their owners differ and neither's
/// partner is the other's owner: steps that own only their owner's part of
/// the state and read only what their partner gave them commute.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SleepKey {
    /// The one agent (a node) whose part of the state the step changes.
    pub owner: u32,
    /// The agent whose output the step consumes (the sender of a delivered
    /// message), if any.
    pub partner: Option<u32>,
    /// The step's name: the same in every state in which the step does the
    /// same (for a delivery, the message, not its position), as the
    /// fingerprint of its bytes: two steps are told apart as surely as two
    /// states are.
    pub name: Fingerprint,
}

impl SleepKey {
    /// Whether steps named `self` and `other` commute (see [`SleepKey`]).
    pub fn independent(&self, other: &SleepKey) -> bool {
        self.owner != other.owner
            && self.partner != Some(other.owner)
            && other.partner != Some(self.owner)
    }
}

#[cfg(test)]
mod tests {
    use super::SleepKey;

    fn key(owner: u32, partner: Option<u32>) -> SleepKey {
        SleepKey {
            owner,
            partner,
            name: crate::Fingerprint::default(),
        }
    }

    #[test]
    fn steps_of_one_owner_or_between_partners_are_dependent() {
        assert!(key(0, None).independent(&key(1, Some(2))));
        assert!(!key(0, None).independent(&key(0, Some(2))), "one owner");
        assert!(!key(0, Some(1)).independent(&key(1, None)), "0 reads 1's output");
        assert!(!key(1, None).independent(&key(0, Some(1))), "symmetric");
    }
}
