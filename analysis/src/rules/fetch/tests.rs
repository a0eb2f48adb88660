//! The FET tests that span several rules.

use crate::target::RNGD;

/// L2123-L2124: 5 batched 8-byte fetches make a 40-byte packet, which Collect pads with 24
/// zero bytes to 64 bytes (2 flits).
#[test]
fn collect_padding_l2123() {
    let packet = 5 * 8;
    let flits = u64::div_ceil(packet, RNGD.flit_bytes);
    assert_eq!((flits, flits * RNGD.flit_bytes - packet), (2, 24));
}
