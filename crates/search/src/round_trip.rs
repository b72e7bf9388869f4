//! The encoding half of the determinism gate: every new state's encoding
//! must decode to a state with that same encoding (`decode(encode(s)) == s`,
//! compared by encoding since a state's bytes are its identity). A state that
//! does not survive the trip would be explored as another state after the
//! frontier, a checkpoint or a spill to disk stored it.

use cmc_model::{check_round_trip, Model, RoundTripFailure};

use crate::SearchOptions;

/// Whether new states are checked: under `--check-determinism`, and always in
/// builds with debug assertions (so every debug `cargo test` checks them).
pub(crate) fn enabled(options: &SearchOptions) -> bool {
    options.check_determinism || cfg!(debug_assertions)
}

/// Checks that `bytes`, the encoding of `state`, decodes back to it; the
/// error names the model and the state.
pub(crate) fn check<M: Model>(model: &M, state: &M::State, bytes: &[u8]) -> Result<(), String> {
    match check_round_trip::<M::State>(bytes) {
        Ok(()) => Ok(()),
        Err(RoundTripFailure::Undecodable(error)) => Err(format!(
            "model {}: the encoding of state {state:?} does not decode: {error}",
            model.name()
        )),
        Err(RoundTripFailure::Changed { decoded, .. }) => Err(format!(
            "model {}: state {state:?} encodes to bytes that decode to another state, {decoded:?}",
            model.name()
        )),
    }
}
