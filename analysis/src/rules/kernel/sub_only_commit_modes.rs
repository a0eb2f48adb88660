//! KRN-007: Valid Count Packing and Generate Mode exist only in the sub context. Only
//! declared: the manual shows no API for these modes, so there is nothing to match.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const KRN_007: Rule = Rule {
    code: "KRN-007",
    name: "sub-only-commit-modes",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the API names of Valid Count Packing and Generate Mode are not in the manual",
    ),
    summary: "Valid Count Packing and Generate Mode exist only in the sub context",
    docs: "Main-context commits truncate only; the sub context also packs valid counts and writes \
           single 32-bit values. The manual shows no API for these modes, so there is nothing to match.",
    bad: "",
    good: "",
    manual: "L2332-L2336",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 names Valid Count Packing, `commit_valid_count_pack`, on the sub \
         context, but its verifier is `todo!()` \
         (`furiosa-opt-std/src/engine/commit_adapter.rs:218-245`) and visa-lint does not model it; \
         generate mode has no API in either",
    ),
};
