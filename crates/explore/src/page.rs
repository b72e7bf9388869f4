//! The explorer's HTML pages: server-rendered, inline CSS, no fetch of
//! anything; the only script fills the replay form from a chosen file (the
//! form works without it, by pasting). Every model text is escaped.

use std::fmt::Write;

use cmc_search::escape_html;

use crate::explorer::{StateStep, Successor, Walk};
use crate::path::TracePath;

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:0;color:#222;background:#fafafa}\
header{background:#2d3e50;color:#fff;padding:.6em 1.5em;display:flex;flex-wrap:wrap;gap:1.5em;align-items:center}\
header h1{font-size:1.15em;margin:0}header a{color:#cfe3ff}header nav{color:#8aa}main{padding:.5em 1.5em 2em;max-width:90em}\
h2{font-size:1.05em;margin:1.4em 0 .4em;border-bottom:1px solid #ddd;padding-bottom:.2em}\
table{border-collapse:collapse;margin:.3em 0;background:#fff}\
td,th{border:1px solid #d4d4d4;padding:.25em .55em;text-align:left;vertical-align:top}\
th{background:#eef1f4;font-weight:600}code,.mono{font-family:ui-monospace,monospace;font-size:.9em}\
a{color:#1a5fb4}.changed td{background:#fff6d5}.before{color:#9b1c1c}.after{color:#1d6b2a}\
.banner{padding:.5em .8em;border-radius:4px;margin:.6em 0;font-weight:600}\
.bad{background:#fbe3e3;color:#8a1c1c}.good{background:#e3f5e1;color:#1d5e1a}.note{background:#fff3d6;color:#6b4a00}\
ol.path{padding-left:2.2em;margin:.3em 0}ol.path li{margin:.1em 0}ol.path li.here{font-weight:700}\
.fp{color:#666;font-size:.8em}.replay{background:#e8f0fb;border:1px solid #b7cbe8;padding:.5em .8em;border-radius:4px}\
.crashed td{background:#fde2e1}.violates{color:#9b1c1c;font-weight:600}\
form{margin:.4em 0}textarea{width:100%;max-width:60em;height:8em;font-family:ui-monospace,monospace}\
input[name=fp]{width:24em;font-family:ui-monospace,monospace}details{margin:.4em 0}\
.chart{overflow-x:auto;background:#fff;border:1px solid #ddd;padding:.3em}\
svg text{font-family:ui-monospace,monospace;font-size:12px}";

/// `body` inside the page frame: header with the model's `title` and the
/// links every page has.
fn layout(title: &str, heading: &str, body: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <title>{} — cmc explore</title>\n<style>{STYLE}</style>\n</head>\n<body>\n\
         <header><h1>cmc explore: <span id=\"model\">{}</span></h1>\
         <nav><a href=\"/\">initial states</a> · <a href=\"#tools\">find a state, load a replay</a></nav>\n\
         </header>\n\
         <main>\n<h2 id=\"heading\">{}</h2>\n{body}{}</main>\n</body>\n</html>\n",
        escape_html(heading),
        escape_html(title),
        escape_html(heading),
        tools()
    )
}

/// The forms at the foot of every page: jump by fingerprint, load a replay.
fn tools() -> String {
    "<h2 id=\"tools\">Tools</h2>\n\
     <form method=\"get\" action=\"/find\"><label>Jump to the state with fingerprint \
     <input name=\"fp\" maxlength=\"32\" placeholder=\"32 hex digits\" required></label> \
     <button>Jump</button></form>\n\
     <form method=\"post\" action=\"/replay\" id=\"replay-form\">\
     <p>Load a replay file (<code>cmc check</code> writes one with every counterexample) \
     and step through it: choose the file, or paste its text.</p>\
     <input type=\"file\" id=\"replay-file\" accept=\".cmc-trace,text/plain\"> \
     <textarea name=\"trace\" id=\"replay-text\" placeholder=\"cmc-replay 2&#10;model ...\" required>\
     </textarea><br><button>Step through it</button></form>\n\
     <script>document.getElementById('replay-file').onchange=function(e){\
     var f=e.target.files[0];if(!f)return;f.text().then(function(t){\
     document.getElementById('replay-text').value=t;});};</script>\n"
        .to_string()
}

/// A link to the state at `path`, keeping `trace` when the path stays on it.
fn href(path: &TracePath, trace: Option<&TracePath>) -> String {
    match trace {
        Some(trace) if path.is_prefix_of(trace) => format!("/?path={path}&amp;trace={trace}"),
        _ => format!("/?path={path}"),
    }
}

/// Most initial states listed on the first page.
const INITIAL_LISTED_MAX: usize = 1000;

/// The page of the initial states (the first [`INITIAL_LISTED_MAX`]), after
/// the model's `fault`, if any.
pub fn initial_page(title: &str, states: &[StateStep], fault: Option<&str>) -> String {
    let mut body = String::new();
    fault_banner(&mut body, fault);
    let _ = writeln!(
        body,
        "<p>The model has {} initial state{}. Choose one to start from.</p>",
        states.len(),
        if states.len() == 1 { "" } else { "s" }
    );
    if states.len() > INITIAL_LISTED_MAX {
        let _ = writeln!(
            body,
            "<p class=\"banner note\">The first {INITIAL_LISTED_MAX} are listed; \
             initial state K is at <code>/?path=K</code>.</p>"
        );
    }
    body.push_str("<ol class=\"initial\" start=\"0\">\n");
    for (index, state) in states.iter().take(INITIAL_LISTED_MAX).enumerate() {
        let _ = writeln!(
            body,
            "<li><a class=\"initial\" href=\"{}\">initial state {index}</a> \
             <span class=\"fp\">{}</span>{}",
            href(&TracePath::at_initial(index), None),
            state.fingerprint,
            violations(&state.violated)
        );
        fields_table(&mut body, &state.view.fields, &[]);
        body.push_str("</li>\n");
    }
    body.push_str("</ol>\n");
    layout(title, "Initial states", &body)
}

/// ` violates A, B` in red, or nothing.
fn violations(violated: &[String]) -> String {
    if violated.is_empty() {
        String::new()
    } else {
        format!(
            " <span class=\"violates\">violates {}</span>",
            escape_html(&violated.join(", "))
        )
    }
}

/// A table of `fields`, the names in `changed` highlighted.
fn fields_table(body: &mut String, fields: &[(String, String)], changed: &[&str]) {
    body.push_str("<table class=\"fields\"><tr><th>field</th><th>value</th></tr>\n");
    for (name, value) in fields {
        let class = if changed.contains(&name.as_str()) {
            " class=\"changed\""
        } else {
            ""
        };
        let _ = writeln!(
            body,
            "<tr{class}><td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>",
            escape_html(name),
            escape_html(value)
        );
    }
    body.push_str("</table>\n");
}

/// The banner of a fault of the code under the model, if there is one.
fn fault_banner(body: &mut String, fault: Option<&str>) {
    if let Some(fault) = fault {
        let _ = writeln!(
            body,
            "<div class=\"banner bad\" id=\"fault\">The code under the model faulted: \
             what is shown cannot be trusted, and nothing can be explored further until \
             cmc explore is started again.<pre>{}</pre></div>",
            escape_html(fault)
        );
    }
}

/// A replay file being stepped through: its path and its actions' texts.
pub struct Replay<'a> {
    /// The whole trace.
    pub trace: &'a TracePath,
    /// The text of each of its actions, in order.
    pub actions: Vec<String>,
}

/// The page of the last state of `path` (`walk`), with the replay being
/// stepped through, if any.
pub fn state_page(title: &str, path: &TracePath, replay: Option<&Replay>, walk: &Walk) -> String {
    let here = walk.steps.last().expect("a walk has a state");
    // Numbered by steps taken, as the chart and the replay bar number them.
    let taken = walk.steps.len() - 1;
    let trace = replay.map(|replay| replay.trace);
    let mut body = String::new();
    fault_banner(&mut body, walk.fault.as_deref());
    if let Some(replay) = replay {
        replay_bar(&mut body, path, replay);
    }
    path_list(&mut body, path, trace, walk);
    let _ = writeln!(
        body,
        "<h2 id=\"state\">State after step {taken} <span class=\"fp\" id=\"fingerprint\">{}</span></h2>",
        here.fingerprint
    );
    status_banner(&mut body, here, walk);
    successors_table(&mut body, path, trace, &walk.successors);
    let changed: Vec<&str> = match walk.steps.len() {
        1 => Vec::new(),
        n => {
            let changes = here.view.changes_since(&walk.steps[n - 2].view);
            here.view
                .fields
                .iter()
                .map(|(name, _)| name.as_str())
                .filter(|name| changes.iter().any(|change| change.field == *name))
                .collect()
        }
    };
    match &walk.sections {
        Some(sections) => {
            body.push_str(sections);
            body.push_str("<details><summary>Every field of the state</summary>\n");
            fields_table(&mut body, &here.view.fields, &changed);
            body.push_str("</details>\n");
        }
        None => {
            body.push_str("<h2>Fields (changed by the last step: highlighted)</h2>\n");
            fields_table(&mut body, &here.view.fields, &changed);
        }
    }
    match &walk.chart {
        Some(Ok(svg)) => {
            let _ = writeln!(
                body,
                "<h2>Message sequence chart</h2>\n<div class=\"chart\" id=\"chart\">{svg}</div>"
            );
        }
        Some(Err(problem)) => {
            let _ = writeln!(
                body,
                "<h2>Message sequence chart</h2>\n<p class=\"banner bad\">Cannot draw it: {}</p>",
                escape_html(problem)
            );
        }
        None => {}
    }
    let heading = match &here.action {
        Some(action) => format!("Step {taken}: {action}"),
        None => format!("Initial state {}", path.init),
    };
    layout(title, &heading, &body)
}

/// Where the replay stands, with links to its previous and next steps.
fn replay_bar(body: &mut String, path: &TracePath, replay: &Replay) {
    let trace = replay.trace;
    let at = path.steps.len();
    let total = trace.steps.len();
    let _ = write!(
        body,
        "<div class=\"replay\" id=\"replay\">Replay: step <b>{at}</b> of {total}. "
    );
    if at > 0 {
        let _ = write!(
            body,
            "<a id=\"replay-previous\" href=\"{}\">&larr; previous</a> ",
            href(&trace.prefix(at - 1), Some(trace))
        );
    }
    match replay.actions.get(at) {
        Some(next) => {
            let _ = write!(
                body,
                "<a id=\"replay-next\" href=\"{}\">next &rarr; <code>{}</code></a> ",
                href(&trace.prefix(at + 1), Some(trace)),
                escape_html(next)
            );
        }
        None => body.push_str("This is its last state. "),
    }
    let _ = writeln!(
        body,
        "<a href=\"{}\">(leave the replay)</a></div>",
        href(path, None)
    );
}

/// The states of the path so far, each a link back to it.
fn path_list(body: &mut String, path: &TracePath, trace: Option<&TracePath>, walk: &Walk) {
    body.push_str("<h2>Path</h2>\n<ol class=\"path\" id=\"path\" start=\"0\">\n");
    let last = walk.steps.len() - 1;
    for (at, step) in walk.steps.iter().enumerate() {
        let label = match &step.action {
            Some(action) => format!("<code class=\"action\">{}</code>", escape_html(action)),
            None => format!("initial state {}", path.init),
        };
        if at == last {
            let _ = writeln!(
                body,
                "<li class=\"here\">{label}{}</li>",
                violations(&step.violated)
            );
        } else {
            let _ = writeln!(
                body,
                "<li><a href=\"{}\">{label}</a>{}</li>",
                href(&path.prefix(at), trace),
                violations(&step.violated)
            );
        }
    }
    body.push_str("</ol>\n");
    if last > 0 {
        let _ = writeln!(
            body,
            "<p><a id=\"back\" href=\"{}\">&larr; back one step</a></p>",
            href(&path.prefix(last - 1), trace)
        );
    }
}

/// Violations, deadlock or legitimate end of the current state.
fn status_banner(body: &mut String, here: &StateStep, walk: &Walk) {
    if !here.violated.is_empty() {
        let _ = writeln!(
            body,
            "<div class=\"banner bad\" id=\"violated\">This state violates {}.</div>",
            escape_html(&here.violated.join(", "))
        );
    }
    if walk.successors.is_empty() && walk.fault.is_none() {
        if walk.terminal {
            body.push_str(
                "<div class=\"banner good\" id=\"end\">No action is enabled: \
                 the model calls this state a legitimate end.</div>\n",
            );
        } else {
            body.push_str(
                "<div class=\"banner bad\" id=\"end\">No action is enabled: a deadlock.</div>\n",
            );
        }
    }
}

/// The enabled actions, each a link, with the fields it changes.
fn successors_table(
    body: &mut String,
    path: &TracePath,
    trace: Option<&TracePath>,
    successors: &[Successor],
) {
    let _ = writeln!(
        body,
        "<h2>Enabled actions ({})</h2>\n<table id=\"actions\">\
         <tr><th>#</th><th>action</th><th>what it changes</th><th>leads to</th></tr>",
        successors.len()
    );
    for (index, successor) in successors.iter().enumerate() {
        let mut changes = String::new();
        for change in &successor.changes {
            let _ = write!(
                changes,
                "<div><span class=\"mono\">{}</span>: <span class=\"mono before\">{}</span> \
                 &rarr; <span class=\"mono after\">{}</span></div>",
                escape_html(&change.name),
                escape_html(change.before.as_deref().unwrap_or("(absent)")),
                escape_html(change.after.as_deref().unwrap_or("(absent)"))
            );
        }
        if changes.is_empty() {
            changes.push_str("(no field changes)");
        }
        let _ = writeln!(
            body,
            "<tr><td>{index}</td><td><a class=\"action\" href=\"{}\"><code>{}</code></a></td>\
             <td>{changes}</td><td><span class=\"fp\">{}</span>{}</td></tr>",
            href(&path.child(index), trace),
            escape_html(&successor.action),
            successor.fingerprint,
            violations(&successor.violates)
        );
    }
    body.push_str("</table>\n");
}

/// A page saying why a request could not be served.
pub fn error_page(title: &str, heading: &str, message: &str) -> String {
    let body = format!(
        "<div class=\"banner bad\" id=\"error\">{}</div>\n<p><a href=\"/\">Back to the initial states</a></p>\n",
        escape_html(message)
    );
    layout(title, heading, &body)
}
