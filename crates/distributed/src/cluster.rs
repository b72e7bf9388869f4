//! The processes of a distributed run: the hostfile, and the connections
//! between processes, opened with a deadline and a handshake that refuses a
//! peer checking another model, parameters or cmc version.
//!
//! Process `i` listens on line `i` of the hostfile, connects to every
//! process before it and accepts every process after it, as timely's own
//! cluster start does, twice: one connection per pair of processes is
//! handed to timely, the other carries heartbeats ([`crate::liveness`]).

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::path::Path;
use std::time::{Duration, Instant};

use crate::DistributedError;

/// First bytes of the handshake: "this is a cmc distributed search".
const MAGIC: &[u8; 8] = b"CMCDIST2";
/// Largest hostfile read, in bytes.
const HOSTFILE_MAX_BYTES: u64 = 1 << 20;
/// Longest identity text a peer may send.
const IDENTITY_MAX_BYTES: u32 = 1 << 16;
/// Pause between two attempts to connect to a peer not yet listening.
const RETRY_PAUSE: Duration = Duration::from_millis(100);
/// How long a peer may stay silent before the run is abandoned, unless
/// [`Cluster::with_peer_timeout`] says otherwise.
pub const DEFAULT_PEER_TIMEOUT: Duration = Duration::from_secs(60);

/// What a connection between two processes carries.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Channel {
    /// Timely's messages.
    Data = 0,
    /// Heartbeats.
    Heartbeat = 1,
}

impl Channel {
    const BOTH: [Channel; 2] = [Channel::Data, Channel::Heartbeat];

    fn from_byte(byte: u8) -> Option<Channel> {
        Channel::BOTH
            .into_iter()
            .find(|channel| *channel as u8 == byte)
    }
}

/// The connections of this process to its peers.
pub(crate) struct Connections {
    /// Timely's connection to each process in order, `None` at this
    /// process's own place.
    pub data: Vec<Option<TcpStream>>,
    /// The heartbeat connection to each peer, with its process index.
    pub heartbeats: Vec<(usize, TcpStream)>,
}

/// Where the processes of a run are and which one this is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cluster {
    /// `host:port` of every process, in process order.
    pub addresses: Vec<String>,
    /// This process's index in `addresses`.
    pub process: usize,
    /// How long to wait for every peer to connect (and to answer the
    /// handshake) before giving up.
    pub connect_timeout: Duration,
    /// How long a peer may send no heartbeat during the run before it is
    /// declared lost and the run abandoned.
    pub peer_timeout: Duration,
}

