//! VEC: the Vector Engine's intra-slice block (constraints.md §11): block entries, the stage
//! order, Way8/Way4 lane modes, per-stage data types, single use of each ALU per pass, the
//! stash, operands, branch modes, argument modes and two-group mode. Each chain is walked as one
//! Vector Engine pass from `vector_init()` (or from the typestate of a helper's input tensor)
//! to `vector_final()`; ops and operands are read from the arguments as written.
//!
//! The Way4 requirement of `vector_intra_slice_reduce` is ISR-001 and the stages an IntraFirst
//! `vector_inter_slice_reduce` may follow are XSL-002 (other families), so they are not
//! reported here.

use super::context::FnContext;
use crate::diagnostic::{Diagnostic, Edit, Severity, Span};
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Arg, Dtype, Engine, Kind, Method, Slot, Step, TensorTy, VeStage};
use crate::rule::{Generations, Rule, Status};

pub const VEC_001: Rule = Rule {
    code: "VEC-001",
    name: "vector-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Vector Engine takes i32 or f32 streams only (`D: VeScalar`)",
    docs: "`vector_init()` requires `D: VeScalar`, i.e. i32 or f32: every Vector Engine lane is a \
           32-bit value. Lower-precision data must be widened before it reaches the Vector Engine, \
           either by a casting fetch (`fetch::<f32, ..>()` from bf16, `fetch::<i32, ..>()` from \
           i8, subject to the fetch cast limits) or by the Contraction Engine, whose accumulator \
           is already i32/f32.",
    bad: "ctx.main.begin(a.view()).fetch::<bf16, m![1], m![A % 16]>().collect::<..>().vector_init()",
    good: "ctx.main.begin(a.view()).fetch::<f32, m![1], m![A % 8]>().collect::<..>().vector_init()",
    manual: "L3041, L4551, L4563-L4565, L5254",
    generations: Generations::Both,
};

pub const VEC_002: Rule = Rule {
    code: "VEC-002",
    name: "vector-block-entry",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "After `vector_init()` enter a block: `vector_intra_slice_branch`, `vector_intra_slice_unzip` or `vector_inter_slice_reduce`",
    docs: "A `VectorInitTensor` only offers the three block entries. `vector_intra_slice_unzip()` \
           is available only directly from `vector_init()`; `vector_intra_slice_branch()` enters \
           the intra-slice block from `vector_init()` or continues after \
           `vector_inter_slice_reduce()`; after an inter-slice reduce only \
           `vector_intra_slice_branch()` or `vector_final()` follow. Insert \
           `.vector_intra_slice_branch(BranchMode::Unconditional)` after `vector_init()`.",
    bad: "input.vector_init().vector_fxp(FxpBinaryOp::AddFxp, 100).vector_final()",
    good: "input.vector_init().vector_intra_slice_branch(BranchMode::Unconditional).vector_fxp(FxpBinaryOp::AddFxp, 100).vector_final()",
    manual: "L4581, L4722-L4726, L4748-L4749, L6610",
    generations: Generations::Both,
};

pub const VEC_003: Rule = Rule {
    code: "VEC-003",
    name: "vector-stage-order",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Intra-slice stages run in hardware order, each at most once per pass (only ALU stages take several ops)",
    docs: "The intra-slice block is a fixed pipeline: Branch → Logic → Fxp → FxpToFp → Narrow → \
           Float → IntraSliceReduce → FpDiv → Widen → FpToFxp → Clip → Filter → Output. Every \
           stage is optional, but a pass only moves forward; Logic, Fxp, Float and Clip accept \
           several ops as long as they use distinct ALUs (VEC-004), the other stages run once. An \
           op that needs an earlier stage needs a second Tensor Unit pass: end the pass with \
           `vector_final()` and `commit`, then `begin` again from the intermediate in DM. VEC-015 offers the split as a quick fix.",
    bad: ".vector_clip(ClipBinaryOpI32::Max, 0).vector_fxp(FxpBinaryOp::AddFxp, 1)",
    good: ".vector_fxp(FxpBinaryOp::AddFxp, 1).vector_clip(ClipBinaryOpI32::Max, 0)",
    manual: "L4678, L4686-L4718, L4730, L4733-L4747, L4750",
    generations: Generations::Both,
};

pub const VEC_004: Rule = Rule {
    code: "VEC-004",
    name: "vector-alu-single-use",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Each ALU of the Logic, Fxp, Float and Clip stages is used at most once per pass",
    docs: "Ops of one stage share a pool of ALUs (Logic: LogicAnd/Or/Xor/Lshift/Rshift; Fxp: \
           FxpAdd/Lshift/Mul/Rshift; Float: FpFma/FpFpu/FpExp/FpMul0/FpMul1; Clip: \
           ClipAdd/Max/Min) and each ALU runs once per pass: `AddFxp` then `SubFxp` both need \
           FxpAdd and panic with \"FxpAdd is already in use\"; `tanh(sqrt(x))` needs FpFpu twice. \
           Use the twin multiplier (`FpMulAlu::Mul1` next to `Mul0`), move an add to the Clip \
           stage (`ClipBinaryOpI32::AddFxp`), or split the work into two Tensor Unit passes with \
           the intermediate in DM. In two-group mode an ALU used by either group is used for both. \
           A pass written across helper calls (a helper given a stream in mid-pass, or \
           returning one its caller continues) is one pass: the ALUs its parts take are \
           counted together and a reuse is reported at the call. VEC-015 offers the split as a \
           quick fix.",
    bad: ".vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2).vector_fxp(FxpBinaryOp::SubFxp, 5)",
    good: ".vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2).vector_clip(ClipBinaryOpI32::AddFxp, -5)",
    manual: "L4750, L4805-L4836, L4877-L4906, L4955-L4972, L5205, L5253, L5260-L5269",
    generations: Generations::Both,
};

pub const VEC_005: Rule = Rule {
    code: "VEC-005",
    name: "vector-way-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Float and FpDiv run in Way4 (after Narrow); Logic, Fxp, FxpToFp, FpToFxp, Clip, Filter and Output in Way8",
    docs: "Way8 carries 8 lanes per flit, Way4 carries 4. `vector_split`/`vector_trim_way4` \
           narrow to Way4 for the float path, `vector_concat`/`vector_pad_way8` widen back. A float \
           op on a Way8 stream, or a Way8 stage (or `vector_final`) on a Way4 stream, has no \
           hardware path. (The Way4 requirement of `vector_intra_slice_reduce` is ISR-001.)",
    bad: ".vector_intra_slice_branch(BranchMode::Unconditional).vector_fp_unary(FpUnaryOp::Sigmoid)",
    good: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sigmoid).vector_pad_way8::<m![A % 2 # 8]>()",
    manual: "L4731, L4733-L4747, L4804, L4822, L4845-L4847, L4875-L4876, L4915, L4954",
    generations: Generations::Both,
};

pub const VEC_006: Rule = Rule {
    code: "VEC-006",
    name: "vector-narrow-widen-pairing",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`vector_concat` reverses `vector_split`, `vector_pad_way8` reverses `vector_trim_way4`; Way4 packets have 4 lanes, Way8 packets 8",
    docs: "Split moves the upper half of each 8-lane packet into Time ([T],[P] → [T, P / 2],[P % 4]) \
           and concat undoes it; trim keeps lanes 0-3 ([P] → [P = 4]) and pad_way8 pads them back \
           to 8 ([P] → [P # 8]). Mixing the two pairs, widening a stream that was never narrowed, \
           or a Narrow packet that is not 4 lanes (Widen: 8 lanes) does not describe the hardware \
           flit. Pad the packet: `m![A % 2 # 4]` after trim, `m![A % 2 # 8]` after pad_way8. \
           One mix is accepted: `vector_pad_way8` after `vector_split` once an op in between \
           (such as `vector_intra_slice_reduce`) has removed the Time factor the split made, so \
           there is nothing left for concat to join. The library checks the shapes only \
           (\"vector_pad_way8: input Packet must have 4 elements\", \"Packet2 must be Packet padded \
           to 8\", \"Concat requires Packet of 4 elements\"), not the pairing; the pairing stays an \
           error here because a pad_way8 that leaves the split's lanes in Time (or a concat that \
           joins a Time factor trim never made) produces a different layout from the one the \
           narrowing started from, which is what the manual's pairs are for.",
    bad: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Exp).vector_pad_way8::<m![A % 2]>()",
    good: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Exp).vector_pad_way8::<m![A % 2 # 8]>()",
    manual: "L4843-L4873, L4919-L4947",
    generations: Generations::Both,
};

pub const VEC_007: Rule = Rule {
    code: "VEC-007",
    name: "trim-way4-drops-data",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "`vector_trim_way4` only when lanes 4-7 of the packet are padding",
    docs: "Trim keeps the lower 4 lanes of each 8-lane packet and discards the rest. If the \
           incoming Packet maps a tensor element to lane 4 or above, that element is silently \
           lost. Use `vector_split::<m![T, P / 2], m![P % 4]>()` (and `vector_concat` to widen) \
           when both halves carry data, or pad the packet so only 4 lanes are valid.",
    bad: "// Packet m![A % 8]\n.vector_trim_way4::<m![A % 4]>()",
    good: "// Packet m![A % 8]\n.vector_split::<m![A / 4 % 2], m![A % 4]>()",
    manual: "L4851, L6578, L6582",
    generations: Generations::Both,
};

pub const VEC_008: Rule = Rule {
    code: "VEC-008",
    name: "vector-stage-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Fxp and FxpToFp take i32; Float, FpDiv and FpToFxp take f32; op enums match the stream type",
    docs: "The Fxp cluster computes on i32, the Float cluster and FpDiv on f32. `vector_fxp_to_fp(w)` \
           converts i32 → f32 and `vector_fp_to_fxp(w)` converts back. Clip ops come in \
           `ClipBinaryOpI32` and `ClipBinaryOpF32`, which must match the stream's element type. \
           (The Narrow/Widen table says f32 but the manual's examples split i32 streams, \
           constraints.md §22 A-11: both are accepted.)",
    bad: "// f32 stream\n.vector_fxp(FxpBinaryOp::AddFxp, 1)",
    good: "// f32 stream\n.vector_trim_way4::<P4>().vector_fp_binary(FpBinaryOp::AddF, 1.0f32)",
    manual: "L4735-L4747, L4822, L4837-L4842, L4875, L4948-L4972",
    generations: Generations::Both,
};

pub const VEC_009: Rule = Rule {
    code: "VEC-009",
    name: "logic-f32-shift",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "On f32 the Logic stage only has BitAnd, BitOr and BitXor",
    docs: "The Logic cluster's shifts (`LeftShift`, `LogicRightShift`, `ArithRightShift`) exist for \
           i32 only; on f32 bit patterns it offers bitwise and/or/xor. Convert with \
           `vector_fp_to_fxp` in an earlier pass, or shift in the Fxp stage on an i32 stream.",
    bad: "// f32 stream\n.vector_logic(LogicBinaryOp::LeftShift, 1)",
    good: "// f32 stream\n.vector_logic(LogicBinaryOp::BitAnd, 0x7fff_ffff)",
    manual: "L4806-L4820",
    generations: Generations::Both,
};

