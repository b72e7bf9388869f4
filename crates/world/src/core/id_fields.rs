//! Where a core's state and messages hold node ids: a descriptor of id
//! fields (offsets and widths), which renames them for symmetry reduction
//! without code of the core's own.
//!
//! A C core declares its fields with `CMC_ID_FIELDS` in `include/cmc.h`
//! (read by `read_table`); a Rust core builds an [`IdFields`] and calls it
//! from its [`Core::permute`](crate::Core::permute),
//! [`Core::node_ids`](crate::Core::node_ids) and
//! [`Core::permute_message`](crate::Core::permute_message). Three kinds of
//! field:
//!
//! - a *value* holds one id plus a bias (bias 1 when 0 means "none"):
//!   `v` becomes `perm[v - bias] + bias`; a value outside
//!   `bias..bias + nodes` is not an id and is left alone;
//! - a *bit set* holds a bit per node: bit `n` moves to bit `perm[n]`;
//! - an *index* is an array with one entry per node (`count` entries of
//!   `width` bytes, e.g. a Raft leader's `match_index[nodes]`): the entry
//!   of node `n` moves to position `perm[n]`.
//!
//! Every field is little-endian, `width` 1, 2, 4 or 8 bytes, at a byte
//! offset of the durable part, the volatile part or a message; a message
//! field may apply only to messages whose byte at `tag_offset` is `tag`
//! (its type). Fields are renamed in place, so a pending persist of the
//! durable part is renamed exactly with its node. A layout a descriptor
//! cannot say (ids that must be re-sorted) keeps the `permute` hook.
//!
//! ```
//! use cmc_world::core::id_fields::{IdField, IdFields, Part};
//!
//! // A durable `voted_for` (id + 1, 0: none) at offset 4, and a message of
//! // type 1 whose byte 1 names the candidate.
//! let fields = IdFields::new(vec![
//!     IdField::value(Part::Durable, 4, 4).bias(1),
//!     IdField::value(Part::Message, 1, 1).tagged(0, 1),
//! ]);
//! let swap_1_and_2 = [0, 2, 1];
//! let (mut durable, mut volatile) = ([0, 0, 0, 0, 2, 0, 0, 0], []);
//! fields.permute_state(&mut durable, &mut volatile, &swap_1_and_2);
//! assert_eq!(durable[4], 3, "voted for n1, now n2");
//! assert_eq!(fields.node_ids(&durable, &volatile), 1 << 2);
//! let mut vote_request = [1, 2];
//! fields.permute_message(&mut vote_request, &swap_1_and_2);
//! assert_eq!(vote_request, [1, 1]);
//! let mut other_type = [7, 2];
//! fields.permute_message(&mut other_type, &swap_1_and_2);
//! assert_eq!(other_type, [7, 2], "not a vote request: no id there");
//! ```

use crate::core::abi::{ABI_VERSION, PAYLOAD_MAX};
use crate::core::helpers::node_bit;
use crate::core::loader::LoadError;

/// The symbol of the optional id-field table (`CMC_ID_FIELDS_SYMBOL`).
pub const ID_FIELDS_SYMBOL: &str = "cmc_id_fields_entry";
/// Most fields one table may declare.
pub const ID_FIELDS_MAX: u32 = 256;

/// Where a field is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// The durable part (and the persists bound for it).
    Durable,
    /// The volatile part.
    Volatile,
    /// Every message the core sends (or those of one type).
    Message,
}

/// What a field holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// One id plus the field's bias.
    Value,
    /// A bit per node.
    BitSet,
    /// One entry per node, by id (`count` entries).
    Index,
}

/// One field holding node ids (see the module text).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IdField {
    /// Where it is.
    pub part: Part,
    /// What it holds.
    pub kind: Kind,
    /// Byte offset in its part.
    pub offset: usize,
    /// Bytes of one value, bit set or entry: 1, 2, 4 or 8.
    pub width: usize,
    /// [`Kind::Value`]: the field holds id + bias.
    pub bias: u64,
    /// Consecutive values (an array of ids) or, for [`Kind::Index`], the
    /// entries (one per node, at least the World's nodes).
    pub count: usize,
    /// A message field applies only to messages whose byte at this offset
    /// is this tag; `None`: to every message long enough.
    pub tag: Option<(usize, u8)>,
}

impl IdField {
    fn new(part: Part, kind: Kind, offset: usize, width: usize) -> IdField {
        IdField {
            part,
            kind,
            offset,
            width,
            bias: 0,
            count: 1,
            tag: None,
        }
    }

    /// A value: one id, `width` bytes at `offset` of `part`.
    pub fn value(part: Part, offset: usize, width: usize) -> IdField {
        IdField::new(part, Kind::Value, offset, width)
    }

    /// A bit set: bit `n` for node `n`, `width` bytes at `offset`.
    pub fn bit_set(part: Part, offset: usize, width: usize) -> IdField {
        IdField::new(part, Kind::BitSet, offset, width)
    }

