//! The World's actions: one step of the environment, in one of five
//! families. Each family's variants are declared in its module under
//! [`crate::system::env`], next to their enabling and their effect, with
//! their kind, encoding, text, chart label and renaming (the crate-private
//! trait `Family`); this module only joins the families into [`Action`].

use cmc_model::{DecodeError, Decoder, Encode};

use crate::system::env::Env;
use crate::system::state::Budget;

pub use crate::system::env::clients::ClientAction;
pub use crate::system::env::crashes::CrashAction;
pub use crate::system::env::links::LinkAction;
pub use crate::system::env::messages::{NetAction, NetOp, Surplus};
pub use crate::system::env::node_events::NodeAction;

/// One step of the World.
///
/// Message actions carry the message's position in the state's network and
/// its bytes, so that the action's text names the message unambiguously and
/// `next_state` can check it is applied to the state it came from.
///
/// # Example
///
/// ```
/// use std::sync::Arc;
/// use cmc_model::Model;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::system::action::{Action, ClientAction};
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), 2)?;
/// spec.set_all(&["requests=1", "clients=0"])?;
/// let world = World::new(spec);
/// let mut states = Vec::new();
/// world.init_states(&mut states);
/// let mut actions = Vec::new();
/// world.actions(&states[0], &mut actions);
/// // No fault budget, nothing sent yet: only the client request is enabled.
/// let [client] = &actions[..] else { panic!("{actions:?}") };
/// assert!(matches!(client, Action::Client(ClientAction::Request { request: 0, node: 0, .. })));
/// assert_eq!(client.kind().0, "CLIENT");
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// DELIVER, DROP or DUP of a message in flight.
    Net(NetAction),
    /// An event of one node on its own: FLUSH, FIRE, WAKE, TICK, CHOOSE.
    Node(NodeAction),
    /// CRASH or RESTART of a node.
    Crash(CrashAction),
    /// A change of links: a pair, one direction, an isolated node, a split.
    Link(LinkAction),
    /// A client's request, its local failure or its retry.
    Client(ClientAction),
}

/// Applies `$body` to the family value inside `$action`, bound to `$family`.
macro_rules! each_family {
    ($action:expr, $family:ident => $body:expr) => {
        match $action {
            Action::Net($family) => $body,
            Action::Node($family) => $body,
            Action::Crash($family) => $body,
            Action::Link($family) => $body,
            Action::Client($family) => $body,
        }
    };
}

/// What a family of actions says about each of its actions. A family
/// implements it in its module under [`crate::system::env`], next to the
/// functions that list its enabled actions and carry them out.
pub(crate) trait Family: Copy + Into<Action> {
    /// The family's kinds, each with the fault budget that enables it
    /// (`None`: not a fault), as [`Family::kind`] names them.
    const KINDS: &'static [(&'static str, Option<Budget>)];

    /// The action's kind and whether it is a fault, taken from a budget.
    fn kind(&self) -> (&'static str, bool);

    /// The node whose state (core, clock, timers, persists, choices, ...)
    /// the action may change; `None` when it changes no node.
    /// [`Env::next_made`] changes no other node.
    fn changed_node(&self) -> Option<u8>;

    /// Writes the action's tag byte (one the other families do not use)
    /// and its fields.
    fn encode(&self, out: &mut Vec<u8>);

    /// The action of this family that `tag` opens, read from `decoder`;
    /// `Ok(None)` for a tag of another family.
    fn decode(tag: u8, decoder: &mut Decoder<'_>) -> Result<Option<Self>, DecodeError>;

    /// The action's text in traces (`CRASH n1`).
    fn text(&self, env: &Env) -> String;

    /// The action's place in a message sequence chart.
    fn chart(&self, env: &Env) -> ChartStep;

    /// The action with node `n` renamed `perm[n]`; `None` when it has no
    /// renaming (a message the core cannot rename into a payload).
    fn renamed(&self, env: &Env, perm: &[u32]) -> Option<Self>;

    /// The rank of the action in a round of the fair schedule of the
    /// quiescence check (lower first); `None` for an action the fair
    /// schedule never takes (a fault).
    fn fair_rank(&self) -> Option<u8> {
        None
    }

    /// One action of each kind, in [`Family::KINDS`] order (for the tests
    /// that every kind is listed, encoded and read back).
    #[cfg(test)]
    fn examples() -> Vec<Self>;
}

/// Where an action stands in a message sequence chart.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ChartStep {
    /// An arrow from `src` to `dst` (a delivered message).
    Arrow {
        /// The sending node.
        src: u8,
        /// The receiving node.
        dst: u8,
        /// The arrow's label.
        label: String,
    },
    /// A label on one node's line.
    Local {
        /// The node.
        node: u8,
        /// The label.
        label: String,
    },
}

impl Action {
    /// The message action, `None` for any other.
    pub fn net(&self) -> Option<&NetAction> {
        match self {
            Action::Net(net) => Some(net),
            _ => None,
        }
    }

