//! Heap-state cores: a library whose node lives on the heap is checked as
//! exactly as a fixed-size core, and an adapter that breaks the contract
//! (a view too coarse, a library that is not deterministic, a panic) is a
//! failing verdict that says so, never a pass.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use cmc_search::{Checker, Outcome, Verdict};
use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
use cmc_world::heap::{HeapAdapter, HeapCore};
use cmc_world::{Core, TypedCore, World, WorldSpec};

/// The "library": a node that keeps the client requests it has seen in a
/// `Vec`, persists how many it has seen in all (its durable counter), and
/// answers each request with that number plus the sum of the ids it holds.
struct Registry {
    seen: Vec<u32>,
    base: u32,
}

impl Registry {
    fn total(&self) -> u32 {
        self.base + self.seen.len() as u32
    }

    fn on_request(&mut self, id: u32, out: &mut Outputs) -> Result<(), CoreError> {
        if !self.seen.contains(&id) {
            self.seen.push(id);
            out.persist(0, &self.total().to_le_bytes())?;
        }
        let sum: u32 = self.seen.iter().sum();
        out.reply(id, &(self.total() + sum).to_le_bytes())
    }
}

/// What the adapter puts in the view.
#[derive(Clone, Copy, PartialEq)]
enum View {
    /// The requests seen, as a set, and the durable counter: faithful.
    Faithful,
    /// How many requests were seen, not which: too coarse, the reply
    /// depends on which.
    CountOnly,
    /// The faithful view plus a global counter: not a function of the events.
    WithGlobal,
}

struct RegistryAdapter {
    view: View,
    panic_on: Option<u32>,
}

static GLOBAL: AtomicU32 = AtomicU32::new(0);

impl HeapAdapter for RegistryAdapter {
    type Node = Registry;

    fn name(&self) -> &str {
        "registry"
    }
    fn durable_size(&self) -> usize {
        4
    }
    fn view_size(&self) -> usize {
        12
    }
    fn needs_memory_guards(&self) -> bool {
        false
    }
    fn start(&self, _: &Config, durable: &[u8], _: &mut Outputs) -> Result<Registry, CoreError> {
        let base = u32::from_le_bytes(durable.try_into().expect("4 durable bytes"));
        Ok(Registry {
            seen: Vec::new(),
            base,
        })
    }
    fn step(
        &self,
        node: &mut Registry,
        _: &Config,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        if event.kind() != Some(EventKind::Client) {
            return Ok(());
        }
        if self.panic_on == Some(event.id) {
            panic!("request {} is not supported", event.id);
        }
        node.on_request(event.id, out)
    }
    fn view(&self, node: &Registry, _: &Config, view: &mut [u8]) -> Result<(), CoreError> {
        let set: u32 = node.seen.iter().map(|id| 1 << id).sum();
        let (first, base) = match self.view {
            View::CountOnly => (node.seen.len() as u32, node.base),
            View::Faithful | View::WithGlobal => (set, node.base),
        };
        view[..4].copy_from_slice(&first.to_le_bytes());
        view[4..8].copy_from_slice(&base.to_le_bytes());
        if self.view == View::WithGlobal {
            let tick = GLOBAL.fetch_add(1, Ordering::Relaxed);
            view[8..].copy_from_slice(&tick.to_le_bytes());
        }
        Ok(())
    }
}

/// The same protocol written as a fixed-size core: the set of requests
/// seen as a bit mask, and the durable counter.
struct RegistryTwin;

impl TypedCore for RegistryTwin {
    type Durable = u32;
    type Volatile = [u32; 3];

