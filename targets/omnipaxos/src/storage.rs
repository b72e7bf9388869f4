//! omnipaxos's `Storage` over a fixed layout: the bytes the World persists.
//!
//! The library's storage is [`Disk`] (promise, accepted round, decided
//! index, log). [`SharedDisk`] is the `Storage` handed to the library; the
//! adapter keeps a second handle to the same disk to take its [`Disk::image`]
//! after each step. The image is the node's durable part: what a restart
//! reads back through [`Disk::from_image`].

use std::cell::RefCell;
use std::error::Error;
use std::rc::Rc;

use omnipaxos::ballot_leader_election::Ballot;
use omnipaxos::storage::{Entry, NoSnapshot, StopSign, Storage, StorageResult};

/// Most entries a log holds (the layout's capacity).
pub const LOG_MAX: usize = 8;
/// Bytes of an encoded [`Ballot`] (optional).
pub const BALLOT_SIZE: usize = 6;
/// Bytes of a [`Disk::image`].
pub const IMAGE_SIZE: usize = 2 * BALLOT_SIZE + 2 + LOG_MAX;

/// A log entry: the id of the client request that appended it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Value(pub u8);

impl Entry for Value {
    type Snapshot = NoSnapshot;
}

/// The storage's contents.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Disk {
    /// The promised ballot.
    pub promise: Option<Ballot>,
    /// The round the log was last accepted in.
    pub accepted_round: Option<Ballot>,
    /// The decided index.
    pub decided_idx: u64,
    /// The log.
    pub log: Vec<Value>,
}

/// An error the adapter's storage returns: a value outside its layout.
fn capacity(what: String) -> Box<dyn Error> {
    format!("the adapter's storage layout cannot hold {what}").into()
}

impl Disk {
    /// The fixed-layout bytes of the disk: promise, accepted round (each
    /// [`BALLOT_SIZE`] bytes), decided index, log length, the log's values.
    pub fn image(&self) -> [u8; IMAGE_SIZE] {
        let mut image = [0; IMAGE_SIZE];
        image[..BALLOT_SIZE].copy_from_slice(&encode_ballot(self.promise));
        image[BALLOT_SIZE..2 * BALLOT_SIZE].copy_from_slice(&encode_ballot(self.accepted_round));
        image[2 * BALLOT_SIZE] = self.decided_idx as u8;
        image[2 * BALLOT_SIZE + 1] = self.log.len() as u8;
        for (slot, value) in image[2 * BALLOT_SIZE + 2..].iter_mut().zip(&self.log) {
            *slot = value.0;
        }
        image
    }

    /// The disk whose image is `image` (all zero: a new, empty disk).
    pub fn from_image(image: &[u8]) -> Disk {
        let length = usize::from(image[2 * BALLOT_SIZE + 1]).min(LOG_MAX);
        Disk {
            promise: decode_ballot(&image[..BALLOT_SIZE]),
            accepted_round: decode_ballot(&image[BALLOT_SIZE..2 * BALLOT_SIZE]),
            decided_idx: u64::from(image[2 * BALLOT_SIZE]),
            log: image[2 * BALLOT_SIZE + 2..][..length]
                .iter()
                .map(|&value| Value(value))
                .collect(),
        }
    }

    fn check(&self) -> StorageResult<()> {
        if self.log.len() > LOG_MAX {
            return Err(capacity(format!(
                "{} entries (at most {LOG_MAX})",
                self.log.len()
            )));
        }
        if self.decided_idx > u64::from(u8::MAX) {
            return Err(capacity(format!("decided index {}", self.decided_idx)));
        }
        for ballot in [self.promise, self.accepted_round].into_iter().flatten() {
            ballot_fits(&ballot)?;
        }
        Ok(())
    }
}

/// Whether `ballot` fits [`encode_ballot`]'s layout.
pub fn ballot_fits(ballot: &Ballot) -> StorageResult<()> {
    if ballot.config_id > u32::from(u8::MAX)
        || ballot.n > u32::from(u16::MAX)
        || ballot.priority > u32::from(u8::MAX)
        || ballot.pid > u64::from(u8::MAX)
    {
        return Err(capacity(format!("ballot {ballot:?}")));
    }
    Ok(())
}

/// `[present, config id, n (u16), priority, pid]`; checked by [`ballot_fits`].
pub fn encode_ballot(ballot: Option<Ballot>) -> [u8; BALLOT_SIZE] {
    match ballot {
        None => [0; BALLOT_SIZE],
        Some(b) => {
            let n = (b.n as u16).to_le_bytes();
            [
                1,
                b.config_id as u8,
                n[0],
                n[1],
                b.priority as u8,
                b.pid as u8,
            ]
        }
    }
}

/// The ballot [`encode_ballot`] wrote.
pub fn decode_ballot(bytes: &[u8]) -> Option<Ballot> {
    (bytes[0] != 0).then(|| {
        Ballot::with(
            u32::from(bytes[1]),
            u32::from(u16::from_le_bytes([bytes[2], bytes[3]])),
            u32::from(bytes[4]),
            u64::from(bytes[5]),
        )
    })
}

