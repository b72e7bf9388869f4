//! The explorer's HTTP surface, through raw sockets on loopback: every
//! malformed, unknown or oversized request gets its 4xx, a slow one a 408,
//! one connection too many a 503, and the server keeps answering.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::{Duration, Instant};

use cmc_explore::http::Limits;
use cmc_explore::Server;
use cmc_model::{Encode, Fingerprint, Model};
use cmc_search::test_support::{Counter, Panic};

/// A response as read off the socket.
struct Reply {
    status: u16,
    head: String,
    body: String,
}

impl Reply {
    fn header(&self, name: &str) -> Option<&str> {
        self.head.lines().find_map(|line| {
            let (key, value) = line.split_once(':')?;
            key.eq_ignore_ascii_case(name).then(|| value.trim())
        })
    }
}

/// Starts an explorer of die-hard (`INVARIANTS=TypeOK`) with `limits`.
fn start(limits: Limits) -> SocketAddr {
    start_model(
        cmc_models::registry::bundled()[0].build(&[]).unwrap(),
        limits,
    )
}

fn start_model(model: Box<dyn cmc_search::AnyModel>, limits: Limits) -> SocketAddr {
    serve(Server::bind(model, 0).unwrap().with_limits(limits))
}

/// Runs `server` on a thread of its own; its address.
fn serve(server: Server) -> SocketAddr {
    let address: SocketAddr = server
        .url()
        .trim_start_matches("http://")
        .trim_end_matches('/')
        .parse()
        .unwrap();
    assert!(address.ip().is_loopback(), "bound to loopback only");
    std::thread::spawn(move || server.run());
    address
}

/// Sends `request` as is and reads the whole response (the server closes
/// every connection after one response).
fn send(address: SocketAddr, request: &[u8]) -> Reply {
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    stream.write_all(request).unwrap();
    read_reply(&mut stream)
}

fn read_reply(stream: &mut TcpStream) -> Reply {
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes).into_owned();
    let (head, body) = text.split_once("\r\n\r\n").expect("a response head");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|code| code.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    Reply {
        status,
        head: head.to_string(),
        body: body.to_string(),
    }
}

