//! The replay file: a versioned text format for one trace.
//!
//! ```text
//! # comments and blank lines are ignored
//! cmc-replay 2              <- format and version, first line that is not a comment
//! model two-phase           <- the model's name
//! param RM=3                <- one line per parameter, in the model's order
//! setting max-depth=12      <- one line per search setting that can change a verdict
//! violates NoRMCommitted    <- optional: the property the trace violates
//! init 0                    <- index of the initial state
//! action TMCommit           <- one line per step: the action's text
//! end                       <- required, so a truncated file is detected
//! ```
//!
//! Actions are named by their [`cmc_model::Model::format_action`] text, so a
//! file stays readable and can be written by hand. Since version 2 every
//! name and value is escaped ([`escape`]): a backslash is `\\`, a line
//! break `\n`, other control characters and spaces at either end `\u{HEX}`,
//! so no text (a core's name, a path) can break a line or add one. Version 1
//! files (no escapes, no `setting` lines) are still read.

use std::fmt::{self, Write};

use cmc_model::{Model, ModelParam};

use crate::Counterexample;

/// How the comment that opens a replay file starts: the program that wrote
/// it follows, then `:`.
pub const REPLAY_WRITTEN_BY: &str = "# written by ";

/// The version of the format this build writes (it also reads version 1).
pub const REPLAY_FORMAT_VERSION: u32 = 2;

/// Longest line a replay file may have, in bytes.
pub const REPLAY_LINE_MAX_BYTES: usize = 1 << 16;

/// `text` with backslashes, line breaks, control characters and spaces at either
/// end escaped, so that it fits on one line of a replay file and reads back
/// unchanged through [`unescape`].
pub fn escape(text: &str) -> String {
    let last = text.chars().count().saturating_sub(1);
    let mut escaped = String::with_capacity(text.len());
    for (index, c) in text.chars().enumerate() {
        match c {
            '\\' => escaped.push_str("\\\\"),
            '\n' => escaped.push_str("\\n"),
            c if c.is_control() || (c.is_whitespace() && (index == 0 || index == last)) => {
                let _ = write!(escaped, "\\u{{{:x}}}", c as u32);
            }
            c => escaped.push(c),
        }
    }
    escaped
}

/// The text that [`escape`] turned into `escaped`; `Err` names the bad escape.
pub fn unescape(escaped: &str) -> Result<String, String> {
    let mut text = String::with_capacity(escaped.len());
    let mut chars = escaped.chars();
    while let Some(c) = chars.next() {
        if c != '\\' {
            text.push(c);
            continue;
        }
        match chars.next() {
            Some('\\') => text.push('\\'),
            Some('n') => text.push('\n'),
            Some('u') => {
                let rest = chars.as_str();
                let code = rest
                    .strip_prefix('{')
                    .and_then(|rest| rest.split_once('}'))
                    .filter(|(hex, _)| (1..=6).contains(&hex.len()))
                    .and_then(|(hex, _)| u32::from_str_radix(hex, 16).ok())
                    .and_then(char::from_u32)
                    .ok_or_else(|| {
                        format!(
                            "bad escape `\\u{}`: expected \\u{{HEX}}",
                            rest.chars().take(8).collect::<String>()
                        )
                    })?;
                text.push(code);
                let skip = rest.find('}').map_or(0, |at| at + 1);
                chars = rest[skip..].chars();
            }
            Some(other) => {
                return Err(format!("bad escape `\\{other}` (use \\\\ for a backslash)"))
            }
            None => {
                return Err("a backslash at the end of the line (use \\\\ for a backslash)".into())
            }
        }
    }
    Ok(text)
}

/// Why a replay file could not be read or replayed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayError {
    /// The 1-based line the problem is on, when there is one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl ReplayError {
    /// An error at `line`.
    pub fn at(line: usize, message: impl Into<String>) -> ReplayError {
        ReplayError {
            line: Some(line),
            message: message.into(),
        }
    }
}

