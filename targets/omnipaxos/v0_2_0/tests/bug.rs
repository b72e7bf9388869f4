//! omnipaxos 0.2.0 decides different entries at two servers along the
//! schedule of upstream pull request 112; 0.2.1 keeps agreement along the
//! same schedule (`../tests/fixed.rs`).

use cmc_target_omnipaxos::scenario::{drive, ACCEPT_SYNC_SCHEDULE};
use cmc_target_omnipaxos::{world, BUG_CONFIGURATION};

#[test]
fn release_0_2_0_decides_different_prefixes_along_the_accept_sync_schedule() {
    let world = world(&BUG_CONFIGURATION).unwrap();
    let (states, violated) = drive(&world, ACCEPT_SYNC_SCHEDULE).unwrap();
    eprintln!("{} steps, {violated:?}", states.len());
    assert_eq!(violated.as_deref(), Some("DecidedPrefixesAgree"));
}