pub const VEC_010: Rule = Rule {
    code: "VEC-010",
    name: "vector-stash",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "One typed stash per pass, taken at a Stashable stage, consumed at most once",
    docs: "`vector_stash()` snapshots the stream at a Stashable stage (Branch, Logic, Fxp, Narrow, \
           Float, FpDiv, Clip) into a single slot; a later binary or ternary op reads it as the \
           `Stash` operand. The slot is typed (an f32 stash feeds only f32 ops, an i32 stash only \
           i32 ops), it is not available after a binary op consumed it, and there is one per \
           pass. (Stash in two-group mode is VEC-013.)",
    bad: ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, Stash).vector_clip(ClipBinaryOpI32::Max, Stash)",
    good: ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, 100).vector_clip(ClipBinaryOpI32::Max, Stash)",
    manual: "L4977-L4988, L5006, L5059, L5258",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 also reads a stash at the scalar and the way it was written with, and \
         refuses a stash in pair mode at compile time (CHANGES.md:56, 111); visa-lint checks the \
         manual's one stash, read once (L4977-L4988), under both",
    ),
};

pub const VEC_011: Rule = Rule {
    code: "VEC-011",
    name: "vector-operand",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Operands are a constant of the stream's type, a VRF tensor loaded with `to_vrf`, or `Stash`",
    docs: "A binary or ternary op's operand is a scalar constant broadcast to every lane (an i32 \
           literal for i32 streams, an f32 literal for f32 streams), a `VrfTensor` pre-loaded with \
           `.to_vrf(addr)` (`VeRhs::vrf(&v)` or `&v`) on the same Chip, Cluster and Slice as the \
           stream, or `Stash`. A DM tensor cannot be an operand: load it into the VRF first. \
           (The manual's \"FxpMul operand must come from the VRF\" is contradicted by its own \
           examples, constraints.md §22 A-10, and is not enforced.)",
    bad: "// i32 stream\n.vector_fxp(FxpBinaryOp::AddFxp, 1.5f32)",
    good: "// i32 stream\n.vector_fxp(FxpBinaryOp::AddFxp, 2)",
    manual: "L223, L5052-L5063, L5065-L5080, L5256",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 writes an operand bare (a constant, `&vrf` or `Stash`) or through \
         `Branched::imm(guard, v).rf(guard, &vrf)`, and has no `VeRhs` \
         (`furiosa-opt-std/src/engine/vector/operand.rs:370-418`; CHANGES.md:46); visa-lint reads \
         the bare forms under both",
    ),
};

pub const VEC_012: Rule = Rule {
    code: "VEC-012",
    name: "branch-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`BranchMode` is Unconditional, AxisToggle, ValidCount, Comparison([InputCmp; 4]) or Vrf",
    docs: "Branch assigns every 32-bit lane a 4-bit ExecutionId (0-15). The modes are \
           `Unconditional`, `AxisToggle { axis }`, `ValidCount`, `Comparison([InputCmp; 4])` (exactly \
           four comparisons set the four branch bits) and `Vrf` (ids pre-written by a Branch Logger).",
    bad: ".vector_intra_slice_branch(BranchMode::Comparison([c0, c1, c2]))",
    good: ".vector_intra_slice_branch(BranchMode::Comparison([c0, c1, c2, c3]))",
    manual: "L4795-L4802, L5255",
    generations: Generations::VisaStdOnly(
        "furiosa-opt-std 0.6 has no `BranchMode`: `vector_intra_slice_tag` takes `TagMode<D>`, \
         whose `ValidCount` and `Vrf` are withheld and whose comparisons are `Cmp<D>` \
         (CHANGES.md:49-50)",
    ),
};

pub const VEC_013: Rule = Rule {
    code: "VEC-013",
    name: "two-group-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Two-group mode: the grouping axis is in Time, a `_zip` op merges before `vector_final`, no stash or filter",
    docs: "`vector_intra_slice_unzip::<I, TileTime, SplitTime>()` splits a stream whose Time carries \
           the 2-way grouping axis `I` (from `begin_interleaved`) into two lock-step groups. One \
           `_zip` op (`vector_clip_zip`, `vector_fp_zip`, `vector_fxp_zip_with_mode`, ...) merges \
           them before `vector_final()`; a `_zip` op needs a pair. `vector_stash()` and \
           `vector_filter()` are unavailable while paired and after the zip.",
    bad: ".vector_intra_slice_unzip::<I, m![1 # 2], m![1]>().vector_fxp(FxpBinaryOp::MulInt, 10, ()).vector_final()",
    good: ".vector_intra_slice_unzip::<I, m![1 # 2], m![1]>().vector_fxp(FxpBinaryOp::MulInt, 10, ()).vector_clip_zip(ClipBinaryOpI32::AddFxp).vector_final()",
    manual: "L5155-L5165, L5201-L5205, L5259",
    generations: Generations::Both,
};

pub const VEC_014: Rule = Rule {
    code: "VEC-014",
    name: "argument-mode",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "`*_with_mode` takes the mode enum of its arity (Unary/Binary/TernaryArgMode), and a mode that reads the operand needs one",
    docs: "Unary ops take `UnaryArgMode::{Mode0, Mode1}`, binary ops (and `_zip` ops) \
           `BinaryArgMode::{Mode00, Mode01, Mode10, Mode11}`, ternary ops \
           `TernaryArgMode::{Mode012, Mode002, Mode102, Mode112, Mode020, Mode021, Mode120}`. A \
           mode with a `1` reads the operand, so a single-stream binary op with such a mode needs \
           one.",
    bad: ".vector_fxp_with_mode(FxpBinaryOp::SubFxp, UnaryArgMode::Mode1, 7)",
    good: ".vector_fxp_with_mode(FxpBinaryOp::SubFxp, BinaryArgMode::Mode10, 7)",
    manual: "L5083-L5117",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no `vector_fp_unary_with_mode`: a guarded unary op is \
         `vector_fp_unary((guard, op))` \
         (`furiosa-opt-std/src/engine/vector/tensor/vector_tensor.rs:1295-1303`), so only its \
         other `*_with_mode` ops can break the rule there",
    ),
};

pub const VEC_015: Rule = Rule {
    code: "VEC-015",
    name: "split-into-passes",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Conflicting ops need separate Tensor Unit passes with the intermediate in DM or TRF",
    docs: "The quick fix that goes with the first VEC-003 (stage order) or VEC-004 (ALU reuse) of \
           a `ctx.main.begin(..)` pipeline: the first pass ends in front of the conflicting op \
           with `vector_final()` and `commit::<Element>(addr)`, and a second pass begins from the \
           intermediate (`begin(tmp.view()).fetch().collect().vector_init()\
           .vector_intra_slice_branch(BranchMode::Unconditional)`) and continues with the \
           conflicting op. The intermediate's Element is the stream's Time and Packet; `addr` is \
           8-byte aligned, fits the 512 KB slice and clears every DM range the function places \
           with a known address (parameters' addresses are not known: review them). A cut in a \
           Way4 section after `vector_trim_way4` widens (`vector_pad_way8`) before the commit and \
           narrows again after the new branch. Not offered inside two-group mode, with a live \
           stash, or after `vector_split`.",
    bad: ".vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sqrt).vector_fp_unary(FpUnaryOp::Tanh)",
    good: "let pass1 = ctx.main.begin(x.view())/* .. */.vector_fp_unary(FpUnaryOp::Sqrt).vector_pad_way8::<m![A % 2 # 8]>().vector_final().commit::<m![B, A % 2 # 8]>(0x2100);\nctx.main.begin(pass1.view()).fetch::<f32, m![B], m![A % 2 # 8]>().collect::<m![B], m![A % 2 # 8]>().vector_init().vector_intra_slice_branch(BranchMode::Unconditional).vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Tanh)/* .. */",
    manual: "L4750, L5253",
    generations: Generations::Both,
};

pub const VEC_016: Rule = Rule {
    code: "VEC-016",
    name: "float-path-throughput",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "The Way4 float path halves Vector Engine throughput; each ALU adds one cycle of latency",
    docs: "Logic, Fxp and Clip process 8 lanes per cycle, the Float cluster and the reduce 4 \
           (cost-model.md P19). `vector_split` moves lanes 4-7 into Time, so the Way4 section \
           carries twice the packets; `vector_trim_way4` keeps the packet count but needs lanes \
           4-7 to be padding. Reported where the cost can be avoided: a `vector_split` whose \
           Packet holds data in lanes 0-3 only (trim instead), and a split/concat pair with no \
           float, reduce or FpDiv op between them (drop both). A float path that needs both \
           halves is not reported.",
    bad: "// Packet m![A % 2 # 8]\n.vector_split::<m![B, 1 # 2], m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sigmoid).vector_concat::<m![B], m![A % 2 # 8]>()",
    good: "// Packet m![A % 2 # 8]\n.vector_trim_way4::<m![A % 2 # 4]>().vector_fp_unary(FpUnaryOp::Sigmoid).vector_pad_way8::<m![A % 2 # 8]>()",
    manual: "L4847-L4851, L5257, L5272-L5277",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    VEC_001, VEC_002, VEC_003, VEC_004, VEC_005, VEC_006, VEC_007, VEC_008, VEC_009, VEC_010,
    VEC_011, VEC_012, VEC_013, VEC_014, VEC_015, VEC_016,
];

/// The intra-slice stage a method belongs to (L4733-L4747); `None` for the block entries
/// other than Branch, `vector_stash` and non-vector methods.
fn stage_of(method: &Method) -> Option<VeStage> {
    method
        .ve_stage()
        .filter(|s| !matches!(s, VeStage::Init | VeStage::Pair | VeStage::InterSliceReduce))
}

/// Position in the intra-slice pipeline (L4686-L4718); a two-group pair sits at Branch.
fn rank(s: VeStage) -> u8 {
    match s {
        VeStage::Init => 0,
        VeStage::Branch | VeStage::Pair | VeStage::InterSliceReduce => 1,
        VeStage::Logic => 2,
        VeStage::Fxp => 3,
        VeStage::FxpToFp => 4,
        VeStage::Narrow => 5,
        VeStage::Fp => 6,
        VeStage::IntraSliceReduce => 7,
        VeStage::FpDiv => 8,
        VeStage::Widen => 9,
        VeStage::FpToFxp => 10,
        VeStage::Clip => 11,
        VeStage::Filter => 12,
        VeStage::Final => 13,
    }
}

/// The stage's name in the manual's stage table.
fn stage_name(s: VeStage) -> &'static str {
    match s {
        VeStage::Init => "Init",
        VeStage::Branch => "Branch",
        VeStage::Logic => "Logic",
        VeStage::Fxp => "Fxp",
        VeStage::FxpToFp => "FxpToFp",
        VeStage::Narrow => "Narrow",
        VeStage::Fp => "Float",
        VeStage::IntraSliceReduce => "IntraSliceReduce",
        VeStage::FpDiv => "FpDiv",
        VeStage::Widen => "Widen",
        VeStage::FpToFxp => "FpToFxp",
        VeStage::Clip => "Clip",
        VeStage::Filter => "Filter",
        VeStage::InterSliceReduce => "InterSliceReduce",
        VeStage::Pair => "two-group Branch",
        VeStage::Final => "Output",
    }
}

/// Stages with a pool of ALUs, which may take several ops in one pass (L4750).
fn has_alu_pool(s: VeStage) -> bool {
    matches!(
        s,
        VeStage::Logic | VeStage::Fxp | VeStage::Fp | VeStage::Clip
    )
}

/// Stages that run in Way4 (L4733-L4747).
fn is_way4(s: VeStage) -> bool {
    matches!(
        s,
        VeStage::Narrow | VeStage::Fp | VeStage::IntraSliceReduce | VeStage::FpDiv
    )
}

/// Stages a `vector_stash()` may follow (L4983).
fn stashable(s: VeStage) -> bool {
    matches!(
        s,
        VeStage::Branch
            | VeStage::Logic
            | VeStage::Fxp
            | VeStage::Narrow
            | VeStage::Fp
            | VeStage::FpDiv
            | VeStage::Clip
    )
}

