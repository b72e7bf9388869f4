//! The flight recorder: shared memory in which every thread of a supervised
//! process writes which core function it is about to call (a step, with its
//! pre-state, action and event; the entry point while loading; a description),
//! so that the supervisor can tell, after the process died or hung, where.
//!
//! The memory is an anonymous shared file (`memfd`), allocated in full before
//! use: it needs no directory, and a lack of memory is an error at creation,
//! never a `SIGBUS` later.
//!
//! Layout: a 64-byte header (magic, version, slot count, slot size, the
//! culprit: the slot of the thread that took the process down), then one
//! slot per thread: a 192-byte head (`call`, `calls`, the lengths, the
//! event, two checksums), the action bytes (or the call's text), the state
//! bytes. Inside a step, a core call nested in it (a ghost variable's
//! update) takes the event's place in the head while it runs, so that a
//! step that dies there is placed in that call.
//!
//! The memory is shared with the supervised process, so core code can
//! overwrite it (a wild write). Each slot is sealed: every time a thread
//! writes its slot it stores an XXH3 checksum of the head and the action
//! or text, and, with each pre-state it records, one of the state; the
//! supervisor checks (`Recorder::check_integrity`) the header and every
//! used slot against them before it believes what they say.

use std::cell::Cell;
use std::fs::File;
use std::io::{Seek, Write};
use std::num::NonZeroU64;
use std::os::fd::{AsRawFd, FromRawFd, RawFd};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use xxhash_rust::xxh3::{xxh3_64, xxh3_64_with_seed};

use crate::core::abi::Event;

const MAGIC: u64 = u64::from_le_bytes(*b"CMCFLREC");
const VERSION: u64 = 4;
const HEADER: usize = 64;
/// Header word: 1 + the slot of the thread that ended the process (0: unknown).
const CULPRIT: usize = 32;
const SLOT_HEAD: usize = 192;
const EVENT_AT: usize = 32;
/// Head bytes covered by the head's checksum, with the action or text.
const SEALED_HEAD: usize = EVENT_AT + std::mem::size_of::<Event>();
/// The checksum of the head (its first [`SEALED_HEAD`] bytes) and the
/// action or text.
const HEAD_SUM: usize = 128;
/// The checksum of the recorded pre-state.
const STATE_SUM: usize = 136;
/// Non-zero while the slot's thread is writing it: a process that ends
/// then (another thread's exit or crash) leaves it half written, which is
/// no sign of a wild write.
const WRITING: usize = 144;
/// 1 + the number of the random walk whose step the slot records (0: none;
/// see [`cmc_search::current_walk`]).
const WALK: usize = 152;
/// In the lengths word: the head holds a call's text, not a step's action.
const TEXT_FLAG: u64 = 1 << 48;
/// In the event word's high half: the event's place holds a nested call
/// (its kind and text length in the low half) rather than an event (1).
const NESTED_CALL: u64 = 2;
const TEXT_MAX: usize = 512;
const STATE_MAX: usize = 1 << 20;
const SLOT_SIZE: usize = SLOT_HEAD + TEXT_MAX + STATE_MAX;
/// Most slots (threads) a recorder has.
pub(crate) const SLOTS_MAX: usize = 256;

/// Which core function a thread is inside.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Call {
    /// A step (or the initial starts, with no action).
    Step = 1,
    /// A library's entry point, while loading it.
    Load = 2,
    /// A `describe_state` or `describe_message` function.
    Describe = 3,
    /// A property written in C (see [`crate::properties::c_properties`]).
    Property = 4,
    /// A step replaying a record of a product's glue log
    /// (see [`crate::validate`]).
    GlueStep = 5,
    /// The update of a ghost variable written in C (see
    /// [`crate::properties::c_ghosts`]), within the step it follows.
    GhostUpdate = 6,
}

impl Call {
    fn from_raw(raw: u64) -> Option<Call> {
        [
            Call::Step,
            Call::Load,
            Call::Describe,
            Call::Property,
            Call::GlueStep,
            Call::GhostUpdate,
        ]
        .into_iter()
        .find(|call| *call as u64 == raw)
    }
}

