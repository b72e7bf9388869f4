//! The bundled models' state encodings, pinned byte for byte: replay files,
//! checkpoints and fingerprints depend on them, so a change of layout (e.g. in
//! how `#[derive(Encode)]` orders fields or numbers variants) must show here.

use cmc_model::Encode;
use cmc_models::die_hard::Jugs;
use cmc_models::rm::{Rm, RmSet, RmState, RmStates};
use cmc_models::two_phase::{TmState, TwoPhaseMsgs, TwoPhaseState};

#[test]
fn die_hard_jugs_are_big_then_small() {
    let jugs = Jugs { big: 4, small: 3 };
    assert_eq!(jugs.to_bytes(), [4, 3]);
    assert_eq!(Jugs::decode_exact(&[4, 3]).unwrap(), jugs);
}

#[test]
fn enum_tags_follow_declaration_order() {
    let rm_tags: Vec<Vec<u8>> = [
        RmState::Working,
        RmState::Prepared,
        RmState::Committed,
        RmState::Aborted,
    ]
    .iter()
    .map(Encode::to_bytes)
    .collect();
    assert_eq!(rm_tags, [[0], [1], [2], [3]]);
    let tm_tags: Vec<Vec<u8>> = [TmState::Init, TmState::Committed, TmState::Aborted]
        .iter()
        .map(Encode::to_bytes)
        .collect();
    assert_eq!(tm_tags, [[0], [1], [2]]);
}

#[test]
fn a_two_phase_state_is_pinned_byte_for_byte() {
    let state = TwoPhaseState {
        rm_state: RmStates::ALL_WORKING
            .with(Rm(0), RmState::Prepared)
            .with(Rm(2), RmState::Aborted),
        tm_state: TmState::Aborted,
        tm_prepared: RmSet::EMPTY.with(Rm(0)),
        msgs: TwoPhaseMsgs {
            prepared: RmSet::EMPTY.with(Rm(0)).with(Rm(9)),
            commit: false,
            abort: true,
        },
    };
    let bytes = state.to_bytes();
    assert_eq!(
        bytes,
        [
            0x31, 0, 0, 0, // rmState: two bits per RM, RM 0 prepared (1), RM 2 aborted (3)
            2, // tmState "aborted"
            1, 0, // tmPrepared {0}
            1, 2, // msgs: Prepared from {0, 9}
            0, 1, // no Commit, an Abort
        ]
    );
    assert_eq!(TwoPhaseState::decode_exact(&bytes).unwrap(), state);
}
