//! Successor generation shared by every exhaustive strategy: compute the
//! successors of a state, check properties, deduplicate through the
//! fingerprint table and record parent links.

use std::io;

use cmc_model::{Encode, Fingerprint, Model, SleepKey, Successors};
use cmc_store::{Insertion, TraceId, TraceLog, TraceRecord, TraceWriter, VisitedSet};

use crate::coverage::KindTally;
use crate::disk_batch::NewLink;
use crate::properties::{Failure, PropertySet};
use crate::reduction::{Persistent, Reduction};
use crate::sleep::{self, SleepSets};

/// Where a violation was found, enough to rebuild its counterexample.
#[derive(Debug, Clone)]
pub(crate) struct ViolationSite {
    pub failure: Failure,
    /// The last state of the counterexample, or for a step violation the
    /// step's pre-state.
    pub trace_id: TraceId,
    /// For a step violation: the index of the offending action in the
    /// pre-state's candidate actions.
    pub step_action: Option<u32>,
    /// Counterexample length in states.
    pub length: u64,
    /// Fingerprint of the counterexample's last state (to order violations).
    pub fingerprint: Fingerprint,
}

impl ViolationSite {
    /// Violations are ordered by length, then declaration order, then
    /// fingerprint: the least one is reported, whatever the worker count.
    fn key(&self) -> (u64, usize, Fingerprint) {
        (self.length, self.failure.rank, self.fingerprint)
    }

    /// Keeps the lesser of `best` and `candidate` in `best`.
    pub fn keep_least(best: &mut Option<ViolationSite>, candidate: ViolationSite) {
        if best.as_ref().is_none_or(|b| candidate.key() < b.key()) {
            *best = Some(candidate);
        }
    }
}

/// Why a search could not go on.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SearchError {
    #[error(
        "the fingerprint table is full ({capacity} slots); this is a cmc bug, please report it"
    )]
    TableFull { capacity: usize },
    #[error("cannot write the search's files (trace log or frontier spill): {0} (is the disk full? choose another place with --trace-dir)")]
    TraceIo(#[from] io::Error),
    #[error("the fingerprint table needs {needed_bytes} bytes, more than the memory budget allows ({budget_bytes} bytes of --max-memory); {advice}")]
    MemoryBudget {
        needed_bytes: u64,
        budget_bytes: u64,
        /// What the user can do, naming only options not already given.
        advice: &'static str,
    },
    #[error("cannot save a checkpoint: {0} (is the disk full?)")]
    Checkpoint(io::Error),
    #[error(
        "a stored state does not decode: {0}; the model's Encode implementation is not a bijection"
    )]
    Decode(#[from] cmc_model::DecodeError),
    #[error("the model is not deterministic: {0}")]
    NonDeterminism(String),
    #[error("the model's state encoding is not a round trip (decode(encode(s)) != s); fix its Encode implementation: {0}")]
    EncodingRoundTrip(String),
    #[error("the model panicked {0}")]
    Panic(String),
}

/// The message a panic carried, as text.
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    match (
        payload.downcast_ref::<&str>(),
        payload.downcast_ref::<String>(),
    ) {
        (Some(text), _) => text.to_string(),
        (_, Some(text)) => text.clone(),
        _ => "(a panic without a message)".to_string(),
    }
}

/// Runs `f`, a call into the model; a panic becomes [`SearchError::Panic`]
/// whose text says `doing()` (the action, the state) and the panic's message.
fn guard_panic<T>(doing: impl FnOnce() -> String, f: impl FnOnce() -> T) -> Result<T, SearchError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .map_err(|payload| SearchError::Panic(format!("{}: {}", doing(), panic_text(&*payload))))
}

/// Whether `bytes`, what [`Successors::encode_successor`] wrote for `next`, are
/// its encoding (checked with `check-determinism`: a model that copies
/// parts of the parent's bytes must copy the right ones).
fn check_successor_encoding<S: Encode + std::fmt::Debug>(
    next: &S,
    bytes: &[u8],
) -> Result<(), SearchError> {
    if next.to_bytes() != bytes {
        return Err(SearchError::NonDeterminism(format!(
            "encode_successor() wrote other bytes than encode() for the successor {next:?}"
        )));
    }
    Ok(())
}

