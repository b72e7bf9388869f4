//! Parent links of every distinct state, in a file, as TLC's trace file.

use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use cmc_model::Fingerprint;

/// The index of a record in a [`TraceLog`].
pub type TraceId = u64;

/// How one distinct state was first reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TraceRecord {
    /// The state's fingerprint (checked when the path is re-executed).
    pub fingerprint: Fingerprint,
    /// The state it was generated from; `None` for an initial state.
    pub parent: Option<TraceId>,
    /// For an initial state: its index among the initial states. Otherwise:
    /// the index of the action, among the parent's candidate actions, that
    /// produced it.
    pub step: u32,
}

const RECORD_BYTES: u64 = 32;
const RECORDS_PER_BLOCK: u64 = 4096;
const NO_PARENT: u64 = u64::MAX;
const RECORD_MAGIC: u32 = 0x434d_4331; // "CMC1"

impl TraceRecord {
    fn to_bytes(self) -> [u8; RECORD_BYTES as usize] {
        let mut bytes = [0u8; RECORD_BYTES as usize];
        bytes[0..8].copy_from_slice(&self.fingerprint.high().to_le_bytes());
        bytes[8..16].copy_from_slice(&self.fingerprint.low().to_le_bytes());
        bytes[16..24].copy_from_slice(&self.parent.unwrap_or(NO_PARENT).to_le_bytes());
        bytes[24..28].copy_from_slice(&self.step.to_le_bytes());
        bytes[28..32].copy_from_slice(&RECORD_MAGIC.to_le_bytes());
        bytes
    }

    fn from_bytes(bytes: &[u8; RECORD_BYTES as usize]) -> Option<TraceRecord> {
        let word = |range: std::ops::Range<usize>| {
            u64::from_le_bytes(bytes[range].try_into().expect("8 bytes"))
        };
        let magic = u32::from_le_bytes(bytes[28..32].try_into().expect("4 bytes"));
        if magic != RECORD_MAGIC {
            return None;
        }
        let parent = word(16..24);
        Some(TraceRecord {
            fingerprint: Fingerprint::from_halves(word(0..8), word(8..16)),
            parent: (parent != NO_PARENT).then_some(parent),
            step: u32::from_le_bytes(bytes[24..28].try_into().expect("4 bytes")),
        })
    }
}

/// An append-only file of [`TraceRecord`]s shared by all workers.
///
/// Each worker appends through its own [`TraceWriter`], which reserves blocks
/// of ids and writes them with positioned writes, so workers never contend
/// on a lock. Records are 32 bytes; memory use is one block buffer per writer.
pub struct TraceLog {
    /// `None` for a log that keeps no record ([`TraceLog::discarding`]).
    file: Option<File>,
    next_block: AtomicU64,
}

/// The error of reading a record from a log that keeps none.
fn not_kept() -> io::Error {
    io::Error::new(
        io::ErrorKind::Unsupported,
        "parent links were not kept (--no-trace), so no trace can be rebuilt",
    )
}

impl TraceLog {
    /// A trace log in an anonymous temporary file under `dir` (removed when
    /// the log is dropped).
    pub fn create_in(dir: &Path) -> io::Result<TraceLog> {
        Ok(TraceLog {
            file: Some(tempfile::tempfile_in(dir)?),
            next_block: AtomicU64::new(0),
        })
    }

    /// A log that hands out ids but keeps no record (a search without
    /// traces: 32 bytes a distinct state saved); every read fails.
    pub fn discarding() -> TraceLog {
        TraceLog {
            file: None,
            next_block: AtomicU64::new(0),
        }
    }

    /// Whether records are kept (not a [`discarding`](Self::discarding) log).
    pub fn keeps_records(&self) -> bool {
        self.file.is_some()
    }

    /// The file, or the error of a log that keeps no record.
    fn file(&self) -> io::Result<&File> {
        self.file.as_ref().ok_or_else(not_kept)
    }

    /// A trace log in a new file at `path` (kept after the log is dropped, so
    /// that a checkpointed search can be resumed from it; a symbolic link
    /// there is refused).
    pub fn create_at(path: &Path) -> io::Result<TraceLog> {
        let file = crate::nofollow_files::open_rw(path, true)?;
        file.set_len(0)?;
        Ok(TraceLog {
            file: Some(file),
            next_block: AtomicU64::new(0),
        })
    }

