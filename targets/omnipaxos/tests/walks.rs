//! omnipaxos 0.2.1 keeps every property in the random walks that find
//! 0.2.0's `AcceptSync` bug (`v0_2_0/tests/search.rs`): the same
//! configuration, seed, number and length of walks, every walk run to its
//! end. A bounded check: walks sample the runs, they do not cover them.

use cmc_search::test_support::print_outcome;
use cmc_search::Verdict;
use cmc_target_omnipaxos::{walks, world, SEARCH_CONFIGURATION, WALKS};

#[test]
fn the_fixed_release_keeps_every_property_in_the_walks_that_find_the_bug() {
    let start = std::time::Instant::now();
    let outcome = walks(world(&SEARCH_CONFIGURATION).unwrap()).run();
    print_outcome(&outcome, start);
    assert_eq!(outcome.verdict, Verdict::Pass);
    assert_eq!(outcome.stats.walks.map(|w| w.walks), Some(WALKS));
}