/// A flight recorder mapped into this process: the supervision's own
/// machinery (see the tests below for its use).
pub(crate) struct Recorder {
    file: File,
    map: memmap2::MmapRaw,
    slots: usize,
    /// The slots held by a living thread, a bit each: a thread takes the
    /// first free one at its first core call and gives it back when it
    /// ends (the search starts new workers for every pass: a slot held
    /// past its thread's end would soon leave none for the next ones).
    taken: [AtomicU64; SLOTS_MAX / 64],
}

thread_local! {
    static SLOT: SlotLease = const { SlotLease { held: Cell::new(None) } };
    /// The recorder and slot of this thread's lease, kept without a
    /// destructor: `exit` runs the exiting thread's thread-local
    /// destructors (the lease's among them) before its exit handlers,
    /// which still need to name the slot (see [`Recorder::mark_culprit`]).
    static LAST_SLOT: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
    /// Core calls this thread is inside (only the outermost is recorded,
    /// and a step's first nested call: see [`Recorder::begin_nested`]).
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The event word and event a step's nested call took the place of,
    /// put back when it returns.
    static BEFORE_NESTED: Cell<Option<(u64, Event)>> = const { Cell::new(None) };
    /// The stamp and length (`u32::MAX`: too large to record) of the
    /// pre-state this thread's slot holds, when a stamped step wrote it.
    static HELD_STATE: Cell<Option<(NonZeroU64, u32)>> = const { Cell::new(None) };
    /// The stamps this thread may give next.
    static STAMPS: Cell<(u64, u64)> = const { Cell::new((0, 0)) };
}

static INSTALLED: OnceLock<Recorder> = OnceLock::new();

/// Stamps handed out so far, [`STAMP_BLOCK`] to a thread at a time: a
/// stamp names one recording of one pre-state, among every thread's.
static STAMPS_GIVEN: AtomicU64 = AtomicU64::new(1);

/// Stamps a thread takes at a time.
const STAMP_BLOCK: u64 = 1 << 16;

/// A stamp no other recording of this process has.
fn next_stamp() -> NonZeroU64 {
    let (mut next, mut end) = STAMPS.get();
    if next == end {
        next = STAMPS_GIVEN.fetch_add(STAMP_BLOCK, Ordering::Relaxed);
        end = next + STAMP_BLOCK;
    }
    STAMPS.set((next + 1, end));
    NonZeroU64::new(next).expect("stamps start at 1")
}

/// The slot a thread holds: the recorder's address and the slot's index.
/// The [installed](Recorder::install) recorder gets it back when the thread
/// ends; another recorder (a test's) keeps it taken, as it may not outlive
/// the thread.
struct SlotLease {
    held: Cell<Option<(usize, usize)>>,
}

impl Drop for SlotLease {
    fn drop(&mut self) {
        if let (Some((owner, index)), Some(recorder)) = (self.held.get(), INSTALLED.get()) {
            if owner == recorder.address() {
                recorder.release(index);
            }
        }
    }
}

/// What one thread's slot held when it was read: where a supervised
/// process that died was (see [`crate::supervise::Ended`]).
#[derive(Debug, Clone)]
pub struct SlotRecord {
    /// The slot's index.
    pub index: usize,
    /// The core function the thread was inside, if any.
    pub call: Option<Call>,
    /// Core calls the thread completed.
    pub calls: u64,
    /// The pre-state of the last step begun (empty for the initial starts,
    /// or if it was too large to record).
    pub pre_state: Vec<u8>,
    /// The encoded action of the last step begun (empty for the initial
    /// starts).
    pub action: Vec<u8>,
    /// For a load or a description: what was being loaded or described;
    /// inside a step, the call nested in it that was under way (`nested`).
    pub text: String,
    /// Inside a step: the kind of the nested call under way, if any (its
    /// text is `text`).
    pub nested: Option<Call>,
    /// The last event handed to a core in the current step, with its node.
    pub event: Option<(u32, Event)>,
    /// The number of the random walk the step was part of, if any.
    pub walk: Option<u64>,
}

