//! Checkpoints of a breadth-first search, and the checks that keep a resumed
//! run from reporting figures that no real run would.
//!
//! A checkpoint directory `DIR` holds:
//! - `lock`: locked (`flock`, exclusive) by the run that uses `DIR`, for its
//!   whole life; a second run on `DIR` is refused;
//! - `trace.log`: the live trace log of parent links;
//! - `checkpoint/`: the last complete checkpoint: the fingerprints
//!   (`table.bin`), the states of the current level not yet expanded
//!   (`level.bin`), the next level found so far (`next.bin`) and the
//!   `manifest`, written last.
//!
//! The manifest records the checkpoint format, the run's identity (cmc
//! version, a checksum of the executable, the model's name and parameters,
//! the settings that change what is explored), the counters, the
//! XXH3-128 checksum and length of every other file of the checkpoint, and a
//! checksum of the trace log's records up to the checkpoint; its last line is
//! the checksum of all the lines before it. A resume checks all of it and
//! refuses, naming the file, anything that does not match: a changed byte,
//! an edited counter, a file from another checkpoint, another model,
//! parameters or build.
//!
//! A new checkpoint is written to `checkpoint.new/` and swapped in by
//! renames, so a kill at any moment leaves a complete one behind (the
//! previous one, `checkpoint.old/`, is used only if the kill fell between the
//! two renames, when `checkpoint/` is missing). A new run takes a first
//! checkpoint as soon as its initial states are stored. Records that the
//! trace log got after the checkpoint are overwritten on resume. No symbolic
//! link inside `DIR` is followed: one where a file or directory of the
//! checkpoint belongs is refused.

use std::fs;
use std::io::{self, Read};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use cmc_model::Model;
use cmc_store::stop::{Stoppable, NEVER};
use cmc_store::{
    nofollow_files, DiskFingerprintSet, FingerprintTable, Frontier, LevelBuilder, TraceLog,
    VisitedSet,
};
use serde::{Deserialize, Serialize};

use crate::sealed::{executable_checksum, seal, unseal};
use crate::SearchOptions;

/// Version of the checkpoint format this build reads and writes.
const CHECKPOINT_FORMAT: u32 = 2;
/// The manifest's name inside a checkpoint.
const MANIFEST: &str = "manifest";
/// The data files of a checkpoint, each checksummed in the manifest.
const TABLE: &str = "table.bin";
const LEVEL: &str = "level.bin";
const NEXT: &str = "next.bin";
const DATA_FILES: [&str; 3] = [TABLE, LEVEL, NEXT];
/// The last complete checkpoint, the one before it while a new one is
/// swapped in, and the one being written.
const CURRENT: &str = "checkpoint";
const PREVIOUS: &str = "checkpoint.old";
const INCOMING: &str = "checkpoint.new";
/// Largest manifest read (it holds counters, names and checksums only).
const MANIFEST_MAX_BYTES: u64 = 16 << 20;

/// What a checkpoint is of: it resumes only under the same identity.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct RunIdentity {
    /// The version of cmc that wrote it.
    pub cmc_version: String,
    /// XXH3-128 of the executable that wrote it (a rebuilt model is another model).
    pub build: String,
    /// The model's name and parameters.
    pub model: String,
    pub params: Vec<(String, String)>,
    /// Settings that change what is explored, fixed for the whole run.
    pub max_depth: Option<u64>,
    pub check_deadlock: bool,
    /// Whether the visited set keeps fingerprints on disk.
    pub fingerprints_on_disk: bool,
}

impl RunIdentity {
    /// The identity of a search of `model` with `options` by this executable.
    pub fn of<M: Model>(model: &M, options: &SearchOptions) -> Result<RunIdentity, String> {
        Ok(RunIdentity {
            cmc_version: env!("CARGO_PKG_VERSION").to_string(),
            build: executable_checksum()?,
            model: model.name(),
            params: cmc_model::param_pairs(model.params()),
            max_depth: options.max_depth,
            check_deadlock: options.check_deadlock,
            fingerprints_on_disk: options.fingerprints_on_disk,
        })
    }

