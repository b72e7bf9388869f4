//! omnipaxos 0.2.1 keeps every log-replication property along the schedule
//! in which 0.2.0 decides different entries (`v0_2_0/tests/bug.rs`).

use cmc_target_omnipaxos::scenario::{drive, ACCEPT_SYNC_SCHEDULE};
use cmc_target_omnipaxos::{world, BUG_CONFIGURATION};

#[test]
fn the_fixed_release_keeps_agreement_along_the_accept_sync_schedule() {
    let world = world(&BUG_CONFIGURATION).unwrap();
    let result = drive(&world, ACCEPT_SYNC_SCHEDULE);
    eprintln!(
        "{:?}",
        result
            .as_ref()
            .map(|(states, violated)| (states.len(), violated.clone()))
    );
    let (states, violated) = result.unwrap();
    assert_eq!(violated, None);
    assert_eq!(states.len(), ACCEPT_SYNC_SCHEDULE.len());
}