impl Recorder {
    /// A new recorder with room for `slots` threads (at most [`SLOTS_MAX`]),
    /// in anonymous shared memory allocated in full.
    pub(crate) fn create(slots: usize) -> std::io::Result<Recorder> {
        let slots = slots.clamp(1, SLOTS_MAX);
        let file = memory_file(HEADER + slots * SLOT_SIZE)?;
        let recorder = Recorder {
            map: memmap2::MmapRaw::map_raw(&file)?,
            file,
            slots,
            taken: Default::default(),
        };
        recorder.word(0).store(MAGIC, Ordering::Relaxed);
        recorder.word(8).store(VERSION, Ordering::Relaxed);
        recorder.word(16).store(slots as u64, Ordering::Relaxed);
        recorder.word(24).store(SLOT_SIZE as u64, Ordering::Release);
        Ok(recorder)
    }

    /// An anonymous shared file holding `bytes`, read from its start by a
    /// child that inherits it (how a supervisor hands a child its input).
    pub(crate) fn shared_file(bytes: &[u8]) -> std::io::Result<File> {
        let mut file = memory_file(bytes.len())?;
        file.write_all(bytes)?;
        file.seek(std::io::SeekFrom::Start(0))?;
        Ok(file)
    }

    /// The descriptor a child inherits to [`open`](Self::open) this recorder.
    pub(crate) fn raw_fd(&self) -> RawFd {
        self.file.as_raw_fd()
    }

