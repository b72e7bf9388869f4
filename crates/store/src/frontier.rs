//! A BFS level held as segments of canonical state bytes, in memory up to a
//! budget and in a spill file beyond it.

use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Most states one [`Segment`] holds; segments are the unit of work that
/// search workers take, so this bounds how unevenly a level can be split.
pub const SEGMENT_STATES_MAX: usize = 512;

/// A batch of frontier entries in one flat byte buffer.
///
/// Each entry is `trace id (u64 LE) | length (u32 LE) | state bytes`: no heap
/// object per state, and the buffer can be written to disk or sent elsewhere
/// as it is.
#[derive(Debug, Default, Clone)]
pub struct Segment {
    bytes: Vec<u8>,
    states: usize,
}

/// One entry of a [`Segment`]: a state's canonical bytes and its trace id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontierEntry<'a> {
    /// The state's record in the trace log.
    pub trace_id: u64,
    /// The state's canonical encoding.
    pub state: &'a [u8],
}

const ENTRY_HEADER_BYTES: usize = 12;

impl Segment {
    /// An empty segment.
    pub fn new() -> Segment {
        Segment::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.states
    }

    /// Whether the segment has no entry.
    pub fn is_empty(&self) -> bool {
        self.states == 0
    }

    /// Whether the segment holds [`SEGMENT_STATES_MAX`] entries.
    pub fn is_full(&self) -> bool {
        self.states >= SEGMENT_STATES_MAX
    }

    /// Bytes of state data and headers held.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Removes every entry, keeping the buffer (a segment expanded is
    /// reused for the next level's states: fresh memory costs the kernel a
    /// zeroed page per 4 KiB first written).
    pub fn clear(&mut self) {
        self.bytes.clear();
        self.states = 0;
    }

    /// Appends a state. Panics if the state is longer than `u32::MAX` bytes.
    #[inline]
    pub fn push(&mut self, trace_id: u64, state: &[u8]) {
        self.push_joined(trace_id, &[], state);
    }

    /// Appends an entry whose bytes are `head` then `state` (a caller's
    /// header before a state; [`SegmentIter`] gives them back as one
    /// slice). Panics if they are longer than `u32::MAX` bytes together.
    #[inline]
    pub fn push_joined(&mut self, trace_id: u64, head: &[u8], state: &[u8]) {
        let len = u32::try_from(head.len() + state.len())
            .expect("a state encoding fits in u32::MAX bytes");
        if self.bytes.capacity() == 0 {
            // Room for a full segment of entries like the first, made once:
            // growing by doubling copied every segment's bytes again, a few
            // percent of a search. Memory the entries never reach is not
            // touched, so the kernel gives it no page.
            self.bytes
                .reserve(SEGMENT_STATES_MAX * (ENTRY_HEADER_BYTES + len as usize));
        }
        self.bytes.extend_from_slice(&trace_id.to_le_bytes());
        self.bytes.extend_from_slice(&len.to_le_bytes());
        self.bytes.extend_from_slice(head);
        self.bytes.extend_from_slice(state);
        self.states += 1;
    }

    /// The entries in the order they were pushed.
    pub fn iter(&self) -> SegmentIter<'_> {
        SegmentIter { bytes: &self.bytes }
    }

    /// The raw buffer (for writing the segment to disk).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Rebuilds a segment from a buffer produced by [`as_bytes`](Self::as_bytes);
    /// `None` if the buffer is not a sequence of whole entries.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Segment> {
        let mut states = 0;
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let header = rest.get(..ENTRY_HEADER_BYTES)?;
            let len = u32::from_le_bytes(header[8..12].try_into().ok()?) as usize;
            rest = rest.get(ENTRY_HEADER_BYTES + len..)?;
            states += 1;
        }
        Some(Segment { bytes, states })
    }
}

/// Iterator over a [`Segment`]'s entries.
pub struct SegmentIter<'a> {
    bytes: &'a [u8],
}

impl<'a> Iterator for SegmentIter<'a> {
    type Item = FrontierEntry<'a>;

