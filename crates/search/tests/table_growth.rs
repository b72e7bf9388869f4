//! The visited set grows on demand: millions of initial states, or one state
//! with millions of successors, are counted exactly in every search mode,
//! and a budget that cannot hold them is an error naming it.

use cmc_model::{Encode, Model, Property};
use cmc_search::{Checker, Outcome, Verdict};

#[derive(Clone, Debug, PartialEq, Encode)]
struct Point {
    a: u32,
    b: u32,
    c: u32,
}

/// Initial states: every point of `side`^3 (a product over three variables,
/// as a TLA+ Init such as `x \in 0..127 /\ y \in ... /\ z \in ...`); the
/// origin has `fan_out` successors, every other state none (terminal).
struct Burst {
    side: u32,
    fan_out: u32,
}

/// 2,097,152 initial states: twice the table's default initial capacity.
const PRODUCT: Burst = Burst {
    side: 128,
    fan_out: 0,
};
/// One initial state with 2,000,000 successors.
const FAN: Burst = Burst {
    side: 1,
    fan_out: 2_000_000,
};

impl Burst {
    /// The exact distinct count: the initial states and the origin's successors.
    fn distinct(&self) -> u64 {
        u64::from(self.side).pow(3) + u64::from(self.fan_out)
    }
}

impl Model for Burst {
    type State = Point;
    type Action = u32;

    fn name(&self) -> String {
        "burst".into()
    }

    fn init_states(&self, out: &mut Vec<Point>) {
        for a in 0..self.side {
            for b in 0..self.side {
                for c in 0..self.side {
                    out.push(Point { a, b, c });
                }
            }
        }
    }

    fn actions(&self, state: &Point, out: &mut Vec<u32>) {
        if *state == (Point { a: 0, b: 0, c: 0 }) {
            out.extend(0..self.fan_out);
        }
    }

    fn next_state(&self, _: &Point, leaf: &u32) -> Option<Point> {
        Some(Point {
            a: u32::MAX,
            b: *leaf,
            c: 0,
        })
    }

    fn is_terminal(&self, _: &Point) -> bool {
        true
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("in range", |m: &Burst, s: &Point| {
            s.a == u32::MAX || s.a < m.side
        })]
    }
}

const MIB: u64 = 1 << 20;

fn run(model: Burst, configure: impl FnOnce(Checker<Burst>) -> Checker<Burst>) -> Outcome<Burst> {
    let trace = tempfile::tempdir().unwrap();
    configure(Checker::new(model).trace_dir(trace.path())).run()
}

fn assert_exact(outcome: &Outcome<Burst>, model: &Burst) {
    assert_eq!(outcome.verdict, Verdict::Pass, "{:?}", outcome.verdict);
    assert_eq!(outcome.stats.distinct_states, model.distinct());
    assert_eq!(outcome.stats.states_generated, model.distinct());
    assert!(outcome.stats.complete);
}

fn assert_over_budget(outcome: &Outcome<Burst>) {
    match &outcome.verdict {
        Verdict::Error { message } => assert!(message.contains("--max-memory"), "{message}"),
        other => panic!("expected an error naming the budget, got {other:?}"),
    }
}

#[test]
fn millions_of_initial_states_bfs_one_worker() {
    assert_exact(&run(PRODUCT, |c| c.bfs().workers(1)), &PRODUCT);
}

#[test]
fn millions_of_initial_states_bfs_two_workers() {
    assert_exact(&run(PRODUCT, |c| c.bfs().workers(2)), &PRODUCT);
}

#[test]
fn millions_of_initial_states_dfs() {
    assert_exact(&run(PRODUCT, |c| c.dfs()), &PRODUCT);
}

#[test]
fn millions_of_initial_states_within_a_memory_budget() {
    assert_exact(
        &run(PRODUCT, |c| c.workers(2).max_memory(256 * MIB)),
        &PRODUCT,
    );
}

#[test]
fn millions_of_initial_states_with_fingerprints_on_disk() {
    let outcome = run(PRODUCT, |c| {
        c.workers(2).max_memory(8 * MIB).fingerprints_on_disk(true)
    });
    assert_exact(&outcome, &PRODUCT);
    assert!(outcome.stats.fingerprint_disk_bytes > 0, "the set flushed");
}

#[test]
fn initial_states_beyond_the_memory_budget_are_an_error_naming_it() {
    assert_over_budget(&run(PRODUCT, |c| c.workers(2).max_memory(16 * MIB)));
}

#[test]
fn wide_fan_out_bfs_one_worker() {
    assert_exact(&run(FAN, |c| c.bfs().workers(1)), &FAN);
}

#[test]
fn wide_fan_out_bfs_two_workers() {
    assert_exact(&run(FAN, |c| c.bfs().workers(2)), &FAN);
}

#[test]
fn wide_fan_out_dfs() {
    assert_exact(&run(FAN, |c| c.dfs()), &FAN);
}

#[test]
fn wide_fan_out_within_a_memory_budget() {
    assert_exact(&run(FAN, |c| c.workers(2).max_memory(256 * MIB)), &FAN);
}

#[test]
fn wide_fan_out_with_fingerprints_on_disk() {
    let outcome = run(FAN, |c| {
        c.workers(2)
            .max_memory(128 * MIB)
            .fingerprints_on_disk(true)
    });
    assert_exact(&outcome, &FAN);
}

#[test]
fn wide_fan_out_beyond_the_memory_budget_is_an_error_naming_it() {
    assert_over_budget(&run(FAN, |c| c.workers(2).max_memory(16 * MIB)));
    // On disk, one state's successors must fit in the bounded table at once.
    assert_over_budget(&run(FAN, |c| {
        c.workers(2).max_memory(16 * MIB).fingerprints_on_disk(true)
    }));
}
