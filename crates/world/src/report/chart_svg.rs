//! Message sequence charts in SVG, drawn from the same [`Row`]s as the text
//! chart of [`chart`](crate::report::chart): one vertical lifeline per node, one
//! arrow per delivered message, one labelled mark per local event (a client
//! request, a crash, a restart, a reply...).

use std::fmt::Write;

use cmc_search::escape_html;

use crate::report::chart::{Drawn, Place, Row};
use crate::World;

const COLUMN: usize = 220;
const ROW: usize = 28;
const TOP: usize = 40;
const LEFT: usize = 60;

/// The x coordinate of node `node`'s lifeline.
fn lifeline_x(node: usize) -> usize {
    LEFT + COLUMN / 2 + node * COLUMN
}

/// The colour of a local event's mark: crashes red, restarts green, replies
/// blue, everything else grey.
fn mark_colour(label: &str) -> &'static str {
    if label.starts_with("CRASH") {
        "#c0392b"
    } else if label.starts_with("RESTART") {
        "#27ae60"
    } else if label.starts_with("REPLY") {
        "#2c6fbb"
    } else {
        "#777"
    }
}

/// The lifeline titles of `world`'s nodes: `n0 (core name)`, ... (see
/// [`replay_chart_svg`]'s example).
pub fn lifeline_titles(world: &World) -> Vec<String> {
    (0..world.spec().nodes())
        .map(|node| format!("n{node} ({})", world.spec().core_of(node).name()))
        .collect()
}

/// `rows` as an inline `<svg>` element, one lifeline per entry of `titles`
/// (node 0 first); every text is escaped. A row naming a node past the last
/// is drawn on the last lifeline, as the text chart does.
///
/// ```
/// use cmc_world::report::chart::Row;
/// use cmc_world::report::chart_svg::render_svg;
///
/// let rows = [
///     Row::Local { step: 1, node: 0, label: "CLIENT r0".into() },
///     Row::Arrow { step: 2, from: 0, to: 1, label: "<DATA>".into() },
/// ];
/// let svg = render_svg(&["n0".into(), "n1".into()], &rows);
/// assert!(svg.starts_with("<svg class=\"msc\""));
/// assert_eq!(svg.matches("class=\"lifeline\"").count(), 2);
/// assert_eq!(svg.matches("class=\"delivery\"").count(), 1);
/// assert!(svg.contains("&lt;DATA&gt;"), "labels are escaped");
/// ```
pub fn render_svg(titles: &[String], rows: &[Row]) -> String {
    let nodes = titles.len().max(1);
    let width = LEFT + nodes * COLUMN + COLUMN / 2;
    let height = TOP + (rows.len() + 1) * ROW;
    let mut svg = String::new();
    let _ = writeln!(
        svg,
        "<svg class=\"msc\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" role=\"img\" aria-label=\"message sequence chart\">"
    );
    svg.push_str(
        "<defs><marker id=\"arrow\" viewBox=\"0 0 10 10\" refX=\"10\" refY=\"5\" markerWidth=\"8\" \
         markerHeight=\"8\" orient=\"auto-start-reverse\"><path d=\"M0,0 L10,5 L0,10 z\" fill=\"#333\"/>\
         </marker></defs>\n",
    );
    for (node, title) in titles.iter().enumerate() {
        let x = lifeline_x(node);
        let _ = writeln!(
            svg,
            "<g class=\"lifeline\" data-node=\"{node}\"><text x=\"{x}\" y=\"20\" text-anchor=\"middle\" \
             font-weight=\"bold\">{}</text><line x1=\"{x}\" y1=\"{}\" x2=\"{x}\" y2=\"{height}\" \
             stroke=\"#999\" stroke-dasharray=\"4 3\"/></g>",
            escape_html(title),
            TOP - 10
        );
    }
    for (index, row) in rows.iter().enumerate() {
        let y = TOP + index * ROW + ROW / 2;
        let Drawn { step, label, place } = row.drawn(nodes);
        match place {
            Place::Delivery { from, to } => {
                let (x1, x2) = (lifeline_x(from), lifeline_x(to));
                let _ = writeln!(
                    svg,
                    "<g class=\"delivery\"><text x=\"4\" y=\"{y}\" fill=\"#999\">{step}</text>\
                     <line x1=\"{x1}\" y1=\"{y}\" x2=\"{x2}\" y2=\"{y}\" stroke=\"#333\" marker-end=\"url(#arrow)\"/>\
                     <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text></g>",
                    (x1 + x2) / 2,
                    y - 4,
                    escape_html(label)
                );
            }
            Place::Mark { node } => {
                let x = lifeline_x(node);
                let _ = writeln!(
                    svg,
                    "<g class=\"event\"><text x=\"4\" y=\"{y}\" fill=\"#999\">{step}</text>\
                     <rect x=\"{}\" y=\"{}\" width=\"10\" height=\"10\" fill=\"{}\"/>\
                     <text x=\"{}\" y=\"{}\">{}</text></g>",
                    x - 5,
                    y - 9,
                    mark_colour(label),
                    x + 9,
                    y,
                    escape_html(label)
                );
            }
        }
    }
    svg.push_str("</svg>\n");
    svg
}

/// The SVG chart of `file` replayed through `world`'s cores (the rows of
/// [`replay::run_with_chart`](crate::report::replay::run_with_chart)); an
/// `Err` says why the file does not fit `world`.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, ReplayFile};
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::report::chart_svg::{lifeline_titles, replay_chart_svg};
/// use cmc_world::{World, WorldSpec};
///
/// let mut spec = WorldSpec::new(Arc::new(ReqAck { bug: 1 }), 2).unwrap();
/// spec.set_all(&["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"]).unwrap();
/// let checker = Checker::new(World::new(spec)).workers(1);
/// let trace = checker.run().counterexample.expect("bug 1 is found");
/// let file = ReplayFile::from_counterexample(checker.model(), &trace, None);
///
/// let titles = lifeline_titles(checker.model());
/// assert_eq!(titles, ["n0 (reqack)", "n1 (reqack)"]);
/// let svg = replay_chart_svg(checker.model(), &file)?;
/// assert!(svg.contains(">n1 (reqack)</text>"));
/// assert!(svg.contains("CRASH"), "the sender's crash is on the chart");
/// # Ok::<(), String>(())
/// ```
pub fn replay_chart_svg(world: &World, file: &cmc_search::ReplayFile) -> Result<String, String> {
    let (_, rows) = crate::report::replay::run_with_chart(world, file)?;
    Ok(render_svg(&lifeline_titles(world), &rows))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lifeline_per_node_an_arrow_per_delivery_and_escaped_labels() {
        let titles = ["n0 (a)".to_string(), "n1 <core>".into(), "n2".into()];
        let svg = render_svg(&titles, &crate::report::chart::sample_rows());
        assert_eq!(svg.matches("class=\"lifeline\"").count(), 3);
        assert_eq!(svg.matches("class=\"delivery\"").count(), 2);
        assert_eq!(svg.matches("class=\"event\"").count(), 2);
        assert!(svg.contains("&lt;ACK&gt;") && !svg.contains("<ACK>"));
        assert!(svg.contains(">n1 &lt;core&gt;</text>") && svg.contains(">n0 (a)</text>"));
        assert!(svg.contains("#c0392b"), "a crash is marked red");
    }
}
