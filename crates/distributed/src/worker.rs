//! One timely worker's part of the search: the dataflow that carries states
//! to their owners, and the level protocol driven around it.
//!
//! Every level takes two rounds (timestamps) of the dataflow. In the first,
//! each worker expands the states of the level it owns and sends every
//! successor, as canonical bytes, to the worker owning its fingerprint; when
//! the round is complete, each owner admits what it received (new states
//! form its part of the next level). In the second, every worker broadcasts
//! a [`LevelSummary`], and all of them take the same decision from the same
//! summaries: go on, stop at a violation (the least one, after the whole
//! level), or finish. A counterexample is then walked back one round per
//! state, each owner answering with the parent link of its state.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use cmc_model::{Encode, Fingerprint, Model};
use cmc_search::{PathStep, PropertySet};
use serde_bytes::ByteBuf;
use timely::container::CapacityContainerBuilder;
use timely::dataflow::channels::pact::Exchange;
use timely::dataflow::operators::generic::operator::Operator;
use timely::dataflow::operators::{Input, Probe};
use timely::dataflow::{InputHandle, ProbeHandle};
use timely::worker::Worker;

use crate::checkpoint::{Checkpoints, PartRef, RunCounters, WorkerPart};
use crate::liveness::Lost;
use crate::shard::{owner, Level, Link, Shard};
use crate::wire::{self, Candidate, Control, LevelSummary, Message, RecordWriter, NO_PARENT};

/// Longest a worker parks waiting for its peers before it looks again (a
/// lost peer is noticed by the communication threads, which wake it).
const PARK: Duration = Duration::from_millis(100);
/// Received states whose table slots are fetched before they are admitted.
const PREFETCH_AHEAD: usize = 16;
/// Batches sent between two steps of the worker during an expansion.
const BATCHES_PER_STEP: usize = 8;
/// Most received batches a worker keeps to write its own batches in: the
/// buffers go round between workers instead of being freed by one thread
/// and allocated by another (which makes the allocator give pages back to
/// the kernel and fault them in again, across the process's threads).
const SPARE_BATCHES: usize = 64;

/// What every worker of a run is given.
pub(crate) struct Settings {
    pub max_depth: Option<u64>,
    pub check_deadlock: bool,
    /// Worker threads per process (worker `w` is in process `w / threads`).
    pub threads: usize,
    /// Whether worker 0 prints a line per level on stderr.
    pub progress: bool,
    /// When this flag becomes true, the run stops at the next level
    /// boundary, on every process (any process's flag stops all).
    pub interrupt: Option<Arc<AtomicBool>>,
    /// Where the reason appears when a peer process is lost (silent for
    /// too long); `None` for a run of one process.
    pub lost: Option<Lost>,
    /// Where and how often checkpoints are saved, and the one resumed.
    pub checkpoints: Option<Checkpointing>,
}

/// The checkpoints of a run, as its workers see them.
pub(crate) struct Checkpointing {
    pub store: Checkpoints,
    /// Least time between two checkpoints (one is also saved on interrupt).
    pub interval: Duration,
    /// The checkpoint this run resumes, if it does.
    pub resumed: Option<Resumed>,
}

/// A checkpoint loaded to be resumed.
pub(crate) struct Resumed {
    pub counters: RunCounters,
    /// Each local worker's part, taken by the worker as it starts.
    pub parts: Mutex<Vec<Option<WorkerPart>>>,
}

/// What a worker knows when the search ends: the same on every worker.
#[derive(Debug, Clone, Default)]
pub(crate) struct Ending {
    pub distinct_states: u64,
    pub states_generated: u64,
    pub depth: u64,
    pub states_left_on_queue: u64,
    pub violation: Option<Candidate>,
    /// The path to the violation's anchor, initial state first.
    pub path: Vec<PathStep>,
    pub witnesses: Vec<String>,
    pub error: Option<String>,
    /// Whether the run was interrupted (before its end).
    pub interrupted: bool,
    /// Whether some worker asked for a checkpoint at the last level.
    pub checkpoint_due: bool,
    /// Whether a checkpoint was saved (the last one is where the run stopped,
    /// if it was interrupted).
    pub saved: bool,
    pub sent_bytes: u64,
    pub remote_bytes: u64,
}

