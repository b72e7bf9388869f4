//! Schedules: the thread chosen at every step, written as `0,0,1,0,1`. A schedule replays an
//! execution exactly (given deterministic code).

use std::fmt;
use std::str::FromStr;

/// The sequence of threads chosen at each step of one execution.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Schedule(pub Vec<usize>);

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, t) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{t}")?;
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
            "invalid schedule: item {} ({:?}) is not a thread id; expected comma-separated numbers like \"0,0,1\"",
            self.position, self.item
        )
    }
}

impl std::error::Error for ScheduleParseError {}

impl FromStr for Schedule {
    type Err = ScheduleParseError;

    /// Parses `0,0,1` (spaces allowed); the empty string is the empty schedule.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.trim().is_empty() {
            return Ok(Schedule(Vec::new()));
        }
        s.split(',')
            .enumerate()
            .map(|(position, item)| {
                item.trim()
                    .parse::<usize>()
                    .map_err(|_| ScheduleParseError {
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
        let s: Schedule = "0, 0,1,2".parse().unwrap();
        assert_eq!(s.0, vec![0, 0, 1, 2]);
        assert_eq!(s.to_string(), "0,0,1,2");
        assert_eq!("".parse::<Schedule>().unwrap().0, Vec::<usize>::new());
    }

    #[test]
    fn rejects_garbage() {
        let e = "0,x".parse::<Schedule>().unwrap_err();
        assert_eq!(e.position, 1);
    }
}
