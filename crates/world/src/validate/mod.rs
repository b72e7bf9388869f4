//! Glue trace validation: a product's glue log replayed through the same cores.
//!
//! [`validate`] feeds every logged event to the node's core, from the same
//! state the product's node had, and requires the glue to have carried out
//! exactly the outputs the step returned, in order. It checks the
//! environment side of the glue as the World defines it:
//!
//! - a received message was sent earlier by its source to this node, and is
//!   not received more often than it was sent (unless duplication is allowed);
//! - a `FLUSHED` is the node's oldest pending `PERSIST`, with the same offset
//!   and bytes, and its bytes become durable;
//! - a `TIMER` fires only while armed and, if it was armed with a deadline
//!   (`SET_TIMER_AT`), once the node's clock has reached it; a `WAKE` only while pending, a
//!   `LOCAL_FAIL` only for a request the node was given, a `CHOICE` only
//!   once the node asked for it (`CHOOSE`);
//! - a node gets `START` first, and again only after a `crash` record (which
//!   loses its volatile part, unflushed persists, timers and wake-ups);
//! - a node's clock never goes back, and only a `TICK` moves it.
//!
//! The first record that breaks one of these is reported with its line.
//! Event and output kinds this module does not know (newer ABI kinds) are
//! still run through the core and compared, without environment checks.

pub mod glue_log;

use std::collections::{BTreeMap, BTreeSet, HashMap, VecDeque};

use crate::core::abi::{Config, Event, EventKind, Output, OutputKind, Outputs};
use crate::run::step::StepFailure;
use crate::system::spec::WorldSpec;
use crate::validate::glue_log::{format_record, Line, Record};

/// How the product's environment may behave.
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::validate::{glue_log, validate, Options};
/// use cmc_world::WorldSpec;
///
/// // The receiver, node 1, gets the sender's one DATA twice.
/// let log = glue_log::parse("cmc-glue-log 1
/// event 0 START
/// event 1 START
/// event 0 CLIENT
/// output 0 PERSIST payload=01000000
/// event 0 FLUSHED payload=01000000
/// output 0 SEND dst=1 payload=0100000000000000
/// output 0 SET_TIMER
/// event 1 RECV payload=0100000000000000
/// output 1 PERSIST id=4 payload=01000000
/// event 1 RECV payload=0100000000000000
/// ")?;
/// let spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
/// let strict = validate(&spec, &log, Options::default()).expect_err("sent once, received twice");
/// assert_eq!(strict.line, 11, "{strict}");
/// let duplicating = Options { allow_duplicates: true };
/// assert_eq!(validate(&spec, &log, duplicating).map(|summary| summary.events), Ok(6));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Options {
    /// The network may deliver a message more often than it was sent.
    pub allow_duplicates: bool,
}

/// What a valid log contained.
///
/// # Example
///
/// A glue log of a `reqack` sender that took a request, wrote it, and sent
/// it; then the same log with the write left out.
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::validate::{glue_log, validate, Options};
/// use cmc_world::WorldSpec;
///
/// let spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
/// let log = "cmc-glue-log 1
/// event 0 START
/// event 1 START
/// event 0 CLIENT id=0
/// output 0 PERSIST id=0 payload=01000000
/// event 0 FLUSHED id=0 payload=01000000
/// output 0 SEND dst=1 payload=0100000000000000
/// output 0 SET_TIMER id=0
/// ";
/// let summary = validate(&spec, &glue_log::parse(log)?, Options::default())
///     .map_err(|m| m.to_string())?;
/// assert_eq!((summary.events, summary.outputs, summary.in_flight), (4, 3, 1));
///
/// let no_write = log.replace("output 0 PERSIST id=0 payload=01000000\n", "");
/// let mismatch = validate(&spec, &glue_log::parse(&no_write)?, Options::default())
///     .expect_err("the glue skipped an output");
/// // Reported at the step whose output the glue dropped.
/// assert_eq!(mismatch.line, 4, "{mismatch}");
/// assert!(mismatch.message.contains("PERSIST"), "{mismatch}");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Events replayed through the cores.
    pub events: usize,
    /// Outputs the glue carried out, each equal to the step's.
    pub outputs: usize,
    /// Crash records.
    pub crashes: usize,
    /// Messages sent and never received when the log ends.
    pub in_flight: u64,
    /// Persists not yet flushed when the log ends, over all nodes.
    pub unflushed: usize,
}

