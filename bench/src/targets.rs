//! The engine suite's performance targets, judged on one run's measurements.

use std::time::Duration;

use crate::analysis::Analysis;
use crate::job::{Job, ModelCase, Tool};
use crate::suite::Measured;
use crate::world::WorldCase;
use crate::world_floor::WorldFloorPart;

/// One target and whether the run met it.
struct Judgement {
    target: String,
    figure: Option<String>,
    met: bool,
}

impl Judgement {
    fn new(
        target: String,
        measured: Option<(f64, String)>,
        met: impl Fn(f64) -> bool,
    ) -> Judgement {
        Judgement {
            target,
            met: measured.as_ref().is_some_and(|(value, _)| met(*value)),
            figure: measured.map(|(_, text)| text),
        }
    }

    fn line(&self) -> String {
        let status = match (&self.figure, self.met) {
            (None, _) => "NOT MEASURED",
            (Some(_), true) => "met",
            (Some(_), false) => "NOT met",
        };
        let figure = self.figure.as_deref().unwrap_or("no measurement");
        format!("- {status}: {}: {figure}", self.target)
    }
}

/// The targets, as Markdown list lines; `largest` is the largest two-phase
/// instance measured and `paxos` the Paxos instances.
pub fn render(measured: &[Measured], largest: ModelCase, paxos: &[ModelCase]) -> String {
    let analysis = Analysis::new(measured);
    let versus = |model: ModelCase| {
        let sample = analysis.check(model, Tool::Cmc, 2)?;
        let ratio = analysis.versus_stateright(model, sample)?;
        Some((ratio, format!("{ratio:.2}× stateright's distinct states/s")))
    };
    let wall_two = analysis.check(largest, Tool::Cmc, 2).map(|sample| {
        let seconds = sample.wall.as_secs_f64();
        (seconds, format!("{seconds:.2} s with 2 workers"))
    });
    let speedup = analysis.two_workers_speedup(largest).map(|speedup| {
        (
            speedup,
            format!("{speedup:.2}× (wall, 1 worker / 2 workers)"),
        )
    });
    let floor = analysis.floor(largest, 1).map(|floor| {
        let ratio = floor.checker_over_floor;
        (
            ratio,
            format!(
                "cmc (1 worker) takes {ratio:.2}× the floor of {:.2} s",
                floor.wall_seconds
            ),
        )
    });
    let table = analysis.check(largest, Tool::Cmc, 1).map(|sample| {
        let bytes = sample.table_bytes as f64 / sample.distinct.max(1) as f64;
        (bytes, format!("{bytes:.1} table bytes per distinct state"))
    });
    let timely = analysis
        .check(largest, Tool::CmcTimely, 2)
        .zip(analysis.check(largest, Tool::Cmc, 2))
        .map(|(timely, native)| {
            let ratio = timely.wall.as_secs_f64() / native.wall.as_secs_f64().max(1e-9);
            (
                ratio,
                format!("{ratio:.2}× the native engine's wall time (2 workers each)"),
            )
        });
    let params = largest.params();
    let paxos_judgements = paxos.iter().map(|&model| {
        Judgement::new(
            format!("2 workers ≥ 5× stateright on paxos {}", model.params()),
            versus(model),
            |ratio| ratio >= 5.0,
        )
    });
    let judgements = [
        Judgement::new(
            format!("2 workers ≥ 5× stateright on two-phase {params}"),
            versus(largest),
            |ratio| ratio >= 5.0,
        ),
        Judgement::new(format!("two-phase {params} in under 9 s"), wall_two, |s| {
            s < 9.0
        }),
        Judgement::new(
            format!("2 workers ≥ 1.8× faster than 1 on two-phase {params}"),
            speedup,
            |speedup| speedup >= 1.8,
        ),
        Judgement::new(
            format!("per-state cost within 2× of the floor on two-phase {params}"),
            floor,
            |ratio| ratio <= 2.0,
        ),
        Judgement::new(
            format!(
                "timely engine (1 process, 2 workers) within 1.5× of native on two-phase {params}"
            ),
            timely,
            |ratio| ratio <= 1.5,
        ),
        Judgement::new(
            format!("visited table ≤ 24 bytes per distinct state on two-phase {params}"),
            table,
            |bytes| bytes <= 24.0,
        ),
    ];
    judgements
        .into_iter()
        .chain(paxos_judgements)
        .map(|judgement| judgement.line() + "\n")
        .collect()
}