    /// Maps the recorder behind the inherited descriptor `fd`, checking its header.
    pub(crate) fn open(fd: RawFd) -> std::io::Result<Recorder> {
        // SAFETY: duplicating a descriptor number is harmless; a bad one fails.
        let own = unsafe { libc::fcntl(fd, libc::F_DUPFD_CLOEXEC, 0) };
        if own < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: `own` is a fresh descriptor that nothing else owns.
        let file = unsafe { File::from_raw_fd(own) };
        let map = memmap2::MmapRaw::map_raw(&file)?;
        let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what);
        if map.len() < HEADER {
            return Err(bad("not a cmc flight recorder (too small)"));
        }
        let mut recorder = Recorder {
            file,
            map,
            slots: 0,
            taken: Default::default(),
        };
        if recorder.word(0).load(Ordering::Acquire) != MAGIC
            || recorder.word(8).load(Ordering::Relaxed) != VERSION
            || recorder.word(24).load(Ordering::Relaxed) != SLOT_SIZE as u64
        {
            return Err(bad("not a cmc flight recorder of this version"));
        }
        let slots = recorder.word(16).load(Ordering::Relaxed) as usize;
        if slots > SLOTS_MAX || recorder.map.len() != HEADER + slots * SLOT_SIZE {
            return Err(bad("not a cmc flight recorder (wrong size)"));
        }
        recorder.slots = slots;
        Ok(recorder)
    }

    /// Makes `recorder` the one this process writes to (see [`installed`]).
    /// Fails if one is installed already.
    pub(crate) fn install(recorder: Recorder) -> Result<&'static Recorder, String> {
        INSTALLED
            .set(recorder)
            .map_err(|_| "a flight recorder is installed already".to_string())?;
        Ok(INSTALLED.get().expect("just set"))
    }

    fn word(&self, offset: usize) -> &AtomicU64 {
        assert!(offset & 7 == 0 && offset + 8 <= self.map.len());
        // SAFETY: in bounds and 8-aligned (the map is page-aligned); the
        // mapping lives as long as `self`, and all access to it is atomic or
        // confined to the owning thread's slot.
        unsafe { &*(self.map.as_mut_ptr().add(offset) as *const AtomicU64) }
    }

    /// This thread's slot; `None` while every slot is held by another
    /// living thread (then it is not recorded: a supervisor sizes the
    /// recorder for every thread that runs at once).
    fn slot_offset(&self) -> Option<usize> {
        let me = self.address();
        let index = SLOT.with(|lease| match lease.held.get() {
            Some((owner, index)) if owner == me => Some(index),
            _ => {
                let index = self.claim()?;
                lease.held.set(Some((me, index)));
                LAST_SLOT.set(Some((me, index)));
                HELD_STATE.set(None);
                Some(index)
            }
        })?;
        Some(HEADER + index * SLOT_SIZE)
    }

    /// Identifies this recorder in a [`SlotLease`].
    fn address(&self) -> usize {
        std::ptr::from_ref(self) as usize
    }

    /// Takes the first free slot, if any.
    fn claim(&self) -> Option<usize> {
        for (word, bits) in self.taken.iter().enumerate() {
            let mut seen = bits.load(Ordering::Relaxed);
            loop {
                let free = (!seen).trailing_zeros() as usize;
                let index = word * 64 + free;
                if free == 64 || index >= self.slots {
                    break;
                }
                match bits.compare_exchange_weak(
                    seen,
                    seen | 1 << free,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return Some(index),
                    Err(now) => seen = now,
                }
            }
        }
        None
    }

    /// Gives slot `index` back (its thread ended).
    fn release(&self, index: usize) {
        self.taken[index / 64].fetch_and(!(1 << (index % 64)), Ordering::AcqRel);
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

    /// Records that this thread enters `call`; `false` if it is inside one
    /// already (a nested call is part of the outer one and is not recorded).
    fn enter(&self) -> bool {
        DEPTH.with(|depth| {
            depth.set(depth.get() + 1);
            depth.get() == 1
        })
    }

    /// Runs `write`, which updates `slot`, with the slot marked as being
    /// written (see [`WRITING`]).
    fn updating<T>(&self, slot: usize, write: impl FnOnce() -> T) -> T {
        self.word(slot + WRITING).store(1, Ordering::SeqCst);
        let written = write();
        self.word(slot + WRITING).store(0, Ordering::Release);
        written
    }

    fn mark(&self, slot: usize, call: Call) {
        self.word(slot + 24).store(0, Ordering::Relaxed);
        self.word(slot).store(call as u64, Ordering::Release);
        self.seal(slot);
    }

    /// The checksum of the head and the action or text of `slot`, as they are.
    fn head_sum(&self, slot: usize) -> u64 {
        let lengths = self.word(slot + 16).load(Ordering::Acquire);
        let text_len = ((lengths >> 32) as u16 as usize).min(TEXT_MAX);
        // SAFETY: both ranges lie inside the slot.
        let (head, text) = unsafe {
            (
                std::slice::from_raw_parts(self.map.as_ptr().add(slot), SEALED_HEAD),
                std::slice::from_raw_parts(self.map.as_ptr().add(slot + SLOT_HEAD), text_len),
            )
        };
        xxh3_64_with_seed(text, xxh3_64(head))
    }

    /// Stores the checksum of `slot`'s head as it is now.
    fn seal(&self, slot: usize) {
        self.word(slot + HEAD_SUM)
            .store(self.head_sum(slot), Ordering::Release);
    }

    /// Records that this thread begins a step from encoded `state` with
    /// encoded `action` (both empty for the initial starts).
    pub(crate) fn begin_step(&self, state: &[u8], action: &[u8]) {
        self.begin_step_stamped(state, action);
    }

    /// [`begin_step`](Self::begin_step), returning a stamp under which
    /// this thread's slot holds `state` (`None` inside another core call or
    /// without a slot): the stamp lets this thread's next step from the
    /// same state [begin again](Self::begin_step_again) without writing it.
    pub(crate) fn begin_step_stamped(&self, state: &[u8], action: &[u8]) -> Option<NonZeroU64> {
        HELD_STATE.set(None);
        if !self.enter() {
            return None;
        }
        let slot = self.slot_offset()?;
        let state_len = self.updating(slot, || {
            let state_len = if state.len() > STATE_MAX {
                u32::MAX
            } else {
                let len = self.write(slot + SLOT_HEAD + TEXT_MAX, state, STATE_MAX);
                self.word(slot + STATE_SUM)
                    .store(xxh3_64(state), Ordering::Relaxed);
                len
            };
            self.record_step(slot, state_len, action);
            state_len
        });
        let stamp = next_stamp();
        HELD_STATE.set(Some((stamp, state_len)));
        Some(stamp)
    }

    /// Records that this thread begins a step with encoded `action` from
    /// the state its slot holds under `stamp`; `false` (and nothing
    /// recorded) when it holds no state under that stamp.
    pub(crate) fn begin_step_again(&self, stamp: NonZeroU64, action: &[u8]) -> bool {
        let Some((held, state_len)) = HELD_STATE.get() else {
            return false;
        };
        if held != stamp {
            return false;
        }
        if self.enter() {
            if let Some(slot) = self.slot_offset() {
                self.updating(slot, || self.record_step(slot, state_len, action));
            }
        }
        true
    }

    /// Writes a step's action and lengths into `slot` and marks it inside the step.
    fn record_step(&self, slot: usize, state_len: u32, action: &[u8]) {
        let walk = cmc_search::current_walk().map_or(0, |walk| walk.saturating_add(1));
        self.word(slot + WALK).store(walk, Ordering::Relaxed);
        let action_len = self.write(slot + SLOT_HEAD, action, TEXT_MAX);
        self.word(slot + 16).store(
            state_len as u64 | (action_len as u64) << 32,
            Ordering::Relaxed,
        );
        self.mark(slot, Call::Step);
    }

    /// Records that this thread calls a core function other than a step;
    /// `text` says what for (e.g. the library being loaded).
    pub(crate) fn begin_call(&self, call: Call, text: &str) {
        if !self.enter() {
            self.begin_nested(call, text);
            return;
        }
        let Some(slot) = self.slot_offset() else {
            return;
        };
        self.updating(slot, || {
            let text_len = self.write(slot + SLOT_HEAD, text.as_bytes(), TEXT_MAX);
            self.word(slot + 16).store(
                u32::MAX as u64 | (text_len as u64) << 32 | TEXT_FLAG,
                Ordering::Relaxed,
            );
            self.mark(slot, call);
        });
    }

    /// Records, in place of the step's last event, the call this thread
    /// makes within a step (one level deep): a process that ends there is
    /// placed in it. The event is put back when the call returns.
    fn begin_nested(&self, call: Call, text: &str) {
        if DEPTH.with(Cell::get) != 2 {
            return;
        }
        let Some(slot) = self.slot_offset() else {
            return;
        };
        if self.word(slot).load(Ordering::Relaxed) != Call::Step as u64 {
            return;
        }
        let event = self.bytes(slot + EVENT_AT, std::mem::size_of::<Event>());
        let event_word = self.word(slot + 24).load(Ordering::Relaxed);
        BEFORE_NESTED.set(Some((event_word, bytemuck::pod_read_unaligned(&event))));
        self.updating(slot, || {
            let len = self.write(slot + EVENT_AT, text.as_bytes(), SEALED_HEAD - EVENT_AT);
            self.word(slot + 24).store(
                NESTED_CALL << 32 | (call as u64) << 16 | len as u64,
                Ordering::Release,
            );
            self.seal(slot);
        });
    }

    /// Puts back the event a nested call took the place of (see
    /// [`begin_nested`](Self::begin_nested)).
    fn end_nested(&self) {
        let (Some((event_word, event)), Some(slot)) = (BEFORE_NESTED.take(), self.slot_offset())
        else {
            return;
        };
        self.updating(slot, || {
            self.write(
                slot + EVENT_AT,
                bytemuck::bytes_of(&event),
                SEALED_HEAD - EVENT_AT,
            );
            self.word(slot + 24).store(event_word, Ordering::Release);
            self.seal(slot);
        });
    }

    /// Records the event node `node`'s core is about to handle, inside a step.
    pub(crate) fn note_event(&self, node: u32, event: &Event) {
        if DEPTH.with(Cell::get) != 1 {
            return;
        }
        let Some(slot) = self.slot_offset() else {
            return;
        };
        self.updating(slot, || {
            self.write(
                slot + EVENT_AT,
                bytemuck::bytes_of(event),
                SEALED_HEAD - EVENT_AT,
            );
            self.word(slot + 24)
                .store(1 << 32 | node as u64, Ordering::Release);
            self.seal(slot);
        });
    }

    /// Records that this thread's current core call returned.
    pub(crate) fn end(&self) {
        let depth = DEPTH.with(|depth| {
            depth.set(depth.get().saturating_sub(1));
            depth.get()
        });
        if depth == 1 {
            self.end_nested();
        }
        let outermost = depth == 0;
        if let Some(slot) = self.slot_offset().filter(|_| outermost) {
            self.updating(slot, || {
                self.word(slot).store(0, Ordering::Relaxed);
                self.word(slot + 8).fetch_add(1, Ordering::Release);
                self.seal(slot);
            });
        }
    }

    /// Records that this thread is ending the process (from a signal handler
    /// or an exit handler: only async-signal-safe operations).
    pub(crate) fn mark_culprit(&self) {
        if let Ok(Some((owner, index))) = LAST_SLOT.try_with(Cell::get) {
            if owner == self.address() && index < self.slots {
                self.word(CULPRIT).store(index as u64 + 1, Ordering::SeqCst);
            }
        }
    }

    /// The slot of the core call that ended the process: the culprit's if it
    /// was inside a core call, else any thread's that was.
    pub(crate) fn faulting_call(&self) -> Option<SlotRecord> {
        let records = self.read();
        let culprit = self.word(CULPRIT).load(Ordering::SeqCst) as usize;
        let in_call = |record: &&SlotRecord| {
            record.call.is_some()
                && (record.index + 1 == culprit || !self.is_being_written(record.index))
        };
        records
            .iter()
            .filter(in_call)
            .find(|record| record.index + 1 == culprit)
            .or_else(|| records.iter().find(in_call))
            .cloned()
    }

    /// Whether the header and every used slot hold what this recorder's
    /// threads wrote there (their checksums match): `Err` names the first
    /// damage, from a write of core code into this shared memory. A slot
    /// its thread was writing when the process ended (another thread exited
    /// or crashed meanwhile) is half written, not damaged: it is passed
    /// over, unless it is the slot of the thread that ended the process
    /// (whose writes were over: it was in core code). Meant for a
    /// supervisor once its child has ended (a living child's slots change
    /// under the check).
    pub(crate) fn check_integrity(&self) -> Result<(), String> {
        let header = [
            (0, MAGIC),
            (8, VERSION),
            (16, self.slots as u64),
            (24, SLOT_SIZE as u64),
        ];
        if header
            .iter()
            .any(|&(at, value)| self.word(at).load(Ordering::Acquire) != value)
            || self.word(CULPRIT).load(Ordering::Acquire) > self.slots as u64
        {
            return Err("its header was overwritten".into());
        }
        for index in 0..self.slots {
            let slot = HEADER + index * SLOT_SIZE;
            let used = self.word(slot + 8).load(Ordering::Acquire) > 0
                || self.word(slot).load(Ordering::Acquire) != 0;
            let culprit = self.word(CULPRIT).load(Ordering::Acquire) == index as u64 + 1;
            if !used || (self.is_being_written(index) && !culprit) {
                continue;
            }
            if self.word(slot + HEAD_SUM).load(Ordering::Acquire) != self.head_sum(slot) {
                return Err(format!(
                    "slot {index} (a thread's current call) was overwritten"
                ));
            }
            let lengths = self.word(slot + 16).load(Ordering::Acquire);
            let (state_len, is_step) = (lengths as u32, lengths & TEXT_FLAG == 0);
            if is_step && state_len != u32::MAX && state_len > 0 {
                let state = self.bytes(
                    slot + SLOT_HEAD + TEXT_MAX,
                    (state_len as usize).min(STATE_MAX),
                );
                if self.word(slot + STATE_SUM).load(Ordering::Acquire) != xxh3_64(&state) {
                    return Err(format!(
                        "slot {index} (a thread's pre-state) was overwritten"
                    ));
                }
            }
        }
        Ok(())
    }

    /// Whether slot `index`'s thread was writing it (see [`WRITING`]).
    fn is_being_written(&self, index: usize) -> bool {
        self.word(HEADER + index * SLOT_SIZE + WRITING)
            .load(Ordering::Acquire)
            != 0
    }

    /// Reads every slot that was used.
    pub(crate) fn read(&self) -> Vec<SlotRecord> {
        (0..self.slots)
            .filter(|index| {
                let slot = HEADER + index * SLOT_SIZE;
                self.word(slot + 8).load(Ordering::Acquire) > 0
                    || self.word(slot).load(Ordering::Acquire) != 0
            })
            .map(|index| self.read_slot(index))
            .collect()
    }

    fn bytes(&self, offset: usize, len: usize) -> Vec<u8> {
        // SAFETY: in bounds (lengths are clamped by the writer and here).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().add(offset), len) }.to_vec()
    }

    fn read_slot(&self, index: usize) -> SlotRecord {
        let slot = HEADER + index * SLOT_SIZE;
        let call = Call::from_raw(self.word(slot).load(Ordering::Acquire));
        let lengths = self.word(slot + 16).load(Ordering::Acquire);
        let (state_len, action_len) = (lengths as u32, (lengths >> 32) as u16 as usize);
        let is_step = lengths & TEXT_FLAG == 0;
        let head = self.bytes(slot + SLOT_HEAD, action_len.min(TEXT_MAX));
        let event_word = self.word(slot + 24).load(Ordering::Acquire);
        let event = (event_word >> 32 == 1).then(|| {
            let bytes = self.bytes(slot + EVENT_AT, std::mem::size_of::<Event>());
            (event_word as u32, bytemuck::pod_read_unaligned(&bytes))
        });
        let nested = (is_step && event_word >> 32 == NESTED_CALL).then(|| {
            let len = (event_word as u16 as usize).min(SEALED_HEAD - EVENT_AT);
            let text = self.bytes(slot + EVENT_AT, len);
            let call = Call::from_raw(event_word >> 16 & 0xffff);
            (call, String::from_utf8_lossy(&text).into_owned())
        });
        SlotRecord {
            index,
            call,
            calls: self.word(slot + 8).load(Ordering::Acquire),
            pre_state: if state_len == u32::MAX {
                Vec::new()
            } else {
                self.bytes(
                    slot + SLOT_HEAD + TEXT_MAX,
                    (state_len as usize).min(STATE_MAX),
                )
            },
            action: if is_step { head.clone() } else { Vec::new() },
            text: match (is_step, &nested) {
                (false, _) => String::from_utf8_lossy(&head).into_owned(),
                (true, Some((_, text))) => text.clone(),
                (true, None) => String::new(),
            },
            nested: nested.and_then(|(call, _)| call),
            event,
            walk: self
                .word(slot + WALK)
                .load(Ordering::Acquire)
                .checked_sub(1),
        }
    }
}

