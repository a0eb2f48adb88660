//! The hardware description: every number of the RNGD chip that a rule or a derivation uses,
//! once, with the manual line it comes from. Rules read `Target`, never literals.

use crate::dtype::Dtype::{self, *};

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
    /// Row::SIZE values a TRF operation may use (L4529-L4530, L4162-L4167).
    pub trf_row_sizes: &'static [u64],
    /// HBM bytes per chip, 48 GB: 2 stacks x 16 channels x 3 slices x 4 bank groups x 4 banks x
    /// 16K rows x 2 KB (L137, L2949-L2960, L2976).
    pub hbm_bytes_per_chip: u64,
    /// VRF bytes per slice (L1090).
    pub vrf_bytes_per_slice: u64,
    /// The scratchpad (SPM) of one processing element, where an unscaled gather's index list
    /// lives: 4 KiB (furiosa-opt-std 0.6, `furiosa-opt-examples/src/negative/scatter_gather.rs:
    /// 10-20` at ebb846a; the manual does not describe the SPM).
    pub spm_bytes_per_pe: u64,
    /// Bytes in one flit, the unit every engine after Collect consumes (L3039, L3605).
    pub flit_bytes: u64,
    /// Cast Engine precision lowerings `(D1, D2)`: i32 to i4/i8/i16, f32 to f8e5m2/f8e4m3/f16/bf16
    /// (L6776-L6779); the input must be a `VeScalar` (i32/f32, L6759). The manual's library's
    /// table; rules read it through `library::conversions`, which has furiosa-opt-std's.
    pub cast_pairs: &'static [(Dtype, Dtype)],
    /// Transpose Engine geometry per element width (L6877-L6883, L6859-L6871).
    pub transpose_geometry: &'static [TransposeGeometry],
    /// Columns of each of the two transpose buffers, `num_buffer_cols`: double buffering iff
    /// in_cols <= this (L6859, L6890-L6891).
    pub transpose_buffer_cols: u64,
    /// Fetch-adapter type conversions `(D, D2)` besides the identity (L1962-L1971; RNGD-S adds
    /// more, L1972-L1977). The manual's library's table; rules read it through
    /// `library::conversions`, which has furiosa-opt-std's.
    pub fetch_casts: &'static [(Dtype, Dtype)],
    /// The fetch output packet must be a multiple of this many bytes (L1711-L1716, L1723).
    pub fetch_align_bytes: u64,
    /// DM write addresses (and HBM-to-DM read/write addresses) align to this many bytes (L2425-L2427).
    pub dma_dm_align_bytes: u64,
    /// Element types the DMA engine moves (L2525; the manual spells f16 `fp16`). The manual's
    /// library's list; rules read it through `library::conversions`, which has
    /// furiosa-opt-std's.
    pub dma_dtypes: &'static [Dtype],
    /// Largest DMA packet (`stride0`), bytes: 256 AXI beats of 16 bytes (L2428, L2512).
    pub dma_packet_max_bytes: u64,
    /// The DMA engine splits a packet into requests of this many bytes (L2469, L2594).
    pub dma_request_bytes: u64,
    /// Start-up latency of one DMA command, cycles (L2467, L2827).
    pub dma_startup_cycles: u64,
    /// HBM accesses aligned to this many bytes avoid the 2x read / RMW write penalty (L2859).
    pub hbm_align_bytes: u64,
    /// Commit-sequencer strides are multiples of this many bytes (L2338).
    pub commit_stride_align_bytes: u64,
    /// The DMA engine's virtual address space of one slice's DM, bytes: a DMA slice stride
    /// (L2541 "slice_stride = 4MB"; constraints.md §22 A-8).
    pub dma_slice_space_bytes: u64,
    /// Loop entries a sequencer has (L1568, L1616).
    pub sequencer_entries: usize,
    /// Iterations one sequencer entry can count, inclusive (L1632; constraints.md §22 A-5).
    pub sequencer_entry_size: u64,
    /// Main-context fetch sizes in bytes, the sequencer's base packets (L1632, L1757, L2118).
    pub fetch_sizes_main: &'static [u64],
    /// Sub-context fetch sizes in bytes: 8, or 4 when casting i4 to i32 (L1758-L1759, L2018-L2021).
    pub fetch_sizes_sub: &'static [u64],
    /// Largest `last_dim_rightmost_valid_count` of fetch masking per DM dtype: 0-255 for 4-bit
    /// types, 0-31 for f32 (L1902; the stated 256-byte reason does not match, constraints.md
    /// §22 A-25, so the literal counts are enforced).
    pub fetch_mask_valid_max: &'static [(Dtype, u64)],
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
    /// Contraction Engine: bytes the Reducer consumes per Row per cycle, the computation packet
    /// (`mac_width`, L3921, L4099).
    pub mac_width_bytes: u64,
    /// Stream Adapter Flit Buffer capacity in bytes (3 single-channel flits, L3928, L3951).
    pub flit_buffer_bytes: u64,
    /// Reducer input types and their reduction-tree depths (L3782, L4388, L4530-L4533).
    pub reducer_tree_depth: &'static [(Dtype, u32)],
    /// Reducer output columns per Row after the resize (L4398, L4531-L4532).
    pub reducer_columns: u64,
    /// Temporal accumulator registers per column: 8 rows x 32 columns x 4 = 1024 slots (L4409).
    pub accumulator_registers: u64,
    /// Reducer output bus width in elements: Sequential outputs multiples of it (L4491).
    pub reducer_output_bus: u64,
    /// Bytes one DM bank serves per access: slice address bits 0-2 (L2875-L2879).
    pub dm_bank_bytes: u64,
    /// DM banks per slice: slice address bits 3-6 (L2869, L2875-L2879).
    pub dm_banks: u64,
    /// Consecutive same-bank fetch/commit accesses allowed while DMA is active (the 64-access
    /// rule, L2898, L2906, L2938-L2939).
    pub bank_max_consecutive: u64,
    /// Cycles a DMA request may wait for a response before the NoC declares it dead and only a
    /// cluster-domain reset recovers (L2905, L2940).
    pub noc_timeout_cycles: u64,
    /// Slices per Data Memory Network (L2868, L2858).
    pub slices_per_dmn: u64,
    /// DM bytes per cycle of one DMN, and of a DMA interleaving two DMNs (L2881, L2883, L2933).
    pub dmn_bytes_per_cycle: u64,
    pub dma_dm_bytes_per_cycle: u64,
    /// DMNs served by one DMA Engine: eight per chip, one per pair of DMNs (seed 000 L50,
    /// L477), so one engine's share of a cluster's Slice is `dmns_per_dma_engine *
    /// slices_per_dmn` slices (the four "DMN" shares of seed 000 L405-L439).
    pub dmns_per_dma_engine: u64,
    /// Nested counters `L_0..L_7` of the Valid Count Generator's sequencer (L6202, L6213).
    pub vcg_counters: usize,
    /// Binary gate dims of the Valid Count Generator, besides its one packet dim (L6459, L6549-L6555).
    pub vcg_gate_dims: usize,
    /// Cycles of inter-slice reduce tail per slice of the reduction group: one ring traversal,
    /// 256 slices = 256 cycles (L4369, L6743-L6749).
    pub xsl_tail_cycles_per_slice: u64,
    /// DMA Engines per chip, one per pair of DMNs (seed 000 L50 = L2404).
    pub dma_engines_per_chip: u64,
    /// Bytes one DMA Engine moves per cycle, one 256-byte request (L2596, L2636).
    pub dma_engine_bytes_per_cycle: u64,
    /// Bytes PCIe moves per cycle, each way ("30 B/cycle for both reads and writes", seed 000
    /// L35, L251, L491 / L2389, L2605, L2845). The manual gives it for inter-chip transfers; the
    /// host's `ctx.pdma` (PCIe DMA, Host <-> HBM, L36-L47) is taken to be the same link (cost
    /// model U14).
    pub pcie_bytes_per_cycle: u64,
    /// HBM channels per chip: 2 stacks x 16 (L2950-L2951, L2980).
    pub hbm_channels: u64,
    /// Bytes one HBM channel serves per core cycle: 64 B/cycle at 0.75 GHz = 48 GB/s, read as
    /// 48 B per 1 GHz cycle, so one 256-byte request takes 256 / 48 = 5.3 cycles (L2980, L2744).
    pub hbm_channel_bytes_per_cycle: u64,
    /// Cycles one 256-byte HBM request costs when it closes and opens a row (bank conflict):
    /// "approximately 40 cycles" (L2710; 40-50 ns, L2987).
    pub hbm_row_miss_cycles: u64,
    /// The HBM address bit that selects the stack: a stream that never toggles it reaches only
    /// half the channels (L2718, L2738, L2961).
    pub hbm_stack_bit: u32,
    /// The lowest HBM row address bit: consecutive requests whose stride reaches it switch rows
    /// (L2709, L2961-L2973).
    pub hbm_row_lsb_bit: u32,
    /// How much slower a partial (read-modify-write) HBM write request is: "roughly 50x" (L2985).
    pub hbm_rmw_factor: u64,
    /// How much slower a misaligned DM write is under read-modify-write: "tripling" (L2414).
    pub dm_rmw_factor: u64,
    /// Fetch-adapter type conversion latency in cycles: "1-2 cycles", the upper bound (L2135).
    pub fetch_cast_latency_cycles: u64,
    /// Latency of each Vector Engine ALU stage in cycles (L5275-L5277).
    pub ve_alu_latency_cycles: u64,
    /// Cycles assumed to program a custom switch topology's bitmap into the SFRs: the manual
    /// gives no number (L3336), this is a guess the cost report names as an assumption.
    pub switch_custom_setup_cycles: u64,
}

