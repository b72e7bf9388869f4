//! Random-walk campaigns: swarm fault densities, statistics, the failing
//! walk's number, walks continued from a trace, walks from a BFS frontier.

use cmc_model::{ActionKind, Encode, Model, Property};
use cmc_search::{
    Checker, FrontierWalks, RandomWalks, ReplayFile, Report, SearchOptions, Strategy, Verdict,
    WalksFrom,
};

/// A counter that works up to `limit` while a "fault" that resets nothing
/// (`Glitch`, a fault kind) is always enabled too; `Alarm` is a fault kind
/// declared but never enabled. The invariant fails at `bad` (if set).
struct Glitchy {
    limit: u32,
    bad: Option<u32>,
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct Tally {
    work: u32,
    glitches: u32,
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Work,
    Glitch,
}

impl Model for Glitchy {
    type State = Tally;
    type Action = Step;

    fn name(&self) -> String {
        "glitchy".into()
    }

    fn init_states(&self, out: &mut Vec<Tally>) {
        out.push(Tally {
            work: 0,
            glitches: 0,
        });
    }

    fn actions(&self, _: &Tally, out: &mut Vec<Step>) {
        out.extend([Step::Work, Step::Glitch]);
    }

    fn next_state(&self, s: &Tally, step: &Step) -> Option<Tally> {
        match step {
            Step::Work if s.work < self.limit => Some(Tally {
                work: s.work + 1,
                ..s.clone()
            }),
            Step::Work => None,
            Step::Glitch => Some(Tally {
                glitches: (s.glitches + 1).min(3),
                ..s.clone()
            }),
        }
    }

    fn action_kind(&self, step: &Step) -> ActionKind {
        match step {
            Step::Work => ActionKind::normal("Work"),
            Step::Glitch => ActionKind::fault("Glitch"),
        }
    }

    fn action_kinds(&self) -> Vec<ActionKind> {
        vec![
            ActionKind::normal("Work"),
            ActionKind::fault("Glitch"),
            ActionKind::fault("Alarm"),
        ]
    }