    /// Reopens the log at `path` (not a symbolic link) as it was when
    /// [`next_block`](Self::next_block) returned `next_block`: records
    /// written after that are overwritten.
    pub fn reopen(path: &Path, next_block: u64) -> io::Result<TraceLog> {
        let file = crate::nofollow_files::open_rw(path, false)?;
        let needed = next_block.saturating_mul(RECORDS_PER_BLOCK * RECORD_BYTES);
        if file.metadata()?.len() < needed.saturating_sub(RECORDS_PER_BLOCK * RECORD_BYTES) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "trace log {} is shorter than its checkpoint says",
                    path.display()
                ),
            ));
        }
        Ok(TraceLog {
            file: Some(file),
            next_block: AtomicU64::new(next_block),
        })
    }

    /// The next block of ids to hand out: with the file, all a checkpoint
    /// needs to reopen the log.
    pub fn next_block(&self) -> u64 {
        self.next_block.load(Ordering::Relaxed)
    }

    /// A checksum of blocks `blocks` of the log (each block zero-filled
    /// beyond the end of the file, hashed with its index as seed, the hashes
    /// summed), so that the checksum of a longer prefix is the checksum of a
    /// shorter one plus that of the blocks after it. Blocks below
    /// [`next_block`](Self::next_block) whose writers are gone never change.
    /// `stop` is asked before each block (see [`crate::stop`]).
    pub fn digest_blocks(
        &self,
        blocks: std::ops::Range<u64>,
        stop: crate::stop::Stop<'_>,
    ) -> io::Result<u128> {
        let block_bytes = RECORDS_PER_BLOCK * RECORD_BYTES;
        let mut buffer = vec![0u8; block_bytes as usize];
        let mut sum = 0u128;
        for block in blocks {
            crate::stop::check(stop)?;
            buffer.fill(0);
            let mut filled = 0;
            while filled < buffer.len() {
                let offset = block * block_bytes + filled as u64;
                match self.file()?.read_at(&mut buffer[filled..], offset)? {
                    0 => break,
                    read => filled += read,
                }
            }
            sum = sum.wrapping_add(xxhash_rust::xxh3::xxh3_128_with_seed(&buffer, block));
        }
        Ok(sum)
    }

    /// Makes every flushed record durable.
    pub fn sync(&self) -> io::Result<()> {
        self.file()?.sync_data()
    }

    /// A trace log in the system's temporary directory.
    pub fn create_temp() -> io::Result<TraceLog> {
        TraceLog::create_in(&std::env::temp_dir())
    }

    /// A writer for one worker.
    pub fn writer(&self) -> TraceWriter<'_> {
        TraceWriter {
            log: self,
            block_start: 0,
            used: RECORDS_PER_BLOCK,
            flushed: RECORDS_PER_BLOCK,
            buffer: Vec::with_capacity((RECORDS_PER_BLOCK * RECORD_BYTES) as usize),
        }
    }

    /// Reads record `id`. Fails if it was never written (or not yet flushed).
    pub fn read(&self, id: TraceId) -> io::Result<TraceRecord> {
        let mut bytes = [0u8; RECORD_BYTES as usize];
        self.file()?.read_exact_at(&mut bytes, id * RECORD_BYTES)?;
        TraceRecord::from_bytes(&bytes).ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("trace record {id} is missing or corrupt"),
            )
        })
    }

    /// The records from an initial state to `id`, initial state first.
    pub fn path_to(&self, id: TraceId) -> io::Result<Vec<TraceRecord>> {
        let mut path = Vec::new();
        let mut next = Some(id);
        while let Some(current) = next {
            let record = self.read(current)?;
            path.push(record);
            if path.len() as u64 > self.capacity_records() {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    "trace log parent links form a cycle",
                ));
            }
            next = record.parent;
        }
        path.reverse();
        Ok(path)
    }

    fn capacity_records(&self) -> u64 {
        self.next_block.load(Ordering::Relaxed) * RECORDS_PER_BLOCK
    }

    /// Bytes the log occupies on disk (reserved blocks included).
    pub fn disk_bytes(&self) -> u64 {
        if self.keeps_records() {
            self.capacity_records() * RECORD_BYTES
        } else {
            0
        }
    }
}

