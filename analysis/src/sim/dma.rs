//! The DMA Engine's cost (cost model F24-F27, P3, P5-P9; manual L2355-L2846 and the memory
//! pages L2848-L3003): a command pays its start-up latency, then moves its 256-byte requests at
//! the rate of the slowest side of the path.
//!
//! - Engine side: one request per cycle (256 B/cycle, L2596).
//! - DM side: one DMN serves 128 B/cycle; consecutive requests that alternate the two DMNs of
//!   an engine reach 256 B/cycle (L2652, L2884).
//! - HBM side: the chip's requests spread over its channels; a channel serves a 256-byte request
//!   in 256 / 48 cycles (L2744) or about 40 cycles when each request switches rows (L2710);
//!   a stream that never toggles the stack bit reaches half the channels (L2738).
//! - Reads and writes overlap only from HBM to DM (Examples 2, 4, 5: `max`); every other pair
//!   adds them (Examples 1, 3, 6: `read + write`). Cost model U-B, "ManualFit".

use super::Assumption;
use crate::derive::dma::{DmaOp, DmaPair, Media};
use crate::derive::sequencer::Config;
use crate::target::Target;

/// What the DMA cost model needs to know about one DMA operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaShape {
    pub src: Media,
    pub dst: Media,
    /// DMA Engines the operation spreads over (one per DMN pair its DM side spans).
    pub engines: u64,
    /// Engines sharing one chip's HBM channels (`engines` over the chips).
    pub hbm_engines: u64,
    /// 256-byte requests each engine issues (`ceil(packet / 256)` per packet, L2469).
    pub requests_per_engine: u64,
    /// Bytes each request carries (`min(stride0, 256)`).
    pub request_bytes: u64,
    /// Commands one engine runs one after the other (segmentation, L2808): each pays start-up.
    pub commands_per_engine: u64,
    /// Consecutive DM requests alternate the two DMNs of the engine (L2652).
    pub dm_alternates_dmn: bool,
    /// HBM channels the requests reach (all of them, or half without the stack bit, L2738).
    pub hbm_channels: u64,
    /// Consecutive HBM requests switch rows in their bank (L2709).
    pub hbm_row_miss: bool,
    /// Write requests per engine that only partly cover a 256-byte HBM unit (RMW, L2985).
    pub hbm_partial_writes: u64,
}

/// The cycles of one DMA operation, and what limits it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DmaCost {
    /// Start-up latency: `dma_startup_cycles` per command of the slowest engine.
    pub startup: u64,
    /// Cycles of the read side (engine side or source memory, whichever is slower).
    pub read: u64,
    /// Cycles of the write side.
    pub write: u64,
    /// Reads and writes overlap (`max`) rather than add (`sum`).
    pub overlap: bool,
    /// `max(read, write)` or `read + write`.
    pub data: u64,
    pub total: u64,
    /// The resource that sets `data`: "DMA engine", "DM (one DMN)", "HBM channels", ...
    pub limit: &'static str,
}

pub(crate) fn media_name(m: Media) -> &'static str {
    match m {
        Media::Hbm => "HBM",
        Media::Dm => "DM",
    }
}

/// Cycles one memory side needs for the engine's requests, and its name.
fn side(m: Media, s: &DmaShape, t: &Target, write: bool) -> (u64, &'static str) {
    let req = s.requests_per_engine;
    match m {
        Media::Dm => {
            let bw = if s.dm_alternates_dmn {
                t.dma_dm_bytes_per_cycle
            } else {
                t.dmn_bytes_per_cycle
            };
            let per = s.request_bytes.div_ceil(bw.max(1)).max(1);
            let mut cycles = req.saturating_mul(per);
            if write && !s.request_bytes.is_multiple_of(t.dma_dm_align_bytes.max(1)) {
                cycles = cycles.saturating_mul(t.dm_rmw_factor);
            }
            let name = if s.dm_alternates_dmn {
                "DM (two DMNs)"
            } else {
                "DM (one DMN)"
            };
            (cycles, name)
        }
        Media::Hbm => {
            // Every engine's requests share the chip's channels.
            let total = req.saturating_mul(s.hbm_engines.max(1));
            let mut units = total;
            if write {
                let partial = s.hbm_partial_writes.saturating_mul(s.hbm_engines.max(1));
                units = units.saturating_add(partial.saturating_mul(t.hbm_rmw_factor - 1));
            }
            let per_channel = units.div_ceil(s.hbm_channels.max(1));
            let cycles = if s.hbm_row_miss {
                per_channel.saturating_mul(t.hbm_row_miss_cycles)
            } else {
                // 256 B per request at 48 B/cycle per channel (5.3 cycles, L2744).
                per_channel
                    .saturating_mul(t.dma_request_bytes)
                    .div_ceil(t.hbm_channel_bytes_per_cycle.max(1))
            };
            (cycles, "HBM channels")
        }
    }
}