    fn properties(&self) -> Vec<Property<Self>> {
        let bad = self.bad;
        vec![Property::always("NotBad", move |_, s: &Tally| {
            Some(s.work) != bad
        })]
    }
}

fn simulate(model: Glitchy, walks: u64, length: u64, swarm: bool, workers: usize) -> Report {
    let options = SearchOptions {
        strategy: Strategy::Simulate(RandomWalks {
            walks,
            walk_length: length,
            seed: 11,
        }),
        swarm,
        workers,
        check_deadlock: false,
        ..SearchOptions::default()
    };
    let checker = Checker::new(model).options(options.clone());
    let outcome = checker.run();
    Report::new(checker.model(), &options, &outcome)
}

fn glitches(report: &Report) -> u64 {
    report.walks.as_ref().unwrap().faults["Glitch"]
}

#[test]
fn uniform_walks_take_faults_half_the_time_swarm_walks_far_less() {
    let model = || Glitchy {
        limit: 1000,
        bad: None,
    };
    let uniform = simulate(model(), 200, 100, false, 2);
    let walks = uniform.walks.as_ref().unwrap();
    assert_eq!(
        (walks.walks, walks.steps, walks.deepest),
        (200, 20_000, 100)
    );
    let share = glitches(&uniform) as f64 / walks.steps as f64;
    assert!((0.45..0.55).contains(&share), "uniform: {share}");

    // Swarm: a third of the walks leave Glitch out, the others inject it
    // with a density from 1/64 to 1/2 per step (about 0.17 on average).
    let swarm = simulate(model(), 200, 100, true, 2);
    let share = glitches(&swarm) as f64 / swarm.walks.as_ref().unwrap().steps as f64;
    assert!((0.03..0.25).contains(&share), "swarm: {share}");
    assert!(swarm.walks.as_ref().unwrap().swarm);
    assert!(swarm.settings.contains(&"swarm".to_string()));
}

#[test]
fn campaign_statistics_do_not_depend_on_the_worker_count() {
    let model = || Glitchy {
        limit: 30,
        bad: None,
    };
    let one = simulate(model(), 300, 50, true, 1);
    let three = simulate(model(), 300, 50, true, 3);
    let (a, b) = (one.walks.unwrap(), three.walks.unwrap());
    assert_eq!(
        (a.walks, a.steps, a.deepest, a.distinct_states, &a.faults),
        (b.walks, b.steps, b.deepest, b.distinct_states, &b.faults)
    );
}

#[test]
fn the_failing_walk_is_named_in_the_report_and_its_replay_file() {
    let model = || Glitchy {
        limit: 100,
        bad: Some(20),
    };
    let report = simulate(model(), 500, 30, true, 2);
    assert_eq!(report.property.as_deref(), Some("NotBad"));
    let walk = report.walks.as_ref().unwrap().failing_walk.unwrap();
    let file = report.replay_file.as_ref().unwrap();
    assert!(
        file.settings.contains(&format!("walk={walk}")),
        "{:?}",
        file.settings
    );
    assert!(file.settings.contains(&"seed=11".to_string()));
    // The same seed finds the same walk with any worker count.
    let again = simulate(model(), 500, 30, true, 1);
    assert_eq!(again.walks.unwrap().failing_walk, Some(walk));
    assert_eq!(
        again.replay_file.unwrap().actions,
        file.actions,
        "the same counterexample"
    );
    // The walk's trace replays to the violation.
    let replayed = cmc_search::replay(&model(), &ReplayFile::parse(&file.to_text()).unwrap());
    assert!(matches!(
        replayed.unwrap().verdict,
        Verdict::Violated { ref property, .. } if property == "NotBad"
    ));
}

#[test]
fn walks_continue_from_the_end_of_a_trace() {
    // Fifteen Work steps recorded; walks of at most 12 steps reach work = 20
    // only because they start at 15.
    let trace = format!(
        "cmc-replay 2\nmodel glitchy\ninit 0\n{}end\n",
        "action Work\n".repeat(15)
    );
    let file = ReplayFile::parse(&trace).unwrap();
    let options = |from: Option<WalksFrom>| SearchOptions {
        strategy: Strategy::Simulate(RandomWalks {
            walks: 400,
            walk_length: 12,
            seed: 3,
        }),
        walks_from: from,
        check_deadlock: false,
        workers: 2,
        ..SearchOptions::default()
    };
    let model = || Glitchy {
        limit: 100,
        bad: Some(20),
    };
    let alone = Checker::new(model()).options(options(None)).run();
    assert_eq!(alone.verdict, Verdict::Pass);
    let from = WalksFrom {
        label: "ten.cmc-trace".into(),
        file,
    };
    let outcome = Checker::new(model()).options(options(Some(from))).run();
    assert!(matches!(outcome.verdict, Verdict::Violated { .. }));
    let trace = outcome.counterexample.unwrap();
    assert_eq!(trace.last_state().unwrap().work, 20);
    // The trace's fifteen steps, then the walk's five Work steps (and glitches).
    assert!(trace.len() >= 21, "{}", trace.len());
    assert_eq!(trace.steps[15].state.work, 15);
}

#[test]
fn walks_from_the_frontier_find_what_the_depth_bound_hides() {
    let model = || Glitchy {
        limit: 100,
        bad: Some(12),
    };
    let bounded = SearchOptions {
        max_depth: Some(6),
        workers: 2,
        check_deadlock: false,
        ..SearchOptions::default()
    };
    let outcome = Checker::new(model()).options(bounded.clone()).run();
    assert_eq!(outcome.verdict, Verdict::Pass, "out of the bound's reach");
    assert!(!outcome.stats.complete);

    let options = SearchOptions {
        frontier_walks: Some(FrontierWalks {
            walk_length: 20,
            rounds: 4,
            seed: 5,
        }),
        ..bounded
    };
    let checker = Checker::new(model()).options(options.clone());
    let outcome = checker.run();
    assert!(
        matches!(outcome.verdict, Verdict::Violated { ref property, .. } if property == "NotBad"),
        "{:?}",
        outcome.verdict
    );
    let trace = outcome.counterexample.as_ref().unwrap();
    // The BFS prefix is 6 states deep; the walk goes on from its end.
    assert!(trace.len() > 6);
    assert_eq!(trace.last_state().unwrap().work, 12);
    let report = Report::new(checker.model(), &options, &outcome);
    let walks = report.walks.as_ref().unwrap();
    assert!(walks.failing_walk.is_some());
    assert!(report.bound.unwrap().contains("frontier"));
    // The whole trace replays from an initial state to the violation.
    let file = report.replay_file.unwrap();
    let replayed = cmc_search::replay(&model(), &file).unwrap();
    assert!(matches!(replayed.verdict, Verdict::Violated { .. }));
}

fn coverage_of(strategy: Strategy, max_depth: Option<u64>) -> (Report, cmc_search::Stats) {
    let options = SearchOptions {
        strategy,
        max_depth,
        coverage: true,
        workers: 2,
        check_deadlock: false,
        ..SearchOptions::default()
    };
    let checker = Checker::new(Glitchy {
        limit: 5,
        bad: None,
    })
    .options(options.clone());
    let outcome = checker.run();
    (
        Report::new(checker.model(), &options, &outcome),
        outcome.stats,
    )
}

#[test]
fn exhaustive_coverage_adds_up_to_the_counts_of_the_search() {
    for strategy in [Strategy::Bfs, Strategy::Dfs] {
        let (report, stats) = coverage_of(strategy.clone(), None);
        let coverage = report.coverage.clone().unwrap();
        let total = |f: fn(&cmc_search::KindCoverageReport) -> u64| -> u64 {
            coverage.kinds.iter().map(f).sum()
        };
        // Every successor computed is an enabled action; every state beyond
        // the initial one was first reached by one action.
        assert_eq!(
            total(|k| k.enabled),
            stats.states_generated - 1,
            "{strategy:?}"
        );
        assert_eq!(
            total(|k| k.taken),
            stats.distinct_states - 1,
            "{strategy:?}"
        );
        let work = coverage.kinds.iter().find(|k| k.kind == "Work").unwrap();
        // 6 x 4 states (work 0..=5, glitches 0..=3); Work is enabled below 5.
        // (Which action reaches a state first can depend on timing with
        // several workers: the split of new states by kind is not asserted.)
        assert_eq!((work.enabled, work.fault), (5 * 4, false));
        assert!(work.taken >= 5);
        // Alarm is a declared fault (it has a budget) that never occurred.
        assert_eq!(coverage.never_taken, vec!["Alarm".to_string()]);
        assert_eq!(coverage.never_enabled, vec!["Alarm".to_string()]);
        assert_eq!(
            coverage.budgeted_faults_never_taken,
            vec!["Alarm".to_string()]
        );
        let text = report.render_text();
        assert!(text.contains("Never taken: Alarm."), "{text}");
        assert!(
            text.contains("Warning: fault Alarm has a budget but never occurred"),
            "{text}"
        );
    }
}

#[test]
fn simulation_coverage_counts_enabled_and_taken_steps() {
    let strategy = Strategy::Simulate(RandomWalks {
        walks: 50,
        walk_length: 8,
        seed: 4,
    });
    let (report, _) = coverage_of(strategy, None);
    let coverage = report.coverage.unwrap();
    let walks = report.walks.unwrap();
    let taken: u64 = coverage.kinds.iter().map(|k| k.taken).sum();
    assert_eq!(taken, walks.steps);
    let glitch = coverage.kinds.iter().find(|k| k.kind == "Glitch").unwrap();
    // Glitch is enabled at every step of every walk.
    assert_eq!(glitch.enabled, walks.steps);
    assert!(glitch.fault && glitch.taken > 0);
    assert_eq!(
        coverage.budgeted_faults_never_taken,
        vec!["Alarm".to_string()]
    );
}

#[test]
fn a_full_distinct_state_table_makes_the_count_a_lower_bound_not_a_stop() {
    let options = SearchOptions {
        strategy: Strategy::Simulate(RandomWalks {
            walks: 4,
            walk_length: 4000,
            seed: 2,
        }),
        table_capacity: 1024,
        check_deadlock: false,
        workers: 2,
        ..SearchOptions::default()
    };
    let checker = Checker::new(Glitchy {
        limit: 100_000,
        bad: None,
    })
    .options(options.clone());
    let outcome = checker.run();
    let report = Report::new(checker.model(), &options, &outcome);
    let walks = report.walks.as_ref().unwrap();
    // Every walk ran to its end; counting stopped at three quarters full.
    assert_eq!(walks.steps, 4 * 4000);
    assert!(walks.distinct_capped);
    assert!(
        (768..=1024).contains(&walks.distinct_states),
        "{}",
        walks.distinct_states
    );
    assert!(report.render_text().contains("at least"));
}
