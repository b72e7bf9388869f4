//! A checkpointed search killed at any point resumes to exactly the result of
//! an uninterrupted one.

mod common;

use std::process::Command;
use std::time::Duration;

use common::cmc_command;

fn json(output: &std::process::Output) -> serde_json::Value {
    serde_json::from_str(&String::from_utf8_lossy(&output.stdout)).unwrap_or_else(|e| {
        panic!(
            "no JSON report ({e}): {}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

const RUN: &[&str] = &[
    "check",
    "two-phase",
    "RM=8",
    "--workers",
    "2",
    "--json",
    "--checkpoint",
    "ckpt",
    "--checkpoint-every",
    "0.05",
];
const RESUME: &[&str] = &[
    "check",
    "--resume",
    "ckpt",
    "--workers",
    "2",
    "--json",
    "--checkpoint-every",
    "0.05",
];

#[test]
fn sigkill_at_several_points_then_resume_gives_the_uninterrupted_result() {
    let dir = tempfile::tempdir().unwrap();
    let mut args = RUN;
    for kill_after_ms in [300, 700, 500] {
        let mut child = cmc_command(args, dir.path()).spawn().unwrap();
        std::thread::sleep(Duration::from_millis(kill_after_ms));
        let _ = child.kill(); // SIGKILL; the run may also have finished already
        let _ = child.wait();
        args = RESUME;
    }
    let output = cmc_command(RESUME, dir.path()).output().unwrap();
    assert_eq!(
        output.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let report = json(&output);
    assert_eq!(report["verdict"], "pass");
    assert_eq!(report["distinct_states"], 1_745_408);
    assert_eq!(report["depth"], 26);
    assert_eq!(report["states_generated"], 18_507_778);
}

#[test]
fn sigint_saves_a_checkpoint_and_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let child = cmc_command(&RUN[..RUN.len() - 2], dir.path())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(400));
    let sent = Command::new("kill")
        .args(["-INT", &child.id().to_string()])
        .status()
        .unwrap();
    assert!(sent.success());
    let output = child.wait_with_output().unwrap();
    let report = json(&output);
    if report["verdict"] == "pass" {
        return; // finished before the signal: nothing to resume on this machine
    }
    assert_eq!(output.status.code(), Some(3), "{report}");
    assert_eq!(report["verdict"], "interrupted");
    assert!(
        report["message"].as_str().unwrap().contains("--resume"),
        "{report}"
    );
    let resumed = cmc_command(RESUME, dir.path()).output().unwrap();
    let report = json(&resumed);
    assert_eq!(report["distinct_states"], 1_745_408, "{report}");
    assert_eq!(report["depth"], 26);
}