/// An op enum literal as written: `FxpBinaryOp::AddFxp`, `FpBinaryOp::MulF(FpMulAlu::Mul0)`.
#[derive(Debug, PartialEq, Eq)]
struct Op<'a> {
    /// The enum's name (`FxpBinaryOp`), empty when written without a path.
    ty: &'a str,
    variant: &'a str,
    /// The variant's payload's last path segment (`Mul0`) and its byte offset in the text.
    lane: Option<(&'a str, usize)>,
}

fn is_ident(s: &str) -> bool {
    !s.is_empty()
        && s.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with(|c: char| c.is_ascii_digit())
}

fn parse_op(text: &str) -> Option<Op<'_>> {
    let text = text.trim();
    let (head, payload) = match text.find(['(', '{']) {
        Some(i) => (&text[..i], Some(i)),
        None => (text, None),
    };
    let head = head.trim();
    let (ty, variant) = match head.rfind("::") {
        Some(i) => {
            let path = &head[..i];
            let ty = path.rsplit("::").next().unwrap_or(path);
            (ty, &head[i + 2..])
        }
        None => ("", head),
    };
    if !is_ident(variant) {
        return None;
    }
    let lane = payload.and_then(|open| {
        let close = text.rfind([')', '}'])?;
        if close <= open {
            return None;
        }
        let inner = &text[open + 1..close];
        let trimmed = inner.trim();
        let seg_start = trimmed.rfind("::").map_or(0, |i| i + 2);
        let seg = &trimmed[seg_start..];
        if !is_ident(seg) {
            return None;
        }
        let lead = inner.len() - inner.trim_start().len();
        Some((seg, open + 1 + lead + seg_start))
    });
    Some(Op { ty, variant, lane })
}

/// The ALU an op of `stage` uses (tables L4806-L4836, L4878-L4904, L4956-L4972).
fn alu(stage: VeStage, op: &Op<'_>) -> Option<&'static str> {
    let v = op.variant;
    Some(match stage {
        VeStage::Logic => match v {
            "BitAnd" => "LogicAnd",
            "BitOr" => "LogicOr",
            "BitXor" => "LogicXor",
            "LeftShift" => "LogicLshift",
            "LogicRightShift" | "ArithRightShift" => "LogicRshift",
            _ => return None,
        },
        VeStage::Fxp => match v {
            "AddFxp" | "AddFxpSat" | "SubFxp" | "SubFxpSat" => "FxpAdd",
            "LeftShift" | "LeftShiftSat" => "FxpLshift",
            "MulFxp" | "MulInt" => "FxpMul",
            "LogicRightShift" | "ArithRightShift" | "ArithRightShiftRound" => "FxpRshift",
            _ => return None,
        },
        VeStage::Fp => match v {
            "Exp" | "NegExp" => "FpExp",
            "Sqrt" | "Tanh" | "Sigmoid" | "Erf" | "Log" | "Sin" | "Cos" | "DivF" => "FpFpu",
            "AddF" | "SubF" | "FmaF" | "MaskFmaF" => "FpFma",
            "MulF" | "MaskMulF" => match op.lane.map(|l| l.0) {
                Some("Mul0") => "FpMul0",
                Some("Mul1") => "FpMul1",
                _ => return None,
            },
            _ => return None,
        },
        VeStage::Clip => match v {
            "Min" | "AbsMin" => "ClipMin",
            "Max" | "AbsMax" => "ClipMax",
            "AddFxp" | "AddFxpSat" | "Add" => "ClipAdd",
            _ => return None,
        },
        _ => return None,
    })
}

/// `word` occurs in `text` as a whole identifier.
fn has_word(text: &str, word: &str) -> bool {
    let bytes = text.as_bytes();
    let is_id = |b: u8| b.is_ascii_alphanumeric() || b == b'_';
    text.match_indices(word).any(|(i, _)| {
        let before = i == 0 || !is_id(bytes[i - 1]);
        let after = i + word.len() >= bytes.len() || !is_id(bytes[i + word.len()]);
        before && after
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Lit {
    Int,
    Float,
}

/// A numeric literal's kind (`100`, `-5`, `0x7f`, `2.5f32`, `0.0`).
fn literal(text: &str) -> Option<Lit> {
    let t = text.trim();
    let t = t.strip_prefix('-').unwrap_or(t).trim();
    if !t.starts_with(|c: char| c.is_ascii_digit()) {
        return None;
    }
    if t.ends_with("f32") || t.ends_with("f64") {
        return Some(Lit::Float);
    }
    if t.starts_with("0x") || t.starts_with("0b") || t.starts_with("0o") {
        return Some(Lit::Int);
    }
    let core = [
        "isize", "usize", "i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64",
    ]
    .iter()
    .find_map(|s| t.strip_suffix(s))
    .unwrap_or(t);
    if core.chars().all(|c| c.is_ascii_digit() || c == '_') {
        return Some(Lit::Int);
    }
    if core
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '_' | '.' | 'e' | 'E' | '+' | '-'))
    {
        return Some(Lit::Float);
    }
    None
}

/// The tensor a VRF operand names: `VeRhs::vrf(&v)`, `VeRhs::vrf(v)`, `&v`.
fn operand_var(text: &str) -> Option<&str> {
    let mut t = text.trim();
    if let Some(rest) = t.strip_prefix("VeRhs::vrf(") {
        t = rest.strip_suffix(')')?.trim();
    }
    let t = t.trim_start_matches('&').trim();
    let t = t.strip_prefix("mut ").unwrap_or(t).trim();
    is_ident(t).then_some(t)
}

/// `m![E]` with its padding set to `n` lanes: `m![A % 2]` -> `m![A % 2 # 4]`,
/// `m![A % 2 # 8]` -> `m![A % 2 # 4]`.
fn with_pad(text: &str, n: u64) -> Option<String> {
    let inner = text.trim().strip_prefix("m![")?.strip_suffix(']')?.trim();
    if let Some(i) = inner.rfind('#') {
        let tail = inner[i + 1..].trim();
        if tail.chars().all(|c| c.is_ascii_digit()) && !tail.is_empty() {
            return Some(format!("m![{} # {n}]", inner[..i].trim_end()));
        }
    }
    let mut depth = 0i32;
    let top_comma = inner.chars().any(|c| {
        match c {
            '[' | '(' => depth += 1,
            ']' | ')' => depth -= 1,
            _ => {}
        }
        c == ',' && depth == 0
    });
    Some(if top_comma {
        format!("m![[{inner}] # {n}]")
    } else {
        format!("m![{inner} # {n}]")
    })
}

/// Number of elements of a literal array `[a, b, c]` or `[x; n]`.
fn array_len(text: &str) -> Option<usize> {
    let open = text.find('[')?;
    let close = text.rfind(']')?;
    if close <= open {
        return None;
    }
    let inner = text[open + 1..close].trim();
    if inner.is_empty() {
        return Some(0);
    }
    let mut depth = 0i32;
    let mut parts = 1;
    for c in inner.chars() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' => depth -= 1,
            ',' if depth == 0 => parts += 1,
            ';' if depth == 0 => {
                let n = inner.rsplit(';').next()?.trim();
                return n.parse().ok();
            }
            _ => {}
        }
    }
    if inner.ends_with(',') {
        parts -= 1;
    }
    Some(parts)
}

/// Valid lanes (positions holding a tensor element) of a packet layout.
fn valid_lanes(l: &Layout) -> Option<Vec<u64>> {
    if l.size > 64 {
        return None;
    }
    Some((0..l.size).filter(|&i| l.map(i).is_some()).collect())
}

fn layout(ty: Option<&TensorTy>, slot: Slot) -> Option<&Layout> {
    ty?.get(slot)?.layout.as_deref()
}

/// The operands of a vector op: the value arguments after the op and the mode.
fn operands(step: &Step) -> impl Iterator<Item = &Arg> {
    step.args
        .iter()
        .skip(1)
        .filter(|a| !a.value_text().contains("ArgMode::"))
}

/// The state of one Vector Engine pass along a chain.
struct Pass<'a> {
    /// The current stage; `Init` right after `vector_init()`.
    stage: VeStage,
    /// The step that put the pass in its current stage.
    stage_step: Option<&'a Step>,
    /// The whole pass is in this chain (it starts at `vector_init()`), so the stash state is known.
    complete: bool,
    /// The Narrow step while the stream is in Way4.
    narrow: Option<&'a Step>,
    way4: bool,
    /// Float, IntraSliceReduce and FpDiv ops since the Narrow step (what the Way4 detour is for).
    way4_ops: usize,
    paired: bool,
    zipped: Option<&'a Step>,
    /// ALU -> the op argument that took it.
    alus: Vec<(&'static str, &'a Arg)>,
    stash: Option<&'a Step>,
    consumed: Option<&'a Arg>,
}

impl<'a> Pass<'a> {
    fn at(stage: VeStage, complete: bool) -> Pass<'a> {
        Pass {
            stage,
            stage_step: None,
            complete,
            narrow: None,
            way4: is_way4(stage),
            way4_ops: 0,
            paired: stage == VeStage::Pair,
            zipped: None,
            alus: Vec::new(),
            stash: None,
            consumed: None,
        }
    }
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        let before = out.len();
        // Per step: whether the pass could be cut in front of it (unpaired, no live stash, Way8
        // or narrowed by a `vector_trim_way4` whose packet is known).
        let mut cuttable: Vec<Option<Cut>> = vec![None; chain.steps.len()];
        let mut pass: Option<Pass<'_>> = None;
        for (i, step) in chain.steps.iter().enumerate() {
            if step.engine != Some(Engine::Vector) {
                if pass.as_ref().is_some_and(|p| p.stage == VeStage::Final) {
                    pass = None;
                }
                continue;
            }
            if step.method == Method::VectorInit {
                init_dtype(&chain.steps[..i], step, out);
                pass = Some(Pass::at(VeStage::Init, true));
                continue;
            }
            if pass.is_none() {
                let Some(Kind::Vector(s)) = step.input.as_ref().map(|t| t.kind) else {
                    continue;
                };
                pass = Some(Pass::at(s, false));
            }
            let Some(p) = pass.as_mut() else {
                continue;
            };
            let free = p.complete
                && !p.paired
                && p.zipped.is_none()
                && (p.stash.is_none() || p.consumed.is_some());
            cuttable[i] = match p.narrow {
                _ if !free => None,
                _ if !p.way4 => Some(Cut::Way8),
                Some(n) if n.method == Method::VectorTrimWay4 => n
                    .generics
                    .first()
                    .map(|g| Cut::Trimmed(g.text.trim().to_string())),
                _ => None,
            };
            vector_step(cx, p, step, out);
        }
        split_into_passes(cx, chain, &cuttable, before, out);
    }
}

/// Where a pass can be cut: in Way8, or in Way4 after `vector_trim_way4::<P4>()`.
#[derive(Clone, Debug)]
enum Cut {
    Way8,
    Trimmed(String),
}

