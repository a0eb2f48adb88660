//! ISR and VCG: the intra-slice reduce `vector_intra_slice_reduce::<R, OTime, OPacket>(op)` and
//! the Valid Count Generator placement of a padded reduce axis (constraints.md §12-§13).
//!
//! Everything is read from the kernel model: the reduce axis is the first turbofish argument,
//! its factors are the `Factor` digits of the step input's Slice, Time and Packet layouts whose
//! axis is `R`. The VCG sees 8-way flits, so its Time and Packet are taken before the Narrow
//! stage (`vector_trim_way4` / `vector_split`) that precedes the reduce.

use super::context::{FnContext, at_arg};
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::mapping::Layout;
use crate::mapping::layout::{Dim, Factor};
use crate::model::{
    Chain, Method, Slot, Step, mapping_around,
    ops::{op_problem, split_op},
    output_arg,
};
use crate::rule::{Generations, Rule, Status};

pub const ISR_001: Rule = Rule {
    code: "ISR-001",
    name: "intra-slice-reduce-ops",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The intra-slice reduce takes a Way4 stream and an op of its element type: i32 `AddSat`/`Max`/`Min`, f32 `Add`/`Max`/`Min`",
    docs: "The reduce's tree takes a 4-way input, so the stream must have been narrowed \
           (`vector_trim_way4` or `vector_split`) before it. It takes \
           `IntraSliceReduceOpI32::{AddSat, Max, Min}` on i32 streams and \
           `IntraSliceReduceOpF32::{Add, Max, Min}` on f32 streams; there is no wrapping i32 \
           `Add` and no saturating f32 add.",
    bad: ".vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::Add) // i32",
    good: ".vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
    manual: "L4908-L4912, L5384-L5402",
    generations: Generations::Both,
};

pub const ISR_002: Rule = Rule {
    code: "ISR-002",
    name: "reduce-output-shape",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`OTime`/`OPacket` are the input Time/Packet with every factor of the reduce axis removed",
    docs: "All Time and Packet factors carrying the reduce label (`R / 4` in Time and `R % 4` in \
           Packet alike) are eliminated, so `OTime` must be exactly the input Time without them \
           and `OPacket` the input Packet without them (the 4-lane packet keeps its padding, \
           `m![1 # 4]`). Chip, Cluster and Slice pass through. The fix writes the derived shape.",
    bad: "// Time m![R, A % 2], Packet m![R % 4]\n.vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(op)",
    good: "// Time m![R, A % 2], Packet m![R % 4]\n.vector_intra_slice_reduce::<R, m![A % 2], m![1 # 4]>(op)",
    manual: "L5360-L5361",
    generations: Generations::Both,
};

pub const ISR_003: Rule = Rule {
    code: "ISR-003",
    name: "reduce-accumulator-slots",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "At most 8 accumulator slots: the non-reduce factors inside the outermost reduce factor of Time multiply to <= 8",
    docs: "The IntraSliceReduce stage accumulates across time steps in 8 slots. Every position of \
           the non-reduce factors that sit inside (after) the outermost `R` factor of Time needs \
           its own slot while `R` is being accumulated: `m![R, A % 2, B % 4]` needs 2 x 4 = 8, \
           `m![R, A % 3, B % 4]` needs 12 and is rejected. Move non-reduce factors before the \
           outermost `R` factor in Time, or into Slice.",
    bad: "// Time m![R, A % 3, B % 4]: 12 slots\n.vector_intra_slice_reduce::<R, m![A % 3, B % 4], m![B / 4]>(op)",
    good: "// Time m![A % 3, R, B % 4]: 4 slots\n.vector_intra_slice_reduce::<R, m![A % 3, B % 4], m![B / 4]>(op)",
    manual: "L5499-L5543",
    generations: Generations::Both,
};

pub const ISR_004: Rule = Rule {
    code: "ISR-004",
    name: "padded-reduce-axis",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A padded reduce axis needs a VCG-supported placement or identity-element padding",
    docs: "Padded positions hold arbitrary data. Either place R where the VCG can mask it, or fill \
           the padding with the reduce's identity element (AddSat/Add 0, Max i32::MIN / -inf, \
           Min i32::MAX / +inf) through the fetch pad_value. Unsupported placements are reported \
           by VCG-002/003/005/006/007 with that advice. When the sum runs over a preceding Exp, \
           NegExp or Sigmoid, identity padding cannot work (no p has exp(p) = 0): the placement \
           is reported here instead, and the mapping must be restructured. (The fetch \
           pad_value has no API in the manual, so identity padding itself cannot be seen.)",
    bad: "// Slice m![X, R # 16 % 4], Time m![R # 16 / 4], R = 10\n.vector_fp_unary(FpUnaryOp::Exp).vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpF32::Add)",
    good: "// Slice m![X, R # 12 % 4], Time m![R # 12 / 4], R = 10\n.vector_fp_unary(FpUnaryOp::Exp).vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpF32::Add)",
    manual: "L5544-L5563",
    generations: Generations::Both,
};

pub const VCG_001: Rule = Rule {
    code: "VCG-001",
    name: "vcg-prefix-valid-count",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Valid elements of a flit form a contiguous prefix",
    docs: "Element p of a flit is valid iff p < vc; the VCG cannot mark lanes 0, 1, 3 valid and 2 \
           invalid. `BranchMode::ValidCount` takes its ExecutionIds from that count, so the \
           Packet of the stream it branches must hold its data in a prefix of the flit: padding \
           goes outermost (`m![A # 8]`), never inside (`m![A, 1 # 2]` puts data in lanes 0, 2, \
           4, 6). For a padded reduce axis the same property is checked as VCG-002 (another axis \
           in the packet) and VCG-009 (padding inside R's packet part).",
    bad: "// A = 4\n.vector_init() // Packet m![A, 1 # 2]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    good: "// A = 4\n.vector_init() // Packet m![A # 8]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    manual: "L4800, L6177-L6179, L6558",
    generations: Generations::Both,
};

pub const VCG_002: Rule = Rule {
    code: "VCG-002",
    name: "vcg-packet-placement",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A padded R in Packet appears once, as its innermost `% k` part, alone in the packet prefix",
    docs: "In Packet Reduce mode the VCG gives each flit a prefix valid count. R may appear at most \
           once in Packet, its Packet part must be R's innermost part (`R # 24 % 8`, with the outer \
           part `R # 24 / 8` in Time), and the lanes after it must be padding: another axis \
           sharing the packet falls outside the valid prefix and silently drops out of the result. \
           (Padding inside R's packet part is VCG-009; a non-prefix packet under \
           `BranchMode::ValidCount` is VCG-001.)",
    bad: "Time m![R # 24 % 8], Packet m![R # 24 / 8 # 8]",
    good: "Time m![R # 24 / 8], Packet m![R # 24 % 8]",
    manual: "L5612-L5613, L6009, L6025-L6026, L6046, L6078, L6087-L6091",
    generations: Generations::Both,
};

pub const VCG_003: Rule = Rule {
    code: "VCG-003",
    name: "vcg-slice-order",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Several R factors in Slice must have increasing stride from inner to outer",
    docs: "Each gate classifies slices with one threshold, so every slice must hold a contiguous run \
           of R: when R appears several times in Slice, the outer factor must have the larger \
           stride (`R # 16 / 8` before `R # 16 / 2 % 4`). Reordered factors make validity go up \
           and down across slices, which the VCG cannot express. The fix rewrites the Slice wherever the function writes it (parameter types, \
           annotations, return type, turbofish).",
    bad: "Slice m![X, R # 16 / 2 % 4, R # 16 / 8], Time m![R # 16 % 2]",
    good: "Slice m![X, R # 16 / 8, R # 16 / 2 % 4], Time m![R # 16 % 2]",
    manual: "L5610-L5611, L5709-L5712, L5844-L5858, L6454-L6457",
    generations: Generations::Both,
};

