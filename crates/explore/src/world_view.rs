//! A World's state as the explorer shows it: its nodes (with their cores'
//! own descriptions), the network bag, timers, pending persists, crashed
//! nodes, cut links, the ghost history of client requests and the fault
//! budgets left; and the SVG message sequence chart of the path so far.

use std::fmt::Write;

use cmc_search::{escape_html, ReplayFile};
use cmc_world::system::spec::BUDGET_NAMES;
use cmc_world::system::state::{GhostKind, WorldState};
use cmc_world::World;

use crate::explorer::Extras;

/// The World's extras on the explorer's pages.
pub struct WorldExtras;

impl Extras<World> for WorldExtras {
    fn sections(&self, world: &World, state: &WorldState) -> Option<String> {
        let mut html = String::new();
        nodes(&mut html, world, state);
        network(&mut html, world, state);
        links(&mut html, world, state);
        ghost(&mut html, world, state);
        budgets(&mut html, world, state);
        Some(html)
    }

    fn chart(&self, world: &World, trace: &ReplayFile) -> Option<Result<String, String>> {
        Some(cmc_world::report::chart_svg::replay_chart_svg(world, trace))
    }
}

/// The ids of the bits set in `mask`, e.g. `0, 3`, or `none`.
fn bit_ids(mask: u32) -> String {
    let ids: Vec<String> = (0..32)
        .filter(|bit| mask & (1 << bit) != 0)
        .map(|bit| bit.to_string())
        .collect();
    if ids.is_empty() {
        "none".into()
    } else {
        ids.join(", ")
    }
}

fn nodes(html: &mut String, world: &World, state: &WorldState) {
    html.push_str(
        "<h2>Nodes</h2>\n<table id=\"nodes\"><tr><th>node</th><th>core</th><th>status</th>\
         <th>clock</th><th>timers armed (ids)</th><th>wakes pending (ids)</th><th>persists pending</th>\
         <th>core state</th></tr>\n",
    );
    let view = world.inspect(state);
    for node in 0..view.nodes() {
        let ns = view.node(node).env;
        let persists: Vec<String> = ns
            .persists
            .iter()
            .map(|p| format!("@{} {:?}", p.offset, p.bytes))
            .collect();
        let (class, status) = if ns.crashed {
            ("crashed", "CRASHED")
        } else {
            ("up", "up")
        };
        let _ = writeln!(
            html,
            "<tr class=\"{class}\" data-node=\"{node}\"><td>n{node}</td><td class=\"mono\">{}</td>\
             <td class=\"status\">{status}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td class=\"mono\">{}</td><td class=\"mono\">{}</td></tr>",
            escape_html(world.spec().core_of(node).name()),
            ns.clock,
            bit_ids(ns.timers),
            bit_ids(ns.wakes),
            if persists.is_empty() {
                "none".into()
            } else {
                escape_html(&persists.join(", "))
            },
            escape_html(&world.describe_node(state, node))
        );
    }
    html.push_str("</table>\n");
}

fn network(html: &mut String, world: &World, state: &WorldState) {
    html.push_str("<h2>Network</h2>\n");
    let messages = world.inspect(state).messages();
    if messages.clone().next().is_none() {
        html.push_str("<p id=\"network\">No message in flight.</p>\n");
        return;
    }
    html.push_str(
        "<table id=\"network\"><tr><th>from</th><th>to</th><th>message</th><th>copies</th></tr>\n",
    );
    for packet in messages {
        let copies = if packet.surplus {
            format!("{} and more (surplus)", packet.count)
        } else {
            packet.count.to_string()
        };
        let _ = writeln!(
            html,
            "<tr><td>n{}</td><td>n{}</td><td class=\"mono\">{}</td><td>{copies}</td></tr>",
            packet.src,
            packet.dst,
            escape_html(&world.describe_message(packet.src, packet.msg))
        );
    }
    html.push_str("</table>\n");
}

fn links(html: &mut String, world: &World, state: &WorldState) {
    let nodes = world.spec().nodes() as u8;
    // Each direction on its own: a one-way cut shows one arrow, a pair cut two.
    let cut: Vec<String> = (0..nodes)
        .flat_map(|a| (0..nodes).filter(move |&b| b != a).map(move |b| (a, b)))
        .filter(|&(a, b)| !world.inspect(state).link_up(a, b))
        .map(|(a, b)| format!("n{a} &rarr; n{b}"))
        .collect();
    let text = if cut.is_empty() {
        "every link is up".to_string()
    } else {
        format!("cut: {}", cut.join(", "))
    };
    let _ = writeln!(html, "<h2>Links</h2>\n<p id=\"links\">{text}</p>");
}

fn ghost(html: &mut String, world: &World, state: &WorldState) {
    html.push_str("<h2>Client history (ghost)</h2>\n");
    let history = world.inspect(state).ghost();
    if history.is_empty() {
        html.push_str("<p id=\"ghost\">No client request yet.</p>\n");
        return;
    }
    html.push_str("<ol id=\"ghost\">\n");
    for entry in history {
        let text = match entry.kind {
            GhostKind::Invoke => format!("request r{} sent to n{}", entry.request, entry.node),
            GhostKind::Reply => format!(
                "n{} replied to r{}: {}",
                entry.node,
                entry.request,
                world.describe_reply(entry.node, entry.payload.as_bytes())
            ),
            GhostKind::LocalFail => {
                format!("r{} failed locally at n{}", entry.request, entry.node)
            }
            GhostKind::Retry => format!("request r{} sent again to n{}", entry.request, entry.node),
        };
        let _ = writeln!(html, "<li class=\"mono\">{}</li>", escape_html(&text));
    }
    html.push_str("</ol>\n");
}

fn budgets(html: &mut String, world: &World, state: &WorldState) {
    html.push_str("<h2>Fault budgets left</h2>\n<table id=\"budgets\"><tr>");
    for (name, ..) in BUDGET_NAMES {
        let _ = write!(html, "<th>{name}</th>");
    }
    html.push_str("</tr><tr>");
    for (_, budget, _) in BUDGET_NAMES {
        let _ = write!(html, "<td>{}</td>", world.inspect(state).budget(budget));
    }
    html.push_str("</tr></table>\n");
}
