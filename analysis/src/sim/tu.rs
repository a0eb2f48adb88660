//! Tensor Unit stages (cost model §5.2-5.9, §12.3 table): the work `W` (cycles the stage is
//! busy per slice) and latency `L` (cycles it adds to the pipeline) of each engine of a chain.
//! A chain's stages stream into each other, so the chain takes `max W + Σ L` (L3011, L6750).

use super::{Assumption, OpCost};
use crate::derive::transpose as trn;
use crate::derive::{self, Op, OpKind, collect};
use crate::model::{Engine, Method, Slot, Step, TensorTy, Tu, VeStage};
use crate::target::Target;

fn bits_of(t: Option<&TensorTy>) -> Option<u32> {
    Some(t?.dtype?.bits())
}

fn size(t: Option<&TensorTy>, s: Slot) -> Option<u64> {
    Some(t?.get(s)?.layout.as_deref()?.size)
}

/// Slices that hold data: the used positions of Chip × Cluster × Slice (1 where unknown);
/// padding slices (`m![1 # 256]`) run the same sequencer but move nothing.
pub(crate) fn slices(t: Option<&TensorTy>) -> u64 {
    [Slot::Chip, Slot::Cluster, Slot::Slice]
        .iter()
        .map(|&s| {
            t.and_then(|x| x.get(s)?.layout.as_deref())
                .and_then(trn::used)
                .unwrap_or(1)
                .max(1)
        })
        .fold(1u64, u64::saturating_mul)
}

/// (time steps, packet bytes) of a stream type.
fn stream(t: Option<&TensorTy>) -> Option<(u64, u64)> {
    let bits = bits_of(t)?;
    let time = size(t, Slot::Time)?;
    let packet = size(t, Slot::Packet)?;
    Some((time, derive::bytes(packet, bits)))
}

/// Flits of a stream: `Time × ceil(packet / 32)` (F11).
fn flits(t: Option<&TensorTy>, flit: u64) -> Option<u64> {
    let (time, bytes) = stream(t)?;
    Some(time.saturating_mul(bytes.div_ceil(flit.max(1)).max(1)))
}

fn int_after(text: &str, key: &str) -> Option<u64> {
    let i = text.find(key)?;
    let rest = text[i + key.len()..]
        .trim_start()
        .strip_prefix(':')?
        .trim_start();
    let digits: String = rest
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '_')
        .filter(|c| *c != '_')
        .collect();
    digits.parse().ok()
}

/// A new op for `step`.
fn op(step: &Step, name: &'static str, engine: &'static str) -> OpCost {
    OpCost {
        span: step.span,
        op: name,
        engine,
        context: step.context,
        cycles: 0,
        latency: 0,
        bytes: 0,
        limit: String::new(),
        assumptions: Vec::new(),
        hints: Vec::new(),
    }
}

fn unknown(mut o: OpCost, what: &str) -> OpCost {
    o.assumptions.push(Assumption::new(format!(
        "{what} not known: the {} is not costed",
        o.op
    )));
    o
}