    #[inline]
    fn next(&mut self) -> Option<FrontierEntry<'a>> {
        if self.bytes.is_empty() {
            return None;
        }
        let (header, rest) = self.bytes.split_at(ENTRY_HEADER_BYTES);
        let trace_id = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(header[8..].try_into().expect("4 bytes")) as usize;
        let (state, rest) = rest.split_at(len);
        self.bytes = rest;
        Some(FrontierEntry { trace_id, state })
    }
}

/// Where one segment of a level is kept.
#[derive(Debug)]
enum Slot {
    /// In memory.
    Memory(Segment),
    /// In a file (a spill file or a checkpoint), at `offset`, `bytes` long,
    /// holding `states`.
    Disk {
        file: Arc<File>,
        offset: u64,
        bytes: usize,
        states: usize,
    },
}

impl Slot {
    fn states(&self) -> usize {
        match self {
            Slot::Memory(segment) => segment.len(),
            Slot::Disk { states, .. } => *states,
        }
    }

    /// The segment's bytes (read back from disk for a spilled one).
    fn read(&self) -> io::Result<Segment> {
        match self {
            Slot::Memory(segment) => Ok(segment.clone()),
            Slot::Disk {
                file,
                offset,
                bytes,
                ..
            } => read_segment(file, *offset, *bytes),
        }
    }

    fn into_segment(self) -> io::Result<Segment> {
        match self {
            Slot::Memory(segment) => Ok(segment),
            disk => disk.read(),
        }
    }
}

fn read_segment(file: &File, offset: u64, bytes: usize) -> io::Result<Segment> {
    let mut buffer = vec![0u8; bytes];
    file.read_exact_at(&mut buffer, offset)?;
    Segment::from_bytes(buffer).ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("frontier segment at offset {offset} is corrupt"),
        )
    })
}

/// Bytes of the header before each segment in a segment file: byte length
/// and state count, both `u64` little-endian.
const SEGMENT_FILE_HEADER_BYTES: usize = 16;

/// Writes `slots` as a segment file at `path` (not a symbolic link) and
/// makes it durable.
fn write_segment_file<'a>(path: &Path, slots: impl Iterator<Item = &'a Slot>) -> io::Result<()> {
    let mut out = io::BufWriter::new(crate::nofollow_files::create(path)?);
    for slot in slots {
        let segment = slot.read()?;
        out.write_all(&(segment.byte_len() as u64).to_le_bytes())?;
        out.write_all(&(segment.len() as u64).to_le_bytes())?;
        out.write_all(segment.as_bytes())?;
    }
    let file = out.into_inner().map_err(|error| error.into_error())?;
    file.sync_all()
}

/// The slots of the segment file at `path` (not a symbolic link), each
/// referring into the file.
fn open_segment_file(path: &Path) -> io::Result<Vec<Slot>> {
    let file = Arc::new(crate::nofollow_files::open(path)?);
    let length = file.metadata()?.len();
    let corrupt = |what: &str| {
        io::Error::new(
            io::ErrorKind::InvalidData,
            format!("segment file {} is corrupt: {what}", path.display()),
        )
    };
    let mut slots = Vec::new();
    let mut offset = 0u64;
    while offset < length {
        let mut header = [0u8; SEGMENT_FILE_HEADER_BYTES];
        file.read_exact_at(&mut header, offset)
            .map_err(|_| corrupt("truncated header"))?;
        let bytes = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let states = u64::from_le_bytes(header[8..].try_into().expect("8 bytes"));
        offset += SEGMENT_FILE_HEADER_BYTES as u64;
        if offset + bytes > length {
            return Err(corrupt("truncated segment"));
        }
        slots.push(Slot::Disk {
            file: Arc::clone(&file),
            offset,
            bytes: usize::try_from(bytes).map_err(|_| corrupt("segment too large"))?,
            states: usize::try_from(states).map_err(|_| corrupt("state count too large"))?,
        });
        offset += bytes;
    }
    Ok(slots)
}

/// A level's spill file: segments appended with positioned writes.
#[derive(Debug)]
struct SpillFile {
    file: Arc<File>,
    next_offset: AtomicU64,
}

