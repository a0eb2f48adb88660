//! The schedule as an SVG Gantt chart: per kernel, one lane per context and the DMA queue, one
//! bar per task labelled with its source line and operations; critical-path bars are outlined.

use super::{KernelCost, Lane};
use crate::diagnostic::Span;
use std::fmt::Write as _;

const WIDTH: u64 = 960;
const LEFT: u64 = 70;
const LANE_H: u64 = 34;
const TITLE_H: u64 = 30;
const AXIS_H: u64 = 22;
const GAP: u64 = 18;
const LEGEND_H: u64 = 18;

fn escape(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

fn color(engine: &str) -> &'static str {
    match engine {
        "Fetch Engine" => "#4e79a7",
        "Switch Engine" => "#f28e2b",
        "Collect Engine" => "#76b7b2",
        "Contraction Engine" => "#e15759",
        "Vector Engine" => "#59a14f",
        "Cast Engine" => "#edc948",
        "Transpose Engine" => "#b07aa1",
        "Commit Engine" => "#9c755f",
        "DMA" => "#bab0ac",
        "PCIe DMA" => "#ff9da7",
        _ => "#cccccc",
    }
}

/// Renders the kernels' schedules. `line_of(k, span)` gives the 1-based source line of a span
/// of kernel `k` (spans are relative to each function's text).
pub fn timeline(kernels: &[&KernelCost], line_of: &dyn Fn(usize, Span) -> u32) -> String {
    let height: u64 = kernels
        .iter()
        .map(|k| TITLE_H + AXIS_H + LEGEND_H + LANE_H * lanes_of(k).len().max(1) as u64 + GAP)
        .sum::<u64>()
        .max(40);
    let mut s = String::new();
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" viewBox="0 0 {WIDTH} {height}" font-family="sans-serif" font-size="11">"#
    );
    let _ = writeln!(
        s,
        r##"<rect x="0" y="0" width="{WIDTH}" height="{height}" fill="#ffffff"/>"##
    );
    let mut y = 0u64;
    for (ki, k) in kernels.iter().enumerate() {
        y = kernel_chart(&mut s, k, y, &|span| line_of(ki, span));
    }
    s.push_str("</svg>\n");
    s
}

/// The lanes a kernel's tasks run in, in the order they are drawn.
fn lanes_of(k: &KernelCost) -> Vec<Lane> {
    Lane::ALL
        .iter()
        .copied()
        .filter(|l| k.tasks.iter().any(|t| t.lane == *l))
        .collect()
}

/// The horizontal scale of one kernel's chart: its cycles over the chart's width.
struct Scale {
    total: u64,
    span_w: u64,
}

impl Scale {
    fn of(k: &KernelCost) -> Scale {
        Scale {
            total: k.total_cycles.max(1),
            span_w: WIDTH - LEFT - 20,
        }
    }

    /// The x of cycle `c`.
    fn x(&self, c: u64) -> u64 {
        LEFT + (u128::from(c) * u128::from(self.span_w) / u128::from(self.total)) as u64
    }

    /// The x and width of a bar from cycle `start` to `end` (2 px at least).
    fn bar(&self, start: u64, end: u64) -> (u64, u64) {
        let x0 = self.x(start);
        (x0, (self.x(end).saturating_sub(x0)).max(2))
    }
}

