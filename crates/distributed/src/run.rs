//! Starting the workers (threads, or a cluster of processes), collecting
//! what they concluded, and turning it into the native engine's outcome.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, Once};
use std::time::{Duration, Instant};

use cmc_model::{Fingerprint, Model};
use cmc_search::{Counterexample, Outcome, ProgressMode, SearchOptions, Stats, Strategy, Verdict};
use timely_communication::allocator::zero_copy::initialize::initialize_networking_from_sockets;
use timely_communication::allocator::ProcessBuilder;
use timely_communication::{AllocatorBuilder, Hooks};

use crate::checkpoint::{CheckpointOf, Checkpoints, Loaded};
use crate::liveness::Liveness;
use crate::worker::{self, Checkpointing, Ending, PeerLost, Resumed, Settings};
use crate::{Cluster, DistributedError};

/// How long the surviving workers of a process are given to report, once
/// one of them has seen a peer lost, before the run is declared failed.
const FAILURE_GRACE: Duration = Duration::from_secs(2);
/// How long a finished run waits for timely's threads to shut down.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(10);

/// What the workers exchanged.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Exchange {
    /// Bytes of state records sent from one worker to another (all processes).
    pub sent_bytes: u64,
    /// Of those, bytes sent between processes.
    pub remote_bytes: u64,
    /// Workers in the run (threads times processes).
    pub workers: usize,
    /// Processes in the run.
    pub processes: usize,
}

/// A distributed search's outcome, with what was exchanged.
pub struct DistributedRun<M: Model> {
    /// Verdict, statistics and counterexample, as the native engine gives them.
    pub outcome: Outcome<M>,
    /// Bytes exchanged between workers and processes.
    pub exchange: Exchange,
}

/// The text every process of a run must agree on: cmc version, model,
/// parameters, worker threads and the options that change the search.
pub fn identity<M: Model>(model: &M, options: &SearchOptions) -> String {
    let params: Vec<String> = model
        .params()
        .into_iter()
        .map(|param| format!("{}={}", param.name, param.value))
        .collect();
    format!(
        "cmc {} {} {}; {} thread(s); max depth {}; deadlock {}",
        env!("CARGO_PKG_VERSION"),
        model.name(),
        params.join(" "),
        options.workers.max(1),
        options
            .max_depth
            .map_or_else(|| "none".to_string(), |depth| depth.to_string()),
        if options.check_deadlock { "on" } else { "off" }
    )
}

