//! SWI-003: a regular topology splits the input Slice as `[slice2, slice1, slice0]` and the
//! Time as `[time1, time0]`, and the compiler infers `slice2` and `time1` by division; both
//! must be whole. The checks return the split, or why it does not fit ([`Unfit`]).

use super::layouts::split3;
use super::unfit::{Unfit, unfit};
use crate::diagnostic::Severity;
use crate::mapping::Layout;
use crate::rule::{Generations, Rule, Status};

pub const SWI_003: Rule = Rule {
    code: "SWI-003",
    name: "switch-parameters-divide",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Topology parameters divide the input sizes: slice1·slice0 | InSlice::SIZE, time0 | InTime::SIZE",
    docs: "The compiler infers `slice2 = InSlice::SIZE / (slice1 * slice0)` and `time1 = \
           InTime::SIZE / time0`; both must be whole (so that `slice2·slice1·slice0 = 256` and \
           `time1·time0 = Time::SIZE`). Applies to every regular topology (Transpose and \
           InterTranspose split the Slice the same way); a parameter of 0 is reported too. \
           Reported at the offending parameter.",
    bad: "/* Time m![B] with B = 64 */ SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 3 }",
    good: "/* Time m![B] with B = 64 */ SwitchConfig::Broadcast01 { slice1: 2, slice0: 2, time0: 4 }",
    manual: "L3143, L3166, L3222",
    generations: Generations::Both,
};

/// Checks that `slice1 * slice0` divides the Slice (SWI-003), and splits it as `[slice2,
/// slice1, slice0]`.
pub(super) fn slice_split(
    slice: &Layout,
    slice1: u64,
    slice0: u64,
) -> Result<(Layout, Layout, Layout), Unfit> {
    if slice1 == 0 || slice0 == 0 {
        let field = if slice1 == 0 { "slice1" } else { "slice0" };
        return Err(unfit(
            &SWI_003,
            field,
            format!("`{field}` is 0; it counts slices and must be at least 1"),
        ));
    }
    split3(slice, slice1, slice0).ok_or_else(|| {
        unfit(
            &SWI_003,
            "slice1",
            format!(
                "slice1 × slice0 = {} does not divide InSlice::SIZE = {}: slice2 = InSlice::SIZE / (slice1 × slice0) must be whole",
                u128::from(slice1) * u128::from(slice0),
                slice.size
            ),
        )
    })
}

/// Checks that `time0` divides the Time (SWI-003).
pub(super) fn time_divides(time: &Layout, time0: u64) -> Result<(), Unfit> {
    if time0 == 0 || !time.size.is_multiple_of(time0) {
        return Err(unfit(
            &SWI_003,
            "time0",
            format!(
                "time0 = {time0} does not divide InTime::SIZE = {}: time1 = InTime::SIZE / time0 must be whole",
                time.size
            ),
        ));
    }
    Ok(())
}