/// The cost of one DMA operation of the given shape.
pub fn dma_cost(s: &DmaShape, t: &Target) -> DmaCost {
    // One request per cycle: 256 B/cycle (L2596).
    let per_request = s
        .request_bytes
        .div_ceil(t.dma_engine_bytes_per_cycle.max(1))
        .max(1);
    let engine = s.requests_per_engine.saturating_mul(per_request);
    let (r_mem, r_name) = side(s.src, s, t, false);
    let (w_mem, w_name) = side(s.dst, s, t, true);
    let read = engine.max(r_mem);
    let write = engine.max(w_mem);
    let overlap = s.src == Media::Hbm && s.dst == Media::Dm;
    let data = if overlap {
        read.max(write)
    } else {
        read.saturating_add(write)
    };
    let limit = if r_mem.max(w_mem) <= engine {
        "DMA engine"
    } else if r_mem >= w_mem {
        r_name
    } else {
        w_name
    };
    let startup = t
        .dma_startup_cycles
        .saturating_mul(s.commands_per_engine.max(1));
    DmaCost {
        startup,
        read,
        write,
        overlap,
        data,
        total: startup.saturating_add(data),
        limit,
    }
}

/// A host transfer over PCIe (`ctx.pdma`, L36-L47): `bytes` at `pcie_bytes_per_cycle` (30
/// B/cycle, seed 000 L35, L251) after one DMA command's start-up. The manual gives neither a PCIe
/// latency nor a host-side bandwidth (cost model U-E, U14, U31): the start-up is the DMA
/// command's ~500 cycles and the link is the inter-chip one; the HBM side (1,536 B/cycle) never
/// limits it.
pub fn pcie_cost(bytes: u64, t: &Target) -> DmaCost {
    let data = bytes.div_ceil(t.pcie_bytes_per_cycle.max(1));
    DmaCost {
        startup: t.dma_startup_cycles,
        read: data,
        write: data,
        overlap: true,
        data,
        total: t.dma_startup_cycles.saturating_add(data),
        limit: "PCIe",
    }
}

/// The innermost temporal entry of a configuration, if any.
fn innermost_time(cfg: &Config) -> Option<crate::derive::Entry> {
    let n = cfg.entries.len().checked_sub(cfg.packet_entries)?;
    cfg.entries[..n].iter().rev().find(|e| e.size > 1).copied()
}

fn stride_bytes(stride: u64, bits: u32) -> u64 {
    stride.saturating_mul(u64::from(bits)) / 8
}

/// The DMA shape of a derived DMA operation, with the assumptions it needed; `None` when the
/// derivation failed (no packet size).
pub fn shape(op: &DmaOp<'_>, t: &Target) -> Option<(DmaShape, Vec<Assumption>)> {
    shape_of(op, op.pair.as_ref().ok()?, t)
}

