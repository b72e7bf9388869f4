//! A write-ahead log core: a node makes each client request durable
//! (PERSIST of the set of logged requests) and replies only once that
//! write is flushed. Property: `AckedIsDurable` (every request a node
//! acknowledged is in that node's durable log).
//!
//! Planted bugs: 1 replies at once, before the flush; 2 persists only the
//! new request's bit, so a later flush overwrites an acknowledged one.

use bytemuck::{Pod, Zeroable};
use cmc_linearizability::SequentialSpec;
use cmc_model::Property;
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::properties::consistency::{linearizable_summarised, ClientHistory, ReplyMeaning};
use cmc_world::system::state::{GhostKind, WorldState};
use cmc_world::{TypedCore, World};

/// Planted bugs of [`Wal`].
pub const BUGS: u32 = 2;
/// The reply to a logged request.
pub const REPLY_OK: u8 = 1;

/// What survives a crash: the flushed log.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct Durable {
    /// The logged requests, one bit per request id.
    pub logged: u32,
}

/// What a crash loses.
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
#[repr(C)]
pub struct Volatile {
    /// Requests received and not yet acknowledged, one bit per id.
    pub pending: u32,
}

/// The core, with planted bug `bug` (0: none).
#[derive(Clone, Copy, Debug, Default)]
pub struct Wal {
    /// The planted bug, 0 to [`BUGS`].
    pub bug: u32,
}

impl TypedCore for Wal {
    type Durable = Durable;
    type Volatile = Volatile;

    fn name(&self) -> &str {
        "wal"
    }

    fn step(
        &self,
        _config: &Config,
        durable: &Durable,
        volatile: &mut Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Client) => {
                let request = 1u32 << (event.id % 32);
                volatile.pending |= request;
                let log = match self.bug {
                    2 => request,
                    _ => durable.logged | volatile.pending,
                };
                out.persist(0, &log.to_le_bytes())?;
                if self.bug == 1 {
                    volatile.pending &= !request;
                    out.reply(event.id, &[REPLY_OK])?;
                }
            }
            Some(EventKind::Flushed) => {
                // Only this core's 4-byte log is ever persisted.
                let log: [u8; 4] = event.payload().try_into().map_err(|_| CoreError::Code(1))?;
                let durable_now = u32::from_le_bytes(log) & volatile.pending;
                volatile.pending &= !durable_now;
                for id in (0..32).filter(|id| durable_now & (1 << id) != 0) {
                    out.reply(id, &[REPLY_OK])?;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn describe_state(
        &self,
        _config: &Config,
        durable: &Durable,
        volatile: &Volatile,
    ) -> Option<String> {
        Some(format!(
            "logged={:#x} pending={:#x}",
            durable.logged, volatile.pending
        ))
    }
}

/// `AckedIsDurable`: every request a node acknowledged is in its durable
/// log (read through the World's inspection path).
pub fn properties() -> Vec<Property<World>> {
    vec![Property::always(
        "AckedIsDurable",
        |world: &World, state: &WorldState| {
            let inspect = world.inspect(state);
            inspect
                .ghost()
                .iter()
                .filter(|entry| entry.kind == GhostKind::Reply)
                .all(|entry| {
                    inspect
                        .node(entry.node as usize)
                        .durable_as::<Durable>()
                        .is_some_and(|durable| durable.logged & (1 << (entry.request % 32)) != 0)
                })
        },
    )]
}

/// The World parameters `mycheck` checks the core with unless the command
/// line says otherwise: three requests, one crash and one restart.
pub const DEFAULTS: [&str; 3] = ["requests=3", "crashes=1", "restarts=1"];

/// The log as its clients see it: each request is logged and acknowledged.
pub struct Log;

impl SequentialSpec for Log {
    type State = ();
    /// The request id.
    type Op = u32;
    /// The reply byte.
    type Ret = u8;
    fn init(&self) {}
    fn apply(&self, _: &(), _: &u32) -> ((), u8) {
        ((), REPLY_OK)
    }
}

/// `world` equipped as `mycheck` registers the core: `AckedIsDurable`, and
/// `Linearizable` against [`Log`] checked on a summary of the client
/// history, which stands for its order in the states' identity (fewer
/// states than the whole history).
pub fn equip(world: World) -> World {
    let history = ClientHistory::new(
        Log,
        |request, _node| request,
        |_, reply: &[u8]| ReplyMeaning::Returned(reply.first().copied().unwrap_or(0)),
    );
    linearizable_summarised(world, history).with_properties(properties())
}
