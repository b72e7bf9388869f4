//! Clients: CLIENT (a new request, `requests=K`), LOCAL_FAIL (a request
//! failed at its node, budget `local_fails`) and RETRY (an open request sent
//! again, budget `retries`), each recorded in the ghost history.

use cmc_model::{DecodeError, Decoder, Encode};

use crate::core::abi::{Event, EventKind};
use crate::system::action::{Action, ChartStep, Family};
use crate::system::state::{Budget, GhostEntry, GhostKind, Payload, WorldState};

use super::{live, spend, Env, Observer, StepFault, GHOST_MAX};

/// What a client does: each is recorded in the ghost history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientAction {
    /// CLIENT: request `request` is sent to `node`.
    Request {
        /// The request id.
        request: u8,
        /// The node it is sent to.
        node: u8,
        /// The operation: an index into the workload's operations
        /// ([`crate::system::spec::Workload::operations`]; 0 without a workload).
        op: u16,
    },
    /// LOCAL_FAIL: request `request` fails locally at `node` (budget `local_fails`).
    LocalFail {
        /// The request id.
        request: u8,
        /// The node that holds it.
        node: u8,
    },
    /// RETRY: the client of open request `request` times out and sends it
    /// again to `node` (budget `retries`).
    Retry {
        /// The request id.
        request: u8,
        /// The node it is sent to now.
        node: u8,
    },
}

impl ClientAction {
    /// The request and the node it goes to, or fails at.
    pub fn request_and_node(&self) -> (u8, u8) {
        match *self {
            ClientAction::Request { request, node, .. }
            | ClientAction::LocalFail { request, node }
            | ClientAction::Retry { request, node } => (request, node),
        }
    }
}

impl Family for ClientAction {
    const KINDS: &'static [(&'static str, Option<Budget>)] = &[
        ("CLIENT", None),
        ("LOCAL_FAIL", Some(Budget::LocalFails)),
        ("RETRY", Some(Budget::Retries)),
    ];

    fn kind(&self) -> (&'static str, bool) {
        match self {
            ClientAction::Request { .. } => ("CLIENT", false),
            ClientAction::LocalFail { .. } => ("LOCAL_FAIL", true),
            ClientAction::Retry { .. } => ("RETRY", true),
        }
    }

    fn changed_node(&self) -> Option<u8> {
        Some(self.request_and_node().1)
    }

    fn encode(&self, out: &mut Vec<u8>) {
        match *self {
            ClientAction::Request { request, node, op } => {
                out.extend([8, request, node]);
                op.encode(out);
            }
            ClientAction::LocalFail { request, node } => out.extend([9, request, node]),
            ClientAction::Retry { request, node } => out.extend([14, request, node]),
        }
    }

    fn decode(tag: u8, decoder: &mut Decoder<'_>) -> Result<Option<Self>, DecodeError> {
        if ![8, 9, 14].contains(&tag) {
            return Ok(None);
        }
        let (request, node) = (u8::decode(decoder)?, u8::decode(decoder)?);
        Ok(Some(match tag {
            8 => ClientAction::Request {
                request,
                node,
                op: u16::decode(decoder)?,
            },
            9 => ClientAction::LocalFail { request, node },
            _ => ClientAction::Retry { request, node },
        }))
    }

    fn text(&self, env: &Env) -> String {
        match *self {
            ClientAction::Request { request, node, op } => match &env.spec.workload {
                Some(workload) => {
                    let payload = env.operations.get(op as usize).copied();
                    let text = payload.map_or(format!("op={op}"), |payload| {
                        workload.describe(payload.as_bytes())
                    });
                    format!("CLIENT r{request} -> n{node} {text}")
                }
                None => format!("CLIENT r{request} -> n{node}"),
            },
            ClientAction::LocalFail { request, node } => {
                format!("LOCAL_FAIL r{request} at n{node}")
            }
            ClientAction::Retry { request, node } => format!("RETRY r{request} -> n{node}"),
        }
    }

    fn chart(&self, _env: &Env) -> ChartStep {
        let (request, node) = self.request_and_node();
        ChartStep::Local {
            node,
            label: format!("{} r{request}", self.kind().0),
        }
    }

    fn renamed(&self, _env: &Env, perm: &[u32]) -> Option<Self> {
        let mut renamed = *self;
        let (ClientAction::Request { node, .. }
        | ClientAction::LocalFail { node, .. }
        | ClientAction::Retry { node, .. }) = &mut renamed;
        *node = perm[*node as usize] as u8;
        Some(renamed)
    }

    /// A new request after the nodes' own events that answer earlier ones.
    fn fair_rank(&self) -> Option<u8> {
        matches!(self, ClientAction::Request { .. }).then_some(3)
    }

    #[cfg(test)]
    fn examples() -> Vec<Self> {
        vec![
            ClientAction::Request {
                request: 2,
                node: 1,
                op: 300,
            },
            ClientAction::LocalFail {
                request: 1,
                node: 0,
            },
            ClientAction::Retry {
                request: 0,
                node: 2,
            },
        ]
    }
}

