//! The World rows: cores composed with the hostile environment,
//! checked by cmc's BFS, in the configurations the World's tests and the
//! reference gate use.

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use cmc_search::Checker;
use cmc_world::example_cores::reqack::{self, ReqAck};
use cmc_world::{World, WorldSpec};

use crate::sample::Sample;

/// A World configuration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WorldCase {
    /// The built-in request/acknowledge core, 3 nodes, as
    /// `crates/world/examples/throughput.rs` runs it.
    ReqAck,
    /// Two-phase commit in C (`cmc-protocols`), the gate's control
    /// configuration: 3 nodes, one request, a crash and a restart.
    TwoPhaseC,
    /// Paxos in Rust (`cmc-protocols`), the gate's control configuration:
    /// 5 nodes, a crash and a restart among the servers, depth 16.
    Paxos,
    /// ABD in Rust with its linearizability history (`cmc-protocols`), the
    /// gate's control configuration: 5 nodes, a write and a read, a replica
    /// crash and restart, symmetric replicas, depth 17.
    Abd,
    /// The C reqack core with its properties written in C
    /// (`cores/reqack/reqack.c` and `cores/test/reqack_props.c`, compiled
    /// into one library by the job), in reqack's configuration: what a team
    /// checking its own C core with its own properties runs.
    ReqAckCProperties,
}

/// Every World configuration, in table order.
pub const WORLD_CASES: [WorldCase; 5] = [
    WorldCase::ReqAck,
    WorldCase::TwoPhaseC,
    WorldCase::Paxos,
    WorldCase::Abd,
    WorldCase::ReqAckCProperties,
];

impl WorldCase {
    /// The word naming the case on a child's command line.
    pub fn word(self) -> &'static str {
        match self {
            WorldCase::ReqAck => "reqack",
            WorldCase::TwoPhaseC => "two-phase-c",
            WorldCase::Paxos => "paxos",
            WorldCase::Abd => "abd",
            WorldCase::ReqAckCProperties => "reqack-c-properties",
        }
    }

    /// The case a command-line word names.
    pub fn from_word(word: &str) -> Option<WorldCase> {
        WORLD_CASES.into_iter().find(|case| case.word() == word)
    }

    /// The configuration as the table shows it.
    pub fn params(self) -> String {
        let (nodes, params, depth) = self.configuration();
        let depth = depth.map_or(String::new(), |depth| format!(" max-depth={depth}"));
        format!("{} nodes {}{depth}", nodes, params.join(" "))
    }

    /// Nodes, World parameters and depth bound.
    fn configuration(self) -> (usize, &'static [&'static str], Option<u64>) {
        match self {
            WorldCase::ReqAck | WorldCase::ReqAckCProperties => (
                3,
                &[
                    "requests=2",
                    "dups=1",
                    "crashes=1",
                    "restarts=1",
                    "crash_nodes=1",
                ],
                None,
            ),
            WorldCase::TwoPhaseC => (3, &["requests=1", "crashes=1", "restarts=1"], None),
            WorldCase::Paxos => (
                5,
                &["crash_nodes=0,1,2", "crashes=1", "restarts=1"],
                Some(16),
            ),
            WorldCase::Abd => (
                5,
                &[
                    "requests=2",
                    "crash_nodes=0,1,2",
                    "crashes=1",
                    "restarts=1",
                    "symmetry=0,1,2",
                ],
                Some(17),
            ),
        }
    }

    /// The depth bound the configuration is checked with, if any.
    pub(crate) fn max_depth(self) -> Option<u64> {
        self.configuration().2
    }

    /// The World with its properties.
    pub(crate) fn world(self) -> Result<World, String> {
        let (nodes, params, _) = self.configuration();
        match self {
            WorldCase::ReqAck => {
                let mut spec = WorldSpec::new(Arc::new(ReqAck::default()), nodes)?;
                spec.set_all(params)?;
                Ok(World::new(spec).with_properties(reqack::properties()))
            }
            WorldCase::TwoPhaseC => cmc_protocols::two_phase::world(0, nodes, params),
            WorldCase::Paxos => cmc_protocols::paxos::properties::world(0, nodes, params),
            WorldCase::Abd => cmc_protocols::abd::properties::world(0, nodes, params),
            WorldCase::ReqAckCProperties => cmc_world::build_world(&cmc_world::WorldArgs {
                cores: vec![reqack_c_properties_library()?],
                nodes,
                params: params.iter().map(|param| param.to_string()).collect(),
                check_determinism: false,
            }),
        }
    }

    /// The `--core` argument that names the case's core to the `cmc`
    /// command, and the parameters it needs before the configuration's
    /// (ABD's clients, which `symmetry=` checks when it is set).
    fn command_core(self) -> Result<(String, &'static [&'static str]), String> {
        Ok(match self {
            WorldCase::ReqAck => ("rust:reqack".into(), &[]),
            WorldCase::TwoPhaseC => (
                cmc_protocols::two_phase::library(0).display().to_string(),
                &[],
            ),
            WorldCase::Paxos => ("rust:paxos".into(), &[]),
            WorldCase::Abd => ("rust:abd".into(), &["clients=3,4"]),
            WorldCase::ReqAckCProperties => (reqack_c_properties_library()?, &[]),
        })
    }

    /// Whether a state without enabled actions is checked as a deadlock
    /// (as the World's tests and the gate do).
    fn check_deadlock(self) -> bool {
        matches!(self, WorldCase::ReqAck | WorldCase::ReqAckCProperties)
    }
}

