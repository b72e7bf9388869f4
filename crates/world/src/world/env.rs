//! The environment: which actions are enabled and what they do.
//!
//! Non-omniscience is structural here: this module sees a node's core state
//! only as the byte slice it hands to [`crate::run::step::run`]. An action is
//! enabled only by something a core emitted (a message, a timer, a persist, a
//! wake-up) or by a fault budget, never by what a core's state contains.
//!
//! Capacities. Nothing a core emits is lost without a budget: every fixed
//! capacity is either explored faithfully or stops the run with a
//! [`EnvFailure::Capacity`] fault naming it, the node and the step.
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

use std::cell::RefCell;

use crate::core::abi::{
    timer_deadline, Config, Event, EventKind, OutputKind, Outputs, OUTPUTS_MAX, PAYLOAD_MAX,
    TIMERS_MAX,
};
use crate::run::step::{self, StepFailure};
use crate::world::action::{Action, NetOp, Surplus};
use crate::world::spec::{NetSemantics, WorldSpec};
use crate::world::state::{
    Budget, Choice, GhostEntry, GhostKind, Network, NodeState, Payload, Persist, WorldState,
};

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
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::core::abi::{Config, CoreError, Event, Outputs, PAYLOAD_MAX};
/// use cmc_world::world::env::{Env, EnvFailure};
/// use cmc_world::{TypedCore, WorldSpec};
///
/// struct Careless;
/// impl TypedCore for Careless {
///     type Durable = u32;
///     type Volatile = u32;
///     fn name(&self) -> &str { "careless" }
///     fn step(&self, _: &Config, _: &u32, _: &mut u32, _: &Event, out: &mut Outputs)
///         -> Result<(), CoreError> {
///         let _ = out.send(0, &[0; PAYLOAD_MAX + 1]); // refused, error ignored
///         Ok(())
///     }
/// }
/// let env = Env::new(WorldSpec::builder(Arc::new(Careless), 1).build()?);
/// let fault = env.init(&mut ()).expect_err("the first step already overflows");
/// assert!(matches!(fault.failure, EnvFailure::Capacity(_)), "{:?}", fault.failure);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Debug, Clone)]
pub enum EnvFailure {
    /// The core's step failed.
    Step(StepFailure),
    /// A fixed capacity of the World was reached; the text names it.
    Capacity(String),
}

/// A step that failed, with the node and event it failed on.
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::run::step::StepFailure;
/// use cmc_world::world::env::{Env, EnvFailure};
/// use cmc_world::{TypedCore, WorldSpec};
///
/// /// Fails every client request with its error code 7.
/// struct Refuse;
/// impl TypedCore for Refuse {
///     type Durable = u32;
///     type Volatile = u32;
///     fn name(&self) -> &str { "refuse" }
///     fn step(&self, _: &Config, _: &u32, _: &mut u32, event: &Event, _: &mut Outputs)
///         -> Result<(), CoreError> {
///         if event.kind() == Some(EventKind::Client) { Err(CoreError::Code(7)) } else { Ok(()) }
///     }
/// }
/// let env = Env::new(WorldSpec::builder(Arc::new(Refuse), 2).requests(1).build()?);
/// let init = env.init(&mut ()).expect("the INIT steps succeed");
/// let mut enabled = Vec::new();
/// env.actions(&init, &mut enabled);
/// let fault = env.next(&init, &enabled[0], &mut init.clone(), &mut ()).unwrap_err();
/// assert_eq!((fault.node, fault.event.kind()), (0, Some(EventKind::Client)));
/// assert!(matches!(fault.failure, EnvFailure::Step(StepFailure::Error(CoreError::Code(7)))));
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
#[derive(Debug, Clone)]
pub struct StepFault {
    /// The node whose step failed.
    pub node: u8,
    /// The event it was handling (boxed: faults are rare, results stay small).
    pub event: Box<Event>,
    /// What went wrong.
    pub failure: EnvFailure,
}

