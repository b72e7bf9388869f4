//! The environment: which actions are enabled and what they do.
//!
//! Non-omniscience is structural here: this module sees a node's core state
//! only as the byte slice it hands to [`crate::run::step::run`]. An action is
//! enabled only by something a core emitted (a message, a timer, a persist, a
//! wake-up) or by a fault budget, never by what a core's state contains.
//!
//! Capacities. Nothing a core emits is lost without a budget: every fixed
//! capacity is either explored faithfully or stops the run with a
//! capacity fault naming it, the node and the step.
//!
//! - The network bound (`net_bound=K`) keeps retransmission finite without
//!   losing messages. Copies of one message (unordered network) or of one
//!   run of equal consecutive messages on a link (FIFO) are counted exactly
//!   up to K; a send beyond K marks the packet as having a *surplus* (more
//!   than K copies, number untracked). Each DELIVER or DROP of a surplus
//!   packet is explored twice: surplus copies stay, or that was the last of
//!   them. This over-approximates the network, so no behaviour of the real
//!   network is missed; a path may deliver more copies than were sent, or
//!   fewer when more than K+1 were sent, always through steps marked
//!   `(surplus copy stays)` or `(last surplus copy)`. A FIFO link holds at most `link_bound` runs; a send that
//!   would start another is a capacity fault.
//! - [`NET_MAX`] packets in flight, [`PERSISTS_MAX`] unflushed persists per
//!   node, [`GHOST_MAX`] ghost entries, outputs and payloads beyond the ABI
//!   limits (a core that ignores `cmc_emit`'s error), a clock at
//!   `u32::MAX` and a timer deadline beyond it: capacity faults.
//!
//! Time. Each node has a clock, advanced by one per TICK (budget `ticks`).
//! Without a drift bound, clocks advance freely and only on live nodes.
//! With `skew=K`, the clocks of any two nodes never differ by more than K: a
//! TICK that would put a clock more than K ahead of the slowest is not
//! enabled, and a crashed node's clock keeps running (its TICK advances the
//! clock without a step), so a node that is down never holds time back.
//! A timer armed with SET_TIMER may fire at any moment; one armed with
//! SET_TIMER_AT may fire only once its node's clock has reached the
//! deadline (and at any moment after that).

pub(crate) mod clients;
pub(crate) mod crashes;
pub(crate) mod links;
pub(crate) mod messages;
pub(crate) mod node_events;
mod outputs;

use crate::core::abi::{Config, Event, EventKind, Outputs};
use crate::core::hex::hex;
use crate::run::step::StepFailure;
use crate::system::action::{Action, Surplus};
use crate::system::spec::WorldSpec;
use crate::system::state::{Budget, NodeState, Payload, WorldState};

pub(crate) use clients::open_requests;

/// Most unflushed persists a node may have.
pub const PERSISTS_MAX: usize = 16;
/// Most entries in the ghost history.
pub const GHOST_MAX: usize = 128;
/// Most packets in flight.
pub const NET_MAX: usize = 256;
/// Most nodes of a World with a `splits` budget: SPLIT enumerates the
/// 2^(nodes-1) - 1 ways to cut the nodes in two groups.
pub const SPLIT_NODES_MAX: usize = 12;

/// Why the environment could not carry out an action.
///
/// A core that ignores [`Outputs::send`]'s refusal of an oversized message
/// still stops the run, with a capacity fault:
#[derive(Debug, Clone)]
pub(crate) enum EnvFailure {
    /// The core's step failed.
    Step(StepFailure),
    /// A fixed capacity of the World was reached; the text names it.
    Capacity(String),
}

/// A step that failed, with the node and event it failed on.
#[derive(Debug, Clone)]
pub(crate) struct StepFault {
    /// The node whose step failed.
    pub(crate) node: u8,
    /// The event it was handling (boxed: faults are rare, results stay small).
    pub(crate) event: Box<Event>,
    /// What went wrong.
    pub(crate) failure: EnvFailure,
}

/// Sees every core step the environment runs (replay uses it to print them).
pub(crate) trait Observer {
    /// `node` handled `event` and emitted `out`.
    fn on_step(&mut self, node: u8, event: &Event, out: &Outputs);
}