impl Env {
    /// The CLIENT, LOCAL_FAIL and RETRY actions of `state`.
    #[inline]
    pub(super) fn client_actions(&self, state: &WorldState, out: &mut Vec<Action>) {
        if state.issued < self.spec.requests {
            for &node in self.spec.request_nodes(state.issued) {
                if !state.nodes[node as usize].crashed {
                    out.extend((0..self.operations.len()).map(|op| {
                        Action::Client(ClientAction::Request {
                            request: state.issued,
                            node,
                            op: op as u16,
                        })
                    }));
                }
            }
        }
        if state.budget(Budget::LocalFails) > 0 {
            for (request, node) in self.failable_requests(state) {
                if !state.nodes[node as usize].crashed {
                    out.push(Action::Client(ClientAction::LocalFail {
                        request: request as u8,
                        node,
                    }));
                }
            }
        }
        if state.budget(Budget::Retries) > 0 {
            for (request, _) in open_requests(state) {
                for &node in &self.spec.client_nodes {
                    if !state.nodes[node as usize].crashed {
                        out.push(Action::Client(ClientAction::Retry {
                            request: request as u8,
                            node,
                        }));
                    }
                }
            }
        }
    }

    /// The effect of a CLIENT, LOCAL_FAIL or RETRY: `Ok(false)` when it is not
    /// enabled.
    #[inline]
    pub(super) fn client_next(
        &self,
        state: &WorldState,
        action: &ClientAction,
        next: &mut WorldState,
        observer: &mut impl Observer,
    ) -> Result<bool, StepFault> {
        let live = |node: u8| live(state, node);
        match *action {
            ClientAction::Request { request, node, op } => {
                let Some(payload) = self.operations.get(op as usize).copied() else {
                    return Ok(false);
                };
                if request != state.issued
                    || request >= self.spec.requests
                    || !live(node)
                    || !self.spec.request_nodes(request).contains(&node)
                {
                    return Ok(false);
                }
                next.issued += 1;
                let sent = (GhostKind::Invoke, request, node, payload);
                self.send_request(state, next, sent, observer)?;
            }
            ClientAction::LocalFail { request, node } => {
                let holds = || {
                    self.failable_requests(state)
                        .contains(&(request as u32, node))
                };
                if !live(node) || !holds() {
                    return Ok(false);
                }
                if !spend(next, Budget::LocalFails) {
                    return Ok(false);
                }
                push_ghost(
                    next,
                    GhostKind::LocalFail,
                    request as u32,
                    node,
                    Payload::default(),
                )
                .map_err(|why| client_fault(state, node, EventKind::LocalFail, request, why))?;
                self.step(
                    next,
                    node,
                    EventKind::LocalFail,
                    0,
                    request as u32,
                    &Payload::EMPTY,
                    observer,
                )?;
            }
            ClientAction::Retry { request, node } => {
                let open = open_requests(state).any(|(open, _)| open == request as u32);
                if !open || !live(node) || !self.spec.client_nodes.contains(&node) {
                    return Ok(false);
                }
                if !spend(next, Budget::Retries) {
                    return Ok(false);
                }
                let payload = state
                    .ghost
                    .iter()
                    .find(|entry| {
                        entry.kind == GhostKind::Invoke && entry.request == request as u32
                    })
                    .map(|entry| entry.payload)
                    .unwrap_or_default();
                next.lost_in_crash.retain(|lost| *lost != request);
                let sent = (GhostKind::Retry, request, node, payload);
                self.send_request(state, next, sent, observer)?;
            }
        }
        Ok(true)
    }

