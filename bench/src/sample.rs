//! What one measured run reports, and the one-line text form in which a
//! child process hands it to the parent.

use std::time::Duration;

/// The result of one run of a job.
///
/// For a model check, `distinct`, `generated` and `depth` are the checker's
/// counts (in TLC's conventions: the initial states are generated states
/// and depth 1). For a micro-benchmark, `generated` is the number of
/// operations timed and `distinct` the number of them that were new.
#[derive(Debug, Clone, PartialEq)]
pub struct Sample {
    /// Distinct states found.
    pub distinct: u64,
    /// States generated (or operations timed).
    pub generated: u64,
    /// BFS levels.
    pub depth: u64,
    /// Wall time of the timed part.
    pub wall: Duration,
    /// Bytes the visited table occupied (cmc only; 0 when not known).
    pub table_bytes: u64,
    /// Peak resident set of the process that ran the job.
    pub peak_rss_bytes: u64,
    /// `pass`, `violated`, `vacuous`, `error` (or `ok` for micro-benchmarks).
    pub verdict: String,
}

/// The prefix of the line a child prints its sample on.
const LINE_PREFIX: &str = "cmc-bench-sample";

impl Sample {
    /// The sample as one line of `key=value` words.
    pub fn to_line(&self) -> String {
        format!(
            "{LINE_PREFIX} distinct={} generated={} depth={} wall_ns={} table_bytes={} \
             peak_rss_bytes={} verdict={}",
            self.distinct,
            self.generated,
            self.depth,
            self.wall.as_nanos(),
            self.table_bytes,
            self.peak_rss_bytes,
            self.verdict
        )
    }

    /// Finds and reads the sample line in a child's output.
    pub fn from_output(output: &str) -> Result<Sample, String> {
        let line = output
            .lines()
            .find_map(|line| line.strip_prefix(LINE_PREFIX))
            .ok_or_else(|| format!("no `{LINE_PREFIX}` line in the output: {output:?}"))?;
        let field = |key: &str| -> Result<&str, String> {
            line.split_whitespace()
                .find_map(|word| word.strip_prefix(key)?.strip_prefix('='))
                .ok_or_else(|| format!("sample line lacks `{key}`: {line:?}"))
        };
        let number = |key: &str| -> Result<u64, String> {
            field(key)?
                .parse()
                .map_err(|problem| format!("`{key}` in {line:?}: {problem}"))
        };
        Ok(Sample {
            distinct: number("distinct")?,
            generated: number("generated")?,
            depth: number("depth")?,
            wall: Duration::from_nanos(number("wall_ns")?),
            table_bytes: number("table_bytes")?,
            peak_rss_bytes: number("peak_rss_bytes")?,
            verdict: field("verdict")?.to_string(),
        })
    }

    /// A run that failed after `wall`: no counts, verdict `error`.
    pub fn failed(wall: Duration) -> Sample {
        Sample {
            distinct: 0,
            generated: 0,
            depth: 0,
            wall,
            table_bytes: 0,
            peak_rss_bytes: 0,
            verdict: "error".into(),
        }
    }

    /// Distinct states per second of wall time.
    pub fn distinct_per_second(&self) -> f64 {
        self.distinct as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Generated states (operations) per second of wall time.
    pub fn generated_per_second(&self) -> f64 {
        self.generated as f64 / self.wall.as_secs_f64().max(1e-9)
    }

    /// Wall nanoseconds per generated state (operation).
    pub fn nanos_per_generated(&self) -> f64 {
        self.wall.as_nanos() as f64 / self.generated.max(1) as f64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_survives_its_line() {
        let sample = Sample {
            distinct: 288,
            generated: 1_146,
            depth: 11,
            wall: Duration::from_nanos(123_456),
            table_bytes: 16 << 20,
            peak_rss_bytes: 9 << 20,
            verdict: "pass".into(),
        };
        let output = format!("noise\n{}\n", sample.to_line());
        assert_eq!(Sample::from_output(&output).unwrap(), sample);
        assert!(Sample::from_output("nothing").is_err());
    }
}