/// One worker's buffered appender into a [`TraceLog`].
///
/// Records become readable after [`flush`](TraceWriter::flush). Dropping a
/// writer without flushing loses its buffered records (never silently: a
/// later [`TraceLog::read`] of them fails).
pub struct TraceWriter<'a> {
    log: &'a TraceLog,
    block_start: TraceId,
    used: u64,
    flushed: u64,
    buffer: Vec<u8>,
}

impl TraceWriter<'_> {
    /// Appends `record` and returns its id.
    #[inline]
    pub fn append(&mut self, record: TraceRecord) -> io::Result<TraceId> {
        if self.used == RECORDS_PER_BLOCK {
            self.flush()?;
            let block = self.log.next_block.fetch_add(1, Ordering::Relaxed);
            self.block_start = block * RECORDS_PER_BLOCK;
            self.used = 0;
            self.flushed = 0;
            self.buffer.clear();
        }
        if self.log.keeps_records() {
            self.buffer.extend_from_slice(&record.to_bytes());
        }
        let id = self.block_start + self.used;
        self.used += 1;
        Ok(id)
    }

    /// Writes every buffered record to the file.
    pub fn flush(&mut self) -> io::Result<()> {
        if let (true, Some(file)) = (self.flushed < self.used, &self.log.file) {
            let from = (self.flushed * RECORD_BYTES) as usize;
            let offset = (self.block_start + self.flushed) * RECORD_BYTES;
            file.write_all_at(&self.buffer[from..], offset)?;
        }
        self.flushed = self.used;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(parent: Option<TraceId>, step: u32) -> TraceRecord {
        TraceRecord {
            fingerprint: Fingerprint::of_bytes(&step.to_le_bytes()),
            parent,
            step,
        }
    }

    #[test]
    fn path_is_rebuilt_from_parent_links() {
        let log = TraceLog::create_temp().unwrap();
        let mut writer = log.writer();
        let root = writer.append(record(None, 0)).unwrap();
        let child = writer.append(record(Some(root), 3)).unwrap();
        let grandchild = writer.append(record(Some(child), 1)).unwrap();
        writer.flush().unwrap();
        let path = log.path_to(grandchild).unwrap();
        assert_eq!(
            path.iter().map(|r| r.step).collect::<Vec<_>>(),
            vec![0, 3, 1]
        );
        assert_eq!(path[0].parent, None);
    }

    #[test]
    fn writers_use_disjoint_ids() {
        let log = TraceLog::create_temp().unwrap();
        let mut a = log.writer();
        let mut b = log.writer();
        let ids_a: Vec<_> = (0..5000)
            .map(|i| a.append(record(None, i)).unwrap())
            .collect();
        let ids_b: Vec<_> = (0..10)
            .map(|i| b.append(record(None, i)).unwrap())
            .collect();
        a.flush().unwrap();
        b.flush().unwrap();
        assert!(ids_b.iter().all(|id| !ids_a.contains(id)));
        assert_eq!(log.read(ids_a[4999]).unwrap().step, 4999);
        assert_eq!(log.read(ids_b[9]).unwrap().step, 9);
    }

    #[test]
    fn a_discarding_log_hands_out_ids_and_refuses_reads() {
        let log = TraceLog::discarding();
        let mut writer = log.writer();
        let ids: Vec<_> = (0..5000)
            .map(|i| writer.append(record(None, i)).unwrap())
            .collect();
        writer.flush().unwrap();
        assert!(ids.windows(2).all(|pair| pair[0] < pair[1]));
        assert_eq!(log.disk_bytes(), 0);
        let error = log.path_to(ids[4999]).unwrap_err();
        assert!(error.to_string().contains("--no-trace"), "{error}");
    }

    #[test]
    fn unflushed_or_unwritten_records_are_errors() {
        let log = TraceLog::create_temp().unwrap();
        let mut writer = log.writer();
        let id = writer.append(record(None, 0)).unwrap();
        assert!(log.read(id).is_err());
        writer.flush().unwrap();
        assert!(log.read(id).is_ok());
        assert!(log.read(id + 1).is_err());
    }
}
