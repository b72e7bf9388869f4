//! The flight recorder: a shared memory-mapped file in which every worker of
//! a supervised run writes the pre-state and action of the step it is about to
//! take, and a step counter, so that a supervisor can tell, after the process
//! died or hung, which step did it.
//!
//! Layout: a 64-byte header (magic, version, slot count, slot size), then one
//! slot per worker thread: `in_step: u64`, `steps: u64`, `state_len: u32`,
//! `action_len: u32`, `fault_len: u32`, padding, the action bytes, the fault
//! record, the state bytes.

use std::cell::Cell;
use std::fs::OpenOptions;
use std::path::Path;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

use cmc_model::{Decoder, Encode};

use crate::action::Action;
use crate::fault::{Fault, FaultKind};
use crate::state::WorldState;

/// The environment variable through which a supervisor hands the recorder's
/// path to its child.
pub const RECORDER_ENV: &str = "CMC_FLIGHT_RECORDER";
/// The exit code of a supervised child that stopped at a recorded fault.
pub const EXIT_FAULT: i32 = 86;

const MAGIC: u64 = u64::from_le_bytes(*b"CMCFLREC");
const VERSION: u64 = 1;
const HEADER: usize = 64;
const SLOTS: usize = 32;
const SLOT_HEAD: usize = 32;
const ACTION_MAX: usize = 256;
const FAULT_MAX: usize = 8192;
const STATE_MAX: usize = 1 << 20;
const SLOT_SIZE: usize = SLOT_HEAD + ACTION_MAX + FAULT_MAX + STATE_MAX;

/// A flight recorder mapped into this process.
pub struct Recorder {
    map: memmap2::MmapRaw,
    next_slot: AtomicUsize,
}