    /// Why a checkpoint of identity `saved` cannot be resumed as `self`, if it cannot.
    fn mismatch(&self, saved: &RunIdentity) -> Option<String> {
        if saved.model != self.model || saved.params != self.params {
            return Some(format!(
                "it is of model {} {:?}, not of {} {:?}",
                saved.model, saved.params, self.model, self.params
            ));
        }
        if saved.cmc_version != self.cmc_version || saved.build != self.build {
            return Some(format!(
                "it was written by another build of cmc or of the model (cmc {}, executable checksum {}; this is cmc {}, {}); resume with the executable that wrote it",
                saved.cmc_version, saved.build, self.cmc_version, self.build
            ));
        }
        if saved.max_depth != self.max_depth || saved.check_deadlock != self.check_deadlock {
            return Some(format!(
                "it was made with max depth {:?} and deadlock checking {}; resume with the same settings",
                saved.max_depth,
                if saved.check_deadlock { "on" } else { "off" }
            ));
        }
        if saved.fingerprints_on_disk != self.fingerprints_on_disk {
            return Some(format!(
                "it was made with fingerprints {}; resume with the same setting (--disk-fingerprints)",
                if saved.fingerprints_on_disk { "on disk" } else { "in memory" }
            ));
        }
        None
    }
}

/// The counters of a checkpointed search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct Counters {
    /// Depth of the level being expanded (TLC's convention).
    pub depth: u64,
    pub states_generated: u64,
    pub distinct_states: u64,
    pub frontier_spilled_bytes: u64,
    /// Wall time spent before this checkpoint, over all previous runs.
    pub wall_seconds: f64,
    /// Where the trace log's writers were ([`TraceLog::next_block`]).
    pub trace_next_block: u64,
    pub table_capacity: usize,
    /// `sometimes` witnesses reached so far.
    pub witnesses_reached: Vec<String>,
}

/// A file of a checkpoint and what it must hold.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct FileChecksum {
    name: String,
    bytes: u64,
    xxh3_128: String,
}

/// Everything a checkpoint says about itself (see the module's documentation).
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Manifest {
    format: u32,
    identity: RunIdentity,
    counters: Counters,
    files: Vec<FileChecksum>,
    /// [`TraceLog::digest_blocks`] of blocks `0..counters.trace_next_block`.
    trace_log_xxh3_128: String,
}

/// The latest complete checkpoint in `dir` and its manifest, checked against its
/// seal and format.
fn read_manifest(dir: &Path) -> Result<(PathBuf, Manifest), String> {
    let in_dir = |problem: io::Error| format!("checkpoint directory {}: {problem}", dir.display());
    let mut found = None;
    for candidate in [dir.join(CURRENT), dir.join(PREVIOUS)] {
        if nofollow_files::is_dir(&candidate).map_err(in_dir)? {
            found = Some(candidate);
            break;
        }
    }
    let found = found.ok_or_else(|| {
        format!(
            "checkpoint directory {} holds no complete checkpoint (no checkpoint/{MANIFEST}); a run killed before its first checkpoint has nothing to resume",
            dir.display()
        )
    })?;
    let path = found.join(MANIFEST);
    let mut text = String::new();
    nofollow_files::open(&path)
        .and_then(|file| file.take(MANIFEST_MAX_BYTES).read_to_string(&mut text))
        .map_err(|problem| at(&path, problem))?;
    let body = unseal(&text).ok_or_else(|| {
        at(
            &path,
            "its contents do not match its checksum line (the file was changed or is damaged); the checkpoint cannot be resumed",
        )
    })?;
    let manifest: Manifest = serde_json::from_str(body).map_err(|problem| {
        let format = serde_json::from_str::<serde_json::Value>(body)
            .ok()
            .and_then(|value| value["format"].as_u64());
        match format {
            Some(format) if format != u64::from(CHECKPOINT_FORMAT) => at(
                &path,
                format!("checkpoint format {format} is not supported (this cmc reads format {CHECKPOINT_FORMAT})"),
            ),
            _ => at(&path, problem),
        }
    })?;
    if manifest.format != CHECKPOINT_FORMAT {
        return Err(at(
            &path,
            format!(
                "checkpoint format {} is not supported (this cmc reads format {CHECKPOINT_FORMAT})",
                manifest.format
            ),
        ));
    }
    Ok((found, manifest))
}