/// An anonymous file in memory of `len` bytes, allocated in full (so that
/// a lack of memory is an error here, never a `SIGBUS` when it is used).
fn memory_file(len: usize) -> std::io::Result<File> {
    // SAFETY: a valid NUL-terminated name and flags; the result is checked.
    let fd = unsafe { libc::memfd_create(c"cmc-flight-recorder".as_ptr(), libc::MFD_CLOEXEC) };
    if fd < 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor that nothing else owns.
    let file = unsafe { File::from_raw_fd(fd) };
    if len > 0 {
        // SAFETY: plain system call on a descriptor we own.
        let error = unsafe { libc::posix_fallocate(file.as_raw_fd(), 0, len as libc::off_t) };
        if error != 0 {
            return Err(std::io::Error::from_raw_os_error(error));
        }
    }
    Ok(file)
}

/// The recorder this process writes to, if it runs under a supervisor.
pub(crate) fn installed() -> Option<&'static Recorder> {
    INSTALLED.get()
}

/// Runs `f`, a call of a core function other than a step, recorded as `call`
/// with the text `what()` when a recorder is installed.
pub(crate) fn recorded<T, S: AsRef<str>>(
    call: Call,
    what: impl FnOnce() -> S,
    f: impl FnOnce() -> T,
) -> T {
    match installed() {
        Some(recorder) => {
            recorder.begin_call(call, what().as_ref());
            let result = f();
            recorder.end();
            result
        }
        None => f(),
    }
}

