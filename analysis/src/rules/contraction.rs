//! CON: the Contraction Engine: Aligner (Stream Adapter, TRF Sequencer) and Reducer
//! (constraints.md §10), with the TRF sequencer limits (SEQ-010).
//!
//! Per `.align()` the stream side is checked against the collected stream (packet collection,
//! tiling axes, Time order) and the TRF side against the TRF Element (reg_read_size, the
//! sequencer's time loop, derived with [`crate::derive::configure`]); `.contract()` against the
//! reduction tree and `.accumulate()` against the accumulator's modes and 1024 slots.

use super::context::{FnContext, at_arg};
use crate::derive::{DeriveError, Direction, Entry, bytes, configure, trf};
use crate::diagnostic::{Diagnostic, Severity, Span};
use crate::library::Generation;
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{
    Arg, Dtype, Kind, Method, Slot, Step, TensorTy, Tu, output_arg, pad_edit, written,
};
use crate::rule::{Generations, Rule, Status};
use std::sync::Arc;

pub const CON_001: Rule = Rule {
    code: "CON-001",
    name: "reducer-input-dtype",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Contraction operands (stream and TRF) are i4, i8, f8 (e4m3/e5m2) or bf16",
    docs: "The Reducer multiplies i4, i8, f8 or bf16 operands only; f32 (and i16, f16, i32) is \
           not accepted and must be processed in the Vector Engine after (or instead of) the \
           contraction. Checked on the stream passed to `.align()` and on every `.to_trf()` load \
           (the TRF only feeds the Reducer).",
    bad: "input: CollectTensor<'l, T, f32, m![1], m![1], m![1], m![M], m![K # 8]>; \
          input.align::<m![M], m![K # 16], _, _>(&trf)",
    good: "input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![M], m![K]>; \
           input.align::<m![M], m![K # 32], _, _>(&trf)",
    manual: "L3782, L4532-L4533",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `ContractionCast` adds i5 and i9, an i4 or i8 with its zero point \
         subtracted (`fetch_zero_point_sub`), and lets the TRF weight differ from the stream \
         within one integer family (`furiosa-opt-std/src/cast.rs:294-375`; CHANGES.md:54); \
         visa-lint checks that set there",
    ),
};

pub const CON_002: Rule = Rule {
    code: "CON-002",
    name: "mandatory-widening",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Contraction output is widened: i4/i8 -> i32, f8/bf16 -> f32",
    docs: "`.contract()` widens its result (i4/i8 to i32, f8/bf16 to f32) and the widening is \
           mandatory: a `ContractionTensor` or `AccumulationTensor` declared with another element \
           type (for example bf16 after a bf16 contraction) does not exist. Declare the widened \
           type and narrow later with `.cast::<bf16, _>()`.",
    bad: "let acc: AccumulationTensor<'l, T, bf16, ..> = input.align::<..>(&trf).contract::<m![1]>().accumulate::<..>(..);",
    good: "let acc: AccumulationTensor<'l, T, f32, ..> = input.align::<..>(&trf).contract::<m![1]>().accumulate::<..>(..);",
    manual: "L4313, L4388-L4390, L4533",
    generations: Generations::Both,
};

pub const CON_003: Rule = Rule {
    code: "CON-003",
    name: "trf-matches-stream",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The TRF tensor shares D, Chip, Cluster and Slice with the stream it is aligned with",
    docs: "`align(&trf)` takes a `TrfTensor<D, Chip, Cluster, Slice, Row, TrfElement>` with the \
           stream's own D, Chip, Cluster and Slice: the Aligner pairs data and weights of the same \
           slice and type, and the spatial dimensions pass through unchanged. Load the weights with \
           the stream's element type and spatial mapping.",
    bad: "trf: &TrfTensor<i8, m![1], m![1], m![1], m![N], m![K]>; input (bf16).align::<..>(trf)",
    good: "trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![K]>; input (bf16).align::<..>(trf)",
    manual: "L3891-L3899",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6 lets the TRF weight's type differ from the stream's within one \
         integer family, i4 with i5 and i8 with i9 (`ContractionWeight`, \
         `furiosa-opt-std/src/cast.rs:320-345`), which visa-lint checks there; Chip, Cluster and \
         Slice are shared under both",
    ),
};