    /// An array of `count` entries of `width` bytes at `offset`, one per node.
    pub fn index(part: Part, offset: usize, width: usize, count: usize) -> IdField {
        IdField {
            count,
            ..IdField::new(part, Kind::Index, offset, width)
        }
    }

    /// The value holds id + `bias` (builder style).
    pub fn bias(self, bias: u64) -> IdField {
        IdField { bias, ..self }
    }

    /// `count` consecutive values or bit sets (builder style).
    pub fn repeated(self, count: usize) -> IdField {
        IdField { count, ..self }
    }

    /// Only messages whose byte at `offset` is `tag` (builder style).
    pub fn tagged(self, offset: usize, tag: u8) -> IdField {
        IdField {
            tag: Some((offset, tag)),
            ..self
        }
    }

    /// Bytes the field spans from its offset.
    fn span(&self) -> usize {
        self.width * self.count
    }

    /// Whether the field is well formed and lies inside a part of `size`
    /// bytes (messages: [`PAYLOAD_MAX`]); why not otherwise.
    fn check(&self, durable: usize, volatile: usize) -> Result<(), String> {
        if ![1, 2, 4, 8].contains(&self.width) {
            return Err(format!("width {} is not 1, 2, 4 or 8", self.width));
        }
        if self.count == 0 {
            return Err("count 0".into());
        }
        let size = match self.part {
            Part::Durable => durable,
            Part::Volatile => volatile,
            Part::Message => PAYLOAD_MAX,
        };
        let end = self.offset.checked_add(self.span());
        if end.is_none_or(|end| end > size) {
            return Err(format!(
                "bytes {}..{} lie outside the {:?} part's {size} bytes",
                self.offset,
                self.offset.saturating_add(self.span()),
                self.part
            ));
        }
        if self.tag.is_some_and(|(at, _)| at >= PAYLOAD_MAX) {
            return Err("the tag offset lies outside a message".into());
        }
        Ok(())
    }

    /// Renames the ids of this field in `bytes` (its part) by `perm`.
    fn permute(&self, bytes: &mut [u8], perm: &[u32]) {
        let Some(field) = bytes.get_mut(self.offset..self.offset + self.span()) else {
            return; // a message too short to hold it
        };
        let nodes = perm.len();
        match self.kind {
            Kind::Value => {
                for value in field.chunks_exact_mut(self.width) {
                    let id = read(value).wrapping_sub(self.bias);
                    if id < nodes as u64 {
                        write(value, perm[id as usize] as u64 + self.bias);
                    }
                }
            }
            Kind::BitSet => {
                for set in field.chunks_exact_mut(self.width) {
                    let bits = read(set);
                    let moved = (0..nodes.min(self.width * 8))
                        .filter(|&node| bits & (1 << node) != 0)
                        .fold(0u64, |moved, node| moved | 1 << perm[node]);
                    // Bits past the nodes are not ids: kept as they are.
                    let others = match nodes {
                        64.. => 0,
                        _ => bits & !((1u64 << nodes) - 1),
                    };
                    write(set, moved | others);
                }
            }
            Kind::Index => {
                let entries = field.to_vec();
                for (node, &new) in perm.iter().enumerate().take(self.count) {
                    let (from, to) = (node * self.width, new as usize * self.width);
                    if to + self.width <= field.len() {
                        field[to..to + self.width]
                            .copy_from_slice(&entries[from..from + self.width]);
                    }
                }
            }
        }
    }

    /// The ids this field holds in `bytes` (its part), as bits.
    fn ids(&self, bytes: &[u8]) -> u64 {
        let field = &bytes[self.offset..self.offset + self.span()];
        match self.kind {
            Kind::Value => field
                .chunks_exact(self.width)
                .map(|value| read(value).wrapping_sub(self.bias))
                .filter(|&id| id < 64)
                .fold(0, |ids, id| ids | node_bit(id as u32)),
            Kind::BitSet => field
                .chunks_exact(self.width)
                .fold(0, |ids, set| ids | read(set)),
            // Every entry moves with its node.
            Kind::Index => (0..self.count.min(64) as u32).fold(0, |ids, node| ids | node_bit(node)),
        }
    }
}

/// A little-endian unsigned integer of 1 to 8 bytes.
fn read(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0, |value, &byte| value << 8 | u64::from(byte))
}

/// Writes `value` into `bytes`, little-endian.
fn write(bytes: &mut [u8], value: u64) {
    for (at, byte) in bytes.iter_mut().enumerate() {
        *byte = (value >> (8 * at)) as u8;
    }
}

/// A core's id fields (see the module text).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IdFields {
    fields: Vec<IdField>,
}

impl IdFields {
    /// The descriptor of `fields`.
    pub fn new(fields: Vec<IdField>) -> IdFields {
        IdFields { fields }
    }

