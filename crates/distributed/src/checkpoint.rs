//! Checkpoints of a distributed run: at a level boundary, every worker
//! saves its shard (fingerprints and parent links) and its part of the
//! level to be expanded, and each process records them in a manifest.
//!
//! Process `I` keeps its checkpoint in `DIR/process-I/`: `manifest.json`
//! (format, the run's identity, a checksum of the executable that wrote it,
//! this process's place in the cluster, the run's counters at the level, and
//! the length and XXH3-128 checksum of every worker file), written last and
//! sealed as the native engine's manifest is ([`cmc_search::sealed`]: its
//! last line is the checksum of the lines before it), and one
//! `worker-W.bin` per worker of the process. A new checkpoint is written to `DIR/process-I.level-D/`,
//! then swapped in by renames (the previous one is `DIR/process-I.old/`
//! between the two renames, and is used if a kill fell there). The run
//! holds an exclusive lock on `DIR/process-I.lock` for its whole life.
//!
//! Every process saves at the same level (the decision is part of the level
//! protocol), so the checkpoints of one run's processes fit together; a
//! resume checks that every process resumes the same level with the same
//! counters (they are part of the identity peers must agree on), and that
//! this process has the place it had (process index, process count, worker
//! threads), and refuses anything else. Since the search is deterministic
//! (the shard of a state depends on its fingerprint and the worker count
//! only, and each state keeps its least parent), checkpoints of two runs of
//! the same model at the same level are the same checkpoint.

use std::fs;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use cmc_store::stop::{Stop, Stoppable};
use serde::{Deserialize, Serialize};

use crate::shard::{Level, Link, Shard};
use crate::DistributedError;

/// Version of the format this build reads and writes.
const FORMAT: u32 = 1;
/// First bytes of a worker file.
const WORKER_MAGIC: &[u8; 8] = b"CMCTWK01";
/// The manifest's name inside a checkpoint.
const MANIFEST: &str = "manifest.json";
/// Largest manifest read.
const MANIFEST_MAX_BYTES: u64 = 16 << 20;
/// Largest worker file read (a larger one is not one this build wrote).
const WORKER_FILE_MAX_BYTES: u64 = 1 << 40;
/// Bytes of a shard entry in a worker file: fingerprint, parent, step, level.
const ENTRY_BYTES: usize = 16 + 16 + 4 + 4;

/// The figures of the whole run at the level a checkpoint was taken.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct RunCounters {
    /// Levels reached.
    pub depth: u64,
    pub distinct_states: u64,
    pub states_generated: u64,
    /// States of the level to be expanded (all workers).
    pub level_states: u64,
    /// The `sometimes` witnesses reached.
    pub witnesses: Vec<String>,
}

/// One worker file, as the manifest lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct WorkerFile {
    worker: usize,
    bytes: u64,
    xxh3_128: String,
}

/// Which run a process's checkpoint is of, and the process's place in it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct CheckpointOf {
    /// The run's identity (see [`crate::identity`]).
    pub identity: String,
    /// XXH3-128 of the executable that runs it (a rebuilt model is
    /// another model).
    pub build: String,
    /// The model's name and parameters, to rebuild it on resume.
    pub model: String,
    pub params: Vec<(String, String)>,
    pub process: usize,
    pub processes: usize,
    /// Worker threads of each process.
    pub threads: usize,
}

/// What a process's checkpoint is of, and what it holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Manifest {
    format: u32,
    #[serde(flatten)]
    of: CheckpointOf,
    counters: RunCounters,
    workers: Vec<WorkerFile>,
}

/// What one worker saves: its shard, its part of the level, its counters;
/// owned ([`WorkerPart`]) when loaded, borrowed ([`PartRef`]) when saved.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Part<S, L> {
    pub shard: S,
    pub level: L,
    pub sent_bytes: u64,
    pub remote_bytes: u64,
}

/// What one worker saved, as loaded.
pub(crate) type WorkerPart = Part<Shard, Level>;

/// What one worker saves, borrowed from it.
pub(crate) type PartRef<'a> = Part<&'a Shard, &'a Level>;

