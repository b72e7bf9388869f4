//! The glue log: what a product's glue fed to its cores and what it carried
//! out, one record per line, for `cmc validate`.
//!
//! The glue is the only protocol code the checker never runs: it turns
//! sockets, timers and disks into events, and outputs back into system calls.
//! A product that logs both sides lets cmc replay the events through the same
//! core and check the glue (see [`crate::validate`]).
//!
//! # Format (version 1)
//!
//! A text file; the first line is `cmc-glue-log 1`; blank lines and lines
//! starting with `#` are ignored. Every other line is one record:
//!
//! ```text
//! event NODE KIND [src=N] [id=N] [clock=N] [payload=HEX]
//! output NODE KIND [dst=N] [id=N] [payload=HEX]
//! crash NODE
//! ```
//!
//! - `event`: the glue gave the event to node `NODE`'s step. `KIND` is an event
//!   name as in `include/cmc.h` without its prefix (`START`, `RECV`, `TIMER`,
//!   `FLUSHED`, `CLIENT`, `LOCAL_FAIL`, `WAKE`, `TICK`).
//! - `output`: the glue carried out one output of the step logged last, in
//!   the order the step returned them (`SEND`, `SET_TIMER`, `CANCEL_TIMER`,
//!   `PERSIST`, `WAKE`, `REPLY`). Log an output when you act on it, not when
//!   the step returns it: a glue that drops an output must show as one.
//! - `crash`: the node lost its volatile state and unflushed writes; its next
//!   event must be `START`.
//!
//! Fields left out are zero (payload: empty). `HEX` is lower- or upper-case
//! hexadecimal, two digits a byte. A step's outputs follow its event before
//! the next record about any node: a glue that reacts to an output by giving
//! another event (a `FLUSHED` after a write) logs that event after the
//! outputs, as it should deliver it.
//!
//! Writers: [`GlueLogWriter`] in Rust, `include/cmc_glue_log.h` in C.

use std::fmt::Write as _;
use std::io::{self, Write};

use bytemuck::Zeroable;

use crate::core::abi::{Event, EventKind, Output, OutputKind, PAYLOAD_MAX};

/// The first line of every glue log.
pub const HEADER: &str = "cmc-glue-log 1";

/// One record of a glue log.
///
/// ```
/// use cmc_world::core::abi::EventKind;
/// use cmc_world::validate::glue_log::{format_record, parse, Record};
///
/// let lines = parse("cmc-glue-log 1\nevent 1 RECV src=0 payload=0a0b\ncrash 1\n")?;
/// let Record::Event { node: 1, event } = &lines[0].record else { panic!() };
/// assert_eq!((event.kind(), event.payload()), (Some(EventKind::Recv), &[10, 11][..]));
/// assert_eq!(lines[1].number, 3);
/// assert_eq!(format_record(&lines[1].record), "crash 1");
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Record {
    /// The glue gave `event` to `node`'s step.
    Event {
        /// The node.
        node: u32,
        /// The event, as the core received it.
        event: Event,
    },
    /// The glue carried out `output` of `node`'s last step.
    Output {
        /// The node.
        node: u32,
        /// The output, as the glue carried it out.
        output: Output,
    },
    /// `node` crashed.
    Crash {
        /// The node.
        node: u32,
    },
}

/// A record with the line it came from (1-based), for messages (see also
/// [`Record`]'s example).
///
/// ```
/// use cmc_world::validate::glue_log::{parse, Line, Record};
///
/// let lines = parse("cmc-glue-log 1\n# node 2 went down\ncrash 2\n")?;
/// assert_eq!(lines, [Line { number: 3, record: Record::Crash { node: 2 } }]);
/// # Ok::<(), String>(())
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Line {
    /// Line number in the log, from 1.
    pub number: usize,
    /// The record on that line.
    pub record: Record,
}

