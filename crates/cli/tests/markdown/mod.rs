//! Reading the command lines, files and expected outputs out of the
//! project's Markdown documents, so that tests can run them as written.
//!
//! - A fenced block whose info string is `LANG file=PATH` is a file to write.
//! - In a `console` block (and, for command lines only, in `sh`, `text` and
//!   unlabelled blocks), a line starting with `$ ` is a command; a trailing
//!   `# exit N` says the exit code it must give (default 0), and the lines up
//!   to the next command are text its output must contain, line by line.
//! - A line ending in `\` continues on the next one.

#![allow(dead_code)] // each test file uses part of it

use std::path::{Path, PathBuf};

/// A fenced code block: its info string, its text and the line it starts on.
#[derive(Debug)]
pub struct Block {
    pub info: String,
    pub body: String,
    pub line: usize,
}

/// The fenced code blocks of `markdown` (fences at the start of a line).
pub fn blocks(markdown: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<Block> = None;
    for (index, line) in markdown.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block {
                    info: info.trim().to_string(),
                    body: String::new(),
                    line: index + 2,
                })
            }
            (Some(_), Some(rest)) if rest.trim().is_empty() => blocks.extend(open.take()),
            (Some(block), _) => {
                block.body.push_str(line);
                block.body.push('\n');
            }
            (None, None) => {}
        }
    }
    blocks
}

/// The logical lines of `body` (continuations joined), with their line
/// numbers relative to the block.
fn logical_lines(body: &str) -> Vec<(usize, String)> {
    let mut lines = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (index, line) in body.lines().enumerate() {
        let (start, mut text) = pending.take().unwrap_or((index, String::new()));
        match line.trim_end().strip_suffix('\\') {
            Some(head) => {
                text.push_str(head);
                text.push(' ');
                pending = Some((start, text));
            }
            None => {
                text.push_str(line);
                lines.push((start, text));
            }
        }
    }
    lines.extend(pending);
    lines
}

/// A command line with what it must do.
#[derive(Debug, Clone)]
pub struct Command {
    /// The document and line it comes from, for messages.
    pub origin: String,
    /// The command, without its `$ ` and its trailing `# ...` comment.
    pub text: String,
    /// The exit code it must give.
    pub exit: i32,
    /// Lines its output (standard output then standard error) must contain.
    pub expected: Vec<String>,
}

/// `line` without a trailing shell comment (`  # ...` outside quotes).
pub fn strip_comment(line: &str) -> &str {
    let mut quote = None;
    let bytes = line.as_bytes();
    for (index, &byte) in bytes.iter().enumerate() {
        match (quote, byte) {
            (None, b'\'' | b'"') => quote = Some(byte),
            (Some(open), _) if byte == open => quote = None,
            (None, b'#') if index > 0 && bytes[index - 1].is_ascii_whitespace() => {
                return line[..index].trim_end();
            }
            _ => {}
        }
    }
    line.trim_end()
}

/// The exit code a `# exit N` comment on `line` asks for.
fn exit_of(line: &str) -> i32 {
    let comment = &line[strip_comment(line).len()..];
    comment
        .trim()
        .strip_prefix("# exit ")
        .and_then(|code| code.trim().parse().ok())
        .unwrap_or(0)
}

/// The commands of a `console` block, each with its expected output lines
/// (blank lines and `...` are not expected).
pub fn console_commands(document: &str, block: &Block) -> Vec<Command> {
    let mut commands: Vec<Command> = Vec::new();
    for (offset, line) in logical_lines(&block.body) {
        if let Some(command) = line.strip_prefix("$ ") {
            commands.push(Command {
                origin: format!("{document}:{}", block.line + offset),
                text: strip_comment(command).to_string(),
                exit: exit_of(command),
                expected: Vec::new(),
            });
        } else if let Some(last) = commands.last_mut() {
            let expected = line.trim();
            if !expected.is_empty() && expected != "..." {
                last.expected.push(expected.to_string());
            }
        }
    }
    commands
}

