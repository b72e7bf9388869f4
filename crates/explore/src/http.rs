//! A small HTTP/1.1 server for the explorer, on loopback only: one request
//! per connection, every request bounded in size and time.
//!
//! The request head is parsed by `httparse` (hyper's parser); the sockets
//! are std's, so that the limits are ours: a head of at most
//! [`Limits::head_bytes`], a body of at most [`Limits::body_bytes`] (with a
//! `Content-Length`; chunked bodies are refused), the whole request read
//! within [`Limits::request_time`], at most [`Limits::connections`]
//! connections served at once. A request past a limit gets its 4xx (or 503)
//! and the connection is closed; nothing a client sends can panic or stall
//! the server.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The bounds on what one request may take.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Most bytes of the request line and headers.
    pub head_bytes: usize,
    /// Most bytes of a body.
    pub body_bytes: usize,
    /// Longest time to receive a whole request.
    pub request_time: Duration,
    /// Most connections handled at once (more get a 503 at once).
    pub connections: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            head_bytes: 16 << 10,
            body_bytes: 4 << 20,
            request_time: Duration::from_secs(10),
            connections: 16,
        }
    }
}

/// Most headers in a request.
const HEADERS_MAX: usize = 64;

/// A request, as the handler sees it.
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, `POST`...
    pub method: String,
    /// The request target: path and query, e.g. `/?path=0.1`.
    pub target: String,
    /// The headers, names in lower case.
    pub headers: Vec<(String, String)>,
    /// The body (empty without `Content-Length`).
    pub body: Vec<u8>,
}

impl Request {
    /// The value of header `name` (lower case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(header, _)| header == name)
            .map(|(_, value)| value.as_str())
    }
}

/// A response.
#[derive(Debug, Clone)]
pub struct Response {
    /// The status code.
    pub status: u16,
    /// The `Content-Type`.
    pub content_type: &'static str,
    /// Extra headers, e.g. `Location`.
    pub headers: Vec<(&'static str, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// An HTML page with `status`.
    pub fn html(status: u16, page: String) -> Response {
        Response {
            status,
            content_type: "text/html; charset=utf-8",
            headers: Vec::new(),
            body: page.into_bytes(),
        }
    }

    /// A plain-text `status` response saying `message`.
    pub fn text(status: u16, message: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            headers: Vec::new(),
            body: format!("{} {}: {message}\n", status, reason(status)).into_bytes(),
        }
    }

    /// A `303 See Other` to `location`.
    pub fn redirect(location: String) -> Response {
        let mut response = Response::text(303, &format!("see {location}"));
        response.headers.push(("Location", location));
        response
    }
}

/// The reason phrase of the status codes the server sends.
fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        303 => "See Other",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// Handles one request; it must not panic (the server turns a panic into a 500).
pub type Handler = dyn Fn(&Request) -> Response + Send + Sync;

/// Serves `listener` forever, each connection on its own thread.
pub fn serve(listener: TcpListener, limits: Limits, handler: Arc<Handler>) -> ! {
    let active = Arc::new(AtomicUsize::new(0));
    loop {
        let Ok((stream, _)) = listener.accept() else {
            // Out of descriptors or a connection reset before accept: wait a
            // little instead of spinning, then go on.
            std::thread::sleep(Duration::from_millis(50));
            continue;
        };
        if active.fetch_add(1, Ordering::SeqCst) >= limits.connections {
            active.fetch_sub(1, Ordering::SeqCst);
            refuse_busy(stream);
            continue;
        }
        let (active, handler) = (Arc::clone(&active), Arc::clone(&handler));
        let spawned = std::thread::Builder::new()
            .name("cmc-explore-connection".into())
            .spawn(move || {
                connection(stream, &limits, &*handler);
                active.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

/// Answers 503 to a connection over the limit. On the accepting thread:
/// the request is not read, only drained for a moment so that closing the
/// connection does not reset it before the client reads the answer.
fn refuse_busy(mut stream: TcpStream) {
    let _ = stream.set_write_timeout(Some(Duration::from_secs(1)));
    let response = Response::text(503, "too many connections at once; try again");
    let _ = write_response(&mut stream, &response);
    let _ = stream.shutdown(Shutdown::Write);
    drain(&mut stream, Duration::from_millis(50), 64 << 10);
}

/// Reads and drops what the client sends, at most `bytes`, until it closes
/// or stays silent for `wait`: a close with unread bytes pending would
/// reset the connection, and the client could lose the response.
fn drain(stream: &mut TcpStream, wait: Duration, bytes: usize) {
    let _ = stream.set_read_timeout(Some(wait));
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < bytes {
        match stream.read(&mut sink) {
            Ok(0) | Err(_) => break,
            Ok(read) => drained += read,
        }
    }
}

/// Reads one request from `stream`, answers it and closes the connection.
fn connection(mut stream: TcpStream, limits: &Limits, handler: &Handler) {
    let _ = stream.set_write_timeout(Some(limits.request_time));
    let deadline = Instant::now() + limits.request_time;
    let (response, unread) = match read_request(&mut stream, limits, deadline) {
        Ok(request) => {
            let handled =
                std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| handler(&request)));
            let response = handled.unwrap_or_else(|payload| {
                let message = payload
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| payload.downcast_ref::<&str>().copied())
                    .unwrap_or("(no message)");
                Response::text(500, &format!("the model panicked: {message}"))
            });
            (response, false)
        }
        Err(Unread::Closed) => return,
        Err(Unread::Refused(response)) => (response, true),
    };
    let _ = write_response(&mut stream, &response);
    let _ = stream.shutdown(Shutdown::Write);
    if unread {
        drain(&mut stream, Duration::from_millis(500), limits.body_bytes);
    }
}

/// Why no request was handed to the handler.
enum Unread {
    /// The client closed the connection before sending a request.
    Closed,
    /// The request broke a rule or a limit: this response says which.
    Refused(Response),
}

/// Reads into `buffer` from `stream` until `deadline`; `Ok(0)` at the end
/// of the stream.
fn read_some(
    stream: &mut TcpStream,
    buffer: &mut [u8],
    deadline: Instant,
) -> Result<usize, Unread> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(Unread::Refused(Response::text(
            408,
            "the request did not arrive in time",
        )));
    }
    let _ = stream.set_read_timeout(Some(left));
    match stream.read(buffer) {
        Ok(read) => Ok(read),
        Err(error)
            if matches!(
                error.kind(),
                std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
            ) =>
        {
            Err(Unread::Refused(Response::text(
                408,
                "the request did not arrive in time",
            )))
        }
        Err(_) => Err(Unread::Closed),
    }
}