/// Fails unless every counter of a checkpoint is one a run could have
/// written, before any is used: the table's capacity fits this machine's
/// memory (a table on load grows to hold its file), the wall time is a number of
/// seconds, and the counts agree with each other. (The trace log's position
/// is checked against the log's length when it is reopened; the states
/// counted, against the table's file once loaded.)
fn check_counters(counters: &Counters) -> Result<(), String> {
    let slots_max = physical_memory_bytes() / cmc_store::FingerprintTable::bytes_for(1) as u64;
    let capacity = counters.table_capacity as u64;
    if capacity > slots_max {
        return Err(format!(
            "its table capacity {capacity} is more than the {slots_max} slots this machine's memory holds; the checkpoint cannot be resumed"
        ));
    }
    if Duration::try_from_secs_f64(counters.wall_seconds).is_err() {
        return Err(format!(
            "its wall time {} is not a number of seconds; the checkpoint cannot be resumed",
            counters.wall_seconds
        ));
    }
    if counters.states_generated < counters.distinct_states
        || counters.depth > counters.distinct_states
    {
        return Err(format!(
            "its counts do not fit together (depth {}, {} states generated, {} distinct); the checkpoint cannot be resumed",
            counters.depth, counters.states_generated, counters.distinct_states
        ));
    }
    Ok(())
}

/// Bytes of this machine's memory.
fn physical_memory_bytes() -> u64 {
    // SAFETY: sysconf has no preconditions.
    let (pages, page) = unsafe {
        (
            libc::sysconf(libc::_SC_PHYS_PAGES),
            libc::sysconf(libc::_SC_PAGESIZE),
        )
    };
    u64::try_from(pages)
        .unwrap_or(0)
        .saturating_mul(u64::try_from(page).unwrap_or(0))
}

/// What a checkpoint restores.
pub(crate) struct Restored {
    pub counters: Counters,
    pub table: VisitedSet,
    pub level: Frontier,
    pub next: LevelBuilder,
}

/// A checkpoint directory, locked by this run for as long as it is held.
pub(crate) struct CheckpointDir {
    dir: PathBuf,
    /// Holds the exclusive lock on `DIR/lock`.
    _lock: fs::File,
    identity: RunIdentity,
    /// Trace log blocks already checksummed, and their checksum.
    trace_checksum: Mutex<(u64, u128)>,
}

/// `problem` with the file it is about.
fn at(path: &Path, problem: impl std::fmt::Display) -> String {
    format!("checkpoint file {}: {problem}", path.display())
}

/// Why a checkpoint was not resumed.
#[derive(Debug)]
pub enum NotResumed {
    /// It cannot be resumed: what is wrong with it (or with its directory).
    Refused(String),
    /// The search's interrupt flag ended the load; the checkpoint is as it was.
    Stopped,
}

impl From<String> for NotResumed {
    fn from(problem: String) -> NotResumed {
        NotResumed::Refused(problem)
    }
}

impl CheckpointDir {
    /// Takes `dir` (created if missing) for a new run of `model`: refused if
    /// another run holds it, or if it holds a checkpoint and `overwrite` is
    /// not set (with `overwrite`, that checkpoint is deleted).
    pub fn start<M: Model>(
        dir: &Path,
        model: &M,
        options: &SearchOptions,
        overwrite: bool,
    ) -> Result<CheckpointDir, String> {
        let taken = CheckpointDir::lock(dir, RunIdentity::of(model, options)?)?;
        let held = [taken.current(), taken.previous()]
            .into_iter()
            .map(|path| nofollow_files::is_dir(&path).map(|found| found.then_some(path)))
            .collect::<io::Result<Vec<_>>>()
            .map_err(|problem| format!("checkpoint directory {}: {problem}", dir.display()))?;
        if let Some(found) = held.into_iter().flatten().next() {
            if !overwrite {
                return Err(format!(
                    "checkpoint directory {} already holds a checkpoint ({}) of another run; resume it with --resume {}, or start anew in it with --checkpoint-overwrite",
                    dir.display(),
                    found.display(),
                    dir.display()
                ));
            }
        }
        for path in [taken.current(), taken.previous(), taken.incoming()] {
            taken
                .remove_dir(&path)
                .map_err(|problem| at(&path, problem))?;
        }
        Ok(taken)
    }