/// VEC-015: the quick fix for the first VEC-003/VEC-004 of a chain: end the pass in front of
/// the conflicting op (`vector_final()` + `commit` to a free DM address) and begin a second
/// pass from the intermediate.
fn split_into_passes(
    cx: &FnContext<'_>,
    chain: &crate::model::Chain,
    cuttable: &[Option<Cut>],
    before: usize,
    out: &mut Vec<Diagnostic>,
) {
    let Some(conflict) = out[before..]
        .iter()
        .find(|d| matches!(d.code(), "VEC-003" | "VEC-004"))
    else {
        return;
    };
    let at = conflict.span;
    let Some(j) = chain
        .steps
        .iter()
        .position(|s| s.span == at || s.args.iter().any(|a| a.span == at))
    else {
        return;
    };
    let step = &chain.steps[j];
    // A whole main-context pipeline: `ctx.main.begin(..)` ... the conflicting op.
    let begins = chain.steps[..j]
        .iter()
        .any(|s| s.engine == Some(Engine::Begin) && s.context == Some(crate::model::Tu::Main));
    if !begins {
        return;
    }
    let Some(Some(cut)) = cuttable.get(j) else {
        return;
    };
    let Some(input) = step.input.as_ref() else {
        return;
    };
    let (Some(d), Some(time), Some(packet)) = (
        input.dtype,
        layout(Some(input), Slot::Time),
        layout(Some(input), Slot::Packet),
    ) else {
        return;
    };
    if !d.is_ve_scalar() || !time.is_regular() || !packet.is_regular() {
        return;
    }
    let text = |slot: Slot, l: &Layout| match input.get(slot) {
        Some(v) if v.text.trim_start().starts_with("m!") => v.text.trim().to_string(),
        _ => format!("m![{l}]"),
    };
    let n8 = cx.target.ve_way8_lanes;
    let time_txt = text(Slot::Time, time);
    // In Way4 the first pass widens back (`vector_pad_way8`) and the second narrows again.
    let (packet, packet_txt, widen, narrow) = match cut {
        Cut::Way8 => (
            packet.clone(),
            text(Slot::Packet, packet),
            String::new(),
            String::new(),
        ),
        Cut::Trimmed(p4) => {
            let Some(p8) = with_pad(p4, n8) else { return };
            (
                packet.window(n8),
                p8.clone(),
                format!("vector_pad_way8::<{p8}>()\n        ."),
                format!("\n        .vector_trim_way4::<{p4}>()"),
            )
        }
    };
    let packet = &packet;
    let element = if time.size == 1 {
        packet_txt.clone()
    } else {
        match time.pair(packet) {
            Ok(l) => format!("m![{l}]"),
            Err(_) => return,
        }
    };
    let Some(bytes) = time
        .size
        .checked_mul(packet.size)
        .and_then(|n| n.checked_mul(4))
    else {
        return;
    };
    let Some(addr) = free_dm_address(cx, bytes) else {
        return;
    };
    let names: Vec<&str> = cx.model.tensors.iter().map(|t| t.name.as_str()).collect();
    let mut tmp = "pass1".to_string();
    while names.contains(&tmp.as_str()) {
        tmp.push('_');
    }
    // `let out = ..` continues as `let out = ctx.main.begin(out.view())..` (shadowing); a
    // declared `let out: T = ..` keeps its type on the second pass by wrapping both in a block;
    // a plain statement binds the first pass to a new name.
    let (first, second_let, source, close) = match (&chain.binding, &chain.declared) {
        (Some(b), None) => (None, format!("let {b} = "), b.clone(), false),
        (Some(_), Some(_)) => (
            Some(format!("{{\n        let {tmp} = ")),
            String::new(),
            tmp,
            true,
        ),
        (None, _) => (Some(format!("let {tmp} = ")), String::new(), tmp, false),
    };
    let mut edits = Vec::new();
    if let Some(open) = first {
        let s = chain.span.start as usize;
        edits.push(crate::diagnostic::Edit {
            span: Span::new(s, s),
            new_text: open,
        });
    }
    if close {
        let e = chain.span.end as usize;
        edits.push(crate::diagnostic::Edit {
            span: Span::new(e, e),
            new_text: "\n    }".to_string(),
        });
    }
    edits.push(crate::diagnostic::Edit {
        span: Span::new(step.span.start as usize, step.span.start as usize),
        new_text: format!(
            "{widen}vector_final()\n        .commit::<{element}>({addr:#x});\n    {second_let}ctx\n        \
             .main\n        .begin({source}.view())\n        .fetch::<{d}, {time_txt}, \
             {packet_txt}>()\n        .collect::<{time_txt}, {packet_txt}>()\n        \
             .vector_init()\n        .vector_intra_slice_branch(BranchMode::Unconditional){narrow}\n        ."
        ),
    });
    let msg = format!(
        "split the pass in front of `{}`: end the first Tensor Unit pass with `vector_final()` and \
         commit the intermediate ({bytes} bytes per slice, Element `{element}`) to DM at \
         {addr:#x} (8-byte aligned, clear of every DM range this function places); a second \
         pass begins from it and runs `{}` onwards",
        step.method, step.method
    );
    edits.sort_by_key(|e| e.span);
    // The fix cuts the chain in front of this call: the call is the primary span, the
    // conflict it resolves a related one.
    let mut d = Diagnostic::new(&VEC_015, step.span, msg);
    if at != step.span {
        d = d.with_related(
            at,
            format!("the conflict ({}) this split resolves", conflict.code()),
        );
    }
    // The edit rewrites the chain as one statement: a pass written over several `let`s or
    // `match` arms gets the advice without it.
    if chain.written_apart {
        out.push(d);
        return;
    }
    out.push(d.with_fix(
        format!("split into two Tensor Unit passes through DM {addr:#x}"),
        false,
        edits,
    ));
}

/// DM byte ranges `[start, end)` the function's tensors with a known address occupy.
fn dm_ranges(cx: &FnContext<'_>) -> Vec<(u64, u64)> {
    let footprint = |ty: &TensorTy| -> Option<u64> {
        if !matches!(ty.kind, Kind::Dm | Kind::DmView | Kind::DmViewMut) {
            return None;
        }
        let bits = ty.dtype?.bits();
        let n = layout(Some(ty), Slot::Element)?.size;
        n.checked_mul(u64::from(bits))?
            .checked_add(7)
            .map(|b| b / 8)
    };
    let mut used = Vec::new();
    for t in &cx.model.tensors {
        if let (Some(a), Some(b)) = (t.address, footprint(&t.ty)) {
            used.push((a, a.saturating_add(b)));
        }
    }
    for chain in &cx.model.chains {
        for s in &chain.steps {
            if let (Some(a), Some(b)) = (s.address, s.output.as_ref().and_then(footprint)) {
                used.push((a, a.saturating_add(b)));
            }
        }
    }
    used.sort_unstable();
    used.dedup();
    used
}

/// The first 8-byte-aligned address after every known DM tensor (or, when that does not fit
/// the slice, the first gap) where `bytes` fit.
fn free_dm_address(cx: &FnContext<'_>, bytes: u64) -> Option<u64> {
    let align = cx.target.dma_dm_align_bytes.max(1);
    let cap = cx.target.dm_bytes_per_slice;
    let up = |x: u64| x.checked_add(align - 1).map(|v| v / align * align);
    let used = dm_ranges(cx);
    let fits = |a: u64| {
        a.checked_add(bytes)
            .is_some_and(|e| e <= cap && used.iter().all(|&(s, t)| e <= s || a >= t))
    };
    let top = used.iter().map(|r| r.1).max().unwrap_or(0);
    if let Some(a) = up(top)
        && fits(a)
    {
        return Some(a);
    }
    let mut at = 0u64;
    for &(s, e) in &used {
        if fits(at) && at < s {
            return Some(at);
        }
        at = at.max(up(e)?);
    }
    fits(at).then_some(at)
}

/// VEC-001: the dtype entering `vector_init()`.
fn init_dtype(before: &[Step], step: &Step, out: &mut Vec<Diagnostic>) {
    if step.output.is_none() {
        // Not a stream `vector_init()` takes: KRN-001.
        return;
    }
    let Some(d) = step.input.as_ref().and_then(|t| t.dtype) else {
        return;
    };
    if d.is_ve_scalar() {
        return;
    }
    let msg = format!(
        "the Vector Engine computes on i32 or f32 lanes only; this stream is {d}: widen it \
         before `vector_init()` (a casting fetch or the Contraction Engine)"
    );
    // With the widening fetch as the fix, the fetch's element type is the primary span and
    // `vector_init` related; without it, `vector_init`.
    let fix = d.widened().zip(
        before
            .iter()
            .rev()
            .find(|s| s.engine == Some(Engine::Fetch))
            .and_then(|f| f.generics.first())
            .filter(|g| Dtype::from_name(g.text.trim()) == Some(d)),
    );
    let diag = match fix {
        Some((w, g)) => Diagnostic::new(&VEC_001, g.span, msg)
            .with_related(
                step.span,
                format!("the {d} stream enters the Vector Engine here"),
            )
            .with_edit(
                format!("fetch as {w} (a widening fetch cast; check the fetch size)"),
                false,
                g.span,
                w.to_string(),
            ),
        None => Diagnostic::new(&VEC_001, step.span, msg),
    };
    out.push(diag);
}

fn vector_step<'a>(
    cx: &FnContext<'_>,
    p: &mut Pass<'a>,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) {
    let m = &step.method;
    let entry = matches!(
        m,
        Method::VectorIntraSliceBranch
            | Method::VectorIntraSliceUnzip
            | Method::VectorInterSliceReduce
    );
    // VEC-002: block entries.
    match p.stage {
        VeStage::Init if !entry => {
            out.push(Diagnostic::new(
                &VEC_002,
                step.span,
                format!(
                    "`{m}` needs an intra-slice block: after `vector_init()` call \
                     `vector_intra_slice_branch(BranchMode::..)`, `vector_intra_slice_unzip()` or \
                     `vector_inter_slice_reduce()` first"
                ),
            ));
            p.stage = VeStage::Branch;
        }
        VeStage::InterSliceReduce
            if !matches!(m, Method::VectorIntraSliceBranch | Method::VectorFinal) =>
        {
            out.push(Diagnostic::new(
                &VEC_002,
                step.span,
                format!(
                    "after `vector_inter_slice_reduce()` continue with \
                     `vector_intra_slice_branch(BranchMode::..)` or `vector_final()`, not `{m}`"
                ),
            ));
            p.stage = VeStage::Branch;
        }
        _ => {}
    }
    match m {
        Method::VectorIntraSliceUnzip => {
            if p.stage != VeStage::Init {
                out.push(Diagnostic::new(
                    &VEC_002,
                    step.span,
                    "`vector_intra_slice_unzip()` is available only directly after `vector_init()`",
                ));
            }
            unzip_axis(step, out);
            p.stage = VeStage::Pair;
            p.stage_step = Some(step);
            p.paired = true;
            p.way4 = false;
            return;
        }
        Method::VectorIntraSliceBranch => {
            if !matches!(p.stage, VeStage::Init | VeStage::InterSliceReduce) {
                out.push(Diagnostic::new(
                    &VEC_002,
                    step.span,
                    format!(
                        "`vector_intra_slice_branch()` enters the intra-slice block after \
                         `vector_init()` or `vector_inter_slice_reduce()`; this stream is already in \
                         the {} stage",
                        stage_name(p.stage)
                    ),
                ));
            }
            branch_mode(cx, step, out);
            p.stage = VeStage::Branch;
            p.stage_step = Some(step);
            p.way4 = false;
            return;
        }
        Method::VectorInterSliceReduce => {
            // Which intra-slice stages may precede it is XSL-002.
            p.stage = VeStage::InterSliceReduce;
            p.stage_step = Some(step);
            p.way4 = false;
            return;
        }
        Method::VectorStash => {
            stash_point(p, step, out);
            return;
        }
        _ => {}
    }
    let Some(stage) = stage_of(m) else {
        return;
    };
    if matches!(
        stage,
        VeStage::Fp | VeStage::IntraSliceReduce | VeStage::FpDiv
    ) {
        p.way4_ops += 1;
    }
    if !order(p, stage, step, out) {
        way(cx, p, stage, step, out);
    }
    let dtype = step.input.as_ref().and_then(|t| t.dtype);
    stage_dtype(stage, dtype, step, out);
    if has_alu_pool(stage) {
        alu_use(p, stage, step, out);
    }
    operand_checks(cx, p, dtype, step, out);
    modes(step, out);
    two_group(p, stage, step, out);
    if rank(stage) >= rank(p.stage) {
        p.stage = stage;
        p.stage_step = Some(step);
    }
}

