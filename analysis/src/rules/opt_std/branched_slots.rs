//! OPT-008: a `Branched` operand fills one pass's slots in order, three immediates then one
//! register-file port, and refuses a guard no execution id satisfies and any slot after an
//! unconditional one. The model builder finds the faults; this file holds the rule and its
//! diagnostic.

use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::model::refusals::SlotFault;
use crate::rule::{Generations, Rule, Status};

pub const OPT_008: Rule = Rule {
    code: "OPT-008",
    name: "branched-slots",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A `Branched` operand fills at most 3 immediates then 1 rf port, with no dead guard and nothing after an unconditional one (furiosa-opt-std)",
    docs: "A guarded Vector Engine operand of furiosa-opt-std 0.6 \
           (`Branched::imm(guard, v).imm(..).rf(guard, &vrf)`) fills the slots of one pass in \
           order, the first slot whose guard admits an element's execution id deciding its \
           operand. A pass has three immediate registers and one register-file port, so at most \
           three `imm` and one `rf`, the `rf` last (the builder's typestate, \
           `furiosa-opt-std/src/engine/vector/operand.rs:320-470` at ebb846a). A guard that no \
           execution id satisfies (`TagGuard::not_matches([Ignore; 4])`) is refused, and so is \
           any slot after an unconditional one (`TagGuard::all()`, `matches([Ignore; 4])`), \
           which already claims every element left over (`BranchedOperand::validate` and \
           `SlotDefect`, `furiosa-opt-common-ir/src/lib.rs:491-510,560-600`; CHANGES.md:51). \
           Put the unconditional slot last, or guard it. Guards are read from their text, \
           through `let`s; a guard built otherwise is not judged. The manual's operands \
           (`VeBranchOperand`) have no such builder; the rule applies to furiosa-opt-std crates.",
    bad: "Branched::imm(TagGuard::all(), 1.0f32).rf(negative, &scale_vrf)",
    good: "Branched::imm(negative, 1.0f32).rf(TagGuard::all(), &scale_vrf)",
    manual: "",
    generations: Generations::OptStdOnly(
        "`Branched` and `TagGuard` exist only in furiosa-opt-std 0.6, whose slot check refuses \
         these operands (`furiosa-opt-common-ir/src/lib.rs:560-600`; CHANGES.md:51)",
    ),
};

/// OPT-008: the diagnostic of a `Branched` operand's slot fault (found while the model is
/// built, [`crate::model::refusals::slot_defects`]).
pub(super) fn diagnostic(at: Span, fault: &SlotFault, related: Option<Span>) -> Diagnostic {
    let message = match fault {
        SlotFault::NoFreeImmediate => "a Vector Engine pass has three immediate registers, and \
             this `imm` asks for a fourth: keep at most three `imm` slots, or pass a value from \
             the VRF through `rf`"
            .to_string(),
        SlotFault::AfterRf { method } => format!(
            "the rf port is a `Branched` operand's last slot, so no `.{method}(..)` may follow \
             `.rf(..)`: fill the immediates first"
        ),
        SlotFault::DeadGuard { slot, guard } => format!(
            "slot {slot}'s guard `{guard}` is satisfied by no execution id, so the slot would \
             never fire: furiosa-opt-std refuses it; drop the slot or guard it with a pattern \
             that matches"
        ),
        SlotFault::AfterUnconditional {
            unconditional,
            slot,
        } if *slot == "rf" => format!(
            "slot {unconditional} is unconditional: it claims every element the earlier guards \
             left over, so the rf port after it could never fire; guard slot {unconditional}, \
             and give the rf port `TagGuard::all()` if it should take what is left"
        ),
        SlotFault::AfterUnconditional {
            unconditional,
            slot,
        } => format!(
            "slot {unconditional} is unconditional: it claims every element the earlier guards \
             left over, so slot {slot} after it could never fire; move this `imm` before the \
             unconditional one, or guard slot {unconditional}"
        ),
    };
    let d = Diagnostic::new(&OPT_008, at, message);
    match (fault, related) {
        (SlotFault::AfterUnconditional { unconditional, .. }, Some(r)) => {
            d.with_related(r, format!("slot {unconditional}'s unconditional guard"))
        }
        _ => d,
    }
}
