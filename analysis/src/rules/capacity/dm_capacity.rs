//! CAP-005: a tensor stored in DM fits a slice's 512 KB, and its constant address leaves room
//! for it.

use super::footprint::{self, Capacity};
use super::stores::Store;
use crate::diagnostic::{Diagnostic, Severity};
use crate::rule::{Generations, Rule, Status};
use crate::rules::context::FnContext;

pub const CAP_005: Rule = Rule {
    code: "CAP-005",
    name: "dm-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "A DmTensor's Element fits the 512 KB of its slice, from its address on",
    docs: "Each slice has 512 KB (524,288 bytes) of DM with its own address space, and a \
           `DmTensor<D, ..., Element>` at `addr` occupies `addr .. addr + Element::SIZE * \
           size_of::<D>()` (i4 counts half a byte). The Element of every DmTensor type is \
           checked against 512 KB, and `to_dm(.., addr)` / `commit(addr)` with a constant \
           address against the end of the slice. Tile along Time, or distribute more factors \
           over Slice, Cluster or Chip. `furiosa_visa_std` does not check it (its CPU backend \
           keeps every tensor in host memory and ignores DM addresses), so a kernel breaking it \
           can pass the library's tests; the rule stays an error because the size is the \
           hardware's (L1088): such a tensor does not fit the slice's DM. The one vendor \
           example that breaks it (`matmul_16384`, 1 MB per slice) has its test ignored.",
    bad: "axes![A = 1024, B = 1024];\nlet a: DmTensor<i8, m![1], m![1 # 2], m![1 # 256], m![A, B]> = hbm.to_dm(&mut ctx.tdma, 0); // 1 MiB",
    good: "axes![A = 1024, B = 1024];\nlet a: DmTensor<i8, m![1], m![1 # 2], m![A / 4], m![A % 4, B]> = hbm.to_dm(&mut ctx.tdma, 0); // 4 KiB",
    manual: "L1088, L1093, L1075, L2863-L2879, L2874",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 has no DM addresses (CHANGES.md:26-32), so only the Element's 512 KB \
         per slice is checked there; its open code asserts no DM limit of its own (library-v06.md \
         §7)",
    ),
};

/// CAP-005 on the stored tensor `s`.
pub(super) fn check(cx: &FnContext<'_>, s: &Store<'_>, out: &mut Vec<Diagnostic>) {
    let c = Capacity {
        rule: &CAP_005,
        bytes: cx.target.dm_bytes_per_slice,
        unit: "slice",
        space: "of DM",
        advice: "tile it along Time, or distribute more factors over Slice, Cluster or Chip",
        mode: "",
        combined: "",
    };
    footprint::check(cx, s, &c, out);
}

#[cfg(test)]
mod tests {
    use super::super::tests::{codes, diags};
    use crate::target::RNGD;

    #[test]
    fn l1078_sram_per_chip_and_per_system() {
        // "Each chip has 256MB of SRAM: 2 clusters × 256 slices × 512KB per slice. An 8-chip
        // system provides 2GB total SRAM capacity."
        let per_chip = RNGD.clusters * RNGD.slices * RNGD.dm_bytes_per_slice;
        assert_eq!(per_chip, 256 << 20);
        assert_eq!(8 * per_chip, 2 << 30);
    }

    const DM: &str = "axes![E = SIZE];\n#[device(chip = 1)]\nfn k(ctx: &mut Context, h: &HbmTensor<D, m![1], m![E]>) {\n    let d: DmTensor<D, m![1], m![1 # 2], m![1 # 256], m![E]> = h.to_dm(&mut ctx.tdma, ADDR);\n}\n";

    fn dm(d: &str, size: &str, addr: &str) -> String {
        DM.replace("SIZE", size)
            .replace("ADDR", addr)
            .replace("D,", &format!("{d},"))
    }

    #[test]
    fn l1088_l1093_dm_footprint_from_the_address() {
        // 512 KB exactly fits at 0; one more byte does not.
        assert!(codes(&dm("i8", "524288", "0")).is_empty());
        let d = diags(&dm("i8", "524289", "0"));
        assert_eq!(d.len(), 1, "{d:?}");
        assert_eq!(d[0].0, "CAP-005");
        assert!(d[0].1.contains("524289 × i8 = 524289 bytes"), "{}", d[0].1);
        // i4 is half a byte: 2^20 i4 = 512 KB fits at 0, not at 8 (addr..addr + 524288).
        assert!(codes(&dm("i4", "1048576", "0")).is_empty());
        let d = diags(&dm("i4", "1048576", "8"));
        assert_eq!(codes(&dm("i4", "1048576", "8")), vec!["CAP-005"]);
        assert!(d[0].1.contains("occupies 0x8..0x80008"), "{}", d[0].1);
        // bf16: 64 Ki elements = 128 KB at 0x60000 ends at 0x80000 (fits), at 0x60008 it does not.
        assert!(codes(&dm("bf16", "65536", "0x60000")).is_empty());
        assert_eq!(codes(&dm("bf16", "65536", "0x60008")), vec!["CAP-005"]);
    }

    #[test]
    fn huge_sizes_do_not_panic() {
        let src = dm("i32", "9223372036854775808", "0xffffffffffffff00");
        let d = codes(&src);
        assert!(d.contains(&"CAP-005".to_string()), "{d:?}");
    }
}
