//! Running a job in a child process (a re-execution of this binary), so
//! that every measurement has a fresh heap and its own peak RSS; and
//! keeping the best of several runs.

use std::process::{Command, Stdio};
use std::time::Duration;

use crate::job::Job;
use crate::sample::Sample;

/// The hidden subcommand under which the binary runs one job and prints
/// its sample.
pub const CHILD_SUBCOMMAND: &str = "__run-job";

/// The peak resident set size of this process (`VmHWM`), in bytes.
pub fn peak_rss_bytes() -> Result<u64, String> {
    let status = std::fs::read_to_string("/proc/self/status")
        .map_err(|problem| format!("cannot read /proc/self/status: {problem}"))?;
    let kib = status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().strip_suffix("kB"))
        .and_then(|value| value.trim().parse::<u64>().ok())
        .ok_or("/proc/self/status has no VmHWM line")?;
    Ok(kib * 1024)
}

/// The child side: runs `job`, adds this process's peak RSS (or the one
/// the job measured in a process it ran, if larger), prints the sample line.
pub fn run_as_child(job: Job) -> Result<(), String> {
    let mut sample = job.execute();
    crate::world::remove_built_library();
    sample.peak_rss_bytes = sample.peak_rss_bytes.max(peak_rss_bytes()?);
    println!("{}", sample.to_line());
    Ok(())
}

/// The resources used by every child process this process has waited for
/// (and by theirs).
pub fn children_usage() -> libc::rusage {
    // SAFETY: `getrusage` writes a `rusage` into the zeroed one given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage);
        usage
    }
}

/// CPU time (user and system) of every child process this process has
/// waited for.
fn children_cpu() -> Duration {
    let usage = children_usage();
    let time = |t: libc::timeval| Duration::new(t.tv_sec as u64, t.tv_usec as u32 * 1000);
    time(usage.ru_utime) + time(usage.ru_stime)
}

/// Runs `job` once in a child process and reads its sample, with the CPU
/// time the child used on all its threads (set-up included): on a loaded
/// machine, where a job's wall time depends on how much of the cores it
/// got, the CPU time still says how much work it did.
pub fn run_in_child_with_cpu(job: Job) -> Result<(Sample, Duration), String> {
    let before = children_cpu();
    let sample = run_in_child(job)?;
    Ok((sample, children_cpu().saturating_sub(before)))
}

/// Runs `job` once in a child process and reads its sample.
pub fn run_in_child(job: Job) -> Result<Sample, String> {
    let exe = std::env::current_exe()
        .map_err(|problem| format!("cannot find this program to re-run it: {problem}"))?;
    let output = Command::new(exe)
        .arg(CHILD_SUBCOMMAND)
        .args(job.to_args())
        .stdin(Stdio::null())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|problem| format!("cannot start the child for `{job}`: {problem}"))?;
    if !output.status.success() {
        return Err(format!("the child for `{job}` failed: {}", output.status));
    }
    Sample::from_output(&String::from_utf8_lossy(&output.stdout))
}

/// Runs `job` `runs` times (at least once), each in a fresh child, and
/// keeps the fastest run. Counts must not change between runs.
pub fn best_of(job: Job, runs: usize) -> Result<Sample, String> {
    let mut best: Option<Sample> = None;
    for _ in 0..runs.max(1) {
        let sample = run_in_child(job)?;
        if let Some(previous) = &best {
            if (previous.distinct, previous.generated) != (sample.distinct, sample.generated) {
                return Err(format!(
                    "`{job}` gave different counts on two runs: {} then {} distinct",
                    previous.distinct, sample.distinct
                ));
            }
        }
        if best.as_ref().is_none_or(|b| sample.wall < b.wall) {
            best = Some(sample);
        }
    }
    Ok(best.expect("at least one run"))
}

/// Runs `job` `runs` times (at least once), each in a fresh child, and
/// keeps the run of median wall time (on a shared machine the median is
/// steadier than the best). Counts must not change between runs.
pub fn median_of(job: Job, runs: usize) -> Result<Sample, String> {
    let samples = (0..runs.max(1))
        .map(|_| run_in_child(job))
        .collect::<Result<Vec<Sample>, String>>()?;
    median(job, samples)
}

/// The sample of median wall time among `samples`, runs of `job` (at
/// least one); an error if their counts differ.
pub fn median(job: Job, mut samples: Vec<Sample>) -> Result<Sample, String> {
    let first = samples
        .first()
        .ok_or_else(|| format!("`{job}` never ran"))?;
    let counts = (first.distinct, first.generated);
    if let Some(other) = samples
        .iter()
        .find(|sample| (sample.distinct, sample.generated) != counts)
    {
        return Err(format!(
            "`{job}` gave different counts on two runs: {} then {} distinct",
            counts.0, other.distinct
        ));
    }
    samples.sort_by_key(|sample| sample.wall);
    Ok(samples.swap_remove(samples.len() / 2))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_peak_rss() {
        let bytes = peak_rss_bytes().unwrap();
        assert!(bytes > 100 * 1024, "{bytes}");
    }
}
