//! What sleep sets need to know of a step: its name across states and
//! whom it touches.

use crate::Fingerprint;

/// A step as sleep sets see it (see [`Model::sleep_key`](crate::Model::sleep_key)).
///
/// Two keys are *independent* when their owners differ, not both touch the
/// part of the state all agents share, and neither step consumes the output
/// of the other's owner that the other step feeds: steps that change only
/// their owner's part of the state (and, one of them, the shared part),
/// consume only what their partner sent them and add only to what their
/// owner sends commute.
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
    /// The agents the step may send to, a bit per agent below 64 (all bits:
    /// any agent, or not known yet).
    pub feeds: u64,
    /// Whether the step may read or change the part of the state all agents
    /// share (`true` until the step is taken).
    pub shared: bool,
}

impl SleepKey {
    /// Whether steps named `self` and `other` commute (see [`SleepKey`]).
    pub fn independent(&self, other: &SleepKey) -> bool {
        let both_shared = self.shared && other.shared;
        self.owner != other.owner
            && !both_shared
            && !self.consumes_from(other)
            && !other.consumes_from(self)
    }

    /// Whether `self` consumes what `other`'s owner sends to `self`'s owner,
    /// and `other` may send it.
    fn consumes_from(&self, other: &SleepKey) -> bool {
        let fed = match self.owner {
            agent @ 0..64 => other.feeds & (1 << agent) != 0,
            _ => true,
        };
        self.partner == Some(other.owner) && fed
    }

    /// Whether `self` and `other` name the same step (whatever each knows
    /// of whom it feeds).
    pub fn same_step(&self, other: &SleepKey) -> bool {
        (self.owner, self.partner, self.name) == (other.owner, other.partner, other.name)
    }
}

#[cfg(test)]
mod tests {
    use super::SleepKey;

    fn key(owner: u32, partner: Option<u32>, feeds: u64) -> SleepKey {
        SleepKey {
            owner,
            partner,
            name: crate::Fingerprint::default(),
            feeds,
            shared: false,
        }
    }

    #[test]
    fn steps_of_one_owner_or_consuming_what_the_other_sends_are_dependent() {
        let anyone = u64::MAX;
        assert!(key(0, None, anyone).independent(&key(1, Some(2), anyone)));
        assert!(
            !key(0, None, 0).independent(&key(0, Some(2), 0)),
            "one owner"
        );
        assert!(
            !key(0, Some(1), 0).independent(&key(1, None, 0b1)),
            "1 feeds 0"
        );
        assert!(
            !key(1, None, 0b1).independent(&key(0, Some(1), 0)),
            "symmetric"
        );
        assert!(
            key(0, Some(1), 0).independent(&key(1, None, 0b100)),
            "0 consumes 1's output, but this step of 1 sends only to 2"
        );
        assert!(
            !key(70, Some(1), 0).independent(&key(1, None, 0)),
            "owners past 64"
        );
        let shared = |owner| SleepKey {
            shared: true,
            ..key(owner, None, 0)
        };
        assert!(
            shared(0).independent(&key(1, None, 0)),
            "one touches the shared part"
        );
        assert!(!shared(0).independent(&shared(1)), "both do");
    }
}