/// The first record that breaks the contract (see also [`Summary`]'s and
/// [`Options`]' examples).
///
/// ```
/// use std::sync::Arc;
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::validate::{glue_log, validate, Options};
/// use cmc_world::WorldSpec;
///
/// let spec = WorldSpec::new(Arc::new(ReqAck::default()), 2).unwrap();
/// // The glue gave node 1 a message before starting it.
/// let text = "cmc-glue-log 1\nevent 0 START\nevent 1 RECV src=0 payload=0100000000000000\n";
/// let log = glue_log::parse(text)?;
/// let mismatch = validate(&spec, &log, Options::default()).expect_err("node 1 never started");
/// assert_eq!(mismatch.line, 3, "{mismatch}");
/// assert!(mismatch.to_string().starts_with("line 3: "));
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mismatch {
    /// Its line in the log.
    pub line: usize,
    /// What is wrong, in words.
    pub message: String,
}

impl std::fmt::Display for Mismatch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

/// Replays `log` through the cores of `spec` (node `n` runs
/// `spec.core_of(n)` with `spec.core_params`) and checks the glue (see the
/// module's list): the [`Summary`] of a valid log, or its first
/// [`Mismatch`]. A step's outputs the glue has not all carried out when the
/// next record about any node comes (or the log ends) are a mismatch too.
/// See [`Summary`]'s example.
pub fn validate(spec: &WorldSpec, log: &[Line], options: Options) -> Result<Summary, Mismatch> {
    let mut glue = Glue::new(spec, options);
    for line in log {
        glue.record(line)?;
    }
    glue.close_step()?;
    glue.summary.in_flight = glue.messages.values().map(|count| count.in_flight).sum();
    glue.summary.unflushed = glue.nodes.iter().map(|node| node.persists.len()).sum();
    Ok(glue.summary)
}

/// One node as the product must have it.
struct Node {
    /// Durable part then volatile part.
    state: Vec<u8>,
    durable_size: usize,
    running: bool,
    clock: u64,
    /// Armed timers, with their deadline on the node's clock if they have one.
    timers: BTreeMap<u32, Option<u64>>,
    wakes: BTreeSet<u32>,
    persists: VecDeque<(u32, Vec<u8>)>,
    requests: BTreeSet<u32>,
    /// Random choices asked for (`CHOOSE`) and not made yet.
    choices: BTreeSet<u32>,
}

impl Node {
    /// Whether node `node` (this one) may take an event of `kind` now: only
    /// START when it is not running, anything else only when it is, and a
    /// clock that only TICK moves, forward.
    fn may_take(&mut self, node: u32, kind: EventKind, event: &Event) -> Result<(), String> {
        if kind == EventKind::Start {
            if self.running {
                return Err(format!(
                    "START to node {node}, which is running: a restart must follow a `crash` record"
                ));
            }
            self.running = true;
        } else if !self.running {
            return Err(format!(
                "{} to node {node}, which has not started (no START since it began or crashed)",
                kind.name()
            ));
        }
        if kind == EventKind::Tick {
            if event.clock < self.clock {
                return Err(format!(
                    "TICK moves node {node}'s clock back from {} to {}",
                    self.clock, event.clock
                ));
            }
            self.clock = event.clock;
        } else if event.clock != self.clock {
            return Err(format!(
                "{} carries clock {} but node {node}'s clock is {} (only TICK moves it)",
                kind.name(),
                event.clock,
                self.clock
            ));
        }
        Ok(())
    }
}

/// Copies of one message (source, destination, bytes).
#[derive(Default)]
struct Copies {
    sent: u64,
    in_flight: u64,
}

/// The step whose outputs the glue is carrying out.
struct OpenStep {
    node: u32,
    line: usize,
    event: String,
    returned: Vec<Output>,
    carried_out: usize,
}

struct Glue<'s> {
    spec: &'s WorldSpec,
    options: Options,
    nodes: Vec<Node>,
    messages: HashMap<(u32, u32, Vec<u8>), Copies>,
    open: Option<OpenStep>,
    summary: Summary,
}

impl<'s> Glue<'s> {
    fn new(spec: &'s WorldSpec, options: Options) -> Self {
        let nodes = (0..spec.nodes())
            .map(|node| {
                let core = spec.core_of(node);
                Node {
                    state: vec![0; core.durable_size() + core.volatile_size()],
                    durable_size: core.durable_size(),
                    running: false,
                    clock: 0,
                    timers: BTreeMap::new(),
                    wakes: BTreeSet::new(),
                    persists: VecDeque::new(),
                    requests: BTreeSet::new(),
                    choices: BTreeSet::new(),
                }
            })
            .collect();
        Glue {
            spec,
            options,
            nodes,
            messages: HashMap::new(),
            open: None,
            summary: Summary::default(),
        }
    }