/// The cost of the engine whose share is partial (DMA-008, L2801-L2808): its commands run one
/// after the other, each paying its start-up; `None` when the transfer has no such engine or
/// its commands are not derived.
pub fn segmented_cost(op: &DmaOp<'_>, t: &Target) -> Option<(DmaCost, Vec<Assumption>)> {
    let seg = op.segmented.as_ref()?;
    if seg.commands.is_empty() {
        return None;
    }
    let mut sum: Option<DmaCost> = None;
    let mut assumptions: Vec<Assumption> = Vec::new();
    for cmd in &seg.commands {
        let (s, a) = shape_of(op, cmd.as_ref().ok()?, t)?;
        for x in a {
            if !assumptions.contains(&x) {
                assumptions.push(x);
            }
        }
        let c = dma_cost(&s, t);
        sum = Some(match sum {
            None => c,
            Some(a) => DmaCost {
                startup: a.startup.saturating_add(c.startup),
                read: a.read.saturating_add(c.read),
                write: a.write.saturating_add(c.write),
                overlap: a.overlap,
                data: a.data.saturating_add(c.data),
                total: a.total.saturating_add(c.total),
                limit: if c.data > a.data { c.limit } else { a.limit },
            },
        });
    }
    sum.map(|c| (c, assumptions))
}

/// The DMA shape of one command `pair` of a derived DMA operation.
fn shape_of(op: &DmaOp<'_>, pair: &DmaPair, t: &Target) -> Option<(DmaShape, Vec<Assumption>)> {
    let stride0 = pair.stride0?;
    let requests = pair.requests?;
    let packets = pair.packets?;
    let mut assumptions = Vec::new();
    // The derivation spreads the DM side over its engines, one command each (L2707).
    let engines = op.engines.max(1);
    if op.src_media == Media::Hbm && op.dst_media == Media::Hbm {
        assumptions.push(Assumption::new(
            "HBM-to-HBM DMA runs on one DMA Engine (DmnIndex (0, 0, 0), L2587)",
        ));
    }
    let requests_per_engine = requests;
    let packets_per_engine = packets;
    // DMN interleaving: the derived stream puts the DMN digit innermost (L2652) when the DM
    // side spans both DMNs of an engine; otherwise one DMN serves it (128 B/cycle, L2884).
    let dm_cfg = match op.dst_media {
        Media::Dm => Some(&pair.write),
        Media::Hbm => (op.src_media == Media::Dm).then_some(&pair.read),
    };
    let dmn_stride = t.slices_per_dmn.saturating_mul(t.dma_slice_space_bytes);
    let dm_alternates_dmn = dm_cfg
        .and_then(innermost_time)
        .is_some_and(|e| stride_bytes(e.stride, op.bits) == dmn_stride);
    if dm_cfg.is_some() && !dm_alternates_dmn {
        assumptions.push(Assumption::new(
            "consecutive DM requests stay in one DMN: 128 B/cycle (L2884)",
        ));
    }
    // HBM side: the stack bit and row switches, from the HBM sequencer's strides.
    let hbm_cfg = match (op.src_media, op.dst_media) {
        (Media::Hbm, _) => Some(&pair.read),
        (_, Media::Hbm) => Some(&pair.write),
        _ => None,
    };
    let mut hbm_channels = t.hbm_channels;
    let mut hbm_row_miss = false;
    if let Some(cfg) = hbm_cfg {
        let toggles_stack =
            crate::derive::dma::toggles_stack_bit(cfg, op.bits, stride0, t.hbm_stack_bit);
        if !toggles_stack {
            hbm_channels = t.hbm_channels / 2;
        }
        hbm_row_miss = innermost_time(cfg)
            .is_some_and(|e| stride_bytes(e.stride, op.bits) >= 1u64 << t.hbm_row_lsb_bit);
        assumptions.push(Assumption::new(if hbm_row_miss {
            "HBM: every request switches rows (about 40 cycles, L2710)"
        } else {
            "HBM: row hits, requests spread evenly over the channels, each one 256-byte unit (L2744, L2983)"
        }));
    }
    let hbm_partial_writes =
        if op.dst_media == Media::Hbm && !stride0.is_multiple_of(t.hbm_align_bytes.max(1)) {
            packets_per_engine
        } else {
            0
        };
    Some((
        DmaShape {
            src: op.src_media,
            dst: op.dst_media,
            engines,
            hbm_engines: engines.div_ceil(op.chips.max(1)),
            requests_per_engine,
            request_bytes: stride0.min(t.dma_request_bytes),
            commands_per_engine: 1,
            dm_alternates_dmn,
            hbm_channels,
            hbm_row_miss,
            hbm_partial_writes,
        },
        assumptions,
    ))
}