/// Every line of a shell-like block of `markdown` that runs `program`
/// (`$ ` prefixes and trailing comments removed), with its origin.
pub fn command_lines(document: &str, markdown: &str, program: &str) -> Vec<(String, String)> {
    let mut found = Vec::new();
    for block in blocks(markdown) {
        if !matches!(block.info.as_str(), "" | "sh" | "console" | "text" | "bash") {
            continue;
        }
        for (offset, line) in logical_lines(&block.body) {
            let line = line.trim_start();
            let line = line.strip_prefix("$ ").unwrap_or(line);
            let command = strip_comment(line);
            if command.split_whitespace().next() == Some(program) {
                found.push((
                    format!("{document}:{}", block.line + offset),
                    command.to_string(),
                ));
            }
        }
    }
    found
}

/// The words of a command line, as a shell without expansions splits them
/// (single and double quotes group).
pub fn words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut quote = None;
    for character in line.chars() {
        match (quote, character) {
            (None, '\'' | '"') => {
                quote = Some(character);
                word.get_or_insert_with(String::new);
            }
            (Some(open), _) if character == open => quote = None,
            (None, _) if character.is_whitespace() => words.extend(word.take()),
            _ => word.get_or_insert_with(String::new).push(character),
        }
    }
    words.extend(word);
    words
}

/// A step of a tutorial: a file to write or a command to run.
#[derive(Debug)]
pub enum Step {
    File { path: PathBuf, body: String },
    Run(Command),
}

/// The steps of a tutorial, in document order.
pub fn steps(document: &str, markdown: &str) -> Vec<Step> {
    let mut steps = Vec::new();
    for block in blocks(markdown) {
        if let Some(path) = block
            .info
            .split_whitespace()
            .find_map(|word| word.strip_prefix("file="))
        {
            steps.push(Step::File {
                path: PathBuf::from(path),
                body: block.body.clone(),
            });
        } else if block.info == "console" {
            steps.extend(
                console_commands(document, &block)
                    .into_iter()
                    .map(Step::Run),
            );
        }
    }
    steps
}

/// Runs `command` with `bash -c` in `dir` with `env`, and checks its exit
/// code and expected output; the error says what differed.
pub fn run(command: &Command, dir: &Path, env: &[(&str, String)]) -> Result<(), String> {
    let output = std::process::Command::new("bash")
        .arg("-c")
        .arg(&command.text)
        .current_dir(dir)
        .envs(env.iter().map(|(name, value)| (*name, value)))
        .output()
        .map_err(|error| format!("{}: cannot run bash: {error}", command.origin))?;
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
    if output.status.code() != Some(command.exit) {
        return Err(format!(
            "{}: `{}` exited with {:?}, the document says {}:\n{text}",
            command.origin,
            command.text,
            output.status.code(),
            command.exit
        ));
    }
    for expected in &command.expected {
        if !text.contains(expected.as_str()) {
            return Err(format!(
                "{}: the output of `{}` lacks the line `{expected}`:\n{text}",
                command.origin, command.text
            ));
        }
    }
    Ok(())
}

/// Runs a tutorial's steps in `dir`: writes its files (calling `written`
/// with each file's path), runs its commands (`cd DIR` moves the following
/// ones), and stops at the first difference.
pub fn run_tutorial(
    document: &str,
    markdown: &str,
    dir: &Path,
    env: &[(&str, String)],
    written: impl Fn(&Path),
) {
    let steps = steps(document, markdown);
    assert!(
        steps.iter().any(|step| matches!(step, Step::Run(_))),
        "{document} has runnable commands"
    );
    let mut cwd = dir.to_path_buf();
    for step in steps {
        match step {
            Step::File { path, body } => {
                let path = cwd.join(path);
                std::fs::create_dir_all(path.parent().unwrap()).unwrap();
                std::fs::write(&path, body).unwrap();
                written(&path);
            }
            Step::Run(command) => match command.text.strip_prefix("cd ") {
                Some(target) => cwd = cwd.join(target.trim()),
                None => run(&command, &cwd, env).unwrap_or_else(|problem| panic!("{problem}")),
            },
        }
    }
}
