//! Two-phase commit, written in C (`c/two_phase.c`) and loaded from its shared
//! library: the layouts the properties read, the properties, and the World.
//!
//! Node 0 is the coordinator, nodes `1..n` are resource managers (RMs); bit
//! `i` of `cfg0` makes RM `i` vote NO. Properties:
//! - `Agreement`: no two nodes hold different outcomes (commit and abort) for
//!   the same transaction in their durable records;
//! - `Validity`: a transaction is committed (anywhere, durably) only if every
//!   RM voted YES: each holds it PREPARED or COMMITTED (or has moved past it),
//!   and none is configured to vote NO;
//! - `NoCommitReplyBeforeFlush`: a COMMITTED reply to request `r` is given
//!   only once the coordinator's COMMIT decision for `r + 1` is durable.

use std::path::PathBuf;
use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use cmc_model::{ModelParam, Property};
use cmc_world::system::state::WorldState;
use cmc_world::{CCore, World, WorldSpec};

/// Record: coordinator has begun the transaction, undecided (`TPC_NONE`).
pub const NONE: u32 = 0;
/// Record: committed (coordinator decision or RM outcome).
pub const COMMITTED: u32 = 1;
/// Record: aborted (coordinator decision or RM outcome).
pub const ABORTED: u32 = 2;
/// Record: the RM voted YES and waits for the decision.
pub const PREPARED: u32 = 3;
/// Reply payload: the transaction committed.
pub const REPLY_COMMITTED: u8 = 1;
/// Planted bugs in `c/two_phase.c`, numbered `1..=BUGS`.
pub const BUGS: u32 = 4;

/// `struct tpc_durable`: the latest transaction and its record.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// Request id + 1 of the latest transaction; 0 for none.
    pub tx: u32,
    /// One of [`NONE`], [`COMMITTED`], [`ABORTED`], [`PREPARED`].
    pub record: u32,
}

/// `struct tpc_volatile` (only its size matters to the properties).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// Coordinator phase; RM: 1 while a record is unflushed.
    pub phase: u32,
    /// Transaction in progress.
    pub tx: u32,
    /// Decision (coordinator) or unflushed record (RM).
    pub decision: u32,
    /// Coordinator: RMs that voted YES.
    pub yes: u32,
    /// Coordinator: RMs that reported DONE; RM: the record carries a decision.
    pub done: u32,
    /// Coordinator: the client was answered.
    pub replied: u32,
}

/// The shared library of the control (`bug` 0) or of planted bug `bug`.
pub fn library(bug: u32) -> PathBuf {
    let name = match bug {
        0 => "libtwo_phase.so".to_string(),
        bug => format!("libtwo_phase_bug{bug}.so"),
    };
    PathBuf::from(env!("CMC_PROTOCOLS_LIBS")).join(name)
}

/// The object file of the control, as a product links it (for `cmc purity`).
pub fn object() -> PathBuf {
    PathBuf::from(env!("CMC_PROTOCOLS_LIBS")).join("two_phase.o")
}

/// A World of `nodes` nodes running variant `bug` loaded from its shared
/// library, with `params` applied and the properties above.
pub fn world(bug: u32, nodes: usize, params: &[&str]) -> Result<World, String> {
    let path = library(bug);
    let core = CCore::load(&path).map_err(|error| error.to_string())?;
    let mut spec = WorldSpec::new(Arc::new(core), nodes)?;
    spec.applied
        .push(ModelParam::new("core", path.display().to_string()));
    spec.set_all(params)?;
    Ok(World::new(spec).with_properties(properties()))
}

fn durables(world: &World, state: &WorldState) -> Vec<Durable> {
    let inspect = world.inspect(state);
    (0..inspect.nodes())
        .map(|node| {
            inspect
                .node(node)
                .durable_as::<Durable>()
                .expect("every node runs two_phase")
        })
        .collect()
}

/// The outcome a durable record states, if it states one.
fn outcome(record: &Durable) -> Option<(u32, bool)> {
    match record.record {
        COMMITTED => Some((record.tx, true)),
        ABORTED => Some((record.tx, false)),
        _ => None,
    }
}

fn agreement(world: &World, state: &WorldState) -> bool {
    let records = durables(world, state);
    let outcomes: Vec<(u32, bool)> = records.iter().filter_map(outcome).collect();
    outcomes.iter().all(|(tx, committed)| {
        outcomes
            .iter()
            .all(|(other, same)| other != tx || same == committed)
    })
}

fn validity(world: &World, state: &WorldState) -> bool {
    let records = durables(world, state);
    let no_voters = world.spec().core_params[0];
    records
        .iter()
        .filter(|record| record.record == COMMITTED)
        .all(|committed| {
            records[1..].iter().enumerate().all(|(index, rm)| {
                let voted_yes = rm.tx > committed.tx
                    || (rm.tx == committed.tx && matches!(rm.record, PREPARED | COMMITTED));
                voted_yes && no_voters & (1 << (index + 1)) == 0
            })
        })
}

fn no_commit_reply_before_flush(world: &World, state: &WorldState) -> bool {
    let coordinator = durables(world, state)[0];
    world
        .inspect(state)
        .replies_with(&[REPLY_COMMITTED])
        .all(|entry| {
            let tx = entry.request + 1;
            coordinator.tx > tx || (coordinator.tx == tx && coordinator.record == COMMITTED)
        })
}

/// `Agreement`, `Validity` and `NoCommitReplyBeforeFlush` (see the module text).
pub fn properties() -> Vec<Property<World>> {
    vec![
        Property::always("Agreement", agreement),
        Property::always("Validity", validity),
        Property::always("NoCommitReplyBeforeFlush", no_commit_reply_before_flush),
    ]
}