/// `state` as its model describes it, on one line.
fn describe<M: Model>(model: &M, state: &M::State) -> String {
    let fields: Vec<String> = model
        .describe_state(state)
        .fields
        .into_iter()
        .map(|(name, value)| format!("{name} = {value}"))
        .collect();
    format!("[{}]", fields.join(", "))
}

/// What the search was `doing` (a verb phrase) with `action` from `state`,
/// for a panic's message: "taking action A from state [..]".
fn about_action<M: Model>(model: &M, doing: &str, action: &M::Action, state: &M::State) -> String {
    format!(
        "{doing} action {} from state {}",
        model.format_action(action),
        describe(model, state)
    )
}

/// Whether `a` and `b` are the same bytes. Encodings of 8 to 16 bytes
/// (those of many models' states) are compared as two overlapping words
/// each, inline: this runs for every successor, and a call to the C
/// library's `bcmp` cost more than the comparison.
#[inline]
pub fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let length = a.len();
    if length != b.len() {
        return false;
    }
    if (8..=16).contains(&length) {
        let word = |bytes: &[u8], at: usize| {
            u64::from_le_bytes(bytes[at..at + 8].try_into().expect("8 bytes"))
        };
        word(a, 0) == word(b, 0) && word(a, length - 8) == word(b, length - 8)
    } else {
        a == b
    }
}

/// A successor computed but not yet inserted; its state is the one at the
/// same index in [`Batch::states`].
struct Successor {
    /// Index of the action among the parent's candidate actions.
    step: u32,
    /// Its fingerprint; `None` for a stuttering step (the successor is the
    /// parent itself, so it is in the visited set already: neither hashed
    /// nor looked up).
    fingerprint: Option<Fingerprint>,
    /// Where its encoding is in [`Batch::encoded`].
    bytes: std::ops::Range<usize>,
}

/// The successors of one state, computed and fingerprinted (their table
/// slots prefetched) but not yet counted, checked or inserted.
pub(crate) struct Batch<M: Model> {
    /// The state expanded (`None` before the first; then kept from state
    /// to state, so that the next one can be decoded into its memory).
    parent: Option<M::State>,
    actions: Vec<M::Action>,
    /// The encodings of the successors, back to back.
    encoded: Vec<u8>,
    successors: Vec<Successor>,
    /// Successor states, kept from state to state so that
    /// [`Successors::next_state_partial_into`] can reuse their memory.
    states: Vec<M::State>,
    /// How many successors need a table lookup (not stuttering steps).
    lookups: usize,
    /// With reduction: positions in `successors` of the persistent set.
    persistent: Vec<usize>,
    /// With a persistent set: positions in `successors` in the order they
    /// are visited.
    order: Vec<usize>,
    /// With sleep sets: the state's sleep set.
    asleep: Vec<SleepKey>,
    /// With sleep sets: the indices among `actions` of the steps asleep.
    slept: Vec<u32>,
    /// With sleep sets: per successor, the key of its step if it
    /// commutes (see [`crate::sleep`]).
    keys: Vec<Option<SleepKey>>,
    /// With sleep sets: the sleep set a successor is given.
    contribution: Vec<SleepKey>,
}

impl<M: Model> Batch<M> {
    fn new() -> Batch<M> {
        Batch {
            parent: None,
            actions: Vec::new(),
            encoded: Vec::new(),
            successors: Vec::new(),
            states: Vec::new(),
            lookups: 0,
            persistent: Vec::new(),
            order: Vec::new(),
            asleep: Vec::new(),
            slept: Vec::new(),
            keys: Vec::new(),
            contribution: Vec::new(),
        }
    }

    /// The state whose successors the batch holds.
    fn state(&self) -> &M::State {
        self.parent
            .as_ref()
            .expect("the batch's state is set before it is prepared")
    }

    /// Makes `state` the one to expand, reusing the memory of the last one.
    fn set_state(&mut self, state: &M::State) {
        match &mut self.parent {
            Some(parent) => parent.clone_from(state),
            None => self.parent = Some(state.clone()),
        }
    }

