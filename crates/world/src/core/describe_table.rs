//! The optional describe table of a C core (`CMC_DESCRIBE` in
//! `include/cmc.h`): functions that write a reply's or a client
//! operation's payload as text, so that traces show `OK` or `put(k=1)`
//! rather than hex. A library without it describes neither.

use std::os::raw::c_char;

use crate::core::abi::Config;
use crate::core::loader::{read_versioned_table, LoadError};

/// `cmc_describe_payload_fn`: writes a description of `len` bytes of
/// payload into a buffer of `cap` bytes (NUL-terminated).
pub(crate) type DescribePayloadFn =
    unsafe extern "C" fn(*const Config, *const u8, u32, *mut c_char, usize);

/// `cmc_describe_table`.
#[repr(C)]
pub struct DescribeTable {
    pub(crate) abi_version: u32,
    pub(crate) reserved: u32,
    pub(crate) describe_reply: Option<DescribePayloadFn>,
    pub(crate) describe_operation: Option<DescribePayloadFn>,
}

/// The type of the exported `cmc_describe_entry` ([`DESCRIBE_SYMBOL`]).
pub type DescribeEntryFn = unsafe extern "C" fn() -> *const DescribeTable;

/// Name of the optional describe table's entry point.
pub const DESCRIBE_SYMBOL: &str = "cmc_describe_entry";

/// What a library's describe table gives.
#[derive(Clone, Copy, Default)]
pub(crate) struct Describers {
    pub(crate) reply: Option<DescribePayloadFn>,
    pub(crate) operation: Option<DescribePayloadFn>,
}

/// Validates and reads the table `table` points to (from `origin`, for
/// messages): refused if null or of another ABI version.
///
/// # Safety
/// `table` is null or what a library's `cmc_describe_entry` returned, with
/// pointers that stay valid while the library is loaded.
pub(crate) unsafe fn read_table(
    table: *const DescribeTable,
    origin: &str,
) -> Result<Describers, LoadError> {
    // SAFETY: by contract, null or a static `cmc_describe_table`.
    let table =
        unsafe { read_versioned_table(table, |t| t.abi_version, origin, "describe table") }?;
    Ok(Describers {
        reply: table.describe_reply,
        operation: table.describe_operation,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::abi::ABI_VERSION;

    #[test]
    fn layout_matches_the_header() {
        assert_eq!(std::mem::size_of::<DescribeTable>(), 24);
    }

    #[test]
    fn a_null_table_or_another_version_is_refused() {
        // SAFETY: a null table is allowed (and refused).
        let refused = unsafe { read_table(std::ptr::null(), "libx.so") };
        assert_eq!(
            refused.err().unwrap().to_string(),
            "libx.so: its describe table is a null pointer"
        );
        let old = DescribeTable {
            abi_version: ABI_VERSION + 1,
            reserved: 0,
            describe_reply: None,
            describe_operation: None,
        };
        // SAFETY: a valid table.
        let refused = unsafe { read_table(&old, "libx.so") };
        assert!(refused.err().unwrap().to_string().contains("ABI version"));
    }
}