/// Fetch (F5-F7): `Time::SIZE × ceil(packet / fetch_size)` from the derived configuration.
fn fetch(step: &Step, ops: &[Op<'_>], t: &Target) -> OpCost {
    let mut o = op(step, "fetch", "Fetch Engine");
    let Some(d) = ops
        .iter()
        .find(|d| d.kind == OpKind::Fetch && d.span == step.span)
    else {
        return unknown(o, "the fetch's sequencer configuration");
    };
    let (Ok(cfg), Some(bits), Some(s)) = (&d.config, d.bits, d.fetch) else {
        return unknown(o, "the fetch's sequencer configuration");
    };
    let sub = d.context == Some(Tu::Sub);
    let from = step.input.as_ref().and_then(|x| x.dtype);
    let to = step.output.as_ref().and_then(|x| x.dtype);
    let allowed = derive::fetch_size_choices(t, sub, from, to);
    let (Some(cycles), Some(fs)) = (s.cycles, s.fetch_size) else {
        return unknown(o, "a fetch size dividing the packet and the contiguous run");
    };
    let steps = derive::time_steps(cfg);
    o.cycles = cycles;
    o.bytes = steps
        .saturating_mul(s.packet_bytes)
        .saturating_mul(slices(step.output.as_ref()));
    o.limit = format!(
        "fetch_size {fs} B (gcd of the {} B packet and the {} B contiguous run)",
        s.packet_bytes, s.contiguous_bytes
    );
    if from.is_some() && to.is_some() && from != to {
        o.latency = t.fetch_cast_latency_cycles;
    }
    if step.method != Method::Fetch {
        o.assumptions.push(Assumption::new(format!(
            "{}: the table or zero-point lookup adds no cycles (unquantified, L1956)",
            step.method
        )));
    }
    // What to change: a packet that fills a flit and a contiguous run to match (L1813, L7874).
    let best = allowed.iter().copied().max().unwrap_or(fs);
    if fs < best && s.packet_bytes > 0 {
        let padded = s.packet_bytes.div_ceil(best).saturating_mul(best);
        let alt = steps.saturating_mul(padded / best);
        if alt < cycles {
            o.hints.push((
                format!(
                    "fetch_size is {fs} bytes: a packet and contiguous run that are multiples of \
                     {best} bytes (pad the innermost axis, L7874) fetch in {alt} cycles"
                ),
                cycles - alt,
            ));
        }
    }
    // A narrow packet whose next time digit is contiguous can merge into it (L7720).
    let n = cfg.entries.len().saturating_sub(cfg.packet_entries);
    if s.packet_bytes < t.flit_bytes && n > 0 {
        let inner = cfg.entries[n - 1];
        let used = trn::used(&d.packet).unwrap_or(d.packet.size);
        let merged = derive::bytes(used.saturating_mul(inner.size), bits);
        if inner.size > 1 && inner.stride == used && merged <= t.flit_bytes {
            let alt = steps / inner.size;
            if alt < cycles {
                o.hints.push((
                    format!(
                        "the packet uses {} of a {}-byte flit and the next time loop ({} steps) \
                         is contiguous with it: merging them into one packet padded to {} bytes \
                         takes {alt} cycle{} (L7720)",
                        derive::bytes(used, bits),
                        t.flit_bytes,
                        inner.size,
                        t.flit_bytes,
                        if alt == 1 { "" } else { "s" }
                    ),
                    cycles - alt,
                ));
            }
        }
    }
    o
}

/// Switch (F9): `ring_size × input_time × ceil(packet / 32)`.
fn switch(step: &Step, t: &Target) -> OpCost {
    let mut o = op(step, "switch", "Switch Engine");
    let Some((time, bytes)) = stream(step.input.as_ref()) else {
        return unknown(o, "the switch input's Time and Packet");
    };
    let cfg = step
        .args
        .first()
        .map_or_else(String::new, |a| a.value_text().into_owned());
    let ring = int_after(&cfg, "ring_size")
        .or_else(|| Some(int_after(&cfg, "slice1")?.saturating_mul(int_after(&cfg, "slice0")?)));
    let ring = match ring {
        Some(r) => r.max(1),
        None => {
            o.assumptions.push(Assumption::new(
                "the switch topology's ring size is not a literal: ring of 1 (forwarding)",
            ));
            1
        }
    };
    let per_packet = bytes.div_ceil(t.flit_bytes).max(1);
    o.cycles = ring.saturating_mul(time).saturating_mul(per_packet);
    o.bytes = time
        .saturating_mul(bytes)
        .saturating_mul(slices(step.input.as_ref()));
    o.limit = format!("ring of {ring} slices × {time} steps × {per_packet} flits per packet");
    if cfg.contains("Custom") {
        o.latency = t.switch_custom_setup_cycles;
        o.assumptions.push(Assumption::new(format!(
            "custom topology: {} cycles to program the SFR bitmap (unquantified, L3336)",
            t.switch_custom_setup_cycles
        )));
    }
    o
}

/// Collect (F11) and the `to_trf` / `to_vrf` stores: one 32-byte flit per cycle.
fn collect(step: &Step, t: &Target) -> OpCost {
    let name = match step.method {
        Method::ToTrf => "to_trf",
        Method::ToVrf => "to_vrf",
        _ => "collect",
    };
    let mut o = op(step, name, "Collect Engine");
    let i = step.input.as_ref();
    let (Some(bits), Some(time), Some(packet)) = (
        bits_of(i),
        i.and_then(|x| x.get(Slot::Time)?.layout.clone()),
        i.and_then(|x| x.get(Slot::Packet)?.layout.clone()),
    ) else {
        return unknown(o, "the input's Time and Packet");
    };
    let Some(f) = collect::normalize(&time, &packet, bits, t.flit_bytes) else {
        return unknown(o, "a flit normalization");
    };
    o.cycles = time.size.saturating_mul(f.flits);
    o.bytes = o
        .cycles
        .saturating_mul(t.flit_bytes)
        .saturating_mul(slices(i));
    o.limit = format!("1 flit/cycle, {} flits per packet", f.flits);
    if f.pad_bytes > 0 {
        o.limit
            .push_str(&format!(" ({} pad bytes each)", f.pad_bytes));
    }
    o
}

/// Contraction (F13-F17): the Stream Adapter takes one input flit per cycle, the Reducer one
/// OutPacket per Time step (Rows in parallel); latency = tree depth + temporal accumulation.
fn contraction(steps: &[&Step], t: &Target) -> OpCost {
    let first = steps[0];
    let mut o = op(first, "contraction", "Contraction Engine");
    let mut work = 0u64;
    let mut lat = 0u64;
    let mut limit = String::new();
    for s in steps {
        match s.method {
            Method::Align => {
                let input = flits(s.input.as_ref(), t.flit_bytes);
                let out = size(s.output.as_ref(), Slot::Time);
                if let Some(f) = input {
                    work = work.max(f);
                    limit = format!("Stream Adapter, 1 input flit/cycle ({f} flits)");
                }
                if let Some(n) = out
                    && n > work
                {
                    work = n;
                    limit = format!("Reducer, one 64-byte packet per Time step ({n} steps)");
                }
                o.bytes = o.bytes.max(
                    input
                        .unwrap_or(0)
                        .saturating_mul(t.flit_bytes)
                        .saturating_mul(slices(s.input.as_ref())),
                );
            }
            Method::Contract => {
                let d = s.input.as_ref().and_then(|x| x.dtype);
                match d.and_then(|d| t.tree_depth(d)).map(u64::from) {
                    Some(k) => lat = lat.saturating_add(k),
                    None => o.assumptions.push(Assumption::new(
                        "the reducer tree depth of this dtype is not known: 0 cycles",
                    )),
                }
                if let Some(n) = size(s.input.as_ref(), Slot::Time) {
                    work = work.max(n);
                }
            }
            Method::Accumulate => {
                let tin = size(s.input.as_ref(), Slot::Time);
                let tout = size(s.output.as_ref(), Slot::Time);
                if let (Some(a), Some(b)) = (tin, tout) {
                    // About N cycles for a time-reduce axis of size N (L4543).
                    lat = lat.saturating_add(a / b.max(1));
                    work = work.max(a);
                }
            }
            _ => {}
        }
    }
    o.cycles = work;
    o.latency = lat;
    o.limit = if limit.is_empty() {
        "Reducer".to_string()
    } else {
        limit
    };
    o
}

fn is_alu(st: VeStage) -> bool {
    !matches!(
        st,
        VeStage::Init | VeStage::Pair | VeStage::Final | VeStage::Branch
    )
}

/// Vector Engine (F18-F20): one flit per cycle (Way8; a split stream has twice the packets),
/// one cycle of latency per ALU stage, `n` for an intra-slice reduce over `n` steps and `r`
/// for an inter-slice reduce over `r` slices.
fn vector(steps: &[&Step], t: &Target) -> OpCost {
    let mut o = op(steps[0], "vector", "Vector Engine");
    let mut work = 0u64;
    for s in steps {
        for ty in [s.input.as_ref(), s.output.as_ref()] {
            if matches!(ty.map(|x| x.kind), Some(crate::model::Kind::Vector(_)))
                && let Some(f) = flits(ty, t.flit_bytes)
            {
                work = work.max(f);
            }
        }
        let Some(crate::model::Kind::Vector(st)) = s.output.as_ref().map(|x| x.kind) else {
            continue;
        };
        match st {
            VeStage::IntraSliceReduce => {
                let a = size(s.input.as_ref(), Slot::Time).unwrap_or(1);
                let b = size(s.output.as_ref(), Slot::Time).unwrap_or(1).max(1);
                o.latency = o.latency.saturating_add(a / b);
            }
            VeStage::InterSliceReduce => {
                let a = slices(s.input.as_ref());
                let b = slices(s.output.as_ref()).max(1);
                o.latency = o
                    .latency
                    .saturating_add((a / b).saturating_mul(t.xsl_tail_cycles_per_slice));
            }
            _ => {}
        }
        if is_alu(st) && s.method != Method::VectorSplit && s.method != Method::VectorConcat {
            o.latency = o.latency.saturating_add(t.ve_alu_latency_cycles);
        }
    }
    if steps.iter().any(|s| s.method == Method::VectorTrimWay4) {
        o.assumptions.push(Assumption::new(
            "vector_trim_way4 keeps the packet count: Way4 without extra cycles (cost model U-D)",
        ));
    }
    o.cycles = work;
    o.bytes = work
        .saturating_mul(t.flit_bytes)
        .saturating_mul(slices(steps[0].input.as_ref()));
    o.limit = format!("{} lanes per cycle, {work} flits", t.ve_way8_lanes);
    o
}

/// Cast (F21): a pass-through, one flit per cycle, never the bottleneck (L6819).
fn cast(step: &Step, t: &Target) -> OpCost {
    let mut o = op(step, "cast", "Cast Engine");
    let Some(f) = flits(step.input.as_ref(), t.flit_bytes) else {
        return unknown(o, "the input's Time and Packet");
    };
    o.cycles = f;
    o.bytes = f
        .saturating_mul(t.flit_bytes)
        .saturating_mul(slices(step.input.as_ref()));
    o.limit = "pass-through, 1 flit/cycle".to_string();
    o
}

/// Transpose (F22): `in + (n-1)·max(in, out) + out` double-buffered, `n·(in + out)` single.
fn transpose(step: &Step, t: &Target) -> OpCost {
    let mut o = op(step, "transpose", "Transpose Engine");
    let (i, out) = (step.input.as_ref(), step.output.as_ref());
    let lay = |x: Option<&TensorTy>, s: Slot| x.and_then(|y| y.get(s)?.layout.clone());
    let (Some(bits), Some(tin), Some(pin), Some(tout), Some(pout)) = (
        bits_of(i),
        lay(i, Slot::Time),
        lay(i, Slot::Packet),
        lay(out, Slot::Time),
        lay(out, Slot::Packet),
    ) else {
        return unknown(o, "the transpose's Time and Packet");
    };
    let Some(g) = t.transpose_geometry.iter().find(|g| g.bits == bits) else {
        return unknown(o, "the transpose geometry of this dtype");
    };
    let in_rows = trn::used(&pout).unwrap_or(1).max(1);
    let Some(split) = trn::find_split(g, &tin, &pin, &tout, &pout, in_rows) else {
        return unknown(o, "a valid transpose split");
    };
    let Some((double, cycles)) = trn::cycles(
        t.transpose_buffer_cols,
        split.rows,
        split.packets_per_col,
        split.in_cols,
        split.out_rows,
        split.out_time,
    ) else {
        return unknown(o, "the transpose cycles");
    };
    o.cycles = cycles;
    o.bytes = tin
        .size
        .saturating_mul(t.flit_bytes)
        .saturating_mul(slices(i));
    o.limit = format!(
        "{} buffering, in_cols {} (buffer holds {})",
        if double { "double" } else { "single" },
        split.in_cols,
        t.transpose_buffer_cols
    );
    if !double {
        let input = split.rows.saturating_mul(split.packets_per_col);
        let per = input.max(split.out_rows);
        let n = split.out_time / split.out_rows.max(1);
        let alt = input
            .saturating_add(n.saturating_sub(1).saturating_mul(per))
            .saturating_add(split.out_rows);
        if alt < cycles {
            o.hints.push((
                format!(
                    "in_cols {} > {} forces single buffering: columns of at most {} (move a \
                     column factor outward in Time) would double-buffer in about {alt} cycles \
                     (L6890)",
                    split.in_cols, t.transpose_buffer_cols, t.transpose_buffer_cols
                ),
                cycles - alt,
            ));
        }
    }
    o
}

/// Commit (F23): `Time × commit_in_size / commit_size` writes.
fn commit(step: &Step, ops: &[Op<'_>], t: &Target) -> OpCost {
    let mut o = op(step, "commit", "Commit Engine");
    let Some(d) = ops
        .iter()
        .find(|d| d.kind == OpKind::Commit && d.span == step.span)
    else {
        return unknown(o, "the commit's sequencer configuration");
    };
    let (Ok(cfg), Some(s)) = (&d.config, d.commit) else {
        return unknown(o, "the commit's sequencer configuration");
    };
    let steps = derive::time_steps(cfg);
    if s.widened == derive::Widened::Rounded {
        o.assumptions.push(Assumption::new(format!(
            "commit_in_size rounded up to whole {}-byte units (L7699)",
            t.commit_stride_align_bytes
        )));
    }
    let Some(cs) = s.commit_size else {
        return unknown(o, "a commit size");
    };
    let writes = s.commit_in_size.div_ceil(cs).max(1);
    o.cycles = steps.saturating_mul(writes);
    o.bytes = steps
        .saturating_mul(s.commit_in_size)
        .saturating_mul(slices(step.input.as_ref()));
    o.limit = format!(
        "commit_size {cs} B, {writes} write(s) per {} B packet",
        s.commit_in_size
    );
    if writes > 1 {
        o.hints.push((
            format!(
                "each {} B packet is written in {writes} pieces of {cs} B because the \
                 destination's contiguous run is {} B: a destination row padded to the packet \
                 (L7720) writes once per step",
                s.commit_in_size, s.contiguous_bytes
            ),
            o.cycles - steps,
        ));
    }
    o
}

/// The costed stages of a run of Tensor Unit steps (one chain's `begin` … `commit`).
pub fn stages(steps: &[&Step], ops: &[Op<'_>], t: &Target) -> Vec<OpCost> {
    let mut out = Vec::new();
    let mut k = 0;
    while k < steps.len() {
        let s = steps[k];
        let e = s.engine;
        // Consecutive steps of one engine are one stage.
        let mut j = k + 1;
        while j < steps.len()
            && steps[j].engine == e
            && matches!(e, Some(Engine::Contraction | Engine::Vector))
        {
            j += 1;
        }
        let group = &steps[k..j];
        match e {
            Some(Engine::Fetch) => out.push(fetch(s, ops, t)),
            Some(Engine::Switch) => out.push(switch(s, t)),
            Some(Engine::Collect) => out.push(collect(s, t)),
            Some(Engine::Contraction) => out.push(contraction(group, t)),
            Some(Engine::Vector) => out.push(vector(group, t)),
            Some(Engine::Cast) => out.push(cast(s, t)),
            Some(Engine::Transpose) => out.push(transpose(s, t)),
            Some(Engine::Commit) => out.push(commit(s, ops, t)),
            _ => {}
        }
        k = j;
    }
    out
}
