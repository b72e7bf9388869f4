//! Running one core step: guarded buffers, output validation and the
//! determinism gate.
//!
//! Every step of a core that [needs them](Core::needs_memory_guards) (a C
//! core) runs on guarded copies of its buffers (module `guard_pages`): a write
//! out of bounds or into the read-only durable part is a fault. A typed Rust
//! core cannot do either and runs on the state in place.
//!
//! With the gate on, the step runs twice, each time from a copy of the state,
//! with the stack and (for a guarded core, which can read it whole) the
//! output buffer dirtied by a different byte pattern; any difference in the
//! return value, the new state or the outputs is non-determinism.

use std::cell::{Cell, RefCell};

use crate::core::abi::{Config, CoreError, Event, OutputKind, Outputs, OUTPUTS_MAX, PAYLOAD_MAX};
use crate::core::Core;
use crate::run::guard_pages;

/// Why a step did not produce a usable result.
///
/// ```
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::core::helpers::Message;
/// use cmc_world::example_cores::reqack::{Msg, ReqAck, MSG_ACK};
/// use cmc_world::run::step::{run, StepFailure};
/// use cmc_world::Core;
///
/// let core = ReqAck::default();
/// let receiver = Config { node: 1, nodes: 2, params: [0; 8] };
/// let mut state = vec![0; core.durable_size() + core.volatile_size()];
/// // A receiver refuses an ACK with its error code 2.
/// let ack = Event::new(EventKind::Recv, 0, 0, &Msg { kind: MSG_ACK, request: 0 }.encode(), 0);
/// let failure = run(&core, &receiver, &mut state, &ack, &mut Outputs::default(), false);
/// assert_eq!(failure, Err(StepFailure::Error(CoreError::Code(2))));
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StepFailure {
    /// The core reported an error.
    Error(CoreError),
    /// The same step from the same state gave different results; the text says where.
    NonDeterminism(String),
    /// The core emitted an output the environment cannot carry out; the text says why.
    BadOutput(String),
    /// The core wrote outside its buffers or into a read-only one; the text says where.
    Memory(String),
}

thread_local! {
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
    static GATED: Cell<bool> = const { Cell::new(false) };
}

/// Whether the step running on this thread is under the determinism gate
/// (a core with checks of its own, such as a heap-state core's check that
/// equal views behave alike, runs them in full then).
pub(crate) fn under_determinism_gate() -> bool {
    GATED.with(Cell::get)
}

/// Runs `core` on `state` (durable part then volatile part) and `event`,
/// leaving the new state in `state` and the outputs, validated, in `out`
/// (its items past the outputs' count are not written).
///
/// ```
/// use std::sync::atomic::{AtomicU32, Ordering};
/// use cmc_world::core::abi::{Config, CoreError, Event, EventKind, Outputs};
/// use cmc_world::run::step::{run, StepFailure};
/// use cmc_world::TypedCore;
///
/// /// Counts its steps in a hidden global: not a function of its arguments.
/// struct Hidden(AtomicU32);
/// impl TypedCore for Hidden {
///     type Durable = u32;
///     type Volatile = u32;
///     fn name(&self) -> &str { "hidden" }
///     fn step(&self, _: &Config, _: &u32, v: &mut u32, _: &Event, _: &mut Outputs)
///         -> Result<(), CoreError> {
///         *v = self.0.fetch_add(1, Ordering::Relaxed);
///         Ok(())
///     }
/// }
///
/// let core = Hidden(AtomicU32::new(0));
/// let config = Config { node: 0, nodes: 1, params: [0; 8] };
/// let start = Event::new(EventKind::Start, 0, 0, &[], 0);
/// let (mut state, mut out) = (vec![0; 8], Outputs::default());
/// // Run once, the step looks fine; run twice by the gate, it is caught.
/// assert_eq!(run(&core, &config, &mut state, &start, &mut out, false), Ok(()));
/// let gated = run(&core, &config, &mut state, &start, &mut out, true);
/// assert!(matches!(gated, Err(StepFailure::NonDeterminism(_))), "{gated:?}");
/// ```
pub fn run(
    core: &dyn Core,
    config: &Config,
    state: &mut [u8],
    event: &Event,
    out: &mut Outputs,
    check_determinism: bool,
) -> Result<(), StepFailure> {
    let durable_size = core.durable_size();
    debug_assert_eq!(state.len(), durable_size + core.volatile_size());
    if let Some(recorder) = crate::run::recorder::installed() {
        recorder.note_event(config.node, event);
    }
    let once = |state: &mut [u8], out: &mut Outputs, fill: u8| {
        guard_pages::step(core, config, state, event, out, fill).map_err(StepFailure::Memory)
    };
    if check_determinism {
        GATED.with(|gated| gated.set(true));
        let gated_result = SCRATCH.with(|scratch| {
            let mut copy = scratch.borrow_mut();
            copy.clear();
            copy.extend_from_slice(state);
            let mut first = Outputs::default();
            dirty_stack(0xa5);
            let first_result = once(&mut copy, &mut first, 0xa5)?;
            dirty_stack(0x5a);
            let second_result = once(state, out, 0x5a)?;
            if let Some(difference) = compare(
                durable_size,
                &copy,
                state,
                &first_result,
                &second_result,
                &first,
                out,
            ) {
                return Err(StepFailure::NonDeterminism(difference));
            }
            second_result.map_err(StepFailure::Error)
        });
        GATED.with(|gated| gated.set(false));
        gated_result?;
    } else {
        once(state, out, 0)?.map_err(StepFailure::Error)?;
    }
    validate(out)
}

