//! Walks from the frontier: Paxos bug 4 (the leader ignores the accepted
//! proposals reported in Prepared) needs 16 states at least (BFS's shortest
//! counterexample in the gate). A breadth-first search bounded at depth 10
//! passes; random walks from every state of its frontier find the violation,
//! and the trace (the BFS path, then the walk) replays to it.

use cmc_protocols::paxos::properties::world;
use cmc_search::{Checker, FrontierWalks, Report, SearchOptions, Verdict};

/// The gate's Paxos configuration.
const PARAMS: [&str; 3] = ["crash_nodes=0,1,2", "crashes=1", "restarts=1"];

fn bounded() -> SearchOptions {
    SearchOptions {
        max_depth: Some(10),
        workers: 2,
        check_deadlock: false,
        ..SearchOptions::default()
    }
}

#[test]
fn frontier_walks_find_paxos_bug4_below_the_depth_bound() {
    let outcome = Checker::new(world(4, 5, &PARAMS).unwrap())
        .options(bounded())
        .run();
    assert_eq!(outcome.verdict, Verdict::Pass, "depth 10 is too shallow");
    assert!(!outcome.stats.complete && outcome.stats.states_left_on_queue > 0);

    let options = SearchOptions {
        frontier_walks: Some(FrontierWalks {
            walk_length: 30,
            rounds: 1,
            seed: 0,
        }),
        ..bounded()
    };
    let checker = Checker::new(world(4, 5, &PARAMS).unwrap()).options(options.clone());
    let outcome = checker.run();
    assert!(checker.model().fault().is_none());
    assert!(
        matches!(outcome.verdict, Verdict::Violated { ref property, .. } if property == "AtMostOneChosen"),
        "{:?}",
        outcome.verdict
    );
    let trace = outcome.counterexample.as_ref().unwrap();
    assert!(trace.len() >= 16, "{}", trace.len());
    let report = Report::new(checker.model(), &options, &outcome);
    let walk = report.walks.as_ref().unwrap().failing_walk.unwrap();
    let file = report.replay_file.unwrap();
    assert!(file.settings.contains(&format!("walk={walk}")));
    assert!(file.settings.contains(&"frontier-walks=30".to_string()));
    // The whole trace, from the initial state, replays to the violation.
    let replayed = cmc_search::replay(checker.model(), &file).unwrap();
    assert!(
        matches!(replayed.verdict, Verdict::Violated { ref property, .. } if property == "AtMostOneChosen")
    );
}
