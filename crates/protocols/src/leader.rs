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