/// Sees every core step the environment runs (replay uses it to print them).
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::core::abi::{Event, EventKind, Outputs};
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::env::{Env, Observer};
/// use cmc_world::WorldSpec;
///
/// /// Records which node handled which kind of event.
/// #[derive(Default)]
/// struct Steps(Vec<(u8, Option<EventKind>)>);
/// impl Observer for Steps {
///     fn on_step(&mut self, node: u8, event: &Event, _: &Outputs) {
///         self.0.push((node, event.kind()));
///     }
/// }
/// let env = Env::new(WorldSpec::builder(Arc::new(ReqAck::default()), 2).build()?);
/// let mut steps = Steps::default();
/// env.init(&mut steps).expect("every node starts");
/// assert_eq!(steps.0, [(0, Some(EventKind::Start)), (1, Some(EventKind::Start))]);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
pub trait Observer {
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
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::cores::reqack::ReqAck;
/// use cmc_world::world::env::Env;
/// use cmc_world::WorldSpec;
///
/// let env = Env::new(WorldSpec::builder(Arc::new(ReqAck::default()), 2).requests(1).build()?);
/// let init = env.init(&mut ()).expect("every node starts");
/// let mut enabled = Vec::new();
/// env.actions(&init, &mut enabled);
/// // Nothing was sent and no fault budget is set: only the client request.
/// assert_eq!(enabled.len(), 1, "{enabled:?}");
/// let mut next = init.clone();
/// let enabled_now = env.next(&init, &enabled[0], &mut next, &mut ()).expect("the step succeeds");
/// assert!(enabled_now);
/// assert_eq!(next.issued, 1);
/// # Ok::<(), cmc_world::world::spec::SpecError>(())
/// ```
pub struct Env {
    /// The World's configuration.
    pub spec: WorldSpec,
    /// `configs[n]` is node `n`'s configuration.
    pub configs: Vec<Config>,
    /// The operations a CLIENT action may issue (`Action::Client::op`
    /// indexes it): the workload's, or one empty payload without one.
    pub operations: Vec<Payload>,
}

impl Env {
    /// The environment for `spec`.
    pub fn new(spec: WorldSpec) -> Env {
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
    pub fn init(&self, observer: &mut impl Observer) -> Result<WorldState, StepFault> {
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

    /// Appends the enabled actions of `state` to `out`, in a fixed order.
    pub fn actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        let fifo = self.spec.net == NetSemantics::Fifo;
        let mut link_before = None;
        for (index, packet) in state.net.refs().enumerate() {
            let link = (packet.src, packet.dst);
            let head = !fifo || link_before != Some(link);
            link_before = Some(link);
            if !head {
                continue;
            }
            let outcomes: &[Surplus] = if packet.surplus {
                &[Surplus::Ends, Surplus::Stays]
            } else {
                &[Surplus::None]
            };
            // Each action's payload written in its place, never copied
            // from a payload just written (see `Network::refs`).
            let mut net = |op| {
                for &surplus in outcomes {
                    out.push(Action::Net {
                        op,
                        index: index as u16,
                        src: packet.src,
                        dst: packet.dst,
                        msg: Payload::EMPTY,
                        surplus,
                    });
                    if let Some(Action::Net { msg, .. }) = out.last_mut() {
                        msg.set_bytes(packet.msg);
                    }
                }
            };
            let to_crashed = state.nodes[packet.dst as usize].crashed;
            let duplicating = self.spec.net == NetSemantics::Duplicating;
            if state.link_up(packet.src, packet.dst) && !(to_crashed && duplicating) {
                net(NetOp::Deliver);
            }
            if state.budget(Budget::Drops) > 0 {
                net(NetOp::Drop);
            }
            // A copy more of a surplus packet changes nothing.
            if state.budget(Budget::Dups) > 0 && !duplicating && !packet.surplus {
                net(NetOp::Dup);
            }
        }
        for (node, ns) in state.nodes.iter().enumerate() {
            let node = node as u8;
            if ns.crashed {
                if self.spec.skew.is_some() && self.may_tick(state, node) {
                    out.push(Action::Tick { node });
                }
                continue;
            }
            if !ns.persists.is_empty() {
                out.push(Action::Flush { node });
            }
            out.extend(
                bits(ns.timers)
                    .filter(|&timer| ns.timer_due(timer))
                    .map(|timer| Action::Fire { node, timer }),
            );
            out.extend(bits(ns.wakes).map(|wake| Action::Wake { node, wake }));
            for choice in &ns.choices {
                out.extend((0..choice.k).map(|value| Action::Choose {
                    node,
                    choice: choice.id,
                    value,
                }));
            }
            if self.may_tick(state, node) {
                out.push(Action::Tick { node });
            }
        }
        for (node, ns) in state.nodes.iter().enumerate() {
            let node = node as u8;
            let crashable = self.spec.crash_nodes.contains(&node);
            if !ns.crashed && crashable && state.budget(Budget::Crashes) > 0 {
                out.push(Action::Crash { node });
            }
            if ns.crashed && state.budget(Budget::Restarts) > 0 {
                out.push(Action::Restart { node });
            }
        }
        if state.budget(Budget::Partitions) > 0 {
            let nodes = state.nodes.len() as u8;
            for a in 0..nodes {
                for b in a + 1..nodes {
                    out.push(Action::Links {
                        a,
                        b,
                        cut: state.pair_up(a, b),
                    });
                }
            }
        }
        self.partition_actions(state, out);
        if state.issued < self.spec.requests {
            for &node in self.spec.request_nodes(state.issued) {
                if !state.nodes[node as usize].crashed {
                    out.extend((0..self.operations.len()).map(|op| Action::Client {
                        request: state.issued,
                        node,
                        op: op as u16,
                    }));
                }
            }
        }
        if state.budget(Budget::LocalFails) > 0 {
            for (request, node) in self.failable_requests(state) {
                if !state.nodes[node as usize].crashed {
                    out.push(Action::LocalFail {
                        request: request as u8,
                        node,
                    });
                }
            }
        }
        if state.budget(Budget::Retries) > 0 {
            for (request, _) in open_requests(state) {
                for &node in &self.spec.client_nodes {
                    if !state.nodes[node as usize].crashed {
                        out.push(Action::Retry {
                            request: request as u8,
                            node,
                        });
                    }
                }
            }
        }
    }

    /// The one-way cuts and heals, isolations and splits enabled by their budgets.
    fn partition_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        let nodes = state.nodes.len() as u8;
        if state.budget(Budget::OneWayCuts) > 0 {
            for src in 0..nodes {
                for dst in (0..nodes).filter(|&dst| dst != src) {
                    let cut = state.link_up(src, dst);
                    out.push(Action::OneWay { src, dst, cut });
                }
            }
        }
        if state.budget(Budget::Isolations) > 0 {
            for node in 0..nodes {
                if crossing(nodes, 1 << node).any(|(src, dst)| state.link_up(src, dst)) {
                    out.push(Action::Isolate { node });
                }
            }
        }
        if state.budget(Budget::Splits) > 0 && nodes as usize <= SPLIT_NODES_MAX {
            for rest in 0..(1u64 << (nodes - 1)) - 1 {
                let group = 1 | rest << 1;
                if crossing(nodes, group).any(|(src, dst)| state.link_up(src, dst)) {
                    out.push(Action::Split { group });
                }
            }
        }
    }