    /// Makes the state whose canonical encoding is `bytes` the one to
    /// expand, decoded in place (see [`Encode::decode_in_place`]).
    fn decode_state(&mut self, bytes: &[u8]) -> Result<(), SearchError> {
        match &mut self.parent {
            Some(parent) => parent.decode_exact_in_place(bytes)?,
            None => self.parent = Some(M::State::decode_exact(bytes)?),
        }
        Ok(())
    }

    /// Lists the actions of the state and computes the successor of each
    /// enabled one (a partial one where the model makes them, see
    /// [`Successors::next_state_partial_into`]), forgetting the last state's.
    /// With sleep sets, a step whose key is in [`Batch::asleep`] is not
    /// taken: its index goes to [`Batch::slept`].
    fn take_steps(&mut self, expander: &Expander<'_, M>) -> Result<(), SearchError> {
        let model = expander.model;
        let sleep = expander.sleep_sets();
        let state = self.parent.as_ref().expect("the batch's state is set");
        self.actions.clear();
        self.successors.clear();
        self.slept.clear();
        self.keys.clear();
        guard_panic(
            || format!("listing the actions of state {}", describe(model, state)),
            || model.actions(state, &mut self.actions),
        )?;
        if expander.checks.determinism {
            expander.recheck_actions(state, &self.actions)?;
        }
        for (index, action) in self.actions.iter().enumerate() {
            let doing = || about_action(model, "taking", action, state);
            let index = u32::try_from(index).expect("at most u32::MAX actions per state");
            let key = match sleep {
                Some(_) => guard_panic(doing, || model.sleep_key(state, action))?,
                None => None,
            };
            if key.is_some_and(|key| self.asleep.iter().any(|z| z.same_step(&key))) {
                self.slept.push(index);
                continue;
            }
            let slot = self.successors.len();
            let enabled = match self.states.get_mut(slot) {
                Some(buffer) => guard_panic(doing, || {
                    model.next_state_partial_into(state, action, buffer)
                })?,
                None => match guard_panic(doing, || model.next_state(state, action))? {
                    Some(next) => {
                        self.states.push(next);
                        true
                    }
                    None => false,
                },
            };
            if enabled {
                self.successors.push(Successor {
                    step: index,
                    fingerprint: None,
                    bytes: 0..0,
                });
                self.keys.push(key);
            }
        }
        Ok(())
    }

    /// Encodes every successor, back to back, given the state's canonical
    /// encoding `state_bytes` (see [`Successors::encode_successor`]); under
    /// `check-determinism` each is also made whole, made again from scratch
    /// and encoded in full, and all must agree.
    fn encode(
        &mut self,
        expander: &Expander<'_, M>,
        state_bytes: &[u8],
    ) -> Result<(), SearchError> {
        let state = self.parent.as_ref().expect("the batch's state is set");
        self.encoded.clear();
        for (successor, next) in self.successors.iter_mut().zip(self.states.iter_mut()) {
            let start = self.encoded.len();
            expander
                .model
                .encode_successor(state, state_bytes, next, &mut self.encoded);
            successor.bytes = start..self.encoded.len();
            if expander.checks.determinism {
                expander.complete(state, next)?;
                expander.recheck_step(state, &self.actions[successor.step as usize], next)?;
                check_successor_encoding(next, &self.encoded[successor.bytes.clone()])?;
            }
        }
        Ok(())
    }

    /// Fingerprints every successor other than the state itself (a
    /// stuttering step, whose lookup could only say "present": the state
    /// was stored before it was expanded) and prefetches its slot in `table`.
    fn fingerprint(&mut self, table: &VisitedSet, state_bytes: &[u8]) {
        self.lookups = 0;
        for successor in self.successors.iter_mut() {
            let bytes = &self.encoded[successor.bytes.clone()];
            if !same_bytes(bytes, state_bytes) {
                let fingerprint = Fingerprint::of_bytes(bytes);
                table.prefetch(fingerprint);
                self.lookups += 1;
                successor.fingerprint = Some(fingerprint);
            }
        }
    }

