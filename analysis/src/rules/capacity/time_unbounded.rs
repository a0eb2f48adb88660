//! CAP-009: Time has no size limit, so no capacity rule reports a Time mapping's size. The rule
//! is only declared, to document that; it reports nothing itself.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const CAP_009: Rule = Rule {
    code: "CAP-009",
    name: "time-unbounded",
    severity: Severity::Info,
    status: Status::Implemented,
    summary: "Time has no size limit: no capacity rule reports a Time mapping's size",
    docs: "Unlike the spatial dimensions, Time grows with the data; only its decomposition into \
           sequencer entries is limited (at most 8 entries of at most 65,536 iterations, \
           SEQ-001 and SEQ-002). This rule is permissive: the CAP checks never look at Time \
           sizes, and it reports nothing itself.",
    bad: "",
    good: "axes![T = 1048576, C = 32];\n.fetch::<i8, m![T], m![C]>() // Time::SIZE = 2^20 is fine",
    manual: "L1099",
    generations: Generations::Both,
};

#[cfg(test)]
mod tests {
    use super::super::tests::codes;

    #[test]
    fn time_is_never_a_capacity_problem() {
        // L1099: Time has no hardware-imposed size limit.
        let src = "axes![T = 1099511627776, C = 32];\n#[device(chip = 1)]\nfn k<'l, const X: Tu>(s: CollectTensor<'l, X, i8, m![1], m![1 # 2], m![1 # 256], m![T], m![C]>) {}\n";
        assert!(!codes(src).iter().any(|c| c.starts_with("CAP")));
    }
}
