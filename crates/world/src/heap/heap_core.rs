//! [`HeapCore`]: any [`HeapAdapter`] as a [`Core`], its node rebuilt by
//! replaying its journal at every step.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use crate::core::Core;
use crate::heap::journal::{EntryId, Journal, Record};
use crate::heap::HeapAdapter;
use crate::run::step::{panic_text, under_determinism_gate};

/// Out of every this many steps from a view that two histories reach, one
/// replays both and compares them (every one under the determinism gate).
const ALTERNATIVE_SAMPLE: u64 = 8;

/// A heap-state library as a core: the World stores the adapter's view as
/// the node's volatile part; each step replays the node's history from the
/// journal, checks the replay against the view, and delivers the event.
///
/// One `HeapCore` holds the journal of one run: use a new one for each
/// check (a World shares it between its nodes and workers).
pub struct HeapCore<A: HeapAdapter> {
    adapter: A,
    journal: Journal,
    alternative_steps: AtomicU64,
}

impl<A: HeapAdapter> HeapCore<A> {
    /// The core over `adapter`, with an empty journal.
    pub fn new(adapter: A) -> HeapCore<A> {
        HeapCore {
            adapter,
            journal: Journal::new(),
            alternative_steps: AtomicU64::new(0),
        }
    }

    /// The adapter.
    pub fn adapter(&self) -> &A {
        &self.adapter
    }

    /// The journal of the histories seen so far.
    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// The node that the history ending at `entry` builds, with its view.
    fn rebuild(&self, config: &Config, entry: EntryId) -> Result<(A::Node, Vec<u8>), CoreError> {
        let (durable, events) = self.journal.history(entry);
        let mut discarded = Outputs::default();
        let mut node = library("starting the node", || {
            self.adapter.start(config, &durable, &mut discarded)
        })?;
        for (index, event) in events.iter().enumerate() {
            discarded = Outputs::default();
            library(
                &format!("replaying event {index} of the node's history"),
                || self.adapter.step(&mut node, config, event, &mut discarded),
            )?;
        }
        let view = self.view(&node, config)?;
        Ok((node, view))
    }

    fn view(&self, node: &A::Node, config: &Config) -> Result<Vec<u8>, CoreError> {
        let mut view = vec![0; self.adapter.view_size()];
        library("taking the node's view", || {
            self.adapter.view(node, config, &mut view)
        })?;
        Ok(view)
    }

    /// Whether this step from a view with an alternative history compares both.
    fn sampled(&self) -> bool {
        under_determinism_gate()
            || self
                .alternative_steps
                .fetch_add(1, Ordering::Relaxed)
                .is_multiple_of(ALTERNATIVE_SAMPLE)
    }

    /// Delivers `event` to the node that `alternative` builds and compares
    /// its outputs and view with the first history's (`out`, `view`).
    fn compare_alternative(
        &self,
        config: &Config,
        alternative: EntryId,
        event: &Event,
        out: &Outputs,
        view: &[u8],
    ) -> Result<(), CoreError> {
        let (mut node, _) = self.rebuild(config, alternative)?;
        let mut other_out = Outputs::default();
        library("stepping the view's other history", || {
            self.adapter.step(&mut node, config, event, &mut other_out)
        })?;
        let other_view = self.view(&node, config)?;
        let same_outputs = out.as_slice().len() == other_out.as_slice().len()
            && out
                .as_slice()
                .iter()
                .zip(other_out.as_slice())
                .all(|(a, b)| {
                    (a.kind, a.dst, a.id, a.payload()) == (b.kind, b.dst, b.id, b.payload())
                });
        if same_outputs && other_view == view {
            return Ok(());
        }
        let (_, first_events) = self.journal.history(alternative);
        Err(CoreError::Library(format!(
            "the adapter's view is too coarse: two histories of node {} reach the same view but \
             behave differently on {} ({}); the other history has {} event(s) since its start. \
             Add what tells them apart to the view",
            config.node,
            event_name(event),
            if same_outputs {
                "their next views differ"
            } else {
                "their outputs differ"
            },
            first_events.len()
        )))
    }
}

impl<A: HeapAdapter> Core for HeapCore<A> {
    fn name(&self) -> &str {
        self.adapter.name()
    }

    fn durable_size(&self) -> usize {
        self.adapter.durable_size()
    }

    fn volatile_size(&self) -> usize {
        self.adapter.view_size()
    }

    fn needs_memory_guards(&self) -> bool {
        self.adapter.needs_memory_guards()
    }

    fn step(
        &self,
        config: &Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        if event.kind() == Some(EventKind::Start) {
            let node = library("starting the node", || {
                self.adapter.start(config, durable, out)
            })?;
            let view = self.view(&node, config)?;
            volatile.copy_from_slice(&view);
            let root = Record::Start {
                durable: durable.into(),
            };
            self.journal.record(Journal::key(config.node, &view), root);
            return Ok(());
        }
        let known = self
            .journal
            .lookup(Journal::key(config.node, volatile))
            .ok_or_else(|| {
                CoreError::Library(format!(
                    "no history of node {} reaches its view in this state: the World's state was \
                     not made by this run (heap-state cores cannot resume a checkpoint or move \
                     between processes)",
                    config.node
                ))
            })?;
        let (mut node, replayed) = self.rebuild(config, known.first)?;
        if let Some(offset) = replayed.iter().zip(&*volatile).position(|(a, b)| a != b) {
            return Err(CoreError::Library(format!(
                "replaying node {}'s history did not reproduce its view (byte {offset} differs): \
                 the library is not deterministic under this adapter (randomness, time or state \
                 it does not take from its events)",
                config.node
            )));
        }
        library(&format!("handling {}", event_name(event)), || {
            self.adapter.step(&mut node, config, event, out)
        })?;
        let view = self.view(&node, config)?;
        drop(node);
        volatile.copy_from_slice(&view);
        let step = Record::Step {
            parent: known.first,
            event: *event,
        };
        self.journal.record(Journal::key(config.node, &view), step);
        match known.alternative {
            Some(alternative) if self.sampled() => {
                self.compare_alternative(config, alternative, event, out, &view)
            }
            _ => Ok(()),
        }
    }

    fn describe_state(&self, config: &Config, durable: &[u8], volatile: &[u8]) -> Option<String> {
        self.adapter.describe_state(config, durable, volatile)
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        self.adapter.describe_message(config, message)
    }

    fn describe_reply(&self, config: &Config, payload: &[u8]) -> Option<String> {
        self.adapter.describe_reply(config, payload)
    }

    fn describe_operation(&self, config: &Config, payload: &[u8]) -> Option<String> {
        self.adapter.describe_operation(config, payload)
    }
}

/// Runs a call into the library, a panic becoming [`CoreError::Library`].
fn library<T>(doing: &str, call: impl FnOnce() -> Result<T, CoreError>) -> Result<T, CoreError> {
    catch_unwind(AssertUnwindSafe(call)).unwrap_or_else(|panic| {
        Err(CoreError::Library(format!(
            "the library panicked while {doing}: {}",
            panic_text(&*panic)
        )))
    })
}

fn event_name(event: &Event) -> String {
    match event.kind() {
        Some(kind) => format!("{} (id {}, from {})", kind.name(), event.id, event.src),
        None => format!("event kind {}", event.kind),
    }
}