/// Messages delivered to this worker, by kind, with the round they were
/// sent in (a peer that finished a round may already send in the next).
#[derive(Default)]
struct Inbox {
    batches: Vec<(u64, ByteBuf)>,
    controls: Vec<(u64, Control)>,
}

/// Takes the items of `round` (and any earlier) out of `items`.
fn take_round<T>(items: &mut Vec<(u64, T)>, round: u64) -> Vec<T> {
    let (done, later): (Vec<_>, Vec<_>) = std::mem::take(items)
        .into_iter()
        .partition(|(time, _)| *time <= round);
    *items = later;
    done.into_iter().map(|(_, item)| item).collect()
}

/// The worker's side of the dataflow: where it sends and when a round is over.
struct Rounds {
    input: InputHandle<u64, CapacityContainerBuilder<Vec<Message>>>,
    probe: ProbeHandle<u64>,
    inbox: Rc<RefCell<Inbox>>,
    /// Where a lost peer is reported, ending every wait for a round.
    lost: Option<Lost>,
}

/// Why a worker gave up waiting for a round: a peer process was lost.
#[derive(Debug)]
pub(crate) struct PeerLost(pub String);

impl Rounds {
    /// Builds the dataflow: messages are routed to their addressee and
    /// land in its inbox.
    fn new(worker: &mut Worker, lost: Option<Lost>) -> Rounds {
        let mut input = InputHandle::new();
        let probe = ProbeHandle::new();
        let inbox = Rc::new(RefCell::new(Inbox::default()));
        let sink = Rc::clone(&inbox);
        worker.dataflow::<u64, _, _>(|scope| {
            scope
                .input_from(&mut input)
                .unary::<CapacityContainerBuilder<Vec<()>>, _, _, _>(
                    Exchange::new(|message: &Message| message.to()),
                    "Inbox",
                    move |_, _| {
                        move |input, _output| {
                            input.for_each(|time, data| {
                                let round = *time.least().expect("a message has a time");
                                let mut inbox = sink.borrow_mut();
                                for message in data.drain(..) {
                                    match message {
                                        Message::States { records, .. } => {
                                            inbox.batches.push((round, records))
                                        }
                                        Message::Control { control, .. } => {
                                            inbox.controls.push((round, control))
                                        }
                                    }
                                }
                            });
                        }
                    },
                )
                .probe_with(&probe);
        });
        Rounds {
            input,
            probe,
            inbox,
            lost,
        }
    }

    /// Ends the current round and steps the worker until every message of
    /// the round, from every worker, is in its addressee's inbox (calling
    /// `arrived` as messages come in), or until a peer is lost.
    fn finish_with(
        &mut self,
        worker: &mut Worker,
        mut arrived: impl FnMut(&mut Rounds),
    ) -> Result<(), PeerLost> {
        let next = *self.input.time() + 1;
        self.input.advance_to(next);
        while self.probe.less_than(&next) {
            if let Some(reason) = self.lost.as_ref().and_then(|lost| lost.get()) {
                return Err(PeerLost(reason.clone()));
            }
            worker.step_or_park(Some(PARK));
            arrived(self);
        }
        arrived(self);
        Ok(())
    }

    /// [`Rounds::finish_with`], with nothing to do as messages arrive.
    fn finish(&mut self, worker: &mut Worker) -> Result<(), PeerLost> {
        self.finish_with(worker, |_| {})
    }

    /// Sends `control` to every worker.
    fn broadcast(&mut self, peers: usize, control: &Control) {
        for to in 0..peers {
            self.input.send(Message::Control {
                to: to as u32,
                control: control.clone(),
            });
        }
    }

    /// The round just finished.
    fn finished_round(&self) -> u64 {
        *self.input.time() - 1
    }

