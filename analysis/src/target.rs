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
    /// Fetch-adapter type conversions `(D, D2)` besides the identity (L1962-L1971; RNGD-S adds
    /// more, L1972-L1977).
    pub fetch_casts: &'static [(&'static str, &'static str)],
    /// The fetch output packet must be a multiple of this many bytes (L1711-L1716, L1723).
    pub fetch_align_bytes: u64,
    /// DM write addresses (and HBM-to-DM read/write addresses) align to this many bytes (L2425-L2427).
    pub dma_dm_align_bytes: u64,
    /// Element types the DMA engine moves (L2525).
    pub dma_dtypes: &'static [&'static str],
    /// Loop entries a sequencer has (L1568, L1616).
    pub sequencer_entries: usize,
    /// Iterations one sequencer entry can count, inclusive (L1632; constraints.md §22 A-5).
    pub sequencer_entry_size: u64,
    /// Main-context fetch sizes in bytes, the sequencer's base packets (L1632, L1757, L2118).
    pub fetch_sizes_main: &'static [u64],
    /// Sub-context fetch sizes in bytes: 8, or 4 when casting i4 to i32 (L1758-L1759, L2018-L2021).
    pub fetch_sizes_sub: &'static [u64],
    /// Main-context commit sizes in bytes (L2232, L2328).
    pub commit_sizes_main: &'static [u64],
    /// Sub-context commit sizes in bytes (L2233, L2328).
    pub commit_sizes_sub: &'static [u64],
    /// 32-bit lanes of a Vector Engine Way8 packet (one flit) (L4845, L4553).
    pub ve_way8_lanes: u64,
    /// Active lanes of a Vector Engine Way4 packet (float / reduce path) (L4846, L4851).
    pub ve_way4_lanes: u64,
    /// `InputCmp`s of a Branch `Comparison` mode, one per ExecutionId bit (L4795, L4801).
    pub ve_branch_comparisons: usize,
    /// Accumulator slots of the IntraSliceReduce stage (L5384-L5388, L5499).
    pub isr_accumulator_slots: u64,
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
    fetch_casts: &[
        ("i4", "i5"),
        ("i4", "i32"),
        ("i8", "i9"),
        ("i8", "i32"),
        ("i16", "i32"),
        ("f8e4m3", "f32"),
        ("f8e5m2", "f32"),
        ("bf16", "f32"),
        ("f16", "f32"),
        ("f32", "bf16"),
    ],
    fetch_align_bytes: 8,
    dma_dm_align_bytes: 8,
    dma_dtypes: &[
        "i4", "i8", "f8e4m3", "f8e5m2", "i16", "f16", "fp16", "bf16", "i32", "f32",
    ],
    sequencer_entries: 8,
    sequencer_entry_size: 65_536,
    fetch_sizes_main: &[1, 2, 4, 8, 16, 32],
    fetch_sizes_sub: &[4, 8],
    commit_sizes_main: &[8, 16, 24, 32],
    commit_sizes_sub: &[8],
    ve_way8_lanes: 8,
    ve_way4_lanes: 4,
    ve_branch_comparisons: 4,
    isr_accumulator_slots: 8,
};