    /// Every successor with its action and state.
    fn steps(&self) -> impl Iterator<Item = (&Successor, &M::Action, &M::State)> {
        self.successors
            .iter()
            .zip(self.states.iter())
            .map(|(successor, next)| (successor, &self.actions[successor.step as usize], next))
    }

    /// Makes every successor whole (see [`Successors::complete_successor`]).
    fn complete_all(&mut self, expander: &Expander<'_, M>) -> Result<(), SearchError> {
        let state = self.parent.as_ref().expect("the batch's state is set");
        for next in self.states.iter_mut().take(self.successors.len()) {
            expander.complete(state, next)?;
        }
        Ok(())
    }

    /// Names the persistent set of the successors under `reduction` (their
    /// positions, into [`Batch::persistent`]); whether it is a proper subset.
    fn name_persistent_set(
        &mut self,
        model: &M,
        reduction: &Persistent,
    ) -> Result<bool, SearchError> {
        let state = self.parent.as_ref().expect("the batch's state is set");
        let steps: Vec<(&M::Action, &M::State)> = self
            .successors
            .iter()
            .zip(self.states.iter())
            .map(|(successor, next)| (&self.actions[successor.step as usize], next))
            .collect();
        let doing = || format!("naming a persistent set of {}", describe(model, state));
        guard_panic(doing, || {
            reduction.persistent_set(model, state, &steps, &mut self.persistent)
        })
    }

    /// With sleep sets: completes the key of each step taken with what it
    /// did (see [`Model::taken_key`]).
    fn name_taken_keys(&mut self, model: &M) -> Result<(), SearchError> {
        let state = self.parent.as_ref().expect("the batch's state is set");
        for ((successor, next), key) in self
            .successors
            .iter()
            .zip(self.states.iter())
            .zip(self.keys.iter_mut())
        {
            let action = &self.actions[successor.step as usize];
            if let Some(named) = *key {
                *key = guard_panic(
                    || about_action(model, "naming what it did:", action, state),
                    || model.taken_key(state, action, next, named),
                )?;
            }
        }
        Ok(())
    }

    /// Sets the order the successors are visited in: the persistent set's
    /// first, then the others (with no persistent set, as they come).
    fn order_visits(&mut self) {
        self.order.clear();
        let persistent = &self.persistent;
        if !persistent.is_empty() {
            self.order.extend_from_slice(persistent);
            self.order.extend(
                (0..self.successors.len()).filter(|at| persistent.binary_search(at).is_err()),
            );
        }
    }

    /// The position in [`Batch::successors`] of the successor visited
    /// `rank`-th (see [`Batch::order_visits`]).
    fn visited_at(&self, rank: usize) -> usize {
        if self.order.is_empty() {
            rank
        } else {
            self.order[rank]
        }
    }

    /// Successor `at`: its state (to be made whole where it is new), its
    /// encoding, and the batch's state it is a successor of.
    fn successor_mut(&mut self, at: usize) -> (&mut M::State, &[u8], &M::State) {
        let bytes = self.successors[at].bytes.clone();
        (
            &mut self.states[at],
            &self.encoded[bytes],
            self.parent.as_ref().expect("the batch's state is set"),
        )
    }

    /// Forgets the successors once settled.
    fn clear(&mut self) {
        self.successors.clear();
        self.persistent.clear();
    }
}

/// Per-worker buffers and counters; no allocation per state once warm.
pub(crate) struct Scratch<'t, M: Model> {
    /// The batch [`Expander::settle`] works on.
    current: Batch<M>,
    /// The batch [`Expander::prepare_ahead`] fills, settled next.
    ahead: Batch<M>,
    writer: TraceWriter<'t>,
    /// States generated by this worker since the counter was last taken.
    pub generated: u64,
    /// The least violation this worker found.
    pub violation: Option<ViolationSite>,
    /// Counts per action kind (with coverage on).
    pub tally: KindTally,
}

