//! The adapter's side of the client contract the properties read: client
//! request `r` appends the value `r`, and the node that took it replies
//! once, with one byte, the index the value was decided at.

use cmc_world::core::abi::{CoreError, Outputs};

/// The client requests a node has taken and not yet answered: a set of
/// request ids, 0 to 31 (bit `r` is request `r`), kept in the adapter's view
/// as its four little-endian bytes ([`Pending::to_le_bytes`]).
///
/// ```
/// use cmc_log_properties::client::Pending;
/// use cmc_world::core::abi::Outputs;
///
/// let mut pending = Pending::default();
/// assert_eq!(pending.take(5).unwrap(), 5, "request 5 appends the value 5");
/// assert!(pending.take(32).is_err(), "ids stop at 31");
/// assert_eq!(pending.requests().collect::<Vec<_>>(), [5]);
/// let mut out = Outputs::default();
/// pending.answer(&mut out, 5, 2).unwrap();
/// assert_eq!((out.as_slice()[0].id, out.as_slice()[0].payload()), (5, &[2][..]));
/// assert!(!pending.awaits(5));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Pending(u32);

impl Pending {
    /// Bytes of the set in a view.
    pub const SIZE: usize = 4;

    /// Takes client request `id`: the value it appends, one byte. An id over
    /// 31 is an error (the set has no room for it: the World sends more
    /// requests than an adapter takes).
    pub fn take(&mut self, id: u32) -> Result<u8, CoreError> {
        let value = u8::try_from(id)
            .ok()
            .filter(|&id| id < 32)
            .ok_or_else(|| CoreError::Library(format!("request id {id} is over 31")))?;
        self.0 |= 1 << value;
        Ok(value)
    }

    /// Whether request `request` awaits its reply.
    pub fn awaits(self, request: u32) -> bool {
        request < 32 && self.0 & 1 << request != 0
    }

    /// The requests that await their reply, lowest id first.
    pub fn requests(self) -> impl Iterator<Item = u32> {
        (0..32).filter(move |&request| self.awaits(request))
    }

    /// Replies to request `request` (one that [`awaits`](Self::awaits) its
    /// reply) that its value was decided at `index`, and stops awaiting it.
    pub fn answer(
        &mut self,
        out: &mut Outputs,
        request: u32,
        index: usize,
    ) -> Result<(), CoreError> {
        out.reply(request, &[index as u8])?;
        self.0 &= !(1 << request);
        Ok(())
    }

    /// The set as the view holds it.
    pub fn to_le_bytes(self) -> [u8; Self::SIZE] {
        self.0.to_le_bytes()
    }
}