/// Parses a whole glue log (see [`Record`]'s example): its records in
/// order, blank and `#` lines skipped; an error names the line and what is
/// wrong with it.
///
/// ```
/// use cmc_world::validate::glue_log::parse;
///
/// assert!(parse("cmc-glue-log 1\n# a comment\n\n").unwrap().is_empty());
/// assert_eq!(parse("cmc-glue-log 1\nevent 0 JUMP\n").unwrap_err().split(':').next(), Some("line 2"));
/// ```
pub fn parse(text: &str) -> Result<Vec<Line>, String> {
    let mut lines = text.lines().enumerate();
    match lines.next() {
        Some((_, first)) if first.trim() == HEADER => {}
        Some((_, first)) => {
            return Err(format!(
                "line 1: `{}` is not a glue log header (expected `{HEADER}`)",
                first.trim()
            ))
        }
        None => return Err(format!("empty file (expected `{HEADER}` on line 1)")),
    }
    let mut records = Vec::new();
    for (index, text) in lines {
        let text = text.trim();
        if text.is_empty() || text.starts_with('#') {
            continue;
        }
        let record =
            parse_record(text).map_err(|problem| format!("line {}: {problem}", index + 1))?;
        records.push(Line {
            number: index + 1,
            record,
        });
    }
    Ok(records)
}

fn parse_record(text: &str) -> Result<Record, String> {
    let mut words = text.split_whitespace();
    let tag = words.next().unwrap_or_default();
    let node = words
        .next()
        .ok_or("a record names its node after the tag")?;
    let node: u32 = node
        .parse()
        .map_err(|_| format!("`{node}` is not a node number"))?;
    let fields: Vec<&str> = words.collect();
    match tag {
        "crash" if fields.is_empty() => Ok(Record::Crash { node }),
        "crash" => Err("`crash NODE` takes no fields".into()),
        "event" => {
            let (kind, fields) = fields.split_first().ok_or("an event names its kind")?;
            let kind = event_kind(kind)?;
            let mut event = Event::new(kind, 0, 0, &[], 0);
            for field in fields {
                match split_field(field)? {
                    ("src", value) => event.src = number(value)?,
                    ("id", value) => event.id = number(value)?,
                    ("clock", value) => event.clock = number(value)?,
                    ("payload", value) => (event.len, event.payload) = payload(value)?,
                    (name, _) => return Err(format!("an event has no field `{name}`")),
                }
            }
            Ok(Record::Event { node, event })
        }
        "output" => {
            let (kind, fields) = fields.split_first().ok_or("an output names its kind")?;
            let mut output = Output::zeroed();
            output.kind = output_kind(kind)? as u32;
            for field in fields {
                match split_field(field)? {
                    ("dst", value) => output.dst = number(value)?,
                    ("id", value) => output.id = number(value)?,
                    ("payload", value) => (output.len, output.payload) = payload(value)?,
                    (name, _) => return Err(format!("an output has no field `{name}`")),
                }
            }
            Ok(Record::Output { node, output })
        }
        other => Err(format!(
            "`{other}` is not a record (expected `event`, `output` or `crash`)"
        )),
    }
}

/// The event kind named `name` (as [`EventKind::name`] spells it).
fn event_kind(name: &str) -> Result<EventKind, String> {
    (1..=u8::MAX as u32)
        .filter_map(EventKind::from_raw)
        .find(|kind| kind.name() == name)
        .ok_or_else(|| format!("`{name}` is not an event kind"))
}

/// The output kind named `name` (as [`OutputKind::name`] spells it).
fn output_kind(name: &str) -> Result<OutputKind, String> {
    (1..=u8::MAX as u32)
        .filter_map(OutputKind::from_raw)
        .find(|kind| kind.name() == name)
        .ok_or_else(|| format!("`{name}` is not an output kind"))
}

fn split_field(field: &str) -> Result<(&str, &str), String> {
    field
        .split_once('=')
        .ok_or_else(|| format!("`{field}` is not a NAME=VALUE field"))
}

fn number<T: std::str::FromStr>(text: &str) -> Result<T, String> {
    text.parse()
        .map_err(|_| format!("`{text}` is not a number in range"))
}

