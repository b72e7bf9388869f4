//! Checkpoints of a breadth-first search, so that a run killed at any point
//! resumes with exactly the same counts and verdict.
//!
//! A checkpoint directory holds the live trace log (`trace.log`) and the last
//! complete checkpoint in `checkpoint/`: the fingerprints (`table.bin`), the
//! states of the current level not yet expanded (`level.bin`), the next
//! level found so far (`next.bin`) and the counters (`meta.json`, written
//! last). A new checkpoint is written to `checkpoint.new/` and swapped in by
//! renames, so a kill at any moment leaves a complete one behind (the
//! previous one, `checkpoint.old/`, is used if the kill fell between the two
//! renames). Records that the trace log got after the checkpoint are simply
//! overwritten on resume.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cmc_model::Model;
use cmc_store::{
    DiskFingerprintSet, FingerprintTable, Frontier, LevelBuilder, TraceLog, VisitedSet,
};
use serde::{Deserialize, Serialize};

use crate::SearchOptions;

/// Version of the checkpoint format this build reads and writes.
const CHECKPOINT_FORMAT: u32 = 1;

/// The counters and settings of a checkpointed search.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub(crate) struct CheckpointMeta {
    /// [`CHECKPOINT_FORMAT`].
    pub format: u32,
    /// The model's name and parameters: a checkpoint resumes only that instance.
    pub model: String,
    pub params: Vec<(String, String)>,
    /// Settings that change what is explored, fixed for the whole run.
    pub max_depth: Option<u64>,
    pub check_deadlock: bool,
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
    /// Whether the visited set kept fingerprints on disk.
    pub fingerprints_on_disk: bool,
    /// `sometimes` witnesses reached so far.
    pub witnesses_reached: Vec<String>,
}

/// What a checkpoint restores.
pub(crate) struct Restored {
    pub meta: CheckpointMeta,
    pub table: VisitedSet,
    pub level: Frontier,
    pub next: LevelBuilder,
}

/// A checkpoint directory.
pub(crate) struct CheckpointDir {
    dir: PathBuf,
}

impl CheckpointDir {
    /// The checkpoint directory `dir` (created if missing).
    pub fn new(dir: &Path) -> io::Result<CheckpointDir> {
        fs::create_dir_all(dir)?;
        Ok(CheckpointDir {
            dir: dir.to_path_buf(),
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
        self.dir.join("checkpoint")
    }

    fn previous(&self) -> PathBuf {
        self.dir.join("checkpoint.old")
    }

    fn incoming(&self) -> PathBuf {
        self.dir.join("checkpoint.new")
    }

    /// Saves a checkpoint and returns the current level read back from it
    /// (its memory is released). All trace records must have been flushed.
    pub fn save(
        &self,
        meta: &CheckpointMeta,
        table: &mut VisitedSet,
        level: Frontier,
        next: &LevelBuilder,
        log: &TraceLog,
    ) -> io::Result<Frontier> {
        let incoming = self.incoming();
        if incoming.exists() {
            fs::remove_dir_all(&incoming)?;
        }
        fs::create_dir(&incoming)?;
        log.sync()?;
        table.save(&incoming.join("table.bin"))?;
        let level = level.save(&incoming.join("level.bin"))?;
        next.save(&incoming.join("next.bin"))?;
        let meta_text = serde_json::to_string_pretty(meta).expect("checkpoint metadata serializes");
        let meta_file = incoming.join("meta.json");
        fs::write(&meta_file, meta_text)?;
        fs::File::open(&meta_file)?.sync_all()?;
        // Swap in: current -> previous, incoming -> current, drop previous.
        let (current, previous) = (self.current(), self.previous());
        if previous.exists() {
            fs::remove_dir_all(&previous)?;
        }
        if current.exists() {
            fs::rename(&current, &previous)?;
        }
        fs::rename(&incoming, &current)?;
        fs::File::open(&self.dir)?.sync_all()?;
        if previous.exists() {
            fs::remove_dir_all(&previous)?;
        }
        Ok(level)
    }

    /// Reads the metadata of the latest complete checkpoint.
    pub fn meta(&self) -> io::Result<(PathBuf, CheckpointMeta)> {
        let found = [self.current(), self.previous()]
            .into_iter()
            .find(|dir| dir.join("meta.json").exists())
            .ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::NotFound,
                    format!(
                        "{} holds no complete checkpoint (no checkpoint/meta.json)",
                        self.dir.display()
                    ),
                )
            })?;
        let text = fs::read_to_string(found.join("meta.json"))?;
        let meta: CheckpointMeta = serde_json::from_str(&text).map_err(|problem| {
            io::Error::new(
                io::ErrorKind::InvalidData,
                format!("{}: {problem}", found.join("meta.json").display()),
            )
        })?;
        if meta.format != CHECKPOINT_FORMAT {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "checkpoint format {} is not supported (this cmc reads format {CHECKPOINT_FORMAT})",
                    meta.format
                ),
            ));
        }
        Ok((found, meta))
    }

    /// Restores the latest complete checkpoint of `model`, with the frontier
    /// budget of `options`.
    pub fn restore<M: Model>(
        &self,
        model: &M,
        options: &SearchOptions,
    ) -> Result<(Restored, TraceLog), String> {
        let in_dir = |problem: io::Error| format!("checkpoint {}: {problem}", self.dir.display());
        let (found, meta) = self.meta().map_err(in_dir)?;
        let params: Vec<(String, String)> = model
            .params()
            .into_iter()
            .map(|p| (p.name, p.value))
            .collect();
        if meta.model != model.name() || meta.params != params {
            return Err(format!(
                "checkpoint {} is of model {} {:?}, not of {} {:?}",
                self.dir.display(),
                meta.model,
                meta.params,
                model.name(),
                params
            ));
        }
        let saved = found.join("table.bin");
        let table = if meta.fingerprints_on_disk {
            VisitedSet::Disk(
                DiskFingerprintSet::load(&saved, meta.table_capacity, &options.spill_dir())
                    .map_err(in_dir)?,
            )
        } else {
            VisitedSet::Memory(FingerprintTable::load(&saved, meta.table_capacity).map_err(in_dir)?)
        };
        if table.len() != meta.distinct_states {
            return Err(format!(
                "checkpoint {}: the fingerprint file holds {} states, the metadata says {}",
                self.dir.display(),
                table.len(),
                meta.distinct_states
            ));
        }
        // The level and next level are read from the checkpoint's files as
        // needed; the next checkpoint's swap unlinks them, open files stay.
        let level = Frontier::open(&found.join("level.bin")).map_err(in_dir)?;
        let next = LevelBuilder::reopen(
            &found.join("next.bin"),
            options.frontier_memory_budget_bytes(),
            &options.spill_dir(),
        )
        .map_err(in_dir)?;
        let log =
            TraceLog::reopen(&self.trace_log_path(), meta.trace_next_block).map_err(in_dir)?;
        Ok((
            Restored {
                meta,
                table,
                level,
                next,
            },
            log,
        ))
    }

    /// Reads which model a checkpoint is of, for front ends that build the
    /// model before resuming.
    pub fn model_of(dir: &Path) -> Result<(String, Vec<(String, String)>), String> {
        let (_, meta) = CheckpointDir {
            dir: dir.to_path_buf(),
        }
        .meta()
        .map_err(|problem| format!("checkpoint {}: {problem}", dir.display()))?;
        Ok((meta.model, meta.params))
    }
}
