//! Crash and hang containment.
//!
//! The check runs in a child process that writes a flight recorder
//! ([`crate::recorder`]) before every step. The supervisor ([`supervise`])
//! waits for it; if the child dies by a signal, stays inside one step longer
//! than the timeout (it is then killed), or stops at a recorded fault, the
//! supervisor reads the recorder and reports the step. [`path_to_fault`] then
//! finds a shortest path to the step's pre-state, with a single-worker BFS
//! whose only invariant is "this is not the pre-state" (its counterexample is
//! the path), and returns it as a replay file that ends with the faulting
//! action, so `cmc replay` (under gdb if need be) reproduces the step.

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use cmc_model::{Encode, Fingerprint, Model, ModelParam, Property, StateView};
use cmc_search::{Checker, ReplayFile, Verdict};

use crate::action::Action;
use crate::fault::{Fault, FaultKind};
use crate::recorder::{Recorder, SlotRecord, EXIT_FAULT, RECORDER_ENV};
use crate::state::WorldState;
use crate::World;

/// How the child ended.
#[derive(Debug)]
pub enum Supervised {
    /// It exited normally (any exit code other than the fault code).
    Finished(ExitStatus),
    /// It died inside a step, hung, or stopped at a recorded fault.
    Fault(RecordedFault),
}

/// A fault read back from the flight recorder.
#[derive(Debug, Clone)]
pub struct RecordedFault {
    /// What happened.
    pub kind: FaultKind,
    /// The action of the step (`None`: the initial starts).
    pub action: Option<Action>,
    /// The action as the child formatted it, when it recorded the fault itself.
    pub action_text: Option<String>,
    /// The event text the child recorded (empty after a signal or a hang).
    pub event: String,
    /// Encoded pre-state (empty for the initial starts).
    pub pre_state: Vec<u8>,
}

impl RecordedFault {
    /// The fault, with the action described by `world` (built from the same arguments as the child).
    pub fn into_fault(self, world: &World) -> Fault {
        let action = self.action_text.unwrap_or_else(|| match &self.action {
            Some(action) => world.format_action(action),
            None => "INIT".to_string(),
        });
        Fault {
            kind: self.kind,
            action,
            event: self.event,
            pre_state: self.pre_state,
        }
    }
}

