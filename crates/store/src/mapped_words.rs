//! Zeroed words in an anonymous memory mapping of their own, which can grow
//! without copying: the kernel moves the mapping's page tables, never its
//! contents, and backs the new words with zero pages when first touched.

use std::alloc::{handle_alloc_error, Layout};
use std::ops::Deref;
use std::sync::atomic::AtomicU64;

/// Alignment of the mapping: a transparent huge page, so that all of it can
/// be backed by huge pages and a move keeps them whole.
const HUGE_PAGE: usize = 2 << 20;

/// `len` zero-initialised [`AtomicU64`]s in a private anonymous mapping
/// aligned to a huge page (and advised to use huge pages: a table probed
/// at random would, with 4 KiB pages, miss the TLB on most probes).
///
/// [`grow`](MappedWords::grow) keeps the words and appends zeroed ones;
/// memory no word was ever written to takes no physical memory.
pub(crate) struct MappedWords {
    start: *mut AtomicU64,
    len: usize,
}

// SAFETY: the mapping is owned by this value alone and holds atomics only.
unsafe impl Send for MappedWords {}
// SAFETY: shared access goes through `&[AtomicU64]`, which is `Sync`.
unsafe impl Sync for MappedWords {}

/// Bytes a mapping of `len` words takes (whole pages).
fn mapping_bytes(len: usize) -> usize {
    let page = 4096;
    len.checked_mul(8)
        .and_then(|bytes| bytes.checked_next_multiple_of(page))
        .expect("a table of words fits in the address space")
}

/// Stops the process as the allocator does when `len` words cannot be had.
fn out_of_memory(len: usize) -> ! {
    handle_alloc_error(Layout::array::<u64>(len).unwrap_or(Layout::new::<u64>()))
}

/// A fresh mapping of `bytes` (whole pages) at an address aligned to
/// [`HUGE_PAGE`], readable and writable when `writable`, else reserved
/// only; `None` if the kernel refuses.
fn map_aligned(bytes: usize, writable: bool) -> Option<*mut libc::c_void> {
    let padded = bytes.checked_add(HUGE_PAGE)?;
    let protection = if writable {
        libc::PROT_READ | libc::PROT_WRITE
    } else {
        libc::PROT_NONE
    };
    // SAFETY: a new private anonymous mapping; no existing memory is touched.
    let mapped = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            padded,
            protection,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if mapped == libc::MAP_FAILED {
        return None;
    }
    let address = mapped as usize;
    let aligned = address.next_multiple_of(HUGE_PAGE);
    let tail = address + padded - (aligned + bytes);
    // SAFETY: both ranges lie inside the mapping just made and outside the
    // aligned part that is kept; unmapping them touches nothing else.
    unsafe {
        if aligned > address {
            libc::munmap(mapped, aligned - address);
        }
        if tail > 0 {
            libc::munmap((aligned + bytes) as *mut libc::c_void, tail);
        }
    }
    Some(aligned as *mut libc::c_void)
}

impl MappedWords {
    /// `len` zeroed words (at least one).
    pub fn zeroed(len: usize) -> MappedWords {
        let len = len.max(1);
        let Some(start) = map_aligned(mapping_bytes(len), true) else {
            out_of_memory(len)
        };
        let words = MappedWords {
            start: start.cast(),
            len,
        };
        words.advise_huge_pages();
        words
    }

    /// Advises huge pages for the whole mapping, not only its whole huge
    /// pages: advice on part of it would split it into two kernel mappings
    /// (areas), and `mremap` grows a range of one area only.
    fn advise_huge_pages(&self) {
        // SAFETY: the range is this value's own mapping; MADV_HUGEPAGE
        // changes no contents and its failure is harmless.
        unsafe {
            libc::madvise(
                self.start.cast(),
                mapping_bytes(self.len),
                libc::MADV_HUGEPAGE,
            );
        }
    }

    /// Grows to `len` words (no fewer than now): the words kept keep their
    /// values, the new ones are zero.
    pub fn grow(&mut self, len: usize) {
        assert!(len >= self.len, "mapped words only grow");
        let old_bytes = mapping_bytes(self.len);
        let new_bytes = mapping_bytes(len);
        if new_bytes > old_bytes {
            let moved = self
                .remap(old_bytes, new_bytes)
                .or_else(|| self.copy_to_new_mapping(old_bytes, new_bytes))
                .unwrap_or_else(|| out_of_memory(len));
            self.start = moved.cast();
        }
        self.len = len;
        self.advise_huge_pages();
    }

