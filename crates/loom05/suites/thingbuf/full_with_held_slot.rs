//! A sender must get `Full`, not spin forever, when the channel is full and a slot is held
//! by a `RecvRef` (thingbuf's hang when full, fixed in 0.1.6). A loom model in thingbuf's
//! own test module tree: `scripts/loom-suites.sh` adds this file to the registry's
//! `src/mpsc/tests` (thingbuf's loom types exist only in its own tests); the library
//! under test is the registry's, unchanged.
//!
//! How 0.1.5 hangs (capacity 2): the receiver holds the first message's slot, so the
//! senders' next lap skips it; after the receiver takes the second message its head rests
//! on the skipped slot. One more message fills the channel, and the next `try_send` skips
//! the held slot again: it advances the tail past `head + one lap`, where 0.1.5's only
//! test for a full channel can no longer match, and from then on every `try_send` loops.
#![cfg(feature = "std")]

use crate::loom::{self, thread};
use crate::mpsc::{blocking, errors::TrySendError};

#[test]
fn try_send_returns_full_while_a_recv_ref_is_held() {
    loom::model(|| {
        let (tx, rx) = blocking::channel(2);
        tx.try_send(1).unwrap();
        tx.try_send(2).unwrap();
        let held = rx.try_recv_ref().unwrap();
        let sender = thread::spawn(move || {
            // Three attempts, each of which must return: the third is the one that
            // loops on 0.1.5 when the receiver took `2` before the first.
            for v in 3..6 {
                match tx.try_send(v) {
                    Ok(()) | Err(TrySendError::Full(_)) => {}
                    Err(e) => panic!("try_send({v}): {e:?}"),
                }
            }
        });
        assert_eq!(*rx.try_recv_ref().unwrap(), 2);
        sender.join().unwrap();
        assert_eq!(*held, 1);
    });
}
