//! The DMA Engine's read/write sequencer pair (manual L2355-L2846, seed 000): one stream
//! (`Time`, `Packet`) drives a read sequencer over the source buffer and a write sequencer over
//! the destination buffer with shared loop sizes and separate strides (L2545). The packet
//! (`stride0`, 1..=4096 bytes, L2512) is the largest size that divides the run of bytes that is
//! contiguous on both sides (L2448, L2593); each packet is split into `ceil(stride0 / 256)`
//! 256-byte requests (L2469-L2472, L2594).
//!
//! Buffers: an HBM tensor is its `Element`; a DM tensor is `m![Cluster, Slice, Element]` (its
//! cluster and slice digits become loops whose strides are multiples of the 4 MB slice space,
//! the manual's `slice_stride` / `DMN_stride`, L2652). Strides are in elements.
//!
//! # API
//!
//! - [`derive`]`(src, dst, time, packet, bits, align, target)` -> [`DmaPair`] for an explicit
//!   stream (the manual's worked examples).
//! - [`ops`]`(model, target)` -> [`DmaOp`] for every `to_dm` / DM-source `to_hbm` step, with
//!   the stream the compiler infers for one DMA Engine's command, as the manual's Examples 2-6
//!   print it: the DM Element's digits in the HBM side's order, then the slice and DMN digits,
//!   then the packet (the Element's innermost digits that are contiguous in both layouts, cut
//!   to 256-byte requests when slices interleave); the Slice digits above a DMN pair, the Cluster and the
//!   Chip select the engine ([`DmaOp::engines`]). Padded digits iterate only their valid part.
//!   The simulator and the rules read this stream; nothing downstream re-derives it.
//! - [`DmaOp::segmented`]: when a padded axis leaves the engine holding its last real positions
//!   a partial share ([`axis_digits`], [`segments`]), that engine's commands, each a regular
//!   part of the stream run one after the other (Example 6's DMN #3, L2772-L2808). DMA-008
//!   reports it and the simulator costs that engine from it.

use super::sequencer::{Config, DeriveError, Direction, bytes, configure, contiguous_elements};
use crate::diagnostic::Span;
use crate::mapping::layout::{Dim, Factor, PadKind};
use crate::mapping::{Axis, Layout};
use crate::model::{FnModel, Kind, Slot, Step, TensorTy};
use crate::target::Target;

/// A derived DMA command: the paired sequencers and the request split.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct DmaPair {
    pub read: Config,
    pub write: Config,
    /// Elements contiguous on both sides (the innermost entries' common run).
    pub run_elems: u64,
    pub run_bytes: u64,
    /// The packet (`stride0`) in bytes: the largest divisor of `run_bytes` that is at most
    /// `Target::dma_packet_max_bytes` (and a multiple of `align`); `None` when none exists.
    pub stride0: Option<u64>,
    /// Packets the command moves (`stream bytes / stride0`).
    pub packets: Option<u64>,
    /// 256-byte DMA requests: `packets * ceil(stride0 / 256)` (L2469, L2594).
    pub requests: Option<u64>,
}

/// The largest divisor of `run` that is at most `max` and a multiple of `align` (the packet the
/// compiler picks, L2448: "packet size divides last consecutive read/write ... entry").
pub fn stride0(run: u64, max: u64, align: u64) -> Option<u64> {
    let align = align.max(1);
    if run == 0 || !run.is_multiple_of(align) {
        return None;
    }
    let mut d = max.min(run) / align * align;
    while d >= align {
        if run.is_multiple_of(d) {
            return Some(d);
        }
        d -= align;
    }
    None
}

/// Derives the DMA pair for moving `src` to `dst` through the stream `time`/`packet` (digits
/// outermost first). `align` is the packet alignment in bytes (8 for DM writes and HBM-to-DM,
/// L2425-L2427; 1 otherwise).
pub fn derive(
    src: &Layout,
    dst: &Layout,
    time: &[Dim],
    packet: &[Dim],
    bits: u32,
    align: u64,
    target: &Target,
) -> Result<DmaPair, DeriveError> {
    let read = configure(src, time, packet, Direction::Read, target.sequencer_entries)?;
    let write = configure(dst, time, packet, Direction::Read, target.sequencer_entries)?;
    let run_elems = contiguous_elements(&read.entries).min(contiguous_elements(&write.entries));
    let run_bytes = bytes(run_elems, bits);
    let stride0 = stride0(run_bytes, target.dma_packet_max_bytes, align);
    let total: u64 = time
        .iter()
        .chain(packet.iter())
        .fold(1u64, |acc, d| acc.saturating_mul(d.extent()));
    let total_bytes = bytes(total, bits);
    let packets = stride0.map(|s| total_bytes / s);
    let requests = stride0
        .zip(packets)
        .map(|(s, p)| p.saturating_mul(s.div_ceil(target.dma_request_bytes)));
    Ok(DmaPair {
        read,
        write,
        run_elems,
        run_bytes,
        stride0,
        packets,
        requests,
    })
}

/// Whether a loop of a DMA sequencer on the HBM side toggles HBM address bit `stack_bit` (the
/// stack: a stream that never does reaches half the channels, L2738): a loop of `size` steps of
/// `stride` bytes does when its offsets reach past the bit modulo two stacks' span. Any loop
/// counts, not only the innermost (Example 4's `C / 256` loop, the third from inside, gives
/// "stack interleaving across all 32 channels", L2712). `stride0` is the packet in bytes.
pub fn toggles_stack_bit(cfg: &Config, bits: u32, stride0: u64, stack_bit: u32) -> bool {
    let Some(stack) = 1u64.checked_shl(stack_bit) else {
        return false;
    };
    let n = cfg.entries.len().saturating_sub(cfg.packet_entries);
    let toggles = |size: u64, d: u64| {
        let m = d % stack.saturating_mul(2);
        size > 1 && m != 0 && (m >= stack || (size - 1).saturating_mul(m) >= stack)
    };
    stride0 > stack
        || cfg.entries[..n]
            .iter()
            .any(|e| toggles(e.size, bytes(e.stride, bits)))
}