pub const CON_004: Rule = Rule {
    code: "CON-004",
    name: "computation-packet-64-bytes",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The computation packet (align's OutPacket) is always 64 bytes (mac_width)",
    docs: "Every cycle each Reducer Row consumes exactly mac_width = 64 bytes. With \
           collect_flits = 1 the 32-byte flit is zero padded to 64 bytes (`m![K # 32]` for 16 \
           bf16); with collect_flits = 2 the innermost Time factor of size 2 joins the packet \
           (`m![L, K]`). Collections beyond the 96-byte Flit Buffer are CON-018's; packets that \
           are 64 bytes but not collected from the innermost Time factor are CON-005's.",
    bad: "axes![K = 16]; input.align::<m![M], m![K], _, _>(&trf) // 32 bytes of bf16",
    good: "axes![K = 16]; input.align::<m![M], m![K # 32], _, _>(&trf)",
    manual: "L3921, L3952, L4099",
    generations: Generations::Differs(
        "furiosa-opt-std 0.6's `contract_outer` also takes an OutPacket of one 32-byte flit and \
         pads it to the 64-byte computation packet itself \
         (`furiosa-opt-lower/src/verify/engine/contraction/outer/stream_adapter.rs:13-15, 46`)",
    ),
};

/// furiosa-opt-std 0.6's `contract_outer` takes an OutPacket of one flit as well as two: the
/// Stream Adapter pads one flit to the 64-byte computation packet itself (its published
/// verifier, `furiosa-opt-lower/src/verify/engine/contraction/stream_adapter.rs` at ebb846a;
/// `library-v06.md` §4 R15).
fn one_flit_in_opt_std(cx: &FnContext<'_>, op_bytes: u64) -> bool {
    cx.model.library == crate::library::Generation::OptStd && op_bytes == cx.target.flit_bytes
}

pub const CON_005: Rule = Rule {
    code: "CON-005",
    name: "collect-flits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The packet collects 1 or 2 flits, from the innermost Time factor only",
    docs: "The Stream Adapter buffers collect_flits consecutive 32-byte flits, i.e. the innermost \
           Time factor, into the packet: `Time [M, O, L = 2], Packet [K]` gives OutTime `[M, O]`, \
           OutPacket `[L, K]`. A 64-byte OutPacket that is neither the collected packet padded \
           (collect_flits = 1) nor the innermost Time factor of size 2 followed by the packet \
           (collect_flits = 2) cannot be built. (3 flits are for shift-reuse convolutions, whose \
           API the manual does not show; more than 3 is CON-018.)",
    bad: "input: CollectTensor<.., m![L, M], m![K]>; input.align::<m![M], m![L, K], _, _>(&trf)",
    good: "input: CollectTensor<.., m![M, L], m![K]>; input.align::<m![M], m![L, K], _, _>(&trf)",
    manual: "L3908, L3916-L3928, L3948-L3951",
    generations: Generations::Both,
};

pub const CON_006: Rule = Rule {
    code: "CON-006",
    name: "row-broadcast",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Stream Adapter broadcasts one packet to all Rows: Row axes are not in the stream",
    docs: "The Stream Adapter copies the same collected packet to the 1, 2, 4 or 8 Rows of the \
           computation mapping; only the TRF Sequencer gives each Row different (weight) data. So \
           the activation stream cannot depend on a Row axis: a factor of the TRF's Row that also \
           appears in the collected Time or Packet would need a different packet per Row. The Row \
           count itself (1, 2, 4 or 8, padded with `#`) is checked where the Row is written \
           (CAP-004).",
    bad: "input: CollectTensor<.., m![M, N], m![K]>; trf Row m![N]; input.align::<m![M, N], m![K # 32], _, _>(trf)",
    good: "input: CollectTensor<.., m![M], m![K]>; trf Row m![N]; input.align::<m![M], m![K # 32], _, _>(trf)",
    manual: "L3799-L3801, L3909, L3929-L3933, L3953",
    generations: Generations::Both,
};

pub const CON_007: Rule = Rule {
    code: "CON-007",
    name: "time-broadcast-innermost",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Time-broadcast (tiling) axes are the innermost OutTime factors",
    docs: "OutTime factors absent from the collected stream (a TRF-only axis `T`) repeat each \
           activation packet with stride 0; the Stream Adapter can only repeat a packet in place, \
           so tiling axes must be the innermost positions of OutTime: `m![M, T]`, not `m![T, M]`. \
           The fix moves them to the end.",
    bad: "input.align::<m![T, M], m![K # 32], _, _>(&trf) // T only in the TRF",
    good: "input.align::<m![M, T], m![K # 32], _, _>(&trf)",
    manual: "L3938-L3946, L3954",
    generations: Generations::Both,
};

pub const CON_008: Rule = Rule {
    code: "CON-008",
    name: "computation-mapping-match",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "OutTime/OutPacket must be producible by both the Stream Adapter and the TRF Sequencer",
    docs: "Both Aligner paths produce the same computation mapping. The Stream Adapter keeps the \
           collected Time order (less the collected flits, plus innermost tiling axes): it cannot \
           reorder Time. The TRF Sequencer reorders and broadcasts Time with its nested-loop \
           entries, but must find every OutTime factor it reads in the TRF Element, and fills the \
           packet only by repeating one contiguous read: the packet's TRF factors must be the \
           Element's innermost factors. A tiling axis (an OutTime factor absent from the collected \
           stream) must be in the TRF Element: the library asserts \"tiling axes must be present \
           in TRF\" in `align`, so an axis in neither the stream nor the TRF panics, an error. \
           Packet-size and collection problems are CON-004/005, the read size CON-009.",
    bad: "input: CollectTensor<.., m![M, O], m![K]>; input.align::<m![O, M], m![K # 32], _, _>(&trf)",
    good: "input: CollectTensor<.., m![M, O], m![K]>; input.align::<m![M, O], m![K # 32], _, _>(&trf)",
    manual: "L3778, L3791, L3899-L3910, L4081-L4085",
    generations: Generations::Differs(
        "the tiling-axis part differs: `furiosa_visa_std`'s `align` asserts that tiling axes are \
         in the TRF (L4083), furiosa-opt-std 0.6's `contract_outer` only that they are OutTime's \
         innermost factors \
         (`furiosa-opt-lower/src/verify/engine/contraction/outer/stream_adapter.rs:62-70`), so \
         that part is not checked on its crates",
    ),
};

pub const CON_009: Rule = Rule {
    code: "CON-009",
    name: "trf-reg-read-size",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "reg_read_size, the contiguous TRF read per cycle, is 1, 2, 4, 8, 16, 32 or 64 bytes",
    docs: "The compiler derives reg_read_size from the innermost part common to the TRF Element \
           and the computation packet (within 64 bytes); the rest of mac_width is filled by \
           repeating it. It must be a power of two: a 24-element bf16 Element read against \
           `m![K # 32]` gives 48 bytes. Pad the Element's innermost factor to a power of two \
           (`m![K # 32]`). (The 64-byte alignment that a 64-byte read needs is ALN-009.)",
    bad: "axes![K = 24]; trf: &TrfTensor<bf16, .., m![N], m![K]>; input.align::<m![M], m![K # 32], _, _>(trf)",
    good: "axes![K = 24]; trf: &TrfTensor<bf16, .., m![N], m![K # 32]>; input.align::<m![M], m![K # 32], _, _>(trf)",
    manual: "L4099-L4108",
    generations: Generations::Both,
};

pub const CON_010: Rule = Rule {
    code: "CON-010",
    name: "to-trf-row-element",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "to_trf::<Row, Element>: Row is the outermost part of the collected Time ++ Packet, Element the rest",
    docs: "`.to_trf()` stores the collected stream as it arrives: the outermost axes become Row \
           and the remaining inner axes the Element (`collect::<m![N, K / 16], m![K % 16]>()` \
           stores `Row = m![N]`, `Element = m![K]`). Row ++ Element must be the collected Time ++ \
           Packet (padding aside); reorder the collect or the TRF types.",
    bad: "collect::<m![N, K / 16], m![K % 16]>().to_trf::<m![K / 16], m![N, K % 16]>(TrfAddress::Full)",
    good: "collect::<m![N, K / 16], m![K % 16]>().to_trf::<m![N], m![K]>(TrfAddress::Full)",
    manual: "L4053-L4055, L503-L508",
    generations: Generations::Both,
};

pub const CON_011: Rule = Rule {
    code: "CON-011",
    name: "spatial-reduction-innermost",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "contract::<OutPacket>() removes the innermost 2^n packet positions, n <= tree depth",
    docs: "The reduction tree sums pairs level by level: depth n removes the innermost \
           `Packet % 2^n` and leaves `Packet / 2^n` (bf16 depth <= 5, i8/f8 <= 6, i4 <= 7). \
           The contract OutPacket must be one of these: from `m![L, K]` (L = 2, K = 16) the \
           outputs are `m![L, K]`, ..., `m![L]` (depth 4), `m![1]` (depth 5); `m![K]` removes an \
           outer factor and cannot be built.",
    bad: "input.align::<m![M], m![L, K], _, _>(&trf).contract::<m![K]>()",
    good: "input.align::<m![M], m![L, K], _, _>(&trf).contract::<m![L]>()",
    manual: "L4384-L4392, L4530-L4531",
    generations: Generations::Both,
};

pub const CON_012: Rule = Rule {
    code: "CON-012",
    name: "spatial-output-32",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Reducer outputs at most 32 i32/f32 elements per Row per cycle",
    docs: "After the tree each Row's output is resized to 32 columns; with tree depth 0 (no \
           spatial reduction) the outer elements are truncated, so a contract OutPacket of more \
           than 32 elements (64 i8, 128 i4) is invalid. Reduce at least `Packet % 2` (i8) or \
           `Packet % 4` (i4).",
    bad: "axes![K = 64]; // i8\ninput.align::<m![M], m![K], _, _>(&trf).contract::<m![K]>()",
    good: "axes![K = 64]; // i8\ninput.align::<m![M], m![K], _, _>(&trf).contract::<m![K / 2]>()",
    manual: "L4396-L4398, L4531-L4532",
    generations: Generations::Both,
};

pub const CON_013: Rule = Rule {
    code: "CON-013",
    name: "reduce-max-single-row",
    severity: Severity::Error,
    status: Status::Unreachable(
        "the manual documents no API that selects the Reducer's max mode: `contract()` takes only \
         OutPacket and dumps show only reduce_op = Add (L3715; constraints.md §22 A-20)",
    ),
    summary: "Reduce-max contraction uses only Row 0 (Row::SIZE must be 1)",
    docs: "The reduction tree's max mode supports a single Row, at 1/8 of the add throughput. No \
           operation selector exists in the documented API, so visa-lint cannot see a max \
           contraction.",
    bad: "",
    good: "",
    manual: "L4394-L4395, L4533",
    generations: Generations::Both,
};

pub const CON_014: Rule = Rule {
    code: "CON-014",
    name: "accumulator-slots",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Temporal accumulation fits the 1024-slot accumulator (Interleaved <= 128, Sequential <= 32 inner positions)",
    docs: "The accumulator has 8 rows x 32 columns x 4 registers = 1024 slots. The positions \
           inner to the outermost reduced Time axis are buffered: Interleaved needs \
           align_up(Row, 8) x inner <= 1024 (inner <= 128), Sequential align_up(packet, 32) x \
           inner <= 1024 (inner <= 32). Move the reduced axis inward or shrink the inner axes. \
           The output shapes of each mode are CON-015/CON-016.",
    bad: "axes![M = 256, N = 8, K = 64]; ..align::<m![K / 16, M], m![K % 16 # 32], _, _>(&trf)\
          .contract::<m![1]>().accumulate::<m![M], m![N]>(AccumulationKind::Interleaved)",
    good: "axes![M = 256, N = 8, K = 64]; ..align::<m![M, K / 16], m![K % 16 # 32], _, _>(&trf)\
           .contract::<m![1]>().accumulate::<m![M], m![N]>(AccumulationKind::Interleaved)",
    manual: "L4409, L4432-L4434, L4534-L4538",
    generations: Generations::Both,
};

pub const CON_015: Rule = Rule {
    code: "CON-015",
    name: "interleaved-output",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Interleaved accumulate: OutTime = Time' ++ surviving packet, OutPacket = Row # 8",
    docs: "Interleaved mode outputs one value of every Row per beat on all 8 accumulator rows: \
           OutPacket is the Row padded to 8 (`m![N]` for 8 Rows, `m![1 # 8]` for one), and \
           OutTime is Time without the reduced axes followed by the packet left after the tree \
           (`m![M, K % 16 / 4]`). The fix pads a short Row.",
    bad: "..contract::<m![1]>().accumulate::<m![A], m![1]>(AccumulationKind::Interleaved) // Row m![1]",
    good: "..contract::<m![1]>().accumulate::<m![A], m![1 # 8]>(AccumulationKind::Interleaved)",
    manual: "L4436-L4448, L4535-L4536",
    generations: Generations::Both,
};

pub const CON_016: Rule = Rule {
    code: "CON-016",
    name: "sequential-output",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "Sequential accumulate: OutTime = Time' ++ Row ++ packet outer, OutPacket 8/16/24/32 elements",
    docs: "Sequential mode outputs each Row's reduced packet in turn on an 8-element bus: OutTime \
           is Time without the reduced axes, then Row, then the packet's outer part; OutPacket is \
           the packet's inner part padded to 8, 16, 24 or 32 elements (`m![K % 16 / 4 # 8]`). \
           The fix pads OutPacket to a multiple of 8.",
    bad: "..accumulate::<m![M, N], m![K % 16 / 4]>(AccumulationKind::Sequential)",
    good: "..accumulate::<m![M, N], m![K % 16 / 4 # 8]>(AccumulationKind::Sequential)",
    manual: "L4484-L4491, L4521, L4537-L4538",
    generations: Generations::Both,
};

pub const CON_017: Rule = Rule {
    code: "CON-017",
    name: "interleaved-slice-padding-only",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Interleaved packet slicing (`= n`) should only slice padding",
    docs: "In Interleaved mode only the first m columns of the tree's output reach the \
           accumulator; a user slice `= n` of the surviving packet in OutTime should remove only \
           padded positions, else real partial sums are silently dropped.",
    bad: "..contract::<m![K % 16 / 4]>().accumulate::<m![M, K % 16 / 4 = 2], m![N]>(AccumulationKind::Interleaved)",
    good: "..contract::<m![K % 16 / 4 # 8]>().accumulate::<m![M, K % 16 / 4 # 8 = 4], m![N]>(AccumulationKind::Interleaved)",
    manual: "L4438-L4441",
    generations: Generations::Both,
};

pub const CON_018: Rule = Rule {
    code: "CON-018",
    name: "flit-buffer-capacity",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "The Stream Adapter collects at most 3 flits (96-byte Flit Buffer)",
    docs: "The Flit Buffer holds 96 bytes, 3 single-channel flits; a packet built from more \
           collected flits (for example `m![L, K]` with L = 4, 128 bytes of bf16) cannot be \
           buffered. The shift and transpose limits of the Stream Adapter are on a page the manual \
           does not include (constraints.md §22 A-34), so only this capacity is checked.",
    bad: "axes![L = 4, K = 16]; input(Time m![M, L], Packet m![K]).align::<m![M], m![L, K], _, _>(&trf)",
    good: "axes![L = 4, K = 16]; input(Time m![M, L], Packet m![K]).align::<m![M, L / 2], m![L % 2, K], _, _>(&trf)",
    manual: "L3781, L3928, L3951",
    generations: Generations::Both,
};

pub const CON_019: Rule = Rule {
    code: "CON-019",
    name: "contracted-dummy-padding",
    severity: Severity::Warning,
    status: Status::Implemented,
    summary: "Padding contracted on both sides must be zero in the TRF (1+1# x 1+1z)",
    docs: "Dummy padding `#` holds arbitrary values. When the stream packet and the TRF Element \
           both pad the same contracted axis, the padded positions multiply dummy by dummy and the \
           tree adds garbage to every sum; the TRF side must hold zeros (`1z`). Make sure the TRF \
           padding is loaded as zeros, or pad only one side.",
    bad: "stream packet m![K # 16] (i8), TRF Element m![K # 16]: both pad K",
    good: "stream packet m![K # 16], TRF Element m![K] with zero fill by the Stream Adapter",
    manual: "L3769-L3772",
    generations: Generations::Both,
};

pub const CON_020: Rule = Rule {
    code: "CON-020",
    name: "row-utilization",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "Fewer than 8 Rows while a TRF axis is iterated in Time",
    docs: "Each Row is a 64 B/cycle MAC lane; using R < 8 Rows runs at R/8 of the slice's \
           throughput (bf16: 256 MACs/cycle with 8 Rows). When the TRF Element holds an output \
           axis that is iterated in Time (not contracted), moving it to Row spreads the work over \
           more Rows for free. Reported only then.",
    bad: "trf: &TrfTensor<bf16, .., m![1], m![O, K]>; input.align::<m![M, O], m![K # 32], _, _>(trf)",
    good: "trf: &TrfTensor<bf16, .., m![O], m![K]>; input.align::<m![M], m![K # 32], _, _>(trf)",
    manual: "L3780, L3785, L4450, L4545",
    generations: Generations::Both,
};

pub const CON_021: Rule = Rule {
    code: "CON-021",
    name: "trf-read-write-conflict",
    severity: Severity::Perf,
    status: Status::Implemented,
    summary: "64-byte TRF reads block a concurrent StoTRF load into the other TRF half",
    docs: "A 64-byte reg_read_size occupies both bank columns, so each TRF cache miss of the \
           main-context read stalls a concurrent sub-context StoTRF write (reads win). Reported \
           when a function double-buffers the TRF (a `to_trf` into FirstHalf/SecondHalf on the \
           sub context) while aligning with 64-byte reads; reads of at most 32 bytes that \
           alternate the bank columns avoid the conflict.",
    bad: "sub: ..to_trf(TrfAddress::SecondHalf); main: ..align::<m![M], m![K], _, _>(&w) // 64-B reads",
    good: "sub: ..to_trf(TrfAddress::SecondHalf); main: ..align::<m![M, K / 16], m![K % 16 # 32], _, _>(&w)",
    manual: "L4181-L4199",
    generations: Generations::VisaStdOnly(
        "it needs a `to_trf` into `TrfAddress::FirstHalf` or `SecondHalf`, and furiosa-opt-std 0.6 \
         has no `TrfAddress`: its scheduler picks the TRF half (CHANGES.md:26-32; \
         `docs/src/computing-tensors/register-files.md:122`)",
    ),
};

pub const SEQ_010: Rule = Rule {
    code: "SEQ-010",
    name: "trf-sequencer-limits",
    severity: Severity::Error,
    status: Status::Implemented,
    summary: "TRF sequencer: 1-8 entries, size 1-65,536, signed 32-bit strides",
    docs: "The TRF read sequencer iterates OutTime with the common sequencer limits: at most 8 \
           (size, stride) entries after merging, each size at most 65,536, each byte stride a \
           signed 32-bit value; stride 0 broadcasts weights over time. Derived from the TRF \
           Element and the align OutTime.",
    bad: "axes![A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, I = 2]; \
          trf Element m![I, H, G, F, E, D, C, B, A, K]; align::<m![A, B, C, D, E, F, G, H, I], ..>",
    good: "trf Element m![A, B, C, D, E, F, G, H, I, K]; align::<m![A, B, C, D, E, F, G, H, I], ..>",
    manual: "L4171-L4177",
    generations: Generations::Both,
};

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[
    CON_001, CON_002, CON_003, CON_004, CON_005, CON_006, CON_007, CON_008, CON_009, CON_010,
    CON_011, CON_012, CON_013, CON_014, CON_015, CON_016, CON_017, CON_018, CON_019, CON_020,
    CON_021, SEQ_010,
];

fn layout(ty: &TensorTy, slot: Slot) -> Option<&Layout> {
    ty.get(slot)?.layout.as_deref()
}

fn text(ty: &TensorTy, slot: Slot) -> String {
    ty.get(slot)
        .map_or_else(|| "?".to_string(), |m| m.text.clone())
}

fn m(l: &Layout) -> String {
    format!("m![{}]", l.to_expr())
}

/// The layout without padding: pure padding digits dropped, padded factors cut to their valid
/// part; a broadcast (`m![A, 2]`) repeats data and stays. `None` for irregular layouts.
fn strip(l: &Layout) -> Option<Layout> {
    let mut dims = Vec::with_capacity(l.dims.len());
    for d in &l.dims {
        match d {
            Dim::Factor(f) if f.axis.is_none() && !f.is_broadcast() => {}
            Dim::Factor(f) => {
                let mut g = f.clone();
                g.extent = g.valid;
                dims.push(Dim::Factor(g));
            }
            Dim::Opaque(_) => return None,
        }
    }
    Layout::from_dims(dims).ok()
}

/// Equal up to padding (both regular).
fn same_data(a: &Layout, b: &Layout) -> bool {
    a == b || matches!((strip(a), strip(b)), (Some(x), Some(y)) if x == y)
}

fn factor_axis(d: &Dim) -> Option<&Arc<str>> {
    match d {
        Dim::Factor(f) => f.axis.as_ref().map(|a| &a.name),
        Dim::Opaque(_) => None,
    }
}

/// Two factors of the same axis covering overlapping coordinates.
fn overlaps(a: &Dim, b: &Dim) -> bool {
    let (Dim::Factor(a), Dim::Factor(b)) = (a, b) else {
        return false;
    };
    match (&a.axis, &b.axis) {
        (Some(x), Some(y)) if x.name == y.name => {
            let (a0, a1) = (a.coef, a.coef.saturating_mul(a.valid));
            let (b0, b1) = (b.coef, b.coef.saturating_mul(b.valid));
            a0 < b1 && b0 < a1
        }
        _ => false,
    }
}

/// Where the result's `slot` mapping is written: turbofish argument `i`, else the annotation or
/// signature it comes from ([`at_arg`] falls back to the method name).
fn at(step: &Step, i: usize, slot: Slot) -> Option<Span> {
    output_arg(step, Some(i), slot).map(|a| a.span)
}

/// How many 32-byte flits the Stream Adapter collects to build `packet` from the collected
/// stream `time`, `flit` (1: the flit alone, padded; c: the innermost Time positions `0..c`
/// followed by the flit), when the packet is such a collection.
pub(crate) fn collected_flits(
    time: &Layout,
    flit: &Layout,
    packet: &Layout,
    max: u64,
) -> Option<u64> {
    (1..=max).find(|&c| {
        if c > 1 && !time.size.is_multiple_of(c) {
            return false;
        }
        let data = if c == 1 {
            Ok(flit.clone())
        } else {
            time.window(c).pair(flit)
        };
        data.is_ok_and(|d| same_data(&d, packet))
    })
}

pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    for chain in &cx.model.chains {
        for step in &chain.steps {
            match step.method {
                Method::ToTrf => check_to_trf(cx, step, out),
                Method::Align => check_align(cx, step, out),
                Method::Contract => check_contract(cx, step, out),
                Method::Accumulate => check_accumulate(cx, step, out),
                _ => {}
            }
        }
        check_widening(chain, out);
    }
}