pub const VCG_004: Rule = Rule {
    code: "VCG-004",
    name: "vcg-time-any-order",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "R factors in Time may appear in any order, with non-reduce axes between them",
    docs: "The sequencer combines every Time counter of R, so Time needs no ordering. This rule \
           is a permission, not a finding: the VCG checks never report the order of R's Time \
           factors (VCG-003 orders Slice factors only; VCG-006 and VCG-007 compare R's Slice \
           strides with its Time strides as a set), and nothing is reported under this code.",
    bad: "// Order matters in Slice only (VCG-003 reports this), never in Time\nSlice m![X, R # 16 / 2 % 4, R # 16 / 8], Time m![R # 16 % 2]",
    good: "// R = 13\nSlice m![Y, R # 16 / 8], Time m![R # 16 % 2, X, R # 16 / 2 % 4]",
    manual: "L5611-L5612, L5903-L5904",
    generations: Generations::Both,
};

pub const VCG_005: Rule = Rule {
    code: "VCG-005",
    name: "vcg-slice-packet",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "A padded R split over Slice and Packet needs a slice-dependent packet count: unsupported",
    docs: "The packet valid count depends on the time step only, never on the slice, so the \
           boundary slice cannot get a partial count while the others get 8. It works only when \
           |R| is a multiple of R's Packet size or fits one packet. Move R's Packet part into \
           Time (Slice + Time is supported) or fill the padding with the reduce's identity element.",
    bad: "axes![R = 2045]; Slice m![R # 2048 / 8], Packet m![R # 2048 % 8]",
    good: "axes![R = 2045]; Slice m![R # 2048 / 8], Time m![R # 2048 % 8], Packet m![A # 8]",
    manual: "L5597, L6138-L6153, L6520-L6543",
    generations: Generations::Both,
};

pub const VCG_006: Rule = Rule {
    code: "VCG-006",
    name: "vcg-slice-time-packet",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Slice + Time + Packet, and a Time-Slice-Time interleave of a padded R, are unsupported",
    docs: "R spanning all three dimensions has the Slice + Packet problem (a partial packet count \
           that would have to vary by slice) unless |R| is a multiple of R's Packet size. A Slice \
           part sandwiched between two Time parts needs a different number of valid time steps \
           per slice, and each gate has one threshold. Use the standard split: outer part in \
           Slice, inner part in Time. (The manual's own example L5476 relies on the VCG here; \
           constraints.md §22 A-29 follows the implementation page.) For the interleave the fix writes that split wherever the function writes the \
           Slice and Time mappings.",
    bad: "Slice m![X, R # 16 / 2 % 4], Time m![R # 16 / 8, R # 16 % 2]",
    good: "Slice m![X, R # 16 / 4], Time m![R # 16 % 4]",
    manual: "L5877-L5890, L6544-L6547, L6571",
    generations: Generations::Both,
};

pub const VCG_007: Rule = Rule {
    code: "VCG-007",
    name: "vcg-transposed-time-size",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Transposed Slice + Time needs time_size == ceil(|R| / slice_size)",
    docs: "With R's inner part in Slice and its outer part in Time, slices below the threshold are \
           treated as valid at every time step; if the padding adds whole padding-only time steps \
           the VCG over-counts them. Pad R to slice_size x ceil(|R| / slice_size) instead \
           (R = 14 over 4 slices: `R # 16`, not `R # 20`). The fix rewrites `R # p` wherever the function writes it (parameter types, \
           annotations, return type, turbofish).",
    bad: "axes![R = 14]; Slice m![X, R # 20 % 4], Time m![R # 20 / 4]",
    good: "axes![R = 14]; Slice m![X, R # 16 % 4], Time m![R # 16 / 4]",
    manual: "L5734-L5739, L5785-L5807, L6484-L6503",
    generations: Generations::Both,
};

pub const VCG_008: Rule = Rule {
    code: "VCG-008",
    name: "vcg-dimension-budget",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "At most 4 validity dimensions: 1 packet count and 3 binary gates",
    docs: "Each padded axis whose validity the VCG tracks takes the packet dim (an axis in \
           Packet) or one of 3 gate dims; unpadded axes are free, and with no padded axis in \
           Packet the packet dim serves as a fourth gate. `BranchMode::ValidCount` needs every \
           padded axis of its input stream tracked, so more than 4 padded axes (or 4 gates \
           besides a packet axis) cannot be expressed. (A reduce tracks only its reduce axis.) \
           Choose sizes that fill their digits for some axes, or split the work.",
    bad: "// A = 3, B = 60, C = 3, D = 3, E = 5\nSlice m![A # 4, B # 64], Time m![C # 4, D # 4], Packet m![E # 8]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    good: "// A = 3, B = 60, C = 3, D = 4, E = 5\nSlice m![A # 4, B # 64], Time m![C # 4, D], Packet m![E # 8]\n.vector_intra_slice_branch(BranchMode::ValidCount)",
    manual: "L4800, L6459, L6549-L6555, L6561",
    generations: Generations::Both,
};

pub const VCG_009: Rule = Rule {
    code: "VCG-009",
    name: "vcg-innermost-packet-counter",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The innermost Packet counter is assigned to the packet dim: R's Packet part is the innermost Packet digit",
    docs: "The packet dim counts lanes from the innermost Packet counter (its stride is \
           stride_p). When a padded reduce axis R is in Packet, R's part must therefore be the \
           innermost Packet digit: padding inside it (`m![[R # 4 % 2, 1 # 2] # 8]`) puts R in \
           every other lane, which no packet count describes. Pad the whole packet outside R's \
           part instead (`m![R # 4 % 2 # 8]`). Another axis sharing the packet is VCG-002.",
    bad: "// R = 3\nTime m![R # 4 / 2], Packet m![[R # 4 % 2, 1 # 2] # 8]",
    good: "// R = 3\nTime m![R # 4 / 2], Packet m![R # 4 % 2 # 8]",
    manual: "L6284-L6288",
    generations: Generations::Both,
};

pub const VCG_010: Rule = Rule {
    code: "VCG-010",
    name: "vcg-not-needed",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "No VCG is needed when |R| divides evenly (no partial packets)",
    docs: "When |R| is a multiple of R's Packet size every packet is full or empty, and Slice + \
           Packet reduces to Slice only (Slice + Time + Packet to Slice + Time); when |R| fits \
           one packet it is Packet only. This rule is a permission, not a finding: VCG-005 and \
           VCG-006 stay silent in these cases, and nothing is reported under this code.",
    bad: "// a partial last packet (2045 % 8 = 5) does need the VCG: VCG-005\naxes![R = 2045]; Slice m![R # 2048 / 8], Packet m![R # 2048 % 8]",
    good: "axes![R = 2040]; Slice m![R # 2048 / 8], Packet m![R # 2048 % 8]",
    manual: "L6111-L6118, L6540-L6542, L6547",
    generations: Generations::Both,
};

pub const SEQ_011: Rule = Rule {
    code: "SEQ-011",
    name: "vcg-counter-limit",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Valid Count Generator has at most 8 nested counters",
    docs: "Where the VCG is configured (a padded reduce axis, `BranchMode::ValidCount` over \
           padded axes), its sequencer decomposes the flit time into at most 8 nested counters \
           L_0..L_7: one per Time digit, plus the innermost Packet counter when the packet dim \
           tracks an axis. A Time with more digits cannot be counted; merge Time axes or move \
           some into Slice.",
    bad: "// R = 14\nTime m![A, B, C, D, E, F, G, R # 16 / 4], Packet m![R # 16 % 4 # 8] // 8 + 1 counters",
    good: "// R = 14\nTime m![A, B, C, D, E, F, R # 16 / 4], Packet m![R # 16 % 4 # 8] // 7 + 1 counters",
    manual: "L6202, L6213, L6234-L6236",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    ISR_001, ISR_002, ISR_003, ISR_004, VCG_001, VCG_002, VCG_003, VCG_004, VCG_005, VCG_006,
    VCG_007, VCG_008, VCG_009, VCG_010, SEQ_011,
];

