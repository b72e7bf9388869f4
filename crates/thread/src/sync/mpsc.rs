//! Instrumented `std::sync::mpsc`: `channel` and `sync_channel` (any bound, 0 included).
//! `send`, `recv`, `try_recv`, `recv_timeout` and dropping the last handle of either side
//! are switch points; `recv` blocks while the channel is empty and a sender is alive, a
//! `sync_channel` `send` while it is full and the receiver is alive. A rendezvous send
//! (`sync_channel(0)`) queues its message in one step and waits in a second one until it was
//! received. `recv_timeout` never blocks: with nothing queued it may time out at any point,
//! so both outcomes are explored. A `recv` nobody sends to shows up as a deadlock. Outside
//! an execution the channel works as a std one.

use crate::rt::{self, ExecState, ObjCell, ObjId, ObjState, Op, Value};
use std::collections::VecDeque;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
pub use std::sync::mpsc::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use std::sync::{Arc, Condvar as StdCondvar, Mutex as StdMutex};
use std::time::Duration;

struct Chan<T> {
    id: ObjCell,
    queue: StdMutex<VecDeque<T>>,
    capacity: Option<usize>,
    /// `sync_channel(0)`: a send returns once its message was received.
    rendezvous: bool,
    senders: AtomicUsize,
    receiver: AtomicBool,
    /// Messages sent and received so far (a rendezvous send waits for its number).
    sent: AtomicU64,
    taken: AtomicU64,
    /// Wakes blocked std threads outside an execution.
    changed: StdCondvar,
}

fn unregistered() -> ObjState {
    ObjState::Plain
}

impl<T> Chan<T> {
    /// A channel holding at most `capacity` messages; `Some(0)` is a rendezvous (one
    /// message in flight, its sender waiting until it is received).
    fn new(capacity: Option<usize>) -> Arc<Self> {
        let rendezvous = capacity == Some(0);
        Arc::new(Chan {
            id: ObjCell::new(),
            queue: StdMutex::new(VecDeque::new()),
            capacity: if rendezvous { Some(1) } else { capacity },
            rendezvous,
            senders: AtomicUsize::new(1),
            receiver: AtomicBool::new(true),
            sent: AtomicU64::new(0),
            taken: AtomicU64::new(0),
            changed: StdCondvar::new(),
        })
    }

    fn queue(&self) -> std::sync::MutexGuard<'_, VecDeque<T>> {
        self.queue.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers the channel if needed and copies its state into the runtime's.
    fn sync(&self, st: &mut ExecState, location: &'static Location<'static>) -> ObjId {
        let id = self.id.get(st, "Channel", unregistered, location);
        *st.state_mut(id) = ObjState::Channel {
            len: self.queue().len(),
            capacity: self.capacity,
            senders: self.senders.load(Ordering::Relaxed),
            receiver: self.receiver.load(Ordering::Relaxed),
            taken: self.taken.load(Ordering::Relaxed),
        };
        id
    }

    /// Takes the next message, counting it as received.
    fn pop(&self) -> Option<T> {
        let v = self.queue().pop_front();
        if v.is_some() {
            self.taken.fetch_add(1, Ordering::Relaxed);
            self.changed.notify_all();
        }
        v
    }

    /// Runs one channel operation as a switch point: announces `op`, runs `body` (which
    /// returns the result and whether it changed the channel), then syncs the state.
    fn step<R>(
        &self,
        op: fn(ObjId) -> Op,
        location: &'static Location<'static>,
        body: impl FnOnce() -> (R, bool),
    ) -> Option<R> {
        let id = rt::with(|st| self.sync(st, location))?;
        rt::schedule(op(id), location);
        let (result, wrote) = body();
        rt::with(|st| {
            self.sync(st, location);
            if !wrote {
                st.set_value(Value::Busy);
            }
            st.note_access(id, wrote);
        });
        Some(result)
    }

