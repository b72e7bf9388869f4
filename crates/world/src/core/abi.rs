//! The core ABI: Rust mirrors of the types in `include/cmc.h`.
//!
//! Rust cores and C cores see exactly the same event and output layouts, so a
//! step is the same bytes in and out whichever language the core is written in.
//! The layouts are `#[repr(C)]` and checked against the header's sizes by tests.

use std::ffi::{c_char, c_int, c_void};

use bytemuck::{Pod, Zeroable};

/// Version of the ABI (`CMC_ABI_VERSION`); a core built for another one is refused.
pub const ABI_VERSION: u32 = 1;
/// Bytes of payload an event or output carries (`CMC_PAYLOAD_MAX`).
pub const PAYLOAD_MAX: usize = 64;
/// Outputs one step may emit (`CMC_OUTPUTS_MAX`).
pub const OUTPUTS_MAX: usize = 16;
/// Configuration parameters per node (`CMC_PARAMS_MAX`).
pub const PARAMS_MAX: usize = 8;
/// Timer ids and wake ids are below this (`CMC_TIMERS_MAX`).
pub const TIMERS_MAX: u32 = 32;
/// Largest state, durable plus volatile, a core may declare (`CMC_STATE_MAX`).
pub const STATE_MAX: usize = 65536;
/// The symbol a C core exports (`CMC_ENTRY_SYMBOL`).
pub const ENTRY_SYMBOL: &str = "cmc_core_entry";

/// What happened to a node (`enum cmc_event_kind`).
///
/// ```
/// use cmc_world::core::abi::EventKind;
///
/// // An event's raw kind, as a C core sees it, back to the enum.
/// assert_eq!(EventKind::from_raw(5), Some(EventKind::Client));
/// assert_eq!(EventKind::Client.name(), "CLIENT");
/// assert_eq!(EventKind::from_raw(99), None);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum EventKind {
    /// First start or restart; the durable part holds what was flushed.
    Start = 1,
    /// A message arrived from `src`.
    Recv = 2,
    /// Armed timer `id` fired.
    Timer = 3,
    /// The oldest persist (offset `id`, bytes `payload`) is now durable.
    Flushed = 4,
    /// Client request `id` arrived.
    Client = 5,
    /// Client request `id` failed locally.
    LocalFail = 6,
    /// Pending wake-up `id` ran.
    Wake = 7,
    /// The node's clock advanced.
    Tick = 8,
    /// Random choice `id` was made: its value (below the `k` asked for) is `payload[0]`.
    Choice = 10,
}

impl EventKind {
    /// The kind with ABI number `raw`, if any.
    pub fn from_raw(raw: u32) -> Option<EventKind> {
        use EventKind::*;
        [
            Start, Recv, Timer, Flushed, Client, LocalFail, Wake, Tick, Choice,
        ]
        .into_iter()
        .find(|kind| *kind as u32 == raw)
    }

    /// Upper-case name used in traces, e.g. `RECV`.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Start => "START",
            EventKind::Recv => "RECV",
            EventKind::Timer => "TIMER",
            EventKind::Flushed => "FLUSHED",
            EventKind::Client => "CLIENT",
            EventKind::LocalFail => "LOCAL_FAIL",
            EventKind::Wake => "WAKE",
            EventKind::Tick => "TICK",
            EventKind::Choice => "CHOICE",
        }
    }
}

/// What a node asks of the environment (`enum cmc_output_kind`).
///
/// ```
/// use cmc_world::core::abi::{OutputKind, Outputs};
///
/// let mut out = Outputs::default();
/// out.persist(4, &[1])?;
/// let kind = OutputKind::from_raw(out.as_slice()[0].kind);
/// assert_eq!(kind.map(OutputKind::name), Some("PERSIST"));
/// # Ok::<(), cmc_world::core::abi::CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u32)]
pub enum OutputKind {
    /// Send the payload to node `dst`.
    Send = 1,
    /// Arm timer `id`.
    SetTimer = 2,
    /// Disarm timer `id`.
    CancelTimer = 3,
    /// Write the payload at durable offset `id` once flushed.
    Persist = 4,
    /// Schedule wake-up `id`.
    Wake = 5,
    /// Reply the payload to client request `id`.
    Reply = 6,
    /// Arm timer `id` with a deadline on the node's clock (the payload, a
    /// little-endian `u64`, see [`Outputs::set_timer_at`]): it fires only
    /// once the clock has reached the deadline.
    SetTimerAt = 7,
    /// Ask for random choice `id` among `payload[0]` values (1 to 255),
    /// answered later by a [`EventKind::Choice`] event.
    Choose = 8,
}

