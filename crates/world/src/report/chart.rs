//! Message sequence charts in text: one column per node, one row per event.

use std::fmt::Write;

/// One row of a chart: what one step of a trace did, as
/// [`replay::run_with_chart`](crate::report::replay::run_with_chart)
/// collects them.
///
/// ```
/// use cmc_world::report::chart::{render, Row};
///
/// let rows = [
///     Row::local(1, 0, "CLIENT r0"),
///     Row::arrow(2, 0, 1, "DATA(r=0)"),
///     Row::arrow(3, 1, 0, "ACK(r=0)"),
/// ];
/// let chart = render(2, &rows);
/// let lines: Vec<&str> = chart.lines().collect();
/// assert_eq!(lines[0], "step  n0                      n1");
/// assert_eq!(lines[1], "   1  CLIENT r0               |");
/// assert_eq!(lines[2], "   2  |-------DATA(r=0)------>|");
/// assert_eq!(lines[3], "   3  |<------ACK(r=0)--------|");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Row {
    /// A message delivered from `from` to `to`.
    Arrow {
        /// Step number in the trace.
        step: usize,
        /// Sending node.
        from: usize,
        /// Receiving node.
        to: usize,
        /// The message's text.
        label: String,
    },
    /// Something that happened at one node (a client request, a crash, a reply...).
    Local {
        /// Step number in the trace.
        step: usize,
        /// The node.
        node: usize,
        /// What happened.
        label: String,
    },
}

/// How a [`Row`] is drawn on a chart of `nodes` lifelines (at least one):
/// its step number and label, at its [`Place`].
pub(crate) struct Drawn<'a> {
    pub(crate) step: usize,
    pub(crate) label: &'a str,
    pub(crate) place: Place,
}

/// Where a row is drawn.
pub(crate) enum Place {
    /// An arrow between two different lifelines, `from` and `to`.
    Delivery { from: usize, to: usize },
    /// A mark on one lifeline: a local event, a message to itself or a row
    /// naming a node past the last, which is drawn on the last lifeline.
    Mark { node: usize },
}

impl Row {
    /// A message `label` delivered from node `from` to node `to` at `step`.
    pub fn arrow(step: usize, from: usize, to: usize, label: impl Into<String>) -> Row {
        Row::Arrow {
            step,
            from,
            to,
            label: label.into(),
        }
    }

    /// Event `label` at node `node` at `step`.
    pub fn local(step: usize, node: usize, label: impl Into<String>) -> Row {
        Row::Local {
            step,
            node,
            label: label.into(),
        }
    }

    /// How this row is drawn on a chart of `nodes` lifelines.
    pub(crate) fn drawn(&self, nodes: usize) -> Drawn<'_> {
        let last = nodes.saturating_sub(1);
        let (step, label, place) = match *self {
            Row::Arrow {
                step,
                from,
                to,
                ref label,
            } if from != to && from <= last && to <= last => {
                (step, label, Place::Delivery { from, to })
            }
            Row::Arrow {
                step,
                from: node,
                ref label,
                ..
            }
            | Row::Local {
                step,
                node,
                ref label,
            } => (
                step,
                label,
                Place::Mark {
                    node: node.min(last),
                },
            ),
        };
        Drawn { step, label, place }
    }
}

const WIDTH: usize = 24;

/// The chart both renderers' tests draw, on three nodes: a client request
/// at n0, a message from n0 to n1 and the answer back (markup in its text),
/// a crash at n2.
#[cfg(test)]
pub(crate) fn sample_rows() -> [Row; 4] {
    [
        Row::local(1, 0, "CLIENT r0"),
        Row::arrow(2, 0, 1, "DATA(r=0)"),
        Row::arrow(3, 1, 0, "<ACK>"),
        Row::local(4, 2, "CRASH"),
    ]
}

/// Renders `rows` for `nodes` nodes (at least one): a header line, then one
/// line per row, numbered by its step; one column of 24 characters per
/// node, an arrow between two columns per delivery (its label cut to fit),
/// the label of a local event in its node's column. A row naming a node past
/// the last, or a message to itself, is drawn as a local event on its last
/// or its own column. See [`Row`]'s example.
pub fn render(nodes: usize, rows: &[Row]) -> String {
    let mut text = String::new();
    let mut header = String::from("step  ");
    for node in 0..nodes {
        let _ = write!(header, "{:<WIDTH$}", format!("n{node}"));
    }
    let _ = writeln!(text, "{}", header.trim_end());
    for row in rows {
        let mut line: Vec<char> = (0..nodes * WIDTH)
            .map(|at| if at % WIDTH == 0 { '|' } else { ' ' })
            .collect();
        let Drawn { step, label, place } = row.drawn(nodes);
        match place {
            Place::Delivery { from, to } => {
                let (left, right) = (from.min(to) * WIDTH, from.max(to) * WIDTH);
                for cell in &mut line[left + 1..right] {
                    *cell = '-';
                }
                if to > from {
                    line[right - 1] = '>';
                } else {
                    line[left + 1] = '<';
                }
                let room = right - left - 3;
                let label: Vec<char> = label.chars().take(room).collect();
                let start = left + 2 + (room - label.len()) / 2;
                line[start..start + label.len()].copy_from_slice(&label);
            }
            Place::Mark { node } => {
                let at = node * WIDTH;
                let end = if node + 1 >= nodes {
                    at + WIDTH * 3
                } else {
                    at + WIDTH - 1
                };
                line.resize(line.len().max(end), ' ');
                for (cell, ch) in line[at..end].iter_mut().zip(label.chars()) {
                    *cell = ch;
                }
            }
        }
        let body: String = line.into_iter().collect();
        let _ = writeln!(text, "{step:>4}  {}", body.trim_end());
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arrows_span_columns_in_both_directions() {
        let chart = render(3, &sample_rows());
        let lines: Vec<&str> = chart.lines().collect();
        assert_eq!(
            lines,
            [
                "step  n0                      n1                      n2",
                "   1  CLIENT r0               |                       |",
                "   2  |-------DATA(r=0)------>|                       |",
                "   3  |<--------<ACK>---------|                       |",
                "   4  |                       |                       CRASH",
            ],
            "{chart}"
        );
    }
}