/// One kernel's chart from height `y`: its title, a lane per context and the DMA queue, the
/// cycle axis and the legend. Returns the height below it.
fn kernel_chart(s: &mut String, k: &KernelCost, mut y: u64, line_of: &dyn Fn(Span) -> u32) -> u64 {
    let lanes = lanes_of(k);
    let scale = Scale::of(k);
    let _ = writeln!(s, r#"<g class="kernel" data-name="{}">"#, escape(&k.name));
    let _ = writeln!(
        s,
        r#"<text class="title" x="8" y="{}" font-size="14" font-weight="bold">{} (line {}): {} cycles, bottleneck {}</text>"#,
        y + 20,
        escape(&k.name),
        line_of(k.span),
        k.total_cycles,
        escape(k.bottleneck.unwrap_or("none"))
    );
    y += TITLE_H;
    for (li, lane) in lanes.iter().enumerate() {
        lane_chart(s, k, *lane, li, y + li as u64 * LANE_H, &scale, line_of);
    }
    y += LANE_H * lanes.len().max(1) as u64;
    // The cycle axis: 0, the quarters, the total.
    for q in 0..=4u64 {
        let c = (u128::from(scale.total) * u128::from(q) / 4) as u64;
        let x = scale.x(c);
        let _ = writeln!(
            s,
            r##"<line x1="{x}" y1="{y}" x2="{x}" y2="{}" stroke="#666666"/><text class="tick" x="{x}" y="{}" text-anchor="middle">{c}</text>"##,
            y + 4,
            y + 16
        );
    }
    y += AXIS_H;
    legend(s, k, y);
    y += LEGEND_H + GAP;
    s.push_str("</g>\n");
    y
}

/// One lane of a kernel's chart at height `ly` (the `li`th): its band, the tasks of other
/// lanes that hold the DMA lane, and its tasks' bars.
fn lane_chart(
    s: &mut String,
    k: &KernelCost,
    lane: Lane,
    li: usize,
    ly: u64,
    scale: &Scale,
    line_of: &dyn Fn(Span) -> u32,
) {
    let span_w = scale.span_w;
    let _ = writeln!(
        s,
        r##"<g class="lane" data-lane="{0}"><rect x="{LEFT}" y="{ly}" width="{span_w}" height="{LANE_H}" fill="{1}"/><text x="8" y="{2}">{0}</text>"##,
        lane.as_str(),
        if li.is_multiple_of(2) {
            "#f4f4f4"
        } else {
            "#ebebeb"
        },
        ly + LANE_H / 2 + 4
    );
    // Tasks of other lanes that hold the DMA lane (64-access rule): a dashed outline.
    if lane == Lane::Dma {
        for task in k
            .tasks
            .iter()
            .filter(|t| t.holds_dma && t.lane != Lane::Dma)
        {
            let (x0, w) = scale.bar(task.start, task.end);
            let _ = writeln!(
                s,
                r##"<rect class="held" x="{x0}" y="{}" width="{w}" height="{}" fill="none" stroke="#555555" stroke-dasharray="4 3"><title>held by the {} lane's task (L2909)</title></rect>"##,
                ly + 4,
                LANE_H - 8,
                task.lane.as_str()
            );
        }
    }
    for task in k.tasks.iter().filter(|t| t.lane == lane) {
        task_bar(s, k, task, ly, scale, line_of);
    }
    s.push_str("</g>\n");
}

/// A task's bar, labelled with its first operation's line and its operations, coloured by
/// the engine that limits it, outlined in red on the critical path.
fn task_bar(
    s: &mut String,
    k: &KernelCost,
    task: &super::Task,
    ly: u64,
    scale: &Scale,
    line_of: &dyn Fn(Span) -> u32,
) {
    let (x0, w) = scale.bar(task.start, task.end);
    let main_op = super::schedule::limiting(task.ops.iter().map(|&i| &k.ops[i]));
    let engine = main_op.map_or("", |o| o.engine);
    let line = task.ops.first().map_or(0, |&i| line_of(k.ops[i].span));
    let names: Vec<&str> = task.ops.iter().map(|&i| k.ops[i].op).collect();
    let label = format!("L{line} {}", names.join("+"));
    // About 6.5 px per character at 11 px: the full label when it fits the bar, the line
    // alone when that fits, nothing otherwise (the tooltip keeps it all).
    let fits = |t: &str| (t.chars().count() as u64) * 13 / 2 + 6 <= w;
    let short = format!("L{line}");
    let shown = if fits(&label) {
        label.clone()
    } else if fits(&short) {
        short
    } else {
        String::new()
    };
    let stroke = if task.critical {
        r##" stroke="#d00000" stroke-width="2.5""##
    } else {
        r##" stroke="#333333" stroke-width="0.5""##
    };
    let _ = writeln!(
        s,
        r#"<g class="bar" data-line="{line}" data-label="{}" data-critical="{}"><title>{} [{}..{}) {} cycles</title><rect x="{x0}" y="{}" width="{w}" height="{}" fill="{}"{stroke}/><text x="{}" y="{}" clip-path="none">{}</text></g>"#,
        escape(&label),
        task.critical,
        escape(&label),
        task.start,
        task.end,
        task.end - task.start,
        ly + 4,
        LANE_H - 8,
        color(engine),
        x0 + 3,
        ly + LANE_H / 2 + 4,
        escape(&shown)
    );
}

/// The legend at height `y`: the colour of each engine that limits a bar, in pipeline order,
/// and the critical path's outline.
fn legend(s: &mut String, k: &KernelCost, y: u64) {
    let mut engines: Vec<&str> = k
        .tasks
        .iter()
        .filter_map(|t| super::schedule::limiting(t.ops.iter().map(|&i| &k.ops[i])))
        .map(|o| o.engine)
        .collect();
    engines.sort_by_key(|e| super::ENGINES.iter().position(|x| x == e));
    engines.dedup();
    let mut x = LEFT;
    for e in engines {
        let _ = writeln!(
            s,
            r##"<g class="legend"><rect x="{x}" y="{}" width="10" height="10" fill="{}" stroke="#333333" stroke-width="0.5"/><text x="{}" y="{}">{}</text></g>"##,
            y + 2,
            color(e),
            x + 14,
            y + 11,
            escape(e)
        );
        x += 14 + (e.chars().count() as u64) * 13 / 2 + 16;
    }
    if k.tasks.iter().any(|t| t.critical) {
        let _ = writeln!(
            s,
            r##"<g class="legend"><rect x="{x}" y="{}" width="10" height="10" fill="#ffffff" stroke="#d00000" stroke-width="2"/><text x="{}" y="{}">critical path</text></g>"##,
            y + 2,
            x + 14,
            y + 11
        );
    }
}