    /// The requests LOCAL_FAIL may fail, with the node that holds each:
    /// the open ones and, with `local_fail_after_reply`, the replied ones
    /// not failed yet (at the node that replied).
    fn failable_requests(&self, state: &WorldState) -> Vec<(u32, u8)> {
        let mut failable: Vec<(u32, u8)> = open_requests(state).collect();
        let open = failable.len();
        if self.spec.local_fail_after_reply {
            for entry in &state.ghost {
                let failed = || {
                    state.ghost.iter().any(|other| {
                        other.request == entry.request && other.kind == GhostKind::LocalFail
                    })
                };
                let first_reply = || {
                    !failable
                        .iter()
                        .any(|(request, _)| *request == entry.request)
                };
                if entry.kind == GhostKind::Reply && !failed() && first_reply() {
                    failable.push((entry.request, entry.node));
                }
            }
            // By request, not by reply order: the same for a ghost grouped by request.
            failable[open..].sort_unstable();
        }
        failable
    }

    /// Makes in `next` the state `action` leads to from `state`, in the
    /// memory `next` holds (a successor made earlier, reused so that a warm
    /// search allocates nothing per successor): `Ok(true)` when the action
    /// is enabled, `Ok(false)` when it is not (`next` then holds some
    /// state), `Err` if a core step failed.
    pub fn next(
        &self,
        state: &WorldState,
        action: &Action,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        self.next_made(state, action, next, Successor::Whole, observer)
    }

