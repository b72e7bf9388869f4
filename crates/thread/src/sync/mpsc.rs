//! Instrumented `std::sync::mpsc`: `channel` and `sync_channel` (capacity at least 1).
//! `send`, `recv`, `try_recv` and dropping the last handle of either side are switch
//! points; `recv` blocks while the channel is empty and a sender is alive, a `sync_channel`
//! `send` while it is full and the receiver is alive. A `recv` nobody sends to shows up as a
//! deadlock. Outside an execution the channel works as a std one.

use crate::rt::{self, ExecState, ObjCell, ObjId, ObjState, Op, Value};
use std::collections::VecDeque;
use std::panic::Location;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
pub use std::sync::mpsc::{RecvError, SendError, TryRecvError};
use std::sync::{Arc, Condvar as StdCondvar, Mutex as StdMutex};

struct Chan<T> {
    id: ObjCell,
    queue: StdMutex<VecDeque<T>>,
    capacity: Option<usize>,
    senders: AtomicUsize,
    receiver: AtomicBool,
    /// Wakes blocked std threads outside an execution.
    changed: StdCondvar,
}

fn unregistered() -> ObjState {
    ObjState::Plain
}

impl<T> Chan<T> {
    fn new(capacity: Option<usize>) -> Arc<Self> {
        Arc::new(Chan {
            id: ObjCell::new(),
            queue: StdMutex::new(VecDeque::new()),
            capacity,
            senders: AtomicUsize::new(1),
            receiver: AtomicBool::new(true),
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
        };
        id
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
        let push = |t: T| {
            if !self.receiver.load(Ordering::Relaxed) {
                return (Err(SendError(t)), false);
            }
            self.queue().push_back(t);
            self.changed.notify_all();
            (Ok(()), true)
        };
        if !rt::in_execution() {
            let mut q = self.queue();
            while self.capacity.is_some_and(|c| q.len() >= c)
                && self.receiver.load(Ordering::Relaxed)
            {
                q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            drop(q);
            return push(t).0;
        }
        let mut slot = Some(t);
        self.step(Op::Send, location, || push(slot.take().expect("sent once")))
            .expect("in an execution")
    }

    fn recv(&self, location: &'static Location<'static>) -> Result<T, RecvError> {
        let pop = || {
            let v = self.queue().pop_front();
            self.changed.notify_all();
            let got = v.is_some();
            (v.ok_or(RecvError), got)
        };
        if !rt::in_execution() {
            let mut q = self.queue();
            while q.is_empty() && self.senders.load(Ordering::Relaxed) > 0 {
                q = self.changed.wait(q).unwrap_or_else(|e| e.into_inner());
            }
            drop(q);
            return pop().0;
        }
        self.step(Op::Recv, location, pop).expect("in an execution")
    }

    fn try_recv(&self, location: &'static Location<'static>) -> Result<T, TryRecvError> {
        let pop = || match self.queue().pop_front() {
            Some(v) => {
                self.changed.notify_all();
                (Ok(v), true)
            }
            None if self.senders.load(Ordering::Relaxed) == 0 => {
                (Err(TryRecvError::Disconnected), false)
            }
            None => (Err(TryRecvError::Empty), false),
        };
        self.step(Op::TryRecv, location, pop)
            .unwrap_or_else(|| pop().0)
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

/// Creates a channel holding at most `bound` messages; `bound` 0 (rendezvous) is not
/// supported and panics.
pub fn sync_channel<T>(bound: usize) -> (SyncSender<T>, Receiver<T>) {
    assert!(
        bound > 0,
        "cmc: sync_channel(0) (rendezvous) is not modelled; use a bound of at least 1"
    );
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
