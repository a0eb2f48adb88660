//! `visa-lint cost FILE [--format json] [--timeline out.svg]`: what each engine operation and
//! each kernel of a file costs, in cycles, why, and what to change.

use crate::args::Format;
use codespan_reporting::term::termcolor::WriteColor;
use serde_json::{Value, json};
use std::path::Path;
use visa_analysis::LineIndex;
use visa_analysis::sim::{self, KernelCost};

/// The costed functions of a text on its own (those with engine operations), each with its
/// text offset.
pub fn kernels(text: &str) -> Vec<(u32, KernelCost)> {
    kernels_of(&visa_analysis::db::analyse_text(text))
}

/// The costed functions of an analysis: each function's cost is part of its analysis
/// (computed from the same derivations as its diagnostics).
pub fn kernels_of(analysis: &visa_analysis::db::FileAnalysis) -> Vec<(u32, KernelCost)> {
    let written = analysis
        .fns
        .iter()
        .map(|(offset, f)| (*offset, f.cost.clone()));
    let generated = analysis
        .generated
        .iter()
        .map(|g| (g.call.start, g.cost_at_call()));
    let mut out: Vec<(u32, KernelCost)> = written
        .chain(generated)
        .filter(|(_, k)| !k.ops.is_empty())
        .collect();
    out.sort_by_key(|(offset, _)| *offset);
    out
}

fn percent(part: u64, total: u64) -> u64 {
    part.saturating_mul(100).checked_div(total).unwrap_or(0)
}

/// The JSON report.
pub fn json_report(text: &str, kernels: &[(u32, KernelCost)]) -> Value {
    let idx = LineIndex::new(text);
    let line = |offset: u32, rel: u32| idx.line_col(text, offset + rel).line;
    let ks: Vec<Value> = kernels
        .iter()
        .map(|(off, k)| {
            let ops: Vec<Value> = k
                .ops
                .iter()
                .map(|o| {
                    json!({
                        "line": line(*off, o.span.start),
                        "op": o.op,
                        "engine": o.engine,
                        "context": o.context.map(|c| c.as_str()),
                        "cycles": o.cycles,
                        "latency": o.latency,
                        "bytes": o.bytes,
                        "limit": o.limit,
                    })
                })
                .collect();
            let tasks: Vec<Value> = k
                .tasks
                .iter()
                .map(|t| {
                    json!({
                        "lane": t.lane.as_str(),
                        "start": t.start,
                        "end": t.end,
                        "ops": t.ops,
                        "critical": t.critical,
                        "wait": t.wait_reason,
                    })
                })
                .collect();
            let lanes: Vec<Value> = k
                .lanes
                .iter()
                .map(|l| json!({"lane": l.lane.as_str(), "busy": l.busy, "percent": l.percent}))
                .collect();
            let engines: Vec<Value> = k
                .engines
                .iter()
                .map(|e| json!({"engine": e.engine, "busy": e.busy, "percent": e.percent}))
                .collect();
            let hints: Vec<Value> = k
                .hints()
                .into_iter()
                .map(|(o, h, s)| json!({"line": line(*off, o.span.start), "op": o.op, "hint": h, "saves_cycles": s}))
                .collect();
            json!({
                "name": k.name,
                "line": line(*off, k.span.start),
                "total_cycles": k.total_cycles,
                "bottleneck": k.bottleneck,
                "ops": ops,
                "tasks": tasks,
                "lanes": lanes,
                "engines": engines,
                "assumptions": k.assumptions.iter().map(|a| a.0.clone()).collect::<Vec<_>>(),
                "hints": hints,
            })
        })
        .collect();
    json!({ "kernels": ks })
}

