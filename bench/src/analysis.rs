//! What the measurements mean together: whether counts agree, ratios
//! between tools and worker counts, and the floor a check is compared to.

use crate::floor::InsertKind;
use crate::job::{Job, ModelCase, Tool};
use crate::sample::Sample;
use crate::suite::Measured;

/// Distinct states that TLC (calibration) and stateright report for
/// two-phase commit, RM = 3 to 9.
const TWO_PHASE_DISTINCT: [(usize, u64); 7] = [
    (3, 288),
    (4, 1_568),
    (5, 8_832),
    (6, 50_816),
    (7, 296_448),
    (8, 1_745_408),
    (9, 10_340_352),
];

/// Distinct states of stateright's Paxos example with 2 clients (its own
/// test asserts this count).
const PAXOS_TWO_CLIENTS_DISTINCT: u64 = 16_668;

/// The reference count for `model`, when a published one is known.
fn expected_distinct(model: ModelCase) -> Option<u64> {
    match model {
        ModelCase::TwoPhase { rm_count } => TWO_PHASE_DISTINCT
            .iter()
            .find(|&&(rm, _)| rm == rm_count)
            .map(|&(_, distinct)| distinct),
        ModelCase::Paxos { client_count: 2 } => Some(PAXOS_TWO_CLIENTS_DISTINCT),
        ModelCase::Paxos { .. } | ModelCase::World { .. } => None,
    }
}

/// The measurements of one suite run, queried by job.
pub struct Analysis<'a> {
    measured: &'a [Measured],
}

/// The estimated floor of one search: what its states would cost if the
/// checker did nothing but step, fingerprint and insert.
#[derive(Debug, Clone, Copy)]
pub struct Floor {
    /// The floor's wall time, in seconds.
    pub wall_seconds: f64,
    /// The checker's wall time over the floor's.
    pub checker_over_floor: f64,
}

impl<'a> Analysis<'a> {
    /// An analysis of `measured`.
    pub fn new(measured: &'a [Measured]) -> Analysis<'a> {
        Analysis { measured }
    }

    /// The sample of `job`, if it ran.
    pub fn sample(&self, job: Job) -> Option<&'a Sample> {
        self.measured
            .iter()
            .find(|m| m.job == job)
            .and_then(|m| m.result.as_ref().ok())
    }

    /// The check of `model` by `tool` on `workers` threads.
    pub fn check(&self, model: ModelCase, tool: Tool, workers: usize) -> Option<&'a Sample> {
        self.sample(Job::Check {
            model,
            tool,
            workers,
        })
    }

    /// Why a check row (of `model` by `tool`) fails, or `None` if it
    /// passes: its verdict is not `pass`, it disagrees with the published
    /// count, with the specialised BFS's counts, or with the count most of
    /// the other rows of the same model report.
    pub fn failure(&self, model: ModelCase, tool: Tool, sample: &Sample) -> Option<String> {
        if sample.verdict != "pass" {
            return Some(format!("verdict {}", sample.verdict));
        }
        if let Some(expected) = expected_distinct(model) {
            if sample.distinct != expected {
                return Some(format!("expected {expected}"));
            }
        }
        if let Some(why) = self.disagrees_with_specialised(model, tool, sample) {
            return Some(why);
        }
        let others: Vec<u64> = self
            .measured
            .iter()
            .filter(|m| matches!(m.job, Job::Check { model: other, .. } if other == model))
            .filter_map(|m| m.result.as_ref().ok())
            .map(|other| other.distinct)
            .collect();
        let agreeing = others.iter().filter(|&&d| d == sample.distinct).count();
        (2 * agreeing <= others.len()).then(|| "disagrees with the other tools".to_string())
    }

    /// cmc's distinct states per second over stateright's (2 threads).
    pub fn versus_stateright(&self, model: ModelCase, sample: &Sample) -> Option<f64> {
        let anchor = self.check(model, Tool::Stateright, 2)?;
        Some(sample.distinct_per_second() / anchor.distinct_per_second())
    }

    /// Why `sample`, a check of `model` by `tool`, does not have the
    /// specialised BFS's counts (distinct, generated, depth), when both ran:
    /// cmc and the specialised BFS count in the same conventions (TLC's), so
    /// any difference is a bug in one of them. Stateright counts generated
    /// states differently and is not compared.
    fn disagrees_with_specialised(
        &self,
        model: ModelCase,
        tool: Tool,
        sample: &Sample,
    ) -> Option<String> {
        if tool != Tool::Cmc {
            return None;
        }
        let specialised = self.check(model, Tool::Specialised, 1)?;
        let counts = |s: &Sample| (s.distinct, s.generated, s.depth);
        (counts(sample) != counts(specialised)).then(|| {
            format!(
                "distinct, generated, depth {:?}, the specialised BFS's {:?}",
                counts(sample),
                counts(specialised)
            )
        })
    }

    /// cmc's wall time over the specialised single-thread BFS's on `model`.
    pub fn versus_specialised(&self, model: ModelCase, sample: &Sample) -> Option<f64> {
        let specialised = self.check(model, Tool::Specialised, 1)?;
        Some(sample.wall.as_secs_f64() / specialised.wall.as_secs_f64().max(1e-9))
    }

    /// The `cmc` command's distinct states per second over the library
    /// path's (cmc's BFS in process), with as many workers.
    pub fn versus_library(&self, model: ModelCase, workers: usize, sample: &Sample) -> Option<f64> {
        let library = self.check(model, Tool::Cmc, workers)?;
        Some(sample.distinct_per_second() / library.distinct_per_second())
    }

    /// The speed-up of cmc with 2 workers over 1 (wall time ratio).
    pub fn two_workers_speedup(&self, model: ModelCase) -> Option<f64> {
        let one = self.check(model, Tool::Cmc, 1)?;
        let two = self.check(model, Tool::Cmc, 2)?;
        Some(one.wall.as_secs_f64() / two.wall.as_secs_f64())
    }

    /// Nanoseconds per insert of `kind` with `threads` threads (throughput).
    pub fn insert_nanos(&self, kind: InsertKind, threads: usize) -> Option<f64> {
        self.measured.iter().find_map(|m| match m.job {
            Job::Insert {
                threads: t,
                kind: k,
                ..
            } if t == threads && k == kind => {
                m.result.as_ref().ok().map(Sample::nanos_per_generated)
            }
            _ => None,
        })
    }

    /// Nanoseconds of bare step per generated state of two-phase commit.
    pub fn step_nanos(&self) -> Option<f64> {
        self.measured.iter().find_map(|m| match m.job {
            Job::Step { .. } => m.result.as_ref().ok().map(Sample::nanos_per_generated),
            _ => None,
        })
    }

    /// The floor of cmc's check of `model` with `workers` workers: every
    /// generated state stepped (the step spread perfectly over the workers),
    /// every distinct one inserted new, every other one found present, at
    /// the insert rates measured with that many threads.
    pub fn floor(&self, model: ModelCase, workers: usize) -> Option<Floor> {
        let checked = self.check(model, Tool::Cmc, workers)?;
        let step = self.step_nanos()? / workers as f64;
        let new = self.insert_nanos(InsertKind::New, workers)?;
        let present = self.insert_nanos(InsertKind::Present, workers)?;
        let generated = checked.generated as f64;
        let distinct = checked.distinct as f64;
        let nanos = generated * step + distinct * new + (generated - distinct) * present;
        let wall_seconds = nanos / 1e9;
        Some(Floor {
            wall_seconds,
            checker_over_floor: checked.wall.as_secs_f64() / wall_seconds,
        })
    }
}