impl fmt::Display for ReplayError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "line {line}: {}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ReplayError {}

/// A parsed replay file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplayFile {
    /// The model's name.
    pub model: String,
    /// The model's parameters.
    pub params: Vec<ModelParam>,
    /// The search settings that can change a verdict, as `NAME` or
    /// `NAME=VALUE` (e.g. `no-deadlock`, `max-depth=12`); see
    /// [`crate::SearchOptions::verdict_settings`].
    pub settings: Vec<String>,
    /// The property the trace is said to violate.
    pub violates: Option<String>,
    /// Index of the initial state, and its line.
    pub init: (usize, usize),
    /// Each step's action text, with its line.
    pub actions: Vec<(usize, String)>,
    /// Line of the `model` line (for errors about the model).
    pub model_line: usize,
}

impl ReplayFile {
    /// The replay file of `counterexample`, a trace of `model` that violates
    /// `violates`.
    pub fn from_counterexample<M: Model>(
        model: &M,
        counterexample: &Counterexample<M>,
        violates: Option<&str>,
    ) -> ReplayFile {
        ReplayFile {
            model: model.name(),
            params: model.params(),
            settings: Vec::new(),
            violates: violates.map(str::to_string),
            init: (0, counterexample.init_index),
            actions: counterexample
                .steps
                .iter()
                .filter_map(|step| step.action.as_ref())
                .map(|action| (0, model.format_action(action)))
                .collect(),
            model_line: 0,
        }
    }

    /// The file's text, as `cmc` writes it.
    pub fn to_text(&self) -> String {
        self.to_text_written_by("cmc")
    }

    /// The file's text, opened by one comment naming `program` (which knows
    /// the file's model and cores) as the one that replays it.
    pub fn to_text_written_by(&self, program: &str) -> String {
        let mut text = String::new();
        let _ = writeln!(
            text,
            "{REPLAY_WRITTEN_BY}{program}: run it again with `{program} replay FILE`"
        );
        let _ = writeln!(text, "cmc-replay {REPLAY_FORMAT_VERSION}");
        let _ = writeln!(text, "model {}", escape(&self.model));
        for param in &self.params {
            // `=` ends the name: a name holding one is kept apart by `\u{3d}`.
            let name = escape(&param.name).replace('=', "\\u{3d}");
            let _ = writeln!(text, "param {name}={}", escape(&param.value));
        }
        for setting in &self.settings {
            let _ = writeln!(text, "setting {}", escape(setting));
        }
        if let Some(property) = &self.violates {
            let _ = writeln!(text, "violates {}", escape(property));
        }
        let _ = writeln!(text, "init {}", self.init.1);
        for (_, action) in &self.actions {
            let _ = writeln!(text, "action {}", escape(action));
        }
        let _ = writeln!(text, "end");
        text
    }