impl Cluster {
    /// Reads the hostfile at `path` (one `host:port` per line; blank lines
    /// and lines starting with `#` are skipped), which must list exactly
    /// `processes` addresses, for process number `process` (from 0).
    pub fn from_hostfile(
        path: &Path,
        processes: usize,
        process: usize,
        connect_timeout: Duration,
    ) -> Result<Cluster, DistributedError> {
        let text = cmc_store::input_file::read_text_file(path, "hostfile", HOSTFILE_MAX_BYTES)
            .map_err(DistributedError::Setup)?;
        let addresses: Vec<String> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !line.starts_with('#'))
            .map(String::from)
            .collect();
        if addresses.len() != processes {
            return Err(DistributedError::Setup(format!(
                "the hostfile {} lists {} address(es), but --processes is {processes}",
                path.display(),
                addresses.len()
            )));
        }
        Cluster::new(addresses, process, connect_timeout)
    }

    /// A cluster of the processes at `addresses`, this one being `process`.
    pub fn new(
        addresses: Vec<String>,
        process: usize,
        connect_timeout: Duration,
    ) -> Result<Cluster, DistributedError> {
        if process >= addresses.len() {
            return Err(DistributedError::Setup(format!(
                "--process is {process}, but processes are numbered 0 to {}",
                addresses.len().saturating_sub(1)
            )));
        }
        Ok(Cluster {
            addresses,
            process,
            connect_timeout,
            peer_timeout: DEFAULT_PEER_TIMEOUT,
        })
    }

    /// The same cluster, declaring a peer lost after `timeout` without a
    /// heartbeat.
    pub fn with_peer_timeout(self, timeout: Duration) -> Cluster {
        Cluster {
            peer_timeout: timeout,
            ..self
        }
    }

    /// Number of processes.
    pub fn processes(&self) -> usize {
        self.addresses.len()
    }

    /// Connects to every peer and exchanges identities: the data and the
    /// heartbeat connection to each. Fails if a peer does not answer in
    /// time or states another identity.
    pub(crate) fn connect(&self, identity: &str) -> Result<Connections, DistributedError> {
        let deadline = Instant::now() + self.connect_timeout;
        let me = self.process;
        let listener = if me + 1 < self.processes() {
            let address = &self.addresses[me];
            let listener = TcpListener::bind(address).map_err(|problem| {
                DistributedError::Setup(format!(
                    "process {me} cannot listen on {address}: {problem}"
                ))
            })?;
            Some(listener)
        } else {
            None
        };
        let (earlier, later) = std::thread::scope(|scope| {
            let earlier = scope.spawn(|| self.connect_to_earlier(identity, deadline));
            let later = listener
                .as_ref()
                .map(|listener| self.accept_later(listener, identity, deadline))
                .unwrap_or_else(|| Ok(Vec::new()));
            (
                earlier
                    .join()
                    .expect("the connecting thread does not panic"),
                later,
            )
        });
        let mut all = earlier?;
        all.extend(later?);
        all.sort_by_key(|(peer, channel, _)| (*channel, *peer));
        for (_, _, socket) in &all {
            let ready = socket
                .set_read_timeout(None)
                .and_then(|_| socket.set_write_timeout(None))
                .and_then(|_| socket.set_nodelay(true));
            ready.map_err(|problem| {
                DistributedError::Setup(format!("cannot configure a connection: {problem}"))
            })?;
        }
        let mut connections = Connections {
            data: (0..self.processes()).map(|_| None).collect(),
            heartbeats: Vec::new(),
        };
        for (peer, channel, socket) in all {
            match channel {
                Channel::Data => connections.data[peer] = Some(socket),
                Channel::Heartbeat => connections.heartbeats.push((peer, socket)),
            }
        }
        Ok(connections)
    }

    /// Opens both connections to each of processes `0..me`, retrying until
    /// `deadline`.
    fn connect_to_earlier(
        &self,
        identity: &str,
        deadline: Instant,
    ) -> Result<Vec<(usize, Channel, TcpStream)>, DistributedError> {
        let me = self.process;
        let mut connected = Vec::new();
        for peer in 0..me {
            let address = &self.addresses[peer];
            let resolved = resolve(address)?;
            for channel in Channel::BOTH {
                let mut last_problem = String::from("no attempt was made");
                loop {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return Err(DistributedError::Setup(format!(
                            "process {me} could not connect to process {peer} at {address} within {} s ({last_problem}); is it running, with the same hostfile?",
                            self.connect_timeout.as_secs_f64()
                        )));
                    }
                    match TcpStream::connect_timeout(&resolved, left) {
                        Ok(mut socket) => {
                            let hello = Hello { index: me, channel };
                            let (theirs, their_identity) =
                                handshake(&mut socket, me, hello, identity, deadline)?;
                            check_peer(me, peer, theirs.index, identity, &their_identity)?;
                            connected.push((peer, channel, socket));
                            break;
                        }
                        Err(problem) => {
                            last_problem = problem.to_string();
                            std::thread::sleep(RETRY_PAUSE.min(left));
                        }
                    }
                }
            }
        }
        Ok(connected)
    }

    /// Accepts both connections of each of processes `me+1..`, until `deadline`.
    fn accept_later(
        &self,
        listener: &TcpListener,
        identity: &str,
        deadline: Instant,
    ) -> Result<Vec<(usize, Channel, TcpStream)>, DistributedError> {
        let me = self.process;
        let expected = (self.processes() - me - 1) * Channel::BOTH.len();
        let setup = |problem: std::io::Error| {
            DistributedError::Setup(format!("process {me} cannot accept connections: {problem}"))
        };
        listener.set_nonblocking(true).map_err(setup)?;
        let mut accepted: Vec<(usize, Channel, TcpStream)> = Vec::new();
        while accepted.len() < expected {
            if Instant::now() >= deadline {
                let missing: Vec<String> = (me + 1..self.processes())
                    .filter(|peer| {
                        accepted
                            .iter()
                            .filter(|(index, _, _)| index == peer)
                            .count()
                            < Channel::BOTH.len()
                    })
                    .map(|peer| peer.to_string())
                    .collect();
                return Err(DistributedError::Setup(format!(
                    "process {me}: process(es) {} did not connect within {} s; are they running, with the same hostfile?",
                    missing.join(", "),
                    self.connect_timeout.as_secs_f64()
                )));
            }
            match listener.accept() {
                Ok((mut socket, _)) => {
                    socket.set_nonblocking(false).map_err(setup)?;
                    let hello = Hello {
                        index: me,
                        channel: Channel::Data,
                    };
                    let (theirs, their_identity) =
                        handshake(&mut socket, me, hello, identity, deadline)?;
                    let index = theirs.index;
                    if index <= me
                        || index >= self.processes()
                        || accepted.iter().any(|(known, channel, _)| {
                            (*known, *channel) == (index, theirs.channel)
                        })
                    {
                        return Err(DistributedError::Setup(format!(
                            "process {me} was contacted by a peer calling itself process {index}; check --process on every host"
                        )));
                    }
                    check_peer(me, index, index, identity, &their_identity)?;
                    accepted.push((index, theirs.channel, socket));
                }
                Err(problem) if problem.kind() == std::io::ErrorKind::WouldBlock => {
                    std::thread::sleep(Duration::from_millis(20));
                }
                Err(problem) => return Err(setup(problem)),
            }
        }
        Ok(accepted)
    }
}