    /// Takes `dir` to resume the checkpoint in it as a search of `model`
    /// with `options`, after checking everything the manifest says. The
    /// search's interrupt flag ends the load at once
    /// ([`NotResumed::Stopped`]): reading a large checkpoint takes time.
    pub fn resume<M: Model>(
        dir: &Path,
        model: &M,
        options: &SearchOptions,
    ) -> Result<(CheckpointDir, Restored, TraceLog), NotResumed> {
        let stop = || crate::options::stop_asked(options);
        // A failure to read `path`: refused, unless the stop ended the read.
        let failed = |path: &Path, problem: io::Error| {
            if cmc_store::stop::is_stopped(&problem) {
                NotResumed::Stopped
            } else {
                NotResumed::Refused(at(path, problem))
            }
        };
        let mut taken = CheckpointDir::lock(dir, RunIdentity::of(model, options)?)?;
        let (found, manifest) = read_manifest(dir)?;
        let manifest_path = found.join(MANIFEST);
        if let Some(problem) = taken.identity.mismatch(&manifest.identity) {
            return Err(NotResumed::Refused(format!(
                "checkpoint {} cannot be resumed: {problem}",
                manifest_path.display()
            )));
        }
        let names: Vec<&str> = manifest.files.iter().map(|f| f.name.as_str()).collect();
        if names != DATA_FILES {
            return Err(at(&manifest_path, "does not list the checkpoint's files").into());
        }
        for file in &manifest.files {
            let path = found.join(&file.name);
            let (checksum, bytes) = nofollow_files::open(&path)
                .and_then(|opened| nofollow_files::digest(&mut Stoppable::new(opened, &stop)))
                .map_err(|problem| failed(&path, problem))?;
            if bytes != file.bytes || format!("{checksum:032x}") != file.xxh3_128 {
                return Err(at(
                    &path,
                    format!(
                        "its contents do not match the checksum in {} (the file was changed or replaced); the checkpoint cannot be resumed",
                        manifest_path.display()
                    ),
                )
                .into());
            }
        }
        let counters = manifest.counters;
        check_counters(&counters).map_err(|problem| at(&manifest_path, problem))?;
        let trace_path = taken.trace_log_path();
        let log = TraceLog::reopen(&trace_path, counters.trace_next_block)
            .map_err(|problem| failed(&trace_path, problem))?;
        let trace_checksum = log
            .digest_blocks(0..counters.trace_next_block, &stop)
            .map_err(|problem| failed(&trace_path, problem))?;
        if format!("{trace_checksum:032x}") != manifest.trace_log_xxh3_128 {
            return Err(at(
                &trace_path,
                format!(
                    "its records do not match the checksum in {} (the file was changed or replaced); the checkpoint cannot be resumed",
                    manifest_path.display()
                ),
            )
            .into());
        }
        taken.trace_checksum = Mutex::new((counters.trace_next_block, trace_checksum));
        let table_path = found.join(TABLE);
        let table = if taken.identity.fingerprints_on_disk {
            DiskFingerprintSet::load(
                &table_path,
                counters.table_capacity,
                &options.spill_dir(),
                &stop,
            )
            .map(VisitedSet::Disk)
        } else {
            FingerprintTable::load(&table_path, counters.table_capacity, &stop)
                .map(VisitedSet::Memory)
        }
        .map_err(|problem| failed(&table_path, problem))?;
        if table.len() != counters.distinct_states {
            return Err(at(
                &table_path,
                format!(
                    "it holds {} states, the manifest says {}",
                    table.len(),
                    counters.distinct_states
                ),
            )
            .into());
        }
        // The level and next level are read from the checkpoint's files as
        // needed; the next checkpoint's swap unlinks them, open files stay.
        let level_path = found.join(LEVEL);
        let level = Frontier::open(&level_path).map_err(|e| at(&level_path, e))?;
        let next_path = found.join(NEXT);
        let next = LevelBuilder::reopen(
            &next_path,
            options.frontier_memory_budget_bytes(),
            &options.spill_dir(),
        )
        .map_err(|e| at(&next_path, e))?;
        let restored = Restored {
            counters,
            table,
            level,
            next,
        };
        Ok((taken, restored, log))
    }