/// The library's `Storage`: a handle to a disk the adapter also reads.
#[derive(Clone, Default)]
pub struct SharedDisk(pub Rc<RefCell<Disk>>);

impl SharedDisk {
    fn write<R>(&self, change: impl FnOnce(&mut Disk) -> R) -> StorageResult<R> {
        let mut disk = self.0.borrow_mut();
        let result = change(&mut disk);
        disk.check()?;
        Ok(result)
    }
}

impl Storage<Value> for SharedDisk {
    fn append_entry(&mut self, entry: Value) -> StorageResult<u64> {
        self.append_entries(vec![entry])
    }

    fn append_entries(&mut self, entries: Vec<Value>) -> StorageResult<u64> {
        self.write(|disk| {
            disk.log.extend(entries);
            disk.log.len() as u64
        })
    }

    /// Keeps the log's first `from_idx` entries and appends `entries`: a log
    /// shorter than `from_idx` keeps all it has (as omnipaxos's own
    /// in-memory storage does).
    fn append_on_prefix(&mut self, from_idx: u64, entries: Vec<Value>) -> StorageResult<u64> {
        self.write(|disk| {
            disk.log.truncate(from_idx as usize);
            disk.log.extend(entries);
            disk.log.len() as u64
        })
    }

    fn set_promise(&mut self, n_prom: Ballot) -> StorageResult<()> {
        self.write(|disk| disk.promise = Some(n_prom))
    }

    fn set_decided_idx(&mut self, ld: u64) -> StorageResult<()> {
        self.write(|disk| disk.decided_idx = ld)
    }

    fn get_decided_idx(&self) -> StorageResult<u64> {
        Ok(self.0.borrow().decided_idx)
    }

    fn set_accepted_round(&mut self, na: Ballot) -> StorageResult<()> {
        self.write(|disk| disk.accepted_round = Some(na))
    }

    fn get_accepted_round(&self) -> StorageResult<Option<Ballot>> {
        Ok(self.0.borrow().accepted_round)
    }

    fn get_entries(&self, from: u64, to: u64) -> StorageResult<Vec<Value>> {
        let disk = self.0.borrow();
        Ok(disk
            .log
            .get(from as usize..to as usize)
            .map(<[Value]>::to_vec)
            .unwrap_or_default())
    }

    fn get_log_len(&self) -> StorageResult<u64> {
        Ok(self.0.borrow().log.len() as u64)
    }

    fn get_suffix(&self, from: u64) -> StorageResult<Vec<Value>> {
        let disk = self.0.borrow();
        Ok(disk
            .log
            .get(from as usize..)
            .map(<[Value]>::to_vec)
            .unwrap_or_default())
    }

    fn get_promise(&self) -> StorageResult<Option<Ballot>> {
        Ok(self.0.borrow().promise)
    }

    /// Reconfiguration is outside the checked configurations: a stop sign is
    /// refused (the library then panics, a core fault saying so).
    fn set_stopsign(&mut self, s: Option<StopSign>) -> StorageResult<()> {
        match s {
            None => Ok(()),
            Some(_) => Err(capacity("a stop sign (reconfiguration)".into())),
        }
    }

    fn get_stopsign(&self) -> StorageResult<Option<StopSign>> {
        Ok(None)
    }

    /// Compaction is outside the checked configurations (never requested).
    fn trim(&mut self, idx: u64) -> StorageResult<()> {
        Err(capacity(format!("a trim to {idx}")))
    }

    fn set_compacted_idx(&mut self, idx: u64) -> StorageResult<()> {
        match idx {
            0 => Ok(()),
            _ => Err(capacity(format!("compacted index {idx}"))),
        }
    }

    fn get_compacted_idx(&self) -> StorageResult<u64> {
        Ok(0)
    }

    fn set_snapshot(&mut self, snapshot: Option<NoSnapshot>) -> StorageResult<()> {
        match snapshot {
            None => Ok(()),
            Some(_) => Err(capacity("a snapshot".into())),
        }
    }

    fn get_snapshot(&self) -> StorageResult<Option<NoSnapshot>> {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_disk_survives_its_image() {
        let disk = Disk {
            promise: Some(Ballot::with(1, 300, 0, 3)),
            accepted_round: None,
            decided_idx: 2,
            log: vec![Value(4), Value(9), Value(1)],
        };
        assert_eq!(Disk::from_image(&disk.image()), disk);
        assert_eq!(Disk::from_image(&[0; IMAGE_SIZE]), Disk::default());
    }

    #[test]
    fn a_log_beyond_the_layout_is_a_storage_error() {
        let mut storage = SharedDisk::default();
        storage.append_entries(vec![Value(0); LOG_MAX]).unwrap();
        let error = storage.append_entry(Value(1)).unwrap_err();
        assert!(
            error.to_string().contains("cannot hold 9 entries"),
            "{error}"
        );
    }
}