impl OutputKind {
    /// The kind with ABI number `raw`, if any.
    pub fn from_raw(raw: u32) -> Option<OutputKind> {
        use OutputKind::*;
        [
            Send,
            SetTimer,
            CancelTimer,
            Persist,
            Wake,
            Reply,
            SetTimerAt,
            Choose,
        ]
        .into_iter()
        .find(|kind| *kind as u32 == raw)
    }

    /// Upper-case name used in traces, e.g. `SEND`.
    pub fn name(self) -> &'static str {
        match self {
            OutputKind::Send => "SEND",
            OutputKind::SetTimer => "SET_TIMER",
            OutputKind::CancelTimer => "CANCEL_TIMER",
            OutputKind::Persist => "PERSIST",
            OutputKind::Wake => "WAKE",
            OutputKind::Reply => "REPLY",
            OutputKind::SetTimerAt => "SET_TIMER_AT",
            OutputKind::Choose => "CHOOSE",
        }
    }
}

/// A node's configuration (`cmc_config`), constant for its lifetime.
///
/// ```
/// use cmc_world::core::abi::Config;
///
/// // Node 1 of 3, with core parameter 0 (`cfg0=4`) set.
/// let config = Config { node: 1, nodes: 3, params: [4, 0, 0, 0, 0, 0, 0, 0] };
/// let receivers = (0..config.nodes).filter(|n| *n != config.node).count();
/// assert_eq!((receivers, config.params[0]), (2, 4));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Config {
    /// This node's id, `0..nodes`.
    pub node: u32,
    /// Number of nodes in the world.
    pub nodes: u32,
    /// User parameters (`CFG0`..`CFG7`), zero unless set.
    pub params: [u64; PARAMS_MAX],
}

/// One event delivered to a step (`cmc_event`); payload bytes past `len` are zero.
///
/// ```
/// use cmc_world::core::abi::{Event, EventKind};
///
/// // A message `[1, 2]` from node 2, as the World delivers it at clock 5.
/// let event = Event::new(EventKind::Recv, 2, 0, &[1, 2], 5);
/// assert_eq!(event.kind(), Some(EventKind::Recv));
/// assert_eq!((event.src, event.payload(), event.clock), (2, &[1, 2][..], 5));
/// assert_eq!(event.payload[2..], [0; 62]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Event {
    /// An [`EventKind`] number.
    pub kind: u32,
    /// `Recv`: the sending node.
    pub src: u32,
    /// Timer, request or wake id, or persist offset.
    pub id: u32,
    /// Payload length, at most [`PAYLOAD_MAX`].
    pub len: u32,
    /// The node's clock.
    pub clock: u64,
    /// Payload bytes.
    pub payload: [u8; PAYLOAD_MAX],
}

impl Event {
    /// An event of `kind` with the given fields; `payload` longer than
    /// [`PAYLOAD_MAX`] is a caller bug (the World never builds one).
    pub fn new(kind: EventKind, src: u32, id: u32, payload: &[u8], clock: u64) -> Event {
        assert!(payload.len() <= PAYLOAD_MAX, "event payload too long");
        let mut event = Event {
            kind: kind as u32,
            src,
            id,
            len: payload.len() as u32,
            clock,
            payload: [0; PAYLOAD_MAX],
        };
        event.payload[..payload.len()].copy_from_slice(payload);
        event
    }

    /// The event's kind (the World only delivers valid kinds).
    pub fn kind(&self) -> Option<EventKind> {
        EventKind::from_raw(self.kind)
    }

    /// The meaningful payload bytes.
    pub fn payload(&self) -> &[u8] {
        &self.payload[..(self.len as usize).min(PAYLOAD_MAX)]
    }
}

/// One output of a step (`cmc_output`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Output {
    /// An [`OutputKind`] number.
    pub kind: u32,
    /// `Send`: the destination node.
    pub dst: u32,
    /// Timer, wake or request id, or persist offset.
    pub id: u32,
    /// Payload length, at most [`PAYLOAD_MAX`].
    pub len: u32,
    /// Payload bytes.
    pub payload: [u8; PAYLOAD_MAX],
}

impl Output {
    /// The meaningful payload bytes (clamped to [`PAYLOAD_MAX`]).
    pub fn payload(&self) -> &[u8] {
        &self.payload[..(self.len as usize).min(PAYLOAD_MAX)]
    }
}