impl Target {
    /// The Reducer's tree depth for an input type (`f8` as f8e4m3); `None` when the Reducer does
    /// not take it.
    pub fn tree_depth(&self, d: Dtype) -> Option<u32> {
        let d = d.canonical();
        self.reducer_tree_depth
            .iter()
            .find(|(n, _)| *n == d)
            .map(|&(_, k)| k)
    }

    /// The whole TRF of a slice: every row's bytes (8 rows × 8 KB = 64 KiB on RNGD,
    /// furiosa-opt-std's `TRF_CAPACITY_BYTES`).
    pub fn trf_bytes(&self) -> u64 {
        self.trf_bytes_per_row.saturating_mul(self.trf_rows)
    }

    /// The whole chip's grid, the one the manual's kernels are laid out over.
    pub fn grid(&self) -> Grid {
        Grid {
            clusters: self.clusters,
            slices: self.slices,
        }
    }
}

/// One row of the Transpose Engine's per-dtype table (L6877-L6883).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TransposeGeometry {
    /// Element width in bits (4, 8, 16, 32).
    pub bits: u32,
    /// Elements of each 32-byte input packet the transpose buffer keeps (Unpack, L6843, L6863).
    pub elements_per_packet: u64,
    /// Elements each output row is padded to: one 32-byte packet (Align, L6848).
    pub output_alignment: u64,
    /// Largest in_rows (the innermost Time factors swapped into the Packet).
    pub max_in_rows: u64,
    /// Allowed in_cols = packets_per_col x elements_per_packet.
    pub valid_in_cols: &'static [u64],
}

