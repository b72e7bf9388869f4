//! Running one core step and carrying out its outputs: SEND into the
//! network (counted copies, surplus, FIFO runs), timers, wake-ups, persists,
//! replies into the ghost history and random choices; every capacity reached
//! is a fault naming it.

use std::cell::RefCell;

use crate::core::abi::{
    timer_deadline, EventKind, OutputKind, Outputs, OUTPUTS_MAX, PAYLOAD_MAX, TIMERS_MAX,
};
use crate::run::step::{self, StepFailure};
use crate::system::spec::NetSemantics;
use crate::system::state::{Choice, GhostKind, Network, Payload, Persist, WorldState};

use super::clients::push_ghost;
use super::{Env, EnvFailure, Observer, StepFault, NET_MAX, PERSISTS_MAX};

impl Env {
    /// Delivers one event to `node` and carries out its outputs.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn step(
        &self,
        state: &mut WorldState,
        node: u8,
        kind: EventKind,
        src: u32,
        id: u32,
        payload: &Payload,
        observer: &mut impl Observer,
    ) -> Result<(), StepFault> {
        let event = payload.event(kind, src, id, state.nodes[node as usize].clock as u64);
        let fault = |failure| StepFault {
            node,
            event: Box::new(event),
            failure,
        };
        let core = self.spec.core_of(node as usize);
        with_outputs(|out| {
            step::run(
                core,
                &self.configs[node as usize],
                &mut state.nodes[node as usize].core,
                &event,
                out,
                self.spec.check_determinism,
            )
            .map_err(|failure| fault(EnvFailure::Step(failure)))?;
            observer.on_step(node, &event, out);
            self.apply(state, node, out).map_err(fault)
        })
    }

    /// Carries out validated outputs of `node`, in order.
    fn apply(&self, state: &mut WorldState, node: u8, out: &Outputs) -> Result<(), EnvFailure> {
        if out.reserved != 0 {
            return Err(EnvFailure::Capacity(format!(
                "OUTPUTS_MAX/PAYLOAD_MAX: the step tried to emit {} output(s) beyond \
                 {OUTPUTS_MAX} per step or with a payload over {PAYLOAD_MAX} bytes \
                 (refused by the emit helpers, whose error the core ignored)",
                out.reserved
            )));
        }
        let durable_size = self.spec.core_of(node as usize).durable_size();
        for (index, item) in out.as_slice().iter().enumerate() {
            let kind = OutputKind::from_raw(item.kind).expect("validated by step::run");
            let payload = || Payload::new(item.payload()).expect("validated by step::run");
            let bad = |why: String| {
                EnvFailure::Step(StepFailure::BadOutput(format!(
                    "output {index} ({}): {why}",
                    kind.name()
                )))
            };
            let full = |why: String| {
                EnvFailure::Capacity(format!("output {index} ({}): {why}", kind.name()))
            };
            let id_ok = || {
                if item.id < TIMERS_MAX {
                    Ok(item.id as u8)
                } else {
                    Err(bad(format!("id {} is not below {TIMERS_MAX}", item.id)))
                }
            };
            let ns = &mut state.nodes[node as usize];
            match kind {
                OutputKind::Send => {
                    if item.dst as usize >= state.nodes.len() {
                        return Err(bad(format!(
                            "destination node {} does not exist in a {}-node world",
                            item.dst,
                            state.nodes.len()
                        )));
                    }
                    let core = self.spec.core_of(node as usize);
                    if !core.may_send(&self.configs[node as usize], item.dst) {
                        return Err(bad(format!(
                            "the core's may_send does not allow n{node} to send to n{}",
                            item.dst
                        )));
                    }
                    let link = (node, item.dst as u8);
                    self.send(&mut state.net, link, item.payload())
                        .map_err(full)?;
                }
                OutputKind::SetTimer => ns.timers |= 1 << id_ok()?,
                OutputKind::SetTimerAt => {
                    let timer = id_ok()?;
                    let deadline = timer_deadline(item).ok_or_else(|| {
                        bad(format!(
                            "the deadline must be 8 little-endian bytes, not {}",
                            item.len
                        ))
                    })?;
                    let at = u32::try_from(deadline).map_err(|_| {
                        full(format!(
                            "the deadline {deadline} of timer {timer} is beyond the largest \
                             clock value, {}",
                            u32::MAX
                        ))
                    })?;
                    ns.timers |= 1 << timer;
                    ns.set_deadline(timer, Some(at));
                }
                OutputKind::CancelTimer => {
                    let timer = id_ok()?;
                    ns.timers &= !(1 << timer);
                    ns.set_deadline(timer, None);
                }
                OutputKind::Wake => ns.wakes |= 1 << id_ok()?,
                OutputKind::Persist => {
                    if item.id as usize + item.len as usize > durable_size {
                        return Err(bad(format!(
                            "{} byte(s) at offset {} overrun the {durable_size}-byte durable part",
                            item.len, item.id
                        )));
                    }
                    if ns.persists.len() >= PERSISTS_MAX {
                        return Err(full(format!(
                            "PERSISTS_MAX: n{node} already has {PERSISTS_MAX} unflushed persists"
                        )));
                    }
                    ns.persists.push(Persist {
                        offset: item.id,
                        bytes: payload(),
                    });
                }
                OutputKind::Reply => {
                    push_ghost(state, GhostKind::Reply, item.id, node, payload()).map_err(full)?
                }
                OutputKind::Choose => {
                    let id = id_ok()?;
                    let k = match item.payload() {
                        [k] if *k > 0 => *k,
                        _ => {
                            return Err(bad(
                                "a choice carries one byte, its number of values k (1 to 255)"
                                    .into(),
                            ))
                        }
                    };
                    let choices = &mut ns.choices;
                    match choices.binary_search_by_key(&id, |c| c.id) {
                        Ok(at) => choices[at].k = k,
                        Err(at) => choices.insert(at, Choice { id, k }),
                    }
                }
            }
        }
        Ok(())
    }

    /// Puts `packet` in flight: a copy more of an equal packet (unordered:
    /// anywhere on its link; FIFO: the link's last run), counted up to
    /// `net_bound` and beyond that a surplus, or a new packet.
    fn send(&self, net: &mut Network, link: (u8, u8), msg: &[u8]) -> Result<(), String> {
        let bound = self.spec.net_bound;
        let slot = match self.spec.net {
            NetSemantics::Fifo => {
                let (runs, end, last_same) = net.link_span(link, msg);
                if let Some(last) = last_same {
                    net.add_copy(last, bound);
                    return Ok(());
                }
                let most = self.spec.link_bound;
                if runs >= most as usize {
                    return Err(format!(
                        "link_bound={most}: the FIFO link n{}->n{} already holds {most} run(s) \
                         of different messages and this SEND would start another (raise link_bound)",
                        link.0, link.1
                    ));
                }
                end
            }
            NetSemantics::Unordered | NetSemantics::Duplicating => match net.find(link, msg) {
                Ok(found) => {
                    if self.spec.net == NetSemantics::Unordered {
                        net.add_copy(found, bound);
                    }
                    return Ok(());
                }
                Err(slot) => slot,
            },
        };
        if net.len() >= NET_MAX {
            return Err(format!(
                "NET_MAX: {NET_MAX} different messages are already in flight"
            ));
        }
        net.insert(slot, link, msg);
        Ok(())
    }
}

thread_local! {
    /// This thread's outputs buffer, which every step empties before its
    /// core writes it (see [`step::run`]).
    static OUTPUTS: RefCell<Box<Outputs>> = RefCell::new(Box::default());
}

/// Runs `f` on this thread's outputs buffer (or, should it be in use, on a
/// fresh one): a step then costs no zeroing of a new buffer of
/// [`OUTPUTS_MAX`] items.
fn with_outputs<T>(f: impl FnOnce(&mut Outputs) -> T) -> T {
    OUTPUTS.with(|outputs| match outputs.try_borrow_mut() {
        Ok(mut outputs) => f(&mut outputs),
        Err(_) => f(&mut Outputs::default()),
    })
}
