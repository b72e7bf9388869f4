//! A test core written as one function: [`StepCore`].

use bytemuck::Pod;
use cmc_world::core::abi::{Config, CoreError, Event, Outputs};
use cmc_world::TypedCore;

/// What a [`StepCore`] runs for each event: the node's configuration, its
/// volatile part, the event and the outputs to fill.
type Step<S> = dyn Fn(&Config, &mut S, &Event, &mut Outputs) -> Result<(), CoreError> + Send + Sync;

/// A core given by its name and its step over a volatile part of type `S`.
/// Its durable part is an `S` too, which the step does not see (the cores
/// of these tests persist nothing).
pub struct StepCore<S> {
    name: &'static str,
    step: Box<Step<S>>,
}

impl<S> StepCore<S> {
    /// The core called `name` that runs `step` for each event.
    pub fn new(
        name: &'static str,
        step: impl Fn(&Config, &mut S, &Event, &mut Outputs) -> Result<(), CoreError>
            + Send
            + Sync
            + 'static,
    ) -> Self {
        StepCore {
            name,
            step: Box::new(step),
        }
    }
}

impl<S: Pod> TypedCore for StepCore<S> {
    type Durable = S;
    type Volatile = S;

    fn name(&self) -> &str {
        self.name
    }

    fn step(
        &self,
        config: &Config,
        _: &S,
        volatile: &mut S,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        (self.step)(config, volatile, event, out)
    }
}