    /// The control messages of the round just finished.
    fn take_controls(&mut self) -> Vec<Control> {
        let round = self.finished_round();
        take_round(&mut self.inbox.borrow_mut().controls, round)
    }
}

/// One worker of the search.
struct Search<'a, M: Model> {
    model: &'a M,
    settings: &'a Settings,
    properties: PropertySet<M>,
    index: usize,
    peers: usize,
    shard: Shard,
    /// Per owner, the records not yet sent.
    outboxes: Vec<RecordWriter>,
    /// Buffers of batches admitted, for the batches to send.
    spare: Vec<Vec<u8>>,
    batches_since_step: usize,
    sent_bytes: u64,
    remote_bytes: u64,
    /// The round whose states are being admitted, as they arrive.
    admit_round: u64,
    /// The level they are admitted into.
    admit_level: u64,
    /// The new states admitted so far: this worker's part of the next level.
    next: Level,
    /// The least violation found in the current level.
    found: Option<Candidate>,
    /// Why this worker cannot go on, if it cannot.
    error: Option<String>,
}

/// Runs worker `worker`'s part of the search of `model`; `Err` if a peer
/// process was lost.
pub(crate) fn run<M: Model>(
    worker: &mut Worker,
    model: &Arc<M>,
    settings: &Settings,
) -> Result<Ending, PeerLost> {
    let peers = worker.peers();
    let mut search = Search {
        model: model.as_ref(),
        settings,
        properties: PropertySet::new(model.properties()),
        index: worker.index(),
        peers,
        shard: Shard::default(),
        outboxes: (0..peers).map(|_| RecordWriter::default()).collect(),
        spare: Vec::new(),
        batches_since_step: 0,
        sent_bytes: 0,
        remote_bytes: 0,
        admit_round: 0,
        admit_level: 1,
        next: Level::default(),
        found: None,
        error: None,
    };
    let mut rounds = Rounds::new(worker, settings.lost.clone());
    let ending = search.explore(worker, &mut rounds);
    drop(rounds);
    ending
}