    /// Takes one record; the error is the first bad record (this one, or
    /// the step before it, whose outputs the glue did not all carry out).
    fn record(&mut self, line: &Line) -> Result<(), Mismatch> {
        if !matches!(line.record, Record::Output { .. }) {
            self.close_step()?;
        }
        self.take(&line.record, line.number)
            .map_err(|message| Mismatch {
                line: line.number,
                message,
            })
    }

    fn take(&mut self, record: &Record, line: usize) -> Result<(), String> {
        match record {
            Record::Event { node, event } => {
                self.check_node(*node)?;
                self.environment_allows(*node, event)?;
                self.run_step(*node, event, line)
            }
            Record::Output { node, output } => self.carried_out(*node, output),
            Record::Crash { node } => {
                self.check_node(*node)?;
                let state = &mut self.nodes[*node as usize];
                let durable = state.durable_size;
                state.state[durable..].fill(0);
                state.running = false;
                state.timers.clear();
                state.wakes.clear();
                state.persists.clear();
                state.choices.clear();
                self.summary.crashes += 1;
                Ok(())
            }
        }
    }

    fn check_node(&self, node: u32) -> Result<(), String> {
        if (node as usize) < self.nodes.len() {
            Ok(())
        } else {
            Err(format!(
                "node {node} does not exist: the World has {} nodes (--nodes)",
                self.nodes.len()
            ))
        }
    }

    /// Whether the environment could have given `event` to `node` now; if so,
    /// consumes what it used (a message copy, a timer, a persist, ...).
    fn environment_allows(&mut self, node: u32, event: &Event) -> Result<(), String> {
        let nodes = self.nodes.len() as u32;
        let state = &mut self.nodes[node as usize];
        let Some(kind) = event.kind() else {
            return Ok(());
        };
        state.may_take(node, kind, event)?;
        match kind {
            EventKind::Recv => {
                if event.src >= nodes {
                    return Err(format!(
                        "RECV from node {}, which does not exist",
                        event.src
                    ));
                }
                let key = (event.src, node, event.payload().to_vec());
                let copies = self.messages.entry(key).or_default();
                if copies.in_flight > 0 {
                    copies.in_flight -= 1;
                } else if copies.sent == 0 {
                    return Err(format!(
                        "node {node} receives a message node {} never sent to it",
                        event.src
                    ));
                } else if !self.options.allow_duplicates {
                    return Err(format!(
                        "node {node} receives a message from node {} more often than it was sent \
                         ({} time(s)); pass --allow-duplicates if the network duplicates",
                        event.src, copies.sent
                    ));
                }
            }
            EventKind::Timer => match state.timers.remove(&event.id) {
                None => {
                    return Err(format!(
                        "timer {} fires at node {node}, which has not armed it \
                         (never set, cancelled, or already fired)",
                        event.id
                    ))
                }
                Some(Some(deadline)) if state.clock < deadline => {
                    return Err(format!(
                        "timer {} fires at node {node} at clock {}, before its deadline {deadline}",
                        event.id, state.clock
                    ))
                }
                Some(_) => {}
            },
            EventKind::Wake => {
                if !state.wakes.remove(&event.id) {
                    return Err(format!(
                        "wake-up {} runs at node {node}, which has not scheduled it",
                        event.id
                    ));
                }
            }
            EventKind::Flushed => {
                let flushed = (event.id, event.payload().to_vec());
                match state.persists.front() {
                    None => {
                        return Err(format!(
                            "FLUSHED at node {node} with no pending PERSIST: a flush that never happened"
                        ))
                    }
                    Some(oldest) if *oldest != flushed => {
                        return Err(format!(
                            "FLUSHED at node {node} (offset {}, {} bytes) is not its oldest pending \
                             PERSIST (offset {}, {} bytes)",
                            event.id,
                            event.len,
                            oldest.0,
                            oldest.1.len()
                        ))
                    }
                    Some(_) => {}
                }
                let (offset, bytes) = state.persists.pop_front().unwrap_or_default();
                let offset = offset as usize;
                state.state[offset..offset + bytes.len()].copy_from_slice(&bytes);
            }
            EventKind::Client => {
                state.requests.insert(event.id);
            }
            EventKind::LocalFail => {
                if !state.requests.contains(&event.id) {
                    return Err(format!(
                        "LOCAL_FAIL of request {} at node {node}, which was never given it",
                        event.id
                    ));
                }
            }
            EventKind::Choice => {
                if !state.choices.remove(&event.id) {
                    return Err(format!(
                        "choice {} is made at node {node}, which has not asked for it",
                        event.id
                    ));
                }
            }
            EventKind::Start | EventKind::Tick => {}
        }
        Ok(())
    }