/// The checkpoints of this process: where they go, what they are of, and
/// the worker files of the one being written.
pub(crate) struct Checkpoints {
    /// `DIR/process-I`.
    current: PathBuf,
    of: CheckpointOf,
    /// The worker files written for the checkpoint in progress.
    written: Mutex<Vec<WorkerFile>>,
    /// `DIR/process-I.lock`, locked for the life of the run, so that no two
    /// runs use this process's checkpoint at once.
    _lock: fs::File,
}

/// The directory of process `process`'s checkpoint inside `dir`.
fn process_dir(dir: &Path, process: usize) -> PathBuf {
    dir.join(format!("process-{process}"))
}

fn worker_name(worker: usize) -> String {
    format!("worker-{worker}.bin")
}

fn checksum(bytes: &[u8]) -> String {
    format!("{:032x}", xxhash_rust::xxh3::xxh3_128(bytes))
}

fn problem(path: &Path, what: impl std::fmt::Display) -> String {
    format!("checkpoint {}: {what}", path.display())
}

/// The model name and parameters of process `process`'s checkpoint in `dir`.
pub fn checkpoint_model(
    dir: &Path,
    process: usize,
) -> Result<(String, Vec<(String, String)>), DistributedError> {
    let (_, manifest) = read_manifest(&process_dir(dir, process))?;
    Ok((manifest.of.model, manifest.of.params))
}

/// Reads the manifest of the checkpoint at `current` (or of the previous
/// one, if a kill fell between the renames of a swap): its directory and
/// contents.
fn read_manifest(current: &Path) -> Result<(PathBuf, Manifest), DistributedError> {
    let previous = current.with_extension("old");
    let dir = if current.is_dir() || !previous.is_dir() {
        current.to_path_buf()
    } else {
        previous
    };
    let path = dir.join(MANIFEST);
    let failed = |what: String| DistributedError::Checkpoint(problem(&path, what));
    let text = cmc_store::input_file::read_text_file(&path, "manifest", MANIFEST_MAX_BYTES)
        .map_err(|error| {
            failed(format!(
                "{error}; was it written by --checkpoint with --engine timely, for this --process?"
            ))
        })?;
    let body = cmc_search::sealed::unseal(&text).ok_or_else(|| {
        failed(
            "its contents do not match its checksum line (the file was changed or is damaged); the checkpoint cannot be resumed"
                .into(),
        )
    })?;
    let manifest: Manifest = serde_json::from_str(body)
        .map_err(|error| failed(format!("is not a timely checkpoint manifest ({error})")))?;
    if manifest.format != FORMAT {
        return Err(failed(format!(
            "has format {}, this cmc reads format {FORMAT}",
            manifest.format
        )));
    }
    Ok((dir, manifest))
}

impl Checkpoints {
    /// The checkpoints in `dir` of the process and run `of`. A new run (not
    /// `resume`) refuses a directory that already holds this process's
    /// checkpoint, unless `overwrite`.
    pub fn new(
        dir: &Path,
        of: CheckpointOf,
        resume: bool,
        overwrite: bool,
    ) -> Result<Checkpoints, DistributedError> {
        let current = process_dir(dir, of.process);
        fs::create_dir_all(dir)
            .map_err(|error| DistributedError::Checkpoint(problem(dir, error)))?;
        let lock_path = current.with_extension("lock");
        let lock = cmc_store::nofollow_files::lock_exclusive(&lock_path)
            .map_err(|error| DistributedError::Checkpoint(problem(&lock_path, error)))?
            .ok_or_else(|| {
                DistributedError::Checkpoint(format!(
                    "{} is locked by another cmc run using this checkpoint; wait for it to end or choose another directory",
                    lock_path.display()
                ))
            })?;
        if !resume && (current.exists() || current.with_extension("old").exists()) {
            if !overwrite {
                return Err(DistributedError::Checkpoint(format!(
                    "{} already holds a checkpoint; resume it with --resume, or give --checkpoint-overwrite",
                    current.display()
                )));
            }
            for old in [current.clone(), current.with_extension("old")] {
                if old.exists() {
                    fs::remove_dir_all(&old)
                        .map_err(|error| DistributedError::Checkpoint(problem(&old, error)))?;
                }
            }
        }
        Ok(Checkpoints {
            current,
            of,
            written: Mutex::new(Vec::new()),
            _lock: lock,
        })
    }