/// The targets for the World rows, judged on one run of
/// [`crate::suite::run_world`]: each World's distinct states/s (2 workers)
/// over the model engine's on two-phase commit at `reference` (2 workers),
/// and the World Paxos core's over stateright's Paxos example (3 clients,
/// 2 threads).
pub fn render_world(measured: &[Measured], reference: ModelCase) -> String {
    let analysis = Analysis::new(measured);
    let rate = |model: ModelCase, tool: Tool| {
        analysis
            .check(model, tool, 2)
            .map(|sample| sample.distinct_per_second())
    };
    let engine = rate(reference, Tool::Cmc);
    let versus_engine = |case: WorldCase| {
        let ratio = rate(ModelCase::World { case }, Tool::Cmc)? / engine?;
        Some((
            ratio,
            format!(
                "{ratio:.2}× the model engine's distinct states/s on two-phase {}",
                reference.params()
            ),
        ))
    };
    let world_target = |case: WorldCase, floor: f64| {
        Judgement::new(
            format!(
                "World {} (2 workers) ≥ {floor}× the model engine on two-phase {}",
                case.word(),
                reference.params()
            ),
            versus_engine(case),
            move |ratio| ratio >= floor,
        )
    };
    let stateright = rate(ModelCase::Paxos { client_count: 3 }, Tool::Stateright);
    let paxos_versus_stateright = rate(
        ModelCase::World {
            case: WorldCase::Paxos,
        },
        Tool::Cmc,
    )
    .zip(stateright)
    .map(|(world, stateright)| {
        let ratio = world / stateright;
        (
            ratio,
            format!("{ratio:.2}× stateright's distinct states/s on its Paxos example (3 clients)"),
        )
    });
    let judgements = WORLD_TARGETS
        .map(|(case, target)| world_target(case, target))
        .into_iter()
        .chain([Judgement::new(
            "World Paxos core (2 workers) ≥ 5× stateright's Paxos actor example".into(),
            paxos_versus_stateright,
            |ratio| ratio >= 5.0,
        )]);
    let bounds = WORLD_TARGETS.into_iter().filter_map(|(case, target)| {
        let model = ModelCase::World { case };
        let check = analysis.check(model, Tool::Cmc, 2)?;
        let floor = analysis.sample(Job::WorldFloor {
            case,
            part: WorldFloorPart::Bytes,
            threads: 2,
        })?;
        let floor_ratio = floor.distinct_per_second() / engine?;
        Some(format!(
            "- bound: World {}: copying, fingerprinting and inserting its states alone \
             (the bytes floor, 2 threads) reaches {floor_ratio:.2}× the model engine's \
             distinct states/s; the check (2 workers) takes {:.2}× that floor's time, \
             and {target}× the engine leaves it {:.2}×\n",
            case.word(),
            check.wall.as_secs_f64() / floor.wall.as_secs_f64(),
            floor_ratio / target,
        ))
    });
    judgements
        .map(|judgement| judgement.line() + "\n")
        .chain(bounds)
        .collect()
}

/// The target for each World configuration: its distinct states/s
/// (2 workers) over the model engine's on two-phase commit.
const WORLD_TARGETS: [(WorldCase, f64); 4] = [
    (WorldCase::ReqAck, 0.5),
    (WorldCase::TwoPhaseC, 0.4),
    (WorldCase::Paxos, 0.4),
    (WorldCase::Abd, 0.2),
];

/// The floor suite's target, judged on one run of
/// [`crate::suite::run_floor`]: cmc with 2 workers on two-phase commit at
/// each of `models` within 0.8× the wall time of the specialised
/// single-thread BFS; with each side's least CPU time (`cpu`), which on a
/// loaded machine says more about the work done than the wall time.
pub fn render_floor(
    measured: &[Measured],
    models: &[ModelCase],
    cpu: &[(Job, Duration)],
) -> String {
    let analysis = Analysis::new(measured);
    let cpu_of = |model: ModelCase, tool: Tool, workers: usize| {
        let job = Job::Check {
            model,
            tool,
            workers,
        };
        cpu.iter()
            .find(|(measured, _)| *measured == job)
            .map(|(_, used)| used.as_secs_f64())
    };
    models
        .iter()
        .map(|&model| {
            let ratio = analysis.check(model, Tool::Cmc, 2).and_then(|sample| {
                let ratio = analysis.versus_specialised(model, sample)?;
                Some((
                    ratio,
                    format!("{ratio:.2}× the specialised BFS's wall time"),
                ))
            });
            let judgement = Judgement::new(
                format!(
                    "2 workers ≤ 0.8× a specialised single-thread BFS on two-phase {}",
                    model.params()
                ),
                ratio,
                |ratio| ratio <= 0.8,
            );
            let work = match (
                cpu_of(model, Tool::Cmc, 2),
                cpu_of(model, Tool::Specialised, 1),
            ) {
                (Some(engine), Some(specialised)) => format!(
                    "  (CPU time, least of the runs: cmc {engine:.3} s over its 2 workers, \
                     the specialised BFS {specialised:.3} s; half of cmc's over the \
                     specialised BFS's: {:.2})\n",
                    engine / 2.0 / specialised
                ),
                _ => String::new(),
            };
            judgement.line() + "\n" + &work
        })
        .collect()
}