/// Searches `model` breadth-first on timely dataflow with
/// `options.workers` threads in this process, and with the other processes
/// of `cluster` if given (each must make the same call).
///
/// Errors are a setup that cannot run (unsupported options, bad hostfile,
/// a peer that does not connect in time or checks something else) and a
/// peer lost during the run; a problem of the model (a state that does not
/// decode) is the outcome's [`Verdict::Error`], as in the native engine.
pub fn check<M: Model + Send + 'static>(
    model: Arc<M>,
    options: &SearchOptions,
    cluster: Option<&Cluster>,
) -> Result<DistributedRun<M>, DistributedError> {
    let started = Instant::now();
    refuse_unsupported(options)?;
    let threads = options.workers.max(1);
    let processes = cluster.map_or(1, Cluster::processes);
    let process = cluster.map_or(0, |cluster| cluster.process);
    let checkpoints = match checkpointing(model.as_ref(), options, process, processes)? {
        Prepared::Ready(checkpoints) => *checkpoints,
        // Stopped while the checkpoint was read: it is left as it was.
        Prepared::Stopped { dir } => {
            return Ok(DistributedRun {
                outcome: Outcome {
                    verdict: Verdict::Interrupted {
                        checkpoint: Some(dir),
                    },
                    stats: Stats {
                        workers: threads,
                        wall: started.elapsed(),
                        ..Stats::default()
                    },
                    counterexample: None,
                },
                exchange: Exchange {
                    workers: threads * processes,
                    processes,
                    ..Exchange::default()
                },
            })
        }
    };
    let checkpoint_dir = checkpoints
        .as_ref()
        .map(|checkpoints| checkpoints.store.dir());
    // Peers agree on the run, their number, and the level they resume.
    let mut agreed = format!(
        "{}; {processes} process(es)",
        identity(model.as_ref(), options)
    );
    if let Some(resumed) = checkpoints.as_ref().and_then(|c| c.resumed.as_ref()) {
        agreed.push_str("; ");
        agreed.push_str(&Checkpoints::resumed_identity(&resumed.counters));
    }
    // Heartbeats go on until this run returns, whatever its end.
    let mut liveness: Option<Liveness> = None;
    let (builders, others): (Vec<AllocatorBuilder>, Box<dyn std::any::Any + Send>) = match cluster {
        Some(cluster) if cluster.processes() > 1 => {
            let connections = cluster.connect(&agreed)?;
            let started = Liveness::start(connections.heartbeats, cluster.peer_timeout).map_err(
                |problem| {
                    DistributedError::Setup(format!("cannot start the heartbeats: {problem}"))
                },
            )?;
            liveness = Some(started);
            let local = ProcessBuilder::new_typed_vector(threads, Hooks::default().refill, None);
            let (builders, guard) = initialize_networking_from_sockets(
                local,
                connections.data,
                cluster.process,
                threads,
                Hooks::default(),
            )
            .map_err(|problem| {
                DistributedError::Setup(format!("cannot start the connections: {problem}"))
            })?;
            (
                builders.into_iter().map(AllocatorBuilder::Tcp).collect(),
                Box::new(guard),
            )
        }
        _ => timely_communication::Config::Process(threads)
            .try_build()
            .map_err(DistributedError::Setup)?,
    };
    let settings = Arc::new(Settings {
        max_depth: options.max_depth,
        check_deadlock: options.check_deadlock,
        threads,
        progress: options.progress != ProgressMode::Off
            && cluster.is_none_or(|cluster| cluster.process == 0),
        interrupt: options.interrupt.clone(),
        lost: liveness.as_ref().map(Liveness::lost),
        checkpoints,
    });
    capture_communication_panics();
    let ending = run_workers(Arc::clone(&model), settings, builders, others, threads)?;
    let exchange = Exchange {
        sent_bytes: ending.sent_bytes,
        remote_bytes: ending.remote_bytes,
        workers: threads * processes,
        processes,
    };
    Ok(DistributedRun {
        outcome: conclude(
            model.as_ref(),
            ending,
            threads,
            started.elapsed(),
            checkpoint_dir,
        ),
        exchange,
    })
}

/// How the checkpoints of a run were prepared.
enum Prepared {
    /// The checkpoints asked for (none, a new run's, or the one resumed).
    Ready(Box<Option<Checkpointing>>),
    /// The interrupt flag stopped the load of the checkpoint in `dir`.
    Stopped { dir: PathBuf },
}

/// The checkpoints `options` ask for (loading the one resumed, so that a
/// bad one is refused before any peer is contacted), for process `process`
/// of `processes`. The search's interrupt flag ends the load at once.
fn checkpointing<M: Model>(
    model: &M,
    options: &SearchOptions,
    process: usize,
    processes: usize,
) -> Result<Prepared, DistributedError> {
    let Some(asked) = &options.checkpoint else {
        return Ok(Prepared::Ready(Box::new(None)));
    };
    let params = model
        .params()
        .into_iter()
        .map(|param| (param.name.to_string(), param.value.to_string()))
        .collect();
    let of = CheckpointOf {
        identity: identity(model, options),
        build: cmc_search::sealed::executable_checksum().map_err(DistributedError::Checkpoint)?,
        model: model.name(),
        params,
        process,
        processes,
        threads: options.workers.max(1),
    };
    let store = Checkpoints::new(&asked.dir, of, asked.resume, asked.overwrite)?;
    let resumed = if asked.resume {
        let stop = || {
            options
                .interrupt
                .as_deref()
                .is_some_and(|flag| flag.load(Ordering::Relaxed))
        };
        match store.load(&stop)? {
            Loaded::Parts(counters, parts) => Some(Resumed {
                counters,
                parts: Mutex::new(parts.into_iter().map(Some).collect()),
            }),
            Loaded::Stopped => return Ok(Prepared::Stopped { dir: store.dir() }),
        }
    } else {
        None
    };
    Ok(Prepared::Ready(Box::new(Some(Checkpointing {
        store,
        interval: asked.interval,
        resumed,
    }))))
}

