//! Checks one variant of a reference core and prints the verdict, counts and
//! the counterexample's actions:
//!
//! ```text
//! cargo run --release -p cmc-protocols --example variant -- CORE BUG NODES DEPTH [NAME=VALUE..]
//! ```
//!
//! `BUG` 0 is the control; `DEPTH` 0 means no bound. Deadlock checking is off,
//! as in the gate.

use cmc_model::Model;
use cmc_search::Checker;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() < 4 {
        eprintln!("usage: variant CORE BUG NODES DEPTH [NAME=VALUE..]");
        std::process::exit(2);
    }
    let references = cmc_protocols::references();
    let Some(reference) = references.iter().find(|r| r.core == args[0]) else {
        eprintln!("unknown core {}", args[0]);
        std::process::exit(2);
    };
    let number = |text: &str| -> u64 {
        text.parse().unwrap_or_else(|_| {
            eprintln!("`{text}` is not a number");
            std::process::exit(2)
        })
    };
    let params: Vec<&str> = args[4..].iter().map(String::as_str).collect();
    let world = (reference.world)(number(&args[1]) as u32, number(&args[2]) as usize, &params)
        .unwrap_or_else(|error| {
            eprintln!("{error}");
            std::process::exit(2)
        });
    let mut checker = Checker::new(world).workers(2).check_deadlock(false);
    if number(&args[3]) > 0 {
        checker = checker.max_depth(number(&args[3]));
    }
    let outcome = checker.run();
    if let Some(fault) = checker.model().fault() {
        eprintln!("{fault}");
        std::process::exit(2);
    }
    println!(
        "{} distinct={} depth={} counterexample={} wall={:.2}s",
        outcome.verdict.as_str(),
        outcome.stats.distinct_states,
        outcome.stats.depth,
        outcome.counterexample.as_ref().map_or(0, |c| c.len()),
        outcome.stats.wall.as_secs_f64()
    );
    if let cmc_search::Verdict::Violated { property, .. } = &outcome.verdict {
        println!("violated {property}");
    }
    for step in outcome.counterexample.iter().flat_map(|c| &c.steps) {
        if let Some(action) = &step.action {
            println!("  {}", checker.model().format_action(action));
        }
    }
}