    /// The checkpoint directory a report names.
    pub fn dir(&self) -> PathBuf {
        self.current
            .parent()
            .map(Path::to_path_buf)
            .unwrap_or_default()
    }

    /// Where the checkpoint of level `depth` is written before it is swapped in.
    fn incoming(&self, depth: u64) -> PathBuf {
        self.current.with_extension(format!("level-{depth}"))
    }

    /// Loads this process's checkpoint: the run's counters and each local
    /// worker's part, by local worker index. Refuses a checkpoint of another
    /// run, another place in the cluster, or with a damaged file. `stop`
    /// ends the load at once ([`Loaded::Stopped`]): reading large worker
    /// files takes time, and the checkpoint is left as it was.
    pub fn load(&self, stop: Stop<'_>) -> Result<Loaded, DistributedError> {
        let (dir, manifest) = read_manifest(&self.current)?;
        let failed = |what: String| DistributedError::Checkpoint(problem(&dir, what));
        let (saved, this) = (&manifest.of, &self.of);
        if (saved.process, saved.processes, saved.threads)
            != (this.process, this.processes, this.threads)
        {
            return Err(failed(format!(
                "was saved by process {} of {} with {} worker thread(s); this is process {} of {} with {}: resume with the same --processes, --process and --workers",
                saved.process,
                saved.processes,
                saved.threads,
                this.process,
                this.processes,
                this.threads
            )));
        }
        if saved.build != this.build {
            return Err(failed(format!(
                "was written by another build of cmc or of the model (executable checksum {}; this is {}); resume with the executable that wrote it",
                saved.build, this.build
            )));
        }
        if saved.identity != this.identity {
            return Err(failed(format!(
                "is of `{}`, but this run is `{}`; resume with the model, parameters and options it was saved with",
                saved.identity, this.identity
            )));
        }
        let mut parts = Vec::with_capacity(this.threads);
        for local in 0..this.threads {
            let worker = this.process * this.threads + local;
            let listed = manifest
                .workers
                .iter()
                .find(|file| file.worker == worker)
                .ok_or_else(|| failed(format!("lists no file for worker {worker}")))?;
            let path = dir.join(worker_name(worker));
            let bytes = match read_worker_file(&path, listed, stop) {
                Ok(bytes) => bytes,
                Err(NotRead::Stopped) => return Ok(Loaded::Stopped),
                Err(NotRead::Refused(what)) => return Err(DistributedError::Checkpoint(what)),
            };
            parts.push(
                decode_part(&bytes, worker)
                    .map_err(|what| DistributedError::Checkpoint(problem(&path, what)))?,
            );
        }
        check_counts(&manifest, &parts).map_err(failed)?;
        Ok(Loaded::Parts(manifest.counters, parts))
    }

    /// The text peers must agree on when this process resumes: its
    /// checkpoint's level and counters.
    pub fn resumed_identity(counters: &RunCounters) -> String {
        format!(
            "resuming level {} ({} distinct, {} generated, {} to expand)",
            counters.depth,
            counters.distinct_states,
            counters.states_generated,
            counters.level_states
        )
    }

    /// Writes worker `worker`'s part of the checkpoint of level `depth`.
    pub fn save_part(&self, depth: u64, worker: usize, part: PartRef<'_>) -> Result<(), String> {
        let dir = self.incoming(depth);
        fs::create_dir_all(&dir).map_err(|error| problem(&dir, error))?;
        let path = dir.join(worker_name(worker));
        let bytes = encode_part(part, worker);
        fs::File::create(&path)
            .and_then(|mut file| {
                file.write_all(&bytes)?;
                file.sync_all()
            })
            .map_err(|error| problem(&path, error))?;
        self.written
            .lock()
            .map_err(|_| "a worker failed while saving".to_string())?
            .push(WorkerFile {
                worker,
                bytes: bytes.len() as u64,
                xxh3_128: checksum(&bytes),
            });
        Ok(())
    }