/// Fails on the options this engine does not implement.
fn refuse_unsupported(options: &SearchOptions) -> Result<(), DistributedError> {
    let refused = [
        (
            options.strategy != Strategy::Bfs,
            "a strategy other than breadth-first",
        ),
        (options.max_memory_bytes.is_some(), "a memory bound"),
        (options.fingerprints_on_disk, "fingerprints on disk"),
        (options.check_determinism, "determinism checking"),
    ];
    match refused.iter().find(|(asked, _)| *asked) {
        Some((_, what)) => Err(DistributedError::Unsupported(format!(
            "the timely engine does not support {what}; use the native engine"
        ))),
        None => Ok(()),
    }
}

/// Runs the workers and returns what local worker 0 concluded (every
/// worker concludes the same), or why the run failed.
fn run_workers<M: Model + Send + 'static>(
    model: Arc<M>,
    settings: Arc<Settings>,
    builders: Vec<AllocatorBuilder>,
    others: Box<dyn std::any::Any + Send>,
    threads: usize,
) -> Result<Ending, DistributedError> {
    let (results, received) = mpsc::channel::<(usize, Result<Ending, Failure>)>();
    let results = Mutex::new(results);
    let (finished, shut_down) = mpsc::channel::<()>();
    // Timely's threads are joined on a thread of their own, so that a run
    // whose peers vanished cannot keep this one waiting.
    std::thread::Builder::new()
        .name("timely:guard".into())
        .spawn(move || {
            let started = timely::execute::execute_from(
                builders,
                others,
                timely::WorkerConfig::default(),
                move |worker| {
                    let index = worker.index();
                    let ending =
                        catch_unwind(AssertUnwindSafe(|| worker::run(worker, &model, &settings)))
                            .map_err(|payload| Failure::Panicked(panic_text(payload.as_ref())))
                            .and_then(|ended| ended.map_err(Failure::Lost));
                    let _ = results
                        .lock()
                        .expect("no worker panics while holding the sender")
                        .send((index, ending));
                },
            );
            if let Ok(guards) = started {
                let _ = catch_unwind(AssertUnwindSafe(|| guards.join()));
            }
            let _ = finished.send(());
        })
        .map_err(|problem| DistributedError::Setup(format!("cannot start a thread: {problem}")))?;

    let mut endings = Vec::new();
    let mut failure: Option<Failure> = None;
    let mut failed_at: Option<Instant> = None;
    while endings.len() + usize::from(failure.is_some()) < threads {
        let wait = match failed_at {
            Some(at) => FAILURE_GRACE.saturating_sub(at.elapsed()),
            None => Duration::from_secs(3600),
        };
        match received.recv_timeout(wait) {
            Ok((index, Ok(ending))) => endings.push((index, ending)),
            Ok((_, Err(problem))) => {
                failure.get_or_insert(problem);
                failed_at.get_or_insert_with(Instant::now);
            }
            Err(mpsc::RecvTimeoutError::Timeout) if failed_at.is_some() => break,
            Err(mpsc::RecvTimeoutError::Timeout) => continue,
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                failure.get_or_insert_with(|| {
                    Failure::Panicked("the timely workers stopped without a result".into())
                });
                break;
            }
        }
    }
    match failure {
        Some(Failure::Lost(PeerLost(reason))) => return Err(DistributedError::PeerLost(reason)),
        Some(Failure::Panicked(problem)) => {
            return Err(DistributedError::PeerLost(explain_failure(&problem)))
        }
        None => {}
    }
    let _ = shut_down.recv_timeout(SHUTDOWN_GRACE);
    endings.sort_by_key(|(index, _)| *index);
    endings
        .into_iter()
        .next()
        .map(|(_, ending)| ending)
        .ok_or_else(|| DistributedError::PeerLost("no worker reported".into()))
}

/// Why a worker ended without a result.
enum Failure {
    /// It panicked (as it does when timely loses a connection).
    Panicked(String),
    /// It saw a peer process go silent.
    Lost(PeerLost),
}

/// The message of a panic payload.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|text| text.to_string()))
        .unwrap_or_else(|| "a timely worker panicked".into())
}

