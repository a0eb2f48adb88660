//! Where the padded reduce axis of one `vector_intra_slice_reduce` lies, as the Valid Count
//! Generator sees it: [`Placement`], derived once for the VCG rules that read it, with
//! [`RPart`], one factor of the axis, and [`SliceTime`], how its Slice parts sit beside its Time
//! parts.

use super::layouts::{layout_of, text_of};
use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::{Chain, Method, Slot, Step, ops::split_op};

/// One factor of the reduce axis.
#[derive(Clone, Debug)]
pub(super) struct RPart {
    pub slot: Slot,
    /// Index of the digit in its slot's layout (0 = outermost).
    pub pos: usize,
    pub extent: u64,
    pub valid: u64,
    pub coef: u64,
}

/// The placement of a padded reduce axis R over Slice, Time and Packet. The VCG sees 8-way
/// flits, so its Time and Packet are those before the Narrow stage that precedes the reduce.
pub(super) struct Placement<'a> {
    /// The reduce.
    pub step: &'a Step,
    /// The reduce axis, R.
    pub r: &'a str,
    /// The Narrow stage (`vector_trim_way4` or `vector_split`) before the reduce, if any.
    pub narrow: Option<&'a Step>,
    pub slice: &'a Layout,
    /// The 8-way Time.
    pub time: &'a Layout,
    /// The 8-way Packet.
    pub packet: &'a Layout,
    /// R's size.
    pub n: u64,
    /// R's padded size as written: the outermost part's reach (its valid lanes in Packet).
    pub p_size: u64,
    /// Every factor of R, in Slice, Time and Packet.
    pub parts: Vec<RPart>,
    pub slice_parts: Vec<RPart>,
    pub time_parts: Vec<RPart>,
    pub packet_parts: Vec<RPart>,
    /// The smallest stride of R's factors, that of its innermost part.
    pub min_coef: u64,
    /// The 8-way Packet as written.
    pub packet_txt: String,
    /// The identity-padding advice the placement diagnostics end with (empty for an unknown op).
    pub more: String,
}

/// How R's Slice parts sit beside its Time parts, when R is in both.
pub(super) enum SliceTime {
    /// Slice outer, Time inner: always supported.
    Standard,
    /// Slice inner, Time outer; `slice_size` and `time_size` are the sizes of R's parts.
    Transposed { slice_size: u64, time_size: u64 },
    /// A Slice part between Time parts; `time_size` is the size of R's Time parts.
    Interleave { time_size: u64 },
}

