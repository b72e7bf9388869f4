//! `cmc check --engine timely`: the search on timely dataflow workers, in
//! this process or across the processes of a hostfile (`cmc-distributed`).

use std::any::{Any, TypeId};
use std::sync::Arc;
use std::time::Duration;

use cmc_model::Model;
use cmc_models::{DieHard, PaxosCommit, TCommit, TwoPhase};
use cmc_search::{AnyModel, Report, SearchOptions};

// Without the `timely` feature, the same names refuse every timely run.
#[cfg(not(feature = "timely"))]
use crate::without_timely as cmc_distributed;

use crate::args::{Engine, EngineArgs};

/// How to resume, with the checkpoint in `dir`, a timely run of `engine`
/// with `workers` threads a process.
fn resume_hint(
    program: &str,
    engine: &EngineArgs,
    dir: &std::path::Path,
    workers: usize,
) -> String {
    let mut command = format!(
        "{program} check --resume {} --engine timely --workers {}",
        dir.display(),
        workers.max(1)
    );
    if let Some(hosts) = &engine.hostfile {
        command.push_str(&format!(
            " --processes {} --process {} --hostfile {}",
            engine.processes,
            engine.process,
            hosts.display()
        ));
    }
    let others = if engine.processes > 1 {
        " (and every other process with its own --process)"
    } else {
        ""
    };
    format!("{program}: resume this timely run with: {command}{others}")
}

/// The cluster `engine` describes, if several processes are asked for.
fn cluster(engine: &EngineArgs) -> Result<Option<cmc_distributed::Cluster>, String> {
    let seconds = |value: f64, flag: &str| {
        Duration::try_from_secs_f64(value)
            .ok()
            .filter(|duration| !duration.is_zero())
            .ok_or_else(|| format!("{flag} takes a positive number of seconds"))
    };
    let timeout = seconds(engine.connect_timeout, "--connect-timeout")?;
    let peer_timeout = seconds(engine.peer_timeout, "--peer-timeout")?;
    if engine.processes == 0 {
        return Err("--processes must be at least 1".into());
    }
    match (&engine.hostfile, engine.processes) {
        (None, 1) if engine.process == 0 => Ok(None),
        (None, _) => Err(
            "a timely run of several processes needs --hostfile FILE (one host:port per line)"
                .into(),
        ),
        (Some(path), processes) => {
            cmc_distributed::Cluster::from_hostfile(path, processes, engine.process, timeout)
                .map(|cluster| Some(cluster.with_peer_timeout(peer_timeout)))
                .map_err(|problem| problem.to_string())
        }
    }
}

/// The model name and parameters of the checkpoint in `dir` that `engine`
/// resumes (a timely checkpoint holds one per process).
pub fn checkpoint_model(
    engine: &EngineArgs,
    dir: &std::path::Path,
) -> Result<(String, Vec<(String, String)>), String> {
    match engine.engine {
        Engine::Native => cmc_search::checkpoint_model(dir),
        Engine::Timely => cmc_distributed::checkpoint_model(dir, engine.process)
            .map_err(|problem| problem.to_string()),
    }
}

/// Runs a model, given as `Any`, on timely dataflow (the model's concrete
/// type is the function's: see [`run_model`]).
pub(crate) type RunModel = fn(
    Box<dyn Any + Send + Sync>,
    &SearchOptions,
    Option<&cmc_distributed::Cluster>,
) -> Result<Report, String>;

/// Runs `model`, which must be an `M`, on timely dataflow.
pub(crate) fn run_model<M: Model + Send + 'static>(
    model: Box<dyn Any + Send + Sync>,
    options: &SearchOptions,
    cluster: Option<&cmc_distributed::Cluster>,
) -> Result<Report, String> {
    let model = model
        .downcast::<M>()
        .map_err(|_| "the timely engine was given a model of another type; this is a cmc bug, please report it".to_string())?;
    run::<M>(Arc::from(model), options, cluster)
}

