//! What the vendor compiler derives from mappings (issue 4): sequencer configurations and the
//! fetch/commit sizes that follow from them. Rules and the CLI (`visa-lint derive`) call this.
//!
//! # API
//!
//! - [`configure`]`(buf, time, packet, dir, max_entries) -> Result<Config, DeriveError>`: the
//!   Sequencer chapter's term-by-term algorithm (manual L1337-L1627). `buf` is the buffer's
//!   `Layout` (a fetch's BeginTensor Packet = the DM Element; a commit's destination Element;
//!   the chapter's `BufTensor<D, Buf>`); `time` and `packet` are the stream's digits outermost
//!   first (`&layout.dims`). Each stream digit becomes one entry (`size : stride`, strides in
//!   elements, 0 for axes absent from the buffer = broadcast), or several when the buffer splits
//!   its axis; `= n` slices keep their size; padded digits keep their padded extent (reads
//!   overfetch). Adjacent entries merge (`s1 == n2 * s2`) only when more than `max_entries`
//!   (`Target::sequencer_entries`, 8) result; a temporal entry merging into the packet grows
//!   the packet (L1619). `Direction::Write` truncates the outermost packet digit to what the
//!   buffer holds (commit truncation, L2199) and requires the stream to fill the buffer.
//! - [`DeriveError::Insufficient`] (SEQ-006, L1639) and [`DeriveError::Incompatible`] (SEQ-007,
//!   L1660, the "factorizable" test) are the manual's configuration failures;
//!   [`DeriveError::Unsupported`] means visa-lint does not derive (irregular mappings).
//! - [`contiguous_elements`] (L1762), [`fetch_sizes`] (`packet_bytes`, `contiguous_bytes`,
//!   `fetch_size` = largest allowed divisor of their gcd, `fetches_per_packet`, `cycles =
//!   Time::SIZE * ceil(packet / fetch_size)`, L1760, L2058), [`commit_sizes`] (L2226) and
//!   [`commit_sizes_into`] (what a commit into a padded Element writes, L7672-L7699).
//!   Sizes are bytes; sub-byte elements are packed ([`bytes`], constraints.md §22 A-3).
//!   [`fetch_size_choices`]`(target, sub, from, to)` is the list to pass as `allowed` for a
//!   fetch: the context's sizes, and a casting main fetch's only up to 32 bytes of output
//!   (L1996-L2021). Reads of a padded contiguous sub-mapping (`m![[A, B, C] # 32]`) become one
//!   overfetching entry (L1830); a commit's truncation drops the packet's padding (L2199).
//! - [`trf::read`]`(packet, element)` -> [`trf::TrfRead`]: the TRF Sequencer's contiguous read
//!   (L4104-L4108) and [`trf::reg_read_size`] in bytes.
//! - [`collect::normalize`]`(time, packet, bits, flit_bytes)`: Collect's flit normalization
//!   (padding, flit count, Time2 = Time ++ [outer flit], Packet2 = the inner flit; L3561).
//! - [`Config`]'s `Display` prints the manual's notation `[8 : 32, 8 : 256, 16 : 1] : 16`.
//! - [`ops`]`(model, target)` derives every fetch, commit and simplified `read`/`write` step of
//!   a function model ([`Op`]: kind, step, span, buf/time/packet layouts, element bits, context,
//!   `config`, and the `fetch` / `commit` sizes every rule, the simulator and `visa-lint
//!   derive` read: nothing downstream calls [`fetch_sizes`] or [`commit_sizes`] for an op
//!   again). Stream digits are taken term by term as written (`C / 2, C % 2` are two entries,
//!   as in L1611), falling back to the canonical digits for aliases.
//! - [`dma::derive`]`(src, dst, time, packet, bits, align, target)` -> [`dma::DmaPair`]: the DMA
//!   engine's read/write sequencer pair (shared loop sizes, own strides, L2545), the packet
//!   `stride0` (largest divisor of the common contiguous run, at most 4,096 bytes, a multiple of
//!   8 when writing DM, L2425-L2428, L2593) and its `ceil(stride0 / 256)` requests (L2469).
//!   [`dma::ops`]`(model, target)` derives it for every `to_dm` / DM-source `to_hbm` with the
//!   stream the compiler infers (the destination's order); DM buffers are
//!   `[Cluster, Slice, Element]` with a 4 MB slice stride (L2541). `visa-lint derive` prints
//!   them as `dma_read` / `dma_write` ops.

pub mod banks;
pub mod carried;
pub mod collect;
pub mod dma;
pub mod ops;
pub mod sequencer;
pub mod timeline;
pub mod transpose;
pub mod trf;

pub use ops::{Op, OpKind, commit_tail_victim, ops};
pub use sequencer::{
    CommitSizes, Config, DeriveError, Direction, Entry, FetchSizes, Widened, bytes, commit_sizes,
    commit_sizes_into, configure, contiguous_elements, fetch_size_choices, fetch_sizes,
    largest_divisor, time_steps,
};
