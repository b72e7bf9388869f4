//! Replaying a World trace through the real cores.
//!
//! Each action of a replay file is matched by its text against the actions
//! enabled at that step and run through the same core code the search ran
//! (the Rust core or the same `.so`). For each step the replay prints the
//! event each core handled, its outputs, the core's own description of its
//! state, the fields that changed, and any property the step violates (an
//! invariant of the new state, or an action property of the step);
//! it ends with a message sequence chart.

use std::fmt::Write;

use cmc_model::{Model, PropertyKind, StateView};
use cmc_search::ReplayFile;

use crate::core::abi::{Event, OutputKind, Outputs};
use crate::report::chart::{self, Row};
use crate::system::action::{Action, ChartStep};
use crate::system::env::Observer;
use crate::system::state::WorldState;
use crate::World;

/// Collects the core steps of one World step.
struct Steps<'w> {
    world: &'w World,
    lines: Vec<String>,
    replies: Vec<(usize, String)>,
}

impl Observer for Steps<'_> {
    fn on_step(&mut self, node: u8, event: &Event, out: &Outputs) {
        self.lines.push(format!(
            "  event   {}",
            self.world.format_event(node, event)
        ));
        for output in self.world.format_outputs(node, out) {
            self.lines.push(format!("  output  {output}"));
        }
        for item in out.as_slice() {
            if OutputKind::from_raw(item.kind) == Some(OutputKind::Reply) {
                let text = self.world.describe_reply(node, item.payload());
                self.replies
                    .push((node as usize, format!("REPLY r{} {text}", item.id)));
            }
        }
    }
}

/// The lines marking the properties the step `pre --action--> post`
/// violates: invariants on `post`, action properties on the step.
fn violations(world: &World, pre: &WorldState, action: &Action, post: &WorldState) -> Vec<String> {
    world
        .properties()
        .iter()
        .filter(|p| match &p.kind {
            PropertyKind::Always(holds) => !holds(world, post),
            PropertyKind::Step(holds) => !holds(world, pre, action, post),
            PropertyKind::Sometimes(_) => false,
        })
        .map(|p| format!("  VIOLATED {} ({})", p.name, p.kind_name()))
        .collect()
}

fn show_view(text: &mut String, view: &StateView) {
    for (name, value) in &view.fields {
        let _ = writeln!(text, "  {name:<10} {value}");
    }
}

/// The full replay of `file` through `world`'s cores, as text; an `Err` says
/// which line of the file does not fit this World.
///
/// ```
/// use std::sync::Arc;
/// use cmc_search::{Checker, ReplayFile};
/// use cmc_world::example_cores::reqack::ReqAck;
/// use cmc_world::report::replay;
/// use cmc_world::{World, WorldSpec};
///
/// let world = |nodes| {
///     let mut spec = WorldSpec::new(Arc::new(ReqAck { bug: 1 }), nodes).unwrap();
///     spec.set_all(&["requests=1", "crashes=1", "restarts=1", "crash_nodes=0"]).unwrap();
///     World::new(spec)
/// };
/// let checker = Checker::new(world(2)).workers(1);
/// let trace = checker.run().counterexample.expect("bug 1 is found");
/// let file = ReplayFile::from_counterexample(checker.model(), &trace, Some("AtMostOneReply"));
/// let text = replay::run(&world(2), &file)?;
/// assert!(text.contains("VIOLATED AtMostOneReply"), "{text}");
/// assert!(text.contains("message sequence chart:"));
/// // The trace of one World does not fit another.
/// assert!(replay::run(&world(3), &file).unwrap_err().contains("trace of"));
/// # Ok::<(), String>(())
/// ```
pub fn run(world: &World, file: &ReplayFile) -> Result<String, String> {
    run_with_chart(world, file).map(|(text, _)| text)
}

/// [`run`], also returning the rows of its message sequence chart (for
/// another renderer, e.g. [`chart_svg`](crate::report::chart_svg)): per
/// step of the trace, in order, one row for its action (an arrow for a
/// delivery, a local event for any other action) and one local row per
/// reply a core gave in it (see [`Row`]). [`replay_chart_svg`]'s example
/// draws them.
///
/// [`replay_chart_svg`]: crate::report::chart_svg::replay_chart_svg
pub fn run_with_chart(world: &World, file: &ReplayFile) -> Result<(String, Vec<Row>), String> {
    if file.model != world.name() || file.params != world.params() {
        return Err(format!(
            "the file is a trace of {} with {:?}, but this World is {} with {:?}",
            file.model,
            file.params,
            world.name(),
            world.params()
        ));
    }
    let mut text = String::new();
    let mut rows = Vec::new();
    let mut steps = Steps {
        world,
        lines: Vec::new(),
        replies: Vec::new(),
    };
    let mut state = world
        .init_observed(&mut steps)
        .map_err(|fault| fault.to_string())?;
    let _ = writeln!(text, "step 0: INIT");
    for line in steps.lines.drain(..) {
        let _ = writeln!(text, "{line}");
    }
    let mut view = world.describe_state(&state);
    show_view(&mut text, &view);
    let mut enabled = Vec::new();
    for (index, (line, action_text)) in file.actions.iter().enumerate() {
        let step = index + 1;
        enabled.clear();
        world.actions(&state, &mut enabled);
        let Some(action) = enabled
            .iter()
            .find(|a| world.format_action(a) == *action_text)
        else {
            let names: Vec<String> = enabled.iter().map(|a| world.format_action(a)).collect();
            return Err(format!(
                "line {line}: action `{action_text}` is not enabled at step {step}; enabled: {}",
                names.join(" | ")
            ));
        };
        let _ = writeln!(text, "\nstep {step}: {action_text}");
        let next = world
            .step_observed(&state, action, &mut steps)
            .map_err(|fault| fault.to_string())?;
        let next = next.ok_or_else(|| format!("line {line}: `{action_text}` did not apply"))?;
        for line in steps.lines.drain(..) {
            let _ = writeln!(text, "{line}");
        }
        let next_view = world.describe_state(&next);
        for change in next_view.changes_since(&view) {
            let before = change.before.unwrap_or_default();
            let after = change.after.unwrap_or_default();
            let _ = writeln!(text, "  changed {:<10} {before}  =>  {after}", change.name);
        }
        for violation in violations(world, &state, action, &next) {
            let _ = writeln!(text, "{violation}");
        }
        rows.push(chart_row(world, step, action));
        rows.extend(
            steps
                .replies
                .drain(..)
                .map(|(node, label)| Row::local(step, node, label)),
        );
        state = next;
        view = next_view;
    }
    let _ = writeln!(
        text,
        "\nmessage sequence chart:\n{}",
        chart::render(world.spec().nodes(), &rows)
    );
    Ok((text, rows))
}

fn chart_row(world: &World, step: usize, action: &Action) -> Row {
    match action.chart(world.env()) {
        ChartStep::Arrow { src, dst, label } => Row::arrow(step, src as usize, dst as usize, label),
        ChartStep::Local { node, label } => Row::local(step, node as usize, label),
    }
}
