//! The documents match the tool: every `cmc` (and front-end `mycheck`)
//! command line in the project's Markdown documents and in `cmc --help`
//! parses as the command line it shows; the command reference's lines
//! listed in [`RUN`] run with the exit code they are documented with; and
//! the shown sessions (`$ cmc ...` followed by its output) of the README's
//! tour and the command reference print what they show
//! (`tests/markdown/mod.rs` reads the blocks).

mod common;
mod markdown;

use std::path::{Path, PathBuf};

use clap::Parser;
use common::{cmc, repository, text};

/// The Markdown documents of the project: the READMEs, ARCHITECTURE.md and
/// the pages of `docs/`.
fn documents() -> Vec<PathBuf> {
    let root = repository();
    let mut found = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    for folder in ["crates", "examples"] {
        for entry in std::fs::read_dir(root.join(folder)).unwrap() {
            let readme = entry.unwrap().path().join("README.md");
            if readme.is_file() {
                found.push(readme);
            }
        }
    }
    for entry in std::fs::read_dir(root.join("docs")).unwrap() {
        let page = entry.unwrap().path();
        if page.extension().is_some_and(|extension| extension == "md") {
            found.push(page);
        }
    }
    found.sort();
    found
}

/// `path` relative to the repository, for messages.
fn name(path: &Path) -> String {
    let root = repository().canonicalize().unwrap();
    let path = path.canonicalize().unwrap();
    path.strip_prefix(&root)
        .unwrap_or(&path)
        .display()
        .to_string()
}

/// Why `line` is not a command line `cmc` accepts, if it is not.
fn parse_error(line: &str) -> Option<String> {
    parse_error_kind(line).map(|(_, error)| error)
}

/// Why `line` is not a command line `cmc` accepts, with clap's kind of error.
fn parse_error_kind(line: &str) -> Option<(clap::error::ErrorKind, String)> {
    let mut words = markdown::words(line);
    // A front end (`mycheck`) has cmc's grammar.
    words[0] = "cmc".into();
    cmc_cli::args::Cli::try_parse_from(&words)
        .err()
        .map(|error| (error.kind(), error.to_string()))
}

