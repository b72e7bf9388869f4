//! The World as a [`Model`]: the environment plus properties, descriptions and
//! fault handling.

pub mod action;
pub mod env;
pub mod ghosts;
pub mod inspect;
pub mod quiescence;
mod reduction;
pub mod spec;
pub mod state;
pub mod symmetry;
mod symmetry_check;
pub mod workload;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use cmc_model::{
    ActionKind, DynFastSuccessors, Encode, FastSuccessors, Model, ModelParam, Property,
    PropertyKind, StateView,
};

use crate::core::abi::{Event, EventKind, OutputKind, Outputs};
use crate::core::fault::{Fault, FaultKind};
use crate::core::hex::{hex, state_hex};
use crate::run::recorder::Recorder;
use crate::run::step::StepFailure;
use crate::system::action::Action;
use crate::system::env::{Env, EnvFailure, Observer, StepFault, Successor};
use crate::system::quiescence::{answered, every_client_replied, lost_in_crash, Quiescence};
use crate::system::spec::WorldSpec;
use crate::system::state::{GhostEntry, GhostKind, WorldState};
use crate::system::symmetry::Symmetry;

/// N cores composed with a hostile environment; a [`Model`].
///
/// A core fault (error code, non-determinism, bad output, memory violation)
/// is not a property verdict: the World records the first one
/// ([`World::fault`]) and disables every further step, and the search's
/// verdict is then an error that names the fault (see
/// [`Model::fault_text`]), so a `#[test]` that checks a faulty core fails.
/// In a supervised child ([`crate::supervise`]), the process instead ends at
/// once and the supervisor reports it.
///
/// # Example
///
/// A World test: two nodes running the bundled `reqack` core with bug 1 (the
/// sender replies before its clear of `pending` is durable), one request and
/// one crash of the sender; the search finds the double reply.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, Verdict};
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck { bug: 1 }), 2)?;
/// spec.set_all(&["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"])?;
/// let outcome = Checker::new(World::new(spec)).workers(1).run();
/// match &outcome.verdict {
///     Verdict::Violated { property, .. } => assert_eq!(property, "AtMostOneReply"),
///     other => panic!("expected a double reply, got {other:?}"),
/// }
/// # Ok::<(), cmc_world::system::spec::SpecError>(())
/// ```
pub struct World {
    env: Env,
    properties: Vec<Property<World>>,
    /// Per property: whether it reads only the client history (see
    /// [`World::with_history_property`]).
    history_only: Vec<bool>,
    fault: Mutex<Option<Fault>>,
    poisoned: AtomicBool,
    pub(crate) quiescence: Option<Quiescence>,
    symmetry: Option<Symmetry>,
    /// What stands for the order between client requests in a state's
    /// identity; `None`: the whole history counts (see [`crate::properties`]).
    pub(crate) history_summary: Option<Arc<dyn HistorySummary>>,
    /// This World among all the process makes (see [`World::id`]).
    id: u64,
    /// The state searches start from instead of the initial state (see
    /// [`World::starting_at`]).
    start: Option<WorldState>,
    /// Steps whose symmetry was checked in the sample's first part (see
    /// `symmetry_check`), counted over every thread.
    pub(crate) symmetry_checks: std::sync::atomic::AtomicU64,
    /// The names [`World::select_properties`] kept, recorded in the
    /// World's parameters; `None`: every property.
    selected: Option<Vec<String>>,
    /// The ghost variables properties keep (see [`ghosts`]).
    ghosts: ghosts::Ghosts,
}

/// The parameter that selects, by name, which of a World's properties are
/// checked (`INVARIANTS=Agreement,Validity`), as it does for a model (see
/// [`World::select_properties`]).
pub const SELECT_PARAM: &str = "INVARIANTS";