/// VEC-003: stages move forward; non-ALU stages run once. True when the step was reported (the
/// lane mode is then not checked: it would only repeat the misorder).
fn order<'a>(p: &Pass<'a>, stage: VeStage, step: &'a Step, out: &mut Vec<Diagnostic>) -> bool {
    let cur = p.stage;
    if matches!(cur, VeStage::Init | VeStage::InterSliceReduce) {
        return false;
    }
    let m = &step.method;
    let back = rank(stage) < rank(cur);
    let again = stage == cur && !has_alu_pool(stage);
    if !back && !again {
        return false;
    }
    let prev = p.stage_step;
    let prev_name = prev.map_or("the chain's input".to_string(), |s| {
        format!("`{}`", s.method)
    });
    let msg = if back {
        format!(
            "`{m}` ({} stage) cannot follow {prev_name} ({} stage) in one pass: the intra-slice \
             stages run Branch → Logic → Fxp → FxpToFp → Narrow → Float → IntraSliceReduce → FpDiv → \
             Widen → FpToFxp → Clip → Filter → Output; split into two Tensor Unit passes (vector_final \
             + commit, then begin again from the intermediate)",
            stage_name(stage),
            stage_name(cur)
        )
    } else {
        format!(
            "the {} stage runs once per pass and {prev_name} already used it; split into two Tensor \
             Unit passes (vector_final + commit, then begin again from the intermediate)",
            stage_name(stage)
        )
    };
    let mut d = Diagnostic::new(&VEC_003, step.span, msg);
    if let Some(s) = prev {
        d = d.with_related(
            s.span,
            format!("the pass is already in the {} stage here", stage_name(cur)),
        );
    }
    out.push(d);
    true
}

/// VEC-005 (lane mode) and VEC-006 (narrow/widen pairing, packet shapes), VEC-007 (trim).
fn way<'a>(
    cx: &FnContext<'_>,
    p: &mut Pass<'a>,
    stage: VeStage,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) {
    let m = &step.method;
    let way4_lanes = cx.target.ve_way4_lanes;
    let way8_lanes = cx.target.ve_way8_lanes;
    match stage {
        VeStage::Narrow if !p.way4 => {
            narrow_shape(cx, step, out);
            split_where_trim_suffices(cx, step, out);
            p.way4 = true;
            p.narrow = Some(step);
            p.way4_ops = 0;
        }
        VeStage::Widen => {
            match p.narrow {
                Some(n) if p.way4 => {
                    if n.method == Method::VectorSplit
                        && *m == Method::VectorConcat
                        && p.way4_ops == 0
                    {
                        empty_detour(n, step, out);
                    }
                    let want = if n.method == Method::VectorSplit {
                        Method::VectorConcat
                    } else {
                        Method::VectorPadWay8
                    };
                    let split_gone = n.method == Method::VectorSplit
                        && *m == Method::VectorPadWay8
                        && !split_lanes_in_time(n, step);
                    if *m != want && !split_gone {
                        let diag = Diagnostic::new(
                            &VEC_006,
                            step.span,
                            format!(
                                "`{m}` does not reverse `{}`: widen a split with \
                                 `vector_concat` and a trim with `vector_pad_way8`",
                                n.method
                            ),
                        )
                        .with_related(n.span, "the stream was narrowed here");
                        out.push(concat_fix(diag, n, step));
                    }
                }
                _ if !p.way4 => {
                    out.push(Diagnostic::new(
                        &VEC_006,
                        step.span,
                        format!(
                            "`{m}` widens a Way4 stream back to Way8, but this stream is Way8 \
                             (nothing narrowed it)"
                        ),
                    ));
                }
                _ => {}
            }
            widen_shape(cx, step, out);
            p.way4 = false;
            p.narrow = None;
        }
        VeStage::Fp | VeStage::FpDiv if !p.way4 => {
            let mut d = Diagnostic::new(
                &VEC_005,
                step.span,
                format!(
                    "`{m}` runs in Way4 ({way4_lanes} lanes per packet), but the stream is Way8 \
                     ({way8_lanes} lanes): narrow it first with `vector_trim_way4` or `vector_split`"
                ),
            );
            if let Some(pk) = step.input.as_ref().and_then(|t| t.get(Slot::Packet))
                && let Some(l) = pk.layout.as_deref()
                && let Some(lanes) = valid_lanes(l)
                && lanes.iter().all(|&i| i < way4_lanes)
                && let Some(p4) = with_pad(&pk.text, way4_lanes)
                && let Some(p8) = with_pad(&pk.text, way8_lanes)
            {
                d = d.with_edit(format!("narrow with `vector_trim_way4::<{p4}>()` (widen later with `vector_pad_way8::<{p8}>()`)"), false, Span::new(step.span.start as usize, step.span.start as usize), format!("vector_trim_way4::<{p4}>()."));
            }
            out.push(d);
        }
        VeStage::Logic
        | VeStage::Fxp
        | VeStage::FxpToFp
        | VeStage::FpToFxp
        | VeStage::Clip
        | VeStage::Filter
        | VeStage::Final
            if p.way4 =>
        {
            let mut d = Diagnostic::new(
                &VEC_005,
                step.span,
                format!(
                    "`{m}` ({} stage) runs in Way8 ({way8_lanes} lanes per packet), but the stream is \
                     still Way4: widen it first with `vector_pad_way8` or `vector_concat`",
                    stage_name(stage)
                ),
            );
            if let Some(n) = p.narrow {
                d = d.with_related(n.span, "narrowed to Way4 here");
                if n.method == Method::VectorTrimWay4
                    && let Some(g) = n.generics.first()
                    && let Some(p8) = with_pad(&g.text, way8_lanes)
                {
                    d = d.with_edit(
                        format!("widen with `vector_pad_way8::<{p8}>()`"),
                        false,
                        Span::new(step.span.start as usize, step.span.start as usize),
                        format!("vector_pad_way8::<{p8}>()."),
                    );
                }
            }
            out.push(d);
        }
        _ => {}
    }
}

/// Whether the Time that reaches `widen` still ends with the factor `split` moved out of the
/// packet (its output Time's innermost 2 positions), i.e. whether `vector_concat` could put
/// lanes 4-7 back. An op in between (`vector_intra_slice_reduce`) may have reduced it away;
/// then `vector_pad_way8` is the only widen. Unknown layouts count as gone (no finding).
fn split_lanes_in_time(split: &Step, widen: &Step) -> bool {
    let (Some(after_split), Some(now)) = (
        layout(split.output.as_ref(), Slot::Time),
        layout(widen.input.as_ref(), Slot::Time),
    ) else {
        return false;
    };
    if !after_split.size.is_multiple_of(2) || !now.size.is_multiple_of(2) {
        return false;
    }
    after_split.window(2) == now.window(2)
}

/// VEC-006's fix of a `vector_trim_way4` packet wider than 4 lanes: the packet trim derives
/// (`[P]` → `[P = 4]`), when the lanes it drops hold only padding (otherwise trimming loses
/// data, VEC-007, and the stream needs `vector_split` instead: no fix). Unsafe: later steps
/// may spell out the packet as written.
fn trim_fix(diag: Diagnostic, step: &Step, arg: &Arg, n4: u64) -> Diagnostic {
    let kept = (|| {
        if step.method != Method::VectorTrimWay4 {
            return None;
        }
        let input = layout(step.input.as_ref(), Slot::Packet)?;
        let lanes = valid_lanes(input)?;
        Some(if lanes.iter().all(|&i| i < n4) {
            Ok(input.window(n4))
        } else {
            Err(())
        })
    })();
    let kept = match kept {
        Some(Ok(kept)) => kept,
        Some(Err(())) => {
            let mut diag = diag;
            diag.message.push_str(&format!(
                "; no {n4}-lane packet fits, because the incoming packet holds data beyond lane \
                 {}: trimming would drop it (VEC-007), so split the stream with `vector_split` \
                 and widen it back with `vector_concat`",
                n4 - 1
            ));
            return diag;
        }
        None => return diag,
    };
    let text = format!("m![{}]", kept.to_expr());
    diag.with_edit(
        format!("keep the {n4} lanes `vector_trim_way4` keeps: `{text}`"),
        false,
        arg.span,
        text,
    )
}

/// VEC-006's fix of a `vector_pad_way8` after a `vector_split`: `vector_concat` back to the
/// Time and Packet the split started from. Unsafe: the stream after it has the split's Time
/// undone, which later steps may spell out.
fn concat_fix(diag: Diagnostic, split: &Step, widen: &Step) -> Diagnostic {
    let fix = (|| {
        if split.method != Method::VectorSplit || widen.method != Method::VectorPadWay8 {
            return None;
        }
        let arg = widen.generics.first()?;
        let t = layout(split.input.as_ref(), Slot::Time)?;
        let p = layout(split.input.as_ref(), Slot::Packet)?;
        let args = format!("m![{}], m![{}]", t.to_expr(), p.to_expr());
        Some((arg.span, args))
    })();
    let Some((at, args)) = fix else { return diag };
    diag.with_fix(
        format!("widen with `vector_concat::<{args}>()`, which reverses the split"),
        false,
        vec![
            Edit {
                span: widen.span,
                new_text: "vector_concat".to_string(),
            },
            Edit {
                span: at,
                new_text: args,
            },
        ],
    )
}

