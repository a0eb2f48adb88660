//! Collect normalization: packets to 32-byte flits (Time2/Packet2), manual L3544-L3603.
//!
//! `collect()` pads the packet to the next flit boundary and, when the padded packet is larger
//! than one flit, splits it: the inner flit becomes Packet2 and the outer flit count is appended
//! to Time as its innermost factor (L3561-L3564, L3589-L3603).

use super::sequencer::bytes;
use crate::mapping::Layout;

/// What Collect derives from a stream (Time, Packet) of `bits`-bit elements.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Flits {
    /// Bytes of the incoming packet (sub-byte elements packed, constraints.md §22 A-3).
    pub packet_bytes: u64,
    /// Flits per packet after padding to the flit boundary.
    pub flits: u64,
    /// Zero bytes Collect adds to reach the flit boundary (L2123-L2124).
    pub pad_bytes: u64,
    /// Elements of one flit.
    pub flit_elems: u64,
    /// The derived output mappings.
    pub time2: Layout,
    pub packet2: Layout,
}

/// Normalizes (`time`, `packet`) to `flit_bytes`-byte flits. `None` when a flit does not hold
/// a whole number of elements, or on overflow.
pub fn normalize(time: &Layout, packet: &Layout, bits: u32, flit_bytes: u64) -> Option<Flits> {
    let bits64 = u64::from(bits);
    if bits64 == 0 {
        return None;
    }
    let flit_bits = flit_bytes.checked_mul(8)?;
    if !flit_bits.is_multiple_of(bits64) {
        return None;
    }
    let flit_elems = flit_bits / bits64;
    let packet_bytes = bytes(packet.size, bits);
    let flits = packet.size.div_ceil(flit_elems).max(1);
    let padded_elems = flits.checked_mul(flit_elems)?;
    let padded = packet.window(padded_elems);
    let pad_bytes = flits.checked_mul(flit_bytes)?.saturating_sub(packet_bytes);
    let (time2, packet2) = if flits == 1 {
        (time.clone(), padded)
    } else {
        let outer = padded.stride(flit_elems);
        (time.pair(&outer).ok()?, padded.window(flit_elems))
    };
    Some(Flits {
        packet_bytes,
        flits,
        pad_bytes,
        flit_elems,
        time2,
        packet2,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mapping::testing::lay;

    #[test]
    fn l3566_identity() {
        // L3566-L3576: i8, B = 32: one flit, nothing changes (`m![B # 32]` is `m![B]`).
        let ax = "A = 8, B = 32";
        let f = normalize(&lay(ax, "A"), &lay(ax, "B"), 8, 32).expect("flits");
        assert_eq!((f.flits, f.pad_bytes), (1, 0));
        assert_eq!(f.time2, lay(ax, "A"));
        assert_eq!(f.packet2, lay(ax, "B # 32"));
    }

    #[test]
    fn l3577_pad_to_one_flit() {
        // L3577-L3588 (and L3638-L3652): i8, B = 16 → Packet2 = m![B # 32], Time unchanged.
        let ax = "A = 8, B = 16";
        let f = normalize(&lay(ax, "A"), &lay(ax, "B"), 8, 32).expect("flits");
        assert_eq!((f.packet_bytes, f.flits, f.pad_bytes), (16, 1, 16));
        assert_eq!(f.time2, lay(ax, "A"));
        assert_eq!(f.packet2, lay(ax, "B # 32"));
    }

    #[test]
    fn l3589_split_into_flits() {
        // L3589-L3603 (and L3655-L3668): bf16, B = 32 → Time2 = m![A, B / 16], Packet2 = m![B % 16].
        let ax = "A = 8, B = 32";
        let f = normalize(&lay(ax, "A"), &lay(ax, "B"), 16, 32).expect("flits");
        assert_eq!((f.packet_bytes, f.flits, f.pad_bytes), (64, 2, 0));
        assert_eq!(f.time2, lay(ax, "A, B / 16"));
        assert_eq!(f.packet2, lay(ax, "B % 16"));
    }

    #[test]
    fn l3622_direct_collect() {
        // L3622-L3634: i8, A = 8, B = 64 → m![A, B / 32], m![B % 32].
        let ax = "A = 8, B = 64";
        let f = normalize(&lay(ax, "A"), &lay(ax, "B"), 8, 32).expect("flits");
        assert_eq!(f.time2, lay(ax, "A, B / 32"));
        assert_eq!(f.packet2, lay(ax, "B % 32"));
    }

    #[test]
    fn l2123_forty_byte_packet() {
        // L2123-L2124: a 40-byte packet (5 batched 8-byte fetches) becomes 2 flits with 24
        // bytes of zero padding.
        let ax = "A = 4, B = 40";
        let f = normalize(&lay(ax, "A"), &lay(ax, "B"), 8, 32).expect("flits");
        assert_eq!((f.packet_bytes, f.flits, f.pad_bytes), (40, 2, 24));
        assert_eq!(f.time2, lay(ax, "A, B # 64 / 32"));
        assert_eq!(f.packet2, lay(ax, "B # 64 % 32"));
    }

    #[test]
    fn sub_byte_and_huge() {
        // i4: a flit holds 64 elements.
        let ax = "A = 4, B = 64";
        let f = normalize(&lay(ax, "A"), &lay(ax, "B"), 4, 32).expect("flits");
        assert_eq!((f.packet_bytes, f.flits, f.flit_elems), (32, 1, 64));
        // No panic at 2^63 elements.
        let ax = "A = 9223372036854775808";
        let p = lay(ax, "A");
        let _ = normalize(&Layout::identity(), &p, 32, 32);
        assert_eq!(normalize(&Layout::identity(), &p, 0, 32), None);
    }
}
