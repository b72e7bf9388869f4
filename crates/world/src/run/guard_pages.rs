//! Guarded memory for core steps (and, for a core that needs no guards,
//! the same step on its buffers in place).
//!
//! Every buffer handed to a core (its configuration, the event, the durable
//! and the volatile part; the outputs, emptied) is put in a per-thread arena
//! where it sits between canary bytes, in a mapping of its own between two
//! inaccessible regions of [`GUARD`] bytes each ([`GuardedRegion`], also
//! used for the view of a C property). After the step, [`step`] checks that
//! every canary is intact and that the read-only buffers (configuration,
//! event, durable part) are unchanged: a core that writes out of bounds, or
//! into what it may only read, is reported where it did it. A wild write
//! farther out of bounds, up to [`GUARD`] bytes before the first buffer or
//! after the last, hits a guard region and kills the process inside the step
//! (reported by the supervisor as a crash in that step): no other memory of
//! the checker lies that close.

use std::cell::RefCell;

use crate::core::abi::{Config, CoreError, Event, Outputs};
use crate::core::Core;

/// Canary bytes at least, around every buffer.
const CANARY: usize = 64;
/// The byte canaries hold.
const PATTERN: u8 = 0xcb;
/// Alignment of every buffer.
const ALIGN: usize = 16;

/// Where each buffer is, as offsets into the arena's usable memory.
#[derive(Debug, Clone, Copy)]
struct Layout {
    /// `(start, length, name)` in address order.
    buffers: [(usize, usize, &'static str); 5],
    /// The canary ranges, `(start, end)`: before the first buffer, between
    /// buffers, after the last.
    gaps: [(usize, usize); 6],
    /// Usable bytes (a multiple of the page size).
    usable: usize,
}

const CONFIG: usize = 0;
const EVENT: usize = 1;
const OUTPUTS: usize = 2;
const DURABLE: usize = 3;
const VOLATILE: usize = 4;

impl Layout {
    /// Buffers packed downwards from the end of the usable memory, so that
    /// the volatile part ends `CANARY` bytes (or a little more) before the
    /// guard page.
    fn new(durable: usize, volatile: usize, page: usize) -> Layout {
        let sizes = [
            (std::mem::size_of::<Config>(), "configuration"),
            (std::mem::size_of::<Event>(), "event"),
            (std::mem::size_of::<Outputs>(), "outputs"),
            (durable, "durable part"),
            (volatile, "volatile part"),
        ];
        let needed: usize = sizes
            .iter()
            .map(|(len, _)| len + CANARY + ALIGN)
            .sum::<usize>()
            + CANARY;
        let usable = needed.div_ceil(page) * page;
        let mut buffers = [(0, 0, ""); 5];
        let mut end = usable;
        for (index, (len, name)) in sizes.iter().enumerate().rev() {
            let start = (end - CANARY - len) / ALIGN * ALIGN;
            buffers[index] = (start, *len, name);
            end = start;
        }
        debug_assert!(buffers[CONFIG].0 >= CANARY);
        let mut gaps = [(0, 0); 6];
        for (index, gap) in gaps.iter_mut().enumerate() {
            let start = match index {
                0 => buffers[0].0 - CANARY,
                _ => buffers[index - 1].0 + buffers[index - 1].1,
            };
            let end = buffers.get(index).map_or(usable, |buffer| buffer.0);
            *gap = (start, end);
        }
        Layout {
            buffers,
            gaps,
            usable,
        }
    }
}

/// Bytes of inaccessible memory on each side of every [`GuardedRegion`]:
/// a write by core code up to this far before or after the memory it was
/// handed faults at once. Address space only: no memory backs them.
pub const GUARD: usize = 1 << 30;

/// Read-write memory in a mapping of its own, between two inaccessible
/// regions of [`GUARD`] bytes: no other mapping of the process is within
/// [`GUARD`] bytes of it.
pub(crate) struct GuardedRegion {
    usable: *mut u8,
    len: usize,
}

impl GuardedRegion {
    /// A region of at least `len` bytes (whole pages), every byte `fill`.
    /// Panics if the address space or memory is exhausted.
    pub(crate) fn new(len: usize, fill: u8) -> GuardedRegion {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = len.max(1).div_ceil(page) * page;
        let total = len + 2 * GUARD;
        // SAFETY: a fresh anonymous mapping, reserved only (PROT_NONE,
        // MAP_NORESERVE: no memory is committed); the result is checked.
        let base = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                total,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        assert!(
            base != libc::MAP_FAILED,
            "cannot reserve {total} bytes of address space for guarded memory: {}",
            std::io::Error::last_os_error()
        );
        let usable = base.cast::<u8>().wrapping_add(GUARD);
        // SAFETY: the range lies inside the mapping just made.
        let status =
            unsafe { libc::mprotect(usable.cast(), len, libc::PROT_READ | libc::PROT_WRITE) };
        assert!(
            status == 0,
            "cannot make guarded memory writable: {}",
            std::io::Error::last_os_error()
        );
        // SAFETY: the usable memory is mapped read-write.
        unsafe { std::ptr::write_bytes(usable, fill, len) };
        GuardedRegion { usable, len }
    }

    /// The first usable byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.usable
    }

    /// Usable bytes.
    pub(crate) fn len(&self) -> usize {
        self.len
    }

    /// The usable bytes.
    pub(crate) fn bytes(&self) -> &[u8] {
        // SAFETY: the usable memory is mapped read-write for `len` bytes.
        unsafe { std::slice::from_raw_parts(self.usable, self.len) }
    }
}

impl Drop for GuardedRegion {
    fn drop(&mut self) {
        // SAFETY: unmapping exactly the mapping made in `new`.
        unsafe { libc::munmap(self.usable.wrapping_sub(GUARD).cast(), self.len + 2 * GUARD) };
    }
}

/// One [`GuardedRegion`] holding a step's buffers.
struct Arena {
    base: *mut u8,
    layout: Layout,
    key: (usize, usize),
    /// Owns the memory at `base`.
    _region: GuardedRegion,
}

impl Arena {
    fn new(durable: usize, volatile: usize) -> Arena {
        // SAFETY: sysconf has no preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let layout = Layout::new(durable, volatile, page);
        let region = GuardedRegion::new(layout.usable, PATTERN);
        debug_assert_eq!(region.len(), layout.usable);
        Arena {
            base: region.as_ptr(),
            layout,
            key: (durable, volatile),
            _region: region,
        }
    }