    fn run_step(&mut self, node: u32, event: &Event, line: usize) -> Result<(), String> {
        let core = self.spec.core_of(node as usize);
        let config = Config {
            node,
            nodes: self.nodes.len() as u32,
            params: self.spec.core_params,
        };
        let mut out = Outputs::default();
        let state = &mut self.nodes[node as usize].state;
        let what = || format!("line {line} of the glue log (node {node}'s step)");
        crate::run::recorder::recorded(crate::run::recorder::Call::GlueStep, what, || {
            crate::run::step::run(core, &config, state, event, &mut out, false)
        })
        .map_err(|failure| {
            format!(
                "node {node}'s core fails on this event: {}",
                failure_text(&failure)
            )
        })?;
        self.summary.events += 1;
        self.open = Some(OpenStep {
            node,
            line,
            event: format_record(&Record::Event {
                node,
                event: *event,
            }),
            returned: out.items[..out.count as usize].to_vec(),
            carried_out: 0,
        });
        Ok(())
    }

    fn carried_out(&mut self, node: u32, output: &Output) -> Result<(), String> {
        let Some(step) = self.open.as_mut().filter(|step| step.node == node) else {
            return Err(format!(
                "an output of node {node} with no step of node {node} before it \
                 (each step's outputs follow its event)"
            ));
        };
        let shown = |output: &Output| {
            format_record(&Record::Output {
                node,
                output: *output,
            })
        };
        match step.returned.get(step.carried_out) {
            None => {
                return Err(format!(
                    "the glue carried out `{}`, but the step at line {} returned only {} output(s)",
                    shown(output),
                    step.line,
                    step.returned.len()
                ))
            }
            Some(returned) if !same_output(returned, output) => {
                return Err(format!(
                    "the glue carried out `{}` where the step at line {} returned `{}`",
                    shown(output),
                    step.line,
                    shown(returned)
                ))
            }
            Some(_) => step.carried_out += 1,
        }
        self.summary.outputs += 1;
        let state = &mut self.nodes[node as usize];
        match OutputKind::from_raw(output.kind) {
            Some(OutputKind::Send) => {
                let copies = self
                    .messages
                    .entry((node, output.dst, output.payload().to_vec()))
                    .or_default();
                copies.sent += 1;
                copies.in_flight += 1;
            }
            Some(OutputKind::SetTimer) => {
                state.timers.entry(output.id).or_insert(None);
            }
            Some(OutputKind::SetTimerAt) => {
                let deadline = output
                    .payload()
                    .try_into()
                    .map(u64::from_le_bytes)
                    .map_err(|_| "SET_TIMER_AT carries its deadline as 8 bytes".to_string())?;
                state.timers.insert(output.id, Some(deadline));
            }
            Some(OutputKind::CancelTimer) => {
                state.timers.remove(&output.id);
            }
            Some(OutputKind::Persist) => {
                state
                    .persists
                    .push_back((output.id, output.payload().to_vec()));
            }
            Some(OutputKind::Wake) => {
                state.wakes.insert(output.id);
            }
            Some(OutputKind::Choose) => {
                state.choices.insert(output.id);
            }
            Some(OutputKind::Reply) | None => {}
        }
        Ok(())
    }

    /// Ends the open step: every output it returned must have been carried out.
    fn close_step(&mut self) -> Result<(), Mismatch> {
        let Some(step) = self.open.take() else {
            return Ok(());
        };
        match step.returned.get(step.carried_out) {
            None => Ok(()),
            Some(missing) => Err(Mismatch {
                line: step.line,
                message: format!(
                    "the step `{}` returned {} output(s) but the glue carried out {}; \
                     the first it dropped: `{}`",
                    step.event,
                    step.returned.len(),
                    step.carried_out,
                    format_record(&Record::Output {
                        node: step.node,
                        output: *missing
                    })
                ),
            }),
        }
    }
}

/// Outputs are equal in their meaningful fields (kind, destination, id, payload).
fn same_output(a: &Output, b: &Output) -> bool {
    (a.kind, a.dst, a.id, a.payload()) == (b.kind, b.dst, b.id, b.payload())
}

fn failure_text(failure: &StepFailure) -> String {
    match failure {
        StepFailure::Error(crate::core::abi::CoreError::Code(code)) => {
            format!("it returned {code}")
        }
        StepFailure::Error(crate::core::abi::CoreError::OutputsFull) => {
            "it emitted more outputs, or a longer payload, than the ABI allows".into()
        }
        StepFailure::Error(crate::core::abi::CoreError::Library(text)) => text.clone(),
        StepFailure::NonDeterminism(text)
        | StepFailure::BadOutput(text)
        | StepFailure::Memory(text) => text.clone(),
    }
}
