//! What the ABD register must guarantee.
//!
//! - `Linearizable`: the World's client history (requests and replies, see
//!   [`history`]) is linearizable with respect to a read/write register;
//! - `ReplyAfterFlush`: every QueryOk and StoreOk in flight carries a
//!   timestamp at most its replica's durable one: a replica reports and
//!   acknowledges only what survives its crash (read through the inspection
//!   path).

use std::sync::Arc;

use cmc_linearizability::specs::{Register, RegisterOp, RegisterRet};
use cmc_model::Property;
use cmc_world::core::helpers::Message;
use cmc_world::properties::consistency::{self, ClientHistory, ReplyMeaning};
use cmc_world::system::state::WorldState;
use cmc_world::{Core, World};

use crate::variants::{bug_variant, variant_spec};

use super::{servers, written_value, Abd, Durable, Msg, REPLY_REFUSED, SERVERS_DEFAULT};

/// The ABD core with planted bug `bug` (0: none), or `None` past [`super::BUGS`].
pub fn core(bug: u32) -> Option<Arc<dyn Core>> {
    bug_variant!(Abd, bug, [0, 1, 2, 3, 4, 5])
}

/// A World of `nodes` nodes (replicas first, then clients) running variant
/// `bug`, with `params` applied and the properties above. The client requests
/// go to nodes 3 and up unless `params` set `clients` (they must when `cfg1`
/// changes the number of replicas).
pub fn world(bug: u32, nodes: usize, params: &[&str]) -> Result<World, String> {
    let mut spec = variant_spec("abd", bug, core(bug), nodes)?;
    let clients: Vec<String> = (SERVERS_DEFAULT as usize..nodes)
        .map(|node| node.to_string())
        .collect();
    spec.set("clients", &clients.join(","))?;
    spec.set_all(params)?;
    let servers = servers(&spec.core_params) as usize;
    if servers >= nodes {
        return Err(format!(
            "abd: {servers} replicas leave no client in {nodes} nodes"
        ));
    }
    if let Some(replica) = spec
        .client_nodes
        .iter()
        .find(|node| (**node as usize) < servers)
    {
        return Err(format!(
            "abd: node {replica} is a replica, not a client (set clients=)"
        ));
    }
    Ok(equip(World::new(spec)))
}

/// `world` with `Linearizable` on the history's summary (the order between
/// requests out of the states' identity, see
/// `cmc_world::properties::consistency`) and `ReplyAfterFlush`: how every
/// World of ABD is checked, through this crate or the `cmc` command.
pub fn equip(world: World) -> World {
    consistency::linearizable_summarised(world, history())
        .with_property(Property::always("ReplyAfterFlush", reply_after_flush))
}

/// The register operation of client request `request`: a write of
/// [`written_value`]`(request)`, or a read.
pub fn operation(request: u32, _node: u8) -> RegisterOp {
    match written_value(request) {
        Some(value) => RegisterOp::Write(value.into()),
        None => RegisterOp::Read,
    }
}

/// What a client's reply to `op` means: a busy reply did nothing.
pub fn reply_meaning(op: &RegisterOp, reply: &[u8]) -> ReplyMeaning<RegisterRet> {
    match (op, reply) {
        (_, [REPLY_REFUSED, ..]) => ReplyMeaning::Refused,
        (RegisterOp::Write(_), _) => ReplyMeaning::Returned(RegisterRet::Ack),
        (RegisterOp::Read, [_, value, ..]) => {
            ReplyMeaning::Returned(RegisterRet::Value((*value).into()))
        }
        // A read answered without a value: a wrong answer, never linearizable.
        (RegisterOp::Read, _) => ReplyMeaning::Returned(RegisterRet::Ack),
    }
}

/// The client history as register operations ([`operation`], [`reply_meaning`]).
pub fn history() -> ClientHistory<Register> {
    ClientHistory::new(Register, operation, reply_meaning)
}

fn reply_after_flush(world: &World, state: &WorldState) -> bool {
    let inspect = world.inspect(state);
    let servers = servers(&world.spec().core_params) as usize;
    let durable: Vec<Durable> = (0..servers)
        .map(|node| {
            inspect
                .node(node)
                .durable_as()
                .expect("every node runs abd")
        })
        .collect();
    inspect.messages().all(|packet| {
        let Some(replica) = durable.get(packet.src as usize) else {
            return true;
        };
        match Msg::decode(packet.msg) {
            Some(Msg::QueryOk { ts, .. } | Msg::StoreOk { ts, .. }) => replica.ts >= ts,
            _ => true,
        }
    })
}