    /// Parses `text`; every problem names its line.
    pub fn parse(text: &str) -> Result<ReplayFile, ReplayError> {
        let mut lines = text
            .lines()
            .enumerate()
            .map(|(index, line)| (index + 1, line.trim()))
            .filter(|(_, line)| !line.is_empty() && !line.starts_with('#'));
        let (line, header) = lines.next().ok_or_else(|| ReplayError {
            line: None,
            message: format!(
                "the file is empty: a replay file starts with `cmc-replay {REPLAY_FORMAT_VERSION}`"
            ),
        })?;
        let escaped = match header.strip_prefix("cmc-replay ").map(str::trim) {
            Some("1") => false,
            Some("2") => true,
            Some(version) => {
                return Err(ReplayError::at(
                    line,
                    format!(
                        "replay format version {} is not supported (this cmc reads versions 1 and {REPLAY_FORMAT_VERSION})",
                        version.chars().take(20).collect::<String>()
                    ),
                ))
            }
            None => {
                return Err(ReplayError::at(
                    line,
                    format!(
                        "expected `cmc-replay {REPLAY_FORMAT_VERSION}`, found `{}`: this is not a cmc replay file",
                        header.chars().take(40).collect::<String>()
                    ),
                ))
            }
        };
        let mut model = None;
        let mut params = Vec::new();
        let mut settings = Vec::new();
        let mut violates = None;
        let mut init = None;
        let mut actions = Vec::new();
        let mut ended = false;
        for (line, content) in lines {
            if ended {
                return Err(ReplayError::at(line, "text after `end`"));
            }
            if content.len() > REPLAY_LINE_MAX_BYTES {
                return Err(ReplayError::at(
                    line,
                    format!("the line is longer than {REPLAY_LINE_MAX_BYTES} bytes"),
                ));
            }
            let (keyword, rest) = content.split_once(' ').unwrap_or((content, ""));
            let rest = rest.trim();
            let text = |raw: &str| -> Result<String, ReplayError> {
                if escaped {
                    unescape(raw).map_err(|problem| ReplayError::at(line, problem))
                } else {
                    Ok(raw.to_string())
                }
            };
            let needs_model = |what: &str| -> Result<(), ReplayError> {
                if model.is_none() {
                    Err(ReplayError::at(
                        line,
                        format!("`{what}` before the `model` line"),
                    ))
                } else {
                    Ok(())
                }
            };
            match keyword {
                "model" if model.is_some() => {
                    return Err(ReplayError::at(line, "a second `model` line"))
                }
                "model" if rest.is_empty() => {
                    return Err(ReplayError::at(line, "`model` needs the model's name"))
                }
                "model" => model = Some((line, text(rest)?)),
                "param" => {
                    needs_model("param")?;
                    let (name, value) = rest.split_once('=').ok_or_else(|| {
                        ReplayError::at(line, format!("expected `param NAME=VALUE`, found `param {rest}`"))
                    })?;
                    params.push(ModelParam::new(text(name.trim())?, text(value.trim())?));
                }
                "setting" if escaped && !rest.is_empty() => settings.push(text(rest)?),
                "setting" if escaped => {
                    return Err(ReplayError::at(line, "`setting` needs NAME or NAME=VALUE"))
                }
                "violates" => violates = Some(text(rest)?),
                "init" => {
                    needs_model("init")?;
                    if init.is_some() {
                        return Err(ReplayError::at(line, "a second `init` line"));
                    }
                    let index = rest.parse::<usize>().map_err(|_| {
                        ReplayError::at(line, format!("`init` needs a state index, found `{rest}`"))
                    })?;
                    init = Some((line, index));
                }
                "action" => {
                    if init.is_none() {
                        return Err(ReplayError::at(line, "`action` before the `init` line"));
                    }
                    if rest.is_empty() {
                        return Err(ReplayError::at(line, "`action` needs the action's text"));
                    }
                    actions.push((line, text(rest)?));
                }
                "end" => ended = true,
                other => {
                    return Err(ReplayError::at(
                        line,
                        format!(
                            "unknown keyword `{}` (expected model, param, setting, violates, init, action or end)",
                            other.chars().take(40).collect::<String>()
                        ),
                    ))
                }
            }
        }
        let (model_line, model) = model.ok_or_else(|| ReplayError {
            line: None,
            message: "the file has no `model` line".into(),
        })?;
        let init = init.ok_or_else(|| ReplayError {
            line: None,
            message: "the file has no `init` line".into(),
        })?;
        if !ended {
            return Err(ReplayError {
                line: None,
                message: "the file ends without `end`: it is truncated".into(),
            });
        }
        Ok(ReplayFile {
            model,
            params,
            settings,
            violates,
            init,
            actions,
            model_line,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = "# a trace\ncmc-replay 1\nmodel die-hard\nparam GOAL=4\nviolates NotSolved\ninit 0\naction FillBig\naction BigToSmall\nend\n";

    #[test]
    fn a_written_file_parses_back() {
        let file = ReplayFile::parse(GOOD).unwrap();
        assert_eq!(file.model, "die-hard");
        assert_eq!(file.params, vec![ModelParam::new("GOAL", "4")]);
        assert_eq!(file.violates.as_deref(), Some("NotSolved"));
        assert_eq!(file.init, (6, 0));
        assert_eq!(file.actions[1], (8, "BigToSmall".to_string()));
        let again = ReplayFile::parse(&file.to_text()).unwrap();
        assert_eq!(again.actions.len(), 2);
        assert_eq!(again.params, file.params);
    }

    #[test]
    fn malformed_files_name_the_line() {
        let cases = [
            ("", None, "empty"),
            ("hello\n", Some(1), "not a cmc replay file"),
            ("cmc-replay 9\n", Some(1), "version 9"),
            (
                "cmc-replay 1\nmodel m\ninit x\nend\n",
                Some(3),
                "state index",
            ),
            (
                "cmc-replay 1\nmodel m\ninit 0\nfrobnicate\nend\n",
                Some(4),
                "unknown keyword",
            ),
            (
                "cmc-replay 1\nmodel m\nparam RM\ninit 0\nend\n",
                Some(3),
                "NAME=VALUE",
            ),
            (
                "cmc-replay 1\nmodel m\ninit 0\naction A\n",
                None,
                "truncated",
            ),
            (
                "cmc-replay 1\nmodel m\naction A\nend\n",
                Some(3),
                "before the `init`",
            ),
            ("cmc-replay 1\ninit 0\nend\n", Some(2), "before the `model`"),
        ];
        for (text, line, needle) in cases {
            let error = ReplayFile::parse(text).unwrap_err();
            assert_eq!(error.line, line, "{text:?}: {error}");
            assert!(error.message.contains(needle), "{text:?}: {error}");
        }
    }

    #[test]
    fn names_with_line_breaks_and_backslashes_read_back_unchanged() {
        let file = ReplayFile {
            model: "world(evil\nend)".into(),
            params: vec![
                ModelParam::new("core", "/tmp/x\nparam RM=9\r\\ "),
                ModelParam::new("a=b", " lead"),
            ],
            settings: vec!["max-depth=3".into(), "no-deadlock".into()],
            violates: Some("Bad\nend".into()),
            init: (0, 2),
            actions: vec![(0, "send \\u{41} \u{1b}[2J".into())],
            model_line: 0,
        };
        let text = file.to_text();
        assert_eq!(text.lines().filter(|l| *l == "end").count(), 1, "{text}");
        assert!(!text.lines().any(|l| l.starts_with("param RM")), "{text}");
        let again = ReplayFile::parse(&text).unwrap();
        assert_eq!(again.model, file.model);
        assert_eq!(again.params, file.params);
        assert_eq!(again.settings, file.settings);
        assert_eq!(again.violates, file.violates);
        assert_eq!(again.actions[0].1, file.actions[0].1);
    }

    #[test]
    fn bad_escapes_and_long_lines_name_the_line() {
        let long = format!(
            "cmc-replay 2\nmodel {}\n",
            "m".repeat(REPLAY_LINE_MAX_BYTES)
        );
        let cases = [
            ("cmc-replay 2\nmodel a\\q\nend\n", 2, "bad escape"),
            ("cmc-replay 2\nmodel a\\u{110000}\nend\n", 2, "bad escape"),
            ("cmc-replay 2\nmodel a\\u{41\nend\n", 2, "bad escape"),
            ("cmc-replay 2\nmodel a\\\nend\n", 2, "backslash at the end"),
            ("cmc-replay 2\nmodel m\nsetting\nend\n", 3, "NAME=VALUE"),
            (long.as_str(), 2, "longer than"),
        ];
        for (text, line, needle) in cases {
            let error = ReplayFile::parse(text).unwrap_err();
            assert_eq!(error.line, Some(line), "{error}");
            assert!(error.message.contains(needle), "{error}");
        }
        // Version 1 files are read without escapes.
        let old = ReplayFile::parse("cmc-replay 1\nmodel a\\q\ninit 0\nend\n").unwrap();
        assert_eq!(old.model, "a\\q");
    }
}