/// Whether the Reducer multiplies operands of type `d` (CON-001), as the crate's library
/// offers them.
fn reducer_takes(cx: &FnContext<'_>, d: Dtype) -> bool {
    let operand = cx.conversions().contraction_operand(d);
    cx.target.tree_depth(operand).is_some()
}

/// The operand types the Reducer takes under the crate's library, as a message lists them
/// (`i4, i5, i8, i9, f8 or bf16`): each Reducer input, then the library's types that enter its
/// tree.
fn reducer_operands(cx: &FnContext<'_>) -> String {
    let staging = cx.conversions().contraction_staging;
    let mut names: Vec<&str> = Vec::new();
    for &(input, _) in cx.target.reducer_tree_depth {
        let entering = staging.iter().filter(|&&(_, into)| into == input);
        for d in std::iter::once(input).chain(entering.map(|&(s, _)| s)) {
            let name = if d.is_f8() { "f8" } else { d.as_str() };
            if !names.contains(&name) {
                names.push(name);
            }
        }
    }
    match names.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} or {last}", rest.join(", ")),
        _ => names.join(""),
    }
}

/// CON-001 and CON-010 on a TRF load.
fn check_to_trf(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    if let Some(d) = output.dtype.or(input.dtype)
        && !reducer_takes(cx, d)
    {
        out.push(Diagnostic::new(
            &CON_001,
            step.span,
            format!(
                "the TRF feeds only the Reducer, which takes {} operands; this `.to_trf()` loads \
                 {d}: process {d} in the Vector Engine instead",
                reducer_operands(cx)
            ),
        ));
        return;
    }
    let (Some(t), Some(p), Some(r), Some(e)) = (
        layout(input, Slot::Time),
        layout(input, Slot::Packet),
        layout(output, Slot::Row),
        layout(output, Slot::Element),
    ) else {
        return;
    };
    let (Ok(stream), Ok(stored)) = (t.pair(p), r.pair(e)) else {
        return;
    };
    if same_data(&stream, &stored) {
        return;
    }
    let (Some(s), Some(_)) = (strip(&stream), strip(&stored)) else {
        return;
    };
    let mut msg = format!(
        "`.to_trf()` stores the collected stream (Time {}, Packet {}) in arrival order: the outermost \
         factors become Row and the rest the Element, so Row ++ Element must be `{}`, but Row {} ++ \
         Element {} is `{}`",
        text(input, Slot::Time),
        text(input, Slot::Packet),
        m(&s),
        text(output, Slot::Row),
        text(output, Slot::Element),
        strip(&stored).map_or_else(|| "?".into(), |l| m(&l)),
    );
    if r.size > 0 && s.size.is_multiple_of(r.size) && r.size <= s.size {
        let inner = s.size / r.size;
        if s.size.is_multiple_of(inner) {
            msg.push_str(&format!(
                " (with {} Rows: Row `{}`, Element `{}`)",
                r.size,
                m(&s.stride(inner)),
                m(&s.window(inner))
            ));
        }
    }
    out.push(Diagnostic::new(&CON_010, step.span, msg));
}