/// The i32 and f32 intra-slice reduce ops (L5390-L5402).
const I32_OPS: &[&str] = &["AddSat", "Max", "Min"];
const F32_OPS: &[&str] = &["Add", "Max", "Min"];

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for (k, step) in chain.steps.iter().enumerate() {
            if step.method == Method::VectorIntraSliceBranch {
                check_valid_count(cx, step, out);
                continue;
            }
            if step.method != Method::VectorIntraSliceReduce {
                continue;
            }
            check_op(step, cx.target.ve_way4_lanes, out);
            // `R` (or a path ending in it) must name a declared axis, or nothing is decided.
            let Some(r) = step
                .generics
                .first()
                .and_then(|a| a.text.trim().rsplit("::").next().map(str::trim))
                .filter(|r| cx.scope.axes.contains_key(*r))
                .map(str::to_string)
            else {
                continue;
            };
            check_shape(step, &r, cx.target.ve_way4_lanes, out);
            check_slots(cx, step, &r, out);
            let mut vcg = Vec::new();
            check_vcg(cx, chain, k, &r, &mut vcg);
            match composed(chain, k) {
                Some(f) => out.extend(vcg.into_iter().map(|d| no_identity(d, &r, f))),
                None => out.extend(vcg),
            }
        }
    }
}

/// A sum over a preceding non-invertible op with no zero in its range (Exp, NegExp, Sigmoid):
/// identity padding cannot cancel the padded lanes (L5562-L5563). Returns the op.
fn composed(chain: &Chain, k: usize) -> Option<&'static str> {
    let step = &chain.steps[k];
    let op_text = step.args.first()?.value_text();
    let (_, op) = split_op(&op_text)?;
    if !matches!(op, "Add" | "AddSat") {
        return None;
    }
    let start = chain.steps[..k]
        .iter()
        .rposition(|s| s.method == Method::VectorInit)
        .unwrap_or(0);
    chain.steps[start..k]
        .iter()
        .filter(|s| {
            matches!(
                s.method,
                Method::VectorFpUnary | Method::VectorFpUnaryWithMode
            )
        })
        .find_map(|s| {
            let text = s.args.first()?.value_text();
            let (_, v) = split_op(&text)?;
            ["Exp", "NegExp", "Sigmoid"].into_iter().find(|f| *f == v)
        })
}

/// An unsupported VCG placement after Exp/NegExp/Sigmoid: only restructuring helps (ISR-004).
fn no_identity(d: Diagnostic, r: &str, f: &str) -> Diagnostic {
    let reason = d
        .message
        .split("; otherwise fill the padding")
        .next()
        .unwrap_or_default()
        .to_string();
    let msg = format!(
        "the padding of the reduce axis {r} cannot be excluded. The VCG cannot mask it ({}: \
         {reason}), and identity-element padding does not help either: the sum runs over {f} \
         results and no pad value p makes {f}(p) = 0. Restructure the mapping",
        d.code()
    );
    let mut out = Diagnostic::new(&ISR_004, d.span, msg);
    out.related = d.related;
    out.fixes = d.fixes;
    out
}

fn check_op(step: &Step, lanes: u64, out: &mut Vec<Diagnostic>) {
    way4(step, lanes, out);
    if let Some(d) = op_problem(
        &ISR_001,
        step,
        "IntraSliceReduceOpI32",
        I32_OPS,
        "IntraSliceReduceOpF32",
        F32_OPS,
    ) {
        out.push(d);
    }
}

/// The reduce consumes a Way4 stream: its receiver comes out of a Narrow (or a later Way4)
/// stage, never straight from a Way8 stage.
fn way4(step: &Step, lanes: u64, out: &mut Vec<Diagnostic>) {
    use crate::model::{Kind, VeStage};
    let Some(Kind::Vector(stage)) = step.input.as_ref().map(|t| t.kind) else {
        return;
    };
    if matches!(
        stage,
        VeStage::Narrow | VeStage::Fp | VeStage::IntraSliceReduce | VeStage::FpDiv | VeStage::Pair
    ) {
        return;
    }
    let packet = step.input.as_ref().and_then(|t| t.get(Slot::Packet));
    let msg = format!(
        "`vector_intra_slice_reduce` needs a Way4 stream (its tree reduces 4-lane packets), but this \
         stream is a Way8 {}: narrow it first with `vector_trim_way4` (when lanes \
         4-7 are padding) or `vector_split`",
        Kind::Vector(stage).type_name()
    );
    let mut d = Diagnostic::new(&ISR_001, step.span, msg);
    // `m![X # 8]` whose data fits 4 lanes: insert the trim.
    if let Some(l) = packet.and_then(|p| p.layout.as_deref()) {
        let c = core(l);
        if c.size <= lanes {
            let trimmed = if c.size < lanes { c.window(lanes) } else { c };
            d = d.with_edit(
                format!("narrow with `vector_trim_way4::<m![{trimmed}]>()`"),
                true,
                Span::new(step.span.start as usize, step.span.start as usize),
                format!("vector_trim_way4::<m![{trimmed}]>()."),
            );
        }
    }
    out.push(d);
}

/// The mapping as written (`m![A % 2 # 8]`), or its normal form when the text is unknown.
fn text_of(ty: Option<&crate::model::TensorTy>, slot: Slot, l: &Layout) -> String {
    match ty.and_then(|t| t.get(slot)) {
        Some(v) if v.text.starts_with("m!") => v.text.clone(),
        _ => format!("m![{l}]"),
    }
}

fn layout_of(ty: Option<&crate::model::TensorTy>, slot: Slot) -> Option<&Layout> {
    ty?.get(slot)?.layout.as_deref()
}

fn is_axis(d: &Dim, r: &str) -> bool {
    matches!(d, Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name == r)
}

/// The layout without the factors of `r`; `None` when an irregular digit might hide one.
fn strip(l: &Layout, r: &str) -> Option<Layout> {
    if !l.is_regular() {
        return None;
    }
    let dims: Vec<Dim> = l.dims.iter().filter(|d| !is_axis(d, r)).cloned().collect();
    Layout::from_dims(dims).ok()
}

/// The layout without its outer padding (`m![A # 4]` -> `m![A]`): what a packet holds.
fn core(l: &Layout) -> Layout {
    let mut dims = l.dims.clone();
    if let Some(Dim::Factor(f)) = dims.first_mut()
        && f.valid < f.extent
    {
        f.extent = f.valid;
    }
    Layout::from_dims(dims).unwrap_or_else(|_| l.clone())
}

fn check_shape(step: &Step, r: &str, lanes: u64, out: &mut Vec<Diagnostic>) {
    let input = step.input.as_ref();
    let output = step.output.as_ref();
    // OTime
    if let (Some(t_in), Some(t_out)) = (layout_of(input, Slot::Time), layout_of(output, Slot::Time))
        && let Some(want) = strip(t_in, r)
        && want != *t_out
    {
        let arg = step.generics.get(1);
        let at = output_arg(step, Some(1), Slot::Time).map(|a| a.span);
        out.push(shape_diag(
            step, arg, at, "OTime", "Time", r, t_in, &want, t_out,
        ));
    }
    if let (Some(p_in), Some(p_out)) = (
        layout_of(input, Slot::Packet),
        layout_of(output, Slot::Packet),
    ) && let Some(want) = strip(p_in, r)
        && core(&want) != core(p_out)
    {
        let arg = step.generics.get(2);
        let want = if want.size < lanes {
            want.window(lanes)
        } else {
            want
        };
        let at = output_arg(step, Some(2), Slot::Packet).map(|a| a.span);
        out.push(shape_diag(
            step, arg, at, "OPacket", "Packet", r, p_in, &want, p_out,
        ));
    }
}

#[allow(clippy::too_many_arguments)]
fn shape_diag(
    step: &Step,
    arg: Option<&crate::model::Arg>,
    at: Option<Span>,
    what: &str,
    slot: &str,
    r: &str,
    input: &Layout,
    want: &Layout,
    got: &Layout,
) -> Diagnostic {
    let msg = format!(
        "{what} must be the input {slot} m![{input}] with every factor of {r} removed, i.e. \
         m![{want}]; it is m![{got}]"
    );
    let mut d = at_arg(&ISR_002, step, at, msg);
    if let Some(a) = arg
        && a.text.trim() != "_"
    {
        d = d.with_edit(
            format!("write {what} = m![{want}]"),
            true,
            a.span,
            format!("m![{want}]"),
        );
    }
    d
}

