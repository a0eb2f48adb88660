//! The walk of a chain as Vector Engine passes. A pass starts at `vector_init()` (or, in a
//! helper given a stream in mid-pass, at the stage its input's typestate says) and ends after
//! `vector_final()`; every Vector Engine step in between is handed, with the state of its pass,
//! to the checks of the rules it concerns, and then the pass moves on.
//!
//! The order of the calls below is the order diagnostics are pushed in, and a check that fired
//! may silence later ones: a misordered op's lane mode is not checked (VEC-003 before
//! VEC-005..007 and VEC-016), a stage that takes the wrong stream type is not checked for its
//! op (VEC-008 before VEC-009), and a stash in two-group mode is VEC-013 only.

use super::ops::{has_word, operands};
use super::pass::{Cut, Pass};
use super::stages::{has_alu_pool, stage_of};
use super::{
    argument_mode, branch_mode, float_path_throughput, logic_f32_shift, trim_way4_drops_data,
    two_group_mode, vector_alu_single_use, vector_block_entry, vector_dtype,
    vector_narrow_widen_pairing, vector_operand, vector_stage_dtype, vector_stage_order,
    vector_stash, vector_way_mode,
};
use crate::diagnostic::Diagnostic;
use crate::model::{Chain, Dtype, Engine, Kind, Method, Step, VeStage};
use crate::rules::context::FnContext;

/// Walks `chain` as passes and checks its Vector Engine steps. Returns, per step, whether the
/// pass could be cut in front of it, and how (VEC-015's split).
pub(super) fn chain<'a>(
    cx: &FnContext<'_>,
    chain: &'a Chain,
    out: &mut Vec<Diagnostic>,
) -> Vec<Option<Cut>> {
    let mut cuts: Vec<Option<Cut>> = vec![None; chain.steps.len()];
    let mut pass: Option<Pass<'a>> = None;
    for (i, step) in chain.steps.iter().enumerate() {
        if step.engine != Some(Engine::Vector) {
            if pass.as_ref().is_some_and(|p| p.stage == VeStage::Final) {
                pass = None;
            }
            continue;
        }
        if step.method == Method::VectorInit {
            vector_dtype::check(&chain.steps[..i], step, out);
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
        cuts[i] = p.cut();
        op(cx, p, step, out);
    }
    cuts
}

/// One step of a pass after `vector_init()`: a block entry, `vector_stash()` or a stage's op.
fn op<'a>(cx: &FnContext<'_>, p: &mut Pass<'a>, step: &'a Step, out: &mut Vec<Diagnostic>) {
    if vector_block_entry::check(p, step, out) {
        p.stage = VeStage::Branch;
    }
    if block(cx, p, step, out) {
        return;
    }
    let Some(stage) = stage_of(&step.method) else {
        return;
    };
    if matches!(
        stage,
        VeStage::Fp | VeStage::IntraSliceReduce | VeStage::FpDiv
    ) {
        p.way4_ops += 1;
    }
    if !vector_stage_order::check(p, stage, step, out) {
        lane_mode(cx, p, stage, step, out);
    }
    let dtype = step.input.as_ref().and_then(|t| t.dtype);
    if !vector_stage_dtype::check(stage, dtype, step, out) {
        logic_f32_shift::check(stage, dtype, step, out);
    }
    if has_alu_pool(stage)
        && let Some(taken) = vector_alu_single_use::check(p, stage, step, out)
    {
        p.alus.push(taken);
    }
    operand_checks(cx, p, dtype, step, out);
    argument_mode::check(step, out);
    if step.method.is_zip() {
        two_group_mode::zip(p, step, out);
        p.paired = false;
        p.zipped = Some(step);
    } else {
        two_group_mode::check(p, stage, step, out);
    }
    p.advance(stage, step);
}

/// The steps that open a block (`vector_intra_slice_unzip`, `vector_intra_slice_branch`,
/// `vector_inter_slice_reduce`) and `vector_stash()`. False when `step` is none of them.
fn block<'a>(
    cx: &FnContext<'_>,
    p: &mut Pass<'a>,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) -> bool {
    match &step.method {
        Method::VectorIntraSliceUnzip => {
            vector_block_entry::unzip(p, step, out);
            two_group_mode::unzip_axis(step, out);
            p.enter(VeStage::Pair, step);
            p.paired = true;
        }
        Method::VectorIntraSliceBranch => {
            vector_block_entry::branch(p, step, out);
            branch_mode::check(cx, step, out);
            p.enter(VeStage::Branch, step);
        }
        Method::VectorInterSliceReduce => {
            // Which intra-slice stages may precede it is XSL-002.
            p.enter(VeStage::InterSliceReduce, step);
        }
        Method::VectorStash => stash(p, step, out),
        _ => return false,
    }
    true
}

/// `vector_stash()`: unavailable in two-group mode (VEC-013, and nothing else is said), else it
/// needs a block (VEC-002) at a Stashable stage with the slot free (VEC-010), and fills it.
fn stash<'a>(p: &mut Pass<'a>, step: &'a Step, out: &mut Vec<Diagnostic>) {
    if two_group_mode::stash(p, step, out) {
        return;
    }
    if vector_block_entry::stash(p, step, out) {
        p.stage = VeStage::Branch;
    }
    vector_stash::check(p, step, out);
    p.stash = Some(step);
}

/// The lane mode: a Narrow step's packet (VEC-006, VEC-007, VEC-016) puts the stream in Way4, a
/// Widen step's pairing and packet (VEC-016, VEC-006) put it back in Way8, and every other
/// stage runs in the mode it needs (VEC-005).
fn lane_mode<'a>(
    cx: &FnContext<'_>,
    p: &mut Pass<'a>,
    stage: VeStage,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) {
    match stage {
        VeStage::Narrow if !p.way4 => {
            vector_narrow_widen_pairing::narrow_shape(cx, step, out);
            trim_way4_drops_data::check(cx, step, out);
            float_path_throughput::split_where_trim_suffices(cx, step, out);
            p.narrow_to(step);
        }
        VeStage::Widen => {
            float_path_throughput::empty_detour(p, step, out);
            vector_narrow_widen_pairing::pairing(p, step, out);
            vector_narrow_widen_pairing::widen_shape(cx, step, out);
            p.widen();
        }
        _ => vector_way_mode::check(cx, p, stage, step, out),
    }
}

/// The op's operands: `Stash` reads the pass's stash (VEC-013 in two-group mode, otherwise
/// VEC-010, and the first such read consumes it); any other operand is a constant or a VRF
/// tensor (VEC-011).
fn operand_checks<'a>(
    cx: &FnContext<'_>,
    p: &mut Pass<'a>,
    d: Option<Dtype>,
    step: &'a Step,
    out: &mut Vec<Diagnostic>,
) {
    for a in operands(step) {
        if has_word(&a.text, "Stash") {
            if !two_group_mode::stash_operand(p, a, out) {
                vector_stash::operand(p, d, a, out);
                if p.consumed.is_none() {
                    p.consumed = Some(a);
                }
            }
            continue;
        }
        vector_operand::check(cx, step, d, a, out);
    }
}