    /// Once every local worker has saved its part of level `depth`: writes
    /// the manifest and swaps the new checkpoint in.
    pub fn commit(&self, counters: &RunCounters) -> Result<(), String> {
        let dir = self.incoming(counters.depth);
        let mut workers = std::mem::take(
            &mut *self
                .written
                .lock()
                .map_err(|_| "a worker failed while saving".to_string())?,
        );
        workers.sort_by_key(|file| file.worker);
        if workers.len() != self.of.threads {
            return Err(problem(
                &dir,
                format!(
                    "{} of {} worker files were written",
                    workers.len(),
                    self.of.threads
                ),
            ));
        }
        let manifest = Manifest {
            format: FORMAT,
            of: self.of.clone(),
            counters: counters.clone(),
            workers,
        };
        let path = dir.join(MANIFEST);
        let text =
            serde_json::to_string_pretty(&manifest).map_err(|error| problem(&path, error))?;
        fs::File::create(&path)
            .and_then(|mut file| {
                file.write_all(cmc_search::sealed::seal(&text).as_bytes())?;
                file.sync_all()
            })
            .map_err(|error| problem(&path, error))?;
        let previous = self.current.with_extension("old");
        // A complete checkpoint is in place at every moment: `previous`
        // goes only once `current` is complete, and after the swap.
        let swap = || -> std::io::Result<()> {
            if self.current.exists() {
                if previous.exists() {
                    fs::remove_dir_all(&previous)?;
                }
                fs::rename(&self.current, &previous)?;
            }
            fs::rename(&dir, &self.current)?;
            if previous.exists() {
                fs::remove_dir_all(&previous)?;
            }
            Ok(())
        };
        swap().map_err(|error| problem(&self.current, error))
    }
}

/// What [`Checkpoints::load`] read.
pub(crate) enum Loaded {
    /// The run's counters and each local worker's part.
    Parts(RunCounters, Vec<WorkerPart>),
    /// The load was stopped before its end.
    Stopped,
}

/// Why a worker file was not read.
enum NotRead {
    /// The stop asked for it.
    Stopped,
    /// The file is not the one the manifest lists (the message says why).
    Refused(String),
}

/// The bytes of the worker file at `path`, once its length and checksum are
/// the ones `listed` gives. They are checked by a first read in constant
/// memory, so that a length changed in the manifest never makes the load
/// hold more than the file; `stop` ends either read at once.
fn read_worker_file(path: &Path, listed: &WorkerFile, stop: Stop<'_>) -> Result<Vec<u8>, NotRead> {
    let refused = |what: String| NotRead::Refused(problem(path, what));
    let failed = |error: std::io::Error| {
        if cmc_store::stop::is_stopped(&error) {
            NotRead::Stopped
        } else {
            refused(error.to_string())
        }
    };
    let mismatch = || {
        refused(
            "does not match its checksum in the manifest (damaged, or from another checkpoint)"
                .into(),
        )
    };
    if listed.bytes > WORKER_FILE_MAX_BYTES {
        return Err(refused(format!(
            "is listed with {} bytes, more than a worker file of this build holds ({WORKER_FILE_MAX_BYTES})",
            listed.bytes
        )));
    }
    let mut file = cmc_store::input_file::open_regular_file(path, "checkpoint worker file")
        .map_err(NotRead::Refused)?;
    let (sum, length) = cmc_store::nofollow_files::digest(&mut Stoppable::new(
        (&mut file).take(listed.bytes.saturating_add(1)),
        stop,
    ))
    .map_err(failed)?;
    if length != listed.bytes || format!("{sum:032x}") != listed.xxh3_128 {
        return Err(mismatch());
    }
    file.seek(SeekFrom::Start(0)).map_err(failed)?;
    let mut bytes = Vec::new();
    bytes
        .try_reserve_exact(usize::try_from(length).unwrap_or(usize::MAX))
        .map_err(|error| refused(format!("cannot be held in memory ({error})")))?;
    Stoppable::new(file.take(length), stop)
        .read_to_end(&mut bytes)
        .map_err(failed)?;
    // Changed between the two reads: refused as well.
    if bytes.len() as u64 != length || checksum(&bytes) != listed.xxh3_128 {
        return Err(mismatch());
    }
    Ok(bytes)
}