/// Fetch-adapter conversions besides the identity: RNGD's ten (L1962-L1971), then the four
/// RNGD-S adds, i4 -> i9, i16 -> i9 and both f8 formats -> bf16 (L1973-L1977).
const FETCH_CASTS: &[(Dtype, Dtype)] = &[
    (I4, I5),
    (I4, I32),
    (I8, I9),
    (I8, I32),
    (I16, I32),
    (F8e4m3, F32),
    (F8e5m2, F32),
    (Bf16, F32),
    (F16, F32),
    (F32, Bf16),
    (I4, I9),
    (I16, I9),
    (F8e4m3, Bf16),
    (F8e5m2, Bf16),
];
/// How many of [`FETCH_CASTS`] RNGD has.
const RNGD_FETCH_CASTS: usize = 10;

/// The chips a furiosa-opt-std kernel runs on when its `#[device]` names none (or names them
/// with something other than an integer literal, which the macro does not read): one
/// (`furiosa-opt-macro/src/lib.rs:179-187` at ebb846a).
pub const DEFAULT_CHIPS: u64 = 1;

/// The processing elements per chip a furiosa-opt-std kernel runs on when its `#[device]`
/// names none (`furiosa-opt-macro/src/lib.rs:187-188` at ebb846a).
pub const DEFAULT_PE: u64 = 8;

