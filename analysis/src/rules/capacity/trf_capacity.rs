//! CAP-006: a tensor loaded into the TRF fits a Row's 8 KB (half of it in `FirstHalf` or
//! `SecondHalf`), and its constant address leaves room for it; under furiosa-opt-std the
//! whole TRF is checked instead.

use super::footprint::{self, Capacity, human};
use super::sites::shown;
use super::stores::Store;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::{FnContext, at_arg};

pub const CAP_006: Rule = Rule {
    code: "CAP-006",
    name: "trf-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A TrfTensor's Element fits 8 KB per Row (4 KB in FirstHalf / SecondHalf); under furiosa-opt-std, Lane × Element fits 64 KiB",
    docs: "The TRF is 8 bank rows × 2 bank columns × 128 rows of 32 bytes: 8 KB per Row in \
           `TrfAddress::Full`, half of it (64 rows, 4 KB) in `FirstHalf` and `SecondHalf`. \
           `Element::SIZE * size_of::<D>()` must fit. The manual notes that fewer rows extend \
           the per-Row space (L4148); visa-lint keeps the stated conservative limit \
           (constraints.md §22 A-21). A TrfTensor parameter, whose region is not known, is \
           checked against the Full 8 KB. The manual's GEMM stores `m![J / 8 % 4, K]` of bf16 \
           (K = 2048): 16 KB per Row (§22 A-12). Tile the contraction axis over passes.",
    bad: "axes![J = 512, K = 2048];\n.to_trf::<m![J % 8], m![J / 8 % 4, K]>(TrfAddress::Full) // bf16: 16 KB per Row",
    good: "axes![J = 512, K = 512];\n.to_trf::<m![J % 8], m![J / 8 % 4, K]>(TrfAddress::Full) // bf16: 4 KB per Row",
    manual: "L1089, L139, L4116-L4118, L4141-L4155",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no TRF regions and checks the whole TRF: Lane × Element bytes fit \
         its 64 KiB (`TRF_CAPACITY_BYTES`, \
         `furiosa-opt-lower/src/verify/engine/collect.rs:150-159`), so 4 lanes of 16 KB are legal \
         there; the manual's library asks 8 KB per Row (L1089)",
    ),
};

/// CAP-006 per Row (or per half Row, for a half region) on the stored TRF tensor `s`.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let t = cx.target;
    let (bytes, space) = if s.half {
        (t.trf_bytes_per_row / 2, "of TRF in FirstHalf/SecondHalf")
    } else {
        (t.trf_bytes_per_row, "of TRF")
    };
    let mode = match (s.step.is_some(), s.half) {
        (_, true) => " (a half region)",
        (false, false) => " (its TrfAddress is not known here: checked against Full)",
        _ => "",
    };
    let c = Capacity {
        rule: &CAP_006,
        bytes,
        unit: "Row",
        space,
        advice: "tile the contraction axis over several passes, or spread factors over Row and Slice",
        mode,
        combined: "",
    };
    footprint::check(cx, s, &c, out);
}

/// CAP-006 as furiosa-opt-std 0.6 checks it: the whole TRF, `Lane × Element` bytes, against
/// its 64 KiB (`TRF_CAPACITY_BYTES`; the manual's 8 rows × 8 KB), instead of the manual's
/// 8 KB per Row (library-v06.md R4; the manual concedes fewer rows see more, L4148).
pub(super) fn check_total(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let cap = cx.target.trf_bytes();
    let lanes = s.lanes.unwrap_or(1);
    let total = s.bytes.saturating_mul(lanes);
    if total <= cap {
        return;
    }
    let plural = if lanes == 1 { "" } else { "s" };
    let what = match s.element {
        Some(m) => format!(
            "{lanes} lane{plural} of the TrfTensor Element {}",
            shown(cx, m)
        ),
        None => format!("{lanes} lane{plural} of the stream loaded into this TrfTensor"),
    };
    let msg = format!(
        "{what} hold {lanes} × {} × {} = {}; the TRF has {} in total (furiosa-opt-std checks \
         Lane × Element): tile the contraction axis over several passes, or use fewer lanes",
        s.elements,
        s.dtype,
        human(total),
        human(cap)
    );
    out.push(match s.step {
        Some(step) => at_arg(&CAP_006, step, Some(s.at), msg),
        None => Diagnostic::new(&CAP_006, s.at, msg),
    });
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, diags};

    #[test]
    fn l503_gemm_trf_is_16_kb_per_row() {
        let src = include_str!("../../../../fixtures/manual/0473_gemm.rs");
        let d = diags(src);
        let trf: Vec<_> = d.iter().filter(|d| d.0 == "CAP-006").collect();
        assert_eq!(trf.len(), 1, "{d:?}");
        // 4 × 2048 bf16 = 16 KB against 8 KB per Row.
        assert!(
            trf[0]
                .1
                .contains("8192 × bf16 = 16384 bytes (16 KB) per Row"),
            "{}",
            trf[0].1
        );
        assert!(trf[0].1.contains("8192 bytes (8 KB)"), "{}", trf[0].1);
    }

    #[test]
    fn trf_halves_get_half_the_row() {
        let k = |k: &str, mode: &str| {
            format!(
                "axes![K = {k}];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, b: &DmTensor<bf16, m![1], m![1 # 2], m![1 # 256], m![K]>) {{\n    let t = ctx.sub.begin(b.view()).fetch::<bf16, m![K / 16], m![K % 16]>().collect::<m![K / 16], m![K % 16]>().to_trf::<m![1], m![K]>(TrfAddress::{mode});\n}}\n"
            )
        };
        assert!(!codes(&k("4096", "Full")).contains(&"CAP-006".to_string()));
        assert!(codes(&k("4096", "SecondHalf")).contains(&"CAP-006".to_string()));
        assert!(!codes(&k("2048", "FirstHalf")).contains(&"CAP-006".to_string()));
    }
}
