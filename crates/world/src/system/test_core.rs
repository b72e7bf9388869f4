//! A core for the World's own unit tests, so that they need none of the
//! example cores (which sit above the World).

use crate::core::abi::{Config, CoreError, Event, Outputs};
use crate::core::TypedCore;

/// Ignores every event; its nodes are interchangeable.
#[derive(Default)]
pub(crate) struct Idle;

impl TypedCore for Idle {
    type Durable = u8;
    type Volatile = u8;

    fn name(&self) -> &str {
        "idle"
    }

    fn step(
        &self,
        _: &Config,
        _: &u8,
        _: &mut u8,
        _: &Event,
        _: &mut Outputs,
    ) -> Result<(), CoreError> {
        Ok(())
    }

    fn permute(&self, _: &Config, _: &mut u8, _: &mut u8, _: &[u32]) -> bool {
        true
    }
}

/// Runs its function for every event (a test core in one line); nothing
/// in its state.
pub(crate) struct Stepping(pub fn(&Event, &mut Outputs) -> Result<(), CoreError>);

impl TypedCore for Stepping {
    type Durable = u8;
    type Volatile = u8;

    fn name(&self) -> &str {
        "stepping"
    }

    fn step(
        &self,
        _: &Config,
        _: &u8,
        _: &mut u8,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        (self.0)(event, out)
    }
}