/// The spatial grid a kernel's tensors are laid out over: clusters per chip and slices per
/// cluster (the sizes of its Cluster and Slice mappings).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Grid {
    pub clusters: u64,
    pub slices: u64,
}

/// furiosa-opt-std's device topologies: `#[device(pe = P)]` → the grid its tensors are laid
/// out over (`furiosa-opt-examples/src/pe_count.rs:14-20` at ebb846a; `library-v06.md` §4 R3).
/// The manual's chip is the 8-PE one.
const PE_GRIDS: &[(u64, Grid)] = &[
    (
        1,
        Grid {
            clusters: 1,
            slices: 64,
        },
    ),
    (
        2,
        Grid {
            clusters: 1,
            slices: 128,
        },
    ),
    (
        4,
        Grid {
            clusters: 1,
            slices: 256,
        },
    ),
    (
        8,
        Grid {
            clusters: 2,
            slices: 256,
        },
    ),
];

/// The grid of a `pe` topology; `None` for a count the library has no grid for.
pub fn pe_grid(pe: u64) -> Option<Grid> {
    PE_GRIDS.iter().find(|(p, _)| *p == pe).map(|(_, g)| *g)
}

/// Whether `n` is the slice count of some furiosa-opt-std topology (64, 128 or 256: the
/// library's `SLICE_SIZES`, `furiosa-opt-std/src/constraints.rs:31` at ebb846a).
pub fn is_pe_slice_count(n: u64) -> bool {
    PE_GRIDS.iter().any(|(_, g)| g.slices == n)
}

/// Whether `n` is the cluster count of some furiosa-opt-std topology (1 or 2: the library's
/// `CLUSTER_SIZES`, `furiosa-opt-std/src/constraints.rs:35-45` at ebb846a).
pub fn is_pe_cluster_count(n: u64) -> bool {
    PE_GRIDS.iter().any(|(_, g)| g.clusters == n)
}

/// The slice counts of furiosa-opt-std's topologies, for messages: "64, 128 or 256".
pub fn pe_slice_counts() -> String {
    let mut counts: Vec<u64> = PE_GRIDS.iter().map(|(_, g)| g.slices).collect();
    counts.dedup();
    match counts.split_last() {
        Some((last, [])) => last.to_string(),
        Some((last, rest)) => {
            let rest: Vec<String> = rest.iter().map(u64::to_string).collect();
            format!("{} or {last}", rest.join(", "))
        }
        None => String::new(),
    }
}