/// VEC-006 packet of a Narrow step (at most 4 lanes; the manual's reduce examples narrow to
/// packets of 2 or 3 positions, so smaller ones are accepted) and VEC-007 (trim drops lanes 4..).
fn narrow_shape(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let n4 = cx.target.ve_way4_lanes;
    let arg = match step.method {
        Method::VectorTrimWay4 => step.generics.first(),
        _ => step.generics.get(1),
    };
    if let (Some(a), Some(l)) = (arg, layout(step.output.as_ref(), Slot::Packet))
        && l.size > n4
    {
        let d = Diagnostic::new(
            &VEC_006,
            a.span,
            format!(
                "a Way4 packet has {n4} lanes; `{}` has {} positions",
                a.text.trim(),
                l.size
            ),
        );
        out.push(trim_fix(d, step, a, n4));
    }
    if step.method == Method::VectorTrimWay4
        && let Some(pk) = step.input.as_ref().and_then(|t| t.get(Slot::Packet))
        && let Some(l) = pk.layout.as_deref()
        && let Some(lanes) = valid_lanes(l)
    {
        let lost: Vec<u64> = lanes.into_iter().filter(|&i| i >= n4).collect();
        if !lost.is_empty() {
            out.push(Diagnostic::new(
                &VEC_007,
                step.span,
                format!(
                    "`vector_trim_way4` keeps lanes 0-{} and drops the rest, but Packet `{}` holds \
                     data in {} of the upper lanes ({}): those elements are lost; use \
                     `vector_split` (and `vector_concat`) when both halves carry data",
                    n4 - 1,
                    pk.text.trim(),
                    lost.len(),
                    lost.iter()
                        .map(u64::to_string)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            ));
        }
    }
}

/// Flits per slice of a stream: its Time size, when known.
fn flits(ty: Option<&TensorTy>) -> Option<u64> {
    layout(ty, Slot::Time).map(|l| l.size)
}

/// VEC-016: `vector_split` moves lanes 4-7 into Time, doubling the packets of the Way4 section
/// (cost-model.md P19, L4847, L5257); when those lanes are padding, `vector_trim_way4` keeps the
/// packet count.
fn split_where_trim_suffices(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let n4 = cx.target.ve_way4_lanes;
    if step.method != Method::VectorSplit {
        return;
    }
    let Some(pk) = step.input.as_ref().and_then(|t| t.get(Slot::Packet)) else {
        return;
    };
    let Some(lanes) = pk.layout.as_deref().and_then(valid_lanes) else {
        return;
    };
    if lanes.is_empty() || lanes.iter().any(|&i| i >= n4) {
        return;
    }
    let Some(t) = flits(step.input.as_ref()) else {
        return;
    };
    let trim = with_pad(&pk.text, n4).unwrap_or_else(|| "m![..]".to_string());
    let pad = with_pad(&pk.text, cx.target.ve_way8_lanes).unwrap_or_else(|| "m![..]".to_string());
    let msg = format!(
        "lanes {n4}-{} of Packet `{}` are padding, yet `vector_split` moves them into Time: the \
         {t} flit(s) per slice become {} packets in the Way4 section, half of them empty ({} \
         lanes per cycle instead of {}). `vector_trim_way4::<{trim}>()` keeps {t} (widen with \
         `vector_pad_way8::<{pad}>()`)",
        cx.target.ve_way8_lanes - 1,
        pk.text.trim(),
        t.saturating_mul(2),
        n4,
        cx.target.ve_way8_lanes,
    );
    out.push(Diagnostic::new(&VEC_016, step.span, msg));
}

/// VEC-016: a split/concat pair with no Way4 op between them only doubles the packet count.
fn empty_detour(narrow: &Step, widen: &Step, out: &mut Vec<Diagnostic>) {
    let t = flits(narrow.input.as_ref());
    let cost = match t {
        Some(t) => format!(
            " ({t} flit(s) per slice become {} packets)",
            t.saturating_mul(2)
        ),
        None => String::new(),
    };
    let msg = format!(
        "the stream is split to Way4 and concatenated back with no float, intra-slice reduce or \
         FpDiv op in between: the detour doubles the packets{cost} and halves Vector Engine \
         throughput for nothing. Drop both `vector_split` and `vector_concat`"
    );
    out.push(
        Diagnostic::new(&VEC_016, widen.span, msg).with_related(narrow.span, "split to Way4 here"),
    );
}

/// VEC-006 packet of a Widen step (8 lanes).
fn widen_shape(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let n8 = cx.target.ve_way8_lanes;
    let arg = match step.method {
        Method::VectorPadWay8 => step.generics.first(),
        _ => step.generics.get(1),
    };
    if let (Some(a), Some(l)) = (arg, layout(step.output.as_ref(), Slot::Packet))
        && l.size != n8
    {
        let mut d = Diagnostic::new(
            &VEC_006,
            a.span,
            format!(
                "a Way8 packet has {n8} lanes; `{}` has {} positions",
                a.text.trim(),
                l.size
            ),
        );
        if l.size < n8
            && let Some(fixed) = with_pad(&a.text, n8)
        {
            d = d.with_edit(
                format!("pad the packet to {n8} lanes: `{fixed}`"),
                true,
                a.span,
                fixed,
            );
        }
        out.push(d);
    }
}

/// VEC-008 (stage dtype) and VEC-009 (f32 logic shifts).
fn stage_dtype(stage: VeStage, d: Option<Dtype>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(d) = d else {
        return;
    };
    let m = &step.method;
    let need = match stage {
        VeStage::Fxp | VeStage::FxpToFp => Some(Dtype::I32),
        VeStage::Fp | VeStage::FpDiv | VeStage::FpToFxp => Some(Dtype::F32),
        _ => None,
    };
    if let Some(need) = need
        && d != need
        && d.is_ve_scalar()
    {
        let hint = match stage {
            VeStage::Fxp => {
                "convert with `vector_fp_to_fxp(int_width)` first, or use the Float stage"
            }
            VeStage::FxpToFp => "the stream is already f32: drop the conversion",
            VeStage::FpToFxp => "the stream is already i32: drop the conversion",
            _ => "convert with `vector_fxp_to_fp(int_width)` before narrowing",
        };
        out.push(Diagnostic::new(
            &VEC_008,
            step.span,
            format!(
                "`{m}` ({} stage) takes {need}; this stream is {d}: {hint}",
                stage_name(stage)
            ),
        ));
        return;
    }
    let Some(a) = step.args.first() else {
        return;
    };
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    if stage == VeStage::Clip {
        let want = match op.ty {
            "ClipBinaryOpI32" => Dtype::I32,
            "ClipBinaryOpF32" => Dtype::F32,
            _ => return,
        };
        if want != d && d.is_ve_scalar() {
            let other = if d == Dtype::F32 {
                "ClipBinaryOpF32"
            } else {
                "ClipBinaryOpI32"
            };
            out.push(Diagnostic::new(
                &VEC_008,
                a.span,
                format!(
                    "`{}` is a {want} op; this stream is {d}: use `{other}`",
                    op.ty
                ),
            ));
        }
    }
    if stage == VeStage::Logic
        && d == Dtype::F32
        && matches!(
            op.variant,
            "LeftShift" | "LogicRightShift" | "ArithRightShift"
        )
    {
        out.push(Diagnostic::new(
            &VEC_009,
            a.span,
            format!(
                "`{}` is an i32-only Logic op; on f32 the Logic stage has BitAnd, BitOr and BitXor",
                op.variant
            ),
        ));
    }
}

/// VEC-004: one use of each ALU per pass.
fn alu_use<'a>(p: &mut Pass<'a>, stage: VeStage, step: &'a Step, out: &mut Vec<Diagnostic>) {
    let Some(a) = step.args.first() else {
        return;
    };
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    let Some(unit) = alu(stage, &op) else {
        return;
    };
    let Some(&(_, first)) = p.alus.iter().find(|(u, _)| *u == unit) else {
        p.alus.push((unit, a));
        return;
    };
    let first_op = parse_op(&first.text).map_or(first.text.trim(), |o| o.variant);
    let mut d = Diagnostic::new(
        &VEC_004,
        a.span,
        format!(
            "{unit} is already in use: `{}` needs the {unit} ALU, which `{first_op}` took earlier in \
             this pass, and each ALU runs once per Tensor Unit pass; split the work into two passes \
             (vector_final + commit, then begin again from the intermediate)",
            op.variant
        ),
    )
    .with_related(first.span, format!("{unit} is first used by `{first_op}` here"));
    // The twin multiplier lane (L4895-L4896).
    let twin = match unit {
        "FpMul0" => Some(("Mul1", "FpMul1")),
        "FpMul1" => Some(("Mul0", "FpMul0")),
        _ => None,
    };
    if let (Some((lane, twin_unit)), Some((_, off))) = (twin, op.lane)
        && !p.alus.iter().any(|(u, _)| *u == twin_unit)
    {
        let start = a.span.start as usize + off;
        d = d.with_edit(
            format!("use the other multiplier lane `FpMulAlu::{lane}` ({twin_unit} is free)"),
            true,
            Span::new(start, start + 4),
            lane.to_string(),
        );
    } else if unit == "FxpAdd"
        && matches!(op.variant, "AddFxp" | "AddFxpSat")
        && !p.alus.iter().any(|(u, _)| *u == "ClipAdd")
    {
        d.message.push_str(&format!(
            "; or add in the Clip stage: `vector_clip(ClipBinaryOpI32::{}, ..)`",
            op.variant
        ));
    }
    out.push(d);
}

/// VEC-010 at a `vector_stash()`; VEC-013 in two-group mode.
fn stash_point<'a>(p: &mut Pass<'a>, step: &'a Step, out: &mut Vec<Diagnostic>) {
    if p.paired || p.zipped.is_some() {
        out.push(Diagnostic::new(
            &VEC_013,
            step.span,
            if p.paired {
                "`vector_stash()` is unavailable in two-group mode (while the groups are paired)"
            } else {
                "`vector_stash()` is unavailable after a `_zip` merged the two groups"
            },
        ));
        return;
    }
    if p.stage == VeStage::Init {
        out.push(Diagnostic::new(
            &VEC_002,
            step.span,
            "`vector_stash()` needs an intra-slice block: call \
             `vector_intra_slice_branch(BranchMode::..)` after `vector_init()` first",
        ));
        p.stage = VeStage::Branch;
    } else if !stashable(p.stage) {
        out.push(Diagnostic::new(
            &VEC_010,
            step.span,
            format!(
                "`vector_stash()` is not available after the {} stage; the Stashable stages are \
                 Branch, Logic, Fxp, Narrow, Float, FpDiv and Clip",
                stage_name(p.stage)
            ),
        ));
    }
    if let Some(c) = p.consumed {
        out.push(
            Diagnostic::new(
                &VEC_010,
                step.span,
                "`vector_stash()` is not available after a binary op consumed the stash: the pass \
                 has a single stash slot",
            )
            .with_related(c.span, "the stash was consumed here"),
        );
    } else if let Some(s) = p.stash {
        out.push(
            Diagnostic::new(
                &VEC_010,
                step.span,
                "a stash is already live in this pass, and the pass has a single stash slot",
            )
            .with_related(s.span, "the live stash"),
        );
    }
    p.stash = Some(step);
}

/// VEC-010 (`Stash` operand) and VEC-011 (constants, VRF operands).
fn operand_checks<'a>(
    cx: &FnContext<'_>,
    p: &mut Pass<'a>,
    d: Option<Dtype>,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) {
    for a in operands(step) {
        if has_word(&a.text, "Stash") {
            stash_use(p, d, a, out);
            continue;
        }
        // Logic ops read bit patterns: an integer mask is a valid f32 Logic operand.
        let d = if stage_of(&step.method) == Some(VeStage::Logic) {
            None
        } else {
            d
        };
        match (literal(&a.text), d) {
            (Some(Lit::Float), Some(Dtype::I32)) => out.push(Diagnostic::new(
                &VEC_011,
                a.span,
                format!(
                    "`{}` is a float constant, but this stream is i32: constants have the stream's type",
                    a.text.trim()
                ),
            )),
            (Some(Lit::Int), Some(Dtype::F32)) => {
                let t = a.text.trim();
                let fixed = format!("{}.0f32", t.trim_end_matches("i32"));
                out.push(
                    Diagnostic::new(
                        &VEC_011,
                        a.span,
                        format!(
                            "`{t}` is an integer constant, but this stream is f32: constants have \
                             the stream's type"
                        ),
                    )
                    .with_edit(format!("write `{fixed}`"), true, a.span, fixed.clone()),
                );
            }
            _ => {}
        }
        vrf_operand(cx, step, a, out);
    }
}

fn stash_use<'a>(p: &mut Pass<'a>, d: Option<Dtype>, a: &'a Arg, out: &mut Vec<Diagnostic>) {
    if p.paired || p.zipped.is_some() {
        out.push(Diagnostic::new(
            &VEC_013,
            a.span,
            "the stash is unavailable in two-group mode",
        ));
        return;
    }
    if let Some(c) = p.consumed {
        out.push(
            Diagnostic::new(
                &VEC_010,
                a.span,
                "the stash is not available any more: a binary op already consumed it in this pass",
            )
            .with_related(c.span, "the stash was consumed here"),
        );
        return;
    }
    match p.stash {
        None if p.complete => out.push(Diagnostic::new(
            &VEC_010,
            a.span,
            "`Stash` reads the stash slot, but nothing was stashed in this pass: call \
             `vector_stash()` at an earlier Stashable stage",
        )),
        Some(s) => {
            let sd = s.input.as_ref().and_then(|t| t.dtype);
            if let (Some(sd), Some(d)) = (sd, d)
                && sd != d
            {
                out.push(
                    Diagnostic::new(
                        &VEC_010,
                        a.span,
                        format!(
                            "the stash is typed: it holds {sd}, so only {sd} ops can consume it; \
                             this op runs on {d}"
                        ),
                    )
                    .with_related(s.span, format!("stashed as {sd} here")),
                );
            }
        }
        None => {}
    }
    p.consumed = Some(a);
}