fn read_request(
    stream: &mut TcpStream,
    limits: &Limits,
    deadline: Instant,
) -> Result<Request, Unread> {
    let refuse = |status, message: &str| Unread::Refused(Response::text(status, message));
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 4096];
    let (head_len, mut request) = loop {
        let read = read_some(stream, &mut chunk, deadline)?;
        if read == 0 {
            return Err(if buffer.is_empty() {
                Unread::Closed
            } else {
                refuse(400, "the request ended before its headers did")
            });
        }
        buffer.extend_from_slice(&chunk[..read]);
        let mut headers = [httparse::EMPTY_HEADER; HEADERS_MAX];
        let mut parsed = httparse::Request::new(&mut headers);
        match parsed.parse(&buffer) {
            Ok(httparse::Status::Complete(head_len)) if head_len <= limits.head_bytes => {
                break (head_len, parsed_request(&parsed)?)
            }
            Ok(httparse::Status::Partial) if buffer.len() <= limits.head_bytes => continue,
            Ok(_) => return Err(refuse(431, "the request's headers are too large")),
            Err(httparse::Error::TooManyHeaders) => {
                return Err(refuse(431, "the request has too many headers"))
            }
            Err(error) => return Err(refuse(400, &format!("malformed request: {error}"))),
        }
    };
    if request.header("transfer-encoding").is_some() {
        return Err(refuse(501, "chunked request bodies are not accepted"));
    }
    let length = match request.header("content-length") {
        None => 0,
        Some(text) => text
            .trim()
            .parse::<usize>()
            .map_err(|_| refuse(400, "Content-Length is not a number"))?,
    };
    if length > limits.body_bytes {
        return Err(refuse(
            413,
            &format!("the body is larger than {} bytes", limits.body_bytes),
        ));
    }
    let mut body = buffer.split_off(head_len);
    if body.len() > length {
        return Err(refuse(400, "more bytes than Content-Length says"));
    }
    while body.len() < length {
        let read = read_some(stream, &mut chunk, deadline)?;
        if read == 0 {
            return Err(refuse(400, "the body is shorter than Content-Length says"));
        }
        body.extend_from_slice(&chunk[..read]);
        if body.len() > length {
            return Err(refuse(400, "more bytes than Content-Length says"));
        }
    }
    request.body = body;
    Ok(request)
}

/// The parts of a complete `httparse` request; headers that are not UTF-8
/// are refused.
fn parsed_request(parsed: &httparse::Request<'_, '_>) -> Result<Request, Unread> {
    let refuse = |message: &str| Unread::Refused(Response::text(400, message));
    let mut headers = Vec::new();
    for header in parsed.headers.iter() {
        let value =
            std::str::from_utf8(header.value).map_err(|_| refuse("a header value is not UTF-8"))?;
        headers.push((header.name.to_ascii_lowercase(), value.to_string()));
    }
    Ok(Request {
        method: parsed.method.unwrap_or_default().to_string(),
        target: parsed.path.unwrap_or_default().to_string(),
        headers,
        body: Vec::new(),
    })
}

fn write_response(stream: &mut TcpStream, response: &Response) -> std::io::Result<()> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; \
         script-src 'unsafe-inline'; img-src data:; form-action 'self'\r\n",
        response.status,
        reason(response.status),
        response.content_type,
        response.body.len()
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(&response.body)?;
    stream.flush()
}
