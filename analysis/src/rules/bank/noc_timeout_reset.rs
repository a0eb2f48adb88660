//! BNK-003: a DMA request unanswered for 4096 cycles resets the cluster domain. It happens at
//! run time, so the rule is only declared: BNK-001 and BNK-002 report its static causes.

use crate::diagnostic::Severity;
use crate::rule::{Generations, Rule, Status};

pub const BNK_003: Rule = Rule {
    code: "BNK-003",
    name: "noc-timeout-reset",
    severity: Severity::Info,
    status: Status::NotStatic(
        "the 4096-cycle NoC timeout happens at run time; BNK-001/BNK-002 report its static causes",
    ),
    summary: "A DMA request unanswered for 4096 cycles resets the cluster domain",
    docs: "After 4096 cycles without a response the NoC declares the DMA transaction dead and \
           enters an exception state; only a full cluster-domain reset recovers (L2905, \
           L2940). This is why BNK-001 and BNK-002 matter; it is not itself visible in the \
           source.",
    bad: "",
    good: "",
    manual: "L2905, L2940, L2842",
    generations: Generations::Both,
};

#[cfg(test)]
mod tests {
    use crate::target::RNGD;

    /// The limit's derivation: (256 / 128) × 64 × 32 = 4096 cycles (L2938-L2939).
    #[test]
    fn limit_matches_noc_timeout() {
        let t = &RNGD;
        let cycles = t.dma_dm_bytes_per_cycle / t.dmn_bytes_per_cycle
            * t.bank_max_consecutive
            * t.slices_per_dmn;
        assert_eq!(cycles, t.noc_timeout_cycles);
        assert_eq!(cycles, 4096);
        assert_eq!(t.dm_bank_bytes * t.dm_banks, 128); // L2876: 128 B over 16 banks
    }
}