fn get(address: SocketAddr, target: &str) -> Reply {
    send(
        address,
        format!("GET {target} HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes(),
    )
}

fn post_form(address: SocketAddr, target: &str, content_type: &str, body: &str) -> Reply {
    send(
        address,
        format!(
            "POST {target} HTTP/1.1\r\nHost: {address}\r\nContent-Type: {content_type}\r\n\
             Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .as_bytes(),
    )
}

/// `text` as a form value (application/x-www-form-urlencoded).
fn form_value(text: &str) -> String {
    form_urlencoded::byte_serialize(text.as_bytes()).collect()
}

#[test]
fn pages_of_the_initial_state_and_of_a_path() {
    let address = start(Limits::default());
    let root = get(address, "/");
    assert_eq!(root.status, 200);
    assert!(root.body.contains("href=\"/?path=0\""), "{}", root.body);
    let state = get(address, "/?path=0.1");
    assert_eq!(state.status, 200);
    for page in [&root.body, &state.body] {
        for fetch in ["http://", "https://", "src=", "<link", "@import", "url("] {
            assert!(!page.contains(fetch), "the page fetches nothing ({fetch})");
        }
    }
    assert!(state.body.contains("Step 1: FillBigJug"));
    assert!(state.header("content-security-policy").is_some());
    // The explorer's own links from there.
    assert!(state.body.contains("href=\"/?path=0.1.5\""));
    assert!(state.body.contains("href=\"/?path=0\""), "back link");
}

#[test]
fn unknown_pages_states_and_parameters_are_4xx() {
    let address = start(Limits::default());
    for (target, status) in [
        ("/nope", 404),
        ("/favicon.ico", 404),
        ("/?path=abc", 400),
        ("/?path=0..1", 400),
        ("/?path=", 400),
        ("/?path=7", 404),
        ("/?path=0.99", 404),
        ("/?path=0.1&path=0.2", 400),
        ("/?bogus=1", 400),
        ("/?path=0.1&trace=0.2.1", 400),
        ("/?trace=0.1.99", 404),
        ("/find", 400),
        ("/find?fp=zz", 400),
        ("/find?fp=%ff%fe", 400),
        ("/replay", 405),
    ] {
        let reply = get(address, target);
        assert_eq!(reply.status, status, "GET {target}: {}", reply.body);
    }
    let deleted = send(
        address,
        format!("DELETE / HTTP/1.1\r\nHost: {address}\r\n\r\n").as_bytes(),
    );
    assert_eq!(deleted.status, 405);
    assert_eq!(deleted.header("allow"), Some("GET"));
    // The server still answers.
    assert_eq!(get(address, "/?path=0.1").status, 200);
}

#[test]
fn malformed_and_oversized_requests_are_4xx() {
    let limits = Limits {
        head_bytes: 4096,
        body_bytes: 1 << 16,
        ..Limits::default()
    };
    let address = start(limits);
    let huge_header = format!(
        "GET / HTTP/1.1\r\nHost: {address}\r\nX-Filler: {}\r\n\r\n",
        "a".repeat(8192)
    );
    let many_headers = format!(
        "GET / HTTP/1.1\r\nHost: {address}\r\n{}\r\n",
        "X-A: b\r\n".repeat(100)
    );
    let too_long_body = format!(
        "POST /replay HTTP/1.1\r\nHost: {address}\r\nContent-Length: {}\r\n\r\n",
        10 << 20
    );
    let chunked = format!(
        "POST /replay HTTP/1.1\r\nHost: {address}\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"
    );
    let bad_length =
        format!("POST /replay HTTP/1.1\r\nHost: {address}\r\nContent-Length: -4\r\n\r\n");
    let cases: [(&[u8], u16); 9] = [
        (b"HELLO\r\n\r\n", 400),
        (b"GET / HTTP/9.9\r\n\r\n", 400),
        (b"GET /\xff HTTP/1.1\r\n\r\n", 400),
        (b"GET / HTTP/1.1\r\n\r\n", 400), // no Host
        (b"GET / HTTP/1.1\r\nHost: evil.example:80\r\n\r\n", 400),
        (huge_header.as_bytes(), 431),
        (many_headers.as_bytes(), 431),
        (too_long_body.as_bytes(), 413),
        (chunked.as_bytes(), 501),
    ];
    for (request, status) in cases {
        let reply = send(address, request);
        assert_eq!(
            reply.status,
            status,
            "{:?}: {}",
            String::from_utf8_lossy(&request[..request.len().min(60)]),
            reply.body
        );
    }
    assert_eq!(send(address, bad_length.as_bytes()).status, 400);
    // A head that never ends is cut at the limit, not buffered forever.
    let mut stream = TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let _ = stream.write_all(b"GET /?path=");
    for _ in 0..64 {
        if stream.write_all(&[b'0'; 1024]).is_err() {
            break;
        }
    }
    assert_eq!(read_reply(&mut stream).status, 431);
    assert_eq!(get(address, "/").status, 200, "the server still answers");
}

#[test]
fn a_slow_request_gets_408_and_one_connection_too_many_gets_503() {
    let limits = Limits {
        request_time: Duration::from_millis(800),
        connections: 2,
        ..Limits::default()
    };
    let address = start(limits);
    let started = Instant::now();
    let mut slow = TcpStream::connect(address).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\n").unwrap();
    let mut idle = TcpStream::connect(address).unwrap();
    // Both connections are being read: a third is refused at once.
    std::thread::sleep(Duration::from_millis(200));
    let busy = get(address, "/");
    assert_eq!(busy.status, 503, "{}", busy.body);
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    assert_eq!(read_reply(&mut slow).status, 408);
    idle.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut nothing = Vec::new();
    let _ = idle.read_to_end(&mut nothing);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "the time limit holds"
    );
    drop((slow, idle));
    // The slots are free again, once the server has closed both connections.
    let freed = Instant::now();
    while get(address, "/").status != 200 {
        assert!(
            freed.elapsed() < Duration::from_secs(2),
            "the connections are released"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn jump_by_fingerprint_finds_a_shortest_path() {
    let address = start(Limits::default());
    // The state where the big jug holds 4 gallons: TLC's shortest
    // DieHard solution has 7 states, so the path has 6 steps.
    let model = cmc_models::DieHard::new();
    let mut initial = Vec::new();
    model.init_states(&mut initial);
    let mut frontier = initial;
    let solved = loop {
        if let Some(state) = frontier.iter().find(|s| s.big == 4) {
            break *state;
        }
        let mut next = Vec::new();
        for state in &frontier {
            let mut actions = Vec::new();
            model.actions(state, &mut actions);
            next.extend(actions.iter().filter_map(|a| model.next_state(state, a)));
        }
        frontier = next;
    };
    let print = Fingerprint::of_bytes(&solved.to_bytes());
    let reply = get(address, &format!("/find?fp={print}"));
    assert_eq!(reply.status, 303, "{}", reply.body);
    let location = reply.header("location").unwrap().to_string();
    assert_eq!(location.matches('.').count(), 6, "{location}");
    let page = get(address, &location);
    assert!(page.body.contains(&print.to_string()), "{}", page.body);
    // A fingerprint of no reachable state: the whole graph was searched.
    let unknown = get(address, &format!("/find?fp={}", "0".repeat(32)));
    assert_eq!(unknown.status, 404);
    assert!(unknown.body.contains("reachable states were searched"));
}

#[test]
fn a_replay_file_is_loaded_and_stepped_through() {
    let address = start(Limits::default());
    let trace = "cmc-replay 2\nmodel die-hard\nparam INVARIANTS=TypeOK\ninit 0\n\
                 action FillBigJug\naction BigToSmall\nend\n";
    let reply = post_form(
        address,
        "/replay",
        "application/x-www-form-urlencoded",
        &format!("trace={}", form_value(trace)),
    );
    assert_eq!(reply.status, 303, "{}", reply.body);
    assert_eq!(reply.header("location"), Some("/?path=0&trace=0.1.5"));
    let first = get(address, "/?path=0&trace=0.1.5");
    assert!(first.body.contains("Replay: step <b>0</b> of 2"));
    assert!(first
        .body
        .contains("id=\"replay-next\" href=\"/?path=0.1&amp;trace=0.1.5\""));
    let last = get(address, "/?path=0.1.5&trace=0.1.5");
    assert!(last.body.contains("This is its last state"));
    for (content_type, body, status) in [
        ("text/plain", "trace=x".to_string(), 415),
        (
            "application/x-www-form-urlencoded",
            "trace=not+a+replay".into(),
            400,
        ),
        ("application/x-www-form-urlencoded", "other=1".into(), 400),
        (
            "application/x-www-form-urlencoded",
            format!(
                "trace={}",
                form_value(&trace.replace("die-hard", "tcommit"))
            ),
            400,
        ),
        (
            "application/x-www-form-urlencoded",
            format!(
                "trace={}",
                form_value(&trace.replace("BigToSmall", "Spill"))
            ),
            400,
        ),
    ] {
        let reply = post_form(address, "/replay", content_type, &body);
        assert_eq!(reply.status, status, "{body}: {}", reply.body);
    }
}

#[test]
fn a_world_page_shows_nodes_network_ghost_and_chart() {
    let world = cmc_world::build_model(&cmc_world::WorldArgs {
        cores: vec!["rust:reqack".into()],
        nodes: 2,
        params: vec![
            "requests=1".into(),
            "crashes=1".into(),
            "partitions=1".into(),
        ],
        check_determinism: false,
    })
    .unwrap();
    let address = start_model(world, Limits::default());
    let first = get(address, "/?path=0");
    assert_eq!(first.status, 200);
    assert!(first.body.contains("No message in flight."));
    assert!(first.body.contains("No client request yet."));
    assert!(first.body.contains("id=\"nodes\""));
    // Follow the first action whose text is a client request.
    let client = action_links(&first.body)
        .into_iter()
        .find(|(_, text)| text.starts_with("CLIENT"))
        .expect("a CLIENT action");
    let page = get(address, &client.0.replace("&amp;", "&"));
    assert!(page.body.contains("request r0 sent to n"), "{}", page.body);
    assert_eq!(page.body.matches("class=\"lifeline\"").count(), 2);
    assert_eq!(page.body.matches("class=\"event\"").count(), 1);
    let crash = action_links(&page.body)
        .into_iter()
        .find(|(_, text)| text.starts_with("CRASH"))
        .expect("a CRASH action");
    let crashed = get(address, &crash.0.replace("&amp;", "&"));
    assert!(crashed.body.contains(">CRASHED<"), "{}", crashed.body);
    assert!(
        crashed.body.contains("#c0392b"),
        "the chart marks the crash"
    );
    assert!(first.body.contains("every link is up"));
    let cut = action_links(&first.body)
        .into_iter()
        .find(|(_, text)| text == "LINKS cut n0-n1")
        .expect("a LINKS cut action");
    let partitioned = get(address, &cut.0.replace("&amp;", "&"));
    assert!(
        partitioned.body.contains("cut: n0 &rarr; n1, n1 &rarr; n0"),
        "{}",
        partitioned.body
    );
    assert_eq!(partitions_left(&first.body), "1");
    assert_eq!(partitions_left(&partitioned.body), "0", "the cut spent it");
}

/// The `partitions` budget left, from a World page's budgets table.
fn partitions_left(page: &str) -> String {
    let table = page.split("id=\"budgets\"").nth(1).unwrap();
    let table = table.split("</table>").next().unwrap();
    let names: Vec<&str> = table
        .split("<th>")
        .skip(1)
        .map(|cell| cell.split('<').next().unwrap())
        .collect();
    let values: Vec<&str> = table
        .split("<td>")
        .skip(1)
        .map(|cell| cell.split('<').next().unwrap())
        .collect();
    let column = names.iter().position(|name| *name == "partitions").unwrap();
    values[column].to_string()
}

/// `(href, action text)` of each enabled action's link on a page.
fn action_links(page: &str) -> Vec<(String, String)> {
    page.split("<a class=\"action\" href=\"")
        .skip(1)
        .map(|rest| {
            let (href, rest) = rest.split_once('"').unwrap();
            let text = rest
                .split_once("<code>")
                .and_then(|(_, rest)| rest.split_once("</code>"))
                .map(|(text, _)| text.to_string())
                .unwrap();
            (href.to_string(), text)
        })
        .collect()
}

#[test]
fn a_model_that_panics_gets_a_500_and_the_server_goes_on() {
    let address =
        serve(Server::bind_model(Counter::to(5).panicking(Panic::Description, 2), 0).unwrap());
    assert_eq!(get(address, "/?path=0").status, 200);
    // The page of count 1 describes its successor, count 2.
    let broken = get(address, "/?path=0.0");
    assert_eq!(broken.status, 500);
    assert!(broken.body.contains("cannot describe 2"), "{}", broken.body);
    assert_eq!(get(address, "/?path=0").status, 200);
}