/// The length and the payload field (zero past the length) of the
/// hexadecimal payload `text`.
fn payload(text: &str) -> Result<(u32, [u8; PAYLOAD_MAX]), String> {
    let bytes = hex(text)?;
    Ok((bytes.len() as u32, crate::core::abi::zero_padded(&bytes)))
}

fn hex(text: &str) -> Result<Vec<u8>, String> {
    if text.len() & 1 == 1 || text.len() / 2 > PAYLOAD_MAX {
        return Err(format!(
            "payload `{text}`: expected an even number of hex digits, at most {PAYLOAD_MAX} bytes"
        ));
    }
    (0..text.len())
        .step_by(2)
        .map(|at| {
            u8::from_str_radix(&text[at..at + 2], 16)
                .map_err(|_| format!("payload `{text}` is not hexadecimal"))
        })
        .collect()
}

/// Writes a record as one line of the format (without the newline), which
/// [`parse`] reads back as the same record; fields that are zero are left out.
pub fn format_record(record: &Record) -> String {
    let mut line = String::new();
    match record {
        Record::Crash { node } => {
            let _ = write!(line, "crash {node}");
        }
        Record::Event { node, event } => {
            let kind = event
                .kind()
                .map_or_else(|| event.kind.to_string(), |kind| kind.name().to_string());
            let _ = write!(line, "event {node} {kind}");
            push_field(&mut line, "src", u64::from(event.src));
            push_field(&mut line, "id", u64::from(event.id));
            push_field(&mut line, "clock", event.clock);
            push_payload(&mut line, event.payload());
        }
        Record::Output { node, output } => {
            let kind = OutputKind::from_raw(output.kind)
                .map_or_else(|| output.kind.to_string(), |kind| kind.name().to_string());
            let _ = write!(line, "output {node} {kind}");
            push_field(&mut line, "dst", u64::from(output.dst));
            push_field(&mut line, "id", u64::from(output.id));
            push_payload(&mut line, output.payload());
        }
    }
    line
}

fn push_field(line: &mut String, name: &str, value: u64) {
    if value != 0 {
        let _ = write!(line, " {name}={value}");
    }
}

fn push_payload(line: &mut String, payload: &[u8]) {
    if !payload.is_empty() {
        line.push_str(" payload=");
        for byte in payload {
            let _ = write!(line, "{byte:02x}");
        }
    }
}

/// Writes a glue log from a Rust product's glue.
///
/// ```
/// use cmc_world::core::abi::{Event, EventKind};
/// use cmc_world::validate::glue_log::{parse, GlueLogWriter};
///
/// let mut log = GlueLogWriter::new(Vec::new()).unwrap();
/// log.event(0, &Event::new(EventKind::Start, 0, 0, &[], 0)).unwrap();
/// let text = String::from_utf8(log.into_inner()).unwrap();
/// assert_eq!(parse(&text).unwrap().len(), 1);
/// ```
pub struct GlueLogWriter<W: Write> {
    out: W,
}

impl<W: Write> GlueLogWriter<W> {
    /// Starts a log on `out` (writes the header).
    pub fn new(mut out: W) -> io::Result<Self> {
        writeln!(out, "{HEADER}")?;
        Ok(GlueLogWriter { out })
    }

    /// Logs that the glue gives `event` to `node`'s step (call it just before the step).
    pub fn event(&mut self, node: u32, event: &Event) -> io::Result<()> {
        self.record(&Record::Event {
            node,
            event: *event,
        })
    }

    /// Logs that the glue carries out `output` of `node`'s last step (call it as you act on it).
    pub fn output(&mut self, node: u32, output: &Output) -> io::Result<()> {
        self.record(&Record::Output {
            node,
            output: *output,
        })
    }

    /// Logs that `node` crashed.
    pub fn crash(&mut self, node: u32) -> io::Result<()> {
        self.record(&Record::Crash { node })
    }

    fn record(&mut self, record: &Record) -> io::Result<()> {
        writeln!(self.out, "{}", format_record(record))
    }

    /// The underlying writer.
    pub fn into_inner(self) -> W {
        self.out
    }
}