// SAFETY: the mapping is shared memory; each thread writes only its own slot
// and the header is written once before the recorder is shared.
unsafe impl Sync for Recorder {}

#[cfg(test)]
mod tests {
    use super::*;

    /// Changes one byte of `recorder`'s memory, as a wild write would.
    fn scribble(recorder: &Recorder, offset: usize) {
        // SAFETY: in bounds of the mapping; no other thread uses it.
        unsafe { *recorder.map.as_mut_ptr().add(offset) ^= 0x40 };
    }

    #[test]
    fn the_call_under_way_is_the_faulting_one_until_it_ends() {
        let recorder = Recorder::create(2).unwrap();
        recorder.begin_call(Call::Load, "./libcore.so");
        // Were the process to die now, its supervisor would read:
        let inside = recorder.faulting_call().expect("a call is under way");
        assert_eq!(
            (inside.call, inside.text.as_str()),
            (Some(Call::Load), "./libcore.so")
        );
        recorder.end();
        assert!(recorder.faulting_call().is_none());
        assert_eq!(recorder.read()[0].call, None, "between core calls");
        assert_eq!(recorder.read()[0].calls, 1);
    }

    #[test]
    fn a_step_records_its_pre_state_action_and_event() {
        let recorder = Recorder::create(1).unwrap();
        recorder.begin_step(b"pre-state", b"action");
        let event = Event::new(crate::core::abi::EventKind::Tick, 0, 0, &[], 4);
        recorder.note_event(1, &event);
        let slot = recorder.faulting_call().expect("inside a step");
        assert_eq!((slot.call, slot.calls), (Some(Call::Step), 0));
        assert_eq!(
            (slot.pre_state.as_slice(), slot.action.as_slice()),
            (&b"pre-state"[..], &b"action"[..])
        );
        assert_eq!(
            slot.event.map(|(node, event)| (node, event.clock)),
            Some((1, 4))
        );
        recorder.end();
    }