    fn name(&self) -> &str {
        "registry-twin"
    }
    fn step(
        &self,
        _: &Config,
        durable: &u32,
        state: &mut [u32; 3],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        match event.kind() {
            Some(EventKind::Start) => *state = [0, *durable, 0],
            Some(EventKind::Client) => {
                let total = |state: &[u32; 3]| state[1] + state[0].count_ones();
                if state[0] & 1 << event.id == 0 {
                    state[0] |= 1 << event.id;
                    out.persist(0, &total(state).to_le_bytes())?;
                }
                let sum: u32 = (0..32).filter(|id| state[0] & 1 << id != 0).sum();
                out.reply(event.id, &(total(state) + sum).to_le_bytes())?;
            }
            _ => {}
        }
        Ok(())
    }
}

const FAULTS: [&str; 5] = [
    "requests=3",
    "retries=1",
    "crashes=1",
    "restarts=1",
    "crash_nodes=0",
];

fn check(core: Arc<dyn Core>, nodes: usize, words: &[&str], workers: usize) -> Outcome<World> {
    check_gated(core, nodes, words, workers, false)
}

/// As [`check`], with the determinism gate on or off.
fn check_gated(
    core: Arc<dyn Core>,
    nodes: usize,
    words: &[&str],
    workers: usize,
    determinism_gate: bool,
) -> Outcome<World> {
    let mut spec = WorldSpec::new(core, nodes).unwrap();
    spec.set_all(words).unwrap();
    spec.check_determinism = determinism_gate;
    Checker::new(World::new(spec)).workers(workers).run()
}

fn heap(view: View) -> Arc<dyn Core> {
    Arc::new(HeapCore::new(RegistryAdapter {
        view,
        panic_on: None,
    }))
}

fn error(outcome: &Outcome<World>) -> &str {
    match &outcome.verdict {
        Verdict::Error { message } => message,
        other => panic!("expected a failing verdict, got {other:?}"),
    }
}

#[test]
fn a_heap_core_explores_exactly_the_states_of_its_fixed_size_twin() {
    let twin = check(Arc::new(RegistryTwin), 2, &FAULTS, 1);
    assert_eq!(twin.verdict, Verdict::Pass);
    assert!(twin.stats.complete);
    for workers in [1, 2] {
        let outcome = check(heap(View::Faithful), 2, &FAULTS, workers);
        assert_eq!(outcome.verdict, Verdict::Pass, "{workers} worker(s)");
        assert!(outcome.stats.complete);
        assert_eq!(
            (
                outcome.stats.distinct_states,
                outcome.stats.states_generated,
                outcome.stats.depth
            ),
            (
                twin.stats.distinct_states,
                twin.stats.states_generated,
                twin.stats.depth
            ),
            "{workers} worker(s)"
        );
    }
}

#[test]
fn the_check_that_equal_views_behave_alike_passes_a_faithful_view() {
    let outcome = check_gated(heap(View::Faithful), 2, &FAULTS, 2, true);
    assert_eq!(outcome.verdict, Verdict::Pass);
}

#[test]
fn a_view_too_coarse_to_tell_histories_apart_is_a_core_fault() {
    let outcome = check_gated(heap(View::CountOnly), 1, &FAULTS, 1, true);
    let message = error(&outcome);
    assert!(
        message.contains("the adapter's view is too coarse"),
        "{message}"
    );
    assert!(message.contains("CLIENT"), "{message}");
    assert!(!outcome.stats.complete);
}

#[test]
fn a_library_that_does_not_replay_to_its_view_is_a_core_fault() {
    let outcome = check(heap(View::WithGlobal), 1, &["requests=2"], 1);
    let message = error(&outcome);
    assert!(message.contains("did not reproduce its view"), "{message}");
}

#[test]
fn a_panic_inside_the_library_is_a_core_fault_naming_the_event() {
    let core = Arc::new(HeapCore::new(RegistryAdapter {
        view: View::Faithful,
        panic_on: Some(1),
    }));
    let outcome = check(core, 1, &["requests=2"], 1);
    let message = error(&outcome);
    assert!(
        message.contains("the library panicked while handling CLIENT (id 1"),
        "{message}"
    );
    assert!(message.contains("request 1 is not supported"), "{message}");
}
