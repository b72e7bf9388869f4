//! Symmetry never changes a verdict of the reference gate: every
//! configuration of `crates/protocols/gate.toml` that declares `symmetry=`
//! is checked with it on and off, control and planted bugs, as the gate runs
//! them (`--check-determinism`, its deadlock setting), and must give the
//! same verdict, property and counterexample length. The searches are
//! bounded at [`DEPTH_CAP`] levels (or the variant's own bound, if lower) to
//! keep the test to seconds; the states of both runs are printed
//! (`--nocapture`).

mod common;

use common::{cmc, repository, text};

/// The deepest level searched (BFS levels are the same with and without
/// symmetry, so the comparison is exact at any bound).
const DEPTH_CAP: u64 = 11;

/// One check of the gate's: its core argument, nodes, params and flags.
struct Run {
    core: String,
    nodes: i64,
    params: Vec<String>,
    depth: u64,
    deadlock: bool,
}

/// What a check reported: verdict, property, counterexample length, states.
type Report = (String, Option<String>, Option<u64>, u64);

fn check(run: &Run, symmetry: &str) -> Report {
    let mut args: Vec<String> = vec![
        "check".into(),
        "--core".into(),
        run.core.clone(),
        "--nodes".into(),
        run.nodes.to_string(),
    ];
    args.extend(
        run.params
            .iter()
            .filter(|param| !param.starts_with("symmetry="))
            .cloned(),
    );
    args.push(format!("symmetry={symmetry}"));
    args.extend(["--json", "--check-determinism", "--progress", "off"].map(String::from));
    args.extend(["--workers".into(), "2".into()]);
    args.extend(["--max-depth".into(), run.depth.to_string()]);
    // A violation's replay file goes to a directory of its own, not into
    // the source tree the check runs in.
    let replays = tempfile::tempdir().unwrap();
    let replay = replays.path().join("violation.cmc-trace");
    args.extend(["--replay-out".into(), replay.display().to_string()]);
    if !run.deadlock {
        args.push("--no-deadlock".into());
    }
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let output = cmc(&args, &repository());
    let (stdout, stderr) = text(&output);
    let json: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|_| panic!("{args:?}: no report: {stdout}{stderr}"));
    (
        json["verdict"].as_str().unwrap_or_default().to_string(),
        json["property"].as_str().map(str::to_string),
        json["counterexample"]["length"].as_u64(),
        json["distinct_states"].as_u64().unwrap_or(0),
    )
}

/// The runs of every configuration of the reference gate that declares
/// symmetry: its control and each planted bug.
fn symmetric_runs() -> Vec<(String, Option<String>, Run)> {
    let path = repository().join("crates/protocols/gate.toml");
    let gate: toml::Value = std::fs::read_to_string(&path).unwrap().parse().unwrap();
    let mut runs = Vec::new();
    for core in gate["core"].as_array().unwrap() {
        let params: Vec<String> = core["params"]
            .as_array()
            .unwrap()
            .iter()
            .map(|param| param.as_str().unwrap().to_string())
            .collect();
        let declared = params
            .iter()
            .any(|param| param.starts_with("symmetry=") && param != "symmetry=off");
        if !declared {
            continue;
        }
        let name = core["name"].as_str().unwrap();
        // A configuration built from C would need its build here too.
        let rust = core
            .get("rust")
            .and_then(|rust| rust.as_str())
            .unwrap_or_else(|| panic!("{name}: a C configuration with symmetry: run it here"));
        let depth = |table: &toml::Value| {
            table
                .get("max_depth")
                .and_then(|depth| depth.as_integer())
                .map_or(DEPTH_CAP, |depth| (depth as u64).min(DEPTH_CAP))
        };
        let run = |core_arg: String, table: &toml::Value| Run {
            core: core_arg,
            nodes: core["nodes"].as_integer().unwrap(),
            params: params.clone(),
            depth: depth(table),
            deadlock: core
                .get("deadlock")
                .and_then(|d| d.as_bool())
                .unwrap_or(true),
        };
        runs.push((
            format!("{name} control"),
            None,
            run(format!("rust:{rust}"), core),
        ));
        for bug in core["bug"].as_array().into_iter().flatten() {
            let number = bug["bug"].as_integer().unwrap();
            let expect = bug["expect"].as_str().map(str::to_string);
            let core_arg = format!("rust:{rust}-bug{number}");
            runs.push((format!("{name} bug{number}"), expect, run(core_arg, bug)));
        }
    }
    runs
}

#[test]
fn every_gate_configuration_with_symmetry_gives_the_same_verdicts_without_it() {
    let runs = symmetric_runs();
    assert!(runs.len() >= 7, "the reference gate's abd configurations");
    let mut caught = 0;
    for (name, expect, run) in &runs {
        let symmetry = run
            .params
            .iter()
            .find_map(|param| param.strip_prefix("symmetry="))
            .unwrap();
        let on = check(run, symmetry);
        let off = check(run, "off");
        println!(
            "{name} (depth {}): {} / {:?}, {} states with symmetry={symmetry}, {} without",
            run.depth, on.0, on.1, on.3, off.3
        );
        assert_eq!(
            (&on.0, &on.1, on.2),
            (&off.0, &off.1, off.2),
            "{name}: symmetry changed the verdict"
        );
        assert!(on.0 == "pass" || on.0 == "violated", "{name}: {on:?}");
        if on.0 == "violated" {
            assert_eq!(&on.1, expect, "{name}");
            caught += 1;
        }
        assert!(on.3 < off.3, "{name}: symmetry reduces the states");
    }
    assert!(caught >= 2, "some planted bugs are caught within the bound");
}
