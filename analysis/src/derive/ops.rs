//! The sequencer operations of one function model: every `fetch` (BeginTensor Packet = the DM
//! Element → Time/Packet), `commit` (Time/Packet → Element) and the Sequencer page's `read` /
//! `write` on a local `BufTensor`, with the derived configuration.

use super::sequencer::{
    CommitSizes, Config, DeriveError, Direction, FetchSizes, commit_sizes_into, configure,
    fetch_size_choices, fetch_sizes,
};
use crate::diagnostic::Span;
use crate::mapping::ast::Expr;
use crate::mapping::layout::Dim;
use crate::mapping::lower::AxisEntry;
use crate::mapping::{Layout, Scope, lower, parse};
use crate::model::{
    Engine, FnModel, Kind, MapVal, Method, Slot, Step, TensorTy, TensorVar, Tu, slot_bytes,
};
use crate::target::Target;

/// Which sequencer an operation drives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Fetch,
    Commit,
    /// `BufTensor::read` (Sequencer page).
    Read,
    /// `BufTensor::write` (Sequencer page).
    Write,
}

impl OpKind {
    pub fn as_str(self) -> &'static str {
        match self {
            OpKind::Fetch => "fetch",
            OpKind::Commit => "commit",
            OpKind::Read => "read",
            OpKind::Write => "write",
        }
    }

    pub fn direction(self) -> Direction {
        match self {
            OpKind::Fetch | OpKind::Read => Direction::Read,
            OpKind::Commit | OpKind::Write => Direction::Write,
        }
    }
}

/// One sequencer operation and its derivation.
#[derive(Clone, Debug)]
pub struct Op<'a> {
    pub kind: OpKind,
    pub step: &'a Step,
    /// The method name token.
    pub span: Span,
    pub buf: Layout,
    pub time: Layout,
    pub packet: Layout,
    /// Bits per element as stored in the buffer (the DM dtype), when known.
    pub bits: Option<u32>,
    pub context: Option<Tu>,
    pub config: Result<Config, DeriveError>,
    /// A fetch's or read's sizes under `config` (the context's fetch sizes; a casting fetch's
    /// within one flit of output, L1996), derived here once for every reader.
    pub fetch: Option<FetchSizes>,
    /// A commit's or write's sizes under `config` ([`commit_sizes_into`]: the row a commit
    /// into a padded Element writes, the context's commit sizes), derived here once.
    pub commit: Option<CommitSizes>,
}

impl Op<'_> {
    /// The axes of the stream's Time and Packet that the buffer does not hold, in stream
    /// order.
    pub fn missing_axes(&self) -> Vec<String> {
        let in_buf = |name: &str| {
            self.buf.dims.iter().any(
                |d| matches!(d, Dim::Factor(f) if f.axis.as_ref().is_some_and(|a| &*a.name == name)),
            )
        };
        let mut v: Vec<String> = Vec::new();
        for d in self.time.dims.iter().chain(self.packet.dims.iter()) {
            if let Dim::Factor(f) = d
                && let Some(a) = &f.axis
                && !in_buf(&a.name)
                && !v.iter().any(|n| n == &*a.name)
            {
                v.push(a.name.to_string());
            }
        }
        v
    }

    /// The stream factors a write sequencer (`BufTensor::write` or a commit) would store with
    /// stride 0 under `cfg`, named (`` `T` ``, or "padding of the stream"), when it has one.
    /// SEQ-008 reports writes, CMT-006 commits.
    pub fn stride_zero(&self, cfg: &Config) -> Option<String> {
        if self.kind.direction() != Direction::Write || !cfg.entries.iter().any(|e| e.stride == 0) {
            return None;
        }
        let missing = self.missing_axes();
        Some(if missing.is_empty() {
            "padding of the stream".to_string()
        } else {
            format!("`{}`", missing.join("`, `"))
        })
    }
}

fn layout(t: Option<&TensorTy>, s: Slot) -> Option<Layout> {
    t?.get(s)?.layout.as_deref().cloned()
}

fn bits(t: Option<&TensorTy>) -> Option<u32> {
    Some(t?.dtype?.bits())
}

/// The stream digits term by term as written (`m![C / 2, C % 2]` stays two entries, as the
/// compiler's term-by-term derivation has them, L1451, L1611), falling back to the canonical
/// digits for aliases and anything that does not re-lower to the same size.
fn terms(mv: Option<&MapVal>, whole: &Layout) -> Vec<Dim> {
    let fallback = || whole.dims.clone();
    let Some(mv) = mv else { return fallback() };
    let text = mv.text.trim();
    let Some(body) = text
        .strip_prefix("m!")
        .map(str::trim_start)
        .and_then(|t| t.strip_prefix('['))
        .and_then(|t| t.strip_suffix(']'))
    else {
        return fallback();
    };
    let Ok(Expr::Pair(parts, _)) = parse::parse_mapping(body) else {
        return fallback();
    };
    let mut scope = Scope::default();
    for d in &whole.dims {
        if let Dim::Factor(f) = d
            && let Some(a) = &f.axis
        {
            scope.axes.insert(
                a.name.to_string(),
                AxisEntry {
                    axis: a.clone(),
                    decl: Span::default(),
                },
            );
        }
    }
    let mut dims = Vec::new();
    let mut size: u64 = 1;
    for p in &parts {
        let Some(l) = lower(p, &scope, &mut Vec::new()) else {
            return fallback();
        };
        size = size.saturating_mul(l.size);
        dims.extend(l.dims);
    }
    if size == whole.size { dims } else { fallback() }
}