    /// The node whose state (core, clock, timers, persists, choices, ...)
    /// the action may change: the destination of a delivered message, the
    /// node of a node action; `None` for a drop, a duplication or a change
    /// of links. [`Env::next_made`] changes no other node.
    pub(crate) fn changed_node(&self) -> Option<u8> {
        each_family!(self, family => family.changed_node())
    }

    /// The action's kind (`DELIVER`, `DROP`, `DUP`, `FLUSH`, `FIRE`, `WAKE`,
    /// `TICK`, `CHOOSE`, `CRASH`, `RESTART`, `PARTITION` (a cut pair),
    /// `HEAL`, `ONEWAY_CUT`, `ONEWAY_HEAL`, `ISOLATE`, `SPLIT`, `CLIENT`,
    /// `LOCAL_FAIL`, `RETRY`: [`kinds`]) and whether it is a fault, taken
    /// from a budget.
    pub fn kind(&self) -> (&'static str, bool) {
        each_family!(self, family => family.kind())
    }

    /// The action's text in traces.
    pub(crate) fn text(&self, env: &Env) -> String {
        each_family!(self, family => family.text(env))
    }

    /// The action's place in a message sequence chart.
    pub(crate) fn chart(&self, env: &Env) -> ChartStep {
        each_family!(self, family => family.chart(env))
    }

    /// The action with node `n` renamed `perm[n]` (a message action keeps
    /// its index: where the renamed message is is the renamed state's
    /// business); `None` when it has no renaming.
    pub(crate) fn renamed(&self, env: &Env, perm: &[u32]) -> Option<Action> {
        each_family!(self, family => family.renamed(env, perm).map(Into::into))
    }

    /// The action's rank in a round of the quiescence check's fair schedule;
    /// `None` for a fault.
    pub(crate) fn fair_rank(&self) -> Option<u8> {
        each_family!(self, family => family.fair_rank())
    }
}

/// Every environment action kind with the fault budget that enables it
/// (`None`: not a fault), as [`Action::kind`] names them, family by family.
pub fn kinds() -> impl Iterator<Item = (&'static str, Option<Budget>)> {
    [
        NetAction::KINDS,
        NodeAction::KINDS,
        CrashAction::KINDS,
        LinkAction::KINDS,
        ClientAction::KINDS,
    ]
    .into_iter()
    .flatten()
    .copied()
}

impl Encode for Action {
    fn encode(&self, out: &mut Vec<u8>) {
        each_family!(self, family => family.encode(out))
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let tag = u8::decode(decoder)?;
        if let Some(net) = NetAction::decode(tag, decoder)? {
            return Ok(net.into());
        }
        if let Some(node) = NodeAction::decode(tag, decoder)? {
            return Ok(node.into());
        }
        if let Some(crash) = CrashAction::decode(tag, decoder)? {
            return Ok(crash.into());
        }
        if let Some(link) = LinkAction::decode(tag, decoder)? {
            return Ok(link.into());
        }
        if let Some(client) = ClientAction::decode(tag, decoder)? {
            return Ok(client.into());
        }
        decoder.invalid(format!("world action tag {tag}"))
    }
}

/// Implements `From<$family> for Action` for each family.
macro_rules! family_into_action {
    ($($family:ident => $variant:ident),*) => {$(
        impl From<$family> for Action {
            fn from(action: $family) -> Action {
                Action::$variant(action)
            }
        }
    )*};
}
family_into_action!(NetAction => Net, NodeAction => Node, CrashAction => Crash,
    LinkAction => Link, ClientAction => Client);

#[cfg(test)]
mod tests {
    use super::*;

    /// One action of every kind, family by family.
    fn examples() -> Vec<Action> {
        let mut all: Vec<Action> = Vec::new();
        all.extend(NetAction::examples().into_iter().map(Action::from));
        all.extend(NodeAction::examples().into_iter().map(Action::from));
        all.extend(CrashAction::examples().into_iter().map(Action::from));
        all.extend(LinkAction::examples().into_iter().map(Action::from));
        all.extend(ClientAction::examples().into_iter().map(Action::from));
        all
    }

    #[test]
    fn every_action_kind_is_listed_once_with_its_budget() {
        let taken: Vec<(&str, bool)> = examples().iter().map(Action::kind).collect();
        let listed: Vec<(&str, bool)> = kinds()
            .map(|(name, budget)| (name, budget.is_some()))
            .collect();
        assert_eq!(taken, listed);
        let mut names: Vec<&str> = listed.iter().map(|(name, _)| *name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), listed.len(), "a kind is listed twice");
    }

    /// Every kind reads back as itself: no two families take one tag.
    #[test]
    fn actions_round_trip() {
        for action in examples() {
            assert_eq!(Action::decode_exact(&action.to_bytes()).unwrap(), action);
        }
        assert!(Action::decode_exact(&[42]).is_err());
    }
}