fn render_dim(d: &Dim) -> String {
    Layout {
        size: d.extent(),
        dims: vec![d.clone()],
    }
    .to_expr()
}

fn check_slots(cx: &FnContext<'_>, step: &Step, r: &str, out: &mut Vec<Diagnostic>) {
    let Some(time) = layout_of(step.input.as_ref(), Slot::Time) else {
        return;
    };
    let Some(first) = time.dims.iter().position(|d| is_axis(d, r)) else {
        return;
    };
    let inner: Vec<&Dim> = time.dims[first + 1..]
        .iter()
        .filter(|d| !is_axis(d, r))
        .collect();
    let slots = inner
        .iter()
        .try_fold(1u64, |acc, d| acc.checked_mul(d.extent()))
        .unwrap_or(u64::MAX);
    let limit = cx.target.isr_accumulator_slots;
    if slots <= limit {
        return;
    }
    let time_txt = text_of(step.input.as_ref(), Slot::Time, time);
    let parts: Vec<String> = inner
        .iter()
        .map(|d| format!("{} ({})", render_dim(d), d.extent()))
        .collect();
    let sizes: Vec<String> = inner.iter().map(|d| d.extent().to_string()).collect();
    let msg = format!(
        "{slots} accumulator slots required, but only {limit} are available: the non-reduce \
         factors {} of Time {time_txt} sit inside the outermost {r} factor ({} = {slots}); move \
         them before it in Time, or into Slice",
        parts.join(", "),
        sizes.join(" x "),
    );
    out.push(Diagnostic::new(&ISR_003, step.span, msg));
}

/// One factor of the reduce axis.
#[derive(Clone, Debug)]
struct RPart {
    slot: Slot,
    /// Index of the digit in its slot's layout (0 = outermost).
    pos: usize,
    extent: u64,
    valid: u64,
    coef: u64,
}

/// The identity element of the reduce op, for the identity-padding advice (L5557-L5561).
fn identity(step: &Step) -> Option<&'static str> {
    let op_text = step.args.first()?.value_text();
    let (en, v) = split_op(&op_text)?;
    let f = en.ends_with("F32");
    Some(match (v, f) {
        ("AddSat" | "Add", false) => "0",
        ("Add", true) => "0.0",
        ("Max", false) => "i32::MIN",
        ("Max", true) => "f32::NEG_INFINITY",
        ("Min", false) => "i32::MAX",
        ("Min", true) => "f32::INFINITY",
        _ => return None,
    })
}

fn advice(step: &Step) -> String {
    match identity(step) {
        Some(id) => format!(
            "; otherwise fill the padding with the reduce's identity element ({id}) through the \
             fetch pad_value"
        ),
        None => String::new(),
    }
}

/// `R # p / c % k # e` for a factor of an axis of size `n` padded to `p`.
fn render_part(r: &str, n: u64, p: u64, part: &RPart) -> String {
    let mut s = if p > n {
        format!("{r} # {p}")
    } else {
        r.to_string()
    };
    if part.coef > 1 {
        s.push_str(&format!(" / {}", part.coef));
    }
    let radix = part.extent.min(p / part.coef.max(1)).max(1);
    if part.coef.saturating_mul(radix) < p {
        s.push_str(&format!(" % {radix}"));
    }
    if part.extent > radix {
        s.push_str(&format!(" # {}", part.extent));
    }
    s
}