/// VEC-011: a tensor operand must be a VRF tensor on the stream's Chip, Cluster and Slice.
fn vrf_operand(cx: &FnContext<'_>, step: &Step, a: &Arg, out: &mut Vec<Diagnostic>) {
    let Some(name) = operand_var(&a.text) else {
        return;
    };
    let Some(var) = cx
        .model
        .tensors
        .iter()
        .rev()
        .find(|t| t.name == name && t.span.start <= step.span.start)
    else {
        return;
    };
    if var.ty.kind != Kind::Vrf {
        out.push(
            Diagnostic::new(
                &VEC_011,
                a.span,
                format!(
                    "`{name}` is a {}; tensor operands are read from the VRF: load it with \
                     `.to_vrf(addr)` (in `ctx.sub`) and pass the VrfTensor",
                    var.ty.kind.type_name()
                ),
            )
            .with_related(var.span, format!("`{name}` is declared here")),
        );
        return;
    }
    for slot in [Slot::Chip, Slot::Cluster, Slot::Slice] {
        let (Some(v), Some(s)) = (
            layout(Some(&var.ty), slot),
            layout(step.input.as_ref(), slot),
        ) else {
            continue;
        };
        if v != s {
            out.push(
                Diagnostic::new(
                    &VEC_011,
                    a.span,
                    format!(
                        "the VRF operand `{name}` has {} `{}`, the stream `{}`: each slice reads \
                         its own VRF, so both must place data on the same {}",
                        slot.name(),
                        v.to_expr(),
                        s.to_expr(),
                        slot.name()
                    ),
                )
                .with_related(var.span, format!("`{name}` is declared here")),
            );
            return;
        }
    }
}

/// VEC-012: `BranchMode` variants and the four comparisons.
fn branch_mode(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(a) = step.args.first() else {
        return;
    };
    if !a.value_text().trim_start().starts_with("BranchMode::") {
        return;
    }
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    match op.variant {
        "Unconditional" | "AxisToggle" | "ValidCount" | "Vrf" => {}
        "Comparison" => {
            let want = cx.target.ve_branch_comparisons;
            if let Some(n) = array_len(&text)
                && n != want
            {
                out.push(Diagnostic::new(
                    &VEC_012,
                    a.span,
                    format!(
                        "`BranchMode::Comparison` takes exactly {want} `InputCmp`s (one per branch \
                         bit of the 4-bit ExecutionId); this one has {n}"
                    ),
                ));
            }
        }
        other => out.push(Diagnostic::new(
            &VEC_012,
            a.span,
            format!(
                "`BranchMode::{other}` is not a branch mode: use Unconditional, AxisToggle {{ axis }}, \
                 ValidCount, Comparison([InputCmp; 4]) or Vrf"
            ),
        )),
    }
}

/// VEC-014: the mode enum of `*_with_mode` ops.
fn modes(step: &Step, out: &mut Vec<Diagnostic>) {
    let m = &step.method;
    if !m.is_with_mode() {
        return;
    }
    let Some(a) = step
        .args
        .iter()
        .find(|a| a.value_text().contains("ArgMode::"))
    else {
        return;
    };
    let text = a.value_text();
    let Some(op) = parse_op(&text) else {
        return;
    };
    let (want, variants): (&str, &[&str]) = if *m == Method::VectorFpUnaryWithMode {
        ("UnaryArgMode", &["Mode0", "Mode1"])
    } else if *m == Method::VectorFpTernaryWithMode {
        (
            "TernaryArgMode",
            &[
                "Mode012", "Mode002", "Mode102", "Mode112", "Mode020", "Mode021", "Mode120",
            ],
        )
    } else {
        ("BinaryArgMode", &["Mode00", "Mode01", "Mode10", "Mode11"])
    };
    if op.ty != want {
        out.push(Diagnostic::new(
            &VEC_014,
            a.span,
            format!("`{m}` takes a `{want}`, not a `{}`", op.ty),
        ));
        return;
    }
    if !variants.contains(&op.variant) {
        out.push(Diagnostic::new(
            &VEC_014,
            a.span,
            format!(
                "`{want}::{}` is not a mode; the modes are {}",
                op.variant,
                variants.join(", ")
            ),
        ));
        return;
    }
    let zip = m.is_zip();
    if !zip && op.variant.contains('1') && operands(step).next().is_none() {
        out.push(Diagnostic::new(
            &VEC_014,
            a.span,
            format!(
                "`{want}::{}` reads the operand, but `{m}` is given none",
                op.variant
            ),
        ));
    }
}

/// VEC-013: the two-group pair, its `_zip` and what is unavailable around it.
fn two_group<'a>(p: &mut Pass<'a>, stage: VeStage, step: &'a Step, out: &mut Vec<Diagnostic>) {
    let m = &step.method;
    if m.is_zip() {
        if !p.paired {
            let msg = match p.zipped {
                Some(_) => {
                    format!("`{m}` merges a two-group pair, but the pair was already merged")
                }
                None => format!(
                    "`{m}` merges the two groups of `vector_intra_slice_unzip()`, but this stream \
                     is a single group"
                ),
            };
            let mut d = Diagnostic::new(&VEC_013, step.span, msg);
            if let Some(z) = p.zipped {
                d = d.with_related(z.span, "merged here");
            }
            out.push(d);
        }
        p.paired = false;
        p.zipped = Some(step);
        return;
    }
    if stage == VeStage::Filter && (p.paired || p.zipped.is_some()) {
        out.push(Diagnostic::new(
            &VEC_013,
            step.span,
            "`vector_filter()` is unavailable in two-group mode, before and after the `_zip`",
        ));
    }
    if stage == VeStage::Final && p.paired {
        out.push(
            Diagnostic::new(
                &VEC_013,
                step.span,
                "the two groups are still paired: merge them with a `_zip` op (`vector_clip_zip`, \
                 `vector_fp_zip`, `vector_fxp_zip_with_mode`, ...) before `vector_final()`",
            )
            .with_related(
                p.stage_step.map_or(step.span, |s| s.span),
                "last op on the pair",
            ),
        );
    }
}