/// Worlds made so far by this process.
static WORLDS_MADE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl World {
    /// A World running `spec`, with the built-in client properties
    /// `AtMostOneReply` and `ReplyToInvoked`, and, if `spec.quiescence_steps`
    /// is set, the quiescence check with the goal "every client replied".
    ///
    /// Panics if `spec.symmetric_nodes` are not interchangeable (see
    /// [`WorldSpec::check_symmetry`]; `WorldSpec::set_all` and the
    /// builder's `build` report it as an error).
    pub fn new(spec: WorldSpec) -> World {
        if let Err(why) = spec.check_symmetry() {
            panic!("symmetry: {why}");
        }
        let quiescence_steps = spec.quiescence_steps;
        let symmetry = Symmetry::new(&spec);
        let world = World {
            env: Env::new(spec),
            properties: builtin_properties(),
            history_only: vec![true; builtin_properties().len()],
            fault: Mutex::new(None),
            poisoned: AtomicBool::new(false),
            quiescence: None,
            symmetry,
            history_summary: None,
            id: WORLDS_MADE.fetch_add(1, Ordering::Relaxed),
            symmetry_checks: std::sync::atomic::AtomicU64::new(0),
            start: None,
            selected: None,
            ghosts: ghosts::Ghosts::default(),
        };
        match quiescence_steps {
            Some(steps) => {
                world.with_quiescence(steps, "every client replied", every_client_replied)
            }
            None => world,
        }
    }

    /// A number no other World this process made has: what a cache of
    /// views of a World's states is kept for (an address may be reused).
    pub(crate) fn id(&self) -> u64 {
        self.id
    }

    /// Records `fault`, which happened outside any step (e.g. while checking
    /// a property written in C): see [`World::fault`].
    pub(crate) fn report_outside_step(&self, fault: Fault) {
        self.report(fault, None);
    }

    /// Replaces the quiescence goal (when quiescence is checked) by `goal`,
    /// named `name`; without quiescence it does nothing.
    pub fn set_quiescence_goal(
        &mut self,
        name: &str,
        goal: impl Fn(&World, &WorldState) -> bool + Send + Sync + 'static,
    ) {
        if let Some(quiescence) = &mut self.quiescence {
            quiescence.goal_name = name.into();
            quiescence.goal = std::sync::Arc::new(goal);
        }
    }

    /// Adds a property (builder style).
    ///
    /// ```
    /// use std::sync::Arc;
    /// use cmc_search::{Checker, Verdict};
    /// use cmc_world::example_cores::reqack::{self, ReqAck};
    /// use cmc_world::{World, WorldSpec};
    ///
    /// // Bug 2: a receiver ACKs before its store is flushed; only the
    /// // core's own property `AckedIsDurable` sees the lost request.
    /// let mut spec = WorldSpec::new(Arc::new(ReqAck { bug: 2 }), 2)?;
    /// spec.set_all(&["requests=1", "crashes=1", "restarts=1", "crash_nodes=1"])?;
    /// let world = reqack::properties()
    ///     .into_iter()
    ///     .fold(World::new(spec), World::with_property);
    /// let outcome = Checker::new(world).workers(1).run();
    /// assert!(matches!(&outcome.verdict,
    ///     Verdict::Violated { property, .. } if property == "AckedIsDurable"));
    /// # Ok::<(), cmc_world::system::spec::SpecError>(())
    /// ```
    pub fn with_property(mut self, property: Property<World>) -> World {
        self.properties.push(property);
        self.history_only.push(false);
        self
    }

    /// Adds a property that reads only the client history: the ghost
    /// entries of a state (and their summary), and of a step its action
    /// (not where its packet sits in the network); never node state, the
    /// network or the budgets (builder style).
    /// Partial-order reduction (`--reduction`) runs only when every
    /// property is one of these: its steps are invisible to them.
    pub fn with_history_property(mut self, property: Property<World>) -> World {
        self.properties.push(property);
        self.history_only.push(true);
        self
    }

    /// The names of the properties that may read more than the client
    /// history (see [`World::with_history_property`]).
    pub(crate) fn properties_reading_more_than_history(&self) -> impl Iterator<Item = &str> {
        self.properties
            .iter()
            .zip(&self.history_only)
            .filter(|(_, only)| !**only)
            .map(|(property, _)| property.name.as_str())
    }

    /// This World, its searches starting from `state` (a state this World
    /// reached, e.g. along a schedule of actions) instead of its initial
    /// state: the shortest counterexample from there (builder style). A
    /// heap-state core's state must have been reached through this World's
    /// own cores, whose journal knows its nodes.
    pub fn starting_at(mut self, state: WorldState) -> World {
        self.start = Some(state);
        self
    }

    /// Keeps only the properties called `names` (built-in ones included),
    /// as `INVARIANTS=A,B` does on the command line, which is also how the
    /// World records the selection in its parameters (so replay files and
    /// checkpoints rebuild it). An empty list or a name the World does not
    /// have is an error that lists the names it has.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use cmc_model::Model;
    /// use cmc_world::example_cores::reqack::{self, ReqAck};
    /// use cmc_world::{World, WorldSpec};
    ///
    /// let world = || {
    ///     let spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
    ///     World::new(spec).with_properties(reqack::properties())
    /// };
    /// let only = world().select_properties(&["AckedIsDurable".into()])?;
    /// let names: Vec<String> = only.properties().into_iter().map(|p| p.name).collect();
    /// assert_eq!(names, ["AckedIsDurable"]);
    /// assert!(only.params().iter().any(|p| p.name == "INVARIANTS" && p.value == "AckedIsDurable"));
    /// let unknown = world().select_properties(&["Acked".into()]).err().unwrap();
    /// assert!(unknown.contains("no property `Acked`"), "{unknown}");
    /// # Ok::<(), String>(())
    /// ```
    pub fn select_properties(mut self, names: &[String]) -> Result<World, String> {
        let known: Vec<&str> = self.properties.iter().map(|p| p.name.as_str()).collect();
        let known_text = known.join(", ");
        if names.is_empty() {
            return Err(format!(
                "{}= lists no property: name some of {known_text}",
                SELECT_PARAM
            ));
        }
        if let Some(unknown) = names.iter().find(|name| !known.contains(&name.as_str())) {
            return Err(format!(
                "{}=: this World has no property `{unknown}`; its properties are {known_text}",
                SELECT_PARAM
            ));
        }
        self.drop_unread_ghosts(names)?;
        self.properties.retain(|p| names.contains(&p.name));
        self.selected = Some(names.to_vec());
        Ok(self)
    }

    /// Adds properties, in order (builder style).
    pub fn with_properties(self, properties: impl IntoIterator<Item = Property<World>>) -> World {
        properties.into_iter().fold(self, World::with_property)
    }

    /// The configuration.
    pub fn spec(&self) -> &WorldSpec {
        &self.env.spec
    }

    /// The environment: what is enabled, what an action does and says.
    pub(crate) fn env(&self) -> &Env {
        &self.env
    }

    /// The first fault seen, if any: when set, the search's verdict is void.
    pub fn fault(&self) -> Option<Fault> {
        self.fault.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Runs `action` from `state`, reporting each core step to `observer`.
    pub(crate) fn step_observed(
        &self,
        state: &WorldState,
        action: &Action,
        observer: &mut impl Observer,
    ) -> Result<Option<WorldState>, Fault> {
        let mut next = WorldState::default();
        let enabled =
            self.step_observed_into(state, action, &mut next, Successor::Whole, observer)?;
        Ok(enabled.then_some(next))
    }

    /// As [`World::step_observed`], made in the memory of `next`: whether
    /// the action is enabled (then `next` holds its successor, partial or
    /// whole as `made` says: see [`Env::next_made`]).
    fn step_observed_into(
        &self,
        state: &WorldState,
        action: &Action,
        next: &mut WorldState,
        made: Successor,
        observer: &mut impl Observer,
    ) -> Result<bool, Fault> {
        let enabled = self
            .env
            .next_made(state, action, next, made, observer)
            .map_err(|fault| {
                self.make_fault(fault, &self.format_action(action), state.to_bytes())
            })?;
        if enabled {
            next.mark_step_successor(action.changed_node());
            self.update_ghosts(state, action, next);
            self.summarise(state.ghost.len(), next);
            self.canonicalise(next);
        }
        Ok(enabled)
    }

    /// A successor made in the memory of `out`, whole or partial as `made`
    /// says; a core's fault is reported (voiding the verdict) and the
    /// action taken as disabled.
    fn next_made(
        &self,
        state: &WorldState,
        action: &Action,
        out: &mut WorldState,
        made: Successor,
    ) -> bool {
        if self.poisoned.load(Ordering::Relaxed) {
            return false;
        }
        let result = self
            .recorded_step(state, action, out, made)
            .and_then(|enabled| {
                if let (true, Some(symmetry)) = (enabled, &self.symmetry) {
                    symmetry_check::check_step(self, symmetry, state, action, out)?;
                }
                Ok(enabled)
            });
        result.unwrap_or_else(|fault| {
            self.report(fault, Some(action));
            false
        })
    }

    /// The step of `action` from `state`, made in the memory of `out` (see
    /// [`World::step_observed_into`]), under the flight recorder when one
    /// is installed.
    fn recorded_step(
        &self,
        state: &WorldState,
        action: &Action,
        out: &mut WorldState,
        made: Successor,
    ) -> Result<bool, Fault> {
        let recorder = crate::run::recorder::installed();
        if let Some(recorder) = recorder {
            record_step_begin(recorder, state, action);
        }
        let result = self.step_observed_into(state, action, out, made, &mut ());
        if let Some(recorder) = recorder {
            recorder.end();
        }
        result
    }

    /// The successor `post` of the step of `action` from `pre` under the
    /// names `pre` has, when symmetry renamed it (`None`: not renamed).
    /// What a step property is given, so that it compares each node of
    /// `pre` with the same node after the step.
    fn unrenamed_successor(
        &self,
        pre: &WorldState,
        action: &Action,
        post: &WorldState,
    ) -> Option<WorldState> {
        let symmetry = self.symmetry.as_ref()?;
        let index = match post.renaming() {
            Some(index) => index,
            // A copy or a decoding: the step, made again, says.
            None => self.next_state(pre, action)?.renaming()?,
        };
        let index = usize::from(index);
        let vars = |v: &mut [u8], p: &[u32]| self.rename_ghosts(v, p);
        (index != 0).then(|| symmetry::renamed(&self.env, &vars, post, symmetry.inverse(index)))
    }

    /// Replaces `state` by its canonical form under symmetry reduction.
    fn canonicalise(&self, state: &mut WorldState) {
        if let Some(symmetry) = &self.symmetry {
            symmetry.canonicalise(&self.env, &|v, p| self.rename_ghosts(v, p), state);
        }
    }

    /// The initial state, reporting each core step to `observer`.
    pub(crate) fn init_observed(&self, observer: &mut impl Observer) -> Result<WorldState, Fault> {
        self.env
            .init(observer)
            .map(|mut state| {
                self.init_ghosts(&mut state);
                self.summarise(0, &mut state);
                self.canonicalise(&mut state);
                state
            })
            .map_err(|fault| self.make_fault(fault, "INIT", Vec::new()))
    }

    fn make_fault(&self, fault: StepFault, action: &str, pre_state: Vec<u8>) -> Fault {
        let kind = match fault.failure {
            EnvFailure::Step(StepFailure::Error(error)) => FaultKind::CoreError(error.to_string()),
            EnvFailure::Step(StepFailure::NonDeterminism(why)) => FaultKind::NonDeterminism(why),
            EnvFailure::Step(StepFailure::BadOutput(why)) => FaultKind::BadOutput(why),
            EnvFailure::Step(StepFailure::Memory(why)) => FaultKind::Memory(why),
            EnvFailure::Capacity(why) => FaultKind::Capacity(why),
        };
        let core = self.spec().core_of(fault.node as usize).name().to_string();
        Fault {
            kind,
            action: action.to_string(),
            event: format!(
                "{} (core `{core}`)",
                self.format_event(fault.node, &fault.event)
            ),
            pre_state,
        }
    }

    /// Records `fault` (of the step of `action`), or in a supervised child
    /// sends it to the supervisor and ends the process.
    fn report(&self, fault: Fault, action: Option<&Action>) {
        if crate::run::child::ends_at_fault() {
            let action = action.map(Encode::to_bytes).unwrap_or_default();
            crate::run::child::report_fault(&fault, &action);
        }
        self.poisoned.store(true, Ordering::SeqCst);
        let mut slot = self.fault.lock().unwrap_or_else(|e| e.into_inner());
        slot.get_or_insert(fault);
    }

    /// The sending core's text for a message from `src`, or its hex bytes.
    pub fn describe_message(&self, src: u8, message: &[u8]) -> String {
        self.env.describe_message(src, message)
    }

    /// Node `node`'s core's text for a reply's payload, or its hex bytes.
    pub fn describe_reply(&self, node: u8, payload: &[u8]) -> String {
        let node = node as usize;
        self.spec()
            .core_of(node)
            .describe_reply(&self.env.configs[node], payload)
            .unwrap_or_else(|| hex(payload))
    }

    /// The text for a client operation's payload sent to node `node`: its
    /// core's, else the workload's, else its hex bytes.
    pub fn describe_operation(&self, node: u8, payload: &[u8]) -> String {
        let index = node as usize;
        let own = self
            .spec()
            .core_of(index)
            .describe_operation(&self.env.configs[index], payload);
        own.unwrap_or_else(|| match &self.spec().workload {
            Some(workload) => workload.describe(payload),
            None => hex(payload),
        })
    }

    /// The fault budgets `state` has left, by name, of those this World
    /// gives (e.g. `{crashes: 1, restarts: 0}`; `{}` without faults).
    pub fn describe_budgets(&self, state: &WorldState) -> String {
        let left: Vec<String> = crate::system::spec::BUDGET_NAMES
            .iter()
            .filter(|(_, budget, _)| self.spec().budgets[*budget as usize] > 0)
            .map(|(name, budget, _)| format!("{name}: {}", state.budget(*budget)))
            .collect();
        format!("{{{}}}", left.join(", "))
    }

    /// The core's text for node `node`'s state, or its hex bytes.
    pub fn describe_node(&self, state: &WorldState, node: usize) -> String {
        let view = self.inspect(state).node(node);
        self.spec()
            .core_of(node)
            .describe_state(&self.env.configs[node], view.durable, view.volatile)
            .unwrap_or_else(|| state_hex(view.durable, view.volatile))
    }

    /// One event as text, e.g. `n1 RECV from n0 DATA(r=0)`.
    pub fn format_event(&self, node: u8, event: &Event) -> String {
        let head = format!("n{node} {}", event.kind().map_or("?", EventKind::name));
        match event.kind() {
            Some(EventKind::Recv) => {
                let msg = self.describe_message(event.src as u8, event.payload());
                format!("{head} from n{} {msg}", event.src)
            }
            Some(EventKind::Flushed) => format!("{head} @{} {}", event.id, hex(event.payload())),
            Some(EventKind::Start | EventKind::Tick) => format!("{head} clock={}", event.clock),
            Some(EventKind::Choice) => format!("{head} id={} value={}", event.id, event.payload[0]),
            Some(EventKind::Client) if event.len > 0 => {
                let op = self.describe_operation(node, event.payload());
                format!("{head} id={} {op}", event.id)
            }
            _ => format!("{head} id={}", event.id),
        }
    }

    /// The outputs of one step as text, one per line.
    pub fn format_outputs(&self, node: u8, out: &Outputs) -> Vec<String> {
        out.as_slice()
            .iter()
            .map(|item| {
                let kind = OutputKind::from_raw(item.kind).map_or("?", OutputKind::name);
                match OutputKind::from_raw(item.kind) {
                    Some(OutputKind::Send) => {
                        format!(
                            "SEND to n{} {}",
                            item.dst,
                            self.describe_message(node, item.payload())
                        )
                    }
                    Some(OutputKind::Persist) => {
                        format!("PERSIST @{} {}", item.id, hex(item.payload()))
                    }
                    Some(OutputKind::Reply) => {
                        format!(
                            "REPLY r{} {}",
                            item.id,
                            self.describe_reply(node, item.payload())
                        )
                    }
                    Some(OutputKind::SetTimerAt) => match crate::core::abi::timer_deadline(item) {
                        Some(deadline) => format!("SET_TIMER_AT {} at={deadline}", item.id),
                        None => format!("SET_TIMER_AT {} {}", item.id, hex(item.payload())),
                    },
                    Some(OutputKind::Choose) => {
                        let k = item.payload().first().copied().unwrap_or(0);
                        format!("CHOOSE {} among {k}", item.id)
                    }
                    _ => format!("{kind} {}", item.id),
                }
            })
            .collect()
    }
}

impl World {
    /// What became of each client request of `state` that has no answer
    /// yet, one line each: which request, which node, what happened to it.
    pub fn explain_unanswered(&self, state: &WorldState) -> String {
        let mut text = String::new();
        for (request, node) in crate::system::env::open_requests(state) {
            let ns = &state.nodes[node as usize];
            // A request open at a node when it crashes is marked lost, so an
            // unmarked open request's node is up.
            let what = match (lost_in_crash(state, request), ns.crashed) {
                (true, true) => format!(
                    "lost with n{node}, which crashed while it was open and is still down \
                     (the client saw its connection break; no reply is owed)"
                ),
                (true, false) => format!(
                    "lost with n{node}, which crashed while it was open and restarted without \
                     answering it (the client saw its connection break; no reply is owed)"
                ),
                (false, _) => format!("n{node} is up and has not answered it"),
            };
            text.push_str(&format!("  r{request} sent to n{node}: {what}\n"));
        }
        let requests = self.spec().requests;
        if state.issued < requests {
            let next_nodes = self.spec().request_nodes(state.issued);
            let down: Vec<String> = next_nodes
                .iter()
                .filter(|&&node| state.nodes[node as usize].crashed)
                .map(|node| format!("n{node}"))
                .collect();
            let why = if down.len() == next_nodes.len() {
                format!(": every client node is down ({})", down.join(", "))
            } else {
                String::new()
            };
            let range = match requests - state.issued {
                1 => format!("r{}", state.issued),
                _ => format!("r{}..r{}", state.issued, requests - 1),
            };
            text.push_str(&format!("  {range}: not issued{why}\n"));
        }
        if text.is_empty() {
            String::new()
        } else {
            format!("unanswered client requests:\n{text}")
        }
    }
}

fn builtin_properties() -> Vec<Property<World>> {
    vec![
        Property::always("AtMostOneReply", |world: &World, state: &WorldState| {
            let inspect = world.inspect(state);
            (0..state.issued as u32).all(|request| inspect.replies(request).count() <= 1)
        }),
        Property::always("ReplyToInvoked", |_: &World, state: &WorldState| {
            state.ghost.iter().enumerate().all(|(at, entry)| {
                entry.kind != GhostKind::Reply
                    || state.ghost[..at].iter().any(|earlier| {
                        matches!(earlier.kind, GhostKind::Invoke | GhostKind::Retry)
                            && earlier.request == entry.request
                            && earlier.node == entry.node
                    })
            })
        }),
    ]
}

impl Model for World {
    type State = WorldState;
    type Action = Action;

    fn name(&self) -> String {
        let mut names: Vec<&str> = self.spec().cores.iter().map(|core| core.name()).collect();
        names.dedup();
        format!("world({})", names.join(","))
    }

    fn params(&self) -> Vec<ModelParam> {
        let mut params = vec![ModelParam::new("nodes", self.spec().nodes())];
        params.extend(self.spec().applied.iter().cloned());
        if let Some(names) = &self.selected {
            params.push(ModelParam::new(SELECT_PARAM, names.join(",")));
        }
        params
    }

    fn init_states(&self, out: &mut Vec<WorldState>) {
        if let Some(start) = &self.start {
            out.push(start.clone());
            return;
        }
        let recorder = crate::run::recorder::installed();
        if let Some(recorder) = recorder {
            recorder.begin_step(&[], &[]);
        }
        let result = self.init_observed(&mut ());
        if let Some(recorder) = recorder {
            recorder.end();
        }
        match result {
            Ok(state) => out.push(state),
            Err(fault) => self.report(fault, None),
        }
    }

    /// Partial-order reduction: persistent sets of node-local steps (see
    /// `system/reduction.rs`); none with ghost variables, which properties
    /// read and every step updates: no step is invisible to them.
    fn reduction_support(&self) -> Result<(), String> {
        reduction::support(self)?;
        match self.ghosts.names().next() {
            Some(name) => Err(format!(
                "the ghost variable `{name}` is updated from every step, so no step is invisible"
            )),
            None => Ok(()),
        }
    }

    fn persistent_set(
        &self,
        state: &WorldState,
        steps: &[(&Action, &WorldState)],
        out: &mut Vec<usize>,
    ) -> bool {
        reduction::persistent_set(&self.env, state, steps, out)
    }

    /// Sleep sets over node-local steps (see `system/reduction.rs`); none
    /// with ghost variables: an update may depend on the order of two steps
    /// that otherwise commute, so the two orders need not reach one state.
    fn sleep_support(&self) -> Result<(), String> {
        reduction::sleep_support(self)?;
        match self.ghosts.names().next() {
            Some(name) => Err(format!(
                "the ghost variable `{name}` is updated from every step in the order the steps \
                 are taken, so steps of different nodes need not commute"
            )),
            None => Ok(()),
        }
    }

    fn sleep_key(&self, _state: &WorldState, action: &Action) -> Option<cmc_model::SleepKey> {
        reduction::sleep_key(action)
    }

    fn taken_key(
        &self,
        state: &WorldState,
        action: &Action,
        next: &WorldState,
        key: cmc_model::SleepKey,
    ) -> Option<cmc_model::SleepKey> {
        Some(reduction::taken_key(state, action, next, key))
    }

    fn actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        if !self.poisoned.load(Ordering::Relaxed) {
            self.env.actions(state, out);
        }
    }

    fn next_state(&self, state: &WorldState, action: &Action) -> Option<WorldState> {
        let mut next = WorldState::default();
        self.next_state_into(state, action, &mut next)
            .then_some(next)
    }

    fn fast_successors(&self) -> Option<&DynFastSuccessors<'_, Self>> {
        Some(self)
    }

    /// The first fault, with the pre-state described: it voids the verdict.
    fn fault_text(&self) -> Option<String> {
        let fault = self.fault()?;
        let mut text = fault.to_string();
        if let Ok(state) = WorldState::decode_exact(&fault.pre_state) {
            text.push_str("  pre-state:\n");
            for (name, value) in self.describe_state(&state).fields {
                text.push_str(&format!("    {name} = {value}\n"));
            }
        }
        Some(text)
    }

    /// Under symmetry, a step property is given the step's successor under
    /// the names of its pre-state (see `World::unrenamed_successor`), not
    /// the canonical form the search stores.
    fn properties(&self) -> Vec<Property<World>> {
        if self.symmetry.is_none() {
            return self.properties.clone();
        }
        let same_names = |property: &Property<World>| match &property.kind {
            PropertyKind::Step(holds) => {
                let holds = holds.clone();
                Property {
                    name: property.name.clone(),
                    explain: property.explain.clone(),
                    kind: PropertyKind::Step(Arc::new(
                        move |world: &World,
                              pre: &WorldState,
                              action: &Action,
                              post: &WorldState| {
                            let unrenamed = world.unrenamed_successor(pre, action, post);
                            holds(world, pre, action, unrenamed.as_ref().unwrap_or(post))
                        },
                    )),
                }
            }
            _ => property.clone(),
        };
        self.properties.iter().map(same_names).collect()
    }

    /// A state is a legitimate end when every client request issued has an
    /// answer (a reply, a local failure, or its node crashed while it was
    /// open: see [`crate::system::quiescence::answered`]) and every request was
    /// issued, or the rest cannot be: every node the next request may go to is down. Any other
    /// state without enabled actions is a hang, reported with
    /// [`World::explain_unanswered`]. After a fault, every state is terminal.
    fn is_terminal(&self, state: &WorldState) -> bool {
        if self.poisoned.load(Ordering::Relaxed) {
            return true;
        }
        let clients_down = self
            .spec()
            .request_nodes(state.issued)
            .iter()
            .all(|&node| state.nodes[node as usize].crashed);
        (0..state.issued as u32).all(|request| answered(state, request))
            && (state.issued == self.spec().requests || clients_down)
    }

    fn format_action(&self, action: &Action) -> String {
        action.text(&self.env)
    }

    fn action_kind(&self, action: &Action) -> ActionKind {
        let (name, fault) = action.kind();
        ActionKind {
            name: name.into(),
            fault,
        }
    }

    /// Every non-fault kind, and each fault kind whose budget is not zero
    /// (HEAL only with PARTITION).
    fn action_kinds(&self) -> Vec<ActionKind> {
        crate::system::action::kinds()
            .filter_map(|(name, budget)| match budget {
                None => Some(ActionKind::normal(name)),
                Some(budget) => {
                    (self.spec().budgets[budget as usize] > 0).then(|| ActionKind::fault(name))
                }
            })
            .collect()
    }

    fn explain_violation(&self, property: &str, state: &WorldState) -> Option<String> {
        match property {
            crate::system::quiescence::QUIESCENCE => {
                let run = self.fair_run(state)?;
                Some(format!("{run}{}", self.explain_unanswered(&run.end)))
            }
            "deadlock" => Some(self.explain_unanswered(state)),
            _ => None,
        }
    }

    /// What the protocol decides and the clients saw: each node's core
    /// bytes and whether it is up, the requests issued and the client
    /// history. Left out: the messages in flight and what the environment
    /// keeps for a node (clock, timers, unflushed persists, wake-ups).
    fn coarse_view(&self, state: &WorldState, out: &mut Vec<u8>) -> bool {
        for node in &state.nodes {
            node.core.encode(out);
            node.crashed.encode(out);
        }
        state.issued.encode(out);
        state.ghost.encode(out);
        true
    }

    fn describe_state(&self, state: &WorldState) -> StateView {
        let mut view = StateView::new();
        for (node, ns) in state.nodes.iter().enumerate() {
            view = view.text(format!("n{node}"), self.describe_node(state, node));
            let persists: Vec<String> = ns
                .persists
                .iter()
                .map(|p| format!("@{} {}", p.offset, hex(p.bytes.as_bytes())))
                .collect();
            let deadlines: String = ns
                .deadlines
                .iter()
                .map(|d| format!(" timer{}@{}", d.timer, d.at))
                .collect();
            view = view.text(
                format!("n{node}.env"),
                format!(
                    "{} clock={} timers={:#x}{deadlines} wakes={:#x} persists=[{}]",
                    if ns.crashed { "CRASHED" } else { "up" },
                    ns.clock,
                    ns.timers,
                    ns.wakes,
                    persists.join(", ")
                ),
            );
        }
        let net: Vec<String> = state
            .net
            .iter()
            .map(|p| {
                let copies = match (p.count, p.surplus) {
                    (count, true) => format!(" x{count}+"),
                    (1, false) => String::new(),
                    (count, false) => format!(" x{count}"),
                };
                format!(
                    "n{}->n{} {}{copies}",
                    p.src,
                    p.dst,
                    self.describe_message(p.src, p.msg.as_bytes())
                )
            })
            .collect();
        view = view.text("net", format!("[{}]", net.join(", ")));
        if !state.cut_links.is_empty() {
            let cut: Vec<String> = state
                .cut_links
                .iter()
                .map(|(src, dst)| format!("n{src}->n{dst}"))
                .collect();
            view = view.text("cut_links", format!("[{}]", cut.join(", ")));
        }
        let ghost: Vec<String> = state
            .ghost
            .iter()
            .map(|g| match g.kind {
                GhostKind::Invoke | GhostKind::Retry => {
                    let verb = if g.kind == GhostKind::Invoke {
                        "invoke"
                    } else {
                        "retry"
                    };
                    let op = match g.payload.as_bytes() {
                        [] => String::new(),
                        operation => format!(" {}", self.describe_operation(g.node, operation)),
                    };
                    format!("{verb} r{}@n{}{op}", g.request, g.node)
                }
                GhostKind::Reply => format!(
                    "reply r{}@n{} {}",
                    g.request,
                    g.node,
                    self.describe_reply(g.node, g.payload.as_bytes())
                ),
                GhostKind::LocalFail => format!("fail r{}@n{}", g.request, g.node),
            })
            .collect();
        let view = view
            .text("ghost", format!("[{}]", ghost.join(", ")))
            .text("budgets", self.describe_budgets(state));
        self.describe_ghosts(state)
            .into_iter()
            .fold(view, |view, (name, text)| view.text(name, text))
    }
}

