//! Which jobs one benchmark run measures, in which order.

use std::time::Duration;

use crate::floor::InsertKind;
use crate::job::{Job, ModelCase, Tool};
use crate::measure;
use crate::sample::Sample;
use crate::world::{WorldCase, WORLD_CASES};
use crate::world_floor::WorldFloorPart;

/// How much to measure.
#[derive(Debug, Clone)]
pub struct Config {
    /// Runs per job; the fastest is kept.
    pub runs: usize,
    /// Two-phase commit from RM=3 up to this.
    pub rm_max: usize,
    /// Paxos client counts.
    pub paxos_clients: Vec<usize>,
}

impl Config {
    /// The full suite: best of 3, RM=3..9, Paxos with 2 and 3 clients.
    pub fn full() -> Config {
        Config {
            runs: 3,
            rm_max: 9,
            paxos_clients: vec![2, 3],
        }
    }

    /// A smoke test: 1 run, RM=3..7, Paxos with 2 clients.
    pub fn quick() -> Config {
        Config {
            runs: 1,
            rm_max: 7,
            paxos_clients: vec![2],
        }
    }
}

/// A job and what its best run measured (or why it could not run).
#[derive(Debug, Clone)]
pub struct Measured {
    /// The job.
    pub job: Job,
    /// Its best sample.
    pub result: Result<Sample, String>,
}

/// The tool and worker combinations each model is checked with: cmc with
/// 1 and 2 workers, cmc's timely engine with 2 workers in one process,
/// stateright with 2 threads (and two-phase commit also with the
/// specialised BFS, see [`FLOOR_CHECKS`]).
pub const CHECKERS: [(Tool, usize); 4] = [
    (Tool::Cmc, 1),
    (Tool::Cmc, 2),
    (Tool::CmcTimely, 2),
    (Tool::Stateright, 2),
];

fn measure(job: Job, runs: usize) -> Measured {
    eprintln!("cmc-bench: {job} (best of {runs})");
    report(job, measure::best_of(job, runs))
}

fn report(job: Job, result: Result<Sample, String>) -> Measured {
    match &result {
        Ok(sample) => eprintln!(
            "cmc-bench:   {} distinct, {:.3} s, {}",
            sample.distinct,
            sample.wall.as_secs_f64(),
            sample.verdict
        ),
        Err(problem) => eprintln!("cmc-bench:   failed: {problem}"),
    }
    Measured { job, result }
}

/// Runs the whole suite, reporting progress on stderr.
pub fn run(config: &Config) -> Vec<Measured> {
    let models = (3..=config.rm_max)
        .map(|rm_count| ModelCase::TwoPhase { rm_count })
        .chain(
            config
                .paxos_clients
                .iter()
                .map(|&client_count| ModelCase::Paxos { client_count }),
        );
    let mut measured = Vec::new();
    for model in models {
        let specialised =
            matches!(model, ModelCase::TwoPhase { .. }).then_some((Tool::Specialised, 1));
        for (tool, workers) in specialised.into_iter().chain(CHECKERS) {
            let job = Job::Check {
                model,
                tool,
                workers,
            };
            measured.push(measure(job, config.runs));
        }
    }
    // The floor at the largest two-phase instance: as many fingerprints as
    // it has distinct states, and its bare step.
    let largest = Job::Check {
        model: ModelCase::TwoPhase {
            rm_count: config.rm_max,
        },
        tool: Tool::Cmc,
        workers: 1,
    };
    let fingerprints = measured
        .iter()
        .find(|m| m.job == largest)
        .and_then(|m| m.result.as_ref().ok())
        .map_or(1 << 20, |sample| sample.distinct);
    for kind in [InsertKind::New, InsertKind::Present] {
        for threads in [1, 2] {
            let job = Job::Insert {
                fingerprints,
                threads,
                kind,
            };
            measured.push(measure(job, config.runs));
        }
    }
    measured.push(measure(
        Job::Step {
            rm_count: config.rm_max,
        },
        config.runs,
    ));
    measured
}

/// The model engine's reference for the World rows: two-phase
/// commit at this many resource managers.
pub const WORLD_REFERENCE_RM: usize = 8;

