//! What each URL of the explorer does.
//!
//! - `GET /`: the initial states; `GET /?path=3.0.1`: the state that path
//!   reaches, with `&trace=...` when stepping through a loaded replay;
//! - `GET /find?fp=HEX`: a redirect to a path to the state of that
//!   fingerprint (a state shown in this session, else a shortest path found
//!   by a bounded breadth-first search), or 404;
//! - `POST /replay` (a form with the replay file's text in `trace`): a
//!   redirect to its initial state, stepping through it.
//!
//! Anything else is a 404 (unknown path), 405 (other method), 400
//! (malformed query, path, fingerprint or replay file, or a `Host` other
//! than this loopback address, against DNS rebinding) or 415.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use cmc_model::Fingerprint;
use cmc_search::ReplayFile;

use crate::explorer::{Explorable, FindLimits, Found, Walk};
use crate::http::{Request, Response};
use crate::page;
use crate::path::TracePath;

/// Most states a search by fingerprint visits.
const FIND_STATES_MAX: usize = 100_000;
/// Longest a search by fingerprint runs.
const FIND_TIME_MAX: Duration = Duration::from_secs(3);
/// Most states remembered from the pages shown, for jumps by fingerprint.
const REMEMBERED_MAX: usize = 100_000;

/// The explorer's request handler for one model.
pub struct Routes {
    model: Box<dyn Explorable>,
    title: String,
    /// `Host` values this server answers to.
    hosts: [String; 2],
    /// Fingerprints of the states shown so far, and a path to each.
    seen: Mutex<HashMap<Fingerprint, TracePath>>,
}

impl Routes {
    /// The handler of `model`, served on loopback port `port`.
    pub fn new(model: Box<dyn Explorable>, port: u16) -> Routes {
        Routes {
            title: model.title(),
            model,
            hosts: [format!("127.0.0.1:{port}"), format!("localhost:{port}")],
            seen: Mutex::new(HashMap::new()),
        }
    }

    /// Answers `request`.
    pub fn handle(&self, request: &Request) -> Response {
        match request.header("host") {
            Some(host) if self.hosts.iter().any(|ours| ours == host) => {}
            _ => {
                return Response::text(
                    400,
                    &format!("this server answers only to Host {}", self.hosts[0]),
                )
            }
        }
        let (route, query) = match request.target.split_once('?') {
            Some((route, query)) => (route, query),
            None => (request.target.as_str(), ""),
        };
        let method = request.method.as_str();
        let result = match (method, route) {
            ("GET", "/") => self.state(query),
            ("GET", "/find") => self.find(query),
            ("POST", "/replay") => self.replay(request),
            (_, "/" | "/find") => Err(not_allowed("GET")),
            (_, "/replay") => Err(not_allowed("POST")),
            _ => Err(self.error(404, "Not found", "There is no such page here.")),
        };
        result.unwrap_or_else(|response| response)
    }

    fn error(&self, status: u16, heading: &str, message: &str) -> Response {
        Response::html(status, page::error_page(&self.title, heading, message))
    }

    fn bad_request(&self, message: &str) -> Response {
        self.error(400, "Bad request", message)
    }

    /// The page of `?path=...&trace=...`, or of the initial states.
    fn state(&self, query: &str) -> Result<Response, Response> {
        let params = self.query(query, &["path", "trace"])?;
        let parse = |name: &str| -> Result<Option<TracePath>, Response> {
            match params.get(name) {
                None => Ok(None),
                Some(text) => TracePath::parse(text)
                    .map(Some)
                    .map_err(|problem| self.bad_request(&format!("{name}: {problem}"))),
            }
        };
        let trace = parse("trace")?;
        let path = match (parse("path")?, &trace) {
            (Some(path), _) => path,
            (None, Some(trace)) => trace.prefix(0),
            (None, None) => {
                let states = self.model.initial_states();
                let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
                for (index, state) in states.iter().enumerate() {
                    remember(&mut seen, state.fingerprint, || {
                        TracePath::at_initial(index)
                    });
                }
                drop(seen);
                let fault = self.model.fault();
                return Ok(Response::html(
                    200,
                    page::initial_page(&self.title, &states, fault.as_deref()),
                ));
            }
        };
        let replay = match &trace {
            Some(trace) if !path.is_prefix_of(trace) => {
                return Err(self.bad_request("the path is not on the trace it steps through"))
            }
            Some(trace) => {
                // The whole trace must exist, or its "next" links would lead nowhere.
                let actions = self
                    .model
                    .action_texts(trace)
                    .map_err(|problem| self.error(404, "No such state", &problem))?;
                Some(page::Replay { trace, actions })
            }
            None => None,
        };
        let walk = self
            .model
            .walk(&path)
            .map_err(|problem| self.error(404, "No such state", &problem))?;
        self.remember_walk(&path, &walk);
        Ok(Response::html(
            200,
            page::state_page(&self.title, &path, replay.as_ref(), &walk),
        ))
    }

