//! The whole planted-bug gate, at the bounds CI runs.

use cmc_protocols::gate::{run_gate, GateOptions};

#[test]
fn every_control_passes_and_every_planted_bug_is_caught() {
    let evidence = std::env::temp_dir().join(format!("cmc-protocols-gate-{}", std::process::id()));
    let report = run_gate(&evidence, GateOptions::default());
    let holes: Vec<String> = report.holes().map(|line| line.render()).collect();
    assert!(holes.is_empty(), "gate holes:\n{}", holes.join("\n"));
    for line in report.lines.iter().filter(|line| line.variant != "control") {
        let path = line.evidence.as_ref().expect("a caught bug has evidence");
        let text = std::fs::read_to_string(path).unwrap();
        assert!(
            text.contains(&format!("violates {}", line.expected)),
            "{text}"
        );
    }
    let _ = std::fs::remove_dir_all(&evidence);
}
