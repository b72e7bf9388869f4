//! The C team's example (`examples/c-lease`), run as its README tells a C
//! team to: through the `cmc` binary only, with its own gate file. Every
//! planted bug of `lease.c` is in the gate and caught by its expected
//! property; each control passes.

mod common;

use std::collections::BTreeSet;
use std::path::PathBuf;

use common::{cmc, repository, text};

fn example() -> PathBuf {
    repository().join("examples/c-lease")
}

/// The numbers `n` of the `#if CMC_BUG == n` blocks of `source`.
fn planted_bugs(source: &str) -> BTreeSet<u32> {
    source
        .match_indices("CMC_BUG == ")
        .filter_map(|(at, found)| {
            let rest = &source[at + found.len()..];
            let digits: String = rest.chars().take_while(char::is_ascii_digit).collect();
            digits.parse().ok()
        })
        .collect()
}

#[test]
fn every_planted_bug_of_the_lease_is_gated() {
    let source = std::fs::read_to_string(example().join("lease.c")).unwrap();
    let gate = std::fs::read_to_string(example().join("gate.toml")).unwrap();
    let gated: BTreeSet<u32> = gate
        .lines()
        .filter_map(|line| line.trim().strip_prefix("bug = "))
        .map(|n| n.trim().parse().unwrap())
        .collect();
    assert_eq!(planted_bugs(&source), BTreeSet::from([1, 2, 3]));
    assert_eq!(gated, planted_bugs(&source));
}

#[test]
fn the_lease_gate_passes_its_controls_and_catches_every_planted_bug() {
    let evidence = tempfile::tempdir().unwrap();
    let gate = example().join("gate.toml");
    let output = cmc(
        &[
            "gate",
            gate.to_str().unwrap(),
            "--evidence",
            evidence.path().to_str().unwrap(),
            "--workers",
            "2",
        ],
        &example(),
    );
    let (stdout, stderr) = text(&output);
    assert_eq!(output.status.code(), Some(0), "{stdout}{stderr}");
    let expected = [
        ("lease", "control", "-", "PASS"),
        ("lease", "bug2", "OneLeaseHolder", "CAUGHT"),
        ("lease", "bug3", "RepliedIsWritten", "CAUGHT"),
        ("lease_liveness", "control", "-", "PASS"),
        ("lease_liveness", "bug1", "Quiescence", "CAUGHT"),
    ];
    for (core, variant, property, verdict) in expected {
        let line = stdout
            .lines()
            .find(|line| line.split_whitespace().take(2).eq([core, variant]))
            .unwrap_or_else(|| panic!("no line for {core} {variant} in:\n{stdout}"));
        let words: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(&words[2..4], [property, verdict], "{line}");
    }
    assert!(stdout.contains("gate: no holes"), "{stdout}");
    // The evidence of a caught bug replays through the same library.
    let trace = evidence.path().join("lease-bug2.cmc-trace");
    let replay = cmc(&["replay", trace.to_str().unwrap()], evidence.path());
    let (stdout, stderr) = text(&replay);
    assert_eq!(replay.status.code(), Some(1), "{stdout}{stderr}");
    assert!(
        stderr.contains("Invariant OneLeaseHolder is violated")
            || stdout.contains("VIOLATED OneLeaseHolder"),
        "{stdout}{stderr}"
    );
}
