//! The search layer's contract, shown on small models whose answers are
//! known by hand.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

use cmc_model::{Encode, Model, Property};
use cmc_search::test_support::fingerprints_on_disk;
use cmc_search::{
    replay, Checker, RandomWalks, ReplayFile, SearchOptions, Strategy, Verdict, ViolationKind,
};

/// A walker on a `width` x `height` grid that steps right or up, and may
/// teleport from the origin to `teleport_to`.
#[derive(Clone)]
struct Grid {
    width: u8,
    height: u8,
    teleport_to: Option<(u8, u8)>,
    /// An invariant "not at (x, y)" when set.
    forbidden: Option<(u8, u8)>,
    /// A witness "at some point reach (x, y)".
    witness: Option<(u8, u8)>,
    /// Whether the top-right corner is a legitimate end.
    corner_is_terminal: bool,
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct Position {
    x: u8,
    y: u8,
}

#[derive(Clone, Debug, PartialEq)]
enum Move {
    Right,
    Up,
    Teleport,
}

impl Grid {
    fn new(width: u8, height: u8) -> Grid {
        Grid {
            width,
            height,
            teleport_to: None,
            forbidden: None,
            witness: None,
            corner_is_terminal: true,
        }
    }
}

impl Model for Grid {
    type State = Position;
    type Action = Move;

    fn name(&self) -> String {
        "grid".into()
    }

    fn params(&self) -> Vec<cmc_model::ModelParam> {
        vec![
            cmc_model::ModelParam::new("W", self.width),
            cmc_model::ModelParam::new("H", self.height),
        ]
    }

    fn init_states(&self, out: &mut Vec<Position>) {
        out.push(Position { x: 0, y: 0 });
    }

    fn actions(&self, _: &Position, out: &mut Vec<Move>) {
        out.extend([Move::Right, Move::Up, Move::Teleport]);
    }

    fn next_state(&self, p: &Position, action: &Move) -> Option<Position> {
        match action {
            Move::Right => (p.x + 1 < self.width).then(|| Position { x: p.x + 1, y: p.y }),
            Move::Up => (p.y + 1 < self.height).then(|| Position { x: p.x, y: p.y + 1 }),
            Move::Teleport => match self.teleport_to {
                Some((x, y)) if p.x == 0 && p.y == 0 => Some(Position { x, y }),
                _ => None,
            },
        }
    }