/// Checks `case` with cmc's BFS on `workers` workers, in this process (the
/// library path: no supervising parent; C cores run guarded).
pub fn check(case: WorldCase, workers: usize) -> Sample {
    let world = case
        .world()
        .unwrap_or_else(|problem| panic!("cannot build the World {}: {problem}", case.word()));
    let mut checker = Checker::new(world)
        .workers(workers)
        .check_deadlock(case.check_deadlock());
    if let Some(depth) = case.max_depth() {
        checker = checker.max_depth(depth);
    }
    crate::cmc::run(checker)
}

/// Checks `case` with `workers` workers through the `cmc check --core`
/// command (the `cmc` binary beside this one): the search runs in a
/// supervised child, as for a user's own cores. The wall time is the whole
/// command's; the peak RSS the largest of its processes'.
pub fn check_command(case: WorldCase, workers: usize) -> Sample {
    let failed = |wall: Duration, why: String| {
        eprintln!("cmc-bench: cmc check on the World {}: {why}", case.word());
        Sample::failed(wall)
    };
    let cmc = match std::env::current_exe() {
        Ok(exe) => exe.with_file_name("cmc"),
        Err(problem) => {
            return failed(
                Duration::ZERO,
                format!("cannot find this program: {problem}"),
            )
        }
    };
    if !cmc.is_file() {
        return failed(
            Duration::ZERO,
            format!(
                "no {} (build it first: cargo build --release -p cmc-cli)",
                cmc.display()
            ),
        );
    }
    let (nodes, params, depth) = case.configuration();
    let (core, leading) = match case.command_core() {
        Ok(core) => core,
        Err(problem) => return failed(Duration::ZERO, problem),
    };
    let mut command = Command::new(&cmc);
    command
        .args(["check", "--core", &core, "--nodes", &nodes.to_string()])
        .args(leading)
        .args(params)
        .args([
            "--workers",
            &workers.to_string(),
            "--json",
            "--progress",
            "off",
        ]);
    if let Some(depth) = depth {
        command.args(["--max-depth", &depth.to_string()]);
    }
    if !case.check_deadlock() {
        command.arg("--no-deadlock");
    }
    let started = Instant::now();
    let output = command
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output();
    let wall = started.elapsed();
    let output = match output {
        Ok(output) if output.status.success() => output,
        Ok(output) => return failed(wall, format!("cmc ended with {}", output.status)),
        Err(problem) => return failed(wall, format!("cannot run {}: {problem}", cmc.display())),
    };
    let report: serde_json::Value = match serde_json::from_slice(&output.stdout) {
        Ok(report) => report,
        Err(problem) => return failed(wall, format!("its report is not JSON: {problem}")),
    };
    let count = |key: &str| report[key].as_u64().unwrap_or(0);
    Sample {
        distinct: count("distinct_states"),
        generated: count("states_generated"),
        depth: count("depth"),
        wall,
        table_bytes: count("table_bytes"),
        peak_rss_bytes: children_peak_rss_bytes(),
        verdict: report["verdict"].as_str().unwrap_or("error").into(),
    }
}

/// The largest peak resident set of the processes this one has waited for
/// (and of theirs), in bytes.
fn children_peak_rss_bytes() -> u64 {
    let usage = crate::measure::children_usage();
    u64::try_from(usage.ru_maxrss).unwrap_or(0) * 1024
}

/// The library [`reqack_c_properties_library`] built, or why it could not.
static BUILT_LIBRARY: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();

/// Compiles the C reqack core and its C properties into one library in the
/// temporary directory (once per process: a job's child checks one World),
/// and returns its path. The file is removed when the child ends
/// ([`remove_built_library`]).
fn reqack_c_properties_library() -> Result<String, String> {
    BUILT_LIBRARY
        .get_or_init(|| {
            let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
            let out = std::env::temp_dir().join(format!(
                "cmc-bench-reqack-c-properties-{}.so",
                std::process::id()
            ));
            let compiler = std::env::var("CC").unwrap_or_else(|_| "cc".into());
            let status = Command::new(&compiler)
                .args(["-O2", "-shared", "-fPIC", "-I"])
                .arg(root.join("include"))
                .arg("-I")
                .arg(root.join("cores/reqack"))
                .arg(root.join("cores/reqack/reqack.c"))
                .arg(root.join("cores/test/reqack_props.c"))
                .arg("-o")
                .arg(&out)
                .status()
                .map_err(|problem| format!("cannot run the C compiler `{compiler}`: {problem}"))?;
            if !status.success() {
                return Err(format!(
                    "`{compiler}` failed on the C reqack core: {status}"
                ));
            }
            Ok(out.display().to_string())
        })
        .clone()
}

/// Removes the library [`reqack_c_properties_library`] built, if it did (a
/// loaded library stays mapped).
pub fn remove_built_library() {
    if let Some(Ok(path)) = BUILT_LIBRARY.get() {
        let _ = std::fs::remove_file(path);
    }
}
