//! A path through a model's state graph as the explorer's URLs carry it:
//! `3.0.1` is initial state 3, then its first enabled action (0), then the
//! second action enabled there (1). Indices count enabled actions only, in
//! the model's own order, so a path names the same states in every run.

use std::fmt;

/// Most steps a path may take: every page walks its path again from the
/// initial state, so this bounds the work one request can ask for.
pub const PATH_STEPS_MAX: usize = 10_000;

/// Most digits of one index (indices are below 10^9).
const INDEX_DIGITS_MAX: usize = 9;

/// An initial state and the enabled actions taken from it, by index.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TracePath {
    /// Index of the initial state.
    pub init: usize,
    /// Index, among the actions enabled at each step, of the one taken.
    pub steps: Vec<usize>,
}

impl TracePath {
    /// The path that stays at initial state `init`.
    pub fn at_initial(init: usize) -> TracePath {
        TracePath {
            init,
            steps: Vec::new(),
        }
    }

    /// Parses `3.0.1`; anything else (empty parts, signs, spaces, more than
    /// [`PATH_STEPS_MAX`] steps, an index of more than nine digits) is an
    /// error saying what is wrong.
    pub fn parse(text: &str) -> Result<TracePath, String> {
        let mut indices = Vec::new();
        for (position, part) in text.split('.').enumerate() {
            if position > PATH_STEPS_MAX {
                return Err(format!("a path has at most {PATH_STEPS_MAX} steps"));
            }
            if part.is_empty()
                || part.len() > INDEX_DIGITS_MAX
                || !part.bytes().all(|byte| byte.is_ascii_digit())
            {
                return Err(format!(
                    "`{}` is not a path: use indices separated by dots, e.g. 0.2.1",
                    shorten(text)
                ));
            }
            indices.push(part.parse().expect("at most nine digits"));
        }
        let init = indices.remove(0);
        Ok(TracePath {
            init,
            steps: indices,
        })
    }

    /// This path followed by the enabled action `index`.
    pub fn child(&self, index: usize) -> TracePath {
        let mut steps = self.steps.clone();
        steps.push(index);
        TracePath {
            init: self.init,
            steps,
        }
    }

    /// This path's first `steps` steps.
    pub fn prefix(&self, steps: usize) -> TracePath {
        TracePath {
            init: self.init,
            steps: self.steps[..steps.min(self.steps.len())].to_vec(),
        }
    }

    /// Whether `self` is `other` or the start of it.
    pub fn is_prefix_of(&self, other: &TracePath) -> bool {
        self.init == other.init && other.steps.starts_with(&self.steps)
    }
}

impl fmt::Display for TracePath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.init)?;
        for step in &self.steps {
            write!(f, ".{step}")?;
        }
        Ok(())
    }
}

/// `text`, cut to 40 characters for an error message.
fn shorten(text: &str) -> String {
    let mut chars = text.chars();
    let head: String = chars.by_ref().take(40).collect();
    if chars.next().is_some() {
        format!("{head}...")
    } else {
        head
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_back() {
        let path = TracePath::parse("3.0.12").unwrap();
        assert_eq!(path.init, 3);
        assert_eq!(path.steps, vec![0, 12]);
        assert_eq!(path.to_string(), "3.0.12");
        assert_eq!(TracePath::parse("0").unwrap(), TracePath::at_initial(0));
        assert_eq!(path.child(4).to_string(), "3.0.12.4");
        assert_eq!(path.prefix(1).to_string(), "3.0");
        assert!(path.prefix(1).is_prefix_of(&path) && !path.child(1).is_prefix_of(&path));
    }

    #[test]
    fn refuses_malformed_paths() {
        for bad in [
            "",
            ".",
            "1.",
            ".1",
            "1..2",
            "-1",
            "+1",
            "1 .2",
            "a",
            "1.x",
            "0x1",
            "1234567890",
        ] {
            assert!(TracePath::parse(bad).is_err(), "{bad:?}");
        }
        let long = vec!["0"; PATH_STEPS_MAX + 2].join(".");
        assert!(TracePath::parse(&long).is_err());
        let longest = vec!["0"; PATH_STEPS_MAX + 1].join(".");
        assert_eq!(
            TracePath::parse(&longest).unwrap().steps.len(),
            PATH_STEPS_MAX
        );
    }
}
