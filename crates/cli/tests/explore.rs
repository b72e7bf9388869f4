//! `cmc explore` from the command line: bad inputs are refused with exit
//! code 2 before anything is served, and the server answers on loopback.
//! (Its pages in a real browser: `browser.rs`; its HTTP rules: the tests of
//! `cmc-explore`.)

mod common;

use std::io::{Read, Write};
use std::net::TcpStream;

use common::{cmc_exiting, compile_c, explore};

#[test]
fn bad_inputs_are_refused_with_exit_code_2() {
    let dir = tempfile::tempdir().unwrap();
    let (_, stderr) = cmc_exiting(&["explore"], dir.path(), 2);
    assert!(stderr.contains("name a model to explore"), "{stderr}");
    let (_, stderr) = cmc_exiting(&["explore", "no-such-model"], dir.path(), 2);
    assert!(stderr.contains("unknown model `no-such-model`"), "{stderr}");
    let (_, stderr) = cmc_exiting(&["explore", "die-hard", "RM=3"], dir.path(), 2);
    assert!(stderr.contains("RM"), "{stderr}");
    let (_, stderr) = cmc_exiting(&["explore", "die-hard", "--port", "65536"], dir.path(), 2);
    assert!(stderr.contains("65536"), "{stderr}");
    let (_, stderr) = cmc_exiting(
        &["explore", "--core", "rust:no-such-core", "requests=1"],
        dir.path(),
        2,
    );
    assert!(stderr.contains("no-such-core"), "{stderr}");
    // A port already taken.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port().to_string();
    let (_, stderr) = cmc_exiting(&["explore", "die-hard", "--port", &port], dir.path(), 2);
    assert!(stderr.contains("cannot listen on 127.0.0.1"), "{stderr}");
}

/// The whole response to `GET target` on the explorer at `port`.
fn get(port: &str, target: &str) -> String {
    let mut stream = TcpStream::connect(format!("127.0.0.1:{port}")).unwrap();
    write!(
        stream,
        "GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n"
    )
    .unwrap();
    let mut reply = String::new();
    stream.read_to_string(&mut reply).unwrap();
    reply
}

#[test]
fn the_explorer_serves_on_loopback_and_prints_its_url() {
    let dir = tempfile::tempdir().unwrap();
    let (_child, port) = explore(&["two-phase", "RM=2"], dir.path());
    let reply = get(&port, "/?path=0.0");
    assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
    assert!(reply.contains("two-phase RM=2"), "{reply}");
    assert!(reply.contains("id=\"actions\""), "{reply}");
}

#[test]
fn a_core_fault_is_shown_as_a_fault_not_as_an_end() {
    let dir = tempfile::tempdir().unwrap();
    let core = dir.path().join("liberror.so");
    compile_c(
        &["cores/test/misbehave.c"],
        &["-DERROR_CODE", "-shared", "-fPIC"],
        &core,
    );
    let core = core.to_str().unwrap();
    let (_child, port) = explore(&["--core", core, "--nodes", "1", "requests=1"], dir.path());
    let reply = get(&port, "/?path=0");
    assert!(reply.starts_with("HTTP/1.1 200 OK"), "{reply}");
    assert!(reply.contains("id=\"fault\""), "{reply}");
    assert!(reply.contains("error code 7"), "{reply}");
    assert!(
        !reply.contains("id=\"end\""),
        "not a legitimate end: {reply}"
    );
}