    /// Whether every field is well formed and inside its part, for a core
    /// of these sizes; the first that is not, and why, otherwise.
    pub fn check(&self, durable: usize, volatile: usize) -> Result<(), String> {
        for (index, field) in self.fields.iter().enumerate() {
            field
                .check(durable, volatile)
                .map_err(|why| format!("id field {index} ({field:?}): {why}"))?;
        }
        Ok(())
    }

    /// Renames the ids in a node's state by `perm` (`perm[old] = new`).
    pub fn permute_state(&self, durable: &mut [u8], volatile: &mut [u8], perm: &[u32]) {
        for field in &self.fields {
            match field.part {
                Part::Durable => field.permute(durable, perm),
                Part::Volatile => field.permute(volatile, perm),
                Part::Message => {}
            }
        }
    }

    /// The ids a node's state holds, as bits ([`node_bit`]).
    pub fn node_ids(&self, durable: &[u8], volatile: &[u8]) -> u64 {
        self.fields
            .iter()
            .map(|field| match field.part {
                Part::Durable => field.ids(durable),
                Part::Volatile => field.ids(volatile),
                Part::Message => 0,
            })
            .fold(0, |ids, more| ids | more)
    }

    /// Renames the ids in a message by `perm`.
    pub fn permute_message(&self, message: &mut [u8], perm: &[u32]) {
        for field in &self.fields {
            let applies = field.part == Part::Message
                && field
                    .tag
                    .is_none_or(|(at, tag)| message.get(at) == Some(&tag));
            if applies {
                field.permute(message, perm);
            }
        }
    }
}

/// `cmc_id_field`.
#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub(crate) struct IdFieldRecord {
    part: u32,
    kind: u32,
    offset: u32,
    width: u32,
    count: u32,
    bias: u32,
    tag_offset: i32,
    tag: u32,
}

/// `cmc_permute_message_fn`: renames the ids in a message (`len` bytes)
/// by `perm`, in place.
pub(crate) type PermuteMessageFn = unsafe extern "C" fn(
    config: *const crate::core::abi::Config,
    message: *mut u8,
    len: u32,
    perm: *const u32,
);

/// `cmc_id_field_table`.
#[repr(C)]
pub(crate) struct IdFieldTable {
    abi_version: u32,
    count: u32,
    items: *const IdFieldRecord,
    permute_message: Option<PermuteMessageFn>,
}

/// `cmc_id_fields_entry`.
pub(crate) type IdFieldsEntryFn = unsafe extern "C" fn() -> *const IdFieldTable;

/// The [`IdFields`] a library's table declares, checked against the
/// core's sizes, with its message hook if it has one; `origin` names the
/// library in messages.
///
/// # Safety
/// `table` is null or what the library's `cmc_id_fields_entry` returned,
/// pointing to a static table while the library is loaded.
pub(crate) unsafe fn read_table(
    table: *const IdFieldTable,
    origin: &str,
    (durable, volatile): (usize, usize),
) -> Result<(IdFields, Option<PermuteMessageFn>), LoadError> {
    let bad = |why: String| LoadError(format!("{origin}: its id fields (`CMC_ID_FIELDS`): {why}"));
    if table.is_null() {
        return Err(bad("the table is null".into()));
    }
    // SAFETY: non-null, and the entry point's contract is a static table.
    let table = unsafe { &*table };
    if table.abi_version != ABI_VERSION {
        return Err(bad(format!(
            "built for ABI version {}, this cmc speaks {ABI_VERSION}",
            table.abi_version
        )));
    }
    if table.count > ID_FIELDS_MAX || (table.count > 0 && table.items.is_null()) {
        return Err(bad(format!(
            "{} fields (at most {ID_FIELDS_MAX}, and a non-null array)",
            table.count
        )));
    }
    let records = match table.count {
        0 => &[][..],
        // SAFETY: `count` records at `items` (the table's contract).
        count => unsafe { std::slice::from_raw_parts(table.items, count as usize) },
    };
    let mut fields = Vec::with_capacity(records.len());
    for (index, record) in records.iter().enumerate() {
        let part = match record.part {
            1 => Part::Durable,
            2 => Part::Volatile,
            3 => Part::Message,
            other => return Err(bad(format!("field {index}: part {other} is not CMC_ID_DURABLE, CMC_ID_VOLATILE or CMC_ID_MESSAGE"))),
        };
        let kind = match record.kind {
            1 => Kind::Value,
            2 => Kind::BitSet,
            3 => Kind::Index,
            other => {
                return Err(bad(format!(
                "field {index}: kind {other} is not CMC_ID_VALUE, CMC_ID_BITSET or CMC_ID_INDEX"
            )))
            }
        };
        let tag = match record.tag_offset {
            at if at < 0 => None,
            at => Some((at as usize, record.tag as u8)),
        };
        fields.push(IdField {
            part,
            kind,
            offset: record.offset as usize,
            width: record.width as usize,
            bias: u64::from(record.bias),
            count: record.count as usize,
            tag,
        });
    }
    let fields = IdFields::new(fields);
    fields.check(durable, volatile).map_err(bad)?;
    Ok((fields, table.permute_message))
}