    /// [`Env::next`] making a *partial* successor when `made` says so: the
    /// nodes the action leaves alone are not copied (see
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
        let named = match *action {
            Action::Net {
                index,
                src,
                dst,
                ref msg,
                surplus,
                ..
            } => match state
                .net
                .named(index as usize, (src, dst), msg, surplus != Surplus::None)
            {
                Some(slot) => Some(slot),
                None => return Ok(false),
            },
            _ => None,
        };
        match made {
            Successor::Whole => next.clone_from(state),
            Successor::Partial => next.copy_for_step(state, action.changed_node()),
        }
        let live =
            |node: u8| (node as usize) < state.nodes.len() && !state.nodes[node as usize].crashed;
        match *action {
            Action::Net {
                op,
                src,
                dst,
                msg,
                surplus,
                ..
            } => {
                // The copy's packets are where the state's are.
                let slot = named.expect("a message action names its packet");
                match op {
                    NetOp::Deliver => {
                        if self.spec.net != NetSemantics::Duplicating {
                            next.net.take_copy(slot, surplus);
                        }
                        if live(dst) {
                            self.step(next, dst, EventKind::Recv, src as u32, 0, &msg, observer)?;
                        }
                    }
                    NetOp::Drop => {
                        if !spend(next, Budget::Drops) {
                            return Ok(false);
                        }
                        next.net.take_copy(slot, surplus);
                    }
                    NetOp::Dup => {
                        if surplus != Surplus::None || !spend(next, Budget::Dups) {
                            return Ok(false);
                        }
                        next.net.add_copy(slot, u8::MAX);
                    }
                }
            }
            Action::Flush { node } => {
                if !live(node) || next.nodes[node as usize].persists.is_empty() {
                    return Ok(false);
                }
                let persist = next.nodes[node as usize].persists.remove(0);
                let bytes = persist.bytes.as_bytes();
                let offset = persist.offset as usize;
                next.nodes[node as usize].core[offset..offset + bytes.len()].copy_from_slice(bytes);
                self.step(
                    next,
                    node,
                    EventKind::Flushed,
                    0,
                    persist.offset,
                    &persist.bytes,
                    observer,
                )?;
            }
            Action::Fire { node, timer } => {
                if !live(node) || !state.nodes[node as usize].timer_due(timer) {
                    return Ok(false);
                }
                let ns = &mut next.nodes[node as usize];
                if !take_bit(&mut ns.timers, timer) {
                    return Ok(false);
                }
                ns.set_deadline(timer, None);
                self.step(
                    next,
                    node,
                    EventKind::Timer,
                    0,
                    timer as u32,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            Action::Wake { node, wake } => {
                if !live(node) || !take_bit(&mut next.nodes[node as usize].wakes, wake) {
                    return Ok(false);
                }
                self.step(
                    next,
                    node,
                    EventKind::Wake,
                    0,
                    wake as u32,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            Action::Tick { node } => {
                let exists = (node as usize) < state.nodes.len();
                if !exists || !(live(node) || self.spec.skew.is_some()) {
                    return Ok(false);
                }
                if !self.may_tick(state, node) || !spend(next, Budget::Ticks) {
                    return Ok(false);
                }
                let clock = &mut next.nodes[node as usize].clock;
                *clock = clock.checked_add(1).ok_or_else(|| {
                    let event = Event::new(EventKind::Tick, 0, 0, &[], u32::MAX as u64);
                    StepFault::capacity(
                        node,
                        event,
                        format!("the clock of n{node} is at its maximum, {}", u32::MAX),
                    )
                })?;
                if live(node) {
                    self.step(next, node, EventKind::Tick, 0, 0, &Payload::EMPTY, observer)?;
                }
            }
            Action::Crash { node } => {
                if !live(node) || !self.spec.crash_nodes.contains(&node) {
                    return Ok(false);
                }
                if !spend(next, Budget::Crashes) {
                    return Ok(false);
                }
                for (request, _) in open_requests(state).filter(|(_, at)| *at == node) {
                    let request = request as u8;
                    if let Err(at) = next.lost_in_crash.binary_search(&request) {
                        next.lost_in_crash.insert(at, request);
                    }
                }
                let durable = self.spec.core_of(node as usize).durable_size();
                let ns = &mut next.nodes[node as usize];
                ns.core[durable..].fill(0);
                ns.crashed = true;
                ns.timers = 0;
                ns.deadlines.clear();
                ns.wakes = 0;
                ns.persists.clear();
                ns.choices.clear();
            }
            Action::Restart { node } => {
                if (node as usize) >= state.nodes.len() || !state.nodes[node as usize].crashed {
                    return Ok(false);
                }
                if !spend(next, Budget::Restarts) {
                    return Ok(false);
                }
                next.nodes[node as usize].crashed = false;
                self.step(
                    next,
                    node,
                    EventKind::Start,
                    0,
                    0,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            Action::Links { a, b, cut } => {
                if b as usize >= state.nodes.len() || a >= b || state.pair_up(a, b) != cut {
                    return Ok(false);
                }
                if !spend(next, Budget::Partitions) {
                    return Ok(false);
                }
                next.set_cut(a, b, cut);
                next.set_cut(b, a, cut);
            }
            Action::Client { request, node, op } => {
                let Some(payload) = self.operations.get(op as usize).copied() else {
                    return Ok(false);
                };
                if request != state.issued
                    || request >= self.spec.requests
                    || !live(node)
                    || !self.spec.request_nodes(request).contains(&node)
                {
                    return Ok(false);
                }
                next.issued += 1;
                let sent = (GhostKind::Invoke, request, node, payload);
                self.send_request(state, next, sent, observer)?;
            }
            Action::LocalFail { request, node } => {
                let holds = || {
                    self.failable_requests(state)
                        .contains(&(request as u32, node))
                };
                if !live(node) || !holds() {
                    return Ok(false);
                }
                if !spend(next, Budget::LocalFails) {
                    return Ok(false);
                }
                push_ghost(
                    next,
                    GhostKind::LocalFail,
                    request as u32,
                    node,
                    Payload::default(),
                )
                .map_err(|why| client_fault(state, node, EventKind::LocalFail, request, why))?;
                self.step(
                    next,
                    node,
                    EventKind::LocalFail,
                    0,
                    request as u32,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            Action::Choose {
                node,
                choice,
                value,
            } => {
                if !live(node) {
                    return Ok(false);
                }
                let choices = &mut next.nodes[node as usize].choices;
                let Some(at) = choices.iter().position(|c| c.id == choice && value < c.k) else {
                    return Ok(false);
                };
                choices.remove(at);
                self.step(
                    next,
                    node,
                    EventKind::Choice,
                    0,
                    choice as u32,
                    &Payload::new(&[value]).expect("one byte"),
                    observer,
                )?;
            }
            Action::OneWay { src, dst, cut } => {
                let nodes = state.nodes.len();
                if src == dst || src as usize >= nodes || dst as usize >= nodes {
                    return Ok(false);
                }
                if state.link_up(src, dst) != cut || !spend(next, Budget::OneWayCuts) {
                    return Ok(false);
                }
                next.set_cut(src, dst, cut);
            }
            Action::Isolate { node } => {
                if node as usize >= state.nodes.len() {
                    return Ok(false);
                }
                if !cut_crossing(next, 1 << node) || !spend(next, Budget::Isolations) {
                    return Ok(false);
                }
            }
            Action::Split { group } => {
                let nodes = state.nodes.len();
                let valid = nodes <= SPLIT_NODES_MAX
                    && group & 1 == 1
                    && group < (1 << nodes) - 1
                    && group >> nodes == 0;
                if !valid || !cut_crossing(next, group) || !spend(next, Budget::Splits) {
                    return Ok(false);
                }
            }
            Action::Retry { request, node } => {
                let open = open_requests(state).any(|(open, _)| open == request as u32);
                if !open || !live(node) || !self.spec.client_nodes.contains(&node) {
                    return Ok(false);
                }
                if !spend(next, Budget::Retries) {
                    return Ok(false);
                }
                let payload = state
                    .ghost
                    .iter()
                    .find(|entry| {
                        entry.kind == GhostKind::Invoke && entry.request == request as u32
                    })
                    .map(|entry| entry.payload)
                    .unwrap_or_default();
                next.lost_in_crash.retain(|lost| *lost != request);
                let sent = (GhostKind::Retry, request, node, payload);
                self.send_request(state, next, sent, observer)?;
            }
        }
        Ok(true)
    }

    /// A client sends `request` with its operation `payload` to `node`, for
    /// the first time (`GhostKind::Invoke`) or again (`GhostKind::Retry`):
    /// the ghost history records it and the node's core gets `CLIENT`.
    /// `state` is the state before the action, for a fault's report.
    fn send_request(
        &self,
        state: &WorldState,
        next: &mut WorldState,
        (kind, request, node, payload): (GhostKind, u8, u8, Payload),
        observer: &mut impl Observer,
    ) -> Result<(), StepFault> {
        push_ghost(next, kind, request as u32, node, payload)
            .map_err(|why| client_fault(state, node, EventKind::Client, request, why))?;
        self.step(
            next,
            node,
            EventKind::Client,
            0,
            request as u32,
            &payload,
            observer,
        )
    }

    /// Delivers one event to `node` and carries out its outputs.
    #[allow(clippy::too_many_arguments)]
    fn step(
        &self,
        state: &mut WorldState,
        node: u8,
        kind: EventKind,
        src: u32,
        id: u32,
        payload: &Payload,
        observer: &mut impl Observer,
    ) -> Result<(), StepFault> {
        let event = payload.event(kind, src, id, state.nodes[node as usize].clock as u64);
        let fault = |failure| StepFault {
            node,
            event: Box::new(event),
            failure,
        };
        let core = self.spec.core_of(node as usize);
        with_outputs(|out| {
            step::run(
                core,
                &self.configs[node as usize],
                &mut state.nodes[node as usize].core,
                &event,
                out,
                self.spec.check_determinism,
            )
            .map_err(|failure| fault(EnvFailure::Step(failure)))?;
            observer.on_step(node, &event, out);
            self.apply(state, node, out).map_err(fault)
        })
    }

    /// Carries out validated outputs of `node`, in order.
    fn apply(&self, state: &mut WorldState, node: u8, out: &Outputs) -> Result<(), EnvFailure> {
        if out.reserved != 0 {
            return Err(EnvFailure::Capacity(format!(
                "OUTPUTS_MAX/PAYLOAD_MAX: the step tried to emit {} output(s) beyond \
                 {OUTPUTS_MAX} per step or with a payload over {PAYLOAD_MAX} bytes \
                 (refused by the emit helpers, whose error the core ignored)",
                out.reserved
            )));
        }
        let durable_size = self.spec.core_of(node as usize).durable_size();
        for (index, item) in out.as_slice().iter().enumerate() {
            let kind = OutputKind::from_raw(item.kind).expect("validated by step::run");
            let payload = || Payload::new(item.payload()).expect("validated by step::run");
            let bad = |why: String| {
                EnvFailure::Step(StepFailure::BadOutput(format!(
                    "output {index} ({}): {why}",
                    kind.name()
                )))
            };
            let full = |why: String| {
                EnvFailure::Capacity(format!("output {index} ({}): {why}", kind.name()))
            };
            let id_ok = || {
                if item.id < TIMERS_MAX {
                    Ok(item.id as u8)
                } else {
                    Err(bad(format!("id {} is not below {TIMERS_MAX}", item.id)))
                }
            };
            let ns = &mut state.nodes[node as usize];
            match kind {
                OutputKind::Send => {
                    if item.dst as usize >= state.nodes.len() {
                        return Err(bad(format!(
                            "destination node {} does not exist in a {}-node world",
                            item.dst,
                            state.nodes.len()
                        )));
                    }
                    let core = self.spec.core_of(node as usize);
                    if !core.may_send(&self.configs[node as usize], item.dst) {
                        return Err(bad(format!(
                            "the core's may_send does not allow n{node} to send to n{}",
                            item.dst
                        )));
                    }
                    let link = (node, item.dst as u8);
                    self.send(&mut state.net, link, item.payload())
                        .map_err(full)?;
                }
                OutputKind::SetTimer => ns.timers |= 1 << id_ok()?,
                OutputKind::SetTimerAt => {
                    let timer = id_ok()?;
                    let deadline = timer_deadline(item).ok_or_else(|| {
                        bad(format!(
                            "the deadline must be 8 little-endian bytes, not {}",
                            item.len
                        ))
                    })?;
                    let at = u32::try_from(deadline).map_err(|_| {
                        full(format!(
                            "the deadline {deadline} of timer {timer} is beyond the largest \
                             clock value, {}",
                            u32::MAX
                        ))
                    })?;
                    ns.timers |= 1 << timer;
                    ns.set_deadline(timer, Some(at));
                }
                OutputKind::CancelTimer => {
                    let timer = id_ok()?;
                    ns.timers &= !(1 << timer);
                    ns.set_deadline(timer, None);
                }
                OutputKind::Wake => ns.wakes |= 1 << id_ok()?,
                OutputKind::Persist => {
                    if item.id as usize + item.len as usize > durable_size {
                        return Err(bad(format!(
                            "{} byte(s) at offset {} overrun the {durable_size}-byte durable part",
                            item.len, item.id
                        )));
                    }
                    if ns.persists.len() >= PERSISTS_MAX {
                        return Err(full(format!(
                            "PERSISTS_MAX: n{node} already has {PERSISTS_MAX} unflushed persists"
                        )));
                    }
                    ns.persists.push(Persist {
                        offset: item.id,
                        bytes: payload(),
                    });
                }
                OutputKind::Reply => {
                    push_ghost(state, GhostKind::Reply, item.id, node, payload()).map_err(full)?
                }
                OutputKind::Choose => {
                    let id = id_ok()?;
                    let k = match item.payload() {
                        [k] if *k > 0 => *k,
                        _ => {
                            return Err(bad(
                                "a choice carries one byte, its number of values k (1 to 255)"
                                    .into(),
                            ))
                        }
                    };
                    let choices = &mut ns.choices;
                    match choices.binary_search_by_key(&id, |c| c.id) {
                        Ok(at) => choices[at].k = k,
                        Err(at) => choices.insert(at, Choice { id, k }),
                    }
                }
            }
        }
        Ok(())
    }

    /// Puts `packet` in flight: a copy more of an equal packet (unordered:
    /// anywhere on its link; FIFO: the link's last run), counted up to
    /// `net_bound` and beyond that a surplus, or a new packet.
    fn send(&self, net: &mut Network, link: (u8, u8), msg: &[u8]) -> Result<(), String> {
        let bound = self.spec.net_bound;
        let slot = match self.spec.net {
            NetSemantics::Fifo => {
                let (runs, end, last_same) = net.link_span(link, msg);
                if let Some(last) = last_same {
                    net.add_copy(last, bound);
                    return Ok(());
                }
                let most = self.spec.link_bound;
                if runs >= most as usize {
                    return Err(format!(
                        "link_bound={most}: the FIFO link n{}->n{} already holds {most} run(s) \
                         of different messages and this SEND would start another (raise link_bound)",
                        link.0, link.1
                    ));
                }
                end
            }
            NetSemantics::Unordered | NetSemantics::Duplicating => match net.find(link, msg) {
                Ok(found) => {
                    if self.spec.net == NetSemantics::Unordered {
                        net.add_copy(found, bound);
                    }
                    return Ok(());
                }
                Err(slot) => slot,
            },
        };
        if net.len() >= NET_MAX {
            return Err(format!(
                "NET_MAX: {NET_MAX} different messages are already in flight"
            ));
        }
        net.insert(slot, link, msg);
        Ok(())
    }
}

impl Env {
    /// Whether TICK of `node` is enabled: ticks are left and, with a drift
    /// bound `skew=K`, the node's next clock value stays within K of every
    /// other node's clock (crashed nodes included).
    fn may_tick(&self, state: &WorldState, node: u8) -> bool {
        if state.budget(Budget::Ticks) == 0 {
            return false;
        }
        let Some(skew) = self.spec.skew else {
            return true;
        };
        let slowest = state.nodes.iter().map(|ns| ns.clock).min().unwrap_or(0);
        let next = state.nodes[node as usize].clock as u64 + 1;
        next - slowest as u64 <= skew as u64
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

/// The capacity fault of a client event (`kind` of `request` at `node`)
/// that could not be recorded in the ghost history.
fn client_fault(
    state: &WorldState,
    node: u8,
    kind: EventKind,
    request: u8,
    why: String,
) -> StepFault {
    let clock = state.nodes[node as usize].clock as u64;
    StepFault::capacity(node, Event::new(kind, 0, request as u32, &[], clock), why)
}

thread_local! {
    /// This thread's outputs buffer, which every step empties before its
    /// core writes it (see [`step::run`]).
    static OUTPUTS: RefCell<Box<Outputs>> = RefCell::new(Box::default());
}

/// Runs `f` on this thread's outputs buffer (or, should it be in use, on a
/// fresh one): a step then costs no zeroing of a new buffer of
/// [`OUTPUTS_MAX`] items.
fn with_outputs<T>(f: impl FnOnce(&mut Outputs) -> T) -> T {
    OUTPUTS.with(|outputs| match outputs.try_borrow_mut() {
        Ok(mut outputs) => f(&mut outputs),
        Err(_) => f(&mut Outputs::default()),
    })
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

/// The requests invoked and not yet answered (no reply or local failure),
/// with the node each was last sent to (its invocation's, or its last retry's).
pub fn open_requests(state: &WorldState) -> impl Iterator<Item = (u32, u8)> + '_ {
    state.ghost.iter().filter_map(|entry| {
        let open = entry.kind == GhostKind::Invoke
            && !state
                .ghost
                .iter()
                .any(|later| later.request == entry.request && later.kind.is_answer());
        let node = || {
            state
                .ghost
                .iter()
                .rev()
                .find(|later| later.request == entry.request && later.kind == GhostKind::Retry)
                .map_or(entry.node, |retry| retry.node)
        };
        open.then(|| (entry.request, node()))
    })
}

/// The directions of links between the nodes of `group` (a bit per node)
/// and the other nodes of a World of `nodes` nodes.
fn crossing(nodes: u8, group: u64) -> impl Iterator<Item = (u8, u8)> {
    let inside = move |node: u8| group & (1 << node) != 0;
    (0..nodes).flat_map(move |a| {
        (0..nodes)
            .filter(move |&b| inside(a) && !inside(b))
            .flat_map(move |b| [(a, b), (b, a)])
    })
}

/// Cuts every direction between `group` and the other nodes; whether any was up.
fn cut_crossing(state: &mut WorldState, group: u64) -> bool {
    let nodes = state.nodes.len() as u8;
    let mut changed = false;
    for (src, dst) in crossing(nodes, group) {
        changed |= state.set_cut(src, dst, true);
    }
    changed
}

/// Spends one unit of `kind`; `false` (nothing spent) if the budget is exhausted.
fn spend(state: &mut WorldState, kind: Budget) -> bool {
    let budget = &mut state.budgets[kind as usize];
    let available = *budget > 0;
    *budget = budget.saturating_sub(1);
    available
}

fn push_ghost(
    state: &mut WorldState,
    kind: GhostKind,
    request: u32,
    node: u8,
    payload: Payload,
) -> Result<(), String> {
    if state.ghost.len() >= GHOST_MAX {
        return Err(format!(
            "GHOST_MAX: the ghost history already holds {GHOST_MAX} client events"
        ));
    }
    state.ghost.push(GhostEntry {
        kind,
        request,
        node,
        payload,
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;
    use crate::world::test_core::Idle;

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
        let mut spec = WorldSpec::new(Arc::new(Idle), 1).unwrap();
        spec.set("ticks", "1").unwrap();
        let env = Env::new(spec);
        let mut state = env.init(&mut ()).unwrap();
        state.nodes[0].clock = u32::MAX - 1;
        let tick = Action::Tick { node: 0 };
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
        let mut spec = WorldSpec::new(Arc::new(Idle), 2).unwrap();
        spec.set("ticks", "1").unwrap();
        let env = Env::new(spec);
        let mut state = env.init(&mut ()).unwrap();
        state.nodes[1].clock = 7;
        let mut next = WorldState::default();
        let tick = Action::Tick { node: 0 };
        let made = env.next_made(&state, &tick, &mut next, Successor::Partial, &mut ());
        assert!(made.unwrap());
        assert!(!next.is_whole());
        assert_eq!(next.nodes[0].clock, 1);
        next.mark_step_successor(Some(0));
        next.complete_from(&state);
        assert!(next.is_whole());
        assert_eq!((next.nodes[0].clock, next.nodes[1].clock), (1, 7));
        for made in [Successor::Partial, Successor::Whole] {
            let missing = Action::Tick { node: 5 };
            let refused = env.next_made(&state, &missing, &mut next, made, &mut ());
            assert!(!refused.unwrap(), "{made:?}");
        }
    }
}