    /// A ghost variable's update runs within the step it follows: a death
    /// there is placed in the update, with the step's pre-state and action;
    /// once the update returned, the step's event is the place again.
    #[test]
    fn a_call_nested_in_a_step_is_placed_until_it_returns() {
        let recorder = Recorder::create(1).unwrap();
        recorder.begin_step(b"pre-state", b"action");
        let event = Event::new(crate::core::abi::EventKind::Tick, 0, 0, &[], 4);
        recorder.note_event(1, &event);
        recorder.begin_call(Call::GhostUpdate, "the update of ghost variable Granted");
        let slot = recorder.faulting_call().expect("inside a step");
        assert_eq!(slot.call, Some(Call::Step));
        assert_eq!(
            (slot.nested, slot.text.as_str()),
            (
                Some(Call::GhostUpdate),
                "the update of ghost variable Granted"
            )
        );
        assert_eq!(slot.action, b"action");
        assert_eq!(
            recorder.check_integrity(),
            Ok(()),
            "the head is sealed anew"
        );
        recorder.end();
        let slot = recorder.faulting_call().expect("still inside the step");
        assert_eq!((slot.nested, slot.text.as_str()), (None, ""));
        assert_eq!(
            slot.event.map(|(node, event)| (node, event.clock)),
            Some((1, 4))
        );
        assert_eq!(recorder.check_integrity(), Ok(()));
        recorder.end();
        assert!(recorder.faulting_call().is_none());
    }