    fn is_terminal(&self, p: &Position) -> bool {
        self.corner_is_terminal && p.x + 1 == self.width && p.y + 1 == self.height
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let mut properties = Vec::new();
        if let Some((x, y)) = self.forbidden {
            properties.push(Property::always("NotForbidden", move |_, p: &Position| {
                (p.x, p.y) != (x, y)
            }));
        }
        if let Some((x, y)) = self.witness {
            properties.push(Property::sometimes(
                "ReachesWitness",
                move |_, p: &Position| (p.x, p.y) == (x, y),
            ));
        }
        properties
    }
}

fn options(workers: usize, strategy: Strategy) -> SearchOptions {
    SearchOptions {
        workers,
        strategy,
        // Start tiny so that every search below grows the table several times.
        table_capacity: 1024,
        ..SearchOptions::default()
    }
}

#[test]
fn bfs_counts_are_exact_and_independent_of_workers() {
    for workers in [1, 2, 4] {
        let outcome = Checker::new(Grid::new(60, 70))
            .options(options(workers, Strategy::Bfs))
            .run();
        assert_eq!(outcome.verdict, Verdict::Pass, "{workers} workers");
        assert_eq!(outcome.stats.distinct_states, 60 * 70);
        // One initial state plus one successor per in-bounds right or up move.
        assert_eq!(outcome.stats.states_generated, 1 + 59 * 70 + 69 * 60);
        assert_eq!(outcome.stats.depth, 60 + 70 - 1);
        assert!(outcome.stats.complete);
        assert_eq!(outcome.stats.states_left_on_queue, 0);
    }
}

#[test]
fn bfs_counterexample_is_shortest_for_every_worker_count() {
    // (50, 50) is 100 steps away by walking but 2 by teleporting (states 1 -> 2 -> 3).
    let mut grid = Grid::new(80, 80);
    grid.teleport_to = Some((49, 50));
    grid.forbidden = Some((50, 50));
    for workers in [1, 2, 3] {
        let outcome = Checker::new(grid.clone())
            .options(options(workers, Strategy::Bfs))
            .run();
        assert_eq!(
            outcome.verdict,
            Verdict::Violated {
                property: "NotForbidden".into(),
                kind: ViolationKind::Invariant
            }
        );
        let trace = outcome
            .counterexample
            .expect("a violation has a counterexample");
        assert_eq!(trace.len(), 3, "{workers} workers");
        assert_eq!(trace.steps[1].action, Some(Move::Teleport));
        assert_eq!(trace.last_state(), Some(&Position { x: 50, y: 50 }));
    }
}

#[test]
fn deadlock_is_reported_unless_terminal_or_disabled() {
    let mut grid = Grid::new(3, 2);
    grid.corner_is_terminal = false;
    let outcome = Checker::new(grid.clone()).workers(2).run();
    assert_eq!(
        outcome.verdict,
        Verdict::Violated {
            property: "deadlock".into(),
            kind: ViolationKind::Deadlock
        }
    );
    assert_eq!(outcome.counterexample.unwrap().len(), 4);
    assert!(Checker::new(grid)
        .check_deadlock(false)
        .run()
        .verdict
        .is_pass());
    assert!(Checker::new(Grid::new(3, 2)).run().verdict.is_pass());
}

#[test]
fn an_unreached_witness_fails_the_run_as_vacuous() {
    let mut grid = Grid::new(4, 4);
    grid.witness = Some((9, 9));
    let outcome = Checker::new(grid.clone()).run();
    assert_eq!(
        outcome.verdict,
        Verdict::Vacuous {
            properties: vec!["ReachesWitness".into()]
        }
    );
    grid.witness = Some((3, 1));
    assert!(Checker::new(grid).run().verdict.is_pass());
}

/// A step property: the walker never moves up from row 2.
struct NoUpFromRowTwo(Grid);

impl Model for NoUpFromRowTwo {
    type State = Position;
    type Action = Move;
    fn name(&self) -> String {
        "no-up".into()
    }
    fn init_states(&self, out: &mut Vec<Position>) {
        self.0.init_states(out)
    }
    fn actions(&self, p: &Position, out: &mut Vec<Move>) {
        self.0.actions(p, out)
    }
    fn next_state(&self, p: &Position, a: &Move) -> Option<Position> {
        self.0.next_state(p, a)
    }
    fn is_terminal(&self, p: &Position) -> bool {
        self.0.is_terminal(p)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::step(
            "NoUpFromRowTwo",
            |_, pre: &Position, action, _| !(pre.y == 2 && *action == Move::Up),
        )]
    }
}

#[test]
fn step_properties_see_pre_action_and_post() {
    let outcome = Checker::new(NoUpFromRowTwo(Grid::new(5, 5)))
        .workers(2)
        .run();
    assert_eq!(
        outcome.verdict,
        Verdict::Violated {
            property: "NoUpFromRowTwo".into(),
            kind: ViolationKind::Step
        }
    );
    let trace = outcome.counterexample.unwrap();
    // (0,0) up (0,1) up (0,2) up (0,3): four states.
    assert_eq!(trace.len(), 4);
    assert_eq!(trace.steps[3].action, Some(Move::Up));
    assert_eq!(trace.last_state(), Some(&Position { x: 0, y: 3 }));
}

/// A counter from 0 to `top` that may also stay where it is (a stuttering
/// step, which the search neither hashes nor looks up); with `no_stay_at`,
/// a step property forbids staying at that value.
struct Stutter {
    top: u8,
    no_stay_at: Option<u8>,
}

#[derive(Clone, Debug, PartialEq)]
enum Tick {
    Inc,
    Stay,
}

impl Model for Stutter {
    type State = u8;
    type Action = Tick;

    fn name(&self) -> String {
        "stutter".into()
    }