    /// Creates `dir` if needed and takes its lock for a run of `identity`.
    fn lock(dir: &Path, identity: RunIdentity) -> Result<CheckpointDir, String> {
        fs::create_dir_all(dir).map_err(|problem| {
            format!(
                "cannot create checkpoint directory {}: {problem}",
                dir.display()
            )
        })?;
        let lock_path = dir.join("lock");
        let lock = nofollow_files::lock_exclusive(&lock_path)
            .map_err(|e| at(&lock_path, e))?
            .ok_or_else(|| {
                format!(
                    "checkpoint directory {} is in use by another cmc run ({} is locked); wait for it to end or choose another directory",
                    dir.display(),
                    lock_path.display()
                )
            })?;
        Ok(CheckpointDir {
            dir: dir.to_path_buf(),
            _lock: lock,
            identity,
            trace_checksum: Mutex::new((0, 0)),
        })
    }

    /// The directory.
    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Where the trace log of parent links lives.
    pub fn trace_log_path(&self) -> PathBuf {
        self.dir.join("trace.log")
    }

    fn current(&self) -> PathBuf {
        self.dir.join(CURRENT)
    }

    fn previous(&self) -> PathBuf {
        self.dir.join(PREVIOUS)
    }

    fn incoming(&self) -> PathBuf {
        self.dir.join(INCOMING)
    }

    /// Removes the checkpoint directory `path` if it is there (a symbolic
    /// link there is refused, not followed or removed).
    fn remove_dir(&self, path: &Path) -> io::Result<()> {
        if nofollow_files::is_dir(path)? {
            fs::remove_dir_all(path)?;
        }
        Ok(())
    }

    /// Saves a checkpoint with `counters` and returns the current level read
    /// back from it (its memory is released). All trace records must have
    /// been flushed, by writers that are gone.
    pub fn save(
        &self,
        counters: &Counters,
        table: &mut VisitedSet,
        level: Frontier,
        next: &LevelBuilder,
        log: &TraceLog,
    ) -> io::Result<Frontier> {
        let incoming = self.incoming();
        self.remove_dir(&incoming)?;
        fs::create_dir(&incoming)?;
        log.sync()?;
        table.save(&incoming.join(TABLE))?;
        let level = level.save(&incoming.join(LEVEL))?;
        next.save(&incoming.join(NEXT))?;
        let files = DATA_FILES
            .iter()
            .map(|name| {
                let (checksum, bytes) = nofollow_files::digest_file(&incoming.join(name))?;
                Ok(FileChecksum {
                    name: name.to_string(),
                    bytes,
                    xxh3_128: format!("{checksum:032x}"),
                })
            })
            .collect::<io::Result<Vec<_>>>()?;
        let mut trace_checksum = self.trace_checksum.lock().expect("not poisoned");
        let (checked_blocks, checksum) = *trace_checksum;
        let blocks = counters.trace_next_block;
        let checksum = checksum.wrapping_add(log.digest_blocks(checked_blocks..blocks, NEVER)?);
        let manifest = Manifest {
            format: CHECKPOINT_FORMAT,
            identity: self.identity.clone(),
            counters: counters.clone(),
            files,
            trace_log_xxh3_128: format!("{checksum:032x}"),
        };
        let body = serde_json::to_string_pretty(&manifest).expect("a manifest serializes");
        let mut out = nofollow_files::create(&incoming.join(MANIFEST))?;
        io::Write::write_all(&mut out, seal(&body).as_bytes())?;
        out.sync_all()?;
        fs::File::open(&incoming)?.sync_all()?;
        // Swap in: current -> previous, incoming -> current, drop previous.
        let (current, previous) = (self.current(), self.previous());
        self.remove_dir(&previous)?;
        if nofollow_files::is_dir(&current)? {
            fs::rename(&current, &previous)?;
        }
        fs::rename(&incoming, &current)?;
        fs::File::open(&self.dir)?.sync_all()?;
        self.remove_dir(&previous)?;
        *trace_checksum = (blocks, checksum);
        Ok(level)
    }

    /// Reads which model a checkpoint is of (from its sealed manifest), for
    /// front ends that build the model before resuming.
    pub fn model_of(dir: &Path) -> Result<(String, Vec<(String, String)>), String> {
        let (_, manifest) = read_manifest(dir)?;
        Ok((manifest.identity.model, manifest.identity.params))
    }
}
