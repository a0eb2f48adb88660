//! FET-005: a casting fetch produces at most 32 bytes per fetch. No derivable fetch violates
//! it, since the compiler chooses a fetch size within the limit (`derive::fetch_size_choices`
//! applies it), so it is covered by FET-002 and has no check here.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const FET_005: Rule = Rule {
    code: "FET-005",
    name: "casting-fetch-32-bytes",
    severity: Severity::Error,
    status: Status::Covered {
        by: &["FET-002"],
        why: "never violated by a derivable fetch: the compiler keeps a casting fetch within 32 bytes \
         by its choice of fetch_size (sub: 4 bytes for i4 → i32, else 8, L2018-L2021; main: the \
         manual's i8 → i32 fetch of 32-byte packets, L1729-L1740, is valid, so it lowers the \
         size), and every supported cast has such a size (1 byte in main); visa-lint applies the \
         limit in derive::fetch_size_choices, and a sub size that does not divide the packet or \
         run is FET-006/FET-002's",
    },
    summary: "A casting fetch produces at most 32 bytes per fetch",
    docs: "fetch_size × widening ratio ≤ 32 bytes: i4 → i32 with a 4-byte fetch is valid (32 \
           bytes out); i4 → i32 with 8 bytes or i8 → i32 with 16 bytes (64 bytes out) are not.",
    bad: "",
    good: "",
    manual: "L1996-L2017",
    generations: Generations::Both,
};

#[cfg(test)]
mod tests {
    use crate::model::Dtype;

    #[test]
    fn cast_fetch_widths_l2000() {
        // L2000-L2017: i4 -> i32 with a 4-byte fetch produces 32 bytes; with 8 bytes, 64; i8 ->
        // i32 with 16 bytes, 64. Widening ratio × fetch_size is the output per fetch.
        let out = |from: &str, to: &str, fetch: u64| {
            let (f, t) = (
                u64::from(Dtype::from_name(from).map_or(8, Dtype::bits)),
                u64::from(Dtype::from_name(to).map_or(8, Dtype::bits)),
            );
            fetch * t / f
        };
        assert_eq!(out("i4", "i32", 4), 32);
        assert_eq!(out("i4", "i32", 8), 64);
        assert_eq!(out("i8", "i32", 16), 64);
    }
}