    fn init_states(&self, out: &mut Vec<u8>) {
        out.push(0);
    }

    fn actions(&self, _: &u8, out: &mut Vec<Tick>) {
        out.extend([Tick::Inc, Tick::Stay]);
    }

    fn next_state(&self, value: &u8, action: &Tick) -> Option<u8> {
        match action {
            Tick::Inc => (*value < self.top).then_some(value + 1),
            Tick::Stay => Some(*value),
        }
    }

    fn properties(&self) -> Vec<Property<Stutter>> {
        let Some(forbidden) = self.no_stay_at else {
            return Vec::new();
        };
        vec![Property::step(
            "NoStay",
            move |_, pre: &u8, action, post: &u8| {
                !(*pre == forbidden && *action == Tick::Stay && post == pre)
            },
        )]
    }
}

#[test]
fn stuttering_steps_are_counted_and_checked() {
    for workers in [1, 2] {
        let passing = Checker::new(Stutter {
            top: 3,
            no_stay_at: None,
        })
        .workers(workers)
        .run();
        assert!(passing.verdict.is_pass());
        // 0..=3; every state stays, 0..=2 also increment; plus the initial state.
        assert_eq!(
            (
                passing.stats.distinct_states,
                passing.stats.states_generated,
                passing.stats.depth
            ),
            (4, 1 + 4 + 3, 4)
        );

        let failing = Checker::new(Stutter {
            top: 3,
            no_stay_at: Some(2),
        })
        .workers(workers)
        .run();
        assert_eq!(
            failing.verdict,
            Verdict::Violated {
                property: "NoStay".into(),
                kind: ViolationKind::Step
            }
        );
        let trace = failing.counterexample.unwrap();
        // 0, 1, 2, then the offending stay at 2.
        assert_eq!(trace.len(), 4);
        assert_eq!(trace.steps[3].action, Some(Tick::Stay));
        assert_eq!(trace.last_state(), Some(&2));
    }
}

#[test]
fn dfs_finds_every_state_and_respects_its_depth_bound() {
    let complete = Checker::new(Grid::new(30, 20))
        .options(options(1, Strategy::Dfs))
        .run();
    assert!(complete.verdict.is_pass());
    assert_eq!(complete.stats.distinct_states, 600);
    assert!(complete.stats.complete);

    let bounded = Checker::new(Grid::new(30, 20)).dfs().max_depth(5).run();
    assert!(bounded.verdict.is_pass());
    assert!(!bounded.stats.complete);
    assert!(bounded.stats.depth <= 5);
    // Depth <= 5 from the corner: the states with x + y <= 4.
    assert!(bounded.stats.distinct_states <= 15 + 5);
}

#[test]
fn bfs_depth_bound_cuts_the_search() {
    let outcome = Checker::new(Grid::new(30, 20)).max_depth(5).run();
    assert!(outcome.verdict.is_pass());
    assert!(!outcome.stats.complete);
    assert_eq!(outcome.stats.depth, 5);
    assert_eq!(outcome.stats.distinct_states, 15); // x + y <= 4
    assert_eq!(outcome.stats.states_left_on_queue, 5); // x + y == 4
}

#[test]
fn simulation_is_reproducible_from_its_seed_for_any_worker_count() {
    let mut grid = Grid::new(12, 12);
    grid.forbidden = Some((6, 5));
    let run = |workers, seed| {
        let outcome = Checker::new(grid.clone())
            .options(options(
                workers,
                Strategy::Simulate(RandomWalks {
                    walks: 200,
                    walk_length: 40,
                    seed,
                }),
            ))
            .run();
        assert!(matches!(outcome.verdict, Verdict::Violated { .. }));
        let trace = outcome.counterexample.unwrap();
        trace
            .steps
            .iter()
            .map(|s| s.state.clone())
            .collect::<Vec<_>>()
    };
    let one_worker = run(1, 7);
    assert_eq!(one_worker, run(2, 7));
    assert_eq!(one_worker.last(), Some(&Position { x: 6, y: 5 }));
}

