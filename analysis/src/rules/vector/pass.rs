//! The state of one Vector Engine pass along a chain: the facts the VEC rules share (the stage
//! the pass has reached and the step that put it there, the lane mode and the step that
//! narrowed it, the ALUs taken, the stash, two-group mode). The walk (`walk.rs`) moves it on
//! step by step and hands it to each rule's check.

use super::stages::{is_way4, rank};
use crate::model::{Arg, Method, Step, VeStage};

/// The state of one Vector Engine pass along a chain.
pub(super) struct Pass<'a> {
    /// The current stage; `Init` right after `vector_init()`.
    pub(super) stage: VeStage,
    /// The step that put the pass in its current stage.
    pub(super) stage_step: Option<&'a Step>,
    /// The whole pass is in this chain (it starts at `vector_init()`), so the stash state is known.
    pub(super) complete: bool,
    /// The Narrow step while the stream is in Way4.
    pub(super) narrow: Option<&'a Step>,
    /// The stream is in Way4 (4 lanes per packet), between a Narrow and a Widen step.
    pub(super) way4: bool,
    /// Float, IntraSliceReduce and FpDiv ops since the Narrow step (what the Way4 detour is for).
    pub(super) way4_ops: usize,
    /// Two-group mode: the groups `vector_intra_slice_unzip()` made are not merged yet.
    pub(super) paired: bool,
    /// The `_zip` op that merged the two groups.
    pub(super) zipped: Option<&'a Step>,
    /// ALU -> the op argument that took it.
    pub(super) alus: Vec<(&'static str, &'a Arg)>,
    /// The `vector_stash()` that filled the stash slot.
    pub(super) stash: Option<&'a Step>,
    /// The `Stash` operand that consumed it.
    pub(super) consumed: Option<&'a Arg>,
}

impl<'a> Pass<'a> {
    /// A pass in `stage`; `complete` when it starts at `vector_init()` in this chain.
    pub(super) fn at(stage: VeStage, complete: bool) -> Pass<'a> {
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

    /// `step` opens a block (a branch, the two-group pair or an inter-slice reduce): the pass
    /// is in `stage` and the stream in Way8.
    pub(super) fn enter(&mut self, stage: VeStage, step: &'a Step) {
        self.stage = stage;
        self.stage_step = Some(step);
        self.way4 = false;
    }

    /// An op of `stage` ran: the pass is in that stage unless it is an earlier one (a
    /// misordered op, reported by VEC-003, leaves the pass where it was).
    pub(super) fn advance(&mut self, stage: VeStage, step: &'a Step) {
        if rank(stage) >= rank(self.stage) {
            self.stage = stage;
            self.stage_step = Some(step);
        }
    }

    /// The Narrow step `step` put the stream in Way4.
    pub(super) fn narrow_to(&mut self, step: &'a Step) {
        self.way4 = true;
        self.narrow = Some(step);
        self.way4_ops = 0;
    }

    /// A Widen step put the stream back in Way8.
    pub(super) fn widen(&mut self) {
        self.way4 = false;
        self.narrow = None;
    }

    /// Whether the pass could be cut in front of its next op (unpaired, no live stash, Way8 or
    /// narrowed by a `vector_trim_way4` whose packet is known), and how.
    pub(super) fn cut(&self) -> Option<Cut> {
        let free = self.complete
            && !self.paired
            && self.zipped.is_none()
            && (self.stash.is_none() || self.consumed.is_some());
        match self.narrow {
            _ if !free => None,
            _ if !self.way4 => Some(Cut::Way8),
            Some(n) if n.method == Method::VectorTrimWay4 => n
                .generics
                .first()
                .map(|g| Cut::Trimmed(g.text.trim().to_string())),
            _ => None,
        }
    }
}

/// Where a pass can be cut: in Way8, or in Way4 after `vector_trim_way4::<P4>()`.
#[derive(Clone, Debug)]
pub(super) enum Cut {
    Way8,
    Trimmed(String),
}