/// "What to change" for a DMA shape: cheaper variants the rules already know, with the cycles
/// each would save.
pub fn hints(s: &DmaShape, cost: &DmaCost, t: &Target) -> Vec<(String, u64)> {
    let mut out = Vec::new();
    let mut try_variant = |v: DmaShape, text: String| {
        let c = dma_cost(&v, t);
        if c.total < cost.total {
            out.push((text, cost.total - c.total));
        }
    };
    if s.hbm_partial_writes > 0 {
        try_variant(
            DmaShape {
                hbm_partial_writes: 0,
                ..s.clone()
            },
            format!(
                "the DMA packet is not a multiple of {} bytes, so each HBM write ends in a \
                 read-modify-write (L2985): pad the innermost axis to a multiple of {} bytes",
                t.hbm_align_bytes, t.hbm_align_bytes
            ),
        );
    }
    if !s.dm_alternates_dmn && (s.src == Media::Dm || s.dst == Media::Dm) {
        try_variant(
            DmaShape {
                dm_alternates_dmn: true,
                ..s.clone()
            },
            "the DM side stays in one DMN (128 B/cycle): spread the tensor over both DMNs of \
             the engine (more than 32 slices) so consecutive requests alternate (L2652, L2884)"
                .to_string(),
        );
    }
    if s.hbm_channels < t.hbm_channels && (s.src == Media::Hbm || s.dst == Media::Hbm) {
        try_variant(
            DmaShape {
                hbm_channels: t.hbm_channels,
                ..s.clone()
            },
            format!(
                "no loop toggles HBM address bit {} (the stack), so only {} of {} channels \
                 serve the transfer (L2738): make a 256-byte step part of the stream",
                t.hbm_stack_bit, s.hbm_channels, t.hbm_channels
            ),
        );
    }
    if s.hbm_row_miss {
        try_variant(
            DmaShape {
                hbm_row_miss: false,
                ..s.clone()
            },
            "the innermost loop steps across HBM rows, so every request closes and opens a row \
             (L2709): order the stream so the innermost loops stay within a row"
                .to_string(),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::RNGD;

    fn shape(src: Media, dst: Media, engines: u64, requests: u64) -> DmaShape {
        DmaShape {
            src,
            dst,
            engines,
            hbm_engines: engines,
            requests_per_engine: requests,
            request_bytes: 256,
            commands_per_engine: 1,
            dm_alternates_dmn: true,
            hbm_channels: 32,
            hbm_row_miss: false,
            hbm_partial_writes: 0,
        }
    }

    #[test]
    fn one_dmn_halves_dm_bandwidth() {
        // P3 (L2884): 128 B/cycle on one DMN, a 256-byte request takes 2 cycles.
        let mut s = shape(Media::Dm, Media::Dm, 1, 100);
        assert_eq!(dma_cost(&s, &RNGD).data, 200);
        s.dm_alternates_dmn = false;
        let c = dma_cost(&s, &RNGD);
        assert_eq!((c.data, c.limit), (400, "DM (one DMN)"));
        let h = hints(&s, &c, &RNGD);
        assert_eq!(h.len(), 1);
        assert_eq!(h[0].1, 200);
    }

    #[test]
    fn partial_hbm_writes_pay_read_modify_write() {
        // P7 (L2985): a partial write costs about 50 requests' worth on its channel.
        let mut s = shape(Media::Dm, Media::Hbm, 8, 64);
        let clean = dma_cost(&s, &RNGD);
        s.hbm_partial_writes = 64;
        let rmw = dma_cost(&s, &RNGD);
        assert!(rmw.write > clean.write * 10, "{rmw:?} vs {clean:?}");
        assert_eq!(rmw.limit, "HBM channels");
        assert!(!hints(&s, &rmw, &RNGD).is_empty());
    }
}
