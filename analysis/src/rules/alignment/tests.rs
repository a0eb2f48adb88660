//! Tests of what several ALN rules read: packed byte sizes, the padding edits of their fixes,
//! and the target's alignment table.

use crate::diagnostic::Span;
use crate::model::{Arg, Dtype, pad_edit};

fn arg(text: &str) -> Arg {
    Arg::written(text.to_string(), Span::new(0, text.len()))
}

#[test]
fn i4_is_packed() {
    // constraints.md §22 A-3; L2002 "Fetches 4 bytes (8 elements of i4)".
    assert_eq!(Dtype::I4.size_bytes(8), Some(4));
    assert_eq!(Dtype::I4.size_bytes(7), Some(4));
    assert_eq!(Dtype::Bf16.size_bytes(1), Some(2));
    assert_eq!(Dtype::F8.size_bytes(2), Some(2));
    assert_eq!(Dtype::I4.elems_for(8), Some(16));
    assert_eq!(Dtype::Bf16.elems_for(8), Some(4));
    assert_eq!(Dtype::I9.elems_for(8), None);
    assert_eq!(Dtype::I5.size_bytes(16), None);
}

#[test]
fn padding_edits() {
    let scope = crate::mapping::Scope::default();
    let e = |t: &str, n| pad_edit(&scope, &arg(t), n).map(|e| e.new_text);
    assert_eq!(e("m![C]", 8).as_deref(), Some("m![C # 8]"));
    assert_eq!(e("m![B, C]", 16).as_deref(), Some("m![[B, C] # 16]"));
    assert_eq!(e("m![C # 6]", 8).as_deref(), Some("m![C # 8]"));
    assert_eq!(e("m![A % 8]", 32).as_deref(), Some("m![A % 8 # 32]"));
    assert_eq!(e("Packet", 8), None);
}

#[test]
fn dma_table_l2425() {
    // L2425-L2427: DM writes and HBM-to-DM need 8-byte alignment; L2525 lists the DMA dtypes.
    let t = &crate::target::RNGD;
    assert_eq!(t.dma_dm_align_bytes, 8);
    assert!(t.dma_dtypes.contains(&Dtype::Bf16) && !t.dma_dtypes.contains(&Dtype::I9));
    // L1723: the fetch packet is 8-byte aligned; L2193: commits in 8-byte units.
    assert_eq!(t.fetch_align_bytes, 8);
    assert_eq!(t.commit_sizes_main.iter().min(), Some(&8));
}

#[test]
fn rounding_keeps_a_computed_address_computed() {
    // A number is rounded in its notation; an expression, which a loop or another call may
    // evaluate differently, is rounded where it is computed.
    let fix = |t: &str, addr| {
        let d = crate::diagnostic::Diagnostic::new(&super::ALN_010, Span::new(0, t.len()), "");
        let d = super::addresses::round_up_fix(d, &arg(t), addr, 256);
        d.fixes
            .first()
            .and_then(|f| f.edits.first())
            .map(|e| e.new_text.clone())
    };
    assert_eq!(fix("0x1004", 0x1004).as_deref(), Some("0x1100"));
    assert_eq!(fix("4100", 4100).as_deref(), Some("4352"));
    assert_eq!(
        fix("slot.w_up", 4100).as_deref(),
        Some("slot.w_up.next_multiple_of(256)")
    );
    assert_eq!(
        fix("BASE + i * PITCH", 4100).as_deref(),
        Some("(BASE + i * PITCH).next_multiple_of(256)")
    );
}
