//! One unit of measured work, as the parent names it on a child's command
//! line, and how the child carries it out.

use std::fmt;

use crate::floor::{self, InsertKind};
use crate::paxos::Paxos;
use crate::sample::Sample;
use crate::stateright::{PaxosModelCfg, TwoPhaseSys};
use crate::world::WorldCase;
use crate::world_floor::{self, WorldFloorPart};

/// A model family and its parameter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ModelCase {
    /// Two-phase commit with this many resource managers.
    TwoPhase {
        /// `RM`.
        rm_count: usize,
    },
    /// Stateright's single-decree Paxos with this many clients, 3 servers.
    Paxos {
        /// Clients.
        client_count: usize,
    },
    /// A World of cores (cmc only).
    World {
        /// The configuration.
        case: WorldCase,
    },
}

/// A checker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    /// cmc's BFS.
    Cmc,
    /// cmc's BFS through the `cmc check --core` command: the search in a
    /// supervised child, the path a user's own cores take (World only).
    CmcCommand,
    /// cmc's BFS on timely dataflow, one process.
    CmcTimely,
    /// stateright 0.31's BFS.
    Stateright,
    /// A single-threaded BFS written by hand for two-phase commit alone
    /// ([`crate::specialised`]).
    Specialised,
}

/// What a child process runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Job {
    /// A full model check.
    Check {
        /// The model.
        model: ModelCase,
        /// The checker.
        tool: Tool,
        /// Worker threads.
        workers: usize,
    },
    /// Random fingerprint inserts into cmc's visited table.
    Insert {
        /// How many fingerprints.
        fingerprints: u64,
        /// Inserting threads.
        threads: usize,
        /// New or already present.
        kind: InsertKind,
    },
    /// The bare step of two-phase commit over all its reachable states.
    Step {
        /// `RM`.
        rm_count: usize,
    },
    /// A part of a World check timed alone ([`crate::world_floor`]).
    WorldFloor {
        /// The configuration.
        case: WorldCase,
        /// What is timed.
        part: WorldFloorPart,
        /// Threads.
        threads: usize,
    },
}

impl ModelCase {
    /// The family's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            ModelCase::TwoPhase { .. } => "two-phase commit",
            ModelCase::Paxos { .. } => "paxos (stateright example)",
            ModelCase::World { case } => match case {
                WorldCase::ReqAck => "World: reqack core",
                WorldCase::TwoPhaseC => "World: two-phase C core",
                WorldCase::Paxos => "World: Paxos core",
                WorldCase::Abd => "World: ABD core",
                WorldCase::ReqAckCProperties => "World: reqack C core, C properties",
            },
        }
    }

    /// The parameters as the table shows them.
    pub fn params(self) -> String {
        match self {
            ModelCase::TwoPhase { rm_count } => format!("RM={rm_count}"),
            ModelCase::Paxos { client_count } => format!("clients={client_count} servers=3"),
            ModelCase::World { case } => case.params(),
        }
    }
}

impl Tool {
    /// The tool's name in the table.
    pub fn name(self) -> &'static str {
        match self {
            Tool::Cmc => "cmc",
            Tool::CmcCommand => "cmc-command",
            Tool::CmcTimely => "cmc-timely",
            Tool::Stateright => "stateright",
            Tool::Specialised => "specialised",
        }
    }
}

impl Job {
    /// Runs the job in this process (the child side).
    pub fn execute(self) -> Sample {
        match self {
            Job::Check {
                model,
                tool,
                workers,
            } => match (model, tool) {
                (ModelCase::TwoPhase { rm_count }, Tool::Cmc) => {
                    crate::cmc::check(cmc_models::TwoPhase::new(rm_count), workers, true)
                }
                (ModelCase::TwoPhase { rm_count }, Tool::CmcTimely) => {
                    crate::cmc::check_timely(cmc_models::TwoPhase::new(rm_count), workers, true)
                }
                (ModelCase::TwoPhase { rm_count }, Tool::Stateright) => {
                    crate::stateright::check(TwoPhaseSys { rms: 0..rm_count }, workers)
                }
                (ModelCase::TwoPhase { rm_count }, Tool::Specialised) => {
                    crate::specialised::two_phase_bfs(rm_count)
                }
                // Actor systems end quiescent, and stateright has no
                // deadlock check: cmc's is off for this comparison.
                (ModelCase::Paxos { client_count }, Tool::Cmc) => {
                    crate::cmc::check(Paxos::new(client_count), workers, false)
                }
                (ModelCase::Paxos { client_count }, Tool::CmcTimely) => {
                    crate::cmc::check_timely(Paxos::new(client_count), workers, false)
                }
                (ModelCase::Paxos { client_count }, Tool::Stateright) => crate::stateright::check(
                    PaxosModelCfg::unordered_nonduplicating(client_count).into_model(),
                    workers,
                ),
                (ModelCase::World { case }, Tool::Cmc) => crate::world::check(case, workers),
                (ModelCase::World { case }, Tool::CmcCommand) => {
                    crate::world::check_command(case, workers)
                }
                (ModelCase::World { .. }, tool) => {
                    panic!("a World is checked by cmc only, not {}", tool.name())
                }
                (ModelCase::Paxos { .. }, Tool::Specialised) => {
                    panic!("the specialised BFS checks two-phase commit only")
                }
                (_, Tool::CmcCommand) => panic!("the cmc command rows are Worlds only"),
            },
            Job::Insert {
                fingerprints,
                threads,
                kind,
            } => floor::table_insert(fingerprints, threads, kind),
            Job::Step { rm_count } => floor::two_phase_step(rm_count),
            Job::WorldFloor {
                case,
                part,
                threads,
            } => world_floor::run(case, part, threads),
        }
    }

