//! A checkpoint resumes only as the search that made it: the same model,
//! parameters, settings and build; anything else is refused, naming the
//! checkpoint, before a single state is explored.

use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::Duration;

use cmc_model::{Encode, Model, ModelParam, Property};
use cmc_search::{Checker, Verdict};

/// States 0..=length in a line, each with one successor (a wide first
/// level would change nothing here).
struct Line {
    length: u32,
}

#[derive(Clone, Debug, PartialEq, Encode)]
struct At {
    n: u32,
}

impl Model for Line {
    type State = At;
    type Action = ();

    fn name(&self) -> String {
        "line".into()
    }

    fn params(&self) -> Vec<ModelParam> {
        vec![ModelParam::new("LENGTH", self.length.to_string())]
    }

    fn init_states(&self, out: &mut Vec<At>) {
        out.push(At { n: 0 });
    }

    fn actions(&self, _: &At, out: &mut Vec<()>) {
        out.push(());
    }

    fn next_state(&self, state: &At, _: &()) -> Option<At> {
        (state.n < self.length).then(|| At { n: state.n + 1 })
    }

    fn is_terminal(&self, state: &At) -> bool {
        state.n == self.length
    }

    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("bounded", |m: &Line, s: &At| {
            s.n <= m.length
        })]
    }
}

const HOUR: Duration = Duration::from_secs(3600);

/// A checkpoint of `Line { length: 100 }` in `dir`, interrupted after its first level.
fn interrupted_line(dir: &Path) {
    let outcome = Checker::new(Line { length: 100 })
        .workers(1)
        .checkpoint(dir, HOUR)
        .interrupt_on(Arc::new(AtomicBool::new(true)))
        .run();
    assert!(
        matches!(outcome.verdict, Verdict::Interrupted { .. }),
        "{outcome:?}"
    );
}

fn refusal(outcome: cmc_search::Outcome<Line>) -> String {
    match outcome.verdict {
        Verdict::Error { message } => message,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

/// Rewrites the manifest of the checkpoint in `dir` with `edit` applied to
/// its JSON body, and seals it again (as only a deliberate forgery would).
fn forge_manifest(dir: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let path = dir.join("checkpoint/manifest");
    let text = std::fs::read_to_string(&path).unwrap();
    let body = text.trim_end().rsplit_once('\n').unwrap().0;
    let mut manifest: serde_json::Value = serde_json::from_str(body).unwrap();
    edit(&mut manifest);
    let body = serde_json::to_string_pretty(&manifest).unwrap();
    let checksum = xxhash_rust::xxh3::xxh3_128(body.as_bytes());
    std::fs::write(&path, format!("{body}\nxxh3-128 {checksum:032x}\n")).unwrap();
}

#[test]
fn the_same_search_resumes_to_the_uninterrupted_result() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    let resumed = Checker::new(Line { length: 100 })
        .resume(dir.path(), HOUR)
        .run();
    let uninterrupted = Checker::new(Line { length: 100 }).run();
    assert_eq!(resumed.verdict, Verdict::Pass, "{resumed:?}");
    assert_eq!(resumed.stats.distinct_states, 101);
    assert_eq!(
        resumed.stats.states_generated,
        uninterrupted.stats.states_generated
    );
    assert_eq!(resumed.stats.depth, uninterrupted.stats.depth);
}

#[test]
fn other_parameters_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    let message = refusal(
        Checker::new(Line { length: 99 })
            .resume(dir.path(), HOUR)
            .run(),
    );
    assert!(message.contains("not of line"), "{message}");
    assert!(message.contains("checkpoint/manifest"), "{message}");
}

#[test]
fn other_settings_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    let resume = || Checker::new(Line { length: 100 }).resume(dir.path(), HOUR);
    let message = refusal(resume().max_depth(50).run());
    assert!(message.contains("max depth"), "{message}");
    let message = refusal(resume().check_deadlock(false).run());
    assert!(message.contains("deadlock checking"), "{message}");
    let message = refusal(resume().fingerprints_on_disk(true).run());
    assert!(message.contains("--disk-fingerprints"), "{message}");
}

#[test]
fn a_checkpoint_of_another_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    forge_manifest(dir.path(), |manifest| {
        manifest["identity"]["build"] = "00000000000000000000000000000000".into();
    });
    let message = refusal(
        Checker::new(Line { length: 100 })
            .resume(dir.path(), HOUR)
            .run(),
    );
    assert!(message.contains("another build"), "{message}");
}

#[test]
fn a_counter_that_disagrees_with_the_files_is_refused_even_resealed() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    forge_manifest(dir.path(), |manifest| {
        // Counts that fit together, but not the table's file.
        for counter in ["distinct_states", "states_generated"] {
            let value = manifest["counters"][counter].as_u64().unwrap();
            manifest["counters"][counter] = (value + 1).into();
        }
    });
    let message = refusal(
        Checker::new(Line { length: 100 })
            .resume(dir.path(), HOUR)
            .run(),
    );
    assert!(message.contains("checkpoint/table.bin"), "{message}");
}

#[test]
fn counters_that_do_not_fit_together_are_refused_even_resealed() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    forge_manifest(dir.path(), |manifest| {
        manifest["counters"]["distinct_states"] = 1000.into();
    });
    let message = refusal(
        Checker::new(Line { length: 100 })
            .resume(dir.path(), HOUR)
            .run(),
    );
    assert!(message.contains("checkpoint/manifest"), "{message}");
    assert!(message.contains("do not fit together"), "{message}");
}

#[test]
fn a_second_search_on_a_directory_in_use_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    interrupted_line(dir.path());
    // Hold the directory's lock as a running search would.
    let lock = cmc_store::nofollow_files::lock_exclusive(&dir.path().join("lock"))
        .unwrap()
        .expect("no search holds it");
    let message = refusal(
        Checker::new(Line { length: 100 })
            .resume(dir.path(), HOUR)
            .run(),
    );
    assert!(message.contains("in use by another cmc run"), "{message}");
    drop(lock);
    let resumed = Checker::new(Line { length: 100 })
        .resume(dir.path(), HOUR)
        .run();
    assert_eq!(resumed.verdict, Verdict::Pass, "{resumed:?}");
}