/// The World makes its successors in the memory the search keeps, leaves
/// the nodes a step did not touch in place until needed, and copies them
/// from the parent's bytes when encoding (`docs/speed.md`).
impl FastSuccessors for World {
    type State = WorldState;
    type Action = Action;

    /// The successor is made in the memory of `out` (see `Env::next_made`).
    fn next_state_into(&self, state: &WorldState, action: &Action, out: &mut WorldState) -> bool {
        self.next_made(state, action, out, Successor::Whole)
    }

    /// Without symmetry, the nodes the action leaves alone are not copied
    /// into the successor until it is completed; with it, the successor is
    /// made whole (renaming reads every node), and so with ghost variables
    /// (their updates inspect the successor).
    fn next_state_partial_into(
        &self,
        state: &WorldState,
        action: &Action,
        out: &mut WorldState,
    ) -> bool {
        let made = match self.symmetry {
            None if self.ghosts.is_empty() => Successor::Partial,
            _ => Successor::Whole,
        };
        self.next_made(state, action, out, made)
    }

    fn complete_successor(&self, state: &WorldState, next: &mut WorldState) {
        next.complete_from(state);
    }

    /// Copies the nodes a step left unchanged (equal to the parent's node
    /// of the same id) from the parent's bytes; encodes the others.
    fn encode_successor(
        &self,
        parent: &WorldState,
        parent_bytes: &[u8],
        next: &WorldState,
        out: &mut Vec<u8>,
    ) {
        next.encode_successor(parent, parent_bytes, out);
    }
}