/// Fails if the worker files loaded do not hold what the counters say: in a
/// run of one process they hold every state found and the whole level; in a
/// cluster, at most that.
fn check_counts(manifest: &Manifest, parts: &[WorkerPart]) -> Result<(), String> {
    let stored: u64 = parts.iter().map(|part| part.shard.len() as u64).sum();
    let level: u64 = parts.iter().map(|part| part.level.len() as u64).sum();
    let counters = &manifest.counters;
    let whole = manifest.of.processes == 1;
    let fits = |held: u64, said: u64| if whole { held == said } else { held <= said };
    if !fits(stored, counters.distinct_states) || !fits(level, counters.level_states) {
        return Err(format!(
            "its worker files hold {stored} states and {level} to expand, but the manifest says {} and {}",
            counters.distinct_states, counters.level_states
        ));
    }
    if counters.states_generated < counters.distinct_states {
        return Err(format!(
            "says {} states were generated but {} distinct ones found",
            counters.states_generated, counters.distinct_states
        ));
    }
    Ok(())
}

/// A worker file: magic, worker index, counters, the shard's entries, the
/// level's states (all integers little-endian).
fn encode_part(part: PartRef<'_>, worker: usize) -> Vec<u8> {
    let mut bytes = WORKER_MAGIC.to_vec();
    for value in [
        worker as u64,
        part.sent_bytes,
        part.remote_bytes,
        part.shard.len() as u64,
    ] {
        bytes.extend_from_slice(&value.to_le_bytes());
    }
    for (fingerprint, link) in part.shard.entries() {
        bytes.extend_from_slice(&fingerprint.to_le_bytes());
        bytes.extend_from_slice(&link.parent.to_le_bytes());
        bytes.extend_from_slice(&link.step.to_le_bytes());
        bytes.extend_from_slice(&link.level.to_le_bytes());
    }
    bytes.extend_from_slice(&(part.level.len() as u64).to_le_bytes());
    for (fingerprint, state) in part.level.iter() {
        bytes.extend_from_slice(&fingerprint.to_le_bytes());
        let length = u32::try_from(state.len()).expect("a state encoding is under 4 GiB");
        bytes.extend_from_slice(&length.to_le_bytes());
        bytes.extend_from_slice(state);
    }
    bytes
}

/// Reads a worker file written by [`encode_part`] for worker `worker`.
fn decode_part(bytes: &[u8], worker: usize) -> Result<WorkerPart, String> {
    let mut reader = Reader { rest: bytes };
    if reader.take(8)? != WORKER_MAGIC {
        return Err("is not a timely checkpoint worker file".into());
    }
    if reader.u64()? != worker as u64 {
        return Err(format!("is not worker {worker}'s file"));
    }
    let mut part = WorkerPart {
        sent_bytes: reader.u64()?,
        remote_bytes: reader.u64()?,
        ..WorkerPart::default()
    };
    let entries = reader.u64()?;
    if entries > (reader.rest.len() / ENTRY_BYTES) as u64 {
        return Err("lists more states than it holds".into());
    }
    for _ in 0..entries {
        let fingerprint = reader.u128()?;
        let link = Link {
            parent: reader.u128()?,
            step: reader.u32()?,
            level: reader.u32()?,
        };
        if fingerprint == 0 || !part.shard.admit(fingerprint, link) {
            return Err("holds a state twice, or a zero fingerprint".into());
        }
    }
    let states = reader.u64()?;
    for _ in 0..states {
        let fingerprint = reader.u128()?;
        let length = reader.u32()? as usize;
        part.level.push(fingerprint, reader.take(length)?);
    }
    if !reader.rest.is_empty() {
        return Err("has bytes after its last state".into());
    }
    Ok(part)
}