/// The first socket address `address` resolves to.
fn resolve(address: &str) -> Result<SocketAddr, DistributedError> {
    address
        .to_socket_addrs()
        .ok()
        .and_then(|mut found| found.next())
        .ok_or_else(|| {
            DistributedError::Setup(format!(
                "`{address}` in the hostfile is not a reachable host:port"
            ))
        })
}

/// Who opens a connection and what for: the first bytes after [`MAGIC`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Hello {
    /// The process sending it.
    index: usize,
    /// What the connection carries (the accepting side's is not read).
    channel: Channel,
}

/// Sends `hello` and this process's identity on `socket` and reads the
/// peer's, within `deadline`.
fn handshake(
    socket: &mut TcpStream,
    me: usize,
    hello: Hello,
    identity: &str,
    deadline: Instant,
) -> Result<(Hello, String), DistributedError> {
    let failed = |problem: std::io::Error| {
        DistributedError::Setup(format!(
            "process {me}: the handshake with a peer failed: {problem}"
        ))
    };
    let left = deadline
        .saturating_duration_since(Instant::now())
        .max(Duration::from_millis(1));
    socket.set_read_timeout(Some(left)).map_err(failed)?;
    socket.set_write_timeout(Some(left)).map_err(failed)?;
    let mut message = MAGIC.to_vec();
    message.extend_from_slice(&(hello.index as u64).to_le_bytes());
    message.push(hello.channel as u8);
    message.extend_from_slice(&(identity.len() as u32).to_le_bytes());
    message.extend_from_slice(identity.as_bytes());
    socket.write_all(&message).map_err(failed)?;
    let mut header = [0u8; 8 + 8 + 1 + 4];
    socket.read_exact(&mut header).map_err(failed)?;
    let magic = &header[..8] == MAGIC;
    let channel = Channel::from_byte(header[16])
        .filter(|_| magic)
        .ok_or_else(|| {
            DistributedError::Setup(format!(
                "process {me}: a peer that is not a cmc distributed search of this version answered (check the hostfile)"
            ))
        })?;
    let index = u64::from_le_bytes(header[8..16].try_into().expect("8 bytes")) as usize;
    let length = u32::from_le_bytes(header[17..21].try_into().expect("4 bytes"));
    if length > IDENTITY_MAX_BYTES {
        return Err(DistributedError::Setup(format!(
            "process {me}: peer {index} sent an identity of {length} bytes"
        )));
    }
    let mut theirs = vec![0u8; length as usize];
    socket.read_exact(&mut theirs).map_err(failed)?;
    Ok((
        Hello { index, channel },
        String::from_utf8_lossy(&theirs).into_owned(),
    ))
}

/// Checks that the peer expected at `expected` answered as `index`, with
/// this process's identity.
fn check_peer(
    me: usize,
    expected: usize,
    index: usize,
    ours: &str,
    theirs: &str,
) -> Result<(), DistributedError> {
    if index != expected {
        return Err(DistributedError::Setup(format!(
            "process {me} expected process {expected} at its address but process {index} answered; check --process on every host"
        )));
    }
    if ours != theirs {
        return Err(DistributedError::Mismatch {
            process: me,
            peer: index,
            ours: ours.to_string(),
            theirs: theirs.to_string(),
        });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hostfile_must_list_one_address_per_process() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("hosts");
        std::fs::write(&path, "# the cluster\n127.0.0.1:7001\n\n127.0.0.1:7002\n").unwrap();
        let cluster = Cluster::from_hostfile(&path, 2, 1, Duration::from_secs(1)).unwrap();
        assert_eq!(cluster.addresses, vec!["127.0.0.1:7001", "127.0.0.1:7002"]);
        let error = Cluster::from_hostfile(&path, 3, 0, Duration::from_secs(1)).unwrap_err();
        assert!(error.to_string().contains("lists 2 address(es)"), "{error}");
        let error = Cluster::from_hostfile(&path, 2, 2, Duration::from_secs(1)).unwrap_err();
        assert!(error.to_string().contains("numbered 0 to 1"), "{error}");
    }
}
