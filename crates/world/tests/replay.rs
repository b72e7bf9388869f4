//! A counterexample of the example under a planted bug, found with the C core
//! loaded from its `.so`, replays through the same `.so`.

mod common;

use cmc_search::{Checker, ReplayFile, Verdict};
use cmc_world::report::replay;
use cmc_world::{build_world, WorldArgs};

fn args(core: &str) -> WorldArgs {
    WorldArgs {
        cores: vec![common::fixture(core).display().to_string()],
        nodes: 2,
        params: ["requests=1", "crashes=1", "restarts=1", "crash_nodes=1"]
            .map(String::from)
            .to_vec(),
        check_determinism: true,
    }
}

#[test]
fn planted_bug_counterexample_replays_through_the_so() {
    let checker = Checker::new(build_world(&args("libreqack_bug2.so")).unwrap()).workers(2);
    let outcome = checker.run();
    assert_eq!(
        outcome.verdict,
        Verdict::Violated {
            property: "AckedIsDurable".into(),
            kind: cmc_search::ViolationKind::Invariant
        }
    );
    let counterexample = outcome.counterexample.unwrap();
    let file =
        ReplayFile::from_counterexample(checker.model(), &counterexample, Some("AckedIsDurable"));
    let file = ReplayFile::parse(&file.to_text()).unwrap();

    let world = build_world(&args("libreqack_bug2.so")).unwrap();
    let text = replay::run(&world, &file).unwrap();
    println!("{text}");
    assert!(text.contains("event   n1 RECV from n0 DATA(r=0)"), "{text}");
    assert!(text.contains("output  SEND to n0 ACK(r=0)"), "{text}");
    assert!(
        text.contains("receiver stored=0x0 flushing=0x1"),
        "the core's own description: {text}"
    );
    assert!(text.contains("changed n1"), "per-step diff: {text}");
    assert!(
        text.trim_end()
            .lines()
            .any(|l| l.contains("|<-") && l.contains("ACK(r=0)")),
        "chart: {text}"
    );
    let (trace, _chart) = text.split_once("message sequence chart:").unwrap();
    let last_step = trace.rsplit("\nstep ").next().unwrap();
    assert!(last_step.contains("VIOLATED AckedIsDurable"), "{last_step}");

    // The same file does not fit another World.
    let other = build_world(&args("libreqack.so")).unwrap();
    assert!(replay::run(&other, &file).unwrap_err().contains("trace of"));
}

/// The product links the same `reqack.o` that the purity gate checks and runs
/// it over UDP on loopback.
#[test]
fn the_product_runs_the_checked_object_over_udp() {
    let dir = std::env::temp_dir().join(format!("cmc-world-product-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let product = common::fixture("reqack_udp");
    let output = std::process::Command::new(product)
        .args(["3", "3", dir.to_str().unwrap()])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for request in 0..3 {
        assert!(
            stdout.contains(&format!("reply r{request} OK from node 0")),
            "{stdout}"
        );
    }
    // Each receiver durably stored all three requests (bits 0..2 of `stored` at offset 4).
    for node in 1..3 {
        let durable = std::fs::read(dir.join(format!("node{node}.dat"))).unwrap();
        assert_eq!(durable[4..8], [0b111, 0, 0, 0], "node {node}");
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn world_args_come_back_from_a_replay_file() {
    let world = build_world(&args("libreqack.so")).unwrap();
    let file = ReplayFile::parse(
        &ReplayFile {
            model: cmc_model::Model::name(&world),
            params: cmc_model::Model::params(&world),
            settings: Vec::new(),
            violates: None,
            init: (0, 0),
            actions: Vec::new(),
            model_line: 0,
        }
        .to_text(),
    )
    .unwrap();
    let again = WorldArgs::from_params(&file.params).unwrap();
    assert_eq!(again.cores, args("libreqack.so").cores);
    assert_eq!(again.nodes, 2);
    let rebuilt = build_world(&again).unwrap();
    assert_eq!(cmc_model::Model::params(&rebuilt), file.params);
}