/// Builds the next BFS level while workers produce its segments.
///
/// Segments stay in memory while the level's in-memory bytes are within the
/// budget; beyond it, each further segment is appended to an anonymous spill
/// file in the spill directory, and only its place is remembered. Every
/// method takes `&self`, so all workers push into one builder.
#[derive(Debug)]
pub struct LevelBuilder {
    slots: Mutex<Vec<Slot>>,
    states: AtomicU64,
    memory_bytes: AtomicUsize,
    memory_budget_bytes: usize,
    spill_dir: PathBuf,
    spill: OnceLock<SpillFile>,
}

impl LevelBuilder {
    /// A builder that keeps at most `memory_budget_bytes` of segments in
    /// memory and spills the rest into a file under `spill_dir`.
    pub fn new(memory_budget_bytes: usize, spill_dir: &Path) -> LevelBuilder {
        LevelBuilder {
            slots: Mutex::new(Vec::new()),
            states: AtomicU64::new(0),
            memory_bytes: AtomicUsize::new(0),
            memory_budget_bytes,
            spill_dir: spill_dir.to_path_buf(),
            spill: OnceLock::new(),
        }
    }

    /// A builder that continues one saved by [`save`](Self::save) at `path`.
    pub fn reopen(
        path: &Path,
        memory_budget_bytes: usize,
        spill_dir: &Path,
    ) -> io::Result<LevelBuilder> {
        let builder = LevelBuilder::new(memory_budget_bytes, spill_dir);
        let slots = open_segment_file(path)?;
        let states = slots.iter().map(|slot| slot.states() as u64).sum();
        builder.states.store(states, Ordering::Relaxed);
        *builder.slots.lock().unwrap_or_else(|p| p.into_inner()) = slots;
        Ok(builder)
    }

    /// Adds a segment (empty segments are dropped).
    pub fn push(&self, segment: Segment) -> io::Result<()> {
        if segment.is_empty() {
            return Ok(());
        }
        self.states
            .fetch_add(segment.len() as u64, Ordering::Relaxed);
        let bytes = segment.byte_len();
        let in_memory = self.memory_bytes.fetch_add(bytes, Ordering::Relaxed) + bytes;
        let slot = if in_memory <= self.memory_budget_bytes {
            Slot::Memory(segment)
        } else {
            self.memory_bytes.fetch_sub(bytes, Ordering::Relaxed);
            self.spill_segment(&segment)?
        };
        self.slots
            .lock()
            .unwrap_or_else(|poison| poison.into_inner())
            .push(slot);
        Ok(())
    }

    fn spill_segment(&self, segment: &Segment) -> io::Result<Slot> {
        let spill = match self.spill.get() {
            Some(spill) => spill,
            None => {
                let file = tempfile::tempfile_in(&self.spill_dir)?;
                // Another worker may have won the race; its file is used and ours dropped.
                let _ = self.spill.set(SpillFile {
                    file: Arc::new(file),
                    next_offset: AtomicU64::new(0),
                });
                self.spill.get().expect("the spill file was just set")
            }
        };
        let bytes = segment.as_bytes();
        let offset = spill
            .next_offset
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        spill.file.write_all_at(bytes, offset)?;
        Ok(Slot::Disk {
            file: Arc::clone(&spill.file),
            offset,
            bytes: bytes.len(),
            states: segment.len(),
        })
    }

    /// Number of states pushed so far.
    pub fn len(&self) -> u64 {
        self.states.load(Ordering::Relaxed)
    }

    /// Whether no state was pushed.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Bytes of segments held in memory.
    pub fn memory_bytes(&self) -> usize {
        self.memory_bytes.load(Ordering::Relaxed)
    }

    /// Bytes of segments written to the spill file so far.
    pub fn spilled_bytes(&self) -> u64 {
        self.spill
            .get()
            .map_or(0, |spill| spill.next_offset.load(Ordering::Relaxed))
    }

    /// Writes the segments pushed so far to a durable segment file at `path`
    /// (for a checkpoint); the builder is unchanged.
    pub fn save(&self, path: &Path) -> io::Result<()> {
        let slots = self.slots.lock().unwrap_or_else(|p| p.into_inner());
        write_segment_file(path, slots.iter())
    }