/// Runs `child` with a flight recorder at `recorder_path` and watches it; a
/// step that runs longer than `step_timeout` is a hang and the child is killed.
pub fn supervise(
    mut child: Command,
    recorder_path: &Path,
    step_timeout: Duration,
) -> Result<Supervised, String> {
    let recorder = Recorder::create(recorder_path).map_err(|e| {
        format!(
            "cannot create the flight recorder {}: {e}",
            recorder_path.display()
        )
    })?;
    let mut process = child
        .env(RECORDER_ENV, recorder_path)
        .spawn()
        .map_err(|e| format!("cannot start the checking process: {e}"))?;
    // Per slot: (steps seen, when that count was first seen inside a step).
    let mut seen: Vec<(u64, Instant)> = Vec::new();
    loop {
        if let Some(status) = process
            .try_wait()
            .map_err(|e| format!("waiting for the checking process: {e}"))?
        {
            return Ok(classify(status, &recorder.read()));
        }
        let now = Instant::now();
        let slots = recorder.read();
        seen.resize(slots.len(), (u64::MAX, now));
        for (slot, record) in slots.iter().enumerate() {
            if !record.in_step || seen[slot].0 != record.steps {
                seen[slot] = (record.steps, now);
            } else if now - seen[slot].1 > step_timeout {
                let _ = process.kill();
                let _ = process.wait();
                let millis = step_timeout.as_millis() as u64;
                return Ok(Supervised::Fault(from_slot(
                    record,
                    FaultKind::Hang(millis),
                )));
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn from_slot(record: &SlotRecord, kind: FaultKind) -> RecordedFault {
    RecordedFault {
        kind,
        action: record.action,
        action_text: None,
        event: String::new(),
        pre_state: record.pre_state.clone(),
    }
}

fn classify(status: ExitStatus, slots: &[SlotRecord]) -> Supervised {
    if let Some(signal) = status.signal() {
        if let Some(record) = slots.iter().find(|record| record.in_step) {
            return Supervised::Fault(from_slot(record, FaultKind::Signal(signal)));
        }
    }
    if status.code() == Some(EXIT_FAULT) {
        if let Some((record, (kind, action, event))) = slots
            .iter()
            .find_map(|record| record.fault.clone().map(|fault| (record, fault)))
        {
            let mut fault = from_slot(record, kind);
            fault.action_text = Some(action);
            fault.event = event;
            return Supervised::Fault(fault);
        }
    }
    Supervised::Finished(status)
}

/// The supervising side of `cmc check --core ...`, in one call: re-runs this
/// executable with the same arguments as a supervised child, and returns the
/// exit code to use. A normal end passes the child's exit code through; a
/// fault is printed to stderr, a replay file of the path to it is written to
/// `replay_path`, and the code is 2.
pub fn check_supervised(
    args: &crate::WorldArgs,
    step_timeout: Duration,
    replay_path: &Path,
) -> i32 {
    let exe = match std::env::current_exe() {
        Ok(exe) => exe,
        Err(e) => {
            eprintln!("cannot find this executable to supervise it: {e}");
            return 2;
        }
    };
    let mut child = Command::new(exe);
    child.args(std::env::args_os().skip(1));
    let recorder = replay_path.with_extension("flight-recorder");
    let outcome = supervise(child, &recorder, step_timeout);
    let _ = std::fs::remove_file(&recorder);
    let recorded = match outcome {
        Ok(Supervised::Finished(status)) => return status.code().unwrap_or(2),
        Ok(Supervised::Fault(recorded)) => recorded,
        Err(problem) => {
            eprintln!("{problem}");
            return 2;
        }
    };
    let world = match crate::build_world(args) {
        Ok(world) => world,
        Err(problem) => {
            eprintln!("{problem}");
            return 2;
        }
    };
    let fault = recorded.into_fault(&world);
    eprint!("{fault}");
    match path_to_fault(&world, &fault) {
        Ok(file) => match std::fs::write(replay_path, file.to_text()) {
            Ok(()) => eprintln!(
                "  trace: {} step(s) to the faulting step, written to {}
  reproduce: cmc replay {} (under gdb: gdb --args cmc replay {})",
                file.actions.len(),
                replay_path.display(),
                replay_path.display(),
                replay_path.display()
            ),
            Err(e) => eprintln!(
                "  cannot write the replay file {}: {e}",
                replay_path.display()
            ),
        },
        Err(problem) => eprintln!("  no replay file: {problem}"),
    }
    2
}

/// The World with one invariant: "this state is not the target".
struct Reach<'a> {
    world: &'a World,
    target: Fingerprint,
}

impl Model for Reach<'_> {
    type State = WorldState;
    type Action = Action;

    fn name(&self) -> String {
        self.world.name()
    }
    fn params(&self) -> Vec<ModelParam> {
        self.world.params()
    }
    fn init_states(&self, out: &mut Vec<WorldState>) {
        self.world.init_states(out)
    }
    fn actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        self.world.actions(state, out)
    }
    fn next_state(&self, state: &WorldState, action: &Action) -> Option<WorldState> {
        self.world.next_state(state, action)
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always(
            "NotFaultPreState",
            |reach: &Reach, state: &WorldState| {
                Fingerprint::of_bytes(&state.to_bytes()) != reach.target
            },
        )]
    }
    fn format_action(&self, action: &Action) -> String {
        self.world.format_action(action)
    }
    fn describe_state(&self, state: &WorldState) -> StateView {
        self.world.describe_state(state)
    }
}

/// A replay file of a shortest path from the initial state to `fault`'s
/// pre-state, followed by the faulting action. `world` must be built like the
/// child's (and without a recorder); the search runs single-worker BFS, which
/// expands only states the child expanded before the fault.
pub fn path_to_fault(world: &World, fault: &Fault) -> Result<ReplayFile, String> {
    let mut file = if fault.pre_state.is_empty() {
        ReplayFile {
            model: world.name(),
            params: world.params(),
            settings: Vec::new(),
            violates: None,
            init: (0, 0),
            actions: Vec::new(),
            model_line: 0,
        }
    } else {
        let reach = Reach {
            world,
            target: fault.pre_state_fingerprint(),
        };
        let outcome = Checker::new(reach).workers(1).check_deadlock(false).run();
        if let Some(again) = world.fault() {
            return Err(format!(
                "a fault happened again while searching for its path:\n{again}"
            ));
        }
        match (&outcome.verdict, &outcome.counterexample) {
            (Verdict::Violated { .. }, Some(path)) => {
                let reach = Reach {
                    world,
                    target: fault.pre_state_fingerprint(),
                };
                ReplayFile::from_counterexample(&reach, path, None)
            }
            _ => {
                return Err(format!(
                    "the faulting step's pre-state ({}) was not reached again: the run is not \
                     reproducible (is the core deterministic? try --check-determinism)",
                    fault.pre_state_fingerprint()
                ))
            }
        }
    };
    if fault.action != "INIT" {
        file.actions.push((0, fault.action.clone()));
    }
    Ok(file)
}