/// The World suite: the model engine on two-phase commit
/// RM=8 (1 and 2 workers), each World configuration through the library
/// (1 and 2 workers; 2 only for reqack with C properties) and through the
/// `cmc check --core` command (2 workers), stateright's Paxos example with
/// 3 clients (2 threads), and the World floors; each job run `runs` times,
/// the median kept.
pub fn run_world(runs: usize) -> Vec<Measured> {
    let reference = ModelCase::TwoPhase {
        rm_count: WORLD_REFERENCE_RM,
    };
    let world = |case, tool, workers| Job::Check {
        model: ModelCase::World { case },
        tool,
        workers,
    };
    let engine = [1, 2].map(|workers| Job::Check {
        model: reference,
        tool: Tool::Cmc,
        workers,
    });
    let library = WORLD_CASES.into_iter().flat_map(|case| {
        let one_worker = (case != WorldCase::ReqAckCProperties).then_some(1);
        one_worker
            .into_iter()
            .chain([2])
            .map(move |workers| world(case, Tool::Cmc, workers))
    });
    let command = WORLD_CASES
        .into_iter()
        .map(|case| world(case, Tool::CmcCommand, 2));
    let stateright = Job::Check {
        model: ModelCase::Paxos { client_count: 3 },
        tool: Tool::Stateright,
        workers: 2,
    };
    engine
        .into_iter()
        .chain(library)
        .chain(command)
        .chain([stateright])
        .chain(world_floors())
        .map(|job| {
            eprintln!("cmc-bench: {job} (median of {runs})");
            report(job, measure::median_of(job, runs))
        })
        .collect()
}

/// The World floor jobs ([`crate::world_floor`]): for each configuration
/// but reqack with C properties (whose states are reqack's), the bytes
/// floor on 1 and 2 threads and the step floor on 1.
fn world_floors() -> impl Iterator<Item = Job> {
    WORLD_CASES
        .into_iter()
        .filter(|&case| case != WorldCase::ReqAckCProperties)
        .flat_map(|case| {
            [
                (WorldFloorPart::Bytes, 1),
                (WorldFloorPart::Bytes, 2),
                (WorldFloorPart::Step, 1),
            ]
            .map(|(part, threads)| Job::WorldFloor {
                case,
                part,
                threads,
            })
        })
}

/// The two-phase instances of the floor suite.
pub const FLOOR_RMS: [usize; 2] = [8, 9];

/// The floor suite's checks of each instance: the specialised
/// single-thread BFS and cmc's engine with 2 workers.
pub const FLOOR_CHECKS: [(Tool, usize); 2] = [(Tool::Specialised, 1), (Tool::Cmc, 2)];

/// The floor suite: for two-phase commit at each of [`FLOOR_RMS`], the
/// checks of [`FLOOR_CHECKS`]; each job run `runs` times, the runs of
/// different jobs interleaved (so a change in the machine's load hits
/// both sides of a ratio alike), the median kept. Also returns each job's
/// least CPU time over its runs.
pub fn run_floor(runs: usize) -> (Vec<Measured>, Vec<(Job, Duration)>) {
    let jobs: Vec<Job> = FLOOR_RMS
        .into_iter()
        .flat_map(|rm_count| {
            FLOOR_CHECKS.map(|(tool, workers)| Job::Check {
                model: ModelCase::TwoPhase { rm_count },
                tool,
                workers,
            })
        })
        .collect();
    let mut samples: Vec<Result<Vec<Sample>, String>> = vec![Ok(Vec::new()); jobs.len()];
    let mut least_cpu = vec![Duration::MAX; jobs.len()];
    for round in 1..=runs.max(1) {
        for ((job, runs_so_far), cpu) in jobs.iter().zip(&mut samples).zip(&mut least_cpu) {
            let Ok(taken) = runs_so_far else { continue };
            eprintln!("cmc-bench: {job} (run {round} of {runs})");
            match measure::run_in_child_with_cpu(*job) {
                Ok((sample, used)) => {
                    taken.push(sample);
                    *cpu = (*cpu).min(used);
                }
                Err(problem) => *runs_so_far = Err(problem),
            }
        }
    }
    let cpu = jobs.iter().copied().zip(least_cpu).collect();
    let measured = jobs
        .into_iter()
        .zip(samples)
        .map(|(job, taken)| report(job, taken.and_then(|taken| measure::median(job, taken))))
        .collect();
    (measured, cpu)
}