    fn at(&self, buffer: usize) -> *mut u8 {
        self.base.wrapping_add(self.layout.buffers[buffer].0)
    }

    fn bytes(&self, range: std::ops::Range<usize>) -> &[u8] {
        // SAFETY: ranges come from the layout, inside the usable memory.
        unsafe { std::slice::from_raw_parts(self.base.add(range.start), range.len()) }
    }

    fn copy_in(&self, buffer: usize, bytes: &[u8]) {
        debug_assert_eq!(bytes.len(), self.layout.buffers[buffer].1);
        // SAFETY: the buffer has exactly `bytes.len()` bytes in the usable memory.
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.at(buffer), bytes.len()) }
    }

    /// The `T` in `buffer`, which is laid out for one.
    fn get<T: bytemuck::Pod>(&self, buffer: usize) -> &T {
        debug_assert_eq!(std::mem::size_of::<T>(), self.layout.buffers[buffer].1);
        // SAFETY: as in `put`; every bit pattern is a valid `T`.
        unsafe { &*self.at(buffer).cast::<T>() }
    }

    /// Writes `value` into `buffer`, which is laid out for a `T`.
    fn put<T: bytemuck::Pod>(&self, buffer: usize, value: &T) {
        debug_assert_eq!(std::mem::size_of::<T>(), self.layout.buffers[buffer].1);
        // SAFETY: the buffer holds `size_of::<T>()` bytes aligned to 16, at
        // least `T`'s alignment for the ABI's structs.
        unsafe { self.at(buffer).cast::<T>().write(*value) }
    }

    /// The outputs buffer, emptied: no outputs, every item's byte `fill`.
    fn empty_outputs(&self, fill: u8) {
        // SAFETY: the buffer is laid out for an `Outputs` (plain old data);
        // nothing else refers to it.
        unsafe { &mut *self.at(OUTPUTS).cast::<Outputs>() }.empty(fill);
    }

    /// The outputs the step wrote, in `out`: its count, its refusals and
    /// the valid items (those past the count are not copied).
    fn take_outputs(&self, out: &mut Outputs) {
        let written = self.get::<Outputs>(OUTPUTS);
        out.count = written.count;
        out.reserved = written.reserved;
        let valid = (written.count as usize).min(written.items.len());
        out.items[..valid].copy_from_slice(&written.items[..valid]);
    }

    fn buffer(&self, buffer: usize) -> &[u8] {
        let (start, len, _) = self.layout.buffers[buffer];
        self.bytes(start..start + len)
    }

    /// The first canary that changed, as a sentence; the canaries are then restored.
    fn broken_canary(&self) -> Option<String> {
        let gaps = self.layout.gaps;
        // Every gap's changes gathered first, tested once: no branch per
        // gap (every guarded step runs this).
        let changed = gaps.iter().fold(0, |changed, &(start, end)| {
            changed | changes(self.bytes(start..end))
        });
        if changed == 0 {
            return None;
        }
        let broken = gaps.iter().enumerate().find_map(|(index, &(start, end))| {
            let bytes = self.bytes(start..end);
            let first = bytes.iter().position(|b| *b != PATTERN)?;
            let last = bytes.iter().rposition(|b| *b != PATTERN)?;
            Some((start..end, index, first, last))
        })?;
        let (range, index, first, last) = broken;
        let changed = last - first + 1;
        let text = match index {
            0 => format!(
                "the step wrote before its {} ({} byte(s) before its start)",
                self.layout.buffers[0].2,
                range.len() - first
            ),
            _ => format!(
                "the step wrote past the end of its {} (from byte {} after its end, \
                 {changed} byte(s))",
                self.layout.buffers[index - 1].2,
                first
            ),
        };
        for (start, end) in gaps {
            // SAFETY: the range is inside the usable memory.
            unsafe { std::ptr::write_bytes(self.base.add(start), PATTERN, end - start) };
        }
        Some(text)
    }
}

