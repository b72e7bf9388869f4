//! What the Paxos core must guarantee, read through the inspection path.
//!
//! - `LearnedIsChosen`: a server that learned a proposal at ballot `b` sees
//!   a quorum (a majority of servers) holding, durably, an accepted ballot of
//!   at least `b`: only a chosen value is learned.
//! - `AtMostOneChosen`: every learned value and every value a client read
//!   are the same, and every acceptor that durably accepted at a ballot at or
//!   above a learned ballot holds that learned value, so no second value can
//!   be chosen.
//! - `PromiseDurable`: every Prepared or Accepted in flight for ballot `b` comes
//!   from an acceptor whose durable promise is at least `b`, and no running
//!   server uses a promise below its durable one: promises are durable before
//!   the reply, and kept across restarts.

use std::sync::Arc;

use cmc_model::Property;
use cmc_world::core::helpers::Message;
use cmc_world::system::state::WorldState;
use cmc_world::{Core, World};

use crate::node_parts::{node_parts, NodeParts, Nodes};
use crate::variants::{bug_variant, variant_spec};

use super::{servers, Ballot, Durable, Msg, Paxos, Volatile};

/// The Paxos core with planted bug `bug` (0: none), or `None` past [`super::BUGS`].
pub fn core(bug: u32) -> Option<Arc<dyn Core>> {
    bug_variant!(Paxos, bug, [0, 1, 2, 3, 4])
}

/// A World of `nodes` nodes (servers first, then clients) running variant
/// `bug`, with `params` applied and the properties above.
pub fn world(bug: u32, nodes: usize, params: &[&str]) -> Result<World, String> {
    let mut spec = variant_spec("paxos", bug, core(bug), nodes)?;
    spec.set_all(params)?;
    let servers = servers(&spec.core_params) as usize;
    if servers > nodes {
        return Err(format!(
            "paxos: {servers} servers do not fit in {nodes} nodes"
        ));
    }
    Ok(World::new(spec).with_properties(properties()))
}

/// One server's durable and volatile parts, and whether it is running.
type Server<'a> = NodeParts<'a, Durable, Volatile>;

fn servers_of<'a>(world: &'a World, state: &'a WorldState) -> Nodes<'a, Durable, Volatile> {
    let servers = servers(&world.spec().core_params) as usize;
    node_parts(world, state, 0..servers, "paxos")
}

/// The (ballot, value) pairs learned by running servers.
fn learned<'s>(servers: &'s [Server<'_>]) -> impl Iterator<Item = (Ballot, u32)> + 's {
    servers
        .iter()
        .filter(|s| s.up && s.volatile.learned_ballot.round != 0)
        .map(|s| (s.volatile.learned_ballot, s.volatile.learned.value))
}

fn learned_is_chosen(world: &World, state: &WorldState) -> bool {
    let servers = servers_of(world, state);
    let quorum = servers.len() / 2 + 1;
    let holds = learned(&servers).all(|(ballot, _)| {
        servers
            .iter()
            .filter(|s| s.durable.accepted.round != 0 && s.durable.accepted >= ballot)
            .count()
            >= quorum
    });
    holds
}

fn at_most_one_chosen(world: &World, state: &WorldState) -> bool {
    let servers = servers_of(world, state);
    let inspect = world.inspect(state);
    let reads = (servers.len()..inspect.nodes())
        .filter_map(|node| inspect.node(node).volatile_as::<Volatile>())
        .map(|client| client.read)
        .filter(|read| *read != 0);
    let mut values = learned(&servers).map(|(_, value)| value).chain(reads);
    let agreed = match values.next() {
        Some(first) => values.all(|value| value == first),
        None => true,
    };
    agreed
        && learned(&servers).all(|(ballot, value)| {
            servers.iter().all(|s| {
                s.durable.accepted.round == 0
                    || s.durable.accepted < ballot
                    || s.durable.proposal.value == value
            })
        })
}

fn promise_durable(world: &World, state: &WorldState) -> bool {
    let servers = servers_of(world, state);
    let replies_covered = world.inspect(state).messages().all(|packet| {
        let Some(server) = servers.get(packet.src as usize) else {
            return true;
        };
        match Msg::decode(packet.msg) {
            Some(Msg::Prepared { ballot, .. } | Msg::Accepted { ballot }) => {
                server.durable.promised >= ballot
            }
            _ => true,
        }
    });
    replies_covered
        && servers
            .iter()
            .all(|s| !s.up || s.volatile.ballot >= s.durable.promised)
}

/// `LearnedIsChosen`, `AtMostOneChosen` and `PromiseDurable` (see the module text).
pub fn properties() -> Vec<Property<World>> {
    vec![
        Property::always("LearnedIsChosen", learned_is_chosen),
        Property::always("AtMostOneChosen", at_most_one_chosen),
        Property::always("PromiseDurable", promise_durable),
    ]
}