/// The outputs of one step, in order (`cmc_outputs`).
///
/// A core appends with the helpers ([`Outputs::send`], [`Outputs::reply`],
/// ...); past [`OUTPUTS_MAX`] they return [`CoreError::OutputsFull`], which the
/// World reports as a core fault.
///
/// ```
/// use cmc_world::core::abi::{CoreError, OutputKind, Outputs, OUTPUTS_MAX};
///
/// let mut out = Outputs::default();
/// out.send(1, b"DATA")?;
/// out.set_timer(0)?;
/// let kinds: Vec<_> = out.as_slice().iter().map(|o| OutputKind::from_raw(o.kind)).collect();
/// assert_eq!(kinds, [Some(OutputKind::Send), Some(OutputKind::SetTimer)]);
/// assert_eq!((out.as_slice()[0].dst, out.as_slice()[0].payload()), (1, &b"DATA"[..]));
///
/// for _ in 2..OUTPUTS_MAX {
///     out.reply(0, &[])?;
/// }
/// assert_eq!(out.reply(0, &[]), Err(CoreError::OutputsFull));
/// # Ok::<(), CoreError>(())
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Pod, Zeroable)]
#[repr(C)]
pub struct Outputs {
    /// Number of valid entries in `items`.
    pub count: u32,
    /// Outputs the emit helpers refused (beyond [`OUTPUTS_MAX`] or with a
    /// payload over [`PAYLOAD_MAX`]); nonzero stops the run with a capacity
    /// fault even if the core ignored the error.
    pub reserved: u32,
    /// The outputs; entries past `count` are ignored.
    pub items: [Output; OUTPUTS_MAX],
}

impl Default for Outputs {
    fn default() -> Self {
        Outputs::zeroed()
    }
}

/// A step error: a core returned nonzero, or asked for something impossible.
/// The World reports it as a fault ([`crate::FaultKind::CoreError`]); see the
/// example on [`crate::Fault`].
///
/// ```
/// use cmc_world::core::abi::CoreError;
///
/// assert_eq!(CoreError::Code(3).to_string(), "the step returned error code 3");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The core's step returned this nonzero code.
    Code(i32),
    /// The step emitted more than [`OUTPUTS_MAX`] outputs or a payload over [`PAYLOAD_MAX`].
    OutputsFull,
}

impl std::fmt::Display for CoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CoreError::Code(code) => write!(f, "the step returned error code {code}"),
            CoreError::OutputsFull => write!(
                f,
                "the step emitted more than {OUTPUTS_MAX} outputs or a payload over {PAYLOAD_MAX} bytes"
            ),
        }
    }
}

impl Outputs {
    /// The valid outputs (clamped to [`OUTPUTS_MAX`]).
    pub fn as_slice(&self) -> &[Output] {
        &self.items[..(self.count as usize).min(OUTPUTS_MAX)]
    }

    /// Appends an output, as `cmc_emit` does in C.
    pub fn emit(
        &mut self,
        kind: OutputKind,
        dst: u32,
        id: u32,
        payload: &[u8],
    ) -> Result<(), CoreError> {
        let index = self.count as usize;
        if index >= OUTPUTS_MAX || payload.len() > PAYLOAD_MAX {
            self.reserved = self.reserved.saturating_add(1);
            return Err(CoreError::OutputsFull);
        }
        let mut item = Output {
            kind: kind as u32,
            dst,
            id,
            len: payload.len() as u32,
            payload: [0; PAYLOAD_MAX],
        };
        item.payload[..payload.len()].copy_from_slice(payload);
        self.items[index] = item;
        self.count += 1;
        Ok(())
    }

    /// Sends `message` to node `dst`.
    pub fn send(&mut self, dst: u32, message: &[u8]) -> Result<(), CoreError> {
        self.emit(OutputKind::Send, dst, 0, message)
    }

    /// Arms timer `id`.
    pub fn set_timer(&mut self, id: u32) -> Result<(), CoreError> {
        self.emit(OutputKind::SetTimer, 0, id, &[])
    }

    /// Disarms timer `id`.
    pub fn cancel_timer(&mut self, id: u32) -> Result<(), CoreError> {
        self.emit(OutputKind::CancelTimer, 0, id, &[])
    }

    /// Writes `bytes` at durable offset `offset` once the environment flushes it.
    pub fn persist(&mut self, offset: u32, bytes: &[u8]) -> Result<(), CoreError> {
        self.emit(OutputKind::Persist, 0, offset, bytes)
    }