/// RNGD, the chip the manual describes.
pub const RNGD: Target = Target {
    name: "RNGD",
    clusters: 2,
    slices: 256,
    dm_bytes_per_slice: 512 * 1024,
    trf_bytes_per_row: 8 * 1024,
    trf_rows: 8,
    trf_row_sizes: &[1, 2, 4, 8],
    hbm_bytes_per_chip: 48 << 30,
    vrf_bytes_per_slice: 8 * 1024,
    spm_bytes_per_pe: 4 * 1024,
    flit_bytes: 32,
    cast_pairs: &[
        (I32, I4),
        (I32, I8),
        (I32, I16),
        (F32, F8e5m2),
        (F32, F8e4m3),
        (F32, F16),
        (F32, Bf16),
    ],
    transpose_geometry: &[
        TransposeGeometry {
            bits: 4,
            elements_per_packet: 16,
            output_alignment: 64,
            max_in_rows: 16,
            valid_in_cols: &[16, 32],
        },
        TransposeGeometry {
            bits: 8,
            elements_per_packet: 8,
            output_alignment: 32,
            max_in_rows: 8,
            valid_in_cols: &[8, 16, 32],
        },
        TransposeGeometry {
            bits: 16,
            elements_per_packet: 8,
            output_alignment: 16,
            max_in_rows: 4,
            valid_in_cols: &[8, 16, 32],
        },
        TransposeGeometry {
            bits: 32,
            elements_per_packet: 8,
            output_alignment: 8,
            max_in_rows: 2,
            valid_in_cols: &[8, 16, 32],
        },
    ],
    transpose_buffer_cols: 16,
    fetch_casts: FETCH_CASTS.split_at(RNGD_FETCH_CASTS).0,
    fetch_align_bytes: 8,
    dma_dm_align_bytes: 8,
    dma_dtypes: &[I4, I8, F8e4m3, F8e5m2, I16, F16, Bf16, I32, F32],
    dma_packet_max_bytes: 4096,
    dma_request_bytes: 256,
    dma_startup_cycles: 500,
    hbm_align_bytes: 256,
    commit_stride_align_bytes: 8,
    dma_slice_space_bytes: 4 * 1024 * 1024,
    sequencer_entries: 8,
    sequencer_entry_size: 65_536,
    fetch_sizes_main: &[1, 2, 4, 8, 16, 32],
    fetch_sizes_sub: &[4, 8],
    fetch_mask_valid_max: &[(I4, 255), (F32, 31)],
    commit_sizes_main: &[8, 16, 24, 32],
    commit_sizes_sub: &[8],
    ve_way8_lanes: 8,
    ve_way4_lanes: 4,
    ve_branch_comparisons: 4,
    isr_accumulator_slots: 8,
    mac_width_bytes: 64,
    flit_buffer_bytes: 96,
    reducer_tree_depth: &[(I4, 7), (I8, 6), (F8e4m3, 6), (F8e5m2, 6), (Bf16, 5)],
    reducer_columns: 32,
    accumulator_registers: 4,
    reducer_output_bus: 8,
    dm_bank_bytes: 8,
    dm_banks: 16,
    bank_max_consecutive: 64,
    noc_timeout_cycles: 4096,
    slices_per_dmn: 32,
    dmn_bytes_per_cycle: 128,
    dma_dm_bytes_per_cycle: 256,
    dmns_per_dma_engine: 2,
    vcg_counters: 8,
    vcg_gate_dims: 3,
    xsl_tail_cycles_per_slice: 1,
    dma_engines_per_chip: 8,
    dma_engine_bytes_per_cycle: 256,
    pcie_bytes_per_cycle: 30,
    hbm_channels: 32,
    hbm_channel_bytes_per_cycle: 48,
    hbm_row_miss_cycles: 40,
    hbm_stack_bit: 8,
    hbm_row_lsb_bit: 21,
    hbm_rmw_factor: 50,
    dm_rmw_factor: 3,
    fetch_cast_latency_cycles: 2,
    ve_alu_latency_cycles: 1,
    switch_custom_setup_cycles: 256,
};

/// RNGD-S: RNGD with the four more Fetch-adapter conversions of [`FETCH_CASTS`]
/// (L1973-L1977). The manual documents no other difference.
pub const RNGD_S: Target = Target {
    name: "RNGD-S",
    fetch_casts: FETCH_CASTS,
    ..RNGD
};