#[test]
fn every_command_line_of_the_documents_parses() {
    let mut checked = 0;
    let mut wrong = Vec::new();
    for path in documents() {
        let markdown = std::fs::read_to_string(&path).unwrap();
        for program in ["cmc", "mycheck"] {
            for (origin, line) in markdown::command_lines(&name(&path), &markdown, program) {
                checked += 1;
                if let Some(error) = parse_error(&line) {
                    wrong.push(format!("{origin}: `{line}`: {error}"));
                }
            }
        }
    }
    assert!(checked >= 50, "only {checked} command lines found");
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The `cmc ...` examples quoted in backticks in `text`.
fn quoted_commands(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter(|quoted| quoted.starts_with("cmc "))
        .map(str::to_string)
        .collect()
}

#[test]
fn every_command_line_quoted_in_the_help_parses() {
    let mut command = <cmc_cli::args::Cli as clap::CommandFactory>::command();
    let mut helps = vec![command.render_long_help().to_string()];
    for sub in command.get_subcommands_mut() {
        helps.push(sub.render_long_help().to_string());
    }
    let quoted: Vec<String> = helps
        .iter()
        .flat_map(|help| quoted_commands(help))
        .collect();
    assert!(!quoted.is_empty(), "the help quotes command lines");
    // A quoted command may name a command without its arguments
    // ("see `cmc list`", "run it with `cmc replay`"); anything else it says
    // must be right.
    let wrong: Vec<String> = quoted
        .iter()
        .filter_map(|line| match parse_error_kind(line) {
            Some((clap::error::ErrorKind::MissingRequiredArgument, _)) | None => None,
            Some((_, error)) => Some(format!("`{line}`: {error}")),
        })
        .collect();
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// Command lines of the `cmc` block of `docs/cli.md` that run here in
/// seconds, with the exit code its "Exit codes" give them (in an empty directory,
/// in this order: the replay reads the trace the check before wrote). The
/// others (checkpoints of big models, campaigns of a million walks, servers,
/// files of your own) are held to the grammar only, above.
const RUN: &[(&str, i32)] = &[
    ("cmc list", 0),
    ("cmc check two-phase RM=5", 0),
    ("cmc check two-phase RM=5 --workers 1 --json", 0),
    ("cmc check paxos-commit --dfs --max-depth 20", 0),
    (
        "cmc check die-hard INVARIANTS=NotSolved --simulate --walks 1000 --walk-length 50 --seed 7",
        1,
    ),
    ("cmc replay die-hard.cmc-trace", 1),
    (
        "cmc check die-hard INVARIANTS=NotSolved --report die-hard.html --dump-dot die-hard.dot",
        1,
    ),
    (
        "cmc check --core rust:reqack --nodes 2 requests=2 drops=1",
        0,
    ),
    (
        "cmc check --core rust:reqack --nodes 2 requests=2 drops=1 --coverage",
        0,
    ),
];

/// Runs `line` (a `cmc` command line) with the binary under test in `dir`.
fn run_cmc(line: &str, dir: &Path) -> std::process::Output {
    let words = markdown::words(line);
    let args: Vec<&str> = words[1..].iter().map(String::as_str).collect();
    cmc(&args, dir)
}

#[test]
fn the_command_reference_runs_with_its_documented_exit_codes() {
    let reference = std::fs::read_to_string(repository().join("docs/cli.md")).unwrap();
    let lines: Vec<String> = markdown::command_lines("docs/cli.md", &reference, "cmc")
        .into_iter()
        .map(|(_, line)| line)
        .collect();
    let dir = tempfile::tempdir().unwrap();
    for (line, exit) in RUN {
        assert!(
            lines.iter().any(|shown| shown == line),
            "`{line}` is no longer in docs/cli.md: update RUN"
        );
        let output = run_cmc(line, dir.path());
        let (stdout, stderr) = text(&output);
        assert_eq!(
            output.status.code(),
            Some(*exit),
            "`{line}`:\n{stdout}{stderr}"
        );
    }
}

/// Lines of a shown session that change from run to run (time, speed).
fn varies(line: &str) -> bool {
    line.starts_with("Finished in ")
}

/// The documents that show `cmc` sessions (`$ cmc ...` followed by its
/// output): the README's tour and the command reference.
const SESSION_DOCUMENTS: &[&str] = &["README.md", "docs/cli.md"];

#[test]
fn the_shown_sessions_print_what_they_show() {
    for document in SESSION_DOCUMENTS {
        let sessions = check_sessions(document);
        assert!(sessions >= 2, "{document}: {sessions} sessions found");
    }
}

/// Runs every session shown in `document` in a fresh directory and checks
/// its exit code and the lines it shows; returns how many it ran.
fn check_sessions(document: &str) -> usize {
    let markdown = std::fs::read_to_string(repository().join(document)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut sessions = 0;
    for block in markdown::blocks(&markdown) {
        if block.info != "text" {
            continue;
        }
        for mut command in markdown::console_commands(document, &block) {
            command.expected.retain(|line| !varies(line));
            let output = run_cmc(&command.text, dir.path());
            let (stdout, stderr) = text(&output);
            let shown = format!("{stdout}{stderr}");
            assert_eq!(
                output.status.code(),
                Some(command.exit),
                "{}: `{}`:\n{shown}",
                command.origin,
                command.text
            );
            for line in &command.expected {
                assert!(
                    shown.contains(line.as_str()),
                    "{}: `{}` no longer prints `{line}`:\n{shown}",
                    command.origin,
                    command.text
                );
            }
            sessions += 1;
        }
    }
    sessions
}
