//! A [`Report`] as one self-contained HTML page: inline CSS, no script, no
//! fetch of anything, so it opens the same with or without a network.
//!
//! Every text that comes from a model (its name, parameters, actions, state
//! descriptions, explanations) goes through [`escape_html`].

use std::fmt::Write;

use crate::report::{CoverageReport, WalksReport};
use crate::{CounterexampleReport, Report};

/// `text` with the five characters that are special in HTML text and
/// attribute values replaced by their entities.
///
/// Hand-written (five replacements) rather than another dependency.
pub fn escape_html(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for ch in text.chars() {
        match ch {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            _ => escaped.push(ch),
        }
    }
    escaped
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em;max-width:70em;color:#222}\
h1{font-size:1.4em}h2{font-size:1.15em;margin-top:1.6em}\
table{border-collapse:collapse;margin:.5em 0}td,th{border:1px solid #ccc;padding:.25em .6em;text-align:left;vertical-align:top}\
th{background:#f3f3f3}code,pre,.mono{font-family:ui-monospace,monospace;font-size:.92em}\
.verdict{font-weight:bold;padding:.5em .8em;border-radius:4px;display:inline-block}\
.pass{background:#e3f5e1;color:#1d5e1a}.fail{background:#fbe3e3;color:#8a1c1c}.other{background:#fff3d6;color:#6b4a00}\
.before{color:#8a1c1c}.after{color:#1d5e1a}.step{margin:1em 0;padding:.4em .8em;border-left:3px solid #99c}\
.step h3{font-size:1em;margin:.2em 0}svg text{font-family:ui-monospace,monospace;font-size:12px}";

impl Report {
    /// The report as a self-contained HTML page; `chart_svg`: an inline
    /// `<svg>` message sequence chart of the counterexample (a World's),
    /// already escaped by its renderer.
    pub fn render_html(&self, chart_svg: Option<&str>) -> String {
        let mut page = String::new();
        let title = format!("cmc: {} — {}", self.model, self.verdict);
        let _ = write!(
            page,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n",
            escape_html(&title)
        );
        let _ = writeln!(page, "<h1>cmc report: {}</h1>", escape_html(&self.model));
        self.html_verdict(&mut page);
        self.html_summary(&mut page);
        self.html_properties(&mut page);
        if let Some(walks) = &self.walks {
            html_walks(&mut page, walks);
        }
        if let Some(coverage) = &self.coverage {
            html_coverage(&mut page, coverage);
        }
        if let Some(counterexample) = &self.counterexample {
            html_counterexample(&mut page, counterexample);
        }
        if let Some(explanation) = &self.explanation {
            let _ = writeln!(
                page,
                "<h2>Why the last {} violates it</h2>\n<pre>{}</pre>",
                self.violated_by(),
                escape_html(explanation)
            );
        }
        if let Some(svg) = chart_svg {
            let _ = writeln!(page, "<h2>Message sequence chart</h2>\n{svg}");
        }
        page.push_str("</body>\n</html>\n");
        page
    }

    /// The verdict line, worded as the text report words it.
    fn html_verdict(&self, page: &mut String) {
        let class = match self.verdict.as_str() {
            "pass" if self.complete => "pass",
            "violated" | "vacuous" | "error" => "fail",
            _ => "other",
        };
        let first_line = self.render_outcome();
        let first_line = first_line.lines().next().unwrap_or_default();
        let _ = writeln!(
            page,
            "<p class=\"verdict {class}\" id=\"verdict\" data-verdict=\"{}\">{}</p>",
            escape_html(&self.verdict),
            escape_html(first_line)
        );
    }

    /// Model, parameters, settings, completeness, counts, depth and time.
    fn html_summary(&self, page: &mut String) {
        let params: Vec<String> = self
            .params
            .iter()
            .map(|(name, value)| format!("{name}={value}"))
            .collect();
        let rows: [(&str, String); 12] = [
            ("model", self.model.clone()),
            ("parameters", params.join(" ")),
            ("strategy", self.strategy.clone()),
            ("workers", self.workers.to_string()),
            (
                "settings",
                if self.settings.is_empty() {
                    "(none)".into()
                } else {
                    self.settings.join(", ")
                },
            ),
            ("verdict", self.verdict.clone()),
            (
                "explored",
                if self.strategy == "replay" {
                    "a replayed trace".into()
                } else if self.complete {
                    "complete: every reachable state".into()
                } else {
                    format!(
                        "bounded: {}",
                        self.bound.as_deref().unwrap_or("the search stopped early")
                    )
                },
            ),
            ("distinct states", self.distinct_states.to_string()),
            ("states generated", self.states_generated.to_string()),
            (
                "states left on queue",
                self.states_left_on_queue.to_string(),
            ),
            ("depth", self.depth.to_string()),
            ("wall time", format!("{:.3} s", self.wall_seconds)),
        ];
        page.push_str("<h2>Summary</h2>\n<table id=\"summary\">\n");
        for (name, value) in rows {
            let _ = writeln!(
                page,
                "<tr><th>{name}</th><td class=\"mono\">{}</td></tr>",
                escape_html(&value)
            );
        }
        if let Some(message) = &self.message {
            let _ = writeln!(
                page,
                "<tr><th>message</th><td>{}</td></tr>",
                escape_html(message)
            );
        }
        page.push_str("</table>\n");
    }

    /// Every property checked and what became of them: the violated one,
    /// the witnesses never reached, and every other one held (within the
    /// bound, if the run had one).
    fn html_properties(&self, page: &mut String) {
        page.push_str("<h2>Properties</h2>\n<table id=\"properties\">\n");
        page.push_str("<tr><th>property</th><th>verdict</th></tr>\n");
        if let Some(property) = &self.property {
            let _ = writeln!(
                page,
                "<tr><td class=\"mono\">{}</td><td class=\"fail\">violated ({})</td></tr>",
                escape_html(property),
                escape_html(self.violation_kind.as_deref().unwrap_or("invariant"))
            );
        }
        for witness in &self.unreached_witnesses {
            let _ = writeln!(
                page,
                "<tr><td class=\"mono\">{}</td><td class=\"fail\">never reached{}</td></tr>",
                escape_html(witness),
                if self.complete {
                    ""
                } else {
                    " within the bound"
                }
            );
        }
        let others = match self.verdict.as_str() {
            "pass" if self.strategy == "replay" => "held along the trace",
            "pass" if self.complete => "held in every reachable state",
            "pass" => "held within the bound",
            "violated" => "not checked past the violation",
            _ => "not established",
        };
        let named = |checked: &str| {
            let name = checked.split_once(' ').map_or(checked, |(_, name)| name);
            self.property.as_deref() == Some(name)
                || self
                    .unreached_witnesses
                    .iter()
                    .any(|witness| witness == name)
        };
        for checked in self.properties.iter().filter(|checked| !named(checked)) {
            let _ = writeln!(
                page,
                "<tr><td class=\"mono\">{}</td><td>{others}</td></tr>",
                escape_html(checked)
            );
        }
        if self.properties.is_empty() {
            page.push_str(
                "<tr><td>none</td><td class=\"fail\">no property was checked</td></tr>\n",
            );
        }
        page.push_str("</table>\n");
    }
}

/// What the random walks did: counts, rates and faults injected by kind.
fn html_walks(page: &mut String, walks: &WalksReport) {
    page.push_str("<h2>Random walks</h2>\n<table id=\"walks\">\n");
    let distinct = if walks.distinct_capped {
        format!("at least {}", walks.distinct_states)
    } else {
        walks.distinct_states.to_string()
    };
    let rows = [
        ("walks", walks.walks.to_string()),
        ("steps", walks.steps.to_string()),
        ("deepest walk", walks.deepest.to_string()),
        ("distinct states seen", distinct),
        ("walks/s", format!("{:.0}", walks.walks_per_second)),
        ("steps/s", format!("{:.0}", walks.steps_per_second)),
        (
            "fault densities",
            if walks.swarm {
                "drawn per walk (swarm)"
            } else {
                "uniform"
            }
            .to_string(),
        ),
    ];
    for (name, value) in rows {
        let _ = writeln!(
            page,
            "<tr><td>{name}</td><td>{}</td></tr>",
            escape_html(&value)
        );
    }
    for (kind, count) in &walks.faults {
        let _ = writeln!(
            page,
            "<tr><td>faults injected: {}</td><td>{count}</td></tr>",
            escape_html(kind)
        );
    }
    if let Some(walk) = walks.failing_walk {
        let _ = writeln!(page, "<tr><td>failing walk</td><td>{walk}</td></tr>");
    }
    page.push_str("</table>\n");
}

/// How often each action kind was enabled and taken, and what never was.
fn html_coverage(page: &mut String, coverage: &CoverageReport) {
    page.push_str("<h2>Coverage</h2>\n<table id=\"coverage\">\n");
    page.push_str("<tr><th>action kind</th><th>fault</th><th>enabled</th><th>taken</th></tr>\n");
    for kind in &coverage.kinds {
        let class = if kind.taken == 0 {
            " class=\"fail\""
        } else {
            ""
        };
        let _ = writeln!(
            page,
            "<tr{class}><td class=\"mono\">{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            escape_html(&kind.kind),
            if kind.fault { "yes" } else { "" },
            kind.enabled,
            kind.taken
        );
    }
    page.push_str("</table>\n");
    if !coverage.never_taken.is_empty() {
        let _ = writeln!(
            page,
            "<p>Never taken: {}.</p>",
            escape_html(&coverage.never_taken.join(", "))
        );
    }
    for fault in &coverage.budgeted_faults_never_taken {
        let _ = writeln!(
            page,
            "<p class=\"fail\">Warning: fault {} has a budget but never occurred.</p>",
            escape_html(fault)
        );
    }
}

/// The numbered steps: the initial state in full, then each action with the
/// fields it changed, before and after.
fn html_counterexample(page: &mut String, counterexample: &CounterexampleReport) {
    let _ = writeln!(
        page,
        "<h2>Counterexample ({} states)</h2>\n<div id=\"counterexample\">",
        counterexample.length
    );
    for step in &counterexample.steps {
        let _ = writeln!(page, "<div class=\"step\" id=\"step-{}\">", step.number);
        match &step.action {
            None => {
                let _ = writeln!(page, "<h3>{}: &lt;initial state&gt;</h3>", step.number);
                page.push_str("<table><tr><th>field</th><th>value</th></tr>\n");
                for (name, value) in &step.state {
                    let _ = writeln!(
                        page,
                        "<tr><td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>",
                        escape_html(name),
                        escape_html(value)
                    );
                }
                page.push_str("</table>\n");
            }
            Some(action) => {
                let _ = writeln!(
                    page,
                    "<h3>{}: <code class=\"action\">{}</code></h3>",
                    step.number,
                    escape_html(action)
                );
                if step.changes.is_empty() {
                    page.push_str("<p>(no field changed)</p>\n");
                } else {
                    page.push_str(
                        "<table class=\"diff\"><tr><th>field</th><th>before</th><th>after</th></tr>\n",
                    );
                    for change in &step.changes {
                        let _ = writeln!(
                            page,
                            "<tr><td class=\"mono\">{}</td><td class=\"mono before\">{}</td>\
                             <td class=\"mono after\">{}</td></tr>",
                            escape_html(&change.name),
                            escape_html(change.before.as_deref().unwrap_or("(absent)")),
                            escape_html(change.after.as_deref().unwrap_or("(absent)"))
                        );
                    }
                    page.push_str("</table>\n");
                }
            }
        }
        page.push_str("</div>\n");
    }
    page.push_str("</div>\n");
}

#[cfg(test)]
mod tests {
    use super::escape_html;

    #[test]
    fn escapes_the_characters_special_in_html() {
        assert_eq!(
            escape_html("<script>alert('x\"&')</script>"),
            "&lt;script&gt;alert(&#39;x&quot;&amp;&#39;)&lt;/script&gt;"
        );
        assert_eq!(escape_html("plain text"), "plain text");
    }
}
