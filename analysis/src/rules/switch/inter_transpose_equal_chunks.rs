//! SWI-004: InterTranspose exchanges a `time1` of the Time with the `slice1` of the Slice, so
//! the Time must hold a `time1` of size `slice1`. The check returns the Time's split as
//! `[time2, time1, time0]`, or why there is none ([`Unfit`]).

use super::layouts::split3;
use super::unfit::{Unfit, unfit};
use crate::diagnostic::Severity;
use crate::mapping::Layout;
use crate::rule::{Generations, Rule, Status};

pub const SWI_004: Rule = Rule {
    code: "SWI-004",
    name: "inter-transpose-equal-chunks",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "InterTranspose swaps equal chunks: the input Time holds a time1 of size slice1",
    docs: "InterTranspose exchanges `time1` of the Time with `slice1` of the Slice; OutSlice::SIZE \
           stays 256 only when `time1 == slice1`, so the compiler takes `time1 = slice1` and \
           derives `time2 = InTime::SIZE / (slice1 * time0)`. When `time0` divides the Time \
           (else SWI-003) but `slice1 * time0` does not, there is no `time1` of size `slice1`: \
           lower `slice1` or lengthen the Time.",
    bad: "/* Slice m![C], Time m![A] with A = 4 */ SwitchConfig::InterTranspose { slice1: 4, slice0: 16, time0: 2 }",
    good: "/* Slice m![C], Time m![A] with A = 4 */ SwitchConfig::InterTranspose { slice1: 2, slice0: 16, time0: 2 }",
    manual: "L3287-L3289",
    generations: Generations::Both,
};

/// Splits the Time of an InterTranspose as `[time2, time1, time0]` with `time1` of size
/// `slice1` (SWI-004); `time0` already divides it.
pub(super) fn time_split(
    time: &Layout,
    slice1: u64,
    time0: u64,
) -> Result<(Layout, Layout, Layout), Unfit> {
    split3(time, slice1, time0).ok_or_else(|| {
        unfit(
            &SWI_004,
            "slice1",
            format!(
                "InterTranspose swaps a time1 of size slice1 = {slice1} into the Slice, but InTime::SIZE / time0 = {} / {time0} = {} has no factor of size {slice1}",
                time.size,
                time.size / time0,
            ),
        )
    })
}