/// Which side of a DMA transfer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Media {
    Hbm,
    Dm,
}

/// One DMA step of a function model and its derivation.
#[derive(Clone, Debug)]
pub struct DmaOp<'a> {
    pub step: &'a Step,
    /// The method name token.
    pub span: Span,
    pub src_media: Media,
    pub dst_media: Media,
    /// Source and destination buffers (`Element`, or `[Cluster, Slice, Element]` for DM).
    pub src: Layout,
    pub dst: Layout,
    /// The inferred stream of one DMA Engine's command (the configuration the manual prints
    /// per `(cluster_i, dmn_j)`); `pair` counts that one command's packets and requests.
    pub time: Vec<Dim>,
    pub packet: Vec<Dim>,
    /// DMA Engines running such a command at once (one per DMN pair the DM side spans, on
    /// every chip and cluster, L2404, L2707).
    pub engines: u64,
    /// Chips among those engines: each chip's engines share its own HBM channels.
    pub chips: u64,
    pub bits: u32,
    /// The packet alignment the transfer needs (8 when it writes DM or reads HBM into DM).
    pub align: u64,
    pub pair: Result<DmaPair, DeriveError>,
    /// The engine whose share of a padded axis is partial, and its commands (DMA-008, L2801).
    pub segmented: Option<Segmented>,
}

fn media(t: &TensorTy) -> Option<Media> {
    match t.kind {
        Kind::Hbm | Kind::HbmView => Some(Media::Hbm),
        Kind::Dm | Kind::DmView | Kind::DmViewMut => Some(Media::Dm),
        _ => None,
    }
}

fn lay(t: &TensorTy, s: Slot) -> Option<Layout> {
    t.get(s)?.layout.as_deref().cloned()
}

/// The buffer a DMA sequencer addresses: HBM `Element`; DM `[Cluster, Slice, Element]` with the
/// Element padded to the slice's virtual address space (`Target::dma_slice_space_bytes`, rounded
/// up to whole Elements), so a
/// slice step is the manual's `slice_stride` and never contiguous with the Element (L2541).
pub fn buffer(t: &TensorTy, bits: u32, target: &Target) -> Option<Layout> {
    let e = lay(t, Slot::Element)?;
    match media(t)? {
        Media::Hbm => Some(e),
        Media::Dm => {
            let space = target
                .dma_slice_space_bytes
                .checked_mul(8)?
                .checked_div(u64::from(bits))?;
            // Rounded up to whole Elements so the padding stays one regular digit.
            let e = if e.size > 0 && e.size < space {
                e.window(e.size.checked_mul(space.div_ceil(e.size))?)
            } else {
                e
            };
            let cl = lay(t, Slot::Cluster).unwrap_or_else(Layout::identity);
            let sl = lay(t, Slot::Slice).unwrap_or_else(Layout::identity);
            cl.pair(&sl).ok()?.pair(&e).ok()
        }
    }
}

fn holds(buf: &Layout, d: &Dim) -> bool {
    let Dim::Factor(f) = d else { return false };
    let Some(a) = &f.axis else { return false };
    buf.dims
        .iter()
        .any(|b| matches!(b, Dim::Factor(g) if g.axis.as_ref().is_some_and(|x| x.name == a.name)))
}

/// The stream the compiler infers for one DMA Engine's command, and the engines the transfer
/// spreads over.
struct Stream {
    time: Vec<Dim>,
    packet: Vec<Dim>,
    /// DMA Engines working on the transfer (chip x cluster x engine share of the Slice).
    engines: u64,
    /// Chips among them (each has its own HBM).
    chips: u64,
}

/// A time digit iterating the valid part of a factor.
fn valid_digit(axis: Option<crate::mapping::Axis>, coef: u64, valid: u64) -> Option<Dim> {
    let axis = axis?;
    (valid > 1).then_some(Dim::Factor(Factor {
        extent: valid,
        valid,
        axis: Some(axis),
        coef,
        pad: PadKind::Top,
    }))
}

/// Splits a DM tensor's Slice at the DMN (`slices_per_dmn`) and DMA-Engine
/// (`dmns_per_dma_engine` DMNs) boundaries, as the manual's examples do (L2652, L2702, L2736,
/// L2777): the digits inside one DMN (the `slice_stride` loops), the digits selecting the DMN
/// of the engine's pair (`DMN_stride`), each outermost first and iterating only their valid
/// part, and the number of engines the digits above select. `None` when a digit straddles a
/// boundary it does not divide at, or is irregular.
fn split_slice(slice: &Layout, t: &Target) -> Option<(Vec<Dim>, Vec<Dim>, u64)> {
    let dmn = t.slices_per_dmn.max(1);
    let engine = dmn.checked_mul(t.dmns_per_dma_engine.max(1))?;
    let (mut in_dmn, mut dmns, mut engines) = (Vec::new(), Vec::new(), 1u64);
    let mut place: u64 = 1;
    for d in slice.dims.iter().rev() {
        let Dim::Factor(f) = d else { return None };
        let (mut extent, mut valid, mut coef) = (f.extent, f.valid.min(f.extent), f.coef);
        while extent > 1 {
            let limit = if place < dmn {
                Some(dmn)
            } else if place < engine {
                Some(engine)
            } else {
                None
            };
            let (piece, piece_valid) = match limit {
                Some(l) if place.checked_mul(extent)? > l => {
                    if !l.is_multiple_of(place) || !extent.is_multiple_of(l / place) {
                        return None;
                    }
                    let low = l / place;
                    (low, valid.min(low))
                }
                _ => (extent, valid),
            };
            let digit = valid_digit(f.axis.clone(), coef, piece_valid);
            match limit {
                Some(l) if l == dmn => in_dmn.extend(digit),
                Some(_) => dmns.extend(digit),
                None => {
                    if f.axis.is_some() {
                        engines = engines.checked_mul(piece_valid.max(1))?;
                    }
                }
            }
            place = place.checked_mul(piece)?;
            coef = coef.checked_mul(piece)?;
            valid = valid.div_ceil(piece);
            extent /= piece;
        }
    }
    in_dmn.reverse();
    dmns.reverse();
    Some((in_dmn, dmns, engines))
}