    /// Remembers the states of `walk` (the states of `path` and its
    /// successors) for jumps by fingerprint.
    fn remember_walk(&self, path: &TracePath, walk: &Walk) {
        let mut seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        for (at, step) in walk.steps.iter().enumerate() {
            remember(&mut seen, step.fingerprint, || path.prefix(at));
        }
        for (index, successor) in walk.successors.iter().enumerate() {
            remember(&mut seen, successor.fingerprint, || path.child(index));
        }
    }

    /// `GET /find?fp=HEX`.
    fn find(&self, query: &str) -> Result<Response, Response> {
        let params = self.query(query, &["fp"])?;
        let text = params
            .get("fp")
            .ok_or_else(|| self.bad_request("give the fingerprint as fp=HEX"))?;
        let fingerprint = parse_fingerprint(text).map_err(|problem| self.bad_request(&problem))?;
        let remembered = self
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&fingerprint)
            .cloned();
        if let Some(path) = remembered {
            return Ok(Response::redirect(format!("/?path={path}")));
        }
        let limits = FindLimits {
            max_states: FIND_STATES_MAX,
            deadline: Instant::now() + FIND_TIME_MAX,
        };
        match self.model.find(fingerprint, limits) {
            Found::Path(path) => Ok(Response::redirect(format!("/?path={path}"))),
            Found::NotFound { explored, complete } => {
                let message = if complete {
                    format!(
                        "No reachable state has the fingerprint {fingerprint}: \
                         all {explored} reachable states were searched."
                    )
                } else {
                    format!(
                        "The fingerprint {fingerprint} is not one of the {explored} states \
                         nearest the initial states (the search stops after {FIND_STATES_MAX} \
                         states or {} s), nor a state shown in this session.",
                        FIND_TIME_MAX.as_secs()
                    )
                };
                Err(self.error(404, "Unknown fingerprint", &message))
            }
        }
    }

    /// `POST /replay` with the replay file's text in the form field `trace`.
    fn replay(&self, request: &Request) -> Result<Response, Response> {
        let form_type = request
            .header("content-type")
            .and_then(|value| value.split(';').next())
            .map(str::trim);
        if form_type != Some("application/x-www-form-urlencoded") {
            return Err(self.error(
                415,
                "Unsupported form",
                "send the replay file as a form field `trace` (application/x-www-form-urlencoded)",
            ));
        }
        let body = std::str::from_utf8(&request.body)
            .map_err(|_| self.bad_request("the form is not UTF-8"))?;
        let params = self.query(body, &["trace"])?;
        let text = params
            .get("trace")
            .ok_or_else(|| self.bad_request("the form has no replay file (field `trace`)"))?;
        let file = ReplayFile::parse(text).map_err(|problem| {
            self.bad_request(&format!("this is not a replay file: {problem}"))
        })?;
        let trace = self.model.path_of_replay(&file).map_err(|problem| {
            self.bad_request(&format!("the replay file does not fit: {problem}"))
        })?;
        Ok(Response::redirect(format!(
            "/?path={}&trace={trace}",
            trace.prefix(0)
        )))
    }

    /// The `NAME=VALUE` pairs of a query or form; a name not in `known`, or
    /// given twice, is a 400.
    fn query(&self, text: &str, known: &[&str]) -> Result<HashMap<String, String>, Response> {
        let mut params = HashMap::new();
        for (name, value) in form_urlencoded::parse(text.as_bytes()) {
            if !known.contains(&name.as_ref()) {
                return Err(self.bad_request(&format!(
                    "unknown parameter `{name}` (this page takes {})",
                    known.join(", ")
                )));
            }
            if params
                .insert(name.to_string(), value.into_owned())
                .is_some()
            {
                return Err(self.bad_request(&format!("parameter `{name}` is given twice")));
            }
        }
        Ok(params)
    }
}

/// A 405 naming the method the route takes.
fn not_allowed(allowed: &'static str) -> Response {
    let mut response = Response::text(405, &format!("this page takes {allowed} only"));
    response.headers.push(("Allow", allowed.to_string()));
    response
}

/// Records a path to `fingerprint` unless one is known or the memory is full.
fn remember(
    seen: &mut HashMap<Fingerprint, TracePath>,
    fingerprint: Fingerprint,
    path: impl FnOnce() -> TracePath,
) {
    if seen.len() < REMEMBERED_MAX {
        seen.entry(fingerprint).or_insert_with(path);
    }
}

/// A fingerprint as `cmc` prints it: 32 hex digits.
fn parse_fingerprint(text: &str) -> Result<Fingerprint, String> {
    let text = text.trim();
    if text.len() != 32 || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return Err("a fingerprint is 32 hex digits, as the explorer shows it".into());
    }
    let value = u128::from_str_radix(text, 16).map_err(|problem| problem.to_string())?;
    Ok(Fingerprint(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_parse_as_they_print() {
        let print = Fingerprint::of_bytes(b"state");
        assert_eq!(parse_fingerprint(&print.to_string()), Ok(print));
        assert_eq!(
            parse_fingerprint(&print.to_string().to_uppercase()),
            Ok(print)
        );
        for bad in [
            "",
            "12",
            "g0000000000000000000000000000000",
            &"0".repeat(33),
        ] {
            assert!(parse_fingerprint(bad).is_err(), "{bad}");
        }
    }
}