/// Every sequencer operation of `model` whose mappings are all known.
pub fn ops<'a>(model: &'a FnModel, target: &Target) -> Vec<Op<'a>> {
    let mut out = Vec::new();
    for chain in &model.chains {
        for step in &chain.steps {
            let (i, o) = (step.input.as_ref(), step.output.as_ref());
            let kind = match (step.engine, &step.method) {
                (Some(Engine::Fetch), _) => OpKind::Fetch,
                (Some(Engine::Commit), _) => OpKind::Commit,
                (None, Method::Read) => OpKind::Read,
                (None, Method::Write) => OpKind::Write,
                _ => continue,
            };
            let (buf, time, packet, b) = match kind {
                OpKind::Fetch => (
                    layout(i, Slot::Packet),
                    layout(o, Slot::Time),
                    layout(o, Slot::Packet),
                    bits(i).or(bits(o)),
                ),
                OpKind::Read => (
                    layout(i, Slot::Element),
                    layout(o, Slot::Time),
                    layout(o, Slot::Packet),
                    bits(i),
                ),
                OpKind::Commit | OpKind::Write => (
                    layout(o, Slot::Element),
                    layout(i, Slot::Time),
                    layout(i, Slot::Packet),
                    bits(o).or(bits(i)),
                ),
            };
            let (Some(buf), Some(time), Some(packet)) = (buf, time, packet) else {
                continue;
            };
            out.push(derive_op(step, kind, buf, time, packet, b, target));
        }
    }
    out
}

impl<'a> Op<'a> {
    /// This operation over another buffer layout (a padded DM Element, say), derived as
    /// [`ops`] derives it: what a fix that changes the buffer would make of it.
    pub fn over(&self, buf: Layout, target: &Target) -> Op<'a> {
        derive_op(
            self.step,
            self.kind,
            buf,
            self.time.clone(),
            self.packet.clone(),
            self.bits,
            target,
        )
    }
}

/// One operation's derivation: its configuration and its fetch or commit sizes.
fn derive_op<'a>(
    step: &'a Step,
    kind: OpKind,
    buf: Layout,
    time: Layout,
    packet: Layout,
    b: Option<u32>,
    target: &Target,
) -> Op<'a> {
    let (i, o) = (step.input.as_ref(), step.output.as_ref());
    let time_key = if kind.direction() == Direction::Read {
        o
    } else {
        i
    };
    let time_dims = terms(time_key.and_then(|t| t.get(Slot::Time)), &time);
    let packet_dims = terms(time_key.and_then(|t| t.get(Slot::Packet)), &packet);
    let config = configure(
        &buf,
        &time_dims,
        &packet_dims,
        kind.direction(),
        target.sequencer_entries,
    );
    let sub = step.context == Some(Tu::Sub);
    let (fetch, commit) = match (&config, b) {
        (Ok(cfg), Some(bits)) if kind.direction() == Direction::Read => {
            let allowed = fetch_size_choices(
                target,
                sub && kind == OpKind::Fetch,
                i.and_then(|t| t.dtype),
                o.and_then(|t| t.dtype),
            );
            (Some(fetch_sizes(cfg, bits, &allowed)), None)
        }
        (Ok(cfg), Some(bits)) => {
            let sizes = if sub {
                target.commit_sizes_sub
            } else {
                target.commit_sizes_main
            };
            let c = commit_sizes_into(
                &buf,
                packet.size,
                cfg,
                bits,
                target.commit_sizes_main,
                sizes,
                target.commit_stride_align_bytes,
            );
            (None, Some(c))
        }
        _ => (None, None),
    };
    Op {
        kind,
        step,
        span: step.span,
        buf,
        time,
        packet,
        bits: b,
        context: step.context,
        config,
        fetch,
        commit,
    }
}

/// A commit whose dummy tail (commits write whole units of the smallest main commit size, so
/// the last unit is padded) reaches another DM tensor with a constant address, while its exact
/// bytes do not (CMT-007; the alignment rules leave such a commit to it). `binding` is the
/// chain's own binding, never a victim. Returns the tensor, the commit's exact end and the end
/// of its footprint.
pub fn commit_tail_victim<'m>(
    model: &'m FnModel,
    target: &Target,
    binding: Option<&str>,
    step: &Step,
) -> Option<(&'m TensorVar, u64, u64)> {
    let addr = step.address?;
    let ty = step.output.as_ref()?;
    let (_, _, b) = slot_bytes(ty, Slot::Element)?;
    let unit = target.commit_sizes_main.iter().copied().min()?;
    if b.is_multiple_of(unit) {
        return None;
    }
    let end = addr.checked_add(b)?;
    let dend = addr.checked_add(b.div_ceil(unit).checked_mul(unit)?)?;
    model
        .tensors
        .iter()
        .find(|t| {
            if Some(t.name.as_str()) == binding || t.ty.kind != Kind::Dm {
                return false;
            }
            let Some(a) = t.address else { return false };
            let Some((_, _, tb)) = slot_bytes(&t.ty, Slot::Element) else {
                return false;
            };
            let tend = a.saturating_add(tb);
            let hits_exact = a < end && addr < tend;
            let hits_tail = a < dend && end < tend;
            !hits_exact && hits_tail
        })
        .map(|t| (t, end, dend))
}