/// Where a DM digit sits in the HBM side's Element: the index of the HBM digit of the same axis
/// whose coefficients cover it, and its own coefficient (outer digits first).
fn order_key(order: &Layout, d: &Dim) -> Option<(usize, std::cmp::Reverse<u64>)> {
    let Dim::Factor(f) = d else { return None };
    let a = f.axis.as_ref()?;
    order.dims.iter().enumerate().find_map(|(i, g)| match g {
        Dim::Factor(g)
            if g.axis.as_ref().is_some_and(|b| b.name == a.name)
                && g.coef <= f.coef
                && f.coef < g.coef.saturating_mul(g.extent) =>
        {
            Some((i, std::cmp::Reverse(f.coef)))
        }
        _ => None,
    })
}

/// The DM Element's digits in the order of the HBM side's Element (`order`), the HBM order the
/// manual's streams follow (Example 2: In `m![B, A, C]`, Out element `m![A % 4, B, C]`, time
/// `m![B, A % 4, ..]`, L2640-L2645). Padding digits keep their place after the digit before
/// them. The DM order when a digit is not found in `order`.
fn in_order(dims: Vec<Dim>, order: Option<&Layout>) -> Vec<Dim> {
    let Some(order) = order else { return dims };
    let mut keys = Vec::with_capacity(dims.len());
    let mut last = (0, std::cmp::Reverse(u64::MAX));
    for d in &dims {
        let k = match d {
            Dim::Factor(f) if f.axis.is_none() => last,
            _ => match order_key(order, d) {
                Some(k) => k,
                None => return dims,
            },
        };
        last = k;
        keys.push(k);
    }
    let mut keyed: Vec<_> = keys.into_iter().zip(dims).collect();
    keyed.sort_by_key(|(k, _)| *k);
    keyed.into_iter().map(|(_, d)| d).collect()
}

/// Positions of a spatial mapping that hold data (1 when absent).
fn used_positions(t: &TensorTy, s: Slot) -> u64 {
    lay(t, s)
        .as_ref()
        .and_then(super::transpose::used)
        .map_or(1, |n| n.max(1))
}

/// Positions of a run of digits.
fn extent(dims: &[Dim]) -> u64 {
    dims.iter().fold(1u64, |a, d| a.saturating_mul(d.extent()))
}

/// How many of the innermost `digits` (outermost first) lie in one contiguous run in both
/// buffers, at least one when there is a digit: the bytes both sequencers access
/// consecutively, which the packet divides (L2448, L2593). Padded digits end a run where the
/// other side does not hold the padding.
fn shared_run(digits: &[Dim], src: &Layout, dst: &Layout) -> usize {
    let whole = |buf: &Layout, tail: &[Dim]| {
        configure(buf, &[], tail, Direction::Read, usize::MAX).is_ok_and(|cfg| {
            cfg.entries.last().is_some_and(|e| e.stride == 1)
                && cfg.entries.iter().all(|e| e.stride > 0)
                && contiguous_elements(&cfg.entries) == extent(tail)
        })
    };
    let mut k = usize::from(!digits.is_empty());
    while k < digits.len() {
        let tail = &digits[digits.len() - k - 1..];
        if !(whole(src, tail) && whole(dst, tail)) {
            break;
        }
        k += 1;
    }
    k
}