impl<'t, M: Model> Scratch<'t, M> {
    /// Fresh buffers writing parent links into `log`.
    pub fn new(log: &'t TraceLog) -> Scratch<'t, M> {
        Scratch {
            current: Batch::new(),
            ahead: Batch::new(),
            writer: log.writer(),
            generated: 0,
            violation: None,
            tally: KindTally::default(),
        }
    }

    /// Makes the batch prepared ahead the one to settle next.
    pub fn advance(&mut self) {
        std::mem::swap(&mut self.current, &mut self.ahead);
    }

    /// Makes every parent link written so far readable.
    pub fn flush(&mut self) -> Result<(), SearchError> {
        Ok(self.writer.flush()?)
    }
}

/// The optional checks and counts of successor generation, as the
/// search's options set them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checks {
    /// A state without successors that is not terminal is a violation.
    deadlock: bool,
    /// `actions` and `next_state` run twice and must agree.
    determinism: bool,
    /// Every new state's encoding must decode to the state again.
    round_trip: bool,
    /// Actions are counted per kind (enabled, and taken to a new state).
    coverage: bool,
}

impl Checks {
    fn of(options: &crate::SearchOptions) -> Checks {
        Checks {
            deadlock: options.check_deadlock,
            determinism: options.check_determinism,
            round_trip: crate::round_trip::enabled(options),
            coverage: options.coverage,
        }
    }
}

/// The shared, read-only context of successor generation.
pub(crate) struct Expander<'a, M: Model> {
    pub model: &'a M,
    pub properties: &'a PropertySet<M>,
    pub table: &'a VisitedSet,
    checks: Checks,
    /// Whether a new successor's parent link is left to its caller
    /// ([`NewLink::Deferred`], for a candidate of a batched pass over a set
    /// on disk) unless it breaks an invariant.
    pub defer_links: bool,
    /// Partial-order reduction, when on: only a persistent set of each
    /// state's successors is visited (see [`crate::reduction`]), or the
    /// steps not asleep are computed (see [`crate::sleep`]).
    pub reduction: Option<&'a Reduction>,
}