/// Observes nothing (the search).
impl Observer for () {
    #[inline]
    fn on_step(&mut self, _node: u8, _event: &Event, _out: &Outputs) {}
}

/// How [`Env::next_made`] makes a successor.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Successor {
    /// Whole: a state like any other.
    Whole,
    /// Partial: the nodes the action leaves alone are the parent's, not
    /// copied (see [`WorldState::copy_for_step`]).
    Partial,
}

/// The environment of one World: its spec and the per-node configurations.
pub(crate) struct Env {
    /// The World's configuration.
    pub(crate) spec: WorldSpec,
    /// `configs[n]` is node `n`'s configuration.
    pub(crate) configs: Vec<Config>,
    /// The operations a CLIENT action may issue (`Action::Client::op`
    /// indexes it): the workload's, or one empty payload without one.
    pub(crate) operations: Vec<Payload>,
}

impl Env {
    /// The environment for `spec`.
    pub(crate) fn new(spec: WorldSpec) -> Env {
        let nodes = spec.nodes() as u32;
        let configs = (0..nodes)
            .map(|node| Config {
                node,
                nodes,
                params: spec.core_params,
            })
            .collect();
        let operations = match &spec.workload {
            Some(workload) => workload.operations(),
            None => vec![Payload::default()],
        };
        Env {
            spec,
            configs,
            operations,
        }
    }

    /// The single initial state: every node started from a zero durable part.
    pub(crate) fn init(&self, observer: &mut impl Observer) -> Result<WorldState, StepFault> {
        let mut state = WorldState::default();
        state.nodes = (0..self.spec.nodes())
            .map(|node| {
                let core = self.spec.core_of(node);
                NodeState {
                    core: vec![0; core.durable_size() + core.volatile_size()],
                    crashed: false,
                    clock: 0,
                    timers: 0,
                    wakes: 0,
                    persists: Vec::new(),
                    deadlines: Vec::new(),
                    choices: Vec::new(),
                }
            })
            .collect();
        state.budgets = self.spec.budgets;
        for node in 0..self.spec.nodes() as u8 {
            self.step(
                &mut state,
                node,
                EventKind::Start,
                0,
                0,
                &Payload::EMPTY,
                observer,
            )?;
        }
        Ok(state)
    }

    /// Appends the enabled actions of `state` to `out`, in a fixed order:
    /// messages in flight, each node's own events, crashes and restarts,
    /// link faults, clients (one module per family, each with its effect).
    pub(crate) fn actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        self.message_actions(state, out);
        self.node_event_actions(state, out);
        self.crash_actions(state, out);
        self.link_actions(state, out);
        self.client_actions(state, out);
    }

    /// [`Env::next_made`] making a whole successor (for tests).
    #[cfg(test)]
    pub(crate) fn next(
        &self,
        state: &WorldState,
        action: &Action,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        self.next_made(state, action, next, Successor::Whole, observer)
    }

    /// Makes in `next` the state `action` leads to from `state`, in the
    /// memory `next` holds (a successor made earlier, reused so that a warm
    /// search allocates nothing per successor): `Ok(true)` when the action
    /// is enabled, `Ok(false)` when it is not (`next` then holds some
    /// state), `Err` if a core step failed. With `made` partial, the nodes
    /// the action leaves alone are not copied (see
    /// [`WorldState::copy_for_step`]).
    pub(crate) fn next_made(
        &self,
        state: &WorldState,
        action: &Action,
        next: &mut WorldState,
        made: Successor,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        // A message action must name the packet at its index. Checked in
        // `state` before `next` is made: the action, written just before
        // (see `Env::actions`), is read while few stores wait ahead of its
        // own, and the packet is not read back from `next`'s fresh copy
        // (either read stalled the step, measured with `perf`).
        let named = match action {
            Action::Net(net) => match state.net.named(
                net.index as usize,
                (net.src, net.dst),
                &net.msg,
                net.surplus != Surplus::None,
            ) {
                Some(slot) => Some(slot),
                None => return Ok(false),
            },
            _ => None,
        };
        match made {
            Successor::Whole => next.clone_from(state),
            Successor::Partial => next.copy_for_step(state, action.changed_node()),
        }
        match action {
            Action::Net(net) => {
                let slot = named.expect("a message action names its packet");
                self.message_next(state, net, slot, next, observer)
            }
            Action::Node(node) => self.node_event_next(state, node, next, observer),
            Action::Crash(crash) => self.crash_next(state, crash, next, observer),
            Action::Link(link) => self.link_next(state, link, next, observer),
            Action::Client(client) => self.client_next(state, client, next, observer),
        }
    }

    /// The sending core's text for a message from `src`, or its hex bytes.
    pub(crate) fn describe_message(&self, src: u8, message: &[u8]) -> String {
        let node = src as usize;
        self.spec
            .core_of(node)
            .describe_message(&self.configs[node], message)
            .unwrap_or_else(|| hex(message))
    }
}