/// The stream the compiler infers (the manual's Examples 2-6, L2640-L2790):
///
/// - the DM tensor's Chip, Cluster and the Slice digits above one DMN pair select the DMA
///   Engine (one command each, their positions are base offsets);
/// - the DM Element's digits come first, in the HBM side's order (the destination's for DM to
///   DM); the innermost of them that are one contiguous run in both layouts are the packet
///   ([`shared_run`]: `m![M, C]` moves like `m![Y]`, Y = M * C);
/// - then the Slice digits inside one DMN (`slice_stride`), then the DMN digits (`DMN_stride`)
///   innermost, so consecutive requests alternate the DMNs (L2652); those packets are 256-byte
///   requests (`C % 256` of Example 4, L2694), the rest of the run an outer time digit;
/// - HBM to HBM: the destination's Element, the last digit the packet.
///
/// Slice digits of a DM destination that the source does not hold are a broadcast: the stream
/// iterates them (the read side with stride 0), so each slice's copy is read and written. A DM
/// source's Slice digits that an HBM destination does not hold are copies: one is read.
fn infer_stream(
    src_ty: &TensorTy,
    dst_ty: &TensorTy,
    src: &Layout,
    dst: &Layout,
    bits: u32,
    t: &Target,
) -> Option<Stream> {
    let (dm_ty, other, hbm) = match (media(src_ty)?, media(dst_ty)?) {
        (_, Media::Dm) => (
            Some(dst_ty),
            src,
            (media(src_ty)? == Media::Hbm)
                .then(|| lay(src_ty, Slot::Element))
                .flatten(),
        ),
        (Media::Dm, Media::Hbm) => (Some(src_ty), dst, lay(dst_ty, Slot::Element)),
        (Media::Hbm, Media::Hbm) => (None, src, None),
    };
    let Some(dm_ty) = dm_ty else {
        let mut dims = lay(dst_ty, Slot::Element)?.dims;
        let last = dims.pop()?;
        return Some(Stream {
            time: dims,
            packet: vec![last],
            engines: 1,
            chips: 1,
        });
    };
    let (in_dmn, dmns, engine_share) = match lay(dm_ty, Slot::Slice) {
        Some(s) => split_slice(&s, t)?,
        None => (Vec::new(), Vec::new(), 1),
    };
    let chips = used_positions(dm_ty, Slot::Chip);
    let engines = chips
        .saturating_mul(used_positions(dm_ty, Slot::Cluster))
        .saturating_mul(engine_share);
    // Into DM every slice gets its data: a Slice digit the source does not hold is a
    // broadcast, read again for each slice with stride 0 (L1534, L1557) and written to each
    // (a write sequencer has no stride 0, L7775). Out of DM, only one copy is read.
    let into_dm = media(dst_ty)? == Media::Dm;
    let spread: Vec<Dim> = in_dmn
        .into_iter()
        .chain(dmns)
        .filter(|d| into_dm || holds(other, d))
        .collect();
    let mut time = in_order(lay(dm_ty, Slot::Element)?.dims, hbm.as_ref());
    // The packet is the innermost run of the Element's digits that is contiguous in both
    // layouts (L2593): `m![M, C]` is one run like `m![Y]`, Y = M * C, when the source holds
    // M and C adjacent too. An Element of one position (`m![1]`): one element per slice.
    let k = shared_run(&time, src, dst);
    let mut packet: Vec<Dim> = time.split_off(time.len() - k);
    if !spread.is_empty() {
        // One 256-byte request per packet, so that each request goes to the next slice.
        let per_request = t
            .dma_request_bytes
            .saturating_mul(8)
            .checked_div(u64::from(bits))
            .unwrap_or(0);
        // Whole digits whose inner digits already fill a request go back to the time.
        while packet.len() > 1 && per_request > 0 && extent(&packet[1..]) >= per_request {
            time.push(packet.remove(0));
        }
        // The outermost digit is split where the packet reaches a request (`C % 256`, L2694).
        let inner = extent(packet.get(1..).unwrap_or_default()).max(1);
        let r = per_request / inner;
        if let Some(Dim::Factor(f)) = packet.first()
            && r > 0
            && per_request.is_multiple_of(inner)
            && f.valid == f.extent
            && f.extent > r
            && f.extent.is_multiple_of(r)
        {
            let f = f.clone();
            time.push(Dim::Factor(Factor {
                extent: f.extent / r,
                valid: f.extent / r,
                axis: f.axis.clone(),
                coef: f.coef.saturating_mul(r),
                pad: PadKind::Top,
            }));
            packet[0] = Dim::Factor(Factor {
                extent: r,
                valid: r,
                pad: PadKind::Top,
                ..f
            });
        }
        time.extend(spread);
    }
    Some(Stream {
        time,
        packet,
        engines: engines.max(1),
        chips,
    })
}

/// One digit of an axis in a DM tensor's Slice and Element: its coefficient and extent, and
/// whether it selects the DMA Engine (a Slice digit at or above one engine's share).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct AxisDigit {
    pub coef: u64,
    pub extent: u64,
    pub engine: bool,
}

/// The digits of every axis of a DM tensor (`None` for irregular layouts), the Slice digits at or
/// above `share` slices marked as engine digits (a digit spanning `share` is split there).
pub fn axis_digits(
    slice: &Layout,
    element: &Layout,
    share: u64,
) -> Option<Vec<(Axis, Vec<AxisDigit>)>> {
    let mut out: Vec<(Axis, Vec<AxisDigit>)> = Vec::new();
    let mut push = |axis: &Axis, d: AxisDigit| {
        if let Some(v) = out.iter_mut().find(|(a, _)| a.name == axis.name) {
            v.1.push(d);
        } else {
            out.push((axis.clone(), vec![d]));
        }
    };
    let mut stride: u64 = 1;
    for dim in slice.dims.iter().rev() {
        let Dim::Factor(f) = dim else { return None };
        let end = stride.checked_mul(f.extent)?;
        if let Some(a) = &f.axis {
            if stride >= share {
                push(
                    a,
                    AxisDigit {
                        coef: f.coef,
                        extent: f.extent,
                        engine: true,
                    },
                );
            } else if end > share {
                let low = share / stride;
                if !share.is_multiple_of(stride) || !f.extent.is_multiple_of(low) {
                    return None;
                }
                push(
                    a,
                    AxisDigit {
                        coef: f.coef,
                        extent: low,
                        engine: false,
                    },
                );
                let coef = f.coef.checked_mul(low)?;
                push(
                    a,
                    AxisDigit {
                        coef,
                        extent: f.extent / low,
                        engine: true,
                    },
                );
            } else {
                push(
                    a,
                    AxisDigit {
                        coef: f.coef,
                        extent: f.extent,
                        engine: false,
                    },
                );
            }
        }
        stride = end;
    }
    for dim in &element.dims {
        let Dim::Factor(f) = dim else { return None };
        if let Some(a) = &f.axis {
            push(
                a,
                AxisDigit {
                    coef: f.coef,
                    extent: f.extent,
                    engine: false,
                },
            );
        }
    }
    Some(out)
}

/// The DMA commands the engine holding the last real positions of an axis of `size` needs, with
/// `c` (positions per engine share) and `r` (real positions in the partial share), when above 1.
pub fn segments(size: u64, digits: &[AxisDigit]) -> Option<(u64, u64, u64)> {
    let mut ds = digits.to_vec();
    ds.sort_by_key(|d| d.coef);
    // A mixed radix covering the axis from 0: coef_0 = 1, coef_{k+1} = coef_k * extent_k.
    let mut next: u64 = 1;
    for d in &ds {
        if d.coef != next || d.extent == 0 {
            return None;
        }
        next = d.coef.checked_mul(d.extent)?;
    }
    if next <= size {
        return None;
    }
    let first = ds.iter().position(|d| d.engine)?;
    if ds[first..].iter().any(|d| !d.engine) || first == 0 {
        return None;
    }
    let c = ds[first].coef;
    let r = size % c;
    if r == 0 {
        return None;
    }
    let commands = ds[..first]
        .iter()
        .filter(|d| !(r / d.coef).is_multiple_of(d.extent.max(1)))
        .count() as u64;
    (commands >= 2).then_some((c, r, commands))
}