/// The human report.
pub fn human_report(file: &str, text: &str, kernels: &[(u32, KernelCost)]) -> String {
    use std::fmt::Write as _;
    let idx = LineIndex::new(text);
    let line = |offset: u32, rel: u32| idx.line_col(text, offset + rel).line;
    let mut s = String::new();
    if kernels.is_empty() {
        let _ = writeln!(s, "{file}: no engine operations");
    }
    for (off, k) in kernels {
        let _ = writeln!(
            s,
            "{file}:{}: fn {}: {} cycles, bottleneck {}",
            line(*off, k.span.start),
            k.name,
            k.total_cycles,
            k.bottleneck.unwrap_or("none")
        );
        let _ = writeln!(
            s,
            "  {:<6} {:<12} {:<19} {:<4} {:>10} {:>8} {:>12} {:>6}",
            "line", "op", "engine", "ctx", "cycles", "latency", "bytes", "share"
        );
        for o in &k.ops {
            let _ = writeln!(
                s,
                "  {:<6} {:<12} {:<19} {:<4} {:>10} {:>8} {:>12} {:>5}%",
                format!("L{}", line(*off, o.span.start)),
                o.op,
                o.engine,
                o.context.map_or("-", |c| c.as_str()),
                o.cycles,
                o.latency,
                o.bytes,
                percent(o.cycles, k.total_cycles)
            );
        }
        let lanes: Vec<String> = k
            .lanes
            .iter()
            .map(|l| format!("{} {} cycles ({}%)", l.lane.as_str(), l.busy, l.percent))
            .collect();
        let _ = writeln!(s, "  timeline: {}", lanes.join(", "));
        let engines: Vec<String> = k
            .engines
            .iter()
            .map(|e| format!("{} {} ({}%)", e.engine, e.busy, e.percent))
            .collect();
        let _ = writeln!(s, "  engines busy: {}", engines.join(", "));
        let critical: Vec<String> = k
            .tasks
            .iter()
            .filter(|t| t.critical)
            .map(|t| {
                let ops: Vec<&str> = t.ops.iter().map(|&i| k.ops[i].op).collect();
                let l = t
                    .ops
                    .first()
                    .map_or(0, |&i| line(*off, k.ops[i].span.start));
                format!("L{l} {} [{}..{})", ops.join("+"), t.start, t.end)
            })
            .collect();
        let _ = writeln!(s, "  critical path: {}", critical.join(" -> "));
        for o in &k.ops {
            if !o.limit.is_empty() {
                let _ = writeln!(
                    s,
                    "  why L{} {}: {}",
                    line(*off, o.span.start),
                    o.op,
                    o.limit
                );
            }
        }
        for a in &k.assumptions {
            let _ = writeln!(s, "  assumed: {}", a.0);
        }
        for (o, h, saves) in k.hints() {
            let _ = writeln!(
                s,
                "  change L{} {}: {h} (saves {saves} cycles)",
                line(*off, o.span.start),
                o.op
            );
        }
    }
    s
}

/// The SVG timeline of a file's kernels.
pub fn timeline_svg(text: &str, kernels: &[(u32, KernelCost)]) -> String {
    let idx = LineIndex::new(text);
    let refs: Vec<&KernelCost> = kernels.iter().map(|(_, k)| k).collect();
    let line_of = |k: usize, span: visa_analysis::Span| {
        let off = kernels.get(k).map_or(0, |(o, _)| *o);
        idx.line_col(text, off + span.start).line
    };
    sim::svg::timeline(&refs, &line_of)
}

/// Runs the command; the exit status is 0, or 2 when the file cannot be read or written.
pub fn run(
    out: &mut dyn WriteColor,
    format: Format,
    file: &Path,
    timeline: Option<&Path>,
) -> std::io::Result<u8> {
    // Regular files only: a FIFO or a device would block the read forever.
    let text = match crate::walk::read_kernel(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("visa-lint: {e}");
            return Ok(2);
        }
    };
    // Within its crate, as the linter reads it (axes and aliases from other files).
    let ks = kernels_of(&crate::lint::analysis_in_crate(file, &text));
    match format {
        Format::Json => {
            let v = json_report(&text, &ks);
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).unwrap_or_default()
            )?;
        }
        Format::Sarif | Format::Github => {
            eprintln!("visa-lint: `cost` prints `--format human` or `--format json`");
            return Ok(2);
        }
        Format::Human => {
            write!(
                out,
                "{}",
                human_report(&file.display().to_string(), &text, &ks)
            )?;
        }
    }
    if let Some(path) = timeline
        && let Err(e) = std::fs::write(path, timeline_svg(&text, &ks))
    {
        eprintln!("visa-lint: {}: {e}", path.display());
        return Ok(2);
    }
    Ok(0)
}
