//! The reachable state graph of a small model in Graphviz DOT, as TLC's
//! `-dump dot` writes it: one node per distinct state (labelled with its
//! description), one edge per transition (labelled with its action), the
//! initial states drawn with a double border, a counterexample's path in
//! bold red.
//!
//! The graph is explored here, sequentially and apart from the checker's
//! search (which stays as fast as without it), up to a cap on the number
//! of states: past the cap nothing is returned, never a partial graph.
//! Relation to a complete breadth-first check of the same model: the node
//! count equals its distinct states, and the edge count plus the number of
//! initial states equals its states generated (every successor of every
//! state is one edge, duplicates and self-loops included).

use std::collections::HashMap;
use std::fmt::Write;

use cmc_model::{Encode, Fingerprint, Model};

use crate::ReplayFile;

/// Why no graph was produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DotError {
    /// The model has more reachable states than the cap.
    TooManyStates {
        /// The cap.
        max_states: usize,
    },
    /// The trace to highlight does not follow the graph.
    TraceOffGraph(String),
}

impl std::fmt::Display for DotError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            DotError::TooManyStates { max_states } => write!(
                f,
                "the state graph has more than {max_states} states, the --dump-dot-max cap: \
                 no DOT file was written (raise the cap, or use a smaller model)"
            ),
            DotError::TraceOffGraph(why) => write!(f, "cannot highlight the trace: {why}"),
        }
    }
}

/// A transition: source node, target node, the action's text.
struct Edge {
    from: usize,
    to: usize,
    action: String,
}

/// The reachable graph of a model: states in discovery order.
struct StateGraph {
    labels: Vec<String>,
    initial: Vec<usize>,
    edges: Vec<Edge>,
}

/// Explores every reachable state of `model`, at most `max_states` of them.
fn explore<M: Model>(model: &M, max_states: usize) -> Result<StateGraph, DotError> {
    let mut ids: HashMap<Fingerprint, usize> = HashMap::new();
    let mut states: Vec<M::State> = Vec::new();
    let mut graph = StateGraph {
        labels: Vec::new(),
        initial: Vec::new(),
        edges: Vec::new(),
    };
    let mut node_of = |state: M::State, states: &mut Vec<M::State>, labels: &mut Vec<String>| {
        let fingerprint = Fingerprint::of_bytes(&state.to_bytes());
        if let Some(&id) = ids.get(&fingerprint) {
            return Ok(id);
        }
        if states.len() >= max_states {
            return Err(DotError::TooManyStates { max_states });
        }
        let id = states.len();
        ids.insert(fingerprint, id);
        labels.push(state_label(model, &state));
        states.push(state);
        Ok(id)
    };
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    for state in initial {
        let id = node_of(state, &mut states, &mut graph.labels)?;
        graph.initial.push(id);
    }
    let mut actions = Vec::new();
    let mut next_to_expand = 0;
    while next_to_expand < states.len() {
        let state = states[next_to_expand].clone();
        actions.clear();
        model.actions(&state, &mut actions);
        for action in &actions {
            if let Some(next) = model.next_state(&state, action) {
                let to = node_of(next, &mut states, &mut graph.labels)?;
                graph.edges.push(Edge {
                    from: next_to_expand,
                    to,
                    action: model.format_action(action),
                });
            }
        }
        next_to_expand += 1;
    }
    Ok(graph)
}

/// A state's description, one `field = value` per line.
fn state_label<M: Model>(model: &M, state: &M::State) -> String {
    model
        .describe_state(state)
        .fields
        .iter()
        .map(|(name, value)| format!("{name} = {value}"))
        .collect::<Vec<_>>()
        .join("\n")
}

/// `text` as a DOT quoted string, its line breaks kept as `\l` (left-aligned).
fn quoted(text: &str) -> String {
    let mut out = String::from("\"");
    for ch in text.chars() {
        match ch {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\l"),
            '\r' => {}
            _ => out.push(ch),
        }
    }
    out.push('"');
    out
}

/// The indices of the edges `trace` takes, from its initial state on.
fn trace_edges(graph: &StateGraph, trace: &ReplayFile) -> Result<Vec<usize>, DotError> {
    let off = |why: String| DotError::TraceOffGraph(why);
    let mut at = *graph.initial.get(trace.init.0).ok_or_else(|| {
        off(format!(
            "initial state {} does not exist (the model has {})",
            trace.init.0,
            graph.initial.len()
        ))
    })?;
    let mut taken = Vec::new();
    for (step, (_, action)) in trace.actions.iter().enumerate() {
        let edge = graph
            .edges
            .iter()
            .position(|edge| edge.from == at && edge.action == *action)
            .ok_or_else(|| off(format!("step {}: `{action}` is not enabled", step + 1)))?;
        taken.push(edge);
        at = graph.edges[edge].to;
    }
    Ok(taken)
}

/// The reachable state graph of `model` in DOT, with `highlight`'s path in
/// bold red; `Err` if it has more than `max_states` states.
pub fn state_graph_dot<M: Model>(
    model: &M,
    max_states: usize,
    highlight: Option<&ReplayFile>,
) -> Result<String, DotError> {
    let graph = explore(model, max_states)?;
    let path = match highlight {
        Some(trace) => trace_edges(&graph, trace)?,
        None => Vec::new(),
    };
    let mut on_path = vec![false; graph.edges.len()];
    let mut node_on_path = vec![false; graph.labels.len()];
    for &edge in &path {
        on_path[edge] = true;
        node_on_path[graph.edges[edge].from] = true;
        node_on_path[graph.edges[edge].to] = true;
    }
    if let (Some(trace), None) = (highlight, path.first()) {
        // A trace of one state: its initial state is the whole path.
        if let Some(&id) = graph.initial.get(trace.init.0) {
            node_on_path[id] = true;
        }
    }
    let mut dot = String::new();
    let _ = writeln!(dot, "digraph {} {{", quoted(&model.name()));
    dot.push_str("  node [shape=box, fontname=\"monospace\"];\n  edge [fontname=\"monospace\"];\n");
    for (id, label) in graph.labels.iter().enumerate() {
        let mut attributes = format!("label={}", quoted(&format!("{label}\n")));
        if graph.initial.contains(&id) {
            attributes.push_str(", peripheries=2");
        }
        if node_on_path[id] {
            attributes.push_str(", color=red, penwidth=2");
        }
        let _ = writeln!(dot, "  s{id} [{attributes}];");
    }
    for (index, edge) in graph.edges.iter().enumerate() {
        let highlight = if on_path[index] {
            ", color=red, penwidth=3, fontcolor=red"
        } else {
            ""
        };
        let _ = writeln!(
            dot,
            "  s{} -> s{} [label={}{highlight}];",
            edge.from,
            edge.to,
            quoted(&edge.action)
        );
    }
    dot.push_str("}\n");
    Ok(dot)
}

#[cfg(test)]
mod tests {
    use super::quoted;

    #[test]
    fn quotes_escape_quotes_and_backslashes() {
        assert_eq!(quoted("a \"b\" \\ c\nd"), "\"a \\\"b\\\" \\\\ c\\ld\"");
    }
}