    /// The mapping of `old_bytes` extended to `new_bytes` without copying:
    /// in place if the addresses after it are free, else moved (page tables,
    /// not contents) onto a reservation aligned to a huge page, which
    /// `MREMAP_FIXED` replaces. `None` if the kernel refuses both; the
    /// mapping is then unchanged.
    fn remap(&self, old_bytes: usize, new_bytes: usize) -> Option<*mut libc::c_void> {
        // SAFETY: `start` and `old_bytes` are this value's own mapping, and
        // `target` a reservation of `new_bytes` made here.
        unsafe {
            let in_place = libc::mremap(self.start.cast(), old_bytes, new_bytes, 0);
            if in_place != libc::MAP_FAILED {
                return Some(in_place);
            }
            let target = map_aligned(new_bytes, false)?;
            let moved = libc::mremap(
                self.start.cast(),
                old_bytes,
                new_bytes,
                libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED,
                target,
            );
            if moved == libc::MAP_FAILED {
                libc::munmap(target, new_bytes);
                return None;
            }
            Some(moved)
        }
    }

    /// The words copied into a fresh zeroed mapping of `new_bytes`, the old
    /// mapping released; `None` if no such mapping can be had.
    fn copy_to_new_mapping(&self, old_bytes: usize, new_bytes: usize) -> Option<*mut libc::c_void> {
        let target = map_aligned(new_bytes, true)?;
        // SAFETY: `target` is a new writable mapping of `new_bytes`, larger
        // than the `old_bytes` of this value's own mapping, which is
        // released once copied and not used again through `start`.
        unsafe {
            std::ptr::copy_nonoverlapping(self.start.cast::<u8>(), target.cast(), old_bytes);
            libc::munmap(self.start.cast(), old_bytes);
        }
        Some(target)
    }
}

impl Deref for MappedWords {
    type Target = [AtomicU64];

    fn deref(&self) -> &[AtomicU64] {
        // SAFETY: `start` maps at least `len` zero-initialised or written
        // words, readable and writable, for as long as `self` lives; an
        // `AtomicU64` has the size and bit validity of a `u64`.
        unsafe { std::slice::from_raw_parts(self.start, self.len) }
    }
}

impl Drop for MappedWords {
    fn drop(&mut self) {
        // SAFETY: the mapping is this value's own and is not used again.
        unsafe {
            libc::munmap(self.start.cast(), mapping_bytes(self.len));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::Ordering;

    /// The address ranges of the process's memory mappings (kernel areas).
    fn kernel_areas() -> Vec<std::ops::Range<usize>> {
        let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
        maps.lines()
            .map(|line| {
                let range = line.split(' ').next().expect("an address range");
                let (start, end) = range.split_once('-').expect("start-end");
                let address = |hex| usize::from_str_radix(hex, 16).expect("hex address");
                address(start)..address(end)
            })
            .collect()
    }

    /// The words lie in one kernel area, as `mremap` needs to grow them.
    fn assert_one_area(words: &MappedWords) {
        let start = words.as_ptr() as usize;
        let end = start + mapping_bytes(words.len());
        assert!(
            kernel_areas()
                .iter()
                .any(|area| area.start <= start && end <= area.end),
            "{} words at {start:#x} span several kernel areas",
            words.len()
        );
    }

    #[test]
    fn mappings_that_are_not_whole_huge_pages_stay_one_area_and_grow() {
        // 2.4 MB: one whole huge page and a part of one (a table loaded
        // from a checkpoint has such a size).
        let mut words = MappedWords::zeroed(300_000);
        assert_one_area(&words);
        words[299_999].store(7, Ordering::Relaxed);
        words.grow(700_001);
        assert_one_area(&words);
        assert_eq!(words[299_999].load(Ordering::Relaxed), 7);
        assert_eq!(words[700_000].load(Ordering::Relaxed), 0);
    }

    #[test]
    fn grown_words_keep_their_values_and_new_ones_are_zero() {
        let mut words = MappedWords::zeroed(1000);
        assert_eq!(words.as_ptr() as usize % HUGE_PAGE, 0);
        for (index, word) in words.iter().enumerate() {
            assert_eq!(word.load(Ordering::Relaxed), 0);
            word.store(index as u64 + 1, Ordering::Relaxed);
        }
        // A mapping right after the words: the first growth must move them.
        let after = (words.as_ptr() as usize + mapping_bytes(1000)) as *mut libc::c_void;
        // SAFETY: a new reservation where nothing is mapped (or refused).
        let blocker = unsafe {
            libc::mmap(
                after,
                4096,
                libc::PROT_NONE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED_NOREPLACE,
                -1,
                0,
            )
        };
        assert_eq!(blocker, after);
        for len in [1001, 5000, 3 << 20] {
            words.grow(len);
            assert_eq!(words.len(), len);
            assert_eq!(words.as_ptr() as usize % HUGE_PAGE, 0);
            for (index, word) in words.iter().enumerate() {
                let expected = if index < 1000 { index as u64 + 1 } else { 0 };
                assert_eq!(
                    word.load(Ordering::Relaxed),
                    expected,
                    "word {index} of {len}"
                );
            }
        }
        // SAFETY: the blocker is the test's own reservation.
        unsafe { libc::munmap(blocker, 4096) };
    }
}