    /// The finished level.
    pub fn finish(self) -> Frontier {
        let slots = self
            .slots
            .into_inner()
            .unwrap_or_else(|poison| poison.into_inner());
        Frontier {
            states: self.states.load(Ordering::Relaxed),
            slots: slots
                .into_iter()
                .map(|slot| Mutex::new(Some(slot)))
                .collect(),
        }
    }
}

/// One BFS level: the segments of states still to expand, in memory or on disk.
///
/// Workers [`take`](Frontier::take) segments by index (each index is taken
/// once); a taken in-memory segment's memory is released when the taker drops it.
#[derive(Debug, Default)]
pub struct Frontier {
    slots: Vec<Mutex<Option<Slot>>>,
    states: u64,
}

impl Frontier {
    /// An empty level.
    pub fn new() -> Frontier {
        Frontier::default()
    }

    /// A level held in memory.
    pub fn from_segments(segments: impl IntoIterator<Item = Segment>) -> Frontier {
        Frontier::from_slots(
            segments
                .into_iter()
                .filter(|segment| !segment.is_empty())
                .map(Slot::Memory)
                .collect(),
        )
    }

    fn from_slots(slots: Vec<Slot>) -> Frontier {
        Frontier {
            states: slots.iter().map(|slot| slot.states() as u64).sum(),
            slots: slots
                .into_iter()
                .map(|slot| Mutex::new(Some(slot)))
                .collect(),
        }
    }

    /// The level saved by [`save`](Self::save) at `path`, read lazily from it.
    pub fn open(path: &Path) -> io::Result<Frontier> {
        Ok(Frontier::from_slots(open_segment_file(path)?))
    }

    /// Writes the untaken segments to a durable segment file at `path` and
    /// returns the same level read from that file (for a checkpoint: the
    /// level's memory is released).
    pub fn save(self, path: &Path) -> io::Result<Frontier> {
        let slots: Vec<Slot> = self.untaken().collect();
        write_segment_file(path, slots.iter())?;
        Frontier::open(path)
    }

    fn untaken(self) -> impl Iterator<Item = Slot> {
        self.slots
            .into_iter()
            .filter_map(|slot| slot.into_inner().unwrap_or_else(|p| p.into_inner()))
    }

    /// Number of states in the level (taken segments included).
    pub fn len(&self) -> u64 {
        self.states
    }

    /// Whether the level has no state.
    pub fn is_empty(&self) -> bool {
        self.states == 0
    }

    /// Number of segments (taken ones included).
    pub fn segment_count(&self) -> usize {
        self.slots.len()
    }

    /// Takes segment `index` (reading it back from disk if it was spilled);
    /// `None` if there is no such segment or it was already taken.
    pub fn take(&self, index: usize) -> io::Result<Option<Segment>> {
        let Some(slot) = self.slots.get(index) else {
            return Ok(None);
        };
        let slot = slot.lock().unwrap_or_else(|p| p.into_inner()).take();
        slot.map(Slot::into_segment).transpose()
    }

