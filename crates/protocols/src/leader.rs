//! What the leader-based cores (primary-backup and Raft) share: a node's
//! role, the messages that wait for a persist's flush, where a client
//! request goes in the log, and sending to every other node.

use cmc_world::core::abi::{Config, CoreError, Outputs};
use cmc_world::core::helpers::{send_to_each, AfterFlush, Message};

use crate::wire::WORDS_MAX;

/// Node roles (`Volatile::role` of both cores).
pub mod role {
    /// Follows the leader of its view or term (a primary-backup backup).
    pub const FOLLOWER: u32 = 0;
    /// Collecting votes for its view or term.
    pub const CANDIDATE: u32 = 1;
    /// Leads its view or term (the primary of a primary-backup view).
    pub const LEADER: u32 = 2;
}

/// The name of `role` among `names` (follower, candidate and leader, as the
/// protocol calls them); `?` for a value that is no role.
pub(crate) fn role_name(role: u32, names: [&'static str; 3]) -> &'static str {
    names.get(role as usize).copied().unwrap_or("?")
}

/// Writes that may wait for their flush at one node.
pub(crate) const AFTER_FLUSH_MAX: usize = 4;

/// Per outstanding persist (at most [`AFTER_FLUSH_MAX`]), the message its
/// flush releases.
pub(crate) type AfterFlushed = AfterFlush<AFTER_FLUSH_MAX, WORDS_MAX>;

/// The index a client request is appended at: the end of the log (`len`
/// entries in use of `capacity`) of a leader that has room in its log and
/// for one more write awaiting its flush. `None`: the request is refused.
pub(crate) fn append_at(
    role: u32,
    len: u32,
    capacity: usize,
    after_flush: &AfterFlushed,
) -> Option<usize> {
    let at = len as usize;
    (role == role::LEADER && at < capacity && !after_flush.is_full()).then_some(at)
}

/// Sends `msg` to every node but this one.
pub(crate) fn broadcast<M: Message>(
    config: &Config,
    out: &mut Outputs,
    msg: &M,
) -> Result<(), CoreError> {
    let others = (0..config.nodes).filter(|node| *node != config.node);
    send_to_each(out, others, msg)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_appended_only_by_a_leader_with_room_for_it() {
        let mut after_flush = AfterFlushed::default();
        assert_eq!(append_at(role::LEADER, 1, 2, &after_flush), Some(1));
        assert_eq!(append_at(role::FOLLOWER, 1, 2, &after_flush), None);
        assert_eq!(append_at(role::CANDIDATE, 1, 2, &after_flush), None);
        assert_eq!(
            append_at(role::LEADER, 2, 2, &after_flush),
            None,
            "log full"
        );
        for _ in 0..AFTER_FLUSH_MAX {
            after_flush.hold_nothing().unwrap();
        }
        assert_eq!(
            append_at(role::LEADER, 0, 2, &after_flush),
            None,
            "no room to hold"
        );
    }

    #[test]
    fn a_role_is_named_as_its_protocol_calls_it() {
        let names = ["backup", "candidate", "primary"];
        assert_eq!(role_name(role::LEADER, names), "primary");
        assert_eq!(role_name(role::FOLLOWER, names), "backup");
        assert_eq!(role_name(7, names), "?");
    }
}