impl<M: Model> Search<'_, M> {
    /// Level after level until the search ends; then the counterexample's path.
    fn explore(&mut self, worker: &mut Worker, rounds: &mut Rounds) -> Result<Ending, PeerLost> {
        let mut ending = Ending::default();
        let mut generated = 0;
        let mut level = Level::default();
        let mut depth: u64 = 0;
        // States of `level`, all workers.
        let mut level_total: u64 = 0;
        // A resumed run starts by expanding the level it saved; a new one by
        // admitting the initial states, sent by worker 0 to their owners.
        let mut expand_first = false;
        if let Some(counters) = self.resume(&mut level, &mut ending) {
            depth = counters.depth;
            level_total = counters.level_states;
            expand_first = true;
        } else {
            self.expecting(rounds, 1);
            if self.index == 0 {
                let mut initial = Vec::new();
                self.model.init_states(&mut initial);
                let mut bytes = Vec::new();
                for (index, state) in initial.iter().enumerate() {
                    bytes.clear();
                    state.encode(&mut bytes);
                    let step = u32::try_from(index).expect("at most u32::MAX initial states");
                    self.send_state(worker, rounds, NO_PARENT, step, &bytes);
                }
                generated = initial.len() as u64;
            }
        }
        let mut last_saved = Instant::now();
        loop {
            if expand_first {
                if self.settings.max_depth.is_some_and(|max| depth >= max) {
                    ending.states_left_on_queue = level_total;
                    break;
                }
                generated = 0;
                self.expecting(rounds, depth + 1);
                if let Err(problem) = self.expand(worker, rounds, &level, depth, &mut generated) {
                    self.error.get_or_insert(problem);
                }
            }
            expand_first = true;
            self.flush(rounds);
            // The successors of level `depth` are admitted by their owners
            // as they arrive, until the round is over.
            self.finish_admitting(worker, rounds)?;
            let next = std::mem::take(&mut self.next);
            let summary = LevelSummary {
                worker: self.index as u32,
                new_states: next.len() as u64,
                generated,
                violation: self.found.take(),
                witnesses: self.properties.reached_witnesses(),
                error: self.error.take(),
                interrupted: self
                    .settings
                    .interrupt
                    .as_ref()
                    .is_some_and(|flag| flag.load(Ordering::Relaxed)),
                checkpoint_due: self
                    .settings
                    .checkpoints
                    .as_ref()
                    .is_some_and(|checkpoints| last_saved.elapsed() >= checkpoints.interval),
                sent_bytes: self.sent_bytes,
                remote_bytes: self.remote_bytes,
            };
            rounds.broadcast(self.peers, &Control::LevelDone(summary));
            rounds.finish(worker)?;
            level_total = aggregate(&rounds.take_controls(), &mut ending);
            let new_level_nonempty = level_total > 0;
            if ending.error.is_some() {
                break;
            }
            if ending.violation.is_some() {
                // The level is finished; its new states are left unexpanded.
                // `depth` counts the levels reached (TLC's convention).
                ending.depth = depth + u64::from(new_level_nonempty);
                ending.states_left_on_queue = level_total;
                break;
            }
            if !new_level_nonempty {
                ending.depth = depth;
                break;
            }
            depth += 1;
            ending.depth = depth;
            level = next;
            let save = self.settings.checkpoints.is_some()
                && (ending.interrupted || ending.checkpoint_due);
            if save {
                let counters = RunCounters {
                    depth,
                    distinct_states: ending.distinct_states,
                    states_generated: ending.states_generated,
                    level_states: level_total,
                    witnesses: ending.witnesses.clone(),
                };
                if let Some(problem) = self.save(worker, rounds, &level, &counters)? {
                    ending.error = Some(problem);
                    break;
                }
                ending.saved = true;
                last_saved = Instant::now();
            }
            if ending.interrupted {
                ending.states_left_on_queue = level_total;
                break;
            }
            if self.settings.progress && self.index == 0 {
                eprintln!(
                    "cmc: level {depth}: {} distinct states, {} generated, {level_total} to expand{}",
                    ending.distinct_states,
                    ending.states_generated,
                    if save { "; checkpoint saved" } else { "" }
                );
            }
        }
        drop(level);
        if let Some(found) = &ending.violation {
            if ending.error.is_none() {
                match self.walk_back(worker, rounds, found.anchor, found.length)? {
                    Ok(path) => ending.path = path,
                    Err(problem) => ending.error = Some(problem),
                }
            }
        }
        Ok(ending)
    }

    /// Takes this worker's part of the checkpoint being resumed, if any:
    /// its shard and counters into `self`, its part of the level into
    /// `level`, the run's counters into `ending`.
    fn resume(&mut self, level: &mut Level, ending: &mut Ending) -> Option<RunCounters> {
        let resumed = self.settings.checkpoints.as_ref()?.resumed.as_ref()?;
        let local = self.index % self.settings.threads;
        let part = resumed
            .parts
            .lock()
            .expect("no worker panics while taking its part")
            .get_mut(local)
            .and_then(Option::take)
            .expect("every local worker has its part of the checkpoint");
        self.shard = part.shard;
        *level = part.level;
        self.sent_bytes = part.sent_bytes;
        self.remote_bytes = part.remote_bytes;
        let counters = resumed.counters.clone();
        ending.depth = counters.depth;
        ending.distinct_states = counters.distinct_states;
        ending.states_generated = counters.states_generated;
        ending.witnesses = counters.witnesses.clone();
        Some(counters)
    }

    /// Saves this worker's part of the checkpoint of the level `level`
    /// (whose run counters are `counters`); once every worker has, each
    /// process's first worker commits its process's checkpoint. Every
    /// worker learns whether every part and every commit succeeded: the
    /// reason why not, if not.
    fn save(
        &mut self,
        worker: &mut Worker,
        rounds: &mut Rounds,
        level: &Level,
        counters: &RunCounters,
    ) -> Result<Option<String>, PeerLost> {
        let checkpoints = &self
            .settings
            .checkpoints
            .as_ref()
            .expect("only a run with checkpoints saves")
            .store;
        let part = PartRef {
            shard: &self.shard,
            level,
            sent_bytes: self.sent_bytes,
            remote_bytes: self.remote_bytes,
        };
        let saved = checkpoints
            .save_part(counters.depth, self.index, part)
            .err();
        if let Some(problem) = agree_on_error(worker, rounds, self.peers, saved)? {
            return Ok(Some(problem));
        }
        let committed = if self.index.is_multiple_of(self.settings.threads) {
            checkpoints.commit(counters).err()
        } else {
            None
        };
        agree_on_error(worker, rounds, self.peers, committed)
    }
    /// Expands the states of `level` (at `depth`) this worker owns, sending
    /// each successor to its owner and keeping the least violation found.
    fn expand(
        &mut self,
        worker: &mut Worker,
        rounds: &mut Rounds,
        level: &Level,
        depth: u64,
        generated: &mut u64,
    ) -> Result<(), String> {
        let mut actions = Vec::new();
        let mut bytes = Vec::new();
        for (fingerprint, encoded) in level.iter() {
            let state = M::State::decode_exact(encoded).map_err(|problem| {
                format!("a stored state does not decode: {problem}; the model's Encode implementation is not a bijection")
            })?;
            actions.clear();
            self.model.actions(&state, &mut actions);
            let mut successors = 0u64;
            for (index, action) in actions.iter().enumerate() {
                let Some(next) = self.model.next_state(&state, action) else {
                    continue;
                };
                successors += 1;
                let step = u32::try_from(index).expect("at most u32::MAX actions per state");
                bytes.clear();
                next.encode(&mut bytes);
                if self.properties.has_step_properties() {
                    if let Some(failure) = self
                        .properties
                        .check_step(self.model, &state, action, &next)
                    {
                        let target = Fingerprint::of_bytes(&bytes);
                        Candidate::keep_least(
                            &mut self.found,
                            Candidate::new(
                                failure,
                                depth + 1,
                                target,
                                Fingerprint(fingerprint),
                                Some(step),
                            ),
                        );
                    }
                }
                // A stuttering step leads to `state` itself, stored at an
                // earlier level: its owner would find it and keep its link.
                if !cmc_search::same_bytes(&bytes, encoded) {
                    self.send_state(worker, rounds, fingerprint, step, &bytes);
                }
            }
            *generated += successors;
            if successors == 0 && self.settings.check_deadlock && !self.model.is_terminal(&state) {
                Candidate::keep_least(
                    &mut self.found,
                    Candidate::new(
                        self.properties.deadlock(),
                        depth,
                        Fingerprint(fingerprint),
                        Fingerprint(fingerprint),
                        None,
                    ),
                );
            }
        }
        Ok(())
    }

    /// Queues the state `bytes` (reached from `parent` by action `step`)
    /// for its owner, sending the owner's batch when it is full.
    fn send_state(
        &mut self,
        worker: &mut Worker,
        rounds: &mut Rounds,
        parent: u128,
        step: u32,
        bytes: &[u8],
    ) {
        let to = owner(Fingerprint::of_bytes(bytes).0, self.peers);
        self.outboxes[to].push(parent, step, bytes);
        if self.outboxes[to].len() >= wire::BATCH_BYTES {
            self.send_batch(rounds, to);
            self.batches_since_step += 1;
            if self.batches_since_step >= BATCHES_PER_STEP {
                // Let the dataflow move what was sent so far, and admit
                // what arrived (the inbox holds no more than it must).
                self.batches_since_step = 0;
                worker.step();
                self.admit_arrived(rounds);
            }
        }
    }

    /// Sends the records queued for worker `to`.
    fn send_batch(&mut self, rounds: &mut Rounds, to: usize) {
        let buffer = self.spare.pop().unwrap_or_default();
        let records = self.outboxes[to].take(buffer);
        if to != self.index {
            self.sent_bytes += records.len() as u64;
            if to / self.settings.threads != self.index / self.settings.threads {
                self.remote_bytes += records.len() as u64;
            }
        }
        rounds.input.send(Message::States {
            to: to as u32,
            records,
        });
    }

    /// Sends every queued record.
    fn flush(&mut self, rounds: &mut Rounds) {
        for to in 0..self.peers {
            if !self.outboxes[to].is_empty() {
                self.send_batch(rounds, to);
            }
        }
    }

    /// Starts a round whose states are admitted into level `level`.
    fn expecting(&mut self, rounds: &Rounds, level: u64) {
        self.admit_round = *rounds.input.time();
        self.admit_level = level;
    }

    /// Ends the round, admitting its states as they arrive, until every
    /// worker's states of the round are admitted.
    fn finish_admitting(
        &mut self,
        worker: &mut Worker,
        rounds: &mut Rounds,
    ) -> Result<(), PeerLost> {
        rounds.finish_with(worker, |rounds| self.admit_arrived(rounds))
    }

    /// Admits the states of the current round received so far (checking
    /// invariants and witnesses of new ones); a problem stops admissions
    /// and is reported in the level's summary.
    fn admit_arrived(&mut self, rounds: &mut Rounds) {
        if self.error.is_some() {
            return;
        }
        let batches = take_round(&mut rounds.inbox.borrow_mut().batches, self.admit_round);
        if batches.is_empty() {
            return;
        }
        let mut next = std::mem::take(&mut self.next);
        let mut found = self.found.take();
        let admitted = self.admit(&batches, &mut next, &mut found);
        self.next = next;
        self.found = found;
        if let Err(problem) = admitted {
            self.error = Some(problem);
        }
        let room = SPARE_BATCHES.saturating_sub(self.spare.len());
        self.spare
            .extend(batches.into_iter().take(room).map(ByteBuf::into_vec));
    }

    /// Admits the states of `batches` into level `self.admit_level`.
    fn admit(
        &mut self,
        batches: &[ByteBuf],
        next: &mut Level,
        violation: &mut Option<Candidate>,
    ) -> Result<(), String> {
        let level_tag = u32::try_from(self.admit_level)
            .map_err(|_| "the search is over 4 billion levels deep")?;
        // Each record is admitted once the slots of the next
        // `PREFETCH_AHEAD` have been prefetched.
        let mut pending = VecDeque::with_capacity(PREFETCH_AHEAD + 1);
        for batch in batches {
            for record in wire::records(batch) {
                let record = record?;
                let fingerprint = Fingerprint::of_bytes(record.state);
                self.shard.prefetch(fingerprint.0);
                pending.push_back((fingerprint, record));
                if pending.len() > PREFETCH_AHEAD {
                    if let Some((fingerprint, record)) = pending.pop_front() {
                        self.admit_record(fingerprint, record, level_tag, next, violation)?;
                    }
                }
            }
        }
        for (fingerprint, record) in pending {
            self.admit_record(fingerprint, record, level_tag, next, violation)?;
        }
        Ok(())
    }

    /// Admits `record` (whose state's fingerprint is `fingerprint`) into
    /// level `level`.
    fn admit_record(
        &mut self,
        fingerprint: Fingerprint,
        record: wire::Record<'_>,
        level: u32,
        next: &mut Level,
        violation: &mut Option<Candidate>,
    ) -> Result<(), String> {
        let link = Link {
            parent: record.parent,
            step: record.step,
            level,
        };
        if !self.shard.admit(fingerprint.0, link) {
            return Ok(());
        }
        let state = M::State::decode_exact(record.state).map_err(|problem| {
            format!("a state sent between workers does not decode: {problem}; the model's Encode implementation is not a bijection")
        })?;
        if let Some(failure) = self.properties.check_state(self.model, &state) {
            Candidate::keep_least(
                violation,
                Candidate::new(failure, u64::from(level), fingerprint, fingerprint, None),
            );
        }
        next.push(fingerprint.0, record.state);
        Ok(())
    }

    /// Follows parent links from `anchor` back to an initial state, one
    /// round per state: the owner of each state broadcasts its link. The
    /// inner `Err` is a cmc bug (a link missing or out of order).
    fn walk_back(
        &mut self,
        worker: &mut Worker,
        rounds: &mut Rounds,
        anchor: u128,
        length: u64,
    ) -> Result<Result<Vec<PathStep>, String>, PeerLost> {
        let mut path = Vec::new();
        let mut current = anchor;
        // A path has at most `length` states; the bound guards against a
        // corrupt link table looping.
        for _ in 0..=length {
            if owner(current, self.peers) == self.index {
                let reply = match self.shard.link(current) {
                    Some(link) => Control::Link {
                        fingerprint: current,
                        parent: link.parent,
                        step: link.step,
                    },
                    None => Control::Missing {
                        fingerprint: current,
                    },
                };
                rounds.broadcast(self.peers, &reply);
            }
            rounds.finish(worker)?;
            match rounds.take_controls().as_slice() {
                [Control::Link {
                    fingerprint,
                    parent,
                    step,
                }] if *fingerprint == current => {
                    path.push(PathStep {
                        fingerprint: Fingerprint(current),
                        step: *step,
                    });
                    if *parent == NO_PARENT {
                        path.reverse();
                        return Ok(Ok(path));
                    }
                    current = *parent;
                }
                [Control::Missing { fingerprint }] => {
                    return Ok(Err(format!(
                        "the parent link of state {} is missing from its shard; this is a cmc bug, please report it",
                        Fingerprint(*fingerprint)
                    )))
                }
                other => {
                    return Ok(Err(format!(
                        "walking back the counterexample, worker {} received {other:?} for state {}; this is a cmc bug, please report it",
                        self.index,
                        Fingerprint(current)
                    )))
                }
            }
        }
        Ok(Err("the counterexample's parent links form a path longer than its length; this is a cmc bug, please report it".into()))
    }
}

