//! A BFS level held as segments of canonical state bytes.

/// Most states one [`Segment`] holds; segments are the unit of work that
/// search workers take, so this bounds how unevenly a level can be split.
pub const SEGMENT_STATES_MAX: usize = 512;

/// A batch of frontier entries in one flat byte buffer.
///
/// Each entry is `trace id (u64 LE) | length (u32 LE) | state bytes`: no heap
/// object per state, and the buffer can be written to disk or sent elsewhere
/// as it is.
#[derive(Debug, Default, Clone)]
pub struct Segment {
    bytes: Vec<u8>,
    states: usize,
}

/// One entry of a [`Segment`]: a state's canonical bytes and its trace id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrontierEntry<'a> {
    /// The state's record in the trace log.
    pub trace_id: u64,
    /// The state's canonical encoding.
    pub state: &'a [u8],
}

const ENTRY_HEADER_BYTES: usize = 12;

impl Segment {
    /// An empty segment.
    pub fn new() -> Segment {
        Segment::default()
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.states
    }

    /// Whether the segment has no entry.
    pub fn is_empty(&self) -> bool {
        self.states == 0
    }

    /// Whether the segment holds [`SEGMENT_STATES_MAX`] entries.
    pub fn is_full(&self) -> bool {
        self.states >= SEGMENT_STATES_MAX
    }

    /// Bytes of state data and headers held.
    pub fn byte_len(&self) -> usize {
        self.bytes.len()
    }

    /// Appends a state. Panics if the state is longer than `u32::MAX` bytes.
    pub fn push(&mut self, trace_id: u64, state: &[u8]) {
        let len = u32::try_from(state.len()).expect("a state encoding fits in u32::MAX bytes");
        self.bytes.extend_from_slice(&trace_id.to_le_bytes());
        self.bytes.extend_from_slice(&len.to_le_bytes());
        self.bytes.extend_from_slice(state);
        self.states += 1;
    }

    /// The entries in the order they were pushed.
    pub fn iter(&self) -> SegmentIter<'_> {
        SegmentIter { bytes: &self.bytes }
    }

    /// The raw buffer (for writing the segment to disk).
    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Rebuilds a segment from a buffer produced by [`as_bytes`](Self::as_bytes);
    /// `None` if the buffer is not a sequence of whole entries.
    pub fn from_bytes(bytes: Vec<u8>) -> Option<Segment> {
        let mut states = 0;
        let mut rest = &bytes[..];
        while !rest.is_empty() {
            let header = rest.get(..ENTRY_HEADER_BYTES)?;
            let len = u32::from_le_bytes(header[8..12].try_into().ok()?) as usize;
            rest = rest.get(ENTRY_HEADER_BYTES + len..)?;
            states += 1;
        }
        Some(Segment { bytes, states })
    }
}

/// Iterator over a [`Segment`]'s entries.
pub struct SegmentIter<'a> {
    bytes: &'a [u8],
}

impl<'a> Iterator for SegmentIter<'a> {
    type Item = FrontierEntry<'a>;

    #[inline]
    fn next(&mut self) -> Option<FrontierEntry<'a>> {
        if self.bytes.is_empty() {
            return None;
        }
        let (header, rest) = self.bytes.split_at(ENTRY_HEADER_BYTES);
        let trace_id = u64::from_le_bytes(header[..8].try_into().expect("8 bytes"));
        let len = u32::from_le_bytes(header[8..].try_into().expect("4 bytes")) as usize;
        let (state, rest) = rest.split_at(len);
        self.bytes = rest;
        Some(FrontierEntry { trace_id, state })
    }
}

/// One BFS level: the segments of states still to expand.
#[derive(Debug, Default)]
pub struct Frontier {
    segments: Vec<Segment>,
    states: u64,
}

impl Frontier {
    /// An empty level.
    pub fn new() -> Frontier {
        Frontier::default()
    }

    /// Adds a segment (empty segments are dropped).
    pub fn push_segment(&mut self, segment: Segment) {
        if !segment.is_empty() {
            self.states += segment.len() as u64;
            self.segments.push(segment);
        }
    }

    /// Number of states in the level.
    pub fn len(&self) -> u64 {
        self.states
    }

    /// Whether the level has no state.
    pub fn is_empty(&self) -> bool {
        self.states == 0
    }

    /// The segments, in the order they were added.
    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Takes the segments out of the level.
    pub fn into_segments(self) -> Vec<Segment> {
        self.segments
    }

    /// Bytes held by the level's segments.
    pub fn byte_len(&self) -> usize {
        self.segments.iter().map(Segment::byte_len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entries_come_back_in_order() {
        let mut segment = Segment::new();
        segment.push(7, b"abc");
        segment.push(8, b"");
        segment.push(9, b"z");
        let entries: Vec<_> = segment.iter().collect();
        assert_eq!(entries.len(), 3);
        assert_eq!(
            entries[0],
            FrontierEntry {
                trace_id: 7,
                state: b"abc"
            }
        );
        assert_eq!(entries[1].state, b"");
        assert_eq!(entries[2].trace_id, 9);
    }

    #[test]
    fn bytes_round_trip_and_truncation_is_detected() {
        let mut segment = Segment::new();
        segment.push(1, b"hello");
        segment.push(2, b"world");
        let copy = Segment::from_bytes(segment.as_bytes().to_vec()).unwrap();
        assert_eq!(copy.len(), 2);
        let mut truncated = segment.as_bytes().to_vec();
        truncated.pop();
        assert!(Segment::from_bytes(truncated).is_none());
    }

    #[test]
    fn frontier_counts_states_across_segments() {
        let mut frontier = Frontier::new();
        let mut a = Segment::new();
        a.push(1, b"x");
        frontier.push_segment(a);
        frontier.push_segment(Segment::new());
        assert_eq!(frontier.len(), 1);
        assert_eq!(frontier.segments().len(), 1);
    }
}