    /// Schedules wake-up `id`.
    pub fn wake(&mut self, id: u32) -> Result<(), CoreError> {
        self.emit(OutputKind::Wake, 0, id, &[])
    }

    /// Replies `bytes` to client request `request`.
    pub fn reply(&mut self, request: u32, bytes: &[u8]) -> Result<(), CoreError> {
        self.emit(OutputKind::Reply, 0, request, bytes)
    }

    /// Asks for random choice `id` among `k` values (1 to 255): a later
    /// `CHOICE` event with this id carries the value, `0..k`, in `payload[0]`.
    /// Asking again for a pending id replaces its `k`.
    pub fn choose(&mut self, id: u32, k: u8) -> Result<(), CoreError> {
        self.emit(OutputKind::Choose, 0, id, &[k])
    }
    /// Arms timer `id` to fire once the node's clock has reached `deadline`
    /// (`cmc_set_timer_at` in C): the payload is the deadline as 8
    /// little-endian bytes. Re-arming replaces the earlier deadline.
    pub fn set_timer_at(&mut self, id: u32, deadline: u64) -> Result<(), CoreError> {
        self.emit(OutputKind::SetTimerAt, 0, id, &deadline.to_le_bytes())
    }
}

/// The deadline a [`OutputKind::SetTimerAt`] output carries, or `None` if
/// its payload is not the 8 bytes [`Outputs::set_timer_at`] writes.
pub fn timer_deadline(output: &Output) -> Option<u64> {
    Some(u64::from_le_bytes(output.payload().try_into().ok()?))
}

/// `cmc_step_fn`.
pub type StepFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *const c_void,
    volatile: *mut c_void,
    event: *const Event,
    out: *mut Outputs,
) -> c_int;
/// `cmc_describe_state_fn`.
pub type DescribeStateFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *const c_void,
    volatile: *const c_void,
    buf: *mut c_char,
    cap: usize,
);
/// `cmc_describe_message_fn`.
pub type DescribeMessageFn = unsafe extern "C" fn(
    config: *const Config,
    message: *const u8,
    len: u32,
    buf: *mut c_char,
    cap: usize,
);
/// `cmc_permute_fn` (reserved for symmetry reduction; not called yet).
pub type PermuteFn = unsafe extern "C" fn(
    config: *const Config,
    durable: *mut c_void,
    volatile: *mut c_void,
    perm: *const u32,
);

/// The descriptor a C core exports (`cmc_core`).
#[derive(Debug, Clone, Copy)]
#[repr(C)]
pub struct CoreDescriptor {
    /// Must equal [`ABI_VERSION`].
    pub abi_version: u32,
    /// Bytes of the durable part.
    pub durable_size: u32,
    /// Bytes of the volatile part.
    pub volatile_size: u32,
    /// Zero.
    pub reserved: u32,
    /// NUL-terminated short name, or null.
    pub name: *const c_char,
    /// The step function (null is refused at load time).
    pub step: Option<StepFn>,
    /// Optional state description.
    pub describe_state: Option<DescribeStateFn>,
    /// Optional message description.
    pub describe_message: Option<DescribeMessageFn>,
    /// Optional node renaming (reserved).
    pub permute: Option<PermuteFn>,
}

/// `cmc_core_entry`.
pub type EntryFn = unsafe extern "C" fn() -> *const CoreDescriptor;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_header() {
        // Offsets and sizes as a C compiler lays out include/cmc.h on LP64.
        assert_eq!(std::mem::size_of::<Config>(), 72);
        assert_eq!(std::mem::size_of::<Event>(), 24 + PAYLOAD_MAX);
        assert_eq!(std::mem::size_of::<Output>(), 16 + PAYLOAD_MAX);
        assert_eq!(
            std::mem::size_of::<Outputs>(),
            8 + OUTPUTS_MAX * (16 + PAYLOAD_MAX)
        );
        assert_eq!(std::mem::size_of::<CoreDescriptor>(), 16 + 5 * 8);
    }

    #[test]
    fn emit_refuses_overflow() {
        let mut out = Outputs::default();
        for _ in 0..OUTPUTS_MAX {
            out.wake(1).unwrap();
        }
        assert_eq!(out.wake(1), Err(CoreError::OutputsFull));
        assert_eq!(out.reserved, 1, "a refused output is counted");
        assert_eq!(
            Outputs::default().send(0, &[0; PAYLOAD_MAX + 1]),
            Err(CoreError::OutputsFull)
        );
    }
}
