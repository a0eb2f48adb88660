//! The TRF Sequencer's contiguous read behind reg_read_size (manual L4104-L4108): what the
//! Contraction rules (CON) and the alignment rules (ALN) both read.

use crate::mapping::Layout;
use crate::mapping::layout::Dim;
use crate::model::Dtype;

/// The part of the TRF Element the TRF Sequencer reads contiguously each cycle.
#[derive(Debug, PartialEq, Eq)]
pub struct TrfRead {
    /// Elements the packet needs from one contiguous TRF run (the data part).
    pub elems: u64,
    /// Elements the run may span: up to the end of the common digits (padding included).
    pub max_elems: u64,
    /// A packet factor held by the TRF that the contiguous read does not cover.
    pub stray: Option<String>,
}

/// The contiguous TRF read behind reg_read_size (manual L4104-L4108): the innermost part common
/// to the TRF Element `e` and the computation packet `packet`; the rest of the packet must be
/// broadcast (axes the TRF lacks) or padding. `None` for irregular layouts.
pub fn read(packet: &Layout, e: &Layout) -> Option<TrfRead> {
    let mut inner: u64 = 1;
    let (mut lo, mut hi) = (None, None);
    let mut k = packet.dims.len();
    let mut j = e.dims.len();
    let mut partial: Option<String> = None;
    while k > 0 && j > 0 {
        let (Dim::Factor(p), Dim::Factor(q)) = (&packet.dims[k - 1], &e.dims[j - 1]) else {
            return None;
        };
        let same = matches!((&p.axis, &q.axis), (Some(a), Some(b)) if a.name == b.name)
            && p.coef == q.coef;
        if !same {
            break;
        }
        if p.extent == q.extent && p.valid == q.valid {
            inner = inner.checked_mul(p.extent)?;
            k -= 1;
            j -= 1;
            continue;
        }
        if p.valid <= q.valid {
            lo = Some(inner.checked_mul(p.valid)?);
            hi = Some(inner.checked_mul(p.extent.min(q.extent))?);
        } else {
            partial = Some(packet.dims[k - 1].to_expr());
        }
        k -= 1;
        break;
    }
    let held = e.axis_names();
    let stray = partial.or_else(|| {
        packet.dims[..k].iter().find_map(|d| match d {
            Dim::Factor(f) => f
                .axis
                .as_ref()
                .filter(|a| held.contains(&a.name))
                .map(|_| d.to_expr()),
            Dim::Opaque(_) => Some(d.to_expr()),
        })
    });
    Some(TrfRead {
        elems: lo.unwrap_or(inner),
        max_elems: hi.unwrap_or(inner),
        stray,
    })
}

/// reg_read_size in bytes: the smallest power of two covering the packet's TRF data within the
/// contiguous run; `Err(bytes)` with the data's bytes when no power of two fits.
pub fn reg_read_size(read: &TrfRead, d: Dtype, mac: u64) -> Option<Result<u64, u64>> {
    let lo = d.size_bytes(read.elems)?;
    let hi = d.size_bytes(read.max_elems)?.min(mac);
    let reg = lo.checked_next_power_of_two()?;
    Some(if reg <= hi { Ok(reg) } else { Err(lo) })
}