/// How the timely engine runs a model of the type `model` has: the bundled
/// models and Worlds by their type, a program's own models as their
/// registration says (`registered`).
fn runner(model: &(dyn Any + Send + Sync), registered: Option<RunModel>) -> Option<RunModel> {
    let bundled: [(TypeId, RunModel); 5] = [
        (TypeId::of::<TwoPhase>(), run_model::<TwoPhase>),
        (TypeId::of::<PaxosCommit>(), run_model::<PaxosCommit>),
        (TypeId::of::<TCommit>(), run_model::<TCommit>),
        (TypeId::of::<DieHard>(), run_model::<DieHard>),
        // A World runs here in the supervised child of `cmc check --core`:
        // every process loads the same cores, under its own supervisor.
        (
            TypeId::of::<cmc_world::World>(),
            run_model::<cmc_world::World>,
        ),
    ];
    let type_id = Any::type_id(model);
    bundled
        .iter()
        .find(|(bundled, _)| *bundled == type_id)
        .map(|(_, run)| *run)
        .or(registered)
}

/// Runs the search of `model` on timely dataflow and reports it as the
/// native engine would (`registered`: how the program's registration of
/// the model runs it; `program` names the program in a resume hint);
/// `Err` for a run that could not be carried out.
pub fn check(
    engine: &EngineArgs,
    model: Box<dyn AnyModel>,
    options: &SearchOptions,
    registered: Option<RunModel>,
    program: &str,
) -> Result<Report, String> {
    let cluster = cluster(engine)?;
    // A peer that goes away must be an error on the socket, not SIGPIPE.
    // SAFETY: setting a signal's disposition to "ignore" has no other effect.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
    let name = model.name();
    let model = model.into_any();
    let run = runner(model.as_ref(), registered).ok_or_else(|| {
        format!("the timely engine checks the registered models and Worlds of cores; `{name}` is neither (use --engine native)")
    })?;
    let report = run(model, options, cluster.as_ref())?;
    if let (Some(checkpoint), "interrupted" | "time-limit") =
        (&options.checkpoint, report.verdict.as_str())
    {
        eprintln!(
            "{}",
            resume_hint(program, engine, &checkpoint.dir, options.workers)
        );
    }
    Ok(report)
}

#[cfg(feature = "timely")]
fn run<M: Model + Send + 'static>(
    model: Arc<M>,
    options: &SearchOptions,
    cluster: Option<&cmc_distributed::Cluster>,
) -> Result<Report, String> {
    let (run, expired) = cmc_search::within_time_limit(options, |options| {
        cmc_distributed::check(Arc::clone(&model), options, cluster)
    });
    let mut run = run.map_err(|problem| problem.to_string())?;
    run.outcome = run.outcome.after_time_limit(expired);
    let exchange = run.exchange;
    let generated = run.outcome.stats.states_generated.max(1) as f64;
    eprintln!(
        "cmc: timely engine: {} worker(s) in {} process(es); {} bytes of states sent between workers ({:.1} per generated state), {} between processes ({:.1} per generated state)",
        exchange.workers,
        exchange.processes,
        exchange.sent_bytes,
        exchange.sent_bytes as f64 / generated,
        exchange.remote_bytes,
        exchange.remote_bytes as f64 / generated,
    );
    Ok(Report::new(model.as_ref(), options, &run.outcome))
}

#[cfg(not(feature = "timely"))]
fn run<M: Model + Send + 'static>(
    _: Arc<M>,
    _: &SearchOptions,
    _: Option<&cmc_distributed::Cluster>,
) -> Result<Report, String> {
    Err(cmc_distributed::UNAVAILABLE.into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_bundled_model_runs_on_the_timely_engine() {
        for entry in cmc_models::registry::bundled() {
            let model = entry.build(&[]).unwrap().into_any();
            assert!(
                runner(model.as_ref(), None).is_some(),
                "{} has no timely runner",
                entry.name
            );
        }
    }
}