#[test]
fn a_counterexample_replays_to_the_same_violation() {
    let mut grid = Grid::new(10, 10);
    grid.forbidden = Some((3, 4));
    let outcome = Checker::new(grid.clone()).run();
    let trace = outcome.counterexample.unwrap();
    let file = ReplayFile::from_counterexample(&grid, &trace, Some("NotForbidden"));
    let parsed = ReplayFile::parse(&file.to_text()).unwrap();
    let replayed = replay(&grid, &parsed).unwrap();
    assert_eq!(replayed.verdict, outcome.verdict);
    assert_eq!(replayed.counterexample.unwrap().len(), trace.len());
}

#[test]
fn replay_rejects_actions_not_enabled_and_other_models() {
    let grid = Grid::new(2, 2);
    let text =
        "cmc-replay 1\nmodel grid\nparam W=2\nparam H=2\ninit 0\naction Right\naction Right\nend\n";
    let error = replay(&grid, &ReplayFile::parse(text).unwrap()).unwrap_err();
    assert_eq!(error.line, Some(7));
    assert!(
        error.message.contains("`Right` is not enabled at step 3"),
        "{error}"
    );
    assert!(
        error.message.contains("`Up`"),
        "lists what is enabled: {error}"
    );

    let other = "cmc-replay 1\nmodel grid\nparam W=3\nparam H=2\ninit 0\nend\n";
    let error = replay(&grid, &ReplayFile::parse(other).unwrap()).unwrap_err();
    assert!(error.message.contains("parameters `W=3 H=2`"), "{error}");

    let missing_init = "cmc-replay 1\nmodel grid\nparam W=2\nparam H=2\ninit 5\nend\n";
    let error = replay(&grid, &ReplayFile::parse(missing_init).unwrap()).unwrap_err();
    assert_eq!(error.line, Some(5));
}

/// A model whose successor depends on a hidden counter: not a function of its state.
#[derive(Default)]
struct Forgetful {
    calls: AtomicU64,
    /// Alternate the stride on every call instead of changing it once.
    alternate: bool,
}

impl Model for Forgetful {
    type State = u8;
    type Action = ();
    fn name(&self) -> String {
        "forgetful".into()
    }
    fn init_states(&self, out: &mut Vec<u8>) {
        out.push(0);
    }
    fn actions(&self, _: &u8, out: &mut Vec<()>) {
        out.push(());
    }
    fn next_state(&self, state: &u8, _: &()) -> Option<u8> {
        // Either the first two calls step by one and every later call by
        // two, or the stride alternates between one and two.
        let calls = self.calls.fetch_add(1, Ordering::Relaxed);
        let stride = match (self.alternate, calls) {
            (true, calls) => 1 + (calls % 2) as u8,
            (false, 0 | 1) => 1,
            (false, _) => 2,
        };
        (*state < 10).then_some(state + stride)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("small", |_, s: &u8| *s < 5)]
    }
}