thread_local! {
    /// Where this thread encodes the pre-states and actions it records.
    static RECORD_BYTES: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Tells the flight recorder that this thread begins the step of `action`
/// from `state`. Every action of a state is taken in a row: the state is
/// encoded and written only when the recorder does not hold it already,
/// which the stamp it was recorded under tells without comparing states
/// (see [`WorldState::recorded_as`]).
fn record_step_begin(recorder: &Recorder, state: &WorldState, action: &Action) {
    RECORD_BYTES.with_borrow_mut(|bytes| {
        bytes.clear();
        if let Some(stamp) = state.recorded_as() {
            action.encode(bytes);
            if recorder.begin_step_again(stamp, bytes) {
                return;
            }
            bytes.clear();
        }
        state.encode(bytes);
        let state_len = bytes.len();
        action.encode(bytes);
        let (encoded, action) = bytes.split_at(state_len);
        if let Some(stamp) = recorder.begin_step_stamped(encoded, action) {
            state.set_recorded_as(stamp);
        }
    });
}

/// What stands for the order between client requests in a World state's
/// identity, as bytes kept in the ghost. Implemented by the client-history properties
/// ([`crate::properties::consistency`], whose module text has the argument).
///
/// Contract: the bytes are canonical and decide, together with each
/// request's own ghost entries, every verdict the World's properties will
/// give on every continuation of the history.
pub(crate) trait HistorySummary: Send + Sync {
    /// The summary of the empty history.
    fn initial(&self) -> Vec<u8>;

    /// Updates `summary` with the entries `ghost[from..]`, which follow
    /// the ones already in it (`ghost` in order, or grouped by request).
    fn advance(&self, ghost: &[GhostEntry], from: usize, summary: &mut Vec<u8>);
}