/// VEC-013: the unzip axis must be in the input Time.
fn unzip_axis(step: &Step, out: &mut Vec<Diagnostic>) {
    let Some(g) = step.generics.first() else {
        return;
    };
    let axis = g.text.trim();
    if !is_ident(axis) || axis == "_" {
        return;
    }
    let Some(time) = layout(step.input.as_ref(), Slot::Time) else {
        return;
    };
    if time.dims.iter().any(|d| matches!(d, Dim::Opaque(_))) {
        return;
    }
    let found = time.dims.iter().any(|d| match d {
        Dim::Factor(f) => f.axis.as_ref().is_some_and(|a| &*a.name == axis),
        Dim::Opaque(_) => false,
    });
    if !found {
        let t = step
            .input
            .as_ref()
            .and_then(|t| t.get(Slot::Time))
            .map_or(String::new(), |v| v.text.trim().to_string());
        out.push(Diagnostic::new(
            &VEC_013,
            g.span,
            format!(
                "`vector_intra_slice_unzip::<{axis}, ..>()` splits the groups along `{axis}`, but the \
                 stream's Time `{t}` has no `{axis}` factor (interleave two tensors with \
                 `begin_interleaved::<{axis}, ..>()`)"
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The VEC diagnostics of a kernel body (an i32 or f32 stream `x` of 8 lanes per packet).
    fn vec_codes(dtype: &str, body: &str) -> Vec<(String, String)> {
        let text = format!(
            "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
             fn kernel(ctx: &mut Context, a: &DmTensor<{dtype}, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {{\n\
             let out = ctx.main.begin(a.view()).fetch::<{dtype}, m![1], m![A % 8]>()\
             .collect::<m![1], m![A % 8]>().vector_init()\
             .vector_intra_slice_branch(BranchMode::Unconditional){body}\
             .vector_final().commit::<m![A % 8]>(0x1000);\n}}\n"
        );
        crate::check_text(&text)
            .into_iter()
            .filter(|d| d.code().starts_with("VEC"))
            .map(|d| {
                let s = &text[d.span.range()];
                (d.code().to_string(), s.to_string())
            })
            .collect()
    }

    #[test]
    fn pad_way8_after_split_fix_concats() {
        use crate::rules::fix_testing::assert_fix_clears;
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/rules/VEC-006.rs"),
            "VEC-006",
        );
        assert!(
            fixed.contains(".vector_concat::<m![1], m![A % 8]>()"),
            "{fixed}"
        );
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/rules/VEC-006-reduced-split.rs"),
            "VEC-006",
        );
        assert!(
            fixed.contains(".vector_concat::<m![G % 2, K / 8], m![K % 8]>()"),
            "{fixed}"
        );
    }

    #[test]
    fn trim_way4_fix_keeps_the_padded_lanes() {
        use crate::rules::fix_testing::assert_fix_clears;
        // L6003: the trim keeps lanes 0-3 of `m![R # 24 / 8 # 8]`, whose lanes 3-7 are padding.
        let fixed = assert_fix_clears(
            include_str!("../../../fixtures/manual/6003_vcg_packet_not_innermost_err.rs"),
            "VEC-006",
        );
        assert!(
            fixed.contains("vector_trim_way4::<m![R # 24 / 8 # 4]>()"),
            "{fixed}"
        );
        // L6072: A's lanes lie past lane 3; no trim keeps them, and the message says so.
        let diags = crate::check_text(include_str!(
            "../../../fixtures/manual/6072_vcg_mixed_packet_axes_err.rs"
        ));
        let d = diags.iter().find(|d| d.code() == "VEC-006");
        assert!(
            d.is_some_and(|d| d.fixes.is_empty() && d.message.contains("vector_split")),
            "{d:?}"
        );
    }

    #[test]
    fn l5260_alu_conflict_split_fix_commits_past_the_output() {
        // L5260-L5269: AddFxp, MulInt, SubFxp; the split ends the pass before SubFxp. The final
        // output is committed at 0x1000 (32 bytes), so the intermediate goes to 0x1020.
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
                    fn kernel(ctx: &mut Context, a: &DmTensor<i32, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
                    let out = ctx.main.begin(a.view()).fetch::<i32, m![1], m![A % 8]>()\
                    .collect::<m![1], m![A % 8]>().vector_init()\
                    .vector_intra_slice_branch(BranchMode::Unconditional)\
                    .vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2)\
                    .vector_fxp(FxpBinaryOp::SubFxp, 5)\
                    .vector_final().commit::<m![A % 8]>(0x1000);\n}\n";
        let diags = crate::check_text(text);
        let d = diags.iter().find(|d| d.code() == "VEC-015");
        let d = d.unwrap_or_else(|| panic!("{diags:?}"));
        // At the call the split cuts in front of; the conflicting op argument is related.
        assert_eq!(&text[d.span.range()], "vector_fxp");
        assert_eq!(
            d.related
                .iter()
                .map(|r| &text[r.span.range()])
                .collect::<Vec<_>>(),
            ["FxpBinaryOp::SubFxp"]
        );
        assert!(d.message.contains("32 bytes per slice"), "{}", d.message);
        let edits = &d.fixes[0].edits;
        assert_eq!(edits.len(), 1);
        let e = &edits[0];
        assert!(
            e.new_text
                .starts_with("vector_final()\n        .commit::<m![A % 8]>(0x1020);"),
            "{}",
            e.new_text
        );
        assert!(e.new_text.contains("let out = ctx"), "{}", e.new_text);
        assert!(e.new_text.contains(".begin(out.view())"), "{}", e.new_text);
    }

    #[test]
    fn free_dm_address_skips_used_ranges() {
        // Two tensors at 0 (32 B) and 0x1000 (32 B): the next free 8-byte-aligned is 0x1020;
        // nothing larger than the rest of the 512 KB slice fits.
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
                    fn kernel(ctx: &mut Context, a: &DmTensor<i32, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
                    let b = ctx.main.begin(a.view()).fetch::<i32, m![1], m![A % 8]>()\
                    .collect::<m![1], m![A % 8]>().commit::<m![A % 8]>(0);\n\
                    let c = ctx.main.begin(a.view()).fetch::<i32, m![1], m![A % 8]>()\
                    .collect::<m![1], m![A % 8]>().commit::<m![A % 8]>(0x1000);\n}\n";
        let a = crate::db::analyse_text(text);
        let Some((_, f)) = a.fns.first() else {
            panic!("no function");
        };
        let scope = crate::mapping::Scope::default();
        let cx = FnContext::new(&f.model, &scope, &crate::target::RNGD);
        assert_eq!(dm_ranges(&cx), vec![(0, 32), (0x1000, 0x1020)]);
        assert_eq!(free_dm_address(&cx, 64), Some(0x1020));
        assert_eq!(free_dm_address(&cx, 512 * 1024 - 0x1020), Some(0x1020));
        assert_eq!(free_dm_address(&cx, 512 * 1024 - 0x1020 + 8), None);
        assert_eq!(free_dm_address(&cx, 512 * 1024), None);
        assert_eq!(free_dm_address(&cx, u64::MAX), None);
    }

    #[test]
    fn l4847_split_of_a_half_empty_packet_and_empty_detour() {
        // L4847-L4851: split doubles the packets; with lanes 4-7 padding trim keeps them.
        let d = vec_codes(
            "f32",
            ".vector_split::<m![1 # 2], m![A % 4]>().vector_fp_unary(FpUnaryOp::Exp)\
             .vector_concat::<m![1], m![A % 8]>()",
        );
        assert!(!d.iter().any(|(c, _)| c == "VEC-016"), "{d:?}");
        let d = vec_codes(
            "i32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>().vector_concat::<m![1], m![A % 8]>()",
        );
        assert!(
            d.iter()
                .any(|(c, s)| c == "VEC-016" && s == "vector_concat"),
            "{d:?}"
        );
    }

    fn alu_of(stage: VeStage, op: &str) -> Option<&'static str> {
        alu(stage, &parse_op(op)?)
    }

    #[test]
    fn parse_op_reads_variant_and_lane() {
        let op = parse_op("FpBinaryOp::MulF(FpMulAlu::Mul0)").expect("op");
        assert_eq!(op.ty, "FpBinaryOp");
        assert_eq!(op.variant, "MulF");
        assert_eq!(op.lane, Some(("Mul0", 27)));
        assert_eq!(
            &"FpBinaryOp::MulF(FpMulAlu::Mul0)"[27..31],
            "Mul0",
            "the lane offset points at the lane"
        );
        let op = parse_op("furiosa_visa_std::FxpBinaryOp::AddFxp").expect("op");
        assert_eq!(
            (op.ty, op.variant, op.lane),
            ("FxpBinaryOp", "AddFxp", None)
        );
        assert!(parse_op("1 + 2").is_none());
    }

    #[test]
    fn alu_tables_follow_the_manual() {
        // Logic, L4806-L4814.
        assert_eq!(
            alu_of(VeStage::Logic, "LogicBinaryOp::ArithRightShift"),
            Some("LogicRshift")
        );
        // Fxp, L4824-L4836: the four FxpAdd ops.
        for op in ["AddFxp", "AddFxpSat", "SubFxp", "SubFxpSat"] {
            assert_eq!(alu_of(VeStage::Fxp, op), Some("FxpAdd"), "{op}");
        }
        assert_eq!(alu_of(VeStage::Fxp, "FxpBinaryOp::MulInt"), Some("FxpMul"));
        assert_eq!(
            alu_of(VeStage::Fxp, "FxpBinaryOp::ArithRightShiftRound"),
            Some("FxpRshift")
        );
        // Float, L4878-L4904: DivF inside the Fp stage uses FpFpu.
        assert_eq!(alu_of(VeStage::Fp, "FpBinaryOp::DivF"), Some("FpFpu"));
        assert_eq!(
            alu_of(VeStage::Fp, "FpBinaryOp::MaskMulF(FpMulAlu::Mul1)"),
            Some("FpMul1")
        );
        assert_eq!(alu_of(VeStage::Fp, "FmaF"), Some("FpFma"));
        // Clip, L4956-L4972: i32 AddFxp and f32 Add share ClipAdd.
        assert_eq!(
            alu_of(VeStage::Clip, "ClipBinaryOpI32::AddFxp"),
            Some("ClipAdd")
        );
        assert_eq!(
            alu_of(VeStage::Clip, "ClipBinaryOpF32::Add"),
            Some("ClipAdd")
        );
        assert_eq!(
            alu_of(VeStage::Clip, "ClipBinaryOpF32::AbsMax"),
            Some("ClipMax")
        );
    }

    #[test]
    fn golden_l5262_add_mul_sub_conflicts_on_fxpadd() {
        // Manual L5260-L5269: AddFxp (FxpAdd), MulInt (FxpMul), SubFxp (FxpAdd again) panics.
        let got = vec_codes(
            "i32",
            ".vector_fxp(FxpBinaryOp::AddFxp, 10).vector_fxp(FxpBinaryOp::MulInt, 2)\
             .vector_fxp(FxpBinaryOp::SubFxp, 5)",
        );
        // VEC-015 offers the split in front of the same call (its method name comes first).
        assert_eq!(
            got,
            vec![
                ("VEC-015".into(), "vector_fxp".into()),
                ("VEC-004".into(), "FxpBinaryOp::SubFxp".into())
            ]
        );
    }

    #[test]
    fn golden_l4905_five_float_alus_fit_one_pass() {
        // Manual L4905-L4906: exp(sqrt(((x + 1) * 2) * 3)) uses FpFma, FpMul0, FpMul1, FpFpu, FpExp.
        let got = vec_codes(
            "f32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>()\
             .vector_fp_binary(FpBinaryOp::AddF, 1.0f32)\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul1), 3.0f32)\
             .vector_fp_unary(FpUnaryOp::Sqrt).vector_fp_unary(FpUnaryOp::Exp)\
             .vector_concat::<m![1], m![A % 8]>()",
        );
        assert!(got.is_empty(), "{got:?}");
    }

    #[test]
    fn golden_l4750_tanh_sqrt_needs_fpfpu_twice() {
        // Manual L4750: tanh(sqrt(x)) is impossible in one pass (both on FpFpu).
        let got = vec_codes(
            "f32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>().vector_fp_unary(FpUnaryOp::Sqrt)\
             .vector_fp_unary(FpUnaryOp::Tanh).vector_concat::<m![1], m![A % 8]>()",
        );
        assert_eq!(got, vec![("VEC-004".into(), "FpUnaryOp::Tanh".into())]);
    }

    #[test]
    fn twin_multiplier_fix_swaps_the_lane() {
        let text = "use furiosa_visa_std::prelude::*;\naxes![A = 2048];\n#[device(chip = 1)]\n\
             fn kernel(ctx: &mut Context, a: &DmTensor<f32, m![1], m![1 # 2], m![A / 8 # 256], m![A % 8]>) {\n\
             let out = ctx.main.begin(a.view()).fetch::<f32, m![1], m![A % 8]>()\
             .collect::<m![1], m![A % 8]>().vector_init()\
             .vector_intra_slice_branch(BranchMode::Unconditional)\
             .vector_split::<m![A / 4 % 2], m![A % 4]>()\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 2.0f32)\
             .vector_fp_binary(FpBinaryOp::MulF(FpMulAlu::Mul0), 3.0f32)\
             .vector_concat::<m![1], m![A % 8]>().vector_final().commit::<m![A % 8]>(0x1000);\n}\n";
        let d = crate::check_text(text)
            .into_iter()
            .find(|d| d.code() == "VEC-004")
            .expect("VEC-004");
        let edit = &d.fixes[0].edits[0];
        assert_eq!(&text[edit.span.range()], "Mul0");
        assert_eq!(edit.new_text, "Mul1");
        assert!(d.fixes[0].safe);
    }

    #[test]
    fn stash_consumed_once_l4983() {
        // L4983: not available after a binary op consumes it; a non-consuming op in between is fine
        // (the manual's L4990 and L5012 examples).
        let ok = vec_codes(
            "i32",
            ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, 100).vector_clip(ClipBinaryOpI32::Max, Stash)",
        );
        assert!(ok.is_empty(), "{ok:?}");
        let twice = vec_codes(
            "i32",
            ".vector_stash().vector_fxp(FxpBinaryOp::AddFxp, Stash).vector_clip(ClipBinaryOpI32::Max, Stash)",
        );
        assert_eq!(twice, vec![("VEC-010".into(), "Stash".into())]);
        let none = vec_codes("i32", ".vector_clip(ClipBinaryOpI32::Max, Stash)");
        assert_eq!(none, vec![("VEC-010".into(), "Stash".into())]);
        // Typed (L4981): an f32 stash fed to the i32 stream after fp_to_fxp.
        let typed = vec_codes(
            "f32",
            ".vector_stash().vector_fp_to_fxp(31).vector_clip(ClipBinaryOpI32::Max, Stash)",
        );
        assert_eq!(typed, vec![("VEC-010".into(), "Stash".into())]);
    }

    #[test]
    fn way_modes_l4733() {
        // Clip after a narrow without widening: Way8 stage on a Way4 stream.
        let got = vec_codes(
            "f32",
            ".vector_split::<m![A / 4 % 2], m![A % 4]>().vector_clip(ClipBinaryOpF32::Max, 0.0f32)",
        );
        assert_eq!(
            got,
            vec![
                ("VEC-005".into(), "vector_clip".into()),
                ("VEC-005".into(), "vector_final".into())
            ]
        );
    }

    #[test]
    fn trim_needs_four_valid_lanes_l6582() {
        // L6578-L6582: trim_way4 requires v <= 4 valid lanes.
        let got = vec_codes(
            "f32",
            ".vector_trim_way4::<m![A % 4]>().vector_fp_unary(FpUnaryOp::Exp).vector_pad_way8::<m![A % 4 # 8]>()",
        );
        assert_eq!(got, vec![("VEC-007".into(), "vector_trim_way4".into())]);
    }

    #[test]
    fn helpers() {
        assert_eq!(literal("100"), Some(Lit::Int));
        assert_eq!(literal("-5"), Some(Lit::Int));
        assert_eq!(literal("7i32"), Some(Lit::Int));
        assert_eq!(literal("0x7fff_ffff"), Some(Lit::Int));
        assert_eq!(literal("2.5f32"), Some(Lit::Float));
        assert_eq!(literal("0.0"), Some(Lit::Float));
        assert_eq!(literal("Stash"), None);
        assert_eq!(
            with_pad("m![A % 2 # 8]", 4).as_deref(),
            Some("m![A % 2 # 4]")
        );
        assert_eq!(with_pad("m![A % 2]", 8).as_deref(), Some("m![A % 2 # 8]"));
        assert_eq!(with_pad("m![A, B]", 8).as_deref(), Some("m![[A, B] # 8]"));
        assert_eq!(array_len("BranchMode::Comparison([a, b, c, d])"), Some(4));
        assert_eq!(array_len("BranchMode::Comparison([c; 3])"), Some(3));
        assert!(has_word("VeBranchOperand::always(Stash)", "Stash"));
        assert!(!has_word("NoStash", "Stash"));
        assert_eq!(operand_var("VeRhs::vrf(&rhs)"), Some("rhs"));
        assert_eq!(operand_var("&rhs_vrf"), Some("rhs_vrf"));
    }
}