fn check_vcg(cx: &FnContext<'_>, chain: &Chain, k: usize, r: &str, out: &mut Vec<Diagnostic>) {
    let step = &chain.steps[k];
    // The 8-way Time and Packet: the input of the Narrow stage before the reduce, if any.
    let narrow = chain.steps[..k]
        .iter()
        .rev()
        .find(|s| matches!(s.method, Method::VectorTrimWay4 | Method::VectorSplit));
    let flit_ty = narrow
        .and_then(|s| s.input.as_ref())
        .or(step.input.as_ref());
    let (Some(slice), Some(time), Some(packet)) = (
        layout_of(step.input.as_ref(), Slot::Slice),
        layout_of(flit_ty, Slot::Time),
        layout_of(flit_ty, Slot::Packet),
    ) else {
        return;
    };
    if !(slice.is_regular() && time.is_regular() && packet.is_regular()) {
        return;
    }
    let mut parts = Vec::new();
    let mut n = 0;
    for (slot, l) in [
        (Slot::Slice, slice),
        (Slot::Time, time),
        (Slot::Packet, packet),
    ] {
        for (pos, d) in l.dims.iter().enumerate() {
            if let Dim::Factor(f) = d
                && let Some(a) = &f.axis
                && &*a.name == r
            {
                n = a.size;
                parts.push(RPart {
                    slot,
                    pos,
                    extent: f.extent,
                    valid: f.valid,
                    coef: f.coef.max(1),
                });
            }
        }
    }
    if parts.is_empty() {
        return;
    }
    let max_index: u128 = parts
        .iter()
        .map(|p| u128::from(p.valid.saturating_sub(1)) * u128::from(p.coef))
        .sum();
    let padded = max_index >= u128::from(n) || parts.iter().any(|p| p.valid < p.extent);
    if !padded {
        return;
    }
    counter_limit(
        cx,
        step,
        &format!("the padded reduce axis {r}"),
        time,
        parts.iter().any(|p| p.slot == Slot::Packet),
        out,
    );
    let of = |s: Slot| {
        parts
            .iter()
            .filter(|p| p.slot == s)
            .cloned()
            .collect::<Vec<_>>()
    };
    let (s, t, pk) = (of(Slot::Slice), of(Slot::Time), of(Slot::Packet));
    let min_coef = parts.iter().map(|p| p.coef).min().unwrap_or(1);
    let top = parts.iter().max_by_key(|p| p.coef).cloned();
    // R's padded size as written: the outermost part's reach (its valid lanes in Packet).
    let p_size = top.map_or(n, |p| {
        let e = if p.slot == Slot::Packet {
            p.valid
        } else {
            p.extent
        };
        p.coef.saturating_mul(e)
    });
    let span = step.span;
    let more = advice(step);
    let packet_txt = text_of(flit_ty, Slot::Packet, packet);

    if !pk.is_empty() {
        // Packet Reduce mode.
        if pk.len() > 1 {
            let msg = format!(
                "{r} appears {} times in Packet {packet_txt}; the VCG's prefix valid count allows \
                 R at most once in Packet, as its innermost part{more}",
                pk.len()
            );
            out.push(Diagnostic::new(&VCG_002, span, msg));
            return;
        }
        let pp = &pk[0];
        if pp.coef != min_coef {
            let inner = pp.coef;
            let msg = format!(
                "{r}'s Packet part m![{}] is not its innermost part: a prefix valid count cannot \
                 describe it. Put the inner part in Packet and the outer part in Time: Time \
                 m![{r} # {p_size} / {inner}], Packet m![{r} # {p_size} % {inner}]{more}",
                render_part(r, n, p_size, pp)
            );
            out.push(Diagnostic::new(&VCG_002, span, msg));
            return;
        }
        let others: Vec<String> = packet
            .dims
            .iter()
            .filter_map(|d| match d {
                Dim::Factor(Factor { axis: Some(a), .. }) if &*a.name != r => {
                    Some(a.name.to_string())
                }
                _ => None,
            })
            .collect();
        if !others.is_empty() {
            let msg = format!(
                "{} shares Packet {packet_txt} with the padded reduce axis {r}: lanes after R's \
                 valid prefix count as padding, so {}'s values silently drop out of the result. \
                 Move {} out of Packet, or pad {r} to fill all {} lanes{more}",
                others.join(", "),
                others.join(", "),
                others.join(", "),
                cx.target.ve_way8_lanes,
            );
            out.push(Diagnostic::new(&VCG_002, span, msg));
            return;
        }
        // Only padding may follow R's part in Packet; padding inside it (`R # 8 % 4, 1 # 2`)
        // makes the innermost Packet counter a padding counter (VCG-009).
        if let Some(Dim::Factor(inner)) = packet.dims.last()
            && pp.pos + 1 < packet.dims.len()
            && inner.axis.is_none()
            && !inner.is_broadcast()
        {
            let radix = parts
                .iter()
                .filter(|q| q.coef > pp.coef)
                .map(|q| q.coef / pp.coef.max(1))
                .min()
                .unwrap_or(pp.valid)
                .max(1);
            let part = if radix < p_size {
                format!("{r} # {p_size} % {radix}")
            } else {
                format!("{r} # {p_size}")
            };
            let msg = format!(
                "the innermost Packet counter must be the VCG's packet dim, but the innermost \
                 digit of Packet {packet_txt} is padding ({} lanes) inside {r}'s part, so {r}'s \
                 lanes are not a prefix of the flit. Put {r}'s part innermost and the padding \
                 outside it: Packet m![{part} # {}]{more}",
                inner.extent, cx.target.ve_way8_lanes,
            );
            out.push(Diagnostic::new(&VCG_009, span, msg));
            return;
        }
        if !s.is_empty() {
            // R's lanes per packet: the radix of the packet part.
            let stride_p = parts
                .iter()
                .filter(|q| q.coef > pp.coef)
                .map(|q| q.coef / pp.coef.max(1))
                .min()
                .unwrap_or(pp.valid)
                .max(1);
            if n % stride_p != 0 && n > stride_p {
                let slice_txt: Vec<String> =
                    s.iter().map(|q| render_part(r, n, p_size, q)).collect();
                if t.is_empty() {
                    let msg = format!(
                        "the padded reduce axis {r} ({n}) spans Slice and Packet: the last valid \
                         slice needs a packet valid count of {} while the others need {stride_p}, \
                         but the packet count cannot vary by slice. Put {r}'s Packet part in Time \
                         instead ({r}'s factors: `{}` in Slice, `{r} # {p_size} % {stride_p}` in \
                         Time){more}",
                        n % stride_p,
                        slice_txt.join(", "),
                    );
                    out.push(Diagnostic::new(&VCG_005, span, msg));
                } else {
                    let msg = format!(
                        "the padded reduce axis {r} ({n}) spans Slice, Time and Packet with a \
                         partial last packet ({n} % {stride_p} = {}): the packet valid count \
                         cannot vary by slice. Keep R in Slice + Time, or Time + Packet{more}",
                        n % stride_p,
                    );
                    out.push(Diagnostic::new(&VCG_006, span, msg));
                }
            }
        }
        return;
    }

    // Time Reduce mode.
    if s.len() > 1 {
        let mut by_pos = s.clone();
        by_pos.sort_by_key(|q| q.pos);
        let ordered = by_pos.windows(2).all(|w| w[0].coef > w[1].coef);
        if !ordered {
            let mut dims = slice.dims.clone();
            let mut sorted = by_pos.clone();
            sorted.sort_by_key(|q| std::cmp::Reverse(q.coef));
            let moved: Vec<Dim> = sorted.iter().map(|q| slice.dims[q.pos].clone()).collect();
            for (q, d) in by_pos.iter().zip(moved) {
                dims[q.pos] = d;
            }
            let fixed: Vec<String> = dims
                .iter()
                .map(|d| match d {
                    Dim::Factor(f) if is_axis(d, r) => render_part(
                        r,
                        n,
                        p_size,
                        &RPart {
                            slot: Slot::Slice,
                            pos: 0,
                            extent: f.extent,
                            valid: f.valid,
                            coef: f.coef.max(1),
                        },
                    ),
                    _ => render_dim(d),
                })
                .collect();
            let written: Vec<String> = by_pos
                .iter()
                .map(|q| format!("{} (stride {})", render_part(r, n, p_size, q), q.coef))
                .collect();
            let msg = format!(
                "{r}'s Slice factors {} are not ordered outer to inner: strides must increase \
                 from inner to outer so each slice holds a contiguous run of {r}, otherwise \
                 slice validity is not monotonic. Use Slice m![{}]{more}",
                written.join(", "),
                fixed.join(", "),
            );
            let edits = rewrite_mapping(cx.model, slice, &format!("m![{}]", fixed.join(", ")));
            let mut d = at_fix(cx, &VCG_003, step, &edits, msg);
            if !edits.is_empty() {
                d = d.with_fix(
                    format!("order {r}'s Slice factors outer to inner"),
                    false,
                    edits,
                );
            }
            out.push(d);
            return;
        }
    }
    if s.is_empty() || t.is_empty() {
        return; // Time only or Slice only: always supported.
    }
    let s_max = s.iter().map(|q| q.coef).max().unwrap_or(1);
    let s_min = s.iter().map(|q| q.coef).min().unwrap_or(1);
    let t_max = t.iter().map(|q| q.coef).max().unwrap_or(1);
    let t_min = t.iter().map(|q| q.coef).min().unwrap_or(1);
    let slice_size: u64 = s.iter().map(|q| q.extent).product();
    let time_size: u64 = t.iter().map(|q| q.extent).product();
    if s_min > t_max {
        return; // standard: Slice outer, Time inner.
    }
    if s_max < t_min {
        // Transposed: Slice inner, Time outer.
        let need = n.div_ceil(slice_size.max(1));
        if time_size != need {
            let written = slice_size.saturating_mul(time_size);
            let good = slice_size.saturating_mul(need);
            let msg = format!(
                "transposed Slice + Time placement over-allocates time steps: {r} ({n}) is padded \
                 to {written} = {slice_size} (Slice) x {time_size} (Time), but ceil({n} / \
                 {slice_size}) = {need}, so the VCG counts padding-only time steps as valid. Pad \
                 {r} to {good} instead ({r} # {good}){more}"
            );
            let edits = pad_edits(cx.model, r, written, good);
            let mut d = at_fix(cx, &VCG_007, step, &edits, msg);
            if !edits.is_empty() {
                d = d.with_fix(
                    format!(
                        "pad {r} to {good} instead of {written} where the mappings are written"
                    ),
                    false,
                    edits,
                );
            }
            out.push(d);
        }
        return;
    }
    let Some(p_all) = s
        .iter()
        .chain(t.iter())
        .try_fold(1u64, |acc, q| acc.checked_mul(q.extent))
    else {
        return;
    };
    let k_inner: u64 = time_size.max(1);
    let pad = if p_all > n {
        format!("{r} # {p_all}")
    } else {
        r.to_string()
    };
    // The standard split keeps the sizes: R's Slice digits become `R # p / k` where the first
    // one was, its Time digits `R # p % k`; the other digits stay.
    let split = |l: &Layout, part: String| -> String {
        let mut first = true;
        let mut dims = Vec::new();
        for d in &l.dims {
            if is_axis(d, r) {
                if first {
                    dims.push(part.clone());
                    first = false;
                }
            } else {
                dims.push(render_dim(d));
            }
        }
        format!("m![{}]", dims.join(", "))
    };
    let new_slice = split(slice, format!("{pad} / {k_inner}"));
    let new_time = split(time, format!("{pad} % {k_inner}"));
    let msg = format!(
        "{r}'s Slice part sits between its Time parts (a Time-Slice-Time interleave): each slice \
         would need its own number of valid time steps, and the VCG has a single threshold. Use \
         the standard split, outer part in Slice and inner part in Time: Slice {new_slice}, Time \
         {new_time}{more}"
    );
    // Only where the Time the VCG sees is the stream's (no `vector_split` rewrote it).
    let mut edits = Vec::new();
    if narrow.is_none_or(|n| n.method == Method::VectorTrimWay4) {
        edits = rewrite_mapping(cx.model, slice, &new_slice);
        edits.extend(rewrite_mapping(cx.model, time, &new_time));
        edits.sort_by_key(|e| e.span);
        edits.dedup();
    }
    let mut d = at_fix(cx, &VCG_006, step, &edits, msg);
    if !edits.is_empty() {
        d = d.with_fix(
            format!("use the standard split: Slice {new_slice}, Time {new_time}"),
            false,
            edits,
        );
    }
    out.push(d);
}