thread_local! {
    /// This thread's arenas, one per (durable, volatile) size.
    static ARENAS: RefCell<Vec<Arena>> = const { RefCell::new(Vec::new()) };
}

/// The bits changed in the canary gap `bytes`, gathered into one word:
/// zero when it is intact. Every gap holds `CANARY` to `CANARY + ALIGN`
/// bytes, so its first and its last `CANARY` bytes cover it: each is read
/// as fixed-size words, which compiles to a few instructions inline
/// (comparing the blocks as arrays calls `memcmp`).
#[inline]
fn changes(bytes: &[u8]) -> u64 {
    const WORD: u64 = u64::from_ne_bytes([PATTERN; 8]);
    let changed = |at: usize| -> u64 {
        let block: &[u8; CANARY] = bytes[at..at + CANARY]
            .try_into()
            .expect("a block of CANARY bytes");
        block.chunks_exact(8).fold(0, |changed, word| {
            changed | (u64::from_ne_bytes(word.try_into().expect("8 bytes")) ^ WORD)
        })
    };
    changed(0) | changed(bytes.len() - CANARY)
}

/// The first byte at which `now` differs from `before`, with both values.
fn first_change(before: &[u8], now: &[u8]) -> Option<(usize, u8, u8)> {
    if before == now {
        return None;
    }
    before
        .iter()
        .zip(now)
        .position(|(a, b)| a != b)
        .map(|at| (at, before[at], now[at]))
}