#[test]
fn a_non_deterministic_model_is_an_error_not_a_wrong_trace() {
    let outcome = Checker::new(Forgetful::default()).workers(1).run();
    match outcome.verdict {
        Verdict::Error { message } => assert!(message.contains("not deterministic"), "{message}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn the_determinism_check_names_the_step_that_differs() {
    let model = Forgetful {
        alternate: true,
        ..Forgetful::default()
    };
    let outcome = Checker::new(model).workers(1).check_determinism(true).run();
    match outcome.verdict {
        Verdict::Error { message } => {
            assert!(message.contains("two calls of next_state()"), "{message}");
            assert!(message.contains("state: "), "{message}");
        }
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
#[should_panic(expected = "The behavior up to this point is (3 states)")]
fn assert_properties_panics_with_the_readable_counterexample() {
    let mut grid = Grid::new(5, 5);
    grid.forbidden = Some((1, 1));
    let _ = Checker::new(grid).assert_properties();
}

/// Sixteen switches turned on one at a time, each state padded to 200 bytes:
/// 65,536 states whose widest level (8 switches on) is 12,870 states, 2.8 MB.
/// The witness `AllOn` is reached at the end. Interrupted switches
/// ([`Switches::interrupted_after`]) raise an interrupt flag after a given
/// step, as a SIGINT arriving at a chosen moment would.
#[derive(Default)]
struct Switches {
    interrupt: Option<Interrupt>,
}

/// The flag interrupted [`Switches`] raise after their `after`-th step, and
/// the steps so far.
struct Interrupt {
    flag: Arc<AtomicBool>,
    steps: AtomicU64,
    after: u64,
}

impl Switches {
    /// Switches that raise the returned flag after their `after`-th step.
    fn interrupted_after(after: u64) -> (Switches, Arc<AtomicBool>) {
        let flag = Arc::new(AtomicBool::new(false));
        let interrupt = Interrupt {
            flag: Arc::clone(&flag),
            steps: AtomicU64::new(0),
            after,
        };
        let switches = Switches {
            interrupt: Some(interrupt),
        };
        (switches, flag)
    }
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct Board {
    on: u16,
    padding: [u8; 200],
}

impl Model for Switches {
    type State = Board;
    type Action = u8;
    fn name(&self) -> String {
        "switches".into()
    }
    fn init_states(&self, out: &mut Vec<Board>) {
        out.push(Board {
            on: 0,
            padding: [0; 200],
        });
    }
    fn actions(&self, _: &Board, out: &mut Vec<u8>) {
        out.extend(0..16);
    }
    fn next_state(&self, board: &Board, switch: &u8) -> Option<Board> {
        if let Some(interrupt) = &self.interrupt {
            if interrupt.steps.fetch_add(1, Ordering::Relaxed) == interrupt.after {
                interrupt.flag.store(true, Ordering::Relaxed);
            }
        }
        let bit = 1u16 << switch;
        (board.on & bit == 0).then(|| Board {
            on: board.on | bit,
            ..board.clone()
        })
    }
    fn is_terminal(&self, board: &Board) -> bool {
        board.on == u16::MAX
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::sometimes("AllOn", |_, b: &Board| {
            b.on == u16::MAX
        })]
    }
}

#[test]
fn a_frontier_beyond_its_memory_budget_spills_to_disk_without_losing_states() {
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        // 8 MiB: 4 MiB of table (enough), 2 MiB of frontier (less than the widest level).
        let outcome = Checker::new(Switches::default())
            .workers(workers)
            .max_memory(8 << 20)
            .trace_dir(dir.path())
            .run();
        assert_eq!(outcome.verdict, Verdict::Pass, "{workers} workers");
        assert_eq!(outcome.stats.distinct_states, 1 << 16);
        assert_eq!(outcome.stats.depth, 17);
        assert!(
            outcome.stats.frontier_spilled_bytes > 1 << 20,
            "{:?}",
            outcome.stats
        );
    }
}

#[test]
fn a_table_that_outgrows_the_memory_budget_is_a_clear_error() {
    let outcome = Checker::new(Switches::default()).max_memory(1 << 20).run();
    match outcome.verdict {
        Verdict::Error { message } => assert!(message.contains("raise --max-memory"), "{message}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn an_interrupted_search_resumes_to_exactly_the_same_result() {
    use std::time::Duration;

    let hour = Duration::from_secs(3600);
    for (after, workers) in [(50u64, 1usize), (200_000, 2), (600_000, 2)] {
        let dir = tempfile::tempdir().unwrap();
        let (first, flag) = Switches::interrupted_after(after);
        let outcome = Checker::new(first)
            .workers(workers)
            .max_memory(8 << 20)
            .checkpoint(dir.path(), hour)
            .interrupt_on(flag)
            .run();
        assert_eq!(
            outcome.verdict,
            Verdict::Interrupted {
                checkpoint: Some(dir.path().to_path_buf())
            },
            "interrupted after {after} steps"
        );
        assert!(outcome.stats.distinct_states < 1 << 16);
        // Resume with a model that is never interrupted.
        let resumed = Checker::new(Switches::default())
            .workers(3 - workers)
            .max_memory(8 << 20)
            .resume(dir.path(), hour)
            .run();
        assert_eq!(resumed.verdict, Verdict::Pass, "after {after}: {resumed:?}");
        assert_eq!(resumed.stats.distinct_states, 1 << 16);
        assert_eq!(resumed.stats.depth, 17);
        let uninterrupted = Checker::new(Switches::default()).run();
        assert_eq!(
            resumed.stats.states_generated,
            uninterrupted.stats.states_generated
        );
    }
}

#[test]
fn a_resumed_search_rebuilds_counterexamples_through_earlier_runs() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let mut grid = Grid::new(120, 120);
    grid.forbidden = Some((100, 100));
    // Checkpoint constantly, and interrupt while the violation is far away.
    let flag = Arc::new(AtomicBool::new(true));
    let first = Checker::new(grid.clone())
        .checkpoint(dir.path(), Duration::ZERO)
        .interrupt_on(Arc::clone(&flag))
        .run();
    assert!(
        matches!(first.verdict, Verdict::Interrupted { .. }),
        "{first:?}"
    );
    let resumed = Checker::new(grid)
        .resume(dir.path(), Duration::from_millis(1))
        .run();
    assert!(
        matches!(resumed.verdict, Verdict::Violated { .. }),
        "{resumed:?}"
    );
    let trace = resumed.counterexample.unwrap();
    assert_eq!(trace.len(), 201);
    assert_eq!(trace.last_state(), Some(&Position { x: 100, y: 100 }));
}

#[test]
fn resuming_another_model_or_an_empty_directory_is_a_clear_error() {
    use std::time::Duration;
    let empty = tempfile::tempdir().unwrap();
    let outcome = Checker::new(Grid::new(3, 3))
        .resume(empty.path(), Duration::from_secs(1))
        .run();
    match outcome.verdict {
        Verdict::Error { message } => {
            assert!(message.contains("no complete checkpoint"), "{message}")
        }
        other => panic!("expected an error, got {other:?}"),
    }
    let dir = tempfile::tempdir().unwrap();
    let flag = Arc::new(AtomicBool::new(true));
    let _ = Checker::new(Grid::new(50, 50))
        .checkpoint(dir.path(), Duration::ZERO)
        .interrupt_on(flag)
        .run();
    let outcome = Checker::new(Grid::new(40, 50))
        .resume(dir.path(), Duration::from_secs(1))
        .run();
    match outcome.verdict {
        Verdict::Error { message } => assert!(message.contains("not of grid"), "{message}"),
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn fingerprints_on_disk_give_the_same_counts_as_in_memory() {
    let dir = tempfile::tempdir().unwrap();
    for workers in [1, 2] {
        // A table of 4,096 slots: the 65,536 states flush it many times.
        let outcome = Checker::new(Switches::default())
            .options(fingerprints_on_disk(workers, dir.path()))
            .run();
        assert_eq!(outcome.verdict, Verdict::Pass, "{workers} workers");
        assert_eq!(outcome.stats.distinct_states, 1 << 16);
        assert_eq!(outcome.stats.depth, 17);
        assert_eq!(
            outcome.stats.states_generated,
            Checker::new(Switches::default())
                .run()
                .stats
                .states_generated
        );
        assert!(outcome.stats.fingerprint_disk_bytes >= 16 * 50_000);
        assert!(outcome.stats.table_bytes < 1 << 20);
    }
}

#[test]
fn a_search_with_fingerprints_on_disk_resumes_from_its_checkpoint() {
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let options = SearchOptions {
        table_capacity: 4096,
        fingerprints_on_disk: true,
        ..SearchOptions::default()
    };
    let (interrupted, flag) = Switches::interrupted_after(300_000);
    let first = Checker::new(interrupted)
        .options(options.clone())
        .checkpoint(dir.path(), Duration::from_secs(3600))
        .interrupt_on(flag)
        .run();
    assert!(
        matches!(first.verdict, Verdict::Interrupted { .. }),
        "{first:?}"
    );
    let resumed = Checker::new(Switches::default())
        .options(options)
        .resume(dir.path(), Duration::from_secs(3600))
        .run();
    assert_eq!(resumed.verdict, Verdict::Pass, "{resumed:?}");
    assert_eq!(resumed.stats.distinct_states, 1 << 16);
}