/// Panic messages of timely's communication threads, newest last.
static COMMUNICATION_PANICS: Mutex<Vec<String>> = Mutex::new(Vec::new());

/// Keeps the panics of timely's threads (a lost connection makes its
/// receive thread panic, and the workers after it) off stderr, recording
/// them for the error report instead; other panics print as before.
fn capture_communication_panics() {
    static INSTALL: Once = Once::new();
    INSTALL.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            let thread = std::thread::current();
            let name = thread.name().unwrap_or("");
            if name.starts_with("timely:") {
                let text = panic_text(info.payload());
                if let Ok(mut panics) = COMMUNICATION_PANICS.lock() {
                    panics.push(format!("{name}: {text}"));
                }
            } else {
                previous(info);
            }
        }));
    });
}

/// A clear message for a run whose worker failed with `problem`, naming
/// the lost peer when a receive thread saw it go.
fn explain_failure(problem: &str) -> String {
    let panics = COMMUNICATION_PANICS
        .lock()
        .map(|panics| panics.clone())
        .unwrap_or_default();
    let lost = panics.iter().find_map(|text| {
        let rest = text.strip_prefix("timely:recv-")?;
        let (peer, cause) = rest.split_once(": ")?;
        Some(format!(
            "the connection to process {peer} was lost during the search ({cause}); the run is abandoned on every process"
        ))
    });
    lost.or_else(|| {
        panics
            .iter()
            .find(|text| text.contains("timely communication error"))
            .map(|text| format!("a connection between processes failed during the search ({text}); the run is abandoned"))
    })
    .unwrap_or_else(|| format!("a search worker failed: {problem}"))
}

/// The native engine's outcome for what the workers concluded.
fn conclude<M: Model>(
    model: &M,
    ending: Ending,
    threads: usize,
    wall: Duration,
    checkpoint_dir: Option<std::path::PathBuf>,
) -> Outcome<M> {
    let stats = Stats {
        distinct_states: ending.distinct_states,
        states_generated: ending.states_generated,
        states_left_on_queue: ending.states_left_on_queue,
        depth: ending.depth,
        complete: ending.violation.is_none()
            && ending.error.is_none()
            && ending.states_left_on_queue == 0,
        wall,
        workers: threads,
        ..Stats::default()
    };
    let failed = |message: String, stats: Stats| Outcome {
        verdict: Verdict::Error { message },
        stats,
        counterexample: None,
    };
    if let Some(message) = ending.error {
        return failed(message, stats);
    }
    if ending.interrupted && ending.violation.is_none() && ending.states_left_on_queue > 0 {
        return Outcome {
            verdict: Verdict::Interrupted {
                checkpoint: checkpoint_dir.filter(|_| ending.saved),
            },
            stats,
            counterexample: None,
        };
    }
    match ending.violation {
        Some(found) => {
            match Counterexample::from_path(model, &ending.path, found.step_action) {
                Ok(counterexample) => {
                    // The violation is confirmed on its counterexample: a
                    // property that changes its mind is a property error.
                    let failure = cmc_search::Failure {
                        rank: 0,
                        name: found.name.clone(),
                        kind: found.kind.into(),
                    };
                    let properties = cmc_search::PropertySet::new(model.properties());
                    if let Err(message) = properties.confirm(model, &failure, Some(&counterexample)) {
                        return failed(message, stats);
                    }
                    Outcome {
                        verdict: Verdict::Violated {
                            property: found.name,
                            kind: failure.kind,
                        },
                        stats,
                        counterexample: Some(counterexample),
                    }
                }
                Err(problem) => failed(
                    format!(
                        "property {} failed, but its counterexample could not be rebuilt: the model is not deterministic: {problem} (last state {})",
                        found.name,
                        Fingerprint(found.fingerprint)
                    ),
                    stats,
                ),
            }
        }
        None => {
            let unreached: Vec<String> = model
                .properties()
                .iter()
                .filter(|property| property.kind_name() == "sometimes")
                .map(|property| property.name.clone())
                .filter(|name| !ending.witnesses.contains(name))
                .collect();
            Outcome::without_violation(unreached, stats)
        }
    }
}
