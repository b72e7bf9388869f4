//! Commands that run cores in this process (`validate`, `corpus`) run as
//! `check` runs a World: in a supervised child, this program started again
//! with the same arguments.

use std::time::Duration;

use cmc_world::supervise::{self, Role};

use crate::status::{Status, EXIT_USAGE};

/// Runs `command` in a supervised child that appends what goes to standard
/// output to the `String` it is given and sends it with its exit code; a
/// core that crashes, exits, breaks its memory contract or runs longer
/// than `step_timeout` seconds in one call is a named fault (exit 2).
/// `program` names the program in the child's error line.
pub fn run_supervised(
    program: &str,
    step_timeout: f64,
    command: impl FnOnce(&mut String) -> Result<Status, String>,
) -> Result<Status, String> {
    match cmc_world::supervise::child_from_env()? {
        Some(Role::Check) => {
            let mut out = String::new();
            let code = match command(&mut out) {
                Ok(status) => status.exit_code(),
                Err(message) => {
                    eprintln!("{program}: error: {message}");
                    EXIT_USAGE
                }
            };
            cmc_world::supervise::finish(i32::from(code), out.as_bytes())
        }
        Some(Role::Explain) => Err("this command has no step to explain".into()),
        None => {
            let supervision = supervise::Supervision {
                call_timeout: seconds(step_timeout, "--step-timeout")?,
                threads: 1,
                interrupt: None,
            };
            Ok(Status::Exit(supervise::command_supervised(&supervision)))
        }
    }
}

/// `value` seconds as a duration, or an error naming `flag`.
pub fn seconds(value: f64, flag: &str) -> Result<Duration, String> {
    Duration::try_from_secs_f64(value).map_err(|_| format!("{flag} takes a number of seconds"))
}
