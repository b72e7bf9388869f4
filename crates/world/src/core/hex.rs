//! Hex text of core bytes: how traces print a payload, and a state, that
//! the core does not describe in its own words.

/// Lower-case hex of `bytes` (`-` for none), as traces print raw payloads.
pub fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A core state as hex text: its durable part, then its volatile part.
pub fn state_hex(durable: &[u8], volatile: &[u8]) -> String {
    format!("durable {} volatile {}", hex(durable), hex(volatile))
}