    #[test]
    fn a_write_anywhere_into_a_used_slot_or_the_header_is_detected() {
        let slot = HEADER;
        let places = [
            ("header", 16),
            ("call", slot),
            ("lengths", slot + 16),
            ("event", slot + EVENT_AT + 4),
            ("action", slot + SLOT_HEAD + 2),
            ("pre-state", slot + SLOT_HEAD + TEXT_MAX + 5),
        ];
        for (what, offset) in places {
            let recorder = Recorder::create(2).unwrap();
            recorder.begin_step(b"the pre-state", b"an action");
            recorder.note_event(
                1,
                &Event::new(crate::core::abi::EventKind::Tick, 0, 0, &[], 4),
            );
            assert_eq!(recorder.check_integrity(), Ok(()), "{what}");
            scribble(&recorder, offset);
            assert!(
                recorder.check_integrity().is_err(),
                "a write into the {what} is missed"
            );
            recorder.end();
        }
    }

    /// A process that ends while one of its threads is writing its slot
    /// (another thread exited or crashed) leaves that slot half written:
    /// no sign of a wild write, and no place of the fault either. The
    /// culprit's own slot is always checked.
    #[test]
    fn a_slot_half_written_when_the_process_ended_is_no_damage() {
        let recorder = Recorder::create(2).unwrap();
        recorder.begin_step(b"the pre-state", b"an action");
        let slot = HEADER;
        // Half way through the next update: the action written, not sealed.
        recorder.word(slot + WRITING).store(1, Ordering::SeqCst);
        recorder.write(slot + SLOT_HEAD, b"another action", TEXT_MAX);
        assert_eq!(recorder.check_integrity(), Ok(()));
        assert!(recorder.faulting_call().is_none());
        // Were this thread the one that ended the process, it was in core
        // code, not writing: the same bytes are damage.
        recorder.word(CULPRIT).store(1, Ordering::SeqCst);
        assert!(recorder.check_integrity().is_err());
    }
}