/// A VCG placement diagnostic whose fix rewrites the mappings: at the first mapping the fix
/// edits (ARCHITECTURE.md, "Where a diagnostic points"), the reduce call related; at the call
/// when there is no fix.
fn at_fix(
    cx: &FnContext<'_>,
    rule: &'static Rule,
    step: &Step,
    edits: &[Edit],
    msg: String,
) -> Diagnostic {
    let at = edits.first().and_then(|e| mapping_around(cx.model, e.span));
    at_arg(rule, step, at, msg)
}

/// SEQ-011: the VCG's sequencer decomposes the flit time into at most 8 nested counters, one per
/// Time digit, plus the innermost Packet counter when the packet dim tracks a padded axis.
fn counter_limit(
    cx: &FnContext<'_>,
    step: &Step,
    what: &str,
    time: &Layout,
    packet_counter: bool,
    out: &mut Vec<Diagnostic>,
) {
    let time_counters = time.dims.iter().filter(|d| d.extent() > 1).count();
    let counters = time_counters + usize::from(packet_counter);
    let limit = cx.target.vcg_counters;
    if counters <= limit {
        return;
    }
    let packet = if packet_counter {
        " plus the innermost Packet counter"
    } else {
        ""
    };
    let msg = format!(
        "the Valid Count Generator tracking {what} needs {counters} nested counters (one per \
         Time digit of m![{time}]{packet}), but its sequencer has only {limit} (L_0..L_{}): \
         merge Time axes or move some into Slice",
        limit.saturating_sub(1)
    );
    out.push(Diagnostic::new(&SEQ_011, step.span, msg));
}

/// Named axes with padding in any of `layouts` (a padded digit, or digits reaching past the
/// axis size), with whether one of their digits is in the last layout (the Packet).
fn padded_axes(layouts: &[&Layout]) -> Vec<(String, bool)> {
    let mut acc: Vec<(String, u64, u128, bool, bool)> = Vec::new();
    let last = layouts.len().saturating_sub(1);
    for (i, l) in layouts.iter().enumerate() {
        for d in &l.dims {
            let Dim::Factor(f) = d else { continue };
            let Some(a) = &f.axis else { continue };
            let reach = u128::from(f.valid.saturating_sub(1)) * u128::from(f.coef);
            let pad = f.valid < f.extent;
            match acc.iter_mut().find(|e| *e.0 == *a.name) {
                Some(e) => {
                    e.2 += reach;
                    e.3 |= pad;
                    e.4 |= i == last;
                }
                None => acc.push((a.name.to_string(), a.size, reach, pad, i == last)),
            }
        }
    }
    acc.into_iter()
        .filter(|(_, n, reach, pad, _)| *pad || *reach >= u128::from(*n))
        .map(|(name, _, _, _, in_packet)| (name, in_packet))
        .collect()
}

/// `BranchMode::ValidCount` takes each flit's valid count from the VCG: the flit's validity
/// must be a prefix (VCG-001), need at most 1 packet dim + 3 gates (VCG-008) and at most 8
/// counters (SEQ-011).
fn check_valid_count(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(arg) = step.args.first() else { return };
    if split_op(&arg.value_text()).map(|(_, v)| v) != Some("ValidCount") {
        return;
    }
    let input = step.input.as_ref();
    let (Some(slice), Some(time), Some(packet)) = (
        layout_of(input, Slot::Slice),
        layout_of(input, Slot::Time),
        layout_of(input, Slot::Packet),
    ) else {
        return;
    };
    if !(slice.is_regular() && time.is_regular() && packet.is_regular()) {
        return;
    }
    let packet_txt = text_of(input, Slot::Packet, packet);
    if packet.size <= 64 {
        let lanes: Vec<u64> = (0..packet.size)
            .filter(|&i| packet.map(i).is_some())
            .collect();
        let prefix = lanes.iter().enumerate().all(|(i, &l)| l == i as u64);
        if !prefix {
            let shown: Vec<String> = lanes.iter().map(u64::to_string).collect();
            let msg = format!(
                "`BranchMode::ValidCount` reads the VCG's valid count, which marks a contiguous \
                 prefix [0, vc) of each flit valid; Packet {packet_txt} holds data in lanes {{{}}}, \
                 not a prefix. Put the padding outermost in Packet (pad the whole packet, `m![.. \
                 # {}]`), or branch with another mode",
                shown.join(", "),
                cx.target.ve_way8_lanes
            );
            out.push(Diagnostic::new(&VCG_001, arg.span, msg));
        }
    }
    let axes = padded_axes(&[slice, time, packet]);
    let packet_dim = axes.iter().any(|(_, p)| *p);
    let gates = axes.len() - usize::from(packet_dim);
    let avail = cx.target.vcg_gate_dims + usize::from(!packet_dim);
    if gates > avail {
        let names: Vec<&str> = axes.iter().map(|(n, _)| n.as_str()).collect();
        let msg = format!(
            "{} padded axes ({}) need validity tracking, but the VCG has at most 4 validity \
             dimensions: 1 packet count and {} binary gates. Pad fewer axes (choose sizes that \
             fill their digits) or split the work into several passes",
            axes.len(),
            names.join(", "),
            cx.target.vcg_gate_dims
        );
        out.push(Diagnostic::new(&VCG_008, arg.span, msg));
    }
    if !axes.is_empty() {
        let names: Vec<&str> = axes.iter().map(|(n, _)| n.as_str()).collect();
        counter_limit(
            cx,
            step,
            &format!("the padded axes {}", names.join(", ")),
            time,
            packet_dim,
            out,
        );
    }
}

/// Edits turning `R # from` into `R # to` wherever the function writes a mapping: turbofish
/// arguments, parameter types and `let` annotations (the spans of [`MapVal`]s).
///
/// [`MapVal`]: crate::model::MapVal
fn pad_edits(model: &crate::model::FnModel, r: &str, from: u64, to: u64) -> Vec<Edit> {
    fn add_ty<'m>(ty: Option<&'m crate::model::TensorTy>, w: &mut Vec<(&'m str, Span)>) {
        for v in ty.into_iter().flat_map(|t| t.maps.values()) {
            if let Some(sp) = v.span {
                w.push((v.text.as_str(), sp));
            }
        }
    }
    let mut written: Vec<(&str, Span)> = Vec::new();
    for t in &model.tensors {
        add_ty(Some(&t.ty), &mut written);
    }
    for chain in &model.chains {
        add_ty(chain.declared.as_ref(), &mut written);
        for step in &chain.steps {
            add_ty(step.input.as_ref(), &mut written);
            add_ty(step.output.as_ref(), &mut written);
            for a in &step.generics {
                written.push((a.text.as_str(), a.span));
            }
        }
    }
    let mut edits = Vec::new();
    let from_txt = from.to_string();
    for (text, sp) in written {
        if sp.end.checked_sub(sp.start).map(|l| l as usize) != Some(text.len()) {
            continue;
        }
        for off in find_pad(text, r, &from_txt) {
            let start = sp.start as usize + off;
            edits.push(Edit {
                span: Span::new(start, start + from_txt.len()),
                new_text: to.to_string(),
            });
        }
    }
    edits.sort_by_key(|e| e.span);
    edits.dedup();
    edits
}