    /// The requests LOCAL_FAIL may fail, with the node that holds each:
    /// the open ones and, with `local_fail_after_reply`, the replied ones
    /// not failed yet (at the node that replied).
    fn failable_requests(&self, state: &WorldState) -> Vec<(u32, u8)> {
        let mut failable: Vec<(u32, u8)> = open_requests(state).collect();
        let open = failable.len();
        if self.spec.local_fail_after_reply {
            for entry in &state.ghost {
                let failed = || {
                    state.ghost.iter().any(|other| {
                        other.request == entry.request && other.kind == GhostKind::LocalFail
                    })
                };
                let first_reply = || {
                    !failable
                        .iter()
                        .any(|(request, _)| *request == entry.request)
                };
                if entry.kind == GhostKind::Reply && !failed() && first_reply() {
                    failable.push((entry.request, entry.node));
                }
            }
            // By request, not by reply order: the same for a ghost grouped by request.
            failable[open..].sort_unstable();
        }
        failable
    }

    /// A client sends `request` with its operation `payload` to `node`, for
    /// the first time (`GhostKind::Invoke`) or again (`GhostKind::Retry`):
    /// the ghost history records it and the node's core gets `CLIENT`.
    /// `state` is the state before the action, for a fault's report.
    fn send_request(
        &self,
        state: &WorldState,
        next: &mut WorldState,
        (kind, request, node, payload): (GhostKind, u8, u8, Payload),
        observer: &mut impl Observer,
    ) -> Result<(), StepFault> {
        push_ghost(next, kind, request as u32, node, payload)
            .map_err(|why| client_fault(state, node, EventKind::Client, request, why))?;
        self.step(
            next,
            node,
            EventKind::Client,
            0,
            request as u32,
            &payload,
            observer,
        )
    }
}

/// The requests invoked and not yet answered (no reply or local failure),
/// with the node each was last sent to (its invocation's, or its last retry's).
pub fn open_requests(state: &WorldState) -> impl Iterator<Item = (u32, u8)> + '_ {
    state.ghost.iter().filter_map(|entry| {
        let open = entry.kind == GhostKind::Invoke
            && !state
                .ghost
                .iter()
                .any(|later| later.request == entry.request && later.kind.is_answer());
        let node = || {
            state
                .ghost
                .iter()
                .rev()
                .find(|later| later.request == entry.request && later.kind == GhostKind::Retry)
                .map_or(entry.node, |retry| retry.node)
        };
        open.then(|| (entry.request, node()))
    })
}

/// The capacity fault of a client event (`kind` of `request` at `node`)
/// that could not be recorded in the ghost history.
fn client_fault(
    state: &WorldState,
    node: u8,
    kind: EventKind,
    request: u8,
    why: String,
) -> StepFault {
    let clock = state.nodes[node as usize].clock as u64;
    StepFault::capacity(node, Event::new(kind, 0, request as u32, &[], clock), why)
}

pub(super) fn push_ghost(
    state: &mut WorldState,
    kind: GhostKind,
    request: u32,
    node: u8,
    payload: Payload,
) -> Result<(), String> {
    if state.ghost.len() >= GHOST_MAX {
        return Err(format!(
            "GHOST_MAX: the ghost history already holds {GHOST_MAX} client events"
        ));
    }
    state.ghost.push(GhostEntry {
        kind,
        request,
        node,
        payload,
    });
    Ok(())
}