impl StepFault {
    fn capacity(node: u8, event: Event, why: String) -> StepFault {
        StepFault {
            node,
            event: Box::new(event),
            failure: EnvFailure::Capacity(why),
        }
    }
}

/// Whether `node` exists in `state` and is up.
#[inline]
fn live(state: &WorldState, node: u8) -> bool {
    (node as usize) < state.nodes.len() && !state.nodes[node as usize].crashed
}

/// The set bits of `mask`, lowest first (visiting only those: every node's
/// timers and wakes are enumerated for every state).
fn bits(mask: u32) -> impl Iterator<Item = u8> {
    let mut rest = mask;
    std::iter::from_fn(move || {
        let bit = rest.trailing_zeros() as u8;
        rest &= rest.checked_sub(1)?;
        Some(bit)
    })
}

fn take_bit(mask: &mut u32, bit: u8) -> bool {
    let set = bit < 32 && *mask & (1 << bit) != 0;
    if set {
        *mask &= !(1 << bit);
    }
    set
}

/// Spends one unit of `kind`; `false` (nothing spent) if the budget is exhausted.
fn spend(state: &mut WorldState, kind: Budget) -> bool {
    let budget = &mut state.budgets[kind as usize];
    let available = *budget > 0;
    *budget = budget.saturating_sub(1);
    available
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::core::abi::{CoreError, PAYLOAD_MAX};
    use crate::example_cores::reqack::ReqAck;
    use crate::run::step::StepFailure;
    use crate::system::action::NodeAction;
    use crate::test_support::StepCore;

    /// Nothing was sent and no fault budget is set: only the client
    /// request is enabled, and it issues request 0.
    #[test]
    fn the_first_step_of_a_world_with_one_request_is_the_request() {
        let spec = WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(1);
        let env = Env::new(spec.build().unwrap());
        let init = env.init(&mut ()).expect("every node starts");
        let mut enabled = Vec::new();
        env.actions(&init, &mut enabled);
        assert_eq!(enabled.len(), 1, "{enabled:?}");
        let mut next = init.clone();
        assert!(env.next(&init, &enabled[0], &mut next, &mut ()).unwrap());
        assert_eq!(next.issued, 1);
    }

    /// Records which node handled which kind of event.
    #[derive(Default)]
    struct Steps(Vec<(u8, Option<EventKind>)>);
    impl Observer for Steps {
        fn on_step(&mut self, node: u8, event: &Event, _: &Outputs) {
            self.0.push((node, event.kind()));
        }
    }

    #[test]
    fn an_observer_sees_every_start() {
        let env = Env::new(
            WorldSpec::builder(Arc::new(ReqAck::default()), 2)
                .build()
                .unwrap(),
        );
        let mut steps = Steps::default();
        env.init(&mut steps).expect("every node starts");
        let start = Some(EventKind::Start);
        assert_eq!(steps.0, [(0, start), (1, start)]);
    }

    #[test]
    fn a_core_that_ignores_a_refused_send_stops_the_run_with_a_capacity_fault() {
        // Ignores the refusal of an oversized message.
        let careless = StepCore::<u8>::new("careless", |_, _, _, out| {
            let _ = out.send(0, &[0; PAYLOAD_MAX + 1]);
            Ok(())
        });
        let env = Env::new(WorldSpec::builder(Arc::new(careless), 1).build().unwrap());
        let fault = env
            .init(&mut ())
            .expect_err("the first step already overflows");
        assert!(
            matches!(fault.failure, EnvFailure::Capacity(_)),
            "{:?}",
            fault.failure
        );
    }

    #[test]
    fn a_failed_step_names_its_node_and_event() {
        // Fails every client request with its error code 7.
        let refuse = StepCore::<u8>::new("refuse", |_, _, event, _| match event.kind() {
            Some(EventKind::Client) => Err(CoreError::Code(7)),
            _ => Ok(()),
        });
        let env = Env::new(
            WorldSpec::builder(Arc::new(refuse), 2)
                .requests(1)
                .build()
                .unwrap(),
        );
        let init = env.init(&mut ()).expect("the START steps succeed");
        let mut enabled = Vec::new();
        env.actions(&init, &mut enabled);
        let fault = env
            .next(&init, &enabled[0], &mut init.clone(), &mut ())
            .unwrap_err();
        assert_eq!(
            (fault.node, fault.event.kind()),
            (0, Some(EventKind::Client))
        );
        let code_7 = EnvFailure::Step(StepFailure::Error(CoreError::Code(7)));
        assert!(
            matches!(
                fault.failure,
                EnvFailure::Step(StepFailure::Error(CoreError::Code(7)))
            ),
            "{code_7:?}"
        );
    }

    #[test]
    fn bits_are_the_set_ones_lowest_first() {
        assert_eq!(bits(0).count(), 0);
        assert_eq!(bits(0b1010_0001).collect::<Vec<_>>(), [0, 5, 7]);
        assert_eq!(bits(1 << 31).collect::<Vec<_>>(), [31]);
        assert_eq!(
            bits(u32::MAX).collect::<Vec<_>>(),
            (0..32).collect::<Vec<_>>()
        );
    }

    #[test]
    fn a_clock_at_its_maximum_is_a_capacity_fault() {
        let mut spec =
            WorldSpec::new(Arc::new(StepCore::<u8>::idle("idle").symmetric()), 1).unwrap();
        spec.set("ticks", "1").unwrap();
        let env = Env::new(spec);
        let mut state = env.init(&mut ()).unwrap();
        state.nodes[0].clock = u32::MAX - 1;
        let tick = Action::Node(NodeAction::Tick { node: 0 });
        let mut next = WorldState::default();
        assert!(env.next(&state, &tick, &mut next, &mut ()).unwrap());
        assert_eq!(next.nodes[0].clock, u32::MAX);
        state.nodes[0].clock = u32::MAX;
        let fault = env.next(&state, &tick, &mut next, &mut ()).unwrap_err();
        assert!(
            matches!(&fault.failure, EnvFailure::Capacity(why) if why == "the clock of n0 is at its maximum, 4294967295"),
            "{fault:?}"
        );
    }

    /// A partial successor holds the stepped node only; an action naming a
    /// node the state does not have is refused, not a panic, whichever way
    /// the successor is made.
    #[test]
    fn a_partial_successor_holds_the_stepped_node_and_refuses_a_missing_one() {
        let mut spec =
            WorldSpec::new(Arc::new(StepCore::<u8>::idle("idle").symmetric()), 2).unwrap();
        spec.set("ticks", "1").unwrap();
        let env = Env::new(spec);
        let mut state = env.init(&mut ()).unwrap();
        state.nodes[1].clock = 7;
        let mut next = WorldState::default();
        let tick = Action::Node(NodeAction::Tick { node: 0 });
        let made = env.next_made(&state, &tick, &mut next, Successor::Partial, &mut ());
        assert!(made.unwrap());
        assert!(!next.is_whole());
        assert_eq!(next.nodes[0].clock, 1);
        next.mark_step_successor(Some(0));
        next.complete_from(&state);
        assert!(next.is_whole());
        assert_eq!((next.nodes[0].clock, next.nodes[1].clock), (1, 7));
        for made in [Successor::Partial, Successor::Whole] {
            let missing = Action::Node(NodeAction::Tick { node: 5 });
            let refused = env.next_made(&state, &missing, &mut next, made, &mut ());
            assert!(!refused.unwrap(), "{made:?}");
        }
    }
}
