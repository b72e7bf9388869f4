//! Client workloads: the operations clients issue, with their arguments
//! drawn from small domains (`workload=put:2:2,get:2`).
//!
//! Every CLIENT action picks one operation of the workload, so a search
//! explores each of them. The core sees the operation as the payload of
//! `CMC_EV_CLIENT`: its kind's index in the workload, then one byte per
//! argument (`put:2:2` is kind 0 with two arguments in `0..2`: payloads
//! `[0, k, v]`). The ghost history records the payload with the invocation.

use std::fmt;

use crate::core::abi::PAYLOAD_MAX;
use crate::system::state::Payload;

/// Most operations a workload may expand to (the product of its domains,
/// summed over its kinds): each CLIENT step branches over all of them.
pub const OPERATIONS_MAX: usize = 1024;

/// One kind of operation: a name and the domain size of each argument.
///
/// ```
/// use cmc_world::system::workload::{Workload, WorkloadOp};
///
/// let workload = Workload::parse("put:2:3")?;
/// assert_eq!(workload.ops, [WorkloadOp { name: "put".into(), domains: vec![2, 3] }]);
/// assert_eq!(workload.count(), 6, "two keys times three values");
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkloadOp {
    /// Its name, in traces (`put`).
    pub name: String,
    /// Each argument takes the values `0..domain` (1 to 255).
    pub domains: Vec<u8>,
}

/// The operations clients issue.
///
/// ```
/// use cmc_world::system::workload::Workload;
///
/// let workload = Workload::parse("put:2:2,get:2")?;
/// // put(k, v) for k, v in 0..2, then get(k) for k in 0..2.
/// assert_eq!(workload.count(), 6);
/// let operations = workload.operations();
/// assert_eq!(operations[1].as_bytes(), [0, 0, 1]);
/// assert_eq!(workload.describe(operations[5].as_bytes()), "get(1)");
/// assert!(Workload::parse("put:0").is_err());
/// # Ok::<(), String>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Workload {
    /// The kinds of operation; a payload's first byte is an index here.
    pub ops: Vec<WorkloadOp>,
}

impl Workload {
    /// Parses `name:domain:domain,...` (e.g. `put:2:2,get:2`; a name is
    /// letters, digits or `_`; each domain 1 to 255).
    pub fn parse(text: &str) -> Result<Workload, String> {
        let mut ops = Vec::new();
        for item in text.split(',') {
            let mut parts = item.trim().split(':');
            let name = parts.next().unwrap_or_default();
            if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
                return Err(format!(
                    "`{item}`: an operation is a name (letters, digits, _) and argument domains, e.g. put:2:2"
                ));
            }
            let domains = parts
                .map(|domain| domain.trim().parse::<u8>().ok().filter(|size| *size > 0))
                .collect::<Option<Vec<u8>>>()
                .ok_or_else(|| format!("`{item}`: each argument domain is a size from 1 to 255"))?;
            if domains.len() >= PAYLOAD_MAX {
                return Err(format!(
                    "`{item}`: at most {} arguments fit a payload",
                    PAYLOAD_MAX - 1
                ));
            }
            ops.push(WorkloadOp {
                name: name.into(),
                domains,
            });
        }
        let workload = Workload { ops };
        if workload.ops.len() > u8::MAX as usize + 1 {
            return Err("at most 256 kinds of operation".into());
        }
        let count = workload.count();
        if count > OPERATIONS_MAX {
            return Err(format!(
                "{count} operations: a workload expands to at most {OPERATIONS_MAX}"
            ));
        }
        Ok(workload)
    }

    /// How many operations the workload expands to (saturating).
    pub fn count(&self) -> usize {
        self.ops
            .iter()
            .map(|op| {
                op.domains
                    .iter()
                    .fold(1usize, |n, d| n.saturating_mul(*d as usize))
            })
            .fold(0usize, usize::saturating_add)
    }

    /// Every operation as the payload the core sees, kind by kind and
    /// arguments in lexicographic order.
    pub fn operations(&self) -> Vec<Payload> {
        let mut out = Vec::new();
        for (kind, op) in self.ops.iter().enumerate() {
            let mut args = vec![0u8; op.domains.len()];
            loop {
                let mut bytes = vec![kind as u8];
                bytes.extend_from_slice(&args);
                out.push(Payload::new(&bytes).expect("arguments fit, checked by parse"));
                // The next argument vector, last argument fastest.
                let Some(at) = (0..args.len()).rev().find(|&i| args[i] + 1 < op.domains[i]) else {
                    break;
                };
                args[at] += 1;
                args[at + 1..].fill(0);
            }
        }
        out
    }

    /// An operation's payload as text, e.g. `put(1,0)`; its hex bytes if it
    /// is not one of the workload's.
    pub fn describe(&self, payload: &[u8]) -> String {
        let known = payload.split_first().and_then(|(kind, args)| {
            let op = self.ops.get(*kind as usize)?;
            let fits = args.len() == op.domains.len()
                && args
                    .iter()
                    .zip(&op.domains)
                    .all(|(arg, domain)| arg < domain);
            fits.then(|| {
                let args: Vec<String> = args.iter().map(u8::to_string).collect();
                format!("{}({})", op.name, args.join(","))
            })
        });
        known.unwrap_or_else(|| crate::core::hex::hex(payload))
    }
}

/// The `workload=` text of the workload.
impl fmt::Display for Workload {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (index, op) in self.ops.iter().enumerate() {
            if index > 0 {
                f.write_str(",")?;
            }
            f.write_str(&op.name)?;
            for domain in &op.domains {
                write!(f, ":{domain}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_workload_expands_to_every_argument_vector() {
        let workload = Workload::parse("put:2:3,get:2,noop").unwrap();
        let ops = workload.operations();
        assert_eq!(workload.count(), 2 * 3 + 2 + 1);
        assert_eq!(ops.len(), workload.count());
        let texts: Vec<String> = ops
            .iter()
            .map(|p| workload.describe(p.as_bytes()))
            .collect();
        assert_eq!(
            texts,
            [
                "put(0,0)", "put(0,1)", "put(0,2)", "put(1,0)", "put(1,1)", "put(1,2)", "get(0)",
                "get(1)", "noop()"
            ]
        );
        assert_eq!(ops[4].as_bytes(), [0, 1, 1]);
        assert_eq!(workload.to_string(), "put:2:3,get:2,noop");
        assert_eq!(workload.describe(&[1, 9]), "0109");
    }

    #[test]
    fn bad_workloads_are_explained() {
        for (text, why) in [
            ("put:0", "domain is a size from 1 to 255"),
            ("put:x", "domain is a size from 1 to 255"),
            ("", "an operation is a name"),
            ("p-t:2", "an operation is a name"),
            ("big:255:255", "expands to at most 1024"),
        ] {
            let error = Workload::parse(text).unwrap_err();
            assert!(error.contains(why), "{text}: {error}");
        }
    }
}
