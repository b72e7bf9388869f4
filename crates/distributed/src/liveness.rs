//! Heartbeats between the processes of a run, so that a peer that is alive
//! but silent (stopped with SIGSTOP, hung, or cut off by the network, none
//! of which closes its connections) ends the run with a clear error instead
//! of leaving the others waiting forever for its part of a level.
//!
//! Every process sends one byte to each peer every [`Liveness::interval`]
//! on a connection of its own (not timely's), and reads its peers' bytes; a
//! peer heard from for none of `timeout` is declared lost. A connection
//! that ends or breaks is not an error here: a peer that exits closes it
//! (when it is done, or when it dies, which timely's own connections
//! report), and an unread heartbeat may turn that close into a reset.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

/// Longest pause between two heartbeats.
const LONGEST_INTERVAL: Duration = Duration::from_secs(1);

/// Why the run must be abandoned, once a peer has been silent too long.
pub(crate) type Lost = Arc<OnceLock<String>>;

/// The heartbeats of this process: sent and watched on threads of their
/// own until it is dropped, which closes their connections.
pub(crate) struct Liveness {
    lost: Lost,
    stop: Arc<AtomicBool>,
    /// Handles on the heartbeat connections, to shut them down on drop.
    sockets: Vec<TcpStream>,
}

impl Liveness {
    /// Starts exchanging heartbeats with `peers` (process index and
    /// connection each), declaring a peer lost after `timeout` of silence.
    pub fn start(peers: Vec<(usize, TcpStream)>, timeout: Duration) -> std::io::Result<Liveness> {
        let lost: Lost = Arc::new(OnceLock::new());
        let stop = Arc::new(AtomicBool::new(false));
        let interval = Liveness::interval(timeout);
        let mut sockets = Vec::new();
        let mut senders = Vec::new();
        for (peer, socket) in peers {
            socket.set_read_timeout(Some(timeout))?;
            socket.set_write_timeout(Some(interval))?;
            sockets.push(socket.try_clone()?);
            senders.push(socket.try_clone()?);
            let lost = Arc::clone(&lost);
            std::thread::Builder::new()
                .name(format!("cmc:heartbeat-from-{peer}"))
                .spawn(move || watch(peer, socket, timeout, &lost))?;
        }
        let stopped = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("cmc:heartbeat".into())
            .spawn(move || beat(senders, interval, &stopped))?;
        Ok(Liveness {
            lost,
            stop,
            sockets,
        })
    }

    /// The pause between two heartbeats for a peer timeout of `timeout`:
    /// several heartbeats fit in it, so one late beat is no loss.
    fn interval(timeout: Duration) -> Duration {
        (timeout / 4).min(LONGEST_INTERVAL)
    }

    /// Where the reason a peer was lost appears.
    pub fn lost(&self) -> Lost {
        Arc::clone(&self.lost)
    }
}

impl Drop for Liveness {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for socket in &self.sockets {
            let _ = socket.shutdown(Shutdown::Both);
        }
    }
}

/// Sends a heartbeat to every peer every `interval` until `stop`.
fn beat(mut peers: Vec<TcpStream>, interval: Duration, stop: &AtomicBool) {
    while !stop.load(Ordering::Relaxed) {
        for socket in &mut peers {
            // A peer that stopped reading is the watcher's business.
            let _ = socket.write_all(&[1]);
        }
        std::thread::sleep(interval);
    }
}

/// Reads `peer`'s heartbeats until its connection ends, recording it as
/// lost in `lost` if none comes for `timeout`.
fn watch(peer: usize, mut socket: TcpStream, timeout: Duration, lost: &OnceLock<String>) {
    let mut buffer = [0u8; 64];
    loop {
        match socket.read(&mut buffer) {
            Ok(0) => return,
            Ok(_) => continue,
            Err(problem)
                if matches!(
                    problem.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                let _ = lost.set(format!(
                    "process {peer} has not been heard from for {} s: it is stopped, hung or unreachable (see --peer-timeout); the run is abandoned on every process",
                    timeout.as_secs_f64()
                ));
                return;
            }
            Err(problem) if problem.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;
    use std::time::Instant;

    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let near = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (far, _) = listener.accept().unwrap();
        (near, far)
    }

    fn wait_for(lost: &Lost, bound: Duration) -> Option<String> {
        let deadline = Instant::now() + bound;
        while Instant::now() < deadline {
            if let Some(reason) = lost.get() {
                return Some(reason.clone());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    #[test]
    fn a_silent_peer_is_lost_and_a_beating_one_is_not() {
        let timeout = Duration::from_millis(400);
        let (near, far) = pair();
        let watching = Liveness::start(vec![(3, near)], timeout).unwrap();
        // The far side beats for a while: no loss.
        let beating = Liveness::start(vec![(0, far.try_clone().unwrap())], timeout).unwrap();
        assert_eq!(wait_for(&watching.lost(), 3 * timeout), None);
        // Its heartbeats stop, its connection stays open: lost.
        beating.stop.store(true, Ordering::Relaxed);
        let reason = wait_for(&watching.lost(), 10 * timeout).expect("the silent peer is lost");
        assert!(
            reason.contains("process 3 has not been heard from"),
            "{reason}"
        );
        drop(far);
    }

    #[test]
    fn a_peer_that_closes_its_connection_is_not_lost_here() {
        let timeout = Duration::from_millis(300);
        let (near, far) = pair();
        let watching = Liveness::start(vec![(1, near)], timeout).unwrap();
        drop(far);
        assert_eq!(wait_for(&watching.lost(), 4 * timeout), None);
    }
}
