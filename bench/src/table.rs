//! The one table a run prints (Markdown, so that it reads in a terminal
//! and pastes into the README as it is).

use crate::analysis::Analysis;
use crate::floor::InsertKind;
use crate::job::{Job, ModelCase, Tool};
use crate::sample::Sample;
use crate::suite::Measured;

const HEADER: [&str; 15] = [
    "model",
    "parameters",
    "tool",
    "workers",
    "distinct",
    "depth",
    "wall s",
    "distinct/s",
    "generated/s",
    "ns/generated",
    "peak RSS MiB",
    "RSS B/distinct",
    "table B/distinct",
    "ratio",
    "check",
];

/// `1234567` as `1,234,567`.
fn thousands(value: u64) -> String {
    let digits = value.to_string();
    let mut out = String::new();
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

fn rate(per_second: f64) -> String {
    thousands(per_second.round() as u64)
}

fn mebibytes(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1024.0 * 1024.0))
}

fn per_distinct(bytes: u64, distinct: u64) -> String {
    if bytes == 0 || distinct == 0 {
        return "–".into();
    }
    format!("{:.1}", bytes as f64 / distinct as f64)
}

/// The columns every measured row shares, from `distinct` to `table B/distinct`.
fn measured_columns(sample: &Sample) -> Vec<String> {
    vec![
        thousands(sample.distinct),
        if sample.depth == 0 {
            "–".into()
        } else {
            sample.depth.to_string()
        },
        format!("{:.3}", sample.wall.as_secs_f64()),
        rate(sample.distinct_per_second()),
        rate(sample.generated_per_second()),
        format!("{:.1}", sample.nanos_per_generated()),
        mebibytes(sample.peak_rss_bytes),
        per_distinct(sample.peak_rss_bytes, sample.distinct),
        per_distinct(sample.table_bytes, sample.distinct),
    ]
}

fn check_ratio(
    analysis: &Analysis<'_>,
    model: ModelCase,
    tool: Tool,
    workers: usize,
    sample: &Sample,
) -> String {
    if tool == Tool::CmcCommand {
        return analysis
            .versus_library(model, workers, sample)
            .map_or("–".into(), |ratio| {
                format!("{ratio:.2}× the library path's distinct states/s")
            });
    }
    if tool != Tool::Cmc {
        return "–".into();
    }
    let mut parts = Vec::new();
    if let Some(ratio) = analysis.versus_stateright(model, sample) {
        parts.push(format!("{ratio:.1}× stateright"));
    }
    if workers == 2 {
        if let Some(speedup) = analysis.two_workers_speedup(model) {
            parts.push(format!("{speedup:.2}× 1 worker"));
        }
    }
    if let Some(ratio) = analysis.versus_specialised(model, sample) {
        parts.push(format!("{ratio:.2}× the specialised BFS's time"));
    }
    if parts.is_empty() {
        "–".into()
    } else {
        parts.join("; ")
    }
}

fn row(analysis: &Analysis<'_>, measured: &Measured) -> Vec<String> {
    let (model, params, tool, workers) = match measured.job {
        Job::Check {
            model,
            tool,
            workers,
        } => (
            model.name().to_string(),
            model.params(),
            tool.name().to_string(),
            workers,
        ),
        Job::Insert {
            fingerprints,
            threads,
            kind,
        } => (
            "floor: visited table".into(),
            format!("{} random fingerprints", thousands(fingerprints)),
            match kind {
                InsertKind::New => "insert (new)".into(),
                InsertKind::Present => "insert (present)".into(),
            },
            threads,
        ),
        Job::Step { rm_count } => (
            "floor: two-phase step".into(),
            format!("RM={rm_count}"),
            "actions+next+encode+fingerprint".into(),
            1,
        ),
        Job::WorldFloor {
            case,
            part,
            threads,
        } => (
            format!("floor: {}", ModelCase::World { case }.name()),
            case.params(),
            part.description().into(),
            threads,
        ),
    };
    let mut cells = vec![model, params, tool, workers.to_string()];
    match &measured.result {
        Err(problem) => {
            cells.extend((0..HEADER.len() - 5).map(|_| "–".to_string()));
            cells.push(format!("FAIL: {problem}"));
        }
        Ok(sample) => {
            cells.extend(measured_columns(sample));
            match measured.job {
                Job::Check {
                    model,
                    tool,
                    workers,
                } => {
                    cells.push(check_ratio(analysis, model, tool, workers, sample));
                    cells.push(match analysis.failure(model, tool, sample) {
                        None => "ok".into(),
                        Some(why) => format!("FAIL ({why})"),
                    });
                }
                Job::WorldFloor { case, threads, .. } => {
                    let model = ModelCase::World { case };
                    let checked = analysis.check(model, Tool::Cmc, threads);
                    cells.push(checked.map_or("–".into(), |checked| {
                        let ratio = checked.wall.as_secs_f64() / sample.wall.as_secs_f64();
                        let workers = if threads == 1 { "worker" } else { "workers" };
                        format!("the check ({threads} {workers}) takes {ratio:.2}× this")
                    }));
                    let counts = |s: &Sample| (s.distinct, s.generated, s.depth);
                    cells.push(match checked {
                        Some(checked) if counts(checked) != counts(sample) => format!(
                            "FAIL (distinct, generated, depth {:?}, the check's {:?})",
                            counts(sample),
                            counts(checked)
                        ),
                        _ => "ok".into(),
                    });
                }
                _ => {
                    cells.push("–".into());
                    cells.push("ok".into());
                }
            }
        }
    }
    cells
}

/// The floor rows: for the largest two-phase instance, what cmc's check
/// would cost at the floor, and how far above it the check is.
fn floor_rows(analysis: &Analysis<'_>, largest: ModelCase) -> Vec<Vec<String>> {
    [1, 2]
        .into_iter()
        .filter_map(|workers| {
            let floor = analysis.floor(largest, workers)?;
            let mut cells = vec![
                "floor: step + insert".to_string(),
                largest.params(),
                "estimate for cmc's counts".into(),
                workers.to_string(),
            ];
            cells.extend((0..2).map(|_| "–".to_string()));
            cells.push(format!("{:.3}", floor.wall_seconds));
            cells.extend((0..6).map(|_| "–".to_string()));
            cells.push(format!("cmc at {:.2}× the floor", floor.checker_over_floor));
            cells.push("ok".into());
            Some(cells)
        })
        .collect()
}

/// The table of a whole run; `largest` is the two-phase instance the floor
/// was measured for.
pub fn render(measured: &[Measured], largest: ModelCase) -> String {
    let analysis = Analysis::new(measured);
    let mut rows: Vec<Vec<String>> = measured.iter().map(|m| row(&analysis, m)).collect();
    rows.extend(floor_rows(&analysis, largest));
    let mut out = format!("| {} |\n", HEADER.join(" | "));
    out.push_str(&format!("|{}\n", "---|".repeat(HEADER.len())));
    for cells in rows {
        debug_assert_eq!(cells.len(), HEADER.len());
        out.push_str(&format!("| {} |\n", cells.join(" | ")));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thousands_are_grouped() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(288), "288");
        assert_eq!(thousands(1_745_408), "1,745,408");
        assert_eq!(thousands(10_340_352), "10,340,352");
    }
}