/// Tells every worker this one's `error` (if any) and learns theirs, in one
/// round: the first error, by worker order, or `None` if there was none.
fn agree_on_error(
    worker: &mut Worker,
    rounds: &mut Rounds,
    peers: usize,
    error: Option<String>,
) -> Result<Option<String>, PeerLost> {
    rounds.broadcast(
        peers,
        &Control::Saved {
            worker: worker.index() as u32,
            error,
        },
    );
    rounds.finish(worker)?;
    let mut errors: Vec<(u32, String)> = rounds
        .take_controls()
        .into_iter()
        .filter_map(|control| match control {
            Control::Saved {
                worker,
                error: Some(error),
            } => Some((worker, error)),
            _ => None,
        })
        .collect();
    errors.sort();
    Ok(errors
        .into_iter()
        .next()
        .map(|(_, error)| format!("the checkpoint could not be written: {error}")))
}

/// Adds the summaries of one level, from every worker, to `ending`;
/// returns the number of new states of the level. Every worker computes
/// the same result from the same summaries.
fn aggregate(controls: &[Control], ending: &mut Ending) -> u64 {
    let mut summaries: Vec<&LevelSummary> = controls
        .iter()
        .filter_map(|control| match control {
            Control::LevelDone(summary) => Some(summary),
            _ => None,
        })
        .collect();
    summaries.sort_by_key(|summary| summary.worker);
    let mut new_states = 0;
    ending.checkpoint_due = false;
    ending.sent_bytes = 0;
    ending.remote_bytes = 0;
    for summary in summaries {
        new_states += summary.new_states;
        ending.states_generated += summary.generated;
        if let Some(found) = &summary.violation {
            Candidate::keep_least(&mut ending.violation, found.clone());
        }
        for name in &summary.witnesses {
            if !ending.witnesses.contains(name) {
                ending.witnesses.push(name.clone());
            }
        }
        if ending.error.is_none() {
            ending.error = summary.error.clone();
        }
        ending.interrupted |= summary.interrupted;
        ending.checkpoint_due |= summary.checkpoint_due;
        ending.sent_bytes += summary.sent_bytes;
        ending.remote_bytes += summary.remote_bytes;
    }
    ending.distinct_states += new_states;
    new_states
}
