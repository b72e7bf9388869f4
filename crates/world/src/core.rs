//! The core contract in Rust.
//!
//! [`Core`] is what the World runs: a step over opaque state bytes. Rust cores
//! usually implement [`TypedCore`] instead, over plain-old-data structs, and get
//! [`Core`] for free; C cores are wrapped by [`crate::loader::CCore`].

use bytemuck::Pod;

use crate::abi::{Config, CoreError, Event, Outputs};

/// A deterministic step function over a fixed-size, pointer-free state.
///
/// Contract: `step` depends only on its arguments (no clock, randomness,
/// globals or I/O), leaves `durable` untouched (changes go through PERSIST
/// outputs) and keeps `volatile` canonical (equal states have equal bytes).
/// The World passes slices of exactly [`durable_size`](Core::durable_size)
/// and [`volatile_size`](Core::volatile_size) bytes and an empty `out`.
pub trait Core: Send + Sync {
    /// Short name, e.g. `reqack`.
    fn name(&self) -> &str;
    /// Bytes of the durable part.
    fn durable_size(&self) -> usize;
    /// Bytes of the volatile part.
    fn volatile_size(&self) -> usize;
    /// Handles one event.
    fn step(
        &self,
        config: &Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError>;
    /// The core's own text for a state, if it has one.
    fn describe_state(
        &self,
        _config: &Config,
        _durable: &[u8],
        _volatile: &[u8],
    ) -> Option<String> {
        None
    }
    /// The core's own text for a message it sends, if it has one.
    fn describe_message(&self, _config: &Config, _message: &[u8]) -> Option<String> {
        None
    }
}

/// A Rust core over plain-old-data state structs (no padding, no pointers:
/// `bytemuck::Pod`), whose bytes are the canonical encoding.
///
/// Every `TypedCore` is a [`Core`]; the state structs are copied in and out of
/// the World's byte buffers, so they need no particular alignment there.
pub trait TypedCore: Send + Sync {
    /// The durable part.
    type Durable: Pod;
    /// The volatile part.
    type Volatile: Pod;
    /// Short name, e.g. `reqack`.
    fn name(&self) -> &str;
    /// Handles one event; `durable` is read-only, as in [`Core::step`].
    fn step(
        &self,
        config: &Config,
        durable: &Self::Durable,
        volatile: &mut Self::Volatile,
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError>;
    /// The core's own text for a state.
    fn describe_state(
        &self,
        _config: &Config,
        _durable: &Self::Durable,
        _volatile: &Self::Volatile,
    ) -> Option<String> {
        None
    }
    /// The core's own text for a message.
    fn describe_message(&self, _config: &Config, _message: &[u8]) -> Option<String> {
        None
    }
}

impl<T: TypedCore> Core for T {
    fn name(&self) -> &str {
        TypedCore::name(self)
    }

    fn durable_size(&self) -> usize {
        std::mem::size_of::<T::Durable>()
    }

    fn volatile_size(&self) -> usize {
        std::mem::size_of::<T::Volatile>()
    }

    fn step(
        &self,
        config: &Config,
        durable: &[u8],
        volatile: &mut [u8],
        event: &Event,
        out: &mut Outputs,
    ) -> Result<(), CoreError> {
        let durable: T::Durable = bytemuck::pod_read_unaligned(durable);
        let mut state: T::Volatile = bytemuck::pod_read_unaligned(volatile);
        let result = TypedCore::step(self, config, &durable, &mut state, event, out);
        volatile.copy_from_slice(bytemuck::bytes_of(&state));
        result
    }

    fn describe_state(&self, config: &Config, durable: &[u8], volatile: &[u8]) -> Option<String> {
        TypedCore::describe_state(
            self,
            config,
            &bytemuck::pod_read_unaligned(durable),
            &bytemuck::pod_read_unaligned(volatile),
        )
    }

    fn describe_message(&self, config: &Config, message: &[u8]) -> Option<String> {
        TypedCore::describe_message(self, config, message)
    }
}