thread_local! {
    static SLOT: Cell<Option<usize>> = const { Cell::new(None) };
    static SCRATCH: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// What one worker's slot held when it was read.
#[derive(Debug, Clone)]
pub struct SlotRecord {
    /// Whether the worker was inside a step.
    pub in_step: bool,
    /// Steps the worker completed.
    pub steps: u64,
    /// The pre-state of the last step begun (empty for the initial starts).
    pub pre_state: Vec<u8>,
    /// The action of the last step begun (`None` for the initial starts).
    pub action: Option<Action>,
    /// The fault the worker recorded before exiting, if any.
    pub fault: Option<(FaultKind, String, String)>,
}

impl Recorder {
    /// Creates (or truncates) the recorder file at `path` and maps it.
    pub fn create(path: &Path) -> std::io::Result<Recorder> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(true)
            .open(path)?;
        file.set_len((HEADER + SLOTS * SLOT_SIZE) as u64)?;
        let recorder = Recorder {
            map: memmap2::MmapRaw::map_raw(&file)?,
            next_slot: AtomicUsize::new(0),
        };
        recorder.word(0).store(MAGIC, Ordering::Relaxed);
        recorder.word(8).store(VERSION, Ordering::Relaxed);
        recorder.word(16).store(SLOTS as u64, Ordering::Relaxed);
        recorder.word(24).store(SLOT_SIZE as u64, Ordering::Release);
        Ok(recorder)
    }

    /// Maps an existing recorder file, checking its header.
    pub fn open(path: &Path) -> std::io::Result<Recorder> {
        let file = OpenOptions::new().read(true).write(true).open(path)?;
        let recorder = Recorder {
            map: memmap2::MmapRaw::map_raw(&file)?,
            next_slot: AtomicUsize::new(0),
        };
        let bad = |what: &str| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("{}: {what}", path.display()),
            )
        };
        if recorder.map.len() != HEADER + SLOTS * SLOT_SIZE {
            return Err(bad("not a cmc flight recorder (wrong size)"));
        }
        if recorder.word(0).load(Ordering::Acquire) != MAGIC
            || recorder.word(8).load(Ordering::Relaxed) != VERSION
        {
            return Err(bad("not a cmc flight recorder of this version"));
        }
        Ok(recorder)
    }

    /// The recorder named by [`RECORDER_ENV`], if the variable is set.
    pub fn from_env() -> Option<std::io::Result<Recorder>> {
        std::env::var_os(RECORDER_ENV).map(|path| Recorder::open(Path::new(&path)))
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(offset & 7 == 0 && offset + 8 <= self.map.len());
        // SAFETY: in bounds and 8-aligned (the map is page-aligned); the
        // mapping lives as long as `self`, and all access to it is atomic or
        // confined to the owning thread's slot.
        unsafe { &*(self.map.as_mut_ptr().add(offset) as *const AtomicU64) }
    }

    fn slot_offset(&self) -> usize {
        let slot = SLOT.with(|slot| match slot.get() {
            Some(index) => index,
            None => {
                let index = self.next_slot.fetch_add(1, Ordering::Relaxed) % SLOTS;
                slot.set(Some(index));
                index
            }
        });
        HEADER + slot * SLOT_SIZE
    }

    /// Writes `bytes` (truncated to `max`) at `offset`, returns the length written.
    fn write(&self, offset: usize, bytes: &[u8], max: usize) -> u32 {
        let len = bytes.len().min(max);
        // SAFETY: the slot area is owned by this thread (one slot per thread)
        // and `offset + len` stays inside it.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.map.as_mut_ptr().add(offset), len)
        };
        len as u32
    }

    fn set_lengths(&self, slot: usize, state: u32, action: u32, fault: u32) {
        self.word(slot + 16)
            .store(state as u64 | (action as u64) << 32, Ordering::Relaxed);
        self.word(slot + 24).store(fault as u64, Ordering::Relaxed);
    }

    /// Records that this thread begins a step from encoded `state` with encoded `action`.
    pub fn begin(&self, state: &[u8], action: &[u8]) {
        let slot = self.slot_offset();
        let action_len = self.write(slot + SLOT_HEAD, action, ACTION_MAX);
        let state_len = if state.len() > STATE_MAX {
            u32::MAX
        } else {
            self.write(slot + SLOT_HEAD + ACTION_MAX + FAULT_MAX, state, STATE_MAX)
        };
        self.set_lengths(slot, state_len, action_len, 0);
        self.word(slot).store(1, Ordering::Release);
    }

    /// [`begin`](Self::begin) for a World state and action.
    pub(crate) fn begin_state(&self, state: &WorldState, action: &Action) {
        SCRATCH.with(|scratch| {
            let mut bytes = scratch.borrow_mut();
            bytes.clear();
            state.encode(&mut bytes);
            let state_len = bytes.len();
            action.encode(&mut bytes);
            let (state, action) = bytes.split_at(state_len);
            self.begin(state, action);
        });
    }

    /// Records that this thread's step returned.
    pub fn end(&self) {
        let slot = self.slot_offset();
        self.word(slot).store(0, Ordering::Relaxed);
        self.word(slot + 8).fetch_add(1, Ordering::Release);
    }

    /// Records `fault` in this thread's slot and ends the process with [`EXIT_FAULT`].
    pub(crate) fn fault_and_exit(&self, fault: &Fault) -> ! {
        let slot = self.slot_offset();
        let (tag, detail) = match &fault.kind {
            FaultKind::CoreError(why) => (0u8, why.clone()),
            FaultKind::NonDeterminism(why) => (1, why.clone()),
            FaultKind::BadOutput(why) => (2, why.clone()),
            FaultKind::Signal(signal) => (3, signal.to_string()),
            FaultKind::Hang(millis) => (4, millis.to_string()),
            FaultKind::Capacity(why) => (5, why.clone()),
        };
        let record = (tag, detail, fault.action.clone(), fault.event.clone()).to_bytes();
        let fault_len = self.write(slot + SLOT_HEAD + ACTION_MAX, &record, FAULT_MAX);
        self.word(slot + 24)
            .store(fault_len as u64, Ordering::Release);
        std::process::exit(EXIT_FAULT)
    }

    /// Reads every slot that was used.
    pub fn read(&self) -> Vec<SlotRecord> {
        (0..SLOTS)
            .map(|index| HEADER + index * SLOT_SIZE)
            .filter(|slot| {
                self.word(*slot + 8).load(Ordering::Acquire) > 0
                    || self.word(*slot).load(Ordering::Acquire) != 0
                    || self.word(*slot + 24).load(Ordering::Relaxed) != 0
            })
            .map(|slot| self.read_slot(slot))
            .collect()
    }

    fn bytes(&self, offset: usize, len: usize) -> Vec<u8> {
        // SAFETY: in bounds (lengths are clamped by the writer and here).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(offset), len) }.to_vec()
    }

    fn read_slot(&self, slot: usize) -> SlotRecord {
        let lengths = self.word(slot + 16).load(Ordering::Acquire);
        let (state_len, action_len) = (lengths as u32, (lengths >> 32) as usize);
        let fault_len = self.word(slot + 24).load(Ordering::Acquire) as usize;
        let action_bytes = self.bytes(slot + SLOT_HEAD, action_len.min(ACTION_MAX));
        let fault = (fault_len > 0)
            .then(|| self.bytes(slot + SLOT_HEAD + ACTION_MAX, fault_len.min(FAULT_MAX)))
            .and_then(|bytes| {
                <(u8, String, String, String)>::decode(&mut Decoder::new(&bytes)).ok()
            })
            .map(|(tag, detail, action, event)| {
                let number = detail.parse().unwrap_or(0);
                let kind = match tag {
                    0 => FaultKind::CoreError(detail),
                    1 => FaultKind::NonDeterminism(detail),
                    2 => FaultKind::BadOutput(detail),
                    3 => FaultKind::Signal(number as i32),
                    5 => FaultKind::Capacity(detail),
                    _ => FaultKind::Hang(number),
                };
                (kind, action, event)
            });
        SlotRecord {
            in_step: self.word(slot).load(Ordering::Acquire) != 0,
            steps: self.word(slot + 8).load(Ordering::Acquire),
            pre_state: if state_len == u32::MAX {
                Vec::new()
            } else {
                self.bytes(
                    slot + SLOT_HEAD + ACTION_MAX + FAULT_MAX,
                    (state_len as usize).min(STATE_MAX),
                )
            },
            action: (!action_bytes.is_empty())
                .then(|| Action::decode_exact(&action_bytes).ok())
                .flatten(),
            fault,
        }
    }
}

// SAFETY: the mapping is shared memory; each thread writes only its own slot
// and the header is written once before the recorder is shared.
unsafe impl Sync for Recorder {}