/// Runs `core`'s step on `state` (durable then volatile part) and `event`,
/// with no outputs yet; a core that needs guards (C code, which can read
/// any output item) finds the items holding the byte `fill` until it
/// writes them.
///
/// A core that [needs guards](Core::needs_memory_guards) runs on guarded
/// copies: the new volatile part and the outputs (the count, the refusals
/// and the valid items) are copied back into `state` and `out`, and `Err`
/// says how the step broke its memory contract (then `state` and `out` are
/// left as they were). Any other core runs on `state` and `out` in place
/// (inline: that is every step of a typed Rust core; the guarded steps run
/// in the arena's closure, out of line).
#[inline]
pub(crate) fn step(
    core: &dyn Core,
    config: &Config,
    state: &mut [u8],
    event: &Event,
    out: &mut Outputs,
    fill: u8,
) -> Result<Result<(), CoreError>, String> {
    if !core.needs_memory_guards() {
        // Safe Rust reaches only the outputs it emits (see `Outputs`): the
        // items need no fill (1,280 bytes written per step, 5% of reqack's
        // cycles), only the count and the refusals set to zero.
        out.clear();
        let (durable, volatile) = state.split_at_mut(core.durable_size());
        // A panic is the core's failure at this step, with its trace and
        // replay file like any other, not the end of the search.
        let step = || core.step(config, durable, volatile, event, out);
        return Ok(
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(step)).unwrap_or_else(|panic| {
                Err(CoreError::Library(format!(
                    "the core panicked: {}",
                    crate::run::step::panic_text(&*panic)
                )))
            }),
        );
    }
    let key = (core.durable_size(), core.volatile_size());
    debug_assert_eq!(state.len(), key.0 + key.1);
    ARENAS.with(|arenas| {
        let mut arenas = arenas.borrow_mut();
        let index = match arenas.iter().position(|arena| arena.key == key) {
            Some(index) => index,
            None => {
                arenas.push(Arena::new(key.0, key.1));
                arenas.len() - 1
            }
        };
        let arena = &arenas[index];
        let (durable, volatile) = state.split_at_mut(key.0);
        arena.put(CONFIG, config);
        arena.put(EVENT, event);
        arena.empty_outputs(fill);
        arena.copy_in(DURABLE, durable);
        arena.copy_in(VOLATILE, volatile);
        // SAFETY: each buffer is aligned to 16 bytes and holds a valid value
        // of its type (all of them plain old data); nothing else refers to
        // the arena during the call.
        let result = unsafe {
            core.step(
                &*arena.at(CONFIG).cast::<Config>(),
                std::slice::from_raw_parts(arena.at(DURABLE), key.0),
                std::slice::from_raw_parts_mut(arena.at(VOLATILE), key.1),
                &*arena.at(EVENT).cast::<Event>(),
                &mut *arena.at(OUTPUTS).cast::<Outputs>(),
            )
        };
        if let Some(broken) = arena.broken_canary() {
            return Err(broken);
        }
        // Compared whole first (the fixed-size ones inline); where one
        // differs, byte by byte for the report.
        let untouched = *durable == *arena.buffer(DURABLE)
            && arena.get::<Event>(EVENT) == event
            && arena.get::<Config>(CONFIG) == config;
        if !untouched {
            return Err(read_only_change(arena, durable, event, config));
        }
        volatile.copy_from_slice(arena.buffer(VOLATILE));
        arena.take_outputs(out);
        Ok(result)
    })
}

/// The first change the step made to a read-only buffer of `arena` (one
/// differs from what was put there: `durable`, `event`, `config`), as a
/// sentence.
fn read_only_change(arena: &Arena, durable: &[u8], event: &Event, config: &Config) -> String {
    let read_only = [
        (
            DURABLE,
            durable,
            "its read-only durable part (durable state changes only through PERSIST outputs)",
        ),
        (EVENT, bytemuck::bytes_of(event), "its read-only event"),
        (
            CONFIG,
            bytemuck::bytes_of(config),
            "its read-only configuration",
        ),
    ];
    read_only
        .into_iter()
        .find_map(|(buffer, before, what)| {
            let (at, was, now) = first_change(before, arena.buffer(buffer))?;
            Some(format!(
                "the step wrote into {what}: byte {at} changed from {was:#04x} to {now:#04x}"
            ))
        })
        .expect("a read-only buffer differs")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_changed_byte_anywhere_in_a_gap_breaks_it() {
        for length in CANARY..CANARY + ALIGN {
            let gap = vec![PATTERN; length];
            assert_eq!(changes(&gap), 0, "length {length}");
            for at in 0..length {
                let mut broken = gap.clone();
                broken[at] ^= 1;
                assert_ne!(changes(&broken), 0, "length {length}, byte {at}");
            }
        }
    }

    #[test]
    fn buffers_are_aligned_apart_and_end_before_the_guard_page() {
        for (durable, volatile) in [(0, 0), (4, 4), (3, 4093), (65536, 0), (100, 7)] {
            let layout = Layout::new(durable, volatile, 4096);
            assert_eq!(layout.usable % 4096, 0);
            let mut end = 0;
            for (index, (start, len, _)) in layout.buffers.iter().enumerate() {
                assert_eq!(start % ALIGN, 0);
                assert!(start - end >= CANARY || index == 0 && *start >= CANARY);
                end = start + len;
            }
            let tail = layout.usable - end;
            assert!((CANARY..CANARY + ALIGN).contains(&tail), "{tail}");
            for (start, end) in layout.gaps {
                assert!(
                    (CANARY..CANARY + ALIGN).contains(&(end - start)),
                    "{start}..{end}"
                );
            }
        }
    }
}
