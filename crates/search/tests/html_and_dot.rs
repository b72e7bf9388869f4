//! The HTML report and the DOT graph of a model whose name, state
//! descriptions and actions are markup and quotes: everything comes out
//! escaped, nothing is interpreted.

use cmc_model::{Model, Property, StateView};
use cmc_search::test_support::Count;
use cmc_search::{AnyModel, SearchOptions};

const HOSTILE_NAME: &str = "<script>alert(\"name\")</script>";

/// A counter to 3 whose every text is markup; `Below3` fails at 3.
struct Hostile;

impl Model for Hostile {
    type State = Count;
    type Action = u8;

    fn name(&self) -> String {
        HOSTILE_NAME.into()
    }
    fn init_states(&self, out: &mut Vec<Count>) {
        out.push(Count { value: 0 })
    }
    fn actions(&self, state: &Count, out: &mut Vec<u8>) {
        if state.value < 3 {
            out.push(1)
        }
    }
    fn next_state(&self, state: &Count, step: &u8) -> Option<Count> {
        Some(Count {
            value: state.value + step,
        })
    }
    fn format_action(&self, _: &u8) -> String {
        "<img src=x onerror=\"go\">".into()
    }
    fn describe_state(&self, state: &Count) -> StateView {
        StateView::new().text("<b>value</b>", format!("\"{}\" & <i>", state.value))
    }
    fn properties(&self) -> Vec<Property<Self>> {
        vec![Property::always("Below3", |_: &Hostile, state: &Count| {
            state.value < 3
        })]
    }
}

#[test]
fn every_model_text_is_escaped_in_the_html_report() {
    let report = Hostile.check(&SearchOptions {
        workers: 1,
        ..SearchOptions::default()
    });
    assert_eq!(report.verdict, "violated");
    let page = report.render_html(None);
    for raw in ["<script>", "<img", "<b>", "<i>", "onerror=\"go\""] {
        assert!(!page.contains(raw), "{raw} must be escaped");
    }
    assert!(page.contains("&lt;script&gt;alert(&quot;name&quot;)&lt;/script&gt;"));
    assert!(page.contains("&lt;img src=x onerror=&quot;go&quot;&gt;"));
    assert!(page.contains("&lt;b&gt;value&lt;/b&gt;"));
    assert!(page.contains("&quot;3&quot; &amp; &lt;i&gt;"));
}

#[test]
fn quotes_in_names_and_labels_stay_inside_dot_strings() {
    let dot = Hostile.state_graph_dot(10, None).unwrap();
    assert!(dot.starts_with("digraph \"<script>alert(\\\"name\\\")</script>\" {"));
    assert!(dot.contains("label=\"<img src=x onerror=\\\"go\\\">\""));
    // 4 states, 3 edges; every quote inside a label is escaped, so the
    // unescaped quotes of each statement pair up.
    assert_eq!(dot.matches(" -> ").count(), 3);
    for line in dot.lines() {
        let bare_quotes = line.replace("\\\"", "").matches('"').count();
        assert_eq!(bare_quotes % 2, 0, "{line}");
    }
    assert_eq!(
        Hostile.state_graph_dot(3, None).unwrap_err(),
        cmc_search::DotError::TooManyStates { max_states: 3 }
    );
}

/// The advice to resume an interrupted run names the front end running it
/// (a user's own program), not `cmc`.
#[test]
fn an_interrupted_run_says_how_to_resume_in_the_program_running_it() {
    let dir = tempfile::tempdir().unwrap();
    let checkpoint = dir.path().join("ckpt");
    let mut report = Hostile.check(&SearchOptions {
        workers: 1,
        checkpoint: Some(cmc_search::CheckpointOptions {
            dir: checkpoint.clone(),
            interval: std::time::Duration::from_secs(3600),
            resume: false,
            overwrite: false,
        }),
        interrupt: Some(std::sync::Arc::new(true.into())),
        ..SearchOptions::default()
    });
    assert_eq!(report.verdict, "interrupted", "{:?}", report.message);
    report.name_program("mycheck");
    let expected = format!(
        "resume with: mycheck check --resume {}",
        checkpoint.display()
    );
    let message = report.message.unwrap();
    assert!(message.ends_with(&expected), "{message}");
}