/// The partial share of one DMA Engine (the manual's heterogeneous DMN #3, L2755-L2808): an
/// axis padded in the DM tensor and split between the Slice digits that select the engine and
/// digits below them leaves the engine holding its last real positions `real` of `share`, no
/// single loop nest; the compiler runs that engine's part as several commands, one after the
/// other, each a regular part of the stream (L2772-L2790).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Segmented {
    pub axis: Axis,
    /// The axis' digits in the DM tensor, innermost first.
    pub digits: Vec<AxisDigit>,
    /// Positions of the axis per engine share, and the real ones in the partial share.
    pub share: u64,
    pub real: u64,
    /// How many commands the partial engine runs.
    pub count: u64,
    /// The partial engine's commands (each its stream's pair), in the order they run; empty
    /// when visa-lint cannot write their streams.
    pub commands: Vec<Result<DmaPair, DeriveError>>,
}

/// The streams of the partial engine's commands: the real positions `0..real` of the share in
/// mixed radix over the axis' digits below the engine, one command per non-zero digit (outermost
/// first): that digit iterates its count, the digits outside it are fixed (one step, the
/// offset being a base address), the digits inside it run whole (L2772-L2790: execution #0
/// `A' / 2 = 1` with `A' % 2 = 2`, execution #1 `A' / 2 % 2 @ 1` with `A' % 2 = 1`). `None` when
/// a stream digit of the axis is not one of the layout's digits.
fn segment_streams(
    time: &[Dim],
    packet: &[Dim],
    axis: &Axis,
    digits: &[AxisDigit],
    real: u64,
) -> Option<Vec<(Vec<Dim>, Vec<Dim>)>> {
    let mut below: Vec<AxisDigit> = digits.iter().copied().filter(|d| !d.engine).collect();
    below.sort_by_key(|d| std::cmp::Reverse(d.coef));
    let which = |f: &Factor| {
        below
            .iter()
            .position(|d| d.coef <= f.coef && f.coef < d.coef.saturating_mul(d.extent))
    };
    let mut out = Vec::new();
    let mut rem = real;
    for (k, d) in below.iter().enumerate() {
        let q = rem / d.coef.max(1);
        rem %= d.coef.max(1);
        if q == 0 {
            continue;
        }
        let map = |dims: &[Dim]| -> Option<Vec<Dim>> {
            dims.iter()
                .map(|dim| match dim {
                    Dim::Factor(f) if f.axis.as_ref().is_some_and(|a| a.name == axis.name) => {
                        let j = which(f)?;
                        let n = match j.cmp(&k) {
                            std::cmp::Ordering::Less => 1,
                            std::cmp::Ordering::Equal
                                if f.coef == d.coef && f.extent == d.extent =>
                            {
                                q
                            }
                            std::cmp::Ordering::Equal => return None,
                            std::cmp::Ordering::Greater => return Some(dim.clone()),
                        };
                        Some(Dim::Factor(Factor {
                            extent: n,
                            valid: n,
                            pad: PadKind::Top,
                            ..f.clone()
                        }))
                    }
                    _ => Some(dim.clone()),
                })
                .collect()
        };
        out.push((map(time)?, map(packet)?));
    }
    Some(out)
}

/// The partial engine of a transfer of the DM tensor `dm`, if one has a share needing more than
/// one command, without its commands (the layout alone decides it; [`DmaOp::segmented`] adds the
/// commands when the transfer's stream is derived). DMA-008 reads this for a step whose other
/// side is not known.
pub fn partial_share(dm: &TensorTy, t: &Target) -> Option<Segmented> {
    let (slice, element) = (lay(dm, Slot::Slice)?, lay(dm, Slot::Element)?);
    let share = t.slices_per_dmn.saturating_mul(t.dmns_per_dma_engine);
    if share == 0 || slice.size <= share {
        return None;
    }
    axis_digits(&slice, &element, share)?
        .into_iter()
        .find_map(|(axis, digits)| {
            let (c, r, count) = segments(axis.size, &digits)?;
            Some(Segmented {
                axis,
                digits,
                share: c,
                real: r,
                count,
                commands: Vec::new(),
            })
        })
}

/// [`partial_share`] with the partial engine's commands through `time` / `packet`.
fn segmented(
    dm: &TensorTy,
    time: &[Dim],
    packet: &[Dim],
    pair: impl Fn(&[Dim], &[Dim]) -> Result<DmaPair, DeriveError>,
    t: &Target,
) -> Option<Segmented> {
    let mut seg = partial_share(dm, t)?;
    if let Some(v) = segment_streams(time, packet, &seg.axis, &seg.digits, seg.real) {
        seg.commands = v.iter().map(|(ti, pa)| pair(ti, pa)).collect();
    }
    Some(seg)
}

