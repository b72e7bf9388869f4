//! Breadth-first search over coarse views (`Strategy::ViewBfs`): one state
//! expanded per view, real counterexamples, and never a complete pass.

use cmc_model::{Encode, Model, Property};
use cmc_search::{replay, Checker, ReplayFile, Report, SearchOptions, Strategy, Verdict};

/// Two counters: `work` counts up to `limit` and must stay below `bad`;
/// `noise` (up to `noise_max`) changes nothing that matters, and
/// multiplies the states by `noise_max + 1`. Its coarse view is `work`
/// alone, unless `view` is off.
#[derive(Clone)]
struct Noisy {
    limit: u32,
    bad: u32,
    noise_max: u32,
    view: bool,
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct Counters {
    work: u32,
    noise: u32,
}

#[derive(Clone, Debug, PartialEq)]
enum Step {
    Work,
    Noise,
}

impl Model for Noisy {
    type State = Counters;
    type Action = Step;

    fn name(&self) -> String {
        "noisy".into()
    }

    fn init_states(&self, out: &mut Vec<Counters>) {
        out.push(Counters { work: 0, noise: 0 });
    }

    fn actions(&self, _: &Counters, out: &mut Vec<Step>) {
        out.extend([Step::Noise, Step::Work]);
    }

    fn next_state(&self, s: &Counters, step: &Step) -> Option<Counters> {
        match step {
            Step::Work => (s.work < self.limit).then(|| Counters {
                work: s.work + 1,
                ..s.clone()
            }),
            Step::Noise => (s.noise < self.noise_max).then(|| Counters {
                noise: s.noise + 1,
                ..s.clone()
            }),
        }
    }

    fn is_terminal(&self, _: &Counters) -> bool {
        true
    }

    fn format_action(&self, step: &Step) -> String {
        format!("{step:?}")
    }

    fn coarse_view(&self, s: &Counters, out: &mut Vec<u8>) -> bool {
        s.work.encode(out);
        self.view
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always(
            "work below bad",
            |m: &Noisy, s: &Counters| s.work < m.bad,
        )]
    }
}

/// `model` searched by view-bfs, with the options used.
fn view_bfs(model: &Noisy) -> (cmc_search::Outcome<Noisy>, SearchOptions) {
    let options = SearchOptions {
        strategy: Strategy::ViewBfs,
        ..SearchOptions::default()
    };
    let outcome = Checker::new(model.clone()).options(options.clone()).run();
    (outcome, options)
}

/// With 1,000 noise values per work value, breadth-first search stores
/// about a thousand times the states that view-bfs does: view-bfs keeps
/// one state per work value and reaches the violation by a shortest path
/// that replays through the model.
#[test]
fn one_state_per_view_reaches_a_deep_violation_by_a_real_path() {
    let model = Noisy {
        limit: 30,
        bad: 30,
        noise_max: 999,
        view: true,
    };
    let (outcome, options) = view_bfs(&model);
    assert_eq!(
        outcome.verdict,
        Verdict::Violated {
            property: "work below bad".into(),
            kind: cmc_search::ViolationKind::Invariant,
        }
    );
    assert_eq!(outcome.stats.distinct_states, 31, "views 0..=30");
    let counterexample = outcome.counterexample.as_ref().expect("a counterexample");
    assert_eq!(counterexample.len(), 31, "30 Work steps from the start");
    let report = Report::new(&model, &options, &outcome);
    assert_eq!(report.strategy, "view-bfs");
    let file = ReplayFile::from_counterexample(&model, counterexample, Some("work below bad"));
    let replayed = replay(&model, &file).expect("the replay file is the model's");
    assert!(!replayed.verdict.is_pass(), "the path fails when replayed");
}

/// A search that finds nothing has set states aside: it is a pass of what
/// it explored, never complete, and its report says what bounded it.
#[test]
fn a_run_without_violation_is_not_complete_and_says_why() {
    let model = Noisy {
        limit: 20,
        bad: 1_000,
        noise_max: 50,
        view: true,
    };
    let (outcome, options) = view_bfs(&model);
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert!(!outcome.stats.complete);
    let report = Report::new(&model, &options, &outcome);
    assert_eq!(
        report.bound.as_deref(),
        Some("one state expanded per coarse view")
    );
}

/// A model without a coarse view is refused with a clear error.
#[test]
fn a_model_without_a_coarse_view_is_refused() {
    let model = Noisy {
        limit: 3,
        bad: 3,
        noise_max: 3,
        view: false,
    };
    let (outcome, _) = view_bfs(&model);
    match outcome.verdict {
        Verdict::Error { message } => assert!(message.contains("coarse view"), "{message}"),
        other => panic!("expected an error, got {other:?}"),
    }
}
