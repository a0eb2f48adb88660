//! Tests of the same-bank runs the family's rules read (the accesses of a derived sequencer
//! and their runs, [`crate::derive::banks`]), and the sequencer helper they use.

use crate::derive::banks::{Accesses, accesses, runs};
use crate::derive::{Config, Entry};
use crate::target::RNGD;

fn cfg(entries: &[(u64, u64)], packet_entries: usize) -> Config {
    let entries: Vec<Entry> = entries
        .iter()
        .map(|&(size, stride)| Entry { size, stride })
        .collect();
    let packet_size = entries[entries.len() - packet_entries..]
        .iter()
        .map(|e| e.size)
        .product();
    Config {
        initial: entries.clone(),
        entries,
        packet_entries,
        initial_packet_entries: packet_entries,
        packet_size,
    }
}

/// L2875-L2879: 128 consecutive bytes cover the 16 banks; a contiguous walk never stays.
#[test]
fn contiguous_walk_rotates_all_banks() {
    let c = cfg(&[(64, 16), (16, 1)], 1); // bf16, 32-byte rows, contiguous
    let a = accesses(&c, 16, Some(32));
    assert_eq!(
        a,
        Accesses {
            loops: vec![(64, 32)],
            bytes: 32
        }
    );
    let r = runs(&a, 0, &RNGD).expect("runs");
    assert_eq!(r.run, 1);
    assert_eq!(r.touched, 0xffff);
}

/// A column walk with a 256-byte row pitch (a multiple of 128 B) stays in bank 0 for every
/// row: 128 accesses, over the 64-access limit (L2898).
#[test]
fn column_walk_stays_in_one_bank() {
    // bf16 matrix 128 x 128 (row pitch 256 B), Time = [C / 4, R], Packet = C % 4 (8 B).
    let c = cfg(&[(32, 4), (128, 128), (4, 1)], 1);
    let a = accesses(&c, 16, Some(8));
    assert_eq!(a.loops, vec![(32, 8), (128, 256), (1, 8)]);
    let r = runs(&a, 0, &RNGD).expect("runs");
    assert_eq!(r.run, 128);
    assert_eq!(r.stride, 256);
    assert_eq!(r.run_banks, 0xffff); // the 32 columns rotate the starting bank
    let r = runs(&a, 5 * 8, &RNGD).expect("runs");
    assert_eq!(r.run, 128);
}

/// Padding the pitch to 136 elements × 2 B = 272 B (not a multiple of 128) rotates banks.
#[test]
fn padded_pitch_rotates() {
    let c = cfg(&[(32, 4), (128, 136), (4, 1)], 1);
    let r = runs(&accesses(&c, 16, Some(8)), 0, &RNGD).expect("runs");
    assert_eq!(r.run, 1);
}

/// A Time broadcast (stride 0) re-reads one address: same bank every time.
#[test]
fn broadcast_rereads_one_bank() {
    let c = cfg(&[(100, 0), (8, 1)], 1); // i8, 8-byte packet re-read 100 times
    let a = accesses(&c, 8, Some(8));
    let r = runs(&a, 24, &RNGD).expect("runs");
    assert_eq!(r.run, 100);
    assert_eq!(r.run_banks, 1 << 3);
    assert_eq!(r.touched, 1 << 3);
}

/// Nested multiples of 128 B multiply: 8 × 16 = 128 in a row (L2898's 64 exceeded).
#[test]
fn nested_runs_multiply() {
    let c = cfg(&[(8, 4096), (16, 64), (8, 1)], 1); // f32: 256 B and 16 KiB strides
    let r = runs(&accesses(&c, 32, Some(32)), 0, &RNGD).expect("runs");
    assert_eq!(r.run, 128);
    assert_eq!(r.run_banks, 0b1111); // a 32-byte access covers banks 0-3
}

#[test]
fn huge_sizes_do_not_panic() {
    let c = cfg(&[(u64::MAX, u64::MAX), (u64::MAX, 0), (2, 1)], 1);
    let r = runs(&accesses(&c, 32, None), u64::MAX, &RNGD).expect("runs");
    assert_eq!(r.run, u64::MAX);
    let c = cfg(&[(0, 0), (1, 1)], 1);
    assert!(runs(&accesses(&c, 4, None), 0, &RNGD).is_some());
}