/// Edits replacing every mapping the function writes (parameter types, annotations, turbofish
/// arguments) whose value is `old` with `new_text`.
fn rewrite_mapping(model: &crate::model::FnModel, old: &Layout, new_text: &str) -> Vec<Edit> {
    let mut edits = Vec::new();
    let mut add = |ty: Option<&crate::model::TensorTy>| {
        for v in ty.into_iter().flat_map(|t| t.maps.values()) {
            if let (Some(sp), Some(l)) = (v.span, &v.layout)
                && **l == *old
                && v.text.trim_start().starts_with("m!")
            {
                edits.push(Edit {
                    span: sp,
                    new_text: new_text.to_string(),
                });
            }
        }
    };
    for t in &model.tensors {
        add(Some(&t.ty));
    }
    for chain in &model.chains {
        add(chain.declared.as_ref());
        for step in &chain.steps {
            add(step.input.as_ref());
            add(step.output.as_ref());
        }
    }
    edits.sort_by_key(|e| e.span);
    edits.dedup();
    edits
}

/// Byte offsets of the number in every `r # num` of `text`.
fn find_pad(text: &str, r: &str, num: &str) -> Vec<usize> {
    let b = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_' || c == b'\'';
    let mut out = Vec::new();
    let mut from = 0;
    while let Some(i) = text[from..].find(r).map(|i| i + from) {
        from = i + r.len();
        if i > 0 && ident(b[i - 1]) {
            continue;
        }
        let mut j = i + r.len();
        if j < b.len() && ident(b[j]) {
            continue;
        }
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if j >= b.len() || b[j] != b'#' {
            continue;
        }
        j += 1;
        while j < b.len() && b[j] == b' ' {
            j += 1;
        }
        if text[j..].starts_with(num) && !b.get(j + num.len()).is_some_and(|c| c.is_ascii_digit()) {
            out.push(j);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::analyse_text;

    fn codes(src: &str) -> Vec<(String, String)> {
        analyse_text(src)
            .diagnostics()
            .iter()
            .map(|d| (d.code().to_string(), d.message.clone()))
            .collect()
    }

    fn kernel(
        axes: &str,
        d: &str,
        slice: &str,
        time: &str,
        packet: &str,
        trim: &str,
        call: &str,
    ) -> String {
        format!(
            "axes![{axes}];\nfn k<'l, const T: Tu>(input: VectorBranchTensor<'l, T, {d}, m![1], m![1], m![{slice}], m![{time}], m![{packet}], {d}, NoTensor, {{ stage::VeOrder::IntraFirst }}>) {{\n    input.vector_trim_way4::<m![{trim}]>().{call};\n}}\n"
        )
    }

    #[test]
    fn l5519_slot_limit_twelve_rejected_eight_accepted() {
        // L5519-L5520: m![R, A % 2, B % 4] -> 8 slots (ok); m![R, A % 3, B % 4] -> 12 (rejected).
        let bad = kernel(
            "A = 6, B = 8, R = 16",
            "i32",
            "A / 3",
            "R, A % 3, B % 4",
            "B / 4 # 8",
            "B / 4",
            "vector_intra_slice_reduce::<R, m![A % 3, B % 4], m![B / 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&bad);
        assert!(
            d.iter().any(|(c, m)| c == "ISR-003"
                && m.starts_with("12 accumulator slots required, but only 8 are available")),
            "{d:?}"
        );
        let ok = kernel(
            "A = 4, B = 8, R = 16",
            "i32",
            "A / 2",
            "R, A % 2, B % 4",
            "B / 4 # 8",
            "B / 4",
            "vector_intra_slice_reduce::<R, m![A % 2, B % 4], m![B / 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(!codes(&ok).iter().any(|(c, _)| c == "ISR-003"));
    }

    #[test]
    fn l5797_transposed_r14_pad20_needs_16() {
        // L5785-L5797: R = 14 over 4 slices padded to 20: time 5 != ceil(14 / 4) = 4, pad to 16.
        let src = kernel(
            "R = 14, X = 64",
            "i32",
            "X, R # 20 % 4",
            "R # 20 / 4",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&src);
        let m = d
            .iter()
            .find(|(c, _)| c == "VCG-007")
            .map(|(_, m)| m.clone());
        let m = m.unwrap_or_default();
        assert!(m.contains("padded to 20 = 4 (Slice) x 5 (Time)"), "{m}");
        assert!(m.contains("ceil(14 / 4) = 4"), "{m}");
        assert!(m.contains("R # 16"), "{m}");
        // L5741-L5777: R = 5 padded to 8 over 4 slices, time 2 == ceil(5 / 4): supported.
        let ok = kernel(
            "R = 5, X = 64",
            "i32",
            "X, R # 8 % 4",
            "R # 8 / 4",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(codes(&ok).is_empty(), "{:?}", codes(&ok));
    }

    #[test]
    fn l6153_slice_packet_2045_partial_count_5() {
        // L6132-L6153: R = 2045 in Slice R # 2048 / 8 and Packet R # 2048 % 8: last slice vc 5.
        let src = kernel(
            "R = 2045",
            "i32",
            "R # 2048 / 8",
            "1",
            "R # 2048 % 8",
            "R # 2048 % 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&src);
        let m = d
            .iter()
            .find(|(c, _)| c == "VCG-005")
            .map(|(_, m)| m.clone());
        let m = m.unwrap_or_default();
        assert!(
            m.contains("packet valid count of 5 while the others need 8"),
            "{m}"
        );
        assert!(m.contains("`R # 2048 % 8` in Time"), "{m}");
        // L6540: n % stride_p == 0 (2040 = 255 * 8) is Slice only in disguise.
        let ok = kernel(
            "R = 2040",
            "i32",
            "R # 2048 / 8",
            "1",
            "R # 2048 % 8",
            "R # 2048 % 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(!codes(&ok).iter().any(|(c, _)| c.starts_with("VCG")));
    }

    #[test]
    fn l5858_slice_reorder_fix_text() {
        // L5844-L5858: the fix is Slice m![X, R # 16 / 8, R # 16 / 2 % 4].
        let src = kernel(
            "R = 13, X = 32",
            "i32",
            "X, R # 16 / 2 % 4, R # 16 / 8",
            "R # 16 % 2",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::Min)",
        );
        let d = codes(&src);
        let m = d
            .iter()
            .find(|(c, _)| c == "VCG-003")
            .map(|(_, m)| m.clone());
        let m = m.unwrap_or_default();
        assert!(
            m.contains("Use Slice m![X, R # 16 / 8, R # 16 / 2 % 4]"),
            "{m}"
        );
        assert!(m.contains("i32::MAX"), "{m}");
    }

    #[test]
    fn l5890_interleave_fix_and_l6026_packet_swap() {
        // L5877-L5890: fix Slice m![X, R # 16 / 4], Time m![R # 16 % 4].
        let src = kernel(
            "R = 13, X = 64",
            "i32",
            "X, R # 16 / 2 % 4",
            "R # 16 / 8, R # 16 % 2",
            "1 # 8",
            "1 # 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::Min)",
        );
        let m = codes(&src)
            .into_iter()
            .find(|(c, _)| c == "VCG-006")
            .map(|(_, m)| m)
            .unwrap_or_default();
        assert!(m.contains("R # 16 / 4], Time m![R # 16 % 4]"), "{m}");
        // L6025-L6026: Time m![R # 24 / 8], Packet m![R # 24 % 8].
        let src = kernel(
            "A = 8, R = 19, X = 64",
            "f32",
            "X, A / 2",
            "R # 24 % 8",
            "R # 24 / 8 # 8",
            "R # 24 / 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpF32::Add)",
        );
        let m = codes(&src)
            .into_iter()
            .find(|(c, _)| c == "VCG-002")
            .map(|(_, m)| m)
            .unwrap_or_default();
        assert!(
            m.contains("Time m![R # 24 / 8], Packet m![R # 24 % 8]"),
            "{m}"
        );
    }

    #[test]
    fn output_shape_and_ops() {
        let src = kernel(
            "A = 8, R = 16",
            "f32",
            "A / 2",
            "R / 4, A % 2",
            "R % 4 # 8",
            "R % 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "ISR-002" && m.contains("i.e. m![A % 2]")),
            "{d:?}"
        );
        assert!(d.iter().any(|(c, _)| c == "ISR-001"), "{d:?}");
    }

    #[test]
    fn vcg_007_fix_edits_padding_in_parameter_type() {
        // L5807: "Use R # 16 instead of R # 20", applied where the mapping is written.
        let src = "axes![A = 4, R = 14, X = 64];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![1 # 2], m![X, R # 20 % 4], m![R # 20 / 4], m![A # 8]>) {\n    c.vector_init().vector_intra_slice_branch(BranchMode::Unconditional).vector_trim_way4::<m![A]>().vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpI32::AddSat);\n    let d = c.vector_init().vector_intra_slice_branch(BranchMode::Unconditional);\n}\n";
        let all = analyse_text(src).diagnostics();
        let d = all.iter().find(|d| d.code() == "VCG-007");
        assert!(d.is_some(), "{all:?}");
        // R # 20 is written twice in the parameter type: both are edited to R # 16.
        let fix = d.and_then(|d| d.fixes.first());
        let edits: Vec<(usize, &str)> = fix
            .map(|f| {
                f.edits
                    .iter()
                    .map(|e| (e.span.start as usize, e.new_text.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        assert_eq!(edits.len(), 2, "{edits:?}");
        for (at, text) in edits {
            assert_eq!(text, "16");
            assert_eq!(&src[at..at + 2], "20");
        }
    }

    #[test]
    fn l5562_exp_sum_cannot_use_identity_padding() {
        // L5562-L5563: exp(x) + exp(y) + ...: no p has exp(p) = 0, so the unsupported
        // placement becomes ISR-004; a Max over exp keeps the VCG diagnostic.
        let src = kernel(
            "A = 4, R = 14, X = 64",
            "f32",
            "X, R # 20 % 4",
            "R # 20 / 4",
            "A # 8",
            "A",
            "vector_fp_unary(FpUnaryOp::Exp).vector_intra_slice_reduce::<R, m![1], m![A]>(IntraSliceReduceOpF32::Add)",
        );
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "ISR-004" && m.contains("Exp(p) = 0")),
            "{d:?}"
        );
        assert!(!d.iter().any(|(c, _)| c == "VCG-007"), "{d:?}");
        let src = src.replace("IntraSliceReduceOpF32::Add", "IntraSliceReduceOpF32::Max");
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "VCG-007" && m.contains("f32::NEG_INFINITY")),
            "{d:?}"
        );
    }

    /// A `BranchMode::ValidCount` branch over a collected i32 stream.
    fn valid_count(axes: &str, slice: &str, time: &str, packet: &str) -> Vec<(String, String)> {
        codes(&format!(
            "axes![{axes}];\nfn k<'l, const T: Tu>(c: CollectTensor<'l, T, i32, m![1], m![1 # 2], m![{slice}], m![{time}], m![{packet}]>) {{\n    c.vector_init().vector_intra_slice_branch(BranchMode::ValidCount).vector_final();\n}}\n"
        ))
    }

    #[test]
    fn l6177_valid_count_prefix_and_l6459_four_dimensions() {
        // L6177-L6179: lanes 0, 2, 4, 6 are not a prefix; L6459: 1 packet dim + 3 gates.
        let d = valid_count("A = 4, B = 16, X = 256", "X", "B", "A, 1 # 2");
        assert!(
            d.iter()
                .any(|(c, m)| c == "VCG-001" && m.contains("lanes {0, 2, 4, 6}")),
            "{d:?}"
        );
        assert!(valid_count("A = 4, B = 16, X = 256", "X", "B", "A # 8").is_empty());
        let axes = "A = 3, B = 60, C = 3, D = 3, E = 5";
        let d = valid_count(axes, "A # 4, B # 64", "C # 4, D # 4", "E # 8");
        assert!(
            d.iter()
                .any(|(c, m)| c == "VCG-008" && m.starts_with("5 padded axes (A, B, C, D, E)")),
            "{d:?}"
        );
        // L6553: with no padded axis in Packet the packet dim is a fourth gate.
        let d = valid_count(axes, "A # 4, B # 64", "C # 4, D # 4", "1 # 8");
        assert!(!d.iter().any(|(c, _)| c == "VCG-008"), "{d:?}");
    }

    #[test]
    fn l6213_eight_counters_and_l6284_innermost_packet_counter() {
        // L6213: up to 8 nested counters; 8 Time digits + the Packet counter = 9.
        let src = kernel(
            "A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, R = 14, X = 256",
            "f32",
            "X",
            "A, B, C, D, E, F, G, R # 16 / 4",
            "R # 16 % 4 # 8",
            "R # 16 % 4",
            "vector_intra_slice_reduce::<R, m![A, B, C, D, E, F, G], m![1 # 4]>(IntraSliceReduceOpF32::Add)",
        );
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "SEQ-011" && m.contains("needs 9 nested counters")),
            "{d:?}"
        );
        // L6284: padding inside R's packet part makes the innermost counter a padding one.
        let src = kernel(
            "R = 3, X = 256",
            "f32",
            "X",
            "R # 4 / 2",
            "[R # 4 % 2, 1 # 2] # 8",
            "R # 4 % 2, 1 # 2",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpF32::Add)",
        );
        let d = codes(&src);
        assert!(
            d.iter()
                .any(|(c, m)| c == "VCG-009" && m.contains("Packet m![R # 4 % 2 # 8]")),
            "{d:?}"
        );
    }

    #[test]
    fn l5903_time_order_and_l6540_aligned_packet_stay_silent() {
        // VCG-004 (L5611, L5903): R's Time factors reversed around X; VCG-010 (L6540): R = 2040
        // over Slice and Packet has no partial packet.
        let src = kernel(
            "A = 4, R = 13, X = 2, Y = 128",
            "i32",
            "Y, R # 16 / 8",
            "R # 16 % 2, X, R # 16 / 2 % 4",
            "A # 8",
            "A",
            "vector_intra_slice_reduce::<R, m![X], m![A]>(IntraSliceReduceOpI32::Max)",
        );
        assert!(codes(&src).is_empty(), "{:?}", codes(&src));
        let src = kernel(
            "R = 2040",
            "i32",
            "R # 2048 / 8",
            "1",
            "R # 2048 % 8",
            "R # 2048 % 4",
            "vector_intra_slice_reduce::<R, m![1], m![1 # 4]>(IntraSliceReduceOpI32::AddSat)",
        );
        assert!(
            !codes(&src).iter().any(|(c, _)| c.starts_with("VCG")),
            "{:?}",
            codes(&src)
        );
    }

    /// Applies the first fix of the first `code` diagnostic of `text` that has one.
    fn fixed(text: &str, code: &str) -> Option<String> {
        crate::rules::fix_testing::apply(text, code, 0)
    }

    #[test]
    fn l5807_l5858_l5890_fixes_rewrite_parameter_and_return_types() {
        // L5779-L5807: "Use R # 16 instead of R # 20", written in the parameter and the return
        // type; L5838-L5858: the Slice reordered in both; L5871-L5890: the standard split
        // Slice m![X, R # 16 / 4], Time m![R # 16 % 4]. The fixed kernels are silent.
        for (text, code) in [
            (
                include_str!("../../../fixtures/manual/5779_vcg_transposed_unsupported_err.rs"),
                "VCG-007",
            ),
            (
                include_str!("../../../fixtures/manual/5838_vcg_non_outer_inner_ordering_err.rs"),
                "VCG-003",
            ),
            (
                include_str!("../../../fixtures/manual/5871_vcg_time_slice_time_interleave_err.rs"),
                "VCG-006",
            ),
        ] {
            let Some(after) = fixed(text, code) else {
                panic!("{code}: no fix");
            };
            let left = crate::check_text(&after);
            assert!(left.is_empty(), "{code}: {left:?}\n{after}");
        }
    }

    #[test]
    fn pad_text_search() {
        assert_eq!(find_pad("m![X, R # 20 % 4]", "R", "20"), vec![10]);
        assert_eq!(
            find_pad("m![RR # 20, R #200]", "R", "20"),
            Vec::<usize>::new()
        );
        assert_eq!(
            split_op(" IntraSliceReduceOpI32::Min "),
            Some(("IntraSliceReduceOpI32", "Min"))
        );
    }
}