/// CON-002: a declared contraction/accumulation type with the unwidened element type.
fn check_widening(chain: &crate::model::Chain, out: &mut Vec<Diagnostic>) {
    let Some(decl) = &chain.declared else { return };
    let Some(last) = chain.steps.last() else {
        return;
    };
    if !matches!(last.method, Method::Contract | Method::Accumulate) {
        return;
    }
    let Some(have) = last.output.as_ref() else {
        return;
    };
    if decl.kind != have.kind {
        return;
    }
    let (Some(want), Some(got)) = (decl.dtype, have.dtype) else {
        return;
    };
    if want == got {
        return;
    }
    let from = chain
        .steps
        .iter()
        .find(|s| s.method == Method::Contract)
        .and_then(|s| s.input.as_ref()?.dtype)
        .map_or_else(|| "its input".to_string(), |d| d.to_string());
    out.push(Diagnostic::new(
        &CON_002,
        last.span,
        format!(
            "the contraction widens {from} to {got} (i4/i8 -> i32, f8/bf16 -> f32, mandatory), but \
             the result is declared as `{}<.., {want}, ..>`: declare {got} and narrow later with \
             `.cast()`",
            decl.kind.type_name()
        ),
    ));
}

fn check_align(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    let d = input.dtype.or(output.dtype);
    // CON-001
    if let Some(d) = d
        && !reducer_takes(cx, d)
    {
        out.push(Diagnostic::new(
            &CON_001,
            step.span,
            format!(
                "the Reducer takes {} operands; this stream is {d}: process {d} in the Vector \
                 Engine (skip the contraction with `.vector_init()`)",
                reducer_operands(cx)
            ),
        ));
        return;
    }
    let trf = cx.model.first_arg_tensor(step, Kind::Trf);
    // CON-003
    if let Some(t) = trf {
        let mut diffs = Vec::new();
        if let (Some(a), Some(b)) = (d, t.ty.dtype)
            && !cx.conversions().weight_pairs(b, a)
        {
            diffs.push(format!("D {b} vs {a}"));
        }
        for slot in [Slot::Chip, Slot::Cluster, Slot::Slice] {
            if let (Some(a), Some(b)) = (layout(input, slot), layout(&t.ty, slot))
                && a != b
            {
                diffs.push(format!(
                    "{} {} vs {}",
                    slot.name(),
                    text(&t.ty, slot),
                    text(input, slot)
                ));
            }
        }
        if !diffs.is_empty() {
            out.push(
                Diagnostic::new(
                    &CON_003,
                    step.span,
                    format!(
                        "the TRF tensor `{}` must share D, Chip, Cluster and Slice with the stream it \
                         is aligned with: {} (TRF vs stream)",
                        t.name,
                        diffs.join(", ")
                    ),
                )
                .with_related(t.span, "the TRF tensor is declared here"),
            );
            return;
        }
    }
    let Some(d) = d else { return };
    let (Some(t), Some(p), Some(ot), Some(op)) = (
        layout(input, Slot::Time),
        layout(input, Slot::Packet),
        layout(output, Slot::Time),
        layout(output, Slot::Packet),
    ) else {
        return;
    };
    let mac = cx.target.mac_width_bytes;
    let flit = cx.target.flit_bytes;
    let Some(op_bytes) = d.size_bytes(op.size) else {
        return;
    };
    let max_flits = (cx.target.flit_buffer_bytes / flit.max(1)).max(1);
    let c = collected_flits(t, p, op, max_flits.saturating_add(5));
    let op_span = at(step, 1, Slot::Packet);
    let op_text = text(output, Slot::Packet);
    let mut packet_ok = false;
    match c {
        Some(c) if c > max_flits => {
            out.push(at_arg(
                &CON_018,
                step,
                op_span,
                format!(
                    "OutPacket {op_text} collects {c} flits ({} bytes) of the stream; the Stream \
                     Adapter's Flit Buffer holds {} bytes ({max_flits} flits)",
                    c.saturating_mul(flit),
                    cx.target.flit_buffer_bytes
                ),
            ));
        }
        _ if op_bytes != mac && !one_flit_in_opt_std(cx, op_bytes) => {
            let mut diag = at_arg(
                &CON_004,
                step,
                op_span,
                format!(
                    "OutPacket {op_text} is {op_bytes} bytes ({} × {d}); the computation packet is \
                     always {mac} bytes (mac_width): {}",
                    op.size,
                    match (c, d.elems_for(mac)) {
                        (Some(1), Some(n)) if op_bytes < mac =>
                            format!("zero-pad it to {n} elements (collect_flits = 1)"),
                        (_, Some(n)) => format!("make it {n} elements of {d}"),
                        _ => format!("make it {mac} bytes"),
                    }
                ),
            );
            if c == Some(1)
                && op_bytes < mac
                && let Some(edit) = written(step, 1)
                    .zip(d.elems_for(mac))
                    .and_then(|(a, n)| pad_edit(cx.scope, a, n))
            {
                diag = diag.with_fix(format!("pad OutPacket to {mac} bytes"), false, vec![edit]);
            }
            out.push(diag);
        }
        None => {
            let two = t
                .size
                .is_multiple_of(2)
                .then(|| t.window(2).pair(p).ok())
                .flatten();
            out.push(at_arg(
                &CON_005,
                step,
                op_span,
                format!(
                    "the Stream Adapter builds the {mac}-byte packet from the collected flit {} alone \
                     (collect_flits = 1, zero padded) or preceded by the innermost Time positions \
                     (collect_flits = 2{}), never from other Time factors; OutPacket {op_text} is \
                     neither (collected Time {})",
                    text(input, Slot::Packet),
                    two.map_or_else(String::new, |l| format!(": {}", m(&l))),
                    text(input, Slot::Time)
                ),
            ));
        }
        Some(_) => packet_ok = true,
    }
    let trf_e = trf.and_then(|v| Some((v, layout(&v.ty, Slot::Element)?)));
    // CON-006: every Row receives the same packet, so the stream cannot vary along a Row axis.
    if let Some(var) = trf
        && let Some(r) = layout(&var.ty, Slot::Row)
    {
        let shared: Vec<String> = r
            .dims
            .iter()
            .filter(|d| t.dims.iter().chain(p.dims.iter()).any(|s| overlaps(d, s)))
            .map(Dim::to_expr)
            .collect();
        if !shared.is_empty() {
            out.push(
                Diagnostic::new(
                    &CON_006,
                    step.span,
                    format!(
                        "the Stream Adapter broadcasts the same packet to all {} Rows (Row {} of the \
                         TRF tensor `{}`), so the stream cannot vary along the Row: `{}` is also in \
                         the collected stream (Time {}, Packet {}); keep Row axes out of the \
                         activation, or move them out of Row",
                        r.size,
                        text(&var.ty, Slot::Row),
                        var.name,
                        shared.join("`, `"),
                        text(input, Slot::Time),
                        text(input, Slot::Packet)
                    ),
                )
                .with_related(var.span, "the TRF tensor is declared here"),
            );
            return;
        }
    }
    // Stream side: OutTime = collected Time / c, then innermost tiling axes.
    if let Some(c) = c.filter(|&c| c <= max_flits) {
        let e = trf_e.map(|(_, e)| e);
        check_stream_time(step, input, output, t, p, ot, c, e, cx.model.library, out);
    }
    let Some((var, e)) = trf_e else { return };
    // TRF side: the packet.
    let mut read64 = false;
    if packet_ok && let Some(read) = trf::read(op, e) {
        let e_text = text(&var.ty, Slot::Element);
        if let Some(stray) = read.stray {
            out.push(
                at_arg(
                    &CON_008,
                    step,
                    op_span,
                    format!(
                        "the TRF Sequencer fills the {mac}-byte packet by repeating one contiguous read \
                         of the TRF Element {e_text}; OutPacket {op_text} also needs `{stray}` from \
                         the TRF, which that read does not cover: make the packet's TRF factors the \
                         Element's innermost factors"
                    ),
                )
                .with_related(var.span, "the TRF tensor is declared here"),
            );
        } else if let Some(reg) = trf::reg_read_size(&read, d, mac) {
            match reg {
                Ok(reg) => read64 = reg == mac,
                Err(bytes) => {
                    let want = bytes.checked_next_power_of_two().unwrap_or(mac);
                    let mut diag = at_arg(
                        &CON_009,
                        step,
                        var.ty.get(Slot::Element).and_then(|mv| mv.span),
                        format!(
                            "reg_read_size, the contiguous TRF read common to the Element {e_text} \
                             and OutPacket {op_text}, is {} × {d} = {bytes} bytes; it must be 1, 2, \
                             4, 8, 16, 32 or 64 bytes: pad the Element's innermost factor to {want} \
                             bytes",
                            read.elems
                        ),
                    );
                    if let (Some(mv), Some(n)) = (var.ty.get(Slot::Element), d.elems_for(want))
                        && e.dims.len() == 1
                        && let Some(span) = mv.span
                        && let Some(edit) = pad_edit(cx.scope, &Arg::mapping(mv, span), n)
                    {
                        diag = diag.with_fix("pad the TRF Element", false, vec![edit]);
                    }
                    out.push(diag);
                }
            }
        }
    }
    // TRF side: the time loop (CON-008) and its limits (SEQ-010).
    let bits = d.bits();
    match configure(e, &ot.dims, &[], Direction::Read, cx.target.sequencer_entries) {
        Err(DeriveError::Insufficient {
            axis, needed, have, ..
        }) => out.push(
            at_arg(
                &CON_008,
                step,
                at(step, 0, Slot::Time),
                format!(
                    "the TRF Sequencer cannot produce OutTime {}: it needs `{needed}` of {axis} from \
                     the TRF Element {}, which holds `{have}`",
                    text(output, Slot::Time),
                    text(&var.ty, Slot::Element)
                ),
            )
            .with_related(var.span, "the TRF tensor is declared here"),
        ),
        Err(DeriveError::Incompatible {
            axis,
            buf_split,
            stream_split,
        }) => out.push(
            at_arg(
                &CON_008,
                step,
                at(step, 0, Slot::Time),
                format!(
                    "the TRF Sequencer cannot produce OutTime {} from the TRF Element {}: {axis} is \
                     split at {buf_split} in the TRF and at {stream_split} in OutTime",
                    text(output, Slot::Time),
                    text(&var.ty, Slot::Element)
                ),
            )
            .with_related(var.span, "the TRF tensor is declared here"),
        ),
        Err(DeriveError::Unsupported(_)) => {}
        Ok(cfg) => {
            let limit = cx.target.sequencer_entries;
            let max_size = cx.target.sequencer_entry_size;
            let stride_bytes = |s: u64| bytes(s, bits);
            let problem = if cfg.entries.len() > limit {
                Some(format!(
                    "{} entries ({}), more than the {limit} it has",
                    cfg.entries.len(),
                    entries_text(&cfg.entries, &stride_bytes)
                ))
            } else if let Some(en) = cfg.entries.iter().find(|en| en.size > max_size) {
                Some(format!(
                    "an entry of size {} (at most {max_size})",
                    en.size
                ))
            } else {
                cfg.entries
                    .iter()
                    .find(|en| stride_bytes(en.stride) > i32::MAX as u64)
                    .map(|en| {
                        format!(
                            "a stride of {} bytes, beyond a signed 32-bit stride",
                            stride_bytes(en.stride)
                        )
                    })
            };
            if let Some(problem) = problem {
                out.push(at_arg(
                    &SEQ_010,
                    step,
                    at(step, 0, Slot::Time),
                    format!(
                        "reading the TRF Element {} as OutTime {} takes the TRF Sequencer {problem}",
                        text(&var.ty, Slot::Element),
                        text(output, Slot::Time)
                    ),
                ));
            }
        }
    }
    // CON-019: a contracted axis padded by dummies on both sides.
    for dim in &p.dims {
        if let Dim::Factor(f) = dim
            && f.valid < f.extent
            && let Some(a) = &f.axis
            && op.axis_names().contains(&a.name)
            && e.dims.iter().any(|x| {
                matches!(x, Dim::Factor(g) if g.valid < g.extent
                    && g.axis.as_ref().is_some_and(|b| b.name == a.name))
            })
        {
            out.push(Diagnostic::new(
                &CON_019,
                step.span,
                format!(
                    "the stream packet {} and the TRF Element {} both pad {} with dummies; the padded \
                     positions multiply dummy by dummy and add garbage to every sum unless the TRF \
                     padding holds zeros (1+1# × 1+1z)",
                    text(input, Slot::Packet),
                    text(&var.ty, Slot::Element),
                    a.name
                ),
            ));
            break;
        }
    }
    // CON-020: fewer than 8 Rows while a TRF output axis is iterated in Time.
    if let Some(r) = layout(&var.ty, Slot::Row)
        && r.size < cx.target.trf_rows
    {
        let mut stream_axes = t.axis_names();
        stream_axes.extend(p.axis_names());
        let time_axes = ot.axis_names();
        if let Some(dim) = e.dims.iter().find(|x| {
            x.extent() >= 2
                && factor_axis(x).is_some_and(|a| time_axes.contains(a) && !stream_axes.contains(a))
        }) {
            let rows = cx.target.trf_rows;
            let macs = d.elems_for(mac).map_or(0, |n| n.saturating_mul(rows));
            let used = r.size.saturating_mul(dim.extent()).min(rows);
            out.push(Diagnostic::new(
                &CON_020,
                step.span,
                format!(
                    "the contraction uses {} of {rows} Rows ({}/{rows} of the {macs} {d} MACs per \
                     cycle of a slice); the tiling axis `{}` of the TRF Element {} is iterated in \
                     Time: moving it to Row would use {used} Rows",
                    r.size,
                    r.size,
                    dim.to_expr(),
                    text(&var.ty, Slot::Element)
                ),
            ));
        }
    }
    // CON-021: 64-byte reads while the sub context loads the other TRF half.
    if read64
        && step.context == Some(Tu::Main)
        && let Some(load) = cx
            .model
            .chains
            .iter()
            .filter(|c| c.binding.as_deref() != Some(var.name.as_str()))
            .flat_map(|c| c.steps.iter())
            .find(|s| {
                s.method == Method::ToTrf
                    && s.context == Some(Tu::Sub)
                    && s.args.first().is_some_and(|a| {
                        a.value_text().contains("FirstHalf")
                            || a.value_text().contains("SecondHalf")
                    })
            })
    {
        out.push(
            Diagnostic::new(
                &CON_021,
                step.span,
                format!(
                    "reg_read_size is {mac} bytes: each TRF cache miss occupies both bank columns \
                     and stalls the concurrent StoTRF load into the other TRF half (reads win); \
                     reads of at most 32 bytes that alternate the bank columns avoid the conflict"
                ),
            )
            .with_related(load.span, "the concurrent TRF load"),
        );
    }
}

