//! The hardware description: every number of the RNGD chip that a rule or a derivation uses,
//! once, with the manual line it comes from. Rules read `Target`, never literals.

/// One chip generation's numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    pub name: &'static str,
    /// Clusters per chip (L1080).
    pub clusters: u64,
    /// Slices per cluster (L1081).
    pub slices: u64,
    /// DM bytes per slice (L1088).
    pub dm_bytes_per_slice: u64,
    /// TRF bytes per row, full mode (L1089).
    pub trf_bytes_per_row: u64,
    /// MAC rows per slice (L1089).
    pub trf_rows: u64,
    /// VRF bytes per slice (L1090).
    pub vrf_bytes_per_slice: u64,
    /// Bytes in one flit, the unit every engine after Collect consumes (L3039, L3605).
    pub flit_bytes: u64,
    /// Loop entries a sequencer has (L1568, L1616).
    pub sequencer_entries: usize,
    /// Iterations one sequencer entry can count, inclusive (L1632; constraints.md §22 A-5).
    pub sequencer_entry_size: u64,
}

/// RNGD, the chip the manual describes.
pub const RNGD: Target = Target {
    name: "RNGD",
    clusters: 2,
    slices: 256,
    dm_bytes_per_slice: 512 * 1024,
    trf_bytes_per_row: 8 * 1024,
    trf_rows: 8,
    vrf_bytes_per_slice: 8 * 1024,
    flit_bytes: 32,
    sequencer_entries: 8,
    sequencer_entry_size: 65_536,
};