    fn send(&self, t: T, location: &'static Location<'static>) -> Result<(), SendError<T>> {
        // Queues `t` and returns its number, or gives it back if the receiver is gone.
        let push = |t: T| {
            if !self.receiver.load(Ordering::Relaxed) {
                return (Err(SendError(t)), false);
            }
            self.queue().push_back(t);
            let ticket = self.sent.fetch_add(1, Ordering::Relaxed) + 1;
            self.changed.notify_all();
            (Ok(ticket), true)
        };
        // A rendezvous message the receiver did not take before it was dropped comes back.
        let taken_or_back = |ticket: u64| {
            if self.taken.load(Ordering::Relaxed) >= ticket {
                return Ok(());
            }
            let back = self
                .queue()
                .pop_back()
                .expect("the untaken message is queued");
            Err(SendError(back))
        };
        if !rt::in_execution() {
            rt::check_outside(&self.id, "Channel", location);
            let mut q = self.queue();
            while self.capacity.is_some_and(|c| q.len() >= c)
                && self.receiver.load(Ordering::Relaxed)
            {
                q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            drop(q);
            let ticket = push(t).0?;
            if !self.rendezvous {
                return Ok(());
            }
            let mut q = self.queue();
            while self.taken.load(Ordering::Relaxed) < ticket
                && self.receiver.load(Ordering::Relaxed)
            {
                q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            drop(q);
            return taken_or_back(ticket);
        }
        let mut slot = Some(t);
        let ticket = self
            .step(Op::Send, location, || push(slot.take().expect("sent once")))
            .expect("in an execution")?;
        if !self.rendezvous {
            return Ok(());
        }
        let id = rt::with(|st| self.sync(st, location)).expect("in an execution");
        rt::schedule(Op::SendDone(id, ticket), location);
        let result = taken_or_back(ticket);
        rt::with(|st| {
            self.sync(st, location);
            st.note_access(id, result.is_err());
        });
        result
    }

    fn recv(&self, location: &'static Location<'static>) -> Result<T, RecvError> {
        let pop = || {
            let v = self.pop();
            let got = v.is_some();
            (v.ok_or(RecvError), got)
        };
        if !rt::in_execution() {
            rt::check_outside(&self.id, "Channel", location);
            let mut q = self.queue();
            while q.is_empty() && self.senders.load(Ordering::Relaxed) > 0 {
                q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            drop(q);
            return pop().0;
        }
        self.step(Op::Recv, location, pop).expect("in an execution")
    }

    /// Takes a queued message, or says why there is none.
    fn take(&self) -> Result<T, TryRecvError> {
        match self.pop() {
            Some(v) => Ok(v),
            None if self.senders.load(Ordering::Relaxed) == 0 => Err(TryRecvError::Disconnected),
            None => Err(TryRecvError::Empty),
        }
    }

    fn try_recv(&self, location: &'static Location<'static>) -> Result<T, TryRecvError> {
        let pop = || {
            let r = self.take();
            let got = r.is_ok();
            (r, got)
        };
        self.step(Op::TryRecv, location, pop)
            .unwrap_or_else(|| pop().0)
    }

    fn recv_timeout(
        &self,
        timeout: Duration,
        location: &'static Location<'static>,
    ) -> Result<T, RecvTimeoutError> {
        let convert = |r: Result<T, TryRecvError>| match r {
            Ok(v) => Ok(v),
            Err(TryRecvError::Empty) => Err(RecvTimeoutError::Timeout),
            Err(TryRecvError::Disconnected) => Err(RecvTimeoutError::Disconnected),
        };
        if !rt::in_execution() {
            rt::check_outside(&self.id, "Channel", location);
            let deadline = std::time::Instant::now() + timeout;
            let mut q = self.queue();
            while q.is_empty() && self.senders.load(Ordering::Relaxed) > 0 {
                let left = deadline.saturating_duration_since(std::time::Instant::now());
                if left.is_zero() {
                    break;
                }
                q = self
                    .changed
                    .wait_timeout(q, left)
                    .map_or_else(|e| e.into_inner().0, |r| r.0);
            }
            drop(q);
            return convert(self.take());
        }
        let pop = || {
            let r = self.take();
            let got = r.is_ok();
            if matches!(r, Err(TryRecvError::Empty)) {
                rt::with(|st| st.elapsed += timeout);
            }
            (convert(r), got)
        };
        self.step(Op::RecvTimeout, location, pop)
            .expect("in an execution")
    }

    /// A handle of one side is dropped; `last` tells whether it was the last one.
    fn disconnect(&self, last: impl FnOnce() -> bool, location: &'static Location<'static>) {
        if rt::in_execution() {
            self.step(Op::Disconnect, location, || {
                let was_last = last();
                self.changed.notify_all();
                ((), was_last)
            });
        } else {
            last();
            self.changed.notify_all();
        }
    }
}

/// Creates an unbounded channel.
pub fn channel<T>() -> (Sender<T>, Receiver<T>) {
    let c = Chan::new(None);
    (Sender { chan: c.clone() }, Receiver { chan: c })
}

/// Creates a channel holding at most `bound` messages; with `bound` 0 every send waits
/// until its message was received (a rendezvous).
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    let c = Chan::new(Some(bound));
    (SyncSender(Sender { chan: c.clone() }), Receiver { chan: c })
}

/// The sending half of a channel; cloning adds a sender.
pub struct Sender<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Sender<T> {
    /// Queues `t` (a switch point); fails if the receiver was dropped.
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.chan.send(t, Location::caller())
    }
}

impl<T> Clone for Sender<T> {
    #[track_caller]
    fn clone(&self) -> Self {
        self.chan.senders.fetch_add(1, Ordering::Relaxed);
        rt::with(|st| self.chan.sync(st, Location::caller()));
        Sender {
            chan: self.chan.clone(),
        }
    }
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        let chan = &self.chan;
        chan.disconnect(
            || chan.senders.fetch_sub(1, Ordering::Relaxed) == 1,
            Location::caller(),
        );
    }
}

/// The sending half of a `sync_channel`.
#[derive(Clone)]
pub struct SyncSender<T>(Sender<T>);

impl<T> SyncSender<T> {
    /// Queues `t`, blocking while the channel is full (a switch point); fails if the
    /// receiver was dropped.
    #[track_caller]
    pub fn send(&self, t: T) -> Result<(), SendError<T>> {
        self.0.chan.send(t, Location::caller())
    }
}

/// The receiving half of a channel.
pub struct Receiver<T> {
    chan: Arc<Chan<T>>,
}

impl<T> Receiver<T> {
    /// Takes the next message, blocking while the channel is empty and a sender is alive
    /// (a switch point); fails once it is empty and every sender was dropped.
    #[track_caller]
    pub fn recv(&self) -> Result<T, RecvError> {
        self.chan.recv(Location::caller())
    }

    /// Takes the next message if there is one (a switch point).
    #[track_caller]
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        self.chan.try_recv(Location::caller())
    }

    /// Takes the next message, waiting at most `timeout` (a switch point). Under the
    /// checker it never blocks: with no message queued it may time out at any point.
    #[track_caller]
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        self.chan.recv_timeout(timeout, Location::caller())
    }

    /// The messages until every sender is dropped.
    pub fn iter(&self) -> impl Iterator<Item = T> + '_ {
        std::iter::from_fn(move || self.recv().ok())
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        let chan = &self.chan;
        chan.disconnect(
            || chan.receiver.swap(false, Ordering::Relaxed),
            Location::caller(),
        );
    }
}

impl<T> std::fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sender { .. }")
    }
}

impl<T> std::fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Receiver { .. }")
    }
}
