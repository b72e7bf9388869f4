//! raft-rs's messages in at most 64 bytes, and its log in a fixed layout.
//!
//! Node `i` of the World is raft peer `i + 1`. Numbers (terms, indices)
//! are single bytes; a value over 255, a snapshot or a message kind the
//! checked configurations do not use is an encoding error, reported as a
//! capacity fault, never truncated. An entry's data is empty (a leader's
//! no-op) or one byte, the client request it carries.

use raft::eraftpb::{Entry, Message, MessageType};

/// Bytes of an encoded entry: term, then data (0: none, `r + 1`: request `r`).
pub const ENTRY_SIZE: usize = 2;

/// The peer id of World node `node`.
pub fn peer(node: u32) -> u64 {
    u64::from(node) + 1
}

fn byte(value: u64, what: &str) -> Result<u8, String> {
    u8::try_from(value).map_err(|_| format!("{what} {value} is over 255"))
}

/// An entry's two bytes (its index is its place in the log).
pub fn encode_entry(entry: &Entry) -> Result<[u8; ENTRY_SIZE], String> {
    let data = match entry.data.as_ref() {
        [] => 0,
        [request] if *request < u8::MAX => request + 1,
        other => return Err(format!("entry data {other:?}")),
    };
    Ok([byte(entry.term, "entry term")?, data])
}

/// The entry at `index` that [`encode_entry`] wrote.
pub fn decode_entry(bytes: &[u8], index: u64) -> Entry {
    let mut entry = Entry {
        term: u64::from(bytes[0]),
        index,
        ..Default::default()
    };
    if bytes[1] != 0 {
        entry.data = vec![bytes[1] - 1].into();
    }
    entry
}

/// The client request an entry carries, if any.
pub fn request_of(entry: &Entry) -> Option<u8> {
    entry.data.first().copied()
}

const KINDS: [MessageType; 8] = [
    MessageType::MsgAppend,
    MessageType::MsgAppendResponse,
    MessageType::MsgRequestVote,
    MessageType::MsgRequestVoteResponse,
    MessageType::MsgHeartbeat,
    MessageType::MsgHeartbeatResponse,
    MessageType::MsgPropose,
    MessageType::MsgTimeoutNow,
];

/// `[kind, term, log term, index, commit, commit term, reject, reject hint,
/// entry count, entries...]`.
pub fn encode(message: &Message) -> Result<Vec<u8>, String> {
    let kind = KINDS
        .iter()
        .position(|&kind| kind == message.msg_type)
        .ok_or_else(|| format!("message kind {:?} (not in the encoding)", message.msg_type))?;
    if message.snapshot.is_some() || message.request_snapshot != 0 || !message.context.is_empty() {
        return Err("a message with a snapshot or context".into());
    }
    let mut bytes = vec![
        kind as u8,
        byte(message.term, "term")?,
        byte(message.log_term, "log term")?,
        byte(message.index, "index")?,
        byte(message.commit, "commit")?,
        byte(message.commit_term, "commit term")?,
        u8::from(message.reject),
        byte(message.reject_hint, "reject hint")?,
        byte(message.entries.len() as u64, "entry count")?,
    ];
    for entry in message.entries.iter() {
        bytes.extend_from_slice(&encode_entry(entry)?);
    }
    Ok(bytes)
}

/// The message `bytes` encode, from peer `from` to peer `to`.
pub fn decode(bytes: &[u8], from: u64, to: u64) -> Result<Message, String> {
    let [kind, term, log_term, index, commit, commit_term, reject, hint, count, rest @ ..] = bytes
    else {
        return Err("a message shorter than its header".into());
    };
    let msg_type = *KINDS
        .get(usize::from(*kind))
        .ok_or_else(|| format!("unknown message kind {kind}"))?;
    if rest.len() != usize::from(*count) * ENTRY_SIZE {
        return Err("a message whose entries do not match its count".into());
    }
    let mut message = Message {
        msg_type,
        to,
        from,
        term: u64::from(*term),
        log_term: u64::from(*log_term),
        index: u64::from(*index),
        commit: u64::from(*commit),
        commit_term: u64::from(*commit_term),
        reject: *reject != 0,
        reject_hint: u64::from(*hint),
        ..Default::default()
    };
    for (offset, entry) in rest.chunks(ENTRY_SIZE).enumerate() {
        // Entries follow the index the message names.
        message
            .entries
            .push(decode_entry(entry, message.index + 1 + offset as u64));
    }
    Ok(message)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_append_decodes_to_itself() {
        let mut message = Message {
            msg_type: MessageType::MsgAppend,
            to: 2,
            from: 1,
            term: 3,
            log_term: 2,
            index: 4,
            commit: 4,
            ..Default::default()
        };
        message.entries.push(decode_entry(&[3, 8], 5));
        message.entries.push(decode_entry(&[3, 0], 6));
        let bytes = encode(&message).unwrap();
        assert!(bytes.len() <= 64);
        assert_eq!(decode(&bytes, 1, 2).unwrap(), message);
    }
}