    /// The level without its taken segments, followed by `extra` segments
    /// (used to resume a level after a pause).
    pub fn remaining_with(self, extra: Vec<Segment>) -> Frontier {
        let mut slots: Vec<Slot> = self.untaken().collect();
        slots.extend(
            extra
                .into_iter()
                .filter(|segment| !segment.is_empty())
                .map(Slot::Memory),
        );
        Frontier::from_slots(slots)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back_in_order() {
        let mut segment = Segment::new();
        segment.push(7, b"abc");
        segment.push(8, b"");
        segment.push(9, b"z");
        segment.push_joined(10, b"ab", b"cd");
        let entries: Vec<_> = segment.iter().collect();
        assert_eq!(entries.len(), 4);
        assert_eq!(
            entries[0],
            FrontierEntry {
                trace_id: 7,
                state: b"abc"
            }
        );
        assert_eq!(entries[1].state, b"");
        assert_eq!(entries[2].trace_id, 9);
        assert_eq!(
            entries[3],
            FrontierEntry {
                trace_id: 10,
                state: b"abcd"
            }
        );
    }

    #[test]
    fn bytes_round_trip_and_truncation_is_detected() {
        let mut segment = Segment::new();
        segment.push(1, b"hello");
        segment.push(2, b"world");
        let copy = Segment::from_bytes(segment.as_bytes().to_vec()).unwrap();
        assert_eq!(copy.len(), 2);
        let mut truncated = segment.as_bytes().to_vec();
        truncated.pop();
        assert!(Segment::from_bytes(truncated).is_none());
    }

    fn segment_of(ids: std::ops::Range<u64>) -> Segment {
        let mut segment = Segment::new();
        for id in ids {
            segment.push(id, &id.to_le_bytes());
        }
        segment
    }

    fn ids_of(frontier: &Frontier) -> Vec<u64> {
        (0..frontier.segment_count())
            .flat_map(|index| {
                let segment = frontier.take(index).unwrap().unwrap();
                segment.iter().map(|e| e.trace_id).collect::<Vec<_>>()
            })
            .collect()
    }

    #[test]
    fn a_level_beyond_its_budget_spills_and_reads_back() {
        let dir = tempfile::tempdir().unwrap();
        // Each segment is 10 entries of 20 bytes: a 250-byte budget keeps one.
        let builder = LevelBuilder::new(250, dir.path());
        for start in (0..50).step_by(10) {
            builder.push(segment_of(start..start + 10)).unwrap();
        }
        builder.push(Segment::new()).unwrap();
        let frontier = builder.finish();
        assert_eq!(frontier.len(), 50);
        assert_eq!(frontier.segment_count(), 5);
        assert!(
            frontier
                .slots
                .iter()
                .any(|slot| matches!(*slot.lock().unwrap(), Some(Slot::Disk { .. }))),
            "segments beyond the budget went to disk"
        );
        let mut ids = ids_of(&frontier);
        ids.sort_unstable();
        assert_eq!(ids, (0..50).collect::<Vec<_>>());
        assert!(
            frontier.take(0).unwrap().is_none(),
            "a segment is taken once"
        );
    }

    #[test]
    fn remaining_keeps_untaken_segments_and_adds_extra() {
        let dir = tempfile::tempdir().unwrap();
        let builder = LevelBuilder::new(0, dir.path());
        builder.push(segment_of(0..3)).unwrap();
        builder.push(segment_of(3..5)).unwrap();
        let frontier = builder.finish();
        frontier.take(0).unwrap().unwrap();
        let rest = frontier.remaining_with(vec![segment_of(9..10)]);
        assert_eq!(rest.len(), 3);
        assert_eq!(ids_of(&rest), vec![3, 4, 9]);
    }

    #[test]
    fn saved_levels_and_builders_reopen_with_the_same_states() {
        let dir = tempfile::tempdir().unwrap();
        let builder = LevelBuilder::new(30, dir.path());
        builder.push(segment_of(0..2)).unwrap();
        builder.push(segment_of(2..7)).unwrap();
        builder.save(&dir.path().join("next")).unwrap();
        let reopened = LevelBuilder::reopen(&dir.path().join("next"), 0, dir.path()).unwrap();
        assert_eq!(reopened.len(), 7);
        reopened.push(segment_of(7..8)).unwrap();
        let mut ids = ids_of(&reopened.finish());
        ids.sort_unstable();
        assert_eq!(ids, (0..8).collect::<Vec<_>>());

        let level = Frontier::from_segments([segment_of(10..12), segment_of(12..13)]);
        level.take(0).unwrap();
        let saved = level.save(&dir.path().join("level")).unwrap();
        assert_eq!(saved.len(), 1);
        assert_eq!(
            ids_of(&Frontier::open(&dir.path().join("level")).unwrap()),
            vec![12]
        );

        std::fs::write(dir.path().join("bad"), [1u8, 2, 3]).unwrap();
        assert!(Frontier::open(&dir.path().join("bad")).is_err());
    }

    #[test]
    fn in_memory_levels_never_create_files() {
        let frontier = Frontier::from_segments([segment_of(0..4), Segment::new()]);
        assert_eq!(frontier.len(), 4);
        assert_eq!(frontier.segment_count(), 1);
        assert!(frontier
            .slots
            .iter()
            .all(|slot| matches!(*slot.lock().unwrap(), Some(Slot::Memory(_)))));
    }
}
