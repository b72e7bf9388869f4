//! Test cores for tests of the World and of the layers above it (the
//! `test-support` feature; this crate's own tests enable it), so that no
//! test spells out a whole [`TypedCore`] for a behaviour of a few lines.
//!
//! [`StepCore`] is a core given by its name and one step function;
//! [`StepCore::idle`] ignores every event. A test core whose state or
//! declarations go beyond that (a durable part it reads, node ids its
//! `permute` renames) keeps its own `TypedCore` next to its test.

use bytemuck::Pod;

use crate::core::abi::{Config, CoreError, Event, Outputs};
use crate::core::TypedCore;

/// What a [`StepCore`] runs for each event: the node's configuration, its
/// volatile part, the event and the outputs to fill.
type Step<S> = dyn Fn(&Config, &mut S, &Event, &mut Outputs) -> Result<(), CoreError> + Send + Sync;

/// A core's text for a reply's payload (as [`TypedCore::describe_reply`]).
type DescribeReply = fn(&[u8]) -> Option<String>;

/// Whether the node of a configuration may send to a node (as
/// [`TypedCore::may_send`]).
type MaySend = dyn Fn(&Config, u32) -> bool + Send + Sync;

/// A core given by its name and its step over a volatile part of type `S`.
/// Its durable part is an `S` too, which the step does not see (these
/// cores persist nothing). By default it declares what a `TypedCore` does
/// by default: nodes not interchangeable, every node may send to every
/// other, no text of its own for a reply.
pub struct StepCore<S> {
    name: &'static str,
    step: Box<Step<S>>,
    symmetric: bool,
    may_send: Box<MaySend>,
    describe_reply: Option<DescribeReply>,
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
            symmetric: false,
            may_send: Box::new(|_, _| true),
            describe_reply: None,
        }
    }

    /// The core called `name` that ignores every event.
    pub fn idle(name: &'static str) -> Self {
        StepCore::new(name, |_, _, _, _| Ok(()))
    }

    /// This core, declaring its nodes interchangeable: its `permute`
    /// renames nothing (there are no node ids in its state) and succeeds.
    pub fn symmetric(self) -> Self {
        StepCore {
            symmetric: true,
            ..self
        }
    }

    /// This core, declaring that the node of `config` may send to node
    /// `dst` only when `may_send(config, dst)` holds, whatever its step
    /// does.
    pub fn sending_only(
        self,
        may_send: impl Fn(&Config, u32) -> bool + Send + Sync + 'static,
    ) -> Self {
        StepCore {
            may_send: Box::new(may_send),
            ..self
        }
    }

    /// This core, declaring that no node ever sends (`may_send` is false),
    /// whatever its step does.
    pub fn never_sends(self) -> Self {
        self.sending_only(|_, _| false)
    }

    /// This core, with `describe` as its text for a reply's payload.
    pub fn describing_replies(self, describe: DescribeReply) -> Self {
        StepCore {
            describe_reply: Some(describe),
            ..self
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

    fn describe_reply(&self, _: &Config, payload: &[u8]) -> Option<String> {
        self.describe_reply.and_then(|describe| describe(payload))
    }

    fn permute(&self, _: &Config, _: &mut S, _: &mut S, _: &[u32]) -> bool {
        self.symmetric
    }

    fn may_send(&self, config: &Config, dst: u32) -> bool {
        (self.may_send)(config, dst)
    }
}
