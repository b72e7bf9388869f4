//! Hex text of core bytes: how traces print a payload, and a state, that
//! the core does not describe in its own words.

/// Lower-case hex of `bytes` (`-` for none), as traces print raw payloads.
pub(crate) fn hex(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "-".into();
    }
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

/// A core state as hex text: its durable part, then its volatile part.
pub(crate) fn state_hex(durable: &[u8], volatile: &[u8]) -> String {
    format!("durable {} volatile {}", hex(durable), hex(volatile))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_are_lower_case_hex_and_none_is_a_dash() {
        assert_eq!(hex(&[0x0a, 0xff]), "0aff");
        assert_eq!(hex(&[]), "-");
        assert_eq!(state_hex(&[1], &[]), "durable 01 volatile -");
    }
}
