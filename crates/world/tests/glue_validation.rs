//! Glue trace validation: the UDP product's glue log replays through the same
//! core, and each deliberately broken glue is caught at its first bad record.

mod common;

use std::collections::VecDeque;
use std::sync::Arc;

use cmc_world::core::abi::{Config, Event, EventKind, OutputKind, Outputs};
use cmc_world::validate::glue_log::{parse, GlueLogWriter};
use cmc_world::validate::{validate, Mismatch, Options, Summary};
use cmc_world::{build_world, WorldArgs, WorldSpec};

/// The spec of `nodes` nodes running the C reqack core the product links.
fn reqack_spec(nodes: usize) -> WorldSpec {
    let library = common::fixture("libreqack.so");
    let world = build_world(&WorldArgs {
        cores: vec![library.display().to_string()],
        nodes,
        params: Vec::new(),
        check_determinism: false,
    })
    .unwrap();
    world.spec().clone()
}

/// Runs the product `fixture` with 3 nodes and 3 requests and returns its glue log.
fn product_log(fixture: &str) -> String {
    let dir = std::env::temp_dir().join(format!("cmc-glue-{fixture}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("glue.log");
    let output = std::process::Command::new(common::fixture(fixture))
        .args(["3", "3", dir.to_str().unwrap(), log.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    text
}

fn check(text: &str, nodes: usize, options: Options) -> Result<Summary, Mismatch> {
    validate(&reqack_spec(nodes), &parse(text).unwrap(), options)
}

/// The text of line `number` of `text`.
fn line(text: &str, number: usize) -> &str {
    text.lines().nth(number - 1).unwrap()
}

#[test]
fn the_products_glue_does_what_the_core_asked() {
    let text = product_log("reqack_udp");
    let summary = check(&text, 3, Options::default()).unwrap();
    // The three STARTs, then per request: CLIENT and its FLUSHED at node 0,
    // a RECV and a FLUSHED at each receiver, the two acknowledgements and
    // node 0's last FLUSHED; more if a 50 ms resend timer fired on a loaded
    // machine.
    assert!(summary.events >= 3 + 3 * 9, "{summary:?}\n{text}");
    assert!(summary.outputs > summary.events, "{summary:?}");
}

#[test]
fn a_glue_that_drops_an_output_is_caught_at_the_step_it_cut_short() {
    let text = product_log("reqack_udp_glue1");
    let mismatch = check(&text, 3, Options::default()).unwrap_err();
    assert!(
        line(&text, mismatch.line).starts_with("event 0 "),
        "{mismatch}"
    );
    assert!(
        mismatch
            .message
            .contains("the first it dropped: `output 0 SET_TIMER`"),
        "{mismatch}"
    );
}

#[test]
fn a_glue_that_delivers_a_message_twice_is_caught_unless_the_network_duplicates() {
    let text = product_log("reqack_udp_glue2");
    let mismatch = check(&text, 3, Options::default()).unwrap_err();
    assert!(line(&text, mismatch.line).contains(" RECV "), "{mismatch}");
    assert!(
        mismatch.message.contains("more often than it was sent"),
        "{mismatch}"
    );
    let duplicating = Options {
        allow_duplicates: true,
    };
    check(&text, 3, duplicating).unwrap();
}

#[test]
fn a_glue_that_reports_a_flush_that_never_happened_is_caught() {
    let text = product_log("reqack_udp_glue3");
    let mismatch = check(&text, 3, Options::default()).unwrap_err();
    assert!(
        line(&text, mismatch.line).contains(" FLUSHED "),
        "{mismatch}"
    );
    assert!(
        mismatch.message.contains("with no pending PERSIST"),
        "{mismatch}"
    );
}

/// A hand-written log of node 0's first request, the outputs as the C core
/// returns them (the fixture `cmc validate`'s tests read too).
const FIRST_REQUEST: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../cores/reqack/first_request.gluelog"
));

#[test]
fn environment_rules_name_the_record_that_breaks_them() {
    check(FIRST_REQUEST, 2, Options::default()).unwrap();
    let cases = [
        ("event 0 TIMER id=3", "has not armed it"),
        ("event 1 RECV src=0 payload=ff", "never sent to it"),
        ("event 0 START", "which is running"),
        (
            "event 0 TICK clock=0\nevent 0 TIMER clock=7",
            "only TICK moves it",
        ),
        (
            "event 1 FLUSHED id=4 payload=01000000",
            "no pending PERSIST",
        ),
        ("event 5 START", "does not exist"),
        ("output 1 SEND dst=0", "no step of node 1"),
        ("crash 1\nevent 1 CLIENT", "has not started"),
        ("event 0 LOCAL_FAIL id=9", "never given it"),
    ];
    for (tail, expected) in cases {
        let text = format!("{FIRST_REQUEST}{tail}\n");
        let mismatch = check(&text, 2, Options::default()).unwrap_err();
        assert!(mismatch.message.contains(expected), "{tail}: {mismatch}");
        assert!(mismatch.line > 8, "{tail}: {mismatch}");
    }
    // A restart after a crash is fine, and the message to node 1 is still in flight.
    let restarted = format!("{FIRST_REQUEST}crash 1\nevent 1 START\n");
    let summary = check(&restarted, 2, Options::default()).unwrap();
    assert_eq!((summary.crashes, summary.in_flight), (1, 1));
}

#[test]
fn an_output_other_than_the_steps_is_named_with_both() {
    let text = FIRST_REQUEST.replace("SEND dst=1", "SEND dst=0");
    let mismatch = check(&text, 2, Options::default()).unwrap_err();
    assert_eq!(mismatch.line, 7, "{mismatch}");
    assert!(
        mismatch
            .message
            .contains("where the step at line 6 returned `output 0 SEND dst=1"),
        "{mismatch}"
    );
}

#[test]
fn malformed_logs_are_refused_with_the_line() {
    for (text, expected) in [
        ("", "empty file"),
        ("cmc-glue-log 2\n", "not a glue log header"),
        (
            "cmc-glue-log 1\nevent x START\n",
            "line 2: `x` is not a node number",
        ),
        (
            "cmc-glue-log 1\nevent 0 BOOT\n",
            "`BOOT` is not an event kind",
        ),
        (
            "cmc-glue-log 1\n\noutput 0 SEND payload=0g\n",
            "line 3: payload",
        ),
        (
            "cmc-glue-log 1\nevent 0 RECV colour=red\n",
            "no field `colour`",
        ),
        (
            "cmc-glue-log 1\nevent 0 CLIENT id=99999999999\n",
            "not a number",
        ),
        ("cmc-glue-log 1\nwhatever 0\n", "not a record"),
    ] {
        let problem = parse(text).unwrap_err();
        assert!(problem.contains(expected), "{text:?}: {problem}");
    }
}

/// A Rust product's glue, written with `GlueLogWriter`: two nodes of the Rust
/// reqack core, messages delivered in order, writes flushed at once.
#[test]
fn a_rust_glue_logs_with_the_writer_and_validates() {
    let core = cmc_world::example_cores::catalog()
        .rust_core("reqack")
        .unwrap();
    let spec = WorldSpec::new(Arc::clone(&core), 2).unwrap();
    let mut states: Vec<Vec<u8>> = (0..2)
        .map(|_| vec![0; core.durable_size() + core.volatile_size()])
        .collect();
    let mut log = GlueLogWriter::new(Vec::new()).unwrap();
    let mut pending: VecDeque<(u32, Event)> = VecDeque::new();
    pending.push_back((0, Event::new(EventKind::Start, 0, 0, &[], 0)));
    pending.push_back((1, Event::new(EventKind::Start, 0, 0, &[], 0)));
    pending.push_back((0, Event::new(EventKind::Client, 0, 0, &[], 0)));
    let mut replies = 0;
    while let Some((node, event)) = pending.pop_front() {
        log.event(node, &event).unwrap();
        let config = Config {
            node,
            nodes: 2,
            params: [0; 8],
        };
        let state = &mut states[node as usize];
        if event.kind() == Some(EventKind::Flushed) {
            let offset = event.id as usize;
            state[offset..offset + event.payload().len()].copy_from_slice(event.payload());
        }
        let mut out = Outputs::default();
        cmc_world::run::step::run(&*core, &config, state, &event, &mut out, false).unwrap();
        for output in out.as_slice() {
            log.output(node, output).unwrap();
            match OutputKind::from_raw(output.kind) {
                Some(OutputKind::Send) => pending.push_back((
                    output.dst,
                    Event::new(EventKind::Recv, node, 0, output.payload(), 0),
                )),
                Some(OutputKind::Persist) => pending.push_back((
                    node,
                    Event::new(EventKind::Flushed, 0, output.id, output.payload(), 0),
                )),
                Some(OutputKind::Reply) => replies += 1,
                _ => {}
            }
        }
    }
    assert_eq!(replies, 1);
    let text = String::from_utf8(log.into_inner()).unwrap();
    let summary = validate(&spec, &parse(&text).unwrap(), Options::default()).unwrap();
    assert_eq!(summary.in_flight, 0, "{text}");
    assert!(summary.events >= 6, "{text}");
}
