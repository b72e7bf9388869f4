//! Schedules: the thread chosen at every step, written as `0,0,1,0,1`. In weak-memory mode a
//! load that read an older store than the latest carries it: `1~2` is thread 1 reading the
//! store two before the latest it could read. A schedule replays an execution exactly
//! (given deterministic code).

use std::fmt;
use std::str::FromStr;

/// What the scheduler decided at one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Choice {
    /// The thread that ran.
    pub thread: usize,
    /// For a weak-memory load: how many stores back from the latest one it read (0 otherwise).
    pub stale: u32,
}

/// The sequence of choices made at each step of one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule(pub Vec<Choice>);

impl Schedule {
    /// The schedule of an executed trace.
    pub(crate) fn of(trace: &[crate::rt::Event]) -> Self {
        Schedule(
            trace
                .iter()
                .map(|e| Choice {
                    thread: e.thread,
                    stale: e.stale,
                })
                .collect(),
        )
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, c) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{}", c.thread)?;
            if c.stale > 0 {
                write!(f, "~{}", c.stale)?;
            }
        }
        Ok(())
    }
}

/// Error parsing a schedule string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScheduleParseError {
    /// The offending item.
    pub item: String,
    /// Its 0-based position.
    pub position: usize,
}

impl fmt::Display for ScheduleParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid schedule: item {} ({:?}) is not a thread id (optionally ~stale); expected comma-separated items like \"0,0,1~1\"",
            self.position, self.item
        )
    }
}

impl std::error::Error for ScheduleParseError {}

fn parse_choice(item: &str) -> Option<Choice> {
    let (thread, stale) = match item.trim().split_once('~') {
        Some((t, s)) => (t.trim().parse().ok()?, s.trim().parse().ok()?),
        None => (item.trim().parse().ok()?, 0),
    };
    Some(Choice { thread, stale })
}

impl FromStr for Schedule {
    type Err = ScheduleParseError;

    /// Parses `0,0,1~1` (spaces allowed); the empty string is the empty schedule.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().is_empty() {
            return Ok(Schedule(Vec::new()));
        }
        s.split(',')
            .enumerate()
            .map(|(position, item)| {
                parse_choice(item).ok_or_else(|| ScheduleParseError {
                    item: item.to_string(),
                    position,
                })
            })
            .collect::<Result<Vec<_>, _>>()
            .map(Schedule)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips() {
        let s: Schedule = "0, 0,1,2~3".parse().unwrap();
        let threads: Vec<usize> = s.0.iter().map(|c| c.thread).collect();
        assert_eq!(threads, vec![0, 0, 1, 2]);
        assert_eq!(s.0[3].stale, 3);
        assert_eq!(s.to_string(), "0,0,1,2~3");
        assert_eq!("".parse::<Schedule>().unwrap().0, Vec::<Choice>::new());
    }

    #[test]
    fn rejects_garbage() {
        let e = "0,x".parse::<Schedule>().unwrap_err();
        assert_eq!(e.position, 1);
        assert_eq!("1~".parse::<Schedule>().unwrap_err().position, 0);
        assert_eq!("0,1~-1".parse::<Schedule>().unwrap_err().position, 1);
    }
}
