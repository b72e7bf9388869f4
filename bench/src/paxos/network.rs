//! Stateright's unordered non-duplicating network: a multiset of envelopes,
//! here a sorted fixed-capacity array in which an envelope sent twice
//! appears twice. Delivering an envelope removes one copy.

use std::fmt;

use cmc_model::{DecodeError, Decoder, Encode};

use super::messages::Envelope;

/// The most envelopes in flight at once (3 clients have at most 13).
pub const CAPACITY: usize = 20;

/// The envelopes in flight, sorted; the slots past `len` hold the default
/// envelope, so equal multisets are equal values.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Network {
    len: u8,
    envelopes: [Envelope; CAPACITY],
}

impl Network {
    /// No envelope in flight.
    pub fn new() -> Network {
        Network {
            len: 0,
            envelopes: [Envelope::default(); CAPACITY],
        }
    }

    /// The envelopes in flight, copies repeated, in order.
    pub fn iter(&self) -> impl Iterator<Item = Envelope> + '_ {
        self.envelopes[..usize::from(self.len)].iter().copied()
    }

    /// Each envelope in flight once, in order.
    pub fn distinct(&self) -> impl Iterator<Item = Envelope> + '_ {
        let slots = &self.envelopes[..usize::from(self.len)];
        slots
            .iter()
            .enumerate()
            .filter(|&(index, envelope)| index == 0 || slots[index - 1] != *envelope)
            .map(|(_, &envelope)| envelope)
    }

    /// Puts one more copy of `envelope` in flight.
    pub fn send(&mut self, envelope: Envelope) {
        let len = usize::from(self.len);
        assert!(len < CAPACITY, "more than {CAPACITY} envelopes in flight");
        let at = self.envelopes[..len].partition_point(|&other| other <= envelope);
        self.envelopes.copy_within(at..len, at + 1);
        self.envelopes[at] = envelope;
        self.len += 1;
    }

    /// Takes one copy of `envelope` out of flight; `false` if none was.
    pub fn remove(&mut self, envelope: Envelope) -> bool {
        let len = usize::from(self.len);
        let Ok(at) = self.envelopes[..len].binary_search(&envelope) else {
            return false;
        };
        self.envelopes.copy_within(at + 1..len, at);
        self.envelopes[len - 1] = Envelope::default();
        self.len -= 1;
        true
    }
}

impl fmt::Debug for Network {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// The length, then each envelope's 4 bytes.
impl Encode for Network {
    #[inline]
    fn encode(&self, out: &mut Vec<u8>) {
        out.push(self.len);
        for envelope in self.iter() {
            envelope.encode(out);
        }
    }

    fn decode(decoder: &mut Decoder<'_>) -> Result<Self, DecodeError> {
        let len = u8::decode(decoder)?;
        if usize::from(len) > CAPACITY {
            return decoder.invalid(format!("{len} envelopes exceed the capacity {CAPACITY}"));
        }
        let mut network = Network::new();
        for slot in &mut network.envelopes[..usize::from(len)] {
            *slot = Envelope::decode(decoder)?;
        }
        network.len = len;
        if !network.envelopes[..usize::from(len)].is_sorted() {
            return decoder.invalid("the envelopes in flight are not sorted");
        }
        Ok(network)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::paxos::messages::Msg;

    #[test]
    fn a_multiset_with_copies() {
        let put = Envelope::new(3, 0, Msg::Put);
        let get = Envelope::new(4, 2, Msg::Get);
        let mut network = Network::new();
        network.send(get);
        network.send(put);
        network.send(get);
        assert_eq!(network.distinct().count(), 2);
        assert!(network.remove(get));
        let expected = if put < get { [put, get] } else { [get, put] };
        assert_eq!(network.iter().collect::<Vec<_>>(), expected);
        let bytes = network.to_bytes();
        assert_eq!(bytes.len(), 9);
        assert_eq!(Network::decode_exact(&bytes).unwrap(), network);
        assert!(network.remove(get) && network.remove(put) && !network.remove(put));
        assert_eq!(network, Network::new());
    }
}