/// Every DMA step (`to_dm`, and `to_hbm` from a DM tensor) whose mappings are known.
pub fn ops<'a>(model: &'a FnModel, target: &Target) -> Vec<DmaOp<'a>> {
    let mut out = Vec::new();
    for chain in &model.chains {
        for step in &chain.steps {
            if !step.method.is_dm_hbm_dma() {
                continue;
            }
            let (Some(i), Some(o)) = (step.input.as_ref(), step.output.as_ref()) else {
                continue;
            };
            let (Some(src_media), Some(dst_media)) = (media(i), media(o)) else {
                continue;
            };
            let Some(bits) = i.dtype.or(o.dtype).map(|d| d.canonical().bits()) else {
                continue;
            };
            let (Some(src), Some(dst)) = (buffer(i, bits, target), buffer(o, bits, target)) else {
                continue;
            };
            let Some(stream) = infer_stream(i, o, &src, &dst, bits, target) else {
                continue;
            };
            let align = if dst_media == Media::Dm {
                target.dma_dm_align_bytes
            } else {
                1
            };
            let pair_of = |ti: &[Dim], pa: &[Dim]| derive(&src, &dst, ti, pa, bits, align, target);
            let pair = pair_of(&stream.time, &stream.packet);
            let dm = if dst_media == Media::Dm { o } else { i };
            let segmented = (media(dm) == Some(Media::Dm))
                .then(|| segmented(dm, &stream.time, &stream.packet, pair_of, target))
                .flatten();
            out.push(DmaOp {
                step,
                span: step.span,
                src_media,
                dst_media,
                src,
                dst,
                time: stream.time,
                packet: stream.packet,
                engines: stream.engines,
                chips: stream.chips,
                bits,
                align,
                pair,
                segmented,
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::testing::{lay, terms};
    use crate::target::RNGD;

    /// A DM buffer `m![Slice, Element]` as [`buffer`] builds it (i8).
    fn dm(axes: &str, slice: &str, element: &str) -> Layout {
        let space = RNGD.dma_slice_space_bytes;
        lay(axes, slice)
            .pair(&lay(axes, element).window(space))
            .expect("pair")
    }

    fn dma(axes: &str, src: &str, dst: &str, time: &str, packet: &str, align: u64) -> DmaPair {
        pair(axes, lay(axes, src), lay(axes, dst), time, packet, align)
    }

    fn pair(axes: &str, src: Layout, dst: Layout, time: &str, packet: &str, align: u64) -> DmaPair {
        derive(
            &src,
            &dst,
            &terms(axes, time),
            &terms(axes, packet),
            8,
            align,
            &RNGD,
        )
        .expect("derives")
    }

    #[test]
    fn l2442_hbm_to_hbm_layout_transformation() {
        // L2434-L2456: In m![N, C, H, W], Out m![H, C, N, W], Stream time m![H, C, N], packet
        // m![W]. The manual prints read [H=8:8, C=3:64, N=3:192, W=8:1]:8 and write
        // [H=8:192, C=8:32, N=3:8, W=8:1]:8; N has 4 iterations (axes! N = 4) and the
        // pseudocode's write index `h * 96 + c * 32 + n * 8` (L2456) gives H's write stride 96:
        // the printed `N=3`, `C=8` and `192` are typos (see the report, not in §22).
        let ax = "N = 4, C = 3, H = 8, W = 8";
        let p = dma(ax, "N, C, H, W", "H, C, N, W", "H, C, N", "W", 1);
        assert_eq!(p.read.to_string(), "[8 : 8, 3 : 64, 4 : 192, 8 : 1] : 8");
        assert_eq!(p.write.to_string(), "[8 : 96, 3 : 32, 4 : 8, 8 : 1] : 8");
        // L2448: "let packet_size = 8".
        assert_eq!((p.run_bytes, p.stride0), (8, Some(8)));
        assert_eq!(p.packets, Some(96));
    }

    #[test]
    fn l2620_example1_hbm_to_hbm() {
        // L2610-L2620: read [A=8:2048, B=8:256, C=256:1]:256, write [A=8:256, B=8:2048,
        // C=256:1]:256; L2623 "64 read requests + 64 write requests".
        let ax = "A = 8, B = 8, C = 256";
        let p = dma(ax, "A, B, C", "B, A, C", "A, B", "C", 1);
        assert_eq!(p.read.to_string(), "[8 : 2048, 8 : 256, 256 : 1] : 256");
        assert_eq!(p.write.to_string(), "[8 : 256, 8 : 2048, 256 : 1] : 256");
        assert_eq!((p.stride0, p.requests), (Some(256), Some(64)));
    }

    #[test]
    fn l2651_example2_hbm_to_dm() {
        // L2640-L2656: In m![B, A, C]; Out slice m![A / 4], element m![A % 4, B, C]; Stream
        // time m![B, A % 4, A / 4 % 32, A / 128], packet m![C]. Read [B=256:65536, A%4=4:256,
        // A/4%32=32:1024, A/128=2:32768, C=256:1]:256; write [B=256:256, A%4=4:65536,
        // A/4%32=32:slice_stride, A/128=2:DMN_stride, C=256:1]:256. The DM buffer's slice
        // stride is the 4 MB slice address space (L2541) and the DMN stride 32 slices. L2656: 65536 requests.
        let ax = "A = 256, B = 256, C = 256";
        let t = "B, A % 4, A / 4 % 32, A / 128";
        let p = pair(
            ax,
            lay(ax, "B, A, C"),
            dm(ax, "A / 4", "A % 4, B, C"),
            t,
            "C",
            8,
        );
        assert_eq!(
            p.read.to_string(),
            "[256 : 65536, 4 : 256, 32 : 1024, 2 : 32768, 256 : 1] : 256"
        );
        let slice = RNGD.dma_slice_space_bytes;
        assert_eq!(
            p.write.to_string(),
            format!(
                "[256 : 256, 4 : 65536, 32 : {slice}, 2 : {}, 256 : 1] : 256",
                32 * slice
            )
        );
        assert_eq!((p.stride0, p.requests), (Some(256), Some(65536)));
    }

    #[test]
    fn l2673_example3_dm_to_dm() {
        // L2663-L2677: In slice m![A / 4] element m![A % 4, B, C]; Out slice m![A / 4] element
        // m![B, A % 4, C]. Read (L2673) [B=256:1, ...] prints B's stride as 1 where the In layout gives
        // 256 (typo); write (L2674) [B=256:1024, A%4=4:256, ...]. L2677: 65536 read requests.
        let ax = "A = 256, B = 256, C = 256";
        let t = "B, A % 4, A / 4 % 32, A / 128";
        let src = dm(ax, "A / 4", "A % 4, B, C");
        let p = pair(ax, src, dm(ax, "A / 4", "B, A % 4, C"), t, "C", 8);
        let slice = RNGD.dma_slice_space_bytes;
        let dmn = 32 * slice;
        assert_eq!(
            p.read.to_string(),
            format!("[256 : 256, 4 : 65536, 32 : {slice}, 2 : {dmn}, 256 : 1] : 256")
        );
        assert_eq!(
            p.write.to_string(),
            format!("[256 : 1024, 4 : 256, 32 : {slice}, 2 : {dmn}, 256 : 1] : 256")
        );
        assert_eq!(p.requests, Some(65536));
    }

    #[test]
    fn l2698_example4_hbm_to_dm_row_conflicts() {
        // L2686-L2715 (Example 4), per (cluster_i, dmn_j): read (L2698) [B%256=256:1024,
        // C/256=4:256, A%32=32:2^21, A/32=2:2^26, C%256=256:1]:256 and write (L2702)
        // [B%256=256:1024, C/256=4:256, A%32=32:slice_stride, A/32=2:DMN_stride,
        // C%256=256:1]:256; L2707/L2714: 65536 requests per DMN (256 * 4 * 32 * 2).
        // The strides are those of HBM `m![A, B, C]` (B / 1024 and B / 256 % 4 are the base
        // offsets i * 2^20 + j * 2^18) and of a DM Out with slice `m![A]` and element
        // `m![B % 256, C]`; the printed `Out = { slice: m![A / 4], element: m![B, A % 4, C] }`
        // (L2691, copied from Example 2) gives neither (reported as a manual slip).
        let ax = "A = 64, B = 2048, C = 1024";
        let t = "B % 256, C / 256, A % 32, A / 32";
        let p = pair(
            ax,
            lay(ax, "A, B, C"),
            dm(ax, "A", "B % 256, C"),
            t,
            "C % 256",
            8,
        );
        assert_eq!(
            p.read.to_string(),
            format!(
                "[256 : 1024, 4 : 256, 32 : {}, 2 : {}, 256 : 1] : 256",
                1u64 << 21,
                1u64 << 26
            )
        );
        let slice = RNGD.dma_slice_space_bytes;
        assert_eq!(
            p.write.to_string(),
            format!(
                "[256 : 1024, 4 : 256, 32 : {slice}, 2 : {}, 256 : 1] : 256",
                32 * slice
            )
        );
        assert_eq!(
            (p.stride0, p.packets, p.requests),
            (Some(256), Some(65536), Some(65536))
        );
        // L2708: 8 DMNs make 524288 requests.
        assert_eq!(p.requests.map(|r| r * 8), Some(524_288));
    }

    #[test]
    fn l2777_example6_heterogeneous_segmentation() {
        // L2755-L2807 (Example 6), DM -> HBM, A' = A # 16 (A = 15), per (chip, cluster, dmn k):
        // In slice m![A' / 4, A' / 2 % 2, B], element m![A' % 2, C]; Out element
        // m![D % 2, B, A, C]. k = 0..2 (L2777, L2785): read [A'%2=2:256, B=32:slice_stride,
        // A'/2%2=2:DMN_stride, C=256:1]:256, write [A'%2=2:256, B=32:15*256, A'/2%2=2:512,
        // C=256:1]:256; L2799: 2 * 32 * 2 = 128 packets of 256 B.
        let ax = "A = 15, B = 32, C = 256, D = 8";
        let src = || dm(ax, "A # 16 / 4, A # 16 / 2 % 2, B", "A # 16 % 2, C");
        let dst = || lay(ax, "D % 2, B, A, C");
        let slice = RNGD.dma_slice_space_bytes;
        let p = pair(ax, src(), dst(), "A # 16 % 2, B, A # 16 / 2 % 2", "C", 1);
        assert_eq!(
            p.read.to_string(),
            format!("[2 : 256, 32 : {slice}, 2 : {}, 256 : 1] : 256", 32 * slice)
        );
        assert_eq!(
            p.write.to_string(),
            format!("[2 : 256, 32 : {}, 2 : 512, 256 : 1] : 256", 15 * 256)
        );
        assert_eq!(
            (p.stride0, p.packets, p.requests),
            (Some(256), Some(128), Some(128))
        );
        // DMN #3, execution #0 (L2779, L2787: A'/2 = 1): 64 packets (L2803).
        let p = pair(ax, src(), dst(), "A # 16 % 2, B", "C", 1);
        assert_eq!(
            p.write.to_string(),
            format!("[2 : 256, 32 : {}, 256 : 1] : 256", 15 * 256)
        );
        assert_eq!(p.packets, Some(64));
        // Execution #1 (L2788: A'%2 = 1, offset 512): 32 packets (L2805). The read printed
        // for it at L2780 keeps `A'%2=2`, against its stream `m![A' = 1, ...]` (manual slip).
        let p = pair(ax, src(), dst(), "B", "C", 1);
        assert_eq!(
            p.write.to_string(),
            format!("[32 : {}, 256 : 1] : 256", 15 * 256)
        );
        assert_eq!(p.packets, Some(32));
    }

    #[test]
    fn l2732_example5_hbm_to_dm() {
        // L2720-L2741: In m![A, B, C, D], Stream time m![C, B % 32, B / 32] packet m![D % 256]
        // (A in cluster/slice, base offsets): read [C=8:512, B%32=32:4096, B/32=2:131072,
        // D%256=256:1]:256; write [C=8:256, B%32=32:slice_stride, B/32=2:DMN_stride,
        // D%256=256:1]:256 with Out element m![C, D % 256] (L2736); L2741: 512 requests per DMN.
        let ax = "A = 8, B = 64, C = 8, D = 512";
        let t = "C, B % 32, B / 32";
        let p = pair(
            ax,
            lay(ax, "A, B, C, D"),
            dm(ax, "B", "C, D % 256"),
            t,
            "D % 256",
            8,
        );
        assert_eq!(
            p.read.to_string(),
            "[8 : 512, 32 : 4096, 2 : 131072, 256 : 1] : 256"
        );
        let slice = RNGD.dma_slice_space_bytes;
        assert_eq!(
            p.write.to_string(),
            format!("[8 : 256, 32 : {slice}, 2 : {}, 256 : 1] : 256", 32 * slice)
        );
        assert_eq!(p.requests, Some(512));
    }

    #[test]
    fn l2581_sequencer_internals() {
        // L2568-L2585: [A=256:(65536, 256), B=256:(256, 65536), C=256:(1, 1)], stride0 = 256:
        // "500 cycles + 256 × 256 cycles".
        let ax = "A = 256, B = 256, C = 256";
        let p = dma(ax, "A, B, C", "B, A, C", "A, B", "C", 1);
        assert_eq!(
            p.read.to_string(),
            "[256 : 65536, 256 : 256, 256 : 1] : 256"
        );
        assert_eq!(
            p.write.to_string(),
            "[256 : 256, 256 : 65536, 256 : 1] : 256"
        );
        assert_eq!((p.stride0, p.requests), (Some(256), Some(256 * 256)));
        assert_eq!(RNGD.dma_startup_cycles, 500);
    }

    #[test]
    fn l2469_request_split() {
        // L2469-L2472: an n-byte packet is ceil(n / 256) requests; x=4095:1 → 16 requests;
        // x=4099:1 (prime) → 1-byte packets.
        assert_eq!(stride0(4095, 4096, 1), Some(4095));
        assert_eq!(4095u64.div_ceil(RNGD.dma_request_bytes), 16);
        assert_eq!(stride0(4099, 4096, 1), Some(1));
        assert_eq!(stride0(8192, 4096, 8), Some(4096));
        assert_eq!(stride0(13, 4096, 8), None);
        assert_eq!(stride0(0, 4096, 1), None);
        assert!(stride0(u64::MAX, 4096, 1).is_some_and(|d| d <= 4096));
        let ax = "X = 4099";
        let p = dma(ax, "X", "X", "1", "X", 1);
        assert_eq!((p.stride0, p.requests), (Some(1), Some(4099)));
    }

    /// The DMA ops of the one function of a kernel file.
    fn kernel_pairs(text: &str) -> Vec<(Vec<Dim>, Vec<Dim>, DmaPair)> {
        let a = crate::db::analyse_text(text);
        let (_, f) = a.fns.first().expect("one function");
        ops(&f.model, &RNGD)
            .into_iter()
            .map(|op| (op.time, op.packet, op.pair.expect("derives")))
            .collect()
    }

    #[test]
    fn packet_is_the_run_contiguous_in_both_layouts() {
        // L2593: stride0 follows "the consecutive read/write volume". `m![M, C]` over an HBM
        // `m![S, M, C]` is one 24-byte run on both sides, exactly as `m![Y]` (Y = 24) is: the
        // slice digits go outside it, not between M and C.
        let kernel = |axes: &str, hbm: &str, el: &str| {
            format!(
                "use furiosa_visa_std::prelude::*;\naxes![{axes}];\n#[device(chip = 1)]\n\
                 fn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![1], m![{hbm}]>) {{\n\
                 let dm = hbm.to_dm::<m![1 # 2], m![S], m![{el}]>(&mut ctx.tdma, 0);\n}}\n"
            )
        };
        let two = kernel_pairs(&kernel("S = 256, M = 4, C = 6", "S, M, C", "M, C"));
        let one = kernel_pairs(&kernel("S = 256, Y = 24", "S, Y", "Y"));
        let [(time, packet, p)] = &two[..] else {
            panic!("one DMA: {two:?}")
        };
        let [(_, _, q)] = &one[..] else {
            panic!("one DMA: {one:?}")
        };
        assert_eq!(packet.len(), 2, "packet m![M, C]");
        assert_eq!(
            time.len(),
            2,
            "the slice digits inside one DMN and the DMN digit"
        );
        assert_eq!((p.run_bytes, p.stride0), (24, Some(24)));
        assert_eq!(
            (p.run_bytes, p.stride0, p.packets, p.requests),
            (q.run_bytes, q.stride0, q.packets, q.requests)
        );
        // Permuted in DM, M and C are contiguous only in HBM: C alone is the run (6 bytes).
        let perm = kernel_pairs(&kernel("S = 256, M = 4, C = 6", "S, C, M", "M, C"));
        let [(_, packet, p)] = &perm[..] else {
            panic!("one DMA: {perm:?}")
        };
        assert_eq!(packet.len(), 1);
        assert_eq!((p.run_bytes, p.stride0), (1, None));
        // Padding in DM only ends the run at the padded axis (`C # 8`: 8-byte packets).
        let pad = kernel_pairs(&kernel("S = 256, M = 4, C = 6", "S, M, C", "M, C # 8"));
        let [(_, packet, p)] = &pad[..] else {
            panic!("one DMA: {pad:?}")
        };
        assert_eq!(packet.len(), 1);
        assert_eq!(p.stride0, Some(8));
        // A run longer than a request is cut at 256 bytes when slices interleave (L2694):
        // `m![M, C]` with C = 128 moves 256-byte packets `[M % 2, C]`, M / 2 a time digit.
        let long = kernel_pairs(&kernel("S = 256, M = 4, C = 128", "S, M, C", "M, C"));
        let [(time, packet, p)] = &long[..] else {
            panic!("one DMA: {long:?}")
        };
        assert_eq!(packet.iter().map(Dim::extent).collect::<Vec<_>>(), [2, 128]);
        assert_eq!(time.first().map(Dim::extent), Some(2));
        assert_eq!((p.stride0, p.requests), (Some(256), Some(2 * 32 * 2)));
    }

    #[test]
    fn segments_handles_extremes() {
        let d = |coef, extent, engine| AxisDigit {
            coef,
            extent,
            engine,
        };
        assert_eq!(segments(0, &[d(1, 2, false), d(2, 4, true)]), None);
        assert_eq!(segments(5, &[d(1, 0, false), d(0, 4, true)]), None);
        assert_eq!(
            segments(u64::MAX, &[d(1, u64::MAX, false), d(u64::MAX, 2, true)]),
            None
        );
        assert_eq!(
            segments(6, &[d(1, 2, false), d(2, 2, false), d(4, 2, true)]),
            None
        );
        assert_eq!(
            segments(15, &[d(1, 2, false), d(2, 2, false), d(4, 4, true)]),
            Some((4, 3, 2))
        );
    }
}