/// The message a panic carried (`a panic without a message` if it was not
/// text).
pub(crate) fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|text| text.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".into())
}

/// Overwrites the stack below the caller with `pattern`, so that a core
/// reading uninitialised locals sees different garbage in the two runs.
#[inline(never)]
fn dirty_stack(pattern: u8) {
    let mut area = [pattern; 16 * 1024];
    std::hint::black_box(&mut area);
}

fn compare(
    durable_size: usize,
    first_state: &[u8],
    second_state: &[u8],
    first_result: &Result<(), CoreError>,
    second_result: &Result<(), CoreError>,
    first: &Outputs,
    second: &Outputs,
) -> Option<String> {
    if first_result != second_result {
        return Some(format!(
            "the step returned {first_result:?} the first time and {second_result:?} the second"
        ));
    }
    // The durable parts are equal: a step that writes its own is stopped by the guards.
    let (first_volatile, second_volatile) =
        (&first_state[durable_size..], &second_state[durable_size..]);
    if let Some(offset) = first_volatile
        .iter()
        .zip(second_volatile)
        .position(|(a, b)| a != b)
    {
        return Some(format!(
            "the new state differs at byte {} (volatile, offset {offset}): {:#04x} the first time, \
             {:#04x} the second",
            durable_size + offset,
            first_volatile[offset],
            second_volatile[offset]
        ));
    }
    if first.count != second.count {
        return Some(format!(
            "the step emitted {} output(s) the first time and {} the second",
            first.count, second.count
        ));
    }
    let count = (first.count as usize).min(OUTPUTS_MAX);
    for (index, (a, b)) in first.items[..count]
        .iter()
        .zip(&second.items[..count])
        .enumerate()
    {
        let same = a.kind == b.kind && a.dst == b.dst && a.id == b.id && a.len == b.len;
        if !same || a.payload() != b.payload() {
            return Some(format!(
                "output {index} differs: kind {} dst {} id {} payload {} the first time, \
                 kind {} dst {} id {} payload {} the second",
                a.kind,
                a.dst,
                a.id,
                crate::core::hex::hex(a.payload()),
                b.kind,
                b.dst,
                b.id,
                crate::core::hex::hex(b.payload())
            ));
        }
    }
    None
}

fn validate(out: &Outputs) -> Result<(), StepFailure> {
    if out.count as usize > OUTPUTS_MAX {
        return Err(StepFailure::BadOutput(format!(
            "output count {} exceeds the maximum of {OUTPUTS_MAX}",
            out.count
        )));
    }
    for (index, item) in out.as_slice().iter().enumerate() {
        if OutputKind::from_raw(item.kind).is_none() {
            return Err(StepFailure::BadOutput(format!(
                "output {index} has unknown kind {}",
                item.kind
            )));
        }
        if item.len as usize > PAYLOAD_MAX {
            return Err(StepFailure::BadOutput(format!(
                "output {index} has a {}-byte payload; the maximum is {PAYLOAD_MAX}",
                item.len
            )));
        }
    }
    Ok(())
}