    /// The job as command-line words (the inverse of [`Job::parse`]).
    pub fn to_args(self) -> Vec<String> {
        self.to_string()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    }

    /// Reads a job from the words [`Job::to_args`] wrote.
    pub fn parse(words: &[String]) -> Result<Job, String> {
        let words: Vec<&str> = words.iter().map(String::as_str).collect();
        let number = |word: &str| -> Result<u64, String> {
            word.parse()
                .map_err(|problem| format!("`{word}` is not a count: {problem}"))
        };
        match words[..] {
            ["check", "world", case, tool, workers] => {
                let case = WorldCase::from_word(case)
                    .ok_or_else(|| format!("unknown World configuration `{case}`"))?;
                let tool = match tool {
                    "cmc" => Tool::Cmc,
                    "cmc-command" => Tool::CmcCommand,
                    other => return Err(format!("a World is checked by cmc only, not `{other}`")),
                };
                Ok(Job::Check {
                    model: ModelCase::World { case },
                    tool,
                    workers: number(workers)? as usize,
                })
            }
            ["check", family, parameter, tool, workers] => {
                let parameter = number(parameter)? as usize;
                let model = match family {
                    "two-phase" => ModelCase::TwoPhase {
                        rm_count: parameter,
                    },
                    "paxos" => ModelCase::Paxos {
                        client_count: parameter,
                    },
                    other => return Err(format!("unknown model `{other}`")),
                };
                let tool = match tool {
                    "cmc" => Tool::Cmc,
                    "cmc-timely" => Tool::CmcTimely,
                    "stateright" => Tool::Stateright,
                    "specialised" if family == "two-phase" => Tool::Specialised,
                    other => return Err(format!("unknown tool `{other}`")),
                };
                Ok(Job::Check {
                    model,
                    tool,
                    workers: number(workers)? as usize,
                })
            }
            ["insert", fingerprints, threads, kind] => Ok(Job::Insert {
                fingerprints: number(fingerprints)?,
                threads: number(threads)? as usize,
                kind: match kind {
                    "new" => InsertKind::New,
                    "present" => InsertKind::Present,
                    other => return Err(format!("unknown insert kind `{other}`")),
                },
            }),
            ["step", rm_count] => Ok(Job::Step {
                rm_count: number(rm_count)? as usize,
            }),
            ["world-floor", case, part, threads] => Ok(Job::WorldFloor {
                case: WorldCase::from_word(case)
                    .ok_or_else(|| format!("unknown World configuration `{case}`"))?,
                part: WorldFloorPart::from_word(part)
                    .ok_or_else(|| format!("unknown World floor part `{part}`"))?,
                threads: number(threads)? as usize,
            }),
            _ => Err(format!("not a job: {words:?}")),
        }
    }
}

impl fmt::Display for Job {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Job::Check {
                model,
                tool,
                workers,
            } => {
                let (family, parameter) = match model {
                    ModelCase::TwoPhase { rm_count } => ("two-phase", rm_count.to_string()),
                    ModelCase::Paxos { client_count } => ("paxos", client_count.to_string()),
                    ModelCase::World { case } => ("world", case.word().to_string()),
                };
                write!(f, "check {family} {parameter} {} {workers}", tool.name())
            }
            Job::Insert {
                fingerprints,
                threads,
                kind,
            } => {
                let kind = match kind {
                    InsertKind::New => "new",
                    InsertKind::Present => "present",
                };
                write!(f, "insert {fingerprints} {threads} {kind}")
            }
            Job::Step { rm_count } => write!(f, "step {rm_count}"),
            Job::WorldFloor {
                case,
                part,
                threads,
            } => write!(f, "world-floor {} {} {threads}", case.word(), part.word()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(model: ModelCase, tool: Tool, workers: usize) -> Job {
        Job::Check {
            model,
            tool,
            workers,
        }
    }

    #[test]
    fn jobs_survive_their_command_line() {
        let two_phase = |rm_count| ModelCase::TwoPhase { rm_count };
        let jobs = [
            check(two_phase(9), Tool::Stateright, 2),
            check(ModelCase::Paxos { client_count: 2 }, Tool::Cmc, 1),
            check(two_phase(8), Tool::CmcTimely, 2),
            check(two_phase(8), Tool::Specialised, 1),
            Job::Insert {
                fingerprints: 1000,
                threads: 2,
                kind: InsertKind::Present,
            },
            Job::Step { rm_count: 7 },
            Job::WorldFloor {
                case: WorldCase::TwoPhaseC,
                part: WorldFloorPart::Bytes,
                threads: 2,
            },
            check(
                ModelCase::World {
                    case: WorldCase::Abd,
                },
                Tool::Cmc,
                2,
            ),
            check(
                ModelCase::World {
                    case: WorldCase::ReqAck,
                },
                Tool::CmcCommand,
                1,
            ),
        ];
        for job in jobs {
            assert_eq!(Job::parse(&job.to_args()), Ok(job));
        }
        assert!(Job::parse(&["step".into()]).is_err());
        let paxos_by_hand = "check paxos 2 specialised 1".split(' ').map(String::from);
        assert!(Job::parse(&paxos_by_hand.collect::<Vec<_>>()).is_err());
    }
}