/// Reads a worker file front to back; running short is an error.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, count: usize) -> Result<&'a [u8], String> {
        if self.rest.len() < count {
            return Err("ends too early".into());
        }
        let (taken, rest) = self.rest.split_at(count);
        self.rest = rest;
        Ok(taken)
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }

    fn u128(&mut self) -> Result<u128, String> {
        Ok(u128::from_le_bytes(
            self.take(16)?.try_into().expect("16 bytes"),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cmc_store::stop::NEVER;

    /// Process 1 of `processes` (one worker each) of the run `identity`.
    fn place(identity: &str, processes: usize) -> CheckpointOf {
        CheckpointOf {
            identity: identity.into(),
            build: "build".into(),
            model: "m".into(),
            params: vec![("RM".to_string(), "3".to_string())],
            process: 1,
            processes,
            threads: 1,
        }
    }

    fn checkpoints(dir: &Path, identity: &str, resume: bool) -> Checkpoints {
        Checkpoints::new(dir, place(identity, 2), resume, false).unwrap()
    }

    fn part() -> WorkerPart {
        let mut part = WorkerPart {
            sent_bytes: 7,
            remote_bytes: 5,
            ..WorkerPart::default()
        };
        let link = Link {
            parent: 3,
            step: 1,
            level: 2,
        };
        assert!(part.shard.admit(11 << 64 | 9, link));
        part.level.push(11 << 64 | 9, b"state");
        part
    }

    fn save(checkpoints: &Checkpoints, part: &WorkerPart, depth: u64) {
        let borrowed = PartRef {
            shard: &part.shard,
            level: &part.level,
            sent_bytes: part.sent_bytes,
            remote_bytes: part.remote_bytes,
        };
        checkpoints.save_part(depth, 1, borrowed).unwrap();
    }

    /// What a load that was not stopped read.
    fn loaded_parts(loaded: Loaded) -> (RunCounters, Vec<WorkerPart>) {
        match loaded {
            Loaded::Parts(counters, parts) => (counters, parts),
            Loaded::Stopped => panic!("a load that is never stopped stopped"),
        }
    }

    fn counters() -> RunCounters {
        RunCounters {
            depth: 2,
            distinct_states: 4,
            states_generated: 6,
            level_states: 1,
            witnesses: vec!["W".into()],
        }
    }

    #[test]
    fn a_saved_checkpoint_loads_back_and_refuses_another_run_or_place() {
        let dir = tempfile::tempdir().unwrap();
        let saving = checkpoints(dir.path(), "run", false);
        save(&saving, &part(), 2);
        saving.commit(&counters()).unwrap();
        // No two runs use one process's checkpoint at once.
        let locked = Checkpoints::new(dir.path(), place("run", 2), true, false);
        assert!(locked.err().unwrap().to_string().contains("is locked"));
        drop(saving);
        let (loaded, parts) = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap();
        assert_eq!(loaded, counters());
        assert_eq!(parts.len(), 1);
        assert_eq!(parts[0].sent_bytes, 7);
        assert_eq!(
            parts[0].shard.entries().collect::<Vec<_>>(),
            part().shard.entries().collect::<Vec<_>>()
        );
        assert_eq!(
            parts[0].level.iter().collect::<Vec<_>>(),
            vec![(11 << 64 | 9, &b"state"[..])]
        );
        assert_eq!(
            checkpoint_model(dir.path(), 1).unwrap(),
            ("m".to_string(), vec![("RM".to_string(), "3".to_string())])
        );
        let error = checkpoints(dir.path(), "other", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap_err();
        assert!(error.to_string().contains("is of `run`"), "{error}");
        let other_place = Checkpoints::new(dir.path(), place("run", 3), true, false).unwrap();
        let error = other_place.load(NEVER).map(loaded_parts).unwrap_err();
        assert!(error.to_string().contains("process 1 of 2"), "{error}");
        drop(other_place);
        // A new run does not silently replace it.
        let refused = Checkpoints::new(dir.path(), place("run", 2), false, false);
        let error = refused.err().unwrap().to_string();
        assert!(error.contains("already holds a checkpoint"), "{error}");
    }

    #[test]
    fn a_kill_between_the_renames_leaves_the_previous_checkpoint_in_use() {
        let dir = tempfile::tempdir().unwrap();
        let saving = checkpoints(dir.path(), "run", false);
        save(&saving, &part(), 2);
        saving.commit(&counters()).unwrap();
        drop(saving);
        // As if killed after `current` was renamed to `previous`.
        let current = dir.path().join("process-1");
        fs::rename(&current, current.with_extension("old")).unwrap();
        let (loaded, _) = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap();
        assert_eq!(loaded, counters());
        // The next checkpoint replaces it.
        let saving = checkpoints(dir.path(), "run", true);
        save(&saving, &part(), 3);
        let mut deeper = counters();
        deeper.depth = 3;
        saving.commit(&deeper).unwrap();
        drop(saving);
        assert!(!current.with_extension("old").exists());
        let (loaded, _) = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap();
        assert_eq!(loaded.depth, 3);
    }

    /// A saved checkpoint of process 1 of 2 in `dir`, as [`save`] and
    /// `commit` leave it.
    fn saved(dir: &Path) {
        let saving = checkpoints(dir, "run", false);
        save(&saving, &part(), 2);
        saving.commit(&counters()).unwrap();
    }

    #[test]
    fn an_edited_manifest_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        saved(dir.path());
        let path = dir.path().join("process-1").join(MANIFEST);
        let text = fs::read_to_string(&path).unwrap();
        for (from, to) in [
            ("\"states_generated\": 6", "\"states_generated\": 7"),
            ("\"3\"", "\"4\""),
        ] {
            assert!(text.contains(from), "{text}");
            fs::write(&path, text.replace(from, to)).unwrap();
            let error = checkpoints(dir.path(), "run", true)
                .load(NEVER)
                .map(loaded_parts)
                .unwrap_err();
            assert!(error.to_string().contains("checksum line"), "{error}");
        }
    }

    #[test]
    fn a_checkpoint_of_another_executable_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        saved(dir.path());
        let mut other = place("run", 2);
        other.build = "another build".into();
        let error = Checkpoints::new(dir.path(), other, true, false)
            .unwrap()
            .load(NEVER)
            .map(loaded_parts)
            .unwrap_err();
        assert!(error.to_string().contains("another build"), "{error}");
    }

    #[test]
    fn resealed_counters_that_disagree_with_the_worker_files_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let saving = Checkpoints::new(dir.path(), place("run", 1), false, false).unwrap();
        save(&saving, &part(), 2);
        let mut wrong = counters();
        wrong.distinct_states = 5;
        saving.commit(&wrong).unwrap();
        drop(saving);
        let loading = Checkpoints::new(dir.path(), place("run", 1), true, false).unwrap();
        let error = loading.load(NEVER).map(loaded_parts).unwrap_err();
        assert!(error.to_string().contains("hold 1 states"), "{error}");
    }

    #[test]
    fn a_worker_file_that_is_a_device_is_refused_unread() {
        let dir = tempfile::tempdir().unwrap();
        saved(dir.path());
        let path = dir.path().join("process-1").join("worker-1.bin");
        fs::remove_file(&path).unwrap();
        std::os::unix::fs::symlink("/dev/zero", &path).unwrap();
        let error = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap_err();
        assert!(error.to_string().contains("is a device"), "{error}");
    }

    #[test]
    fn a_damaged_worker_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let saving = checkpoints(dir.path(), "run", false);
        save(&saving, &part(), 2);
        saving.commit(&counters()).unwrap();
        drop(saving);
        let path = dir.path().join("process-1").join("worker-1.bin");
        let mut bytes = fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        fs::write(&path, bytes).unwrap();
        let error = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap_err();
        assert!(error.to_string().contains("checksum"), "{error}");
    }

    #[test]
    fn a_stopped_load_reads_nothing_more_and_leaves_the_checkpoint_to_resume() {
        let dir = tempfile::tempdir().unwrap();
        saved(dir.path());
        let stop = || true;
        let loading = checkpoints(dir.path(), "run", true);
        assert!(matches!(loading.load(&stop), Ok(Loaded::Stopped)));
        drop(loading);
        let (loaded, _) = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap();
        assert_eq!(loaded, counters());
    }

    #[test]
    fn a_worker_file_longer_than_listed_is_refused_without_reading_it_whole() {
        let dir = tempfile::tempdir().unwrap();
        saved(dir.path());
        let path = dir.path().join("process-1").join("worker-1.bin");
        let file = fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(file.metadata().unwrap().len() + (1 << 40))
            .unwrap();
        let error = checkpoints(dir.path(), "run", true)
            .load(NEVER)
            .map(loaded_parts)
            .unwrap_err();
        assert!(error.to_string().contains("checksum"), "{error}");
    }
}