impl<'a, M: Model> Expander<'a, M> {
    /// Builds an expander over `table` with the checks `options` ask for.
    pub fn new(
        model: &'a M,
        properties: &'a PropertySet<M>,
        table: &'a VisitedSet,
        options: &crate::SearchOptions,
    ) -> Expander<'a, M> {
        Expander {
            model,
            properties,
            table,
            checks: Checks::of(options),
            defer_links: false,
            reduction: None,
        }
    }

    /// The sleep sets, when they are on.
    fn sleep_sets(&self) -> Option<&'a SleepSets> {
        match self.reduction {
            Some(Reduction::Sleep(sleep)) => Some(sleep),
            _ => None,
        }
    }

    /// Computes the actions of `state` again and compares them with `first`.
    fn recheck_actions(&self, state: &M::State, first: &[M::Action]) -> Result<(), SearchError> {
        let mut again = Vec::with_capacity(first.len());
        self.model.actions(state, &mut again);
        let texts = |actions: &[M::Action]| -> Vec<String> {
            actions
                .iter()
                .map(|a| self.model.format_action(a))
                .collect()
        };
        if texts(first) != texts(&again) {
            return Err(SearchError::NonDeterminism(format!(
                "two calls of actions() on the same state gave different actions: {:?}, then {:?}; state: {state:?}",
                texts(first),
                texts(&again)
            )));
        }
        Ok(())
    }

    /// Computes `action`'s successor of `state` again and compares encodings.
    fn recheck_step(
        &self,
        state: &M::State,
        action: &M::Action,
        first: &M::State,
    ) -> Result<(), SearchError> {
        let again = self.model.next_state(state, action);
        if again.as_ref().map(Encode::to_bytes) != Some(first.to_bytes()) {
            return Err(SearchError::NonDeterminism(format!(
                "two calls of next_state() for action {} gave different results: {first:?}, then {again:?}; state: {state:?}",
                self.model.format_action(action)
            )));
        }
        Ok(())
    }

    /// Makes `next`, a successor of `state` that may be partial, whole (see
    /// [`Successors::complete_successor`]).
    fn complete(&self, state: &M::State, next: &mut M::State) -> Result<(), SearchError> {
        guard_panic(
            || format!("completing a successor of {}", describe(self.model, state)),
            || self.model.complete_successor(state, next),
        )
    }

    /// Admits a state whose canonical encoding is `bytes` and fingerprint
    /// `fingerprint` (reached by the link `parent`/`step`, at `depth`): if it
    /// is new, makes it whole (when it is a partial successor of
    /// `partial_of`, see [`Successors::next_state_partial_into`]), checks
    /// invariants, stores its parent link (or defers it, see
    /// [`Expander::defer_links`]) and hands it to `on_new`. Returns whether
    /// it was new.
    #[inline]
    #[allow(clippy::too_many_arguments)]
    fn admit(
        &self,
        writer: &mut TraceWriter<'_>,
        violation: &mut Option<ViolationSite>,
        (state, partial_of): (&mut M::State, Option<&M::State>),
        bytes: &[u8],
        fingerprint: Fingerprint,
        parent: Option<TraceId>,
        step: u32,
        depth: u64,
        on_new: &mut impl FnMut(NewLink, &[u8], &M::State),
    ) -> Result<bool, SearchError> {
        match self.table.insert(fingerprint) {
            None => {
                return Err(SearchError::TableFull {
                    capacity: self.table.memory_capacity(),
                })
            }
            Some(Insertion::Present) => return Ok(false),
            Some(Insertion::New) => {}
        }
        if let Some(parent_state) = partial_of {
            self.complete(parent_state, state)?;
        }
        if self.checks.round_trip {
            crate::round_trip::check(self.model, state, bytes)
                .map_err(SearchError::EncodingRoundTrip)?;
        }
        let checked = guard_panic(
            || {
                format!(
                    "checking the invariants of state {}",
                    describe(self.model, state)
                )
            },
            || self.properties.check_state(self.model, state),
        )?;
        let link = match (parent, checked) {
            (Some(parent), None) if self.defer_links => NewLink::Deferred { parent, step },
            (parent, checked) => {
                let trace_id = writer.append(TraceRecord {
                    fingerprint,
                    parent,
                    step,
                })?;
                if let Some(failure) = checked {
                    ViolationSite::keep_least(
                        violation,
                        ViolationSite {
                            failure,
                            trace_id,
                            step_action: None,
                            length: depth,
                            fingerprint,
                        },
                    );
                }
                NewLink::Written(trace_id)
            }
        };
        on_new(link, bytes, state);
        Ok(true)
    }

    /// Visits initial state number `index`.
    pub fn visit_initial(
        &self,
        scratch: &mut Scratch<'_, M>,
        index: usize,
        mut state: M::State,
        on_new: &mut impl FnMut(TraceId, &[u8], &M::State),
    ) -> Result<(), SearchError> {
        scratch.generated += 1;
        let index = u32::try_from(index).expect("at most u32::MAX initial states");
        let encoded = &mut scratch.current.encoded;
        encoded.clear();
        state.encode(encoded);
        let fingerprint = Fingerprint::of_bytes(encoded);
        self.admit(
            &mut scratch.writer,
            &mut scratch.violation,
            (&mut state, None),
            encoded,
            fingerprint,
            None,
            index,
            1,
            &mut written_only(on_new),
        )
        .map(|_| ())
    }

    /// Generates every successor of `state` (whose canonical encoding is
    /// `state_bytes`, stored as `trace_id`, at `depth`), checking step
    /// properties and deadlock, and visits each: [`prepare`](Self::prepare)
    /// then [`settle`](Self::settle) (see there).
    #[allow(clippy::too_many_arguments)]
    pub fn expand(
        &self,
        scratch: &mut Scratch<'_, M>,
        state: &M::State,
        state_bytes: &[u8],
        trace_id: TraceId,
        depth: u64,
        room: &mut impl FnMut(usize) -> bool,
        on_new: &mut impl FnMut(TraceId, &[u8], &M::State),
    ) -> Result<bool, SearchError> {
        scratch.current.set_state(state);
        self.prepare(&mut scratch.current, state_bytes)?;
        let on_new = &mut written_only(on_new);
        self.settle(scratch, state_bytes, trace_id, depth, room, on_new)
    }

    /// Decodes the state whose canonical encoding is `state_bytes` into the
    /// batch settled after the current one, in place (reusing the memory of
    /// the state that batch held, see [`Encode::decode_in_place`]), and
    /// [`prepare`](Self::prepare)s it: its table lookups then have a whole
    /// state's settling to arrive before they are made.
    pub fn prepare_ahead(
        &self,
        scratch: &mut Scratch<'_, M>,
        state_bytes: &[u8],
    ) -> Result<(), SearchError> {
        scratch.ahead.decode_state(state_bytes)?;
        self.prepare(&mut scratch.ahead, state_bytes)
    }

    /// Computes every successor of the batch's state (whose canonical
    /// encoding is `state_bytes`) into `batch`, and fingerprints each and
    /// prefetches its table slot, but counts, checks and inserts nothing. A
    /// successor equal to the state (a stuttering step) is neither
    /// fingerprinted nor prefetched: the state was stored before it was
    /// expanded, so its lookup could only say "present".
    fn prepare(&self, batch: &mut Batch<M>, state_bytes: &[u8]) -> Result<(), SearchError> {
        // Three passes, each reading what the one before wrote a whole
        // batch earlier: a value read back right after it was written in
        // narrower stores (a successor's fields, then its encoding's bytes)
        // cannot be forwarded from the store buffer and stalls the read
        // until the stores are done. A partial successor is made whole
        // where it is checked (see `settle`).
        match self.sleep_sets() {
            Some(sleep) => sleep.asleep(Fingerprint::of_bytes(state_bytes), &mut batch.asleep),
            None => batch.asleep.clear(),
        }
        batch.take_steps(self)?;
        batch.encode(self, state_bytes)?;
        batch.fingerprint(self.table, state_bytes);
        Ok(())
    }

    /// Settles the current batch of `scratch`, the successors
    /// [`prepare`](Self::prepare)d of a state (whose canonical encoding is
    /// `state_bytes`, stored as `trace_id`, at `depth`): checks step
    /// properties and deadlock, counts the successors and visits each.
    ///
    /// `room` is asked first whether the lookups of the batch fit in the
    /// table; if not, nothing is counted, checked or inserted and
    /// `Ok(false)` says the state must be expanded again once room is made.
    ///
    /// All successors were fingerprinted and their table slots prefetched
    /// before any is inserted: the inserts' cache misses overlap instead of
    /// following one another.
    pub fn settle(
        &self,
        scratch: &mut Scratch<'_, M>,
        state_bytes: &[u8],
        trace_id: TraceId,
        depth: u64,
        room: &mut impl FnMut(usize) -> bool,
        on_new: &mut impl FnMut(NewLink, &[u8], &M::State),
    ) -> Result<bool, SearchError> {
        let Scratch {
            current: batch,
            writer,
            generated,
            violation,
            tally,
            ..
        } = scratch;
        let model = self.model;
        if !room(batch.lookups) {
            return Ok(false);
        }
        // Every successor is made whole for the step properties; otherwise
        // only the new ones are, by `admit`.
        let step_properties = self.properties.has_step_properties();
        if step_properties {
            batch.complete_all(self)?;
            let state = batch.state();
            for (successor, action, next) in batch.steps() {
                let doing =
                    || about_action(model, "checking the step properties of", action, state);
                if let Some(failure) = guard_panic(doing, || {
                    self.properties.check_step(model, state, action, next)
                })? {
                    ViolationSite::keep_least(
                        violation,
                        ViolationSite {
                            failure,
                            trace_id,
                            step_action: Some(successor.step),
                            length: depth + 1,
                            fingerprint: successor
                                .fingerprint
                                .unwrap_or_else(|| Fingerprint::of_bytes(state_bytes)),
                        },
                    );
                }
            }
        }
        // A step asleep is enabled: its state is no deadlock.
        let stuck = batch.successors.is_empty() && batch.slept.is_empty();
        if stuck && self.checks.deadlock && !self.model.is_terminal(batch.state()) {
            ViolationSite::keep_least(
                violation,
                ViolationSite {
                    failure: self.properties.deadlock(),
                    trace_id,
                    step_action: None,
                    length: depth,
                    fingerprint: Fingerprint::of_bytes(state_bytes),
                },
            );
        }
        let sleep = self.sleep_sets();
        if let Some(sleep) = sleep {
            sleep.count_skipped(batch.slept.len());
            if self.checks.coverage {
                for &index in batch.slept.iter() {
                    tally.enabled(model.action_kind(&batch.actions[index as usize]));
                }
            }
            batch.name_taken_keys(model)?;
        }
        let reduced = match self.reduction {
            Some(Reduction::Persistent(reduction)) => {
                batch.name_persistent_set(model, reduction)?
            }
            _ => false,
        };
        // With a persistent set, its steps are visited first; the others
        // only if none of them leads one level deeper (the proviso, see
        // `crate::reduction`).
        let mut deeper = false;
        let mut visited = 0;
        batch.order_visits();
        for rank in 0..batch.successors.len() {
            let at = batch.visited_at(rank);
            if reduced && rank == batch.persistent.len() {
                let Some(Reduction::Persistent(reduction)) = self.reduction else {
                    unreachable!("a persistent set comes from the reduction");
                };
                reduction.count(!deeper);
                if deeper {
                    break;
                }
            }
            visited += 1;
            let (step, fingerprint) = {
                let successor = &batch.successors[at];
                (successor.step, successor.fingerprint)
            };
            let kind = self
                .checks
                .coverage
                .then(|| model.action_kind(&batch.actions[step as usize]));
            if let Some(kind) = &kind {
                tally.enabled(kind.clone());
            }
            let Some(fingerprint) = fingerprint else {
                continue; // a stuttering step: the state itself, stored already
            };
            let mut contribution = std::mem::take(&mut batch.contribution);
            if sleep.is_some() {
                sleep::contribution(&batch.asleep, &batch.keys, at, &mut contribution);
            }
            let (next, bytes, state) = batch.successor_mut(at);
            let mut admit = || {
                self.admit(
                    writer,
                    violation,
                    (next, (!step_properties).then_some(state)),
                    bytes,
                    fingerprint,
                    Some(trace_id),
                    step,
                    depth + 1,
                    on_new,
                )
            };
            let new = match sleep {
                Some(sleep) => sleep.admit(fingerprint, &contribution, admit),
                None => admit(),
            };
            batch.contribution = contribution;
            let new = new?;
            if let Some(Reduction::Persistent(reduction)) = self.reduction {
                if new {
                    reduction.note_new(fingerprint);
                }
                deeper = deeper || new || reduced && reduction.of_level_being_found(fingerprint);
            }
            if let (true, Some(kind)) = (new, kind) {
                tally.taken(kind);
            }
        }
        *generated += visited;
        batch.clear();
        Ok(true)
    }
}

/// `on_new` for a caller of an expander that writes every link (no
/// [`Expander::defer_links`]; an initial state's link is never deferred).
fn written_only<'f, S>(
    on_new: &'f mut impl FnMut(TraceId, &[u8], &S),
) -> impl FnMut(NewLink, &[u8], &S) + 'f {
    move |link, bytes, state| match link {
        NewLink::Written(id) => on_new(id, bytes, state),
        NewLink::Deferred { .. } => {
            unreachable!("links are deferred only by an expander that defers them")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::same_bytes;

    #[test]
    fn same_bytes_sees_a_difference_at_every_position_and_length() {
        for length in 0..=24u8 {
            let a: Vec<u8> = (0..length).collect();
            assert!(same_bytes(&a, &a.clone()), "length {length}");
            for at in 0..a.len() {
                let mut b = a.clone();
                b[at] ^= 0x80;
                assert!(!same_bytes(&a, &b), "length {length}, byte {at}");
            }
            assert!(!same_bytes(&a, &a[..a.len().saturating_sub(1)]) || a.is_empty());
        }
    }
}