impl<'a> Placement<'a> {
    /// The placement of R at the reduce `chain.steps[k]`: `None` when a layout is unknown or
    /// irregular, or when R is not padded.
    pub(super) fn of(chain: &'a Chain, k: usize, r: &'a str) -> Option<Placement<'a>> {
        let step = chain.steps.get(k)?;
        // The 8-way Time and Packet: the input of the Narrow stage before the reduce, if any.
        let narrow = chain.steps[..k]
            .iter()
            .rev()
            .find(|s| matches!(s.method, Method::VectorTrimWay4 | Method::VectorSplit));
        let flit_ty = narrow
            .and_then(|s| s.input.as_ref())
            .or(step.input.as_ref());
        let (Some(slice), Some(time), Some(packet)) = (
            layout_of(step.input.as_ref(), Slot::Slice),
            layout_of(flit_ty, Slot::Time),
            layout_of(flit_ty, Slot::Packet),
        ) else {
            return None;
        };
        if !(slice.is_regular() && time.is_regular() && packet.is_regular()) {
            return None;
        }
        let (parts, n) = parts_of(
            r,
            [
                (Slot::Slice, slice),
                (Slot::Time, time),
                (Slot::Packet, packet),
            ],
        );
        if parts.is_empty() || !padded(&parts, n) {
            return None;
        }
        let of = |s: Slot| {
            parts
                .iter()
                .filter(|p| p.slot == s)
                .cloned()
                .collect::<Vec<_>>()
        };
        Some(Placement {
            step,
            r,
            narrow,
            slice,
            time,
            packet,
            n,
            p_size: padded_size(&parts, n),
            slice_parts: of(Slot::Slice),
            time_parts: of(Slot::Time),
            packet_parts: of(Slot::Packet),
            min_coef: parts.iter().map(|p| p.coef).min().unwrap_or(1),
            parts,
            packet_txt: text_of(flit_ty, Slot::Packet, packet),
            more: advice(step),
        })
    }

    /// R's lanes per packet: the radix of its Packet part `pp`, up to the stride of the next
    /// outer part of R.
    pub fn packet_radix(&self, pp: &RPart) -> u64 {
        self.parts
            .iter()
            .filter(|q| q.coef > pp.coef)
            .map(|q| q.coef / pp.coef.max(1))
            .min()
            .unwrap_or(pp.valid)
            .max(1)
    }

    /// With R in Slice as well as in its Packet part `pp`, R's lanes per packet when the last
    /// packet is partial: a packet valid count that would have to vary by slice.
    pub fn partial_packet(&self, pp: &RPart) -> Option<u64> {
        if self.slice_parts.is_empty() {
            return None;
        }
        let (n, stride_p) = (self.n, self.packet_radix(pp));
        (n % stride_p != 0 && n > stride_p).then_some(stride_p)
    }

    /// How R's Slice parts sit beside its Time parts; `None` when R is in one of them only
    /// (always supported).
    pub fn slice_time(&self) -> Option<SliceTime> {
        let (s, t) = (&self.slice_parts, &self.time_parts);
        if s.is_empty() || t.is_empty() {
            return None;
        }
        let s_max = s.iter().map(|q| q.coef).max().unwrap_or(1);
        let s_min = s.iter().map(|q| q.coef).min().unwrap_or(1);
        let t_max = t.iter().map(|q| q.coef).max().unwrap_or(1);
        let t_min = t.iter().map(|q| q.coef).min().unwrap_or(1);
        let slice_size: u64 = s.iter().map(|q| q.extent).product();
        let time_size: u64 = t.iter().map(|q| q.extent).product();
        Some(if s_min > t_max {
            SliceTime::Standard
        } else if s_max < t_min {
            SliceTime::Transposed {
                slice_size,
                time_size,
            }
        } else {
            SliceTime::Interleave { time_size }
        })
    }

    /// `R # p / c % k # e` for a factor of R.
    pub fn render(&self, part: &RPart) -> String {
        let (r, n, p) = (self.r, self.n, self.p_size);
        let mut s = if p > n {
            format!("{r} # {p}")
        } else {
            r.to_string()
        };
        if part.coef > 1 {
            s.push_str(&format!(" / {}", part.coef));
        }
        let radix = part.extent.min(p / part.coef.max(1)).max(1);
        if part.coef.saturating_mul(radix) < p {
            s.push_str(&format!(" % {radix}"));
        }
        if part.extent > radix {
            s.push_str(&format!(" # {}", part.extent));
        }
        s
    }
}

/// The factors of `r` in Slice, Time and Packet, and the size of `r`.
fn parts_of(r: &str, layouts: [(Slot, &Layout); 3]) -> (Vec<RPart>, u64) {
    let mut parts = Vec::new();
    let mut n = 0;
    for (slot, l) in layouts {
        for (pos, d) in l.dims.iter().enumerate() {
            if let Dim::Factor(f) = d
                && let Some(a) = &f.axis
                && &*a.name == r
            {
                n = a.size;
                parts.push(RPart {
                    slot,
                    pos,
                    extent: f.extent,
                    valid: f.valid,
                    coef: f.coef.max(1),
                });
            }
        }
    }
    (parts, n)
}

/// Whether the factors of an axis of size `n` reach past it or hold a padded digit.
fn padded(parts: &[RPart], n: u64) -> bool {
    let max_index: u128 = parts
        .iter()
        .map(|p| u128::from(p.valid.saturating_sub(1)) * u128::from(p.coef))
        .sum();
    max_index >= u128::from(n) || parts.iter().any(|p| p.valid < p.extent)
}

/// The padded size as written: the outermost part's reach (its valid lanes in Packet).
fn padded_size(parts: &[RPart], n: u64) -> u64 {
    let top = parts.iter().max_by_key(|p| p.coef).cloned();
    top.map_or(n, |p| {
        let e = if p.slot == Slot::Packet {
            p.valid
        } else {
            p.extent
        };
        p.coef.saturating_mul(e)
    })
}

/// The identity element of the reduce op, for the identity-padding advice (L5557-L5561).
fn identity(step: &Step) -> Option<&'static str> {
    let op_text = step.args.first()?.value_text();
    let (en, v) = split_op(&op_text)?;
    let f = en.ends_with("F32");
    Some(match (v, f) {
        ("AddSat" | "Add", false) => "0",
        ("Add", true) => "0.0",
        ("Max", false) => "i32::MIN",
        ("Max", true) => "f32::NEG_INFINITY",
        ("Min", false) => "i32::MAX",
        ("Min", true) => "f32::INFINITY",
        _ => return None,
    })
}

fn advice(step: &Step) -> String {
    match identity(step) {
        Some(id) => format!(
            "; otherwise fill the padding with the reduce's identity element ({id}) through the \
             fetch pad_value"
        ),
        None => String::new(),
    }
}