fn entries_text(entries: &[Entry], stride_bytes: &dyn Fn(u64) -> u64) -> String {
    entries
        .iter()
        .map(|en| format!("{} : {}", en.size, stride_bytes(en.stride)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// CON-007 and the stream side of CON-008.
#[allow(clippy::too_many_arguments)]
fn check_stream_time(
    step: &Step,
    input: &TensorTy,
    output: &TensorTy,
    t: &Layout,
    p: &Layout,
    ot: &Layout,
    c: u64,
    e: Option<&Layout>,
    library: Generation,
    out: &mut Vec<Diagnostic>,
) {
    if ot.dims.iter().any(|d| matches!(d, Dim::Opaque(_))) {
        return;
    }
    let mut stream_axes = t.axis_names();
    stream_axes.extend(p.axis_names());
    let tiling = |d: &Dim| factor_axis(d).is_some_and(|a| !stream_axes.contains(a));
    let span = at(step, 0, Slot::Time);
    if let Some(first) = ot.dims.iter().position(tiling)
        && ot.dims[first..].iter().any(|d| !tiling(d))
    {
        let mut dims: Vec<Dim> = ot.dims.iter().filter(|d| !tiling(d)).cloned().collect();
        let moved: Vec<Dim> = ot.dims.iter().filter(|d| tiling(d)).cloned().collect();
        let names: Vec<String> = moved.iter().map(Dim::to_expr).collect();
        dims.extend(moved);
        let fixed = Layout {
            size: ot.size,
            dims,
        };
        let in_trf = e.is_some_and(|e| {
            let held = e.axis_names();
            ot.dims
                .iter()
                .filter(|d| tiling(d))
                .all(|d| factor_axis(d).is_some_and(|a| held.contains(a)))
        });
        let mut diag = at_arg(
            &CON_007,
            step,
            span,
            format!(
                "`{}` {} absent from the collected stream (Time {}, Packet {}){}: tiling axes repeat \
                 each packet in place and must be the innermost OutTime factors: {}",
                names.join("`, `"),
                if names.len() == 1 { "is" } else { "are" },
                text(input, Slot::Time),
                text(input, Slot::Packet),
                match (in_trf, names.len() == 1) {
                    (false, _) => "",
                    (true, true) => " and comes from the TRF",
                    (true, false) => " and come from the TRF",
                },
                m(&fixed)
            ),
        );
        if let Some(a) = written(step, 0).filter(|a| a.text.trim().starts_with("m![")) {
            diag = diag.with_edit(
                "move the tiling axes to the end of OutTime",
                false,
                a.span,
                m(&fixed),
            );
        }
        out.push(diag);
        return;
    }
    // Tiling axes repeat a packet the TRF Sequencer reads; the manual's library asserts
    // "tiling axes must be present in TRF" (an axis in neither the stream nor the TRF Element
    // is data neither side has); furiosa-opt-std 0.6 does not.
    if let Some(e) = e.filter(|e| {
        library.tiling_axes_must_be_in_trf() && e.dims.iter().all(|d| matches!(d, Dim::Factor(_)))
    }) {
        let held = e.axis_names();
        let missing: Vec<String> = ot
            .dims
            .iter()
            .filter(|d| tiling(d) && factor_axis(d).is_some_and(|a| !held.contains(a)))
            .map(Dim::to_expr)
            .collect();
        if !missing.is_empty() {
            out.push(at_arg(
                &CON_008,
                step,
                span,
                format!(
                    "OutTime `{}` tiles over `{}`, which is in neither the collected stream (Time \
                     {}, Packet {}) nor the TRF Element `{}`: tiling axes must be present in TRF \
                     (the TRF Sequencer repeats each packet over them); drop {} from OutTime or \
                     load the TRF with {}",
                    text(output, Slot::Time),
                    missing.join("`, `"),
                    text(input, Slot::Time),
                    text(input, Slot::Packet),
                    m(e),
                    if missing.len() == 1 { "it" } else { "them" },
                    if missing.len() == 1 { "it" } else { "them" },
                ),
            ));
            return;
        }
    }
    let kept: Vec<Dim> = ot.dims.iter().filter(|d| !tiling(d)).cloned().collect();
    let Ok(kept) = Layout::from_dims(kept) else {
        return;
    };
    if c > 1 && !t.size.is_multiple_of(c) {
        return;
    }
    let expected = if c == 1 { t.clone() } else { t.stride(c) };
    if same_data(&kept, &expected) {
        return;
    }
    out.push(at_arg(
        &CON_008,
        step,
        span,
        format!(
            "the Stream Adapter keeps the collected Time order: with collect_flits = {c}, OutTime \
             (without tiling axes) must be {} (from Time {}), not {}; only the TRF Sequencer can \
             reorder Time, so reorder the stream upstream (fetch/collect)",
            m(&expected),
            text(input, Slot::Time),
            text(output, Slot::Time)
        ),
    ));
}

/// CON-011 and CON-012.
fn check_contract(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    let Some(d) = input.dtype else {
        return;
    };
    let Some(depth) = cx
        .target
        .tree_depth(cx.conversions().contraction_operand(d))
    else {
        return;
    };
    let (Some(p), Some(q)) = (layout(input, Slot::Packet), layout(output, Slot::Packet)) else {
        return;
    };
    if d.size_bytes(p.size) != Some(cx.target.mac_width_bytes) {
        return; // CON-004 reports the packet
    }
    let options: Vec<(u32, Layout)> = (0..=depth)
        .filter_map(|n| {
            let s = 1u64.checked_shl(n)?;
            p.size.is_multiple_of(s).then(|| (n, p.stride(s)))
        })
        .collect();
    let span = at(step, 0, Slot::Packet);
    let cols = cx.target.reducer_columns;
    match spatial_depth(p, q, depth) {
        Some(n) => {
            if q.size > cols {
                out.push(at_arg(
                    &CON_012,
                    step,
                    span,
                    format!(
                        "contract OutPacket {} has {} elements (tree depth {n}); the Reducer resizes \
                         each Row's output to {cols} columns and truncates the rest: reduce at least \
                         the innermost {} positions",
                        text(output, Slot::Packet),
                        q.size,
                        q.size.div_ceil(cols)
                    ),
                ));
            }
        }
        None => {
            let shown: Vec<String> = options
                .iter()
                .rev()
                .filter(|(_, l)| l.size <= cols)
                .take(4)
                .map(|(n, l)| format!("{} (depth {n})", strip(l).map_or_else(|| m(l), |s| m(&s))))
                .collect();
            out.push(at_arg(
                &CON_011,
                step,
                span,
                format!(
                    "the reduction tree removes the innermost 2^n positions of the packet {} (n ≤ {depth} \
                     for {d}), leaving Packet / 2^n; contract OutPacket {} is not one of them: {}",
                    text(input, Slot::Packet),
                    text(output, Slot::Packet),
                    shown.join(", ")
                ),
            ));
        }
    }
}

/// The tree depth n <= `depth` with `contract` output `q` = `p / 2^n` (up to padding).
pub(crate) fn spatial_depth(p: &Layout, q: &Layout, depth: u32) -> Option<u32> {
    (0..=depth).find(|&n| {
        1u64.checked_shl(n)
            .is_some_and(|s| p.size.is_multiple_of(s) && same_data(&p.stride(s), q))
    })
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Mode {
    Interleaved,
    Sequential,
}

/// CON-014..CON-017.
fn check_accumulate(cx: &FnContext<'_>, step: &Step, out: &mut Vec<Diagnostic>) {
    let (Some(input), Some(output)) = (&step.input, &step.output) else {
        return;
    };
    let kind = step
        .args
        .first()
        .map_or_else(String::new, |a| a.value_text().into_owned());
    let mode = if kind.contains("Interleaved") {
        Mode::Interleaved
    } else if kind.contains("Sequential") {
        Mode::Sequential
    } else {
        return;
    };
    let (Some(r), Some(t), Some(q), Some(ot), Some(op)) = (
        layout(input, Slot::Row),
        layout(input, Slot::Time),
        layout(input, Slot::Packet),
        layout(output, Slot::Time),
        layout(output, Slot::Packet),
    ) else {
        return;
    };
    let all_regular = [r, t, q, ot, op]
        .iter()
        .all(|l| l.dims.iter().all(|d| matches!(d, Dim::Factor(_))));
    if !all_regular {
        return;
    }
    let kept_in_out = |d: &Dim| ot.dims.iter().chain(op.dims.iter()).any(|o| overlaps(d, o));
    let reduced: Vec<bool> = t
        .dims
        .iter()
        .map(|d| factor_axis(d).is_some() && !kept_in_out(d))
        .collect();
    let Ok(t_kept) = Layout::from_dims(
        t.dims
            .iter()
            .zip(&reduced)
            .filter(|(_, red)| !**red)
            .map(|(d, _)| d.clone())
            .collect(),
    ) else {
        return;
    };
    let ot_span = at(step, 0, Slot::Time);
    let op_span = at(step, 1, Slot::Packet);
    let bus = cx.target.reducer_output_bus;
    let rows = cx.target.trf_rows;
    let cols = cx.target.reducer_columns;
    let mut shape_ok = true;
    match mode {
        Mode::Interleaved => {
            // OutPacket = Row # 8.
            if r.size <= rows && (op.size != rows || !same_data(op, r)) {
                shape_ok = false;
                let want = r.window(rows);
                let mut diag = at_arg(
                    &CON_015,
                    step,
                    op_span,
                    format!(
                        "Interleaved accumulation outputs one value of each of the {rows} accumulator \
                         rows per beat: OutPacket must be the Row {} padded to {rows}, {}, not {}",
                        text(input, Slot::Row),
                        m(&want),
                        text(output, Slot::Packet)
                    ),
                );
                if same_data(op, r)
                    && op.size < rows
                    && let Some(edit) = written(step, 1).and_then(|a| pad_edit(cx.scope, a, rows))
                {
                    diag = diag.with_fix(format!("pad OutPacket to {rows}"), false, vec![edit]);
                }
                out.push(diag);
            }
            // OutTime = Time' ++ surviving packet.
            if let Ok(want) = t_kept.pair(q)
                && !same_data(ot, &want)
            {
                let ot_text = text(output, Slot::Time);
                let sliced = ot_text.contains('=')
                    && t_kept.size > 0
                    && ot.size.is_multiple_of(t_kept.size)
                    && {
                        let k = ot.size / t_kept.size;
                        k < q.size && t_kept.pair(&q.window(k)).is_ok_and(|l| same_data(ot, &l))
                    };
                if sliced {
                    let k = ot.size / t_kept.size.max(1);
                    let dropped = !same_data(&q.window(k), q);
                    if dropped {
                        out.push(at_arg(
                            &CON_017,
                            step,
                            ot_span,
                            format!(
                                "OutTime {ot_text} slices the surviving packet {} to {k} positions; \
                                 Interleaved slicing should only cut padding, and this drops real \
                                 partial sums",
                                text(input, Slot::Packet)
                            ),
                        ));
                    }
                } else {
                    shape_ok = false;
                    out.push(at_arg(
                        &CON_015,
                        step,
                        ot_span,
                        format!(
                            "Interleaved accumulation keeps the Time order without the reduced axes \
                             and appends the packet left after the tree: OutTime must be {}, not {}",
                            strip(&want).map_or_else(|| m(&want), |s| m(&s)),
                            ot_text
                        ),
                    ));
                }
            }
        }
        Mode::Sequential => {
            let size_ok = op.size.is_multiple_of(bus) && op.size <= cols && op.size > 0;
            let want = t_kept.pair(r).and_then(|l| l.pair(q));
            let have = ot.pair(op);
            let data_ok = matches!((&want, &have), (Ok(w), Ok(h)) if same_data(w, h));
            if !size_ok || !data_ok {
                shape_ok = false;
                let padded = op.size.div_ceil(bus).saturating_mul(bus);
                let mut diag = at_arg(
                    &CON_016,
                    step,
                    if data_ok { op_span } else { ot_span },
                    if data_ok {
                        format!(
                            "Sequential accumulation outputs the packet on an {bus}-element bus: \
                             OutPacket {} has {} elements; it must be {bus}, 16, 24 or {cols}: pad it \
                             to {padded}",
                            text(output, Slot::Packet),
                            op.size
                        )
                    } else {
                        format!(
                            "Sequential accumulation outputs Time without the reduced axes, then the \
                             Row, then the packet: OutTime ++ OutPacket must hold {}, but {} ++ {} \
                             does not",
                            want.as_ref().ok().map_or_else(
                                || "?".into(),
                                |w| strip(w).map_or_else(|| m(w), |s| m(&s))
                            ),
                            text(output, Slot::Time),
                            text(output, Slot::Packet)
                        )
                    },
                );
                if data_ok
                    && padded <= cols
                    && let Some(edit) = written(step, 1).and_then(|a| pad_edit(cx.scope, a, padded))
                {
                    diag = diag.with_fix(format!("pad OutPacket to {padded}"), false, vec![edit]);
                }
                out.push(diag);
            }
        }
    }
    // CON-014: the buffer positions inner to the outermost reduced Time axis.
    let Some(first) = reduced.iter().position(|&x| x) else {
        return;
    };
    if !shape_ok {
        return;
    }
    let outer = &t.dims[..first];
    let mut inner: u64 = 1;
    let mut inner_names = Vec::new();
    for d in &ot.dims {
        if outer.iter().any(|o| overlaps(d, o)) {
            continue;
        }
        inner = inner.saturating_mul(d.extent());
        inner_names.push(d.to_expr());
    }
    let slots = rows
        .saturating_mul(cols)
        .saturating_mul(cx.target.accumulator_registers);
    let (per, formula) = match mode {
        Mode::Interleaved => (
            r.size.div_ceil(rows).saturating_mul(rows),
            "align_up(Row, 8)",
        ),
        Mode::Sequential => (
            q.size.div_ceil(cols).saturating_mul(cols),
            "align_up(packet, 32)",
        ),
    };
    let used = per.saturating_mul(inner);
    if used > slots {
        out.push(at_arg(
            &CON_014,
            step,
            ot_span,
            format!(
                "{mode:?} accumulation buffers the {inner} positions inner to the reduced `{}` ({}); \
                 {formula} × {inner} = {per} × {inner} = {used} slots, over the {slots}-slot \
                 accumulator ({rows} rows × {cols} columns × {} registers): at most {} inner positions",
                t.dims[first].to_expr(),
                if inner_names.is_empty() {
                    "none".to_string()
                } else {
                    inner_names.join(" × ")
                },
                cx.target.accumulator_registers,
                slots / per.max(1)
            ),
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::analyse_text;
    use crate::model::Dtype;
    use crate::target::RNGD;

    fn lay(axes: &str, mapping: &str) -> Layout {
        crate::mapping::evaluate(axes, mapping)
            .layout
            .unwrap_or_else(Layout::identity)
    }

    fn codes(src: &str) -> Vec<String> {
        analyse_text(src)
            .diagnostics()
            .iter()
            .filter(|d| d.code().starts_with("CON") || d.code() == "SEQ-010")
            .map(|d| d.code().to_string())
            .collect()
    }

    fn reg(axes: &str, packet: &str, element: &str, d: &str) -> Option<Result<u64, u64>> {
        let read = trf::read(&lay(axes, packet), &lay(axes, element))?;
        assert_eq!(read.stray, None);
        trf::reg_read_size(&read, Dtype::from_name(d)?, RNGD.mac_width_bytes)
    }

    #[test]
    fn reg_read_size_golden() {
        // L4234-L4235: Element [K = 32] against Packet [K]: 64 bytes, no broadcast.
        assert_eq!(reg("M = 32, N = 8, K = 32", "K", "K", "bf16"), Some(Ok(64)));
        // L4281-L4282: Element [O, K = 16] against Packet [L, K]: 32 bytes, broadcast twice.
        assert_eq!(
            reg(
                "M = 32, N = 8, K = 16, L = 2, O = 2",
                "L, K",
                "O, K",
                "bf16"
            ),
            Some(Ok(32))
        );
        // L3855-L3857: Element [O, M, K] against Packet [L, K]: 32 bytes.
        assert_eq!(
            reg(
                "M = 32, N = 8, K = 16, L = 2, O = 2",
                "L, K",
                "O, M, K",
                "bf16"
            ),
            Some(Ok(32))
        );
        // L3998-L4001: Packet [K = 16 # 32] against Element [K]: the 32 data bytes.
        assert_eq!(reg("K = 16", "K # 32", "K", "bf16"), Some(Ok(32)));
        // A 24-byte run is no power of two (L4104); padded to 32 it is.
        assert_eq!(reg("K = 24", "K # 64", "K", "i8"), Some(Err(24)));
        assert_eq!(reg("K = 24", "K # 64", "K # 32", "i8"), Some(Ok(32)));
    }

    #[test]
    fn trf_sequencer_entries_golden() {
        let bytes_of = |cfg: &crate::derive::Config| -> Vec<(u64, u64)> {
            cfg.entries
                .iter()
                .map(|e| (e.size, bytes(e.stride, 16)))
                .collect()
        };
        let axes = "M = 32, N = 8, K = 16, L = 2, O = 2";
        // L3862-L3864: Entry 0 {2, 1024} (O, inner), Entry 1 {32, 32} (M, outer).
        let cfg = configure(
            &lay(axes, "O, M, K"),
            &lay(axes, "M, O").dims,
            &[],
            Direction::Read,
            8,
        );
        assert_eq!(cfg.map(|c| bytes_of(&c)), Ok(vec![(32, 32), (2, 1024)]));
        // L4284-L4286: Entry 0 {32, 0} (M, broadcast), Entry 1 {2, 32} (O).
        let cfg = configure(
            &lay(axes, "O, K"),
            &lay(axes, "O, M").dims,
            &[],
            Direction::Read,
            8,
        );
        assert_eq!(cfg.map(|c| bytes_of(&c)), Ok(vec![(2, 32), (32, 0)]));
        // L4238-L4239: Entry 0 {32, 0} (M, broadcast).
        let axes = "M = 32, N = 8, K = 32";
        let cfg = configure(
            &lay(axes, "K"),
            &lay(axes, "M").dims,
            &[],
            Direction::Read,
            8,
        );
        assert_eq!(cfg.map(|c| bytes_of(&c)), Ok(vec![(32, 0)]));
    }

    #[test]
    fn tree_depths_golden() {
        // L4388: i4 depth 7 (128 elements), i8/f8 6 (64), bf16 5 (32): a full 64-byte packet.
        for (d, depth, elems) in [
            (Dtype::I4, 7, 128),
            (Dtype::I8, 6, 64),
            (Dtype::F8, 6, 64),
            (Dtype::Bf16, 5, 32),
        ] {
            assert_eq!(RNGD.tree_depth(d), Some(depth));
            assert_eq!(1u64 << depth, elems);
            assert_eq!(d.elems_for(RNGD.mac_width_bytes), Some(elems));
        }
        assert_eq!(RNGD.tree_depth(Dtype::F32), None);
        // L4351: 32 bf16 of B reduce to one value with depth 5.
        assert_eq!(
            spatial_depth(&lay("B = 32", "B"), &lay("B = 32", "1"), 5),
            Some(5)
        );
        // L4467-L4468: K % 16 # 32 reduces to K % 16 / 4 with depth 2.
        let k = "K = 64";
        assert_eq!(
            spatial_depth(&lay(k, "K % 16 # 32"), &lay(k, "K % 16 / 4"), 5),
            Some(2)
        );
        // L3870: [L, K] contracts to L (depth 4); K is an outer factor.
        let a = "K = 16, L = 2";
        assert_eq!(spatial_depth(&lay(a, "L, K"), &lay(a, "L"), 5), Some(4));
        assert_eq!(spatial_depth(&lay(a, "L, K"), &lay(a, "K"), 5), None);
    }

    #[test]
    fn accumulator_slots_golden() {
        // L4409: 8 rows x 32 columns x 4 registers = 1024 slots; Interleaved 128 inner (L4434),
        // Sequential 32 (L4434, L4537).
        let slots = RNGD.trf_rows * RNGD.reducer_columns * RNGD.accumulator_registers;
        assert_eq!(slots, 1024);
        assert_eq!(slots / RNGD.trf_rows, 128);
        assert_eq!(slots / RNGD.reducer_columns, 32);
    }

    #[test]
    fn collect_flits_golden() {
        // L3847-L3851: Time [M, O, L], Packet [K] -> OutPacket [L, K] collects 2 flits.
        let a = "M = 32, K = 16, L = 2, O = 2";
        assert_eq!(
            collected_flits(&lay(a, "M, O, L"), &lay(a, "K"), &lay(a, "L, K"), 3),
            Some(2)
        );
        // L3998-L4001: Packet [K] -> [K # 32] is collect_flits = 1.
        assert_eq!(
            collected_flits(&lay(a, "M"), &lay(a, "K"), &lay(a, "K # 32"), 3),
            Some(1)
        );
        // The outer Time factor cannot be collected.
        assert_eq!(
            collected_flits(&lay(a, "L, M"), &lay(a, "K"), &lay(a, "L, K"), 3),
            None
        );
    }

    #[test]
    fn manual_reducer_examples() {
        // L4453-L4479: inner 4 x 4 = 16 <= 128; L4495-L4523: 4 x 8 = 32 <= 32.
        let inter = include_str!("../../../fixtures/manual/4453_reducer_interleaved.rs");
        let seq = include_str!("../../../fixtures/manual/4495_reducer_sequential.rs");
        assert!(codes(inter).is_empty());
        assert!(codes(seq).is_empty());
        // M = 8 doubles the Sequential inner positions to 64 > 32.
        let seq8 = seq.replace("M = 4", "M = 8");
        assert_eq!(codes(&seq8), vec!["CON-014"]);
        // M = 64 gives 64 x 4 = 256 > 128 Interleaved inner positions.
        let inter64 = inter.replace("M = 4", "M = 64");
        assert_eq!(codes(&inter64), vec!["CON-014"]);
    }

    #[test]
    fn trf_sequencer_nine_entries() {
        // L4171-L4174: 1-8 entries. Nine size-2 axes in the reverse of the TRF order do not merge.
        let src = "use furiosa_visa_std::prelude::*;\naxes![A = 2, B = 2, C = 2, D = 2, E = 2, F = 2, G = 2, H = 2, I = 2, N = 8, K = 32];\nfn f<'l, const T: Tu>(input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![A, B, C, D, E, F, G, H, I, K / 16], m![K % 16]>, trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![ELEM, K]>) -> AlignedPair<'l, T, bf16, m![1], m![1], m![1], m![N], m![A, B, C, D, E, F, G, H, I], m![K]> {\n    input.align::<m![A, B, C, D, E, F, G, H, I], m![K], _, _>(trf)\n}\n";
        let reversed = src.replace("ELEM", "I, H, G, F, E, D, C, B, A");
        let same = src.replace("ELEM", "A, B, C, D, E, F, G, H, I");
        assert_eq!(codes(&reversed), vec!["SEQ-010"]);
        assert!(codes(&same).is_empty());
    }

    #[test]
    fn manual_contraction_examples_are_silent() {
        for src in [
            include_str!("../../../fixtures/manual/0307_dot_product.rs"),
            include_str!("../../../fixtures/manual/0401_gemv.rs"),
            include_str!("../../../fixtures/manual/0473_gemm.rs"),
            include_str!("../../../fixtures/manual/3823_aligner_batched_matmul.rs"),
            include_str!("../../../fixtures/manual/4012_align_time_broadcast.rs"),
            include_str!("../../../fixtures/manual/4203_trf_basic_weight_broadcast.rs"),
            include_str!("../../../fixtures/manual/4250_trf_small_reg_read_size.rs"),
            include_str!("../../../fixtures/manual/4335_reducer_matmul.rs"),
        ] {
            assert!(codes(src).is_empty(), "{:?}", codes(src));
        }
    }

    #[test]
    fn no_panic_on_extreme_sizes() {
        let src = "use furiosa_visa_std::prelude::*;\naxes![M = 9223372036854775808, N = 8, K = 1];\nfn f<'l, const T: Tu>(input: CollectTensor<'l, T, bf16, m![1], m![1], m![1], m![M], m![K # 16]>, trf: &TrfTensor<bf16, m![1], m![1], m![1], m![N], m![K]>) -> AccumulationTensor<'l, T, f32, m![1], m![1], m![1], m![M], m![N]> {\n    input.align::<m![M], m![K # 32], _, _>(trf).contract::<m![1]>().accumulate::<m![M], m![N]>(AccumulationKind::Interleaved)\n}\n";
        let _ = codes(src);
    }
}
