//! DM bank arithmetic (L2352, L2909): which banks a sequencer's accesses touch, in what
//! order, and the longest run of consecutive accesses to one bank. The bank rules (BNK) and the
//! cost simulator read these.

use crate::derive::{self, Config};
use crate::target::Target;

/// One access of a command and the loops around it: `(count, byte stride)`, outermost first.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Accesses {
    pub loops: Vec<(u64, u64)>,
    /// Bytes each access reads or writes.
    pub bytes: u64,
}

/// The access loops of a derived configuration: the contiguous innermost run (L1762) is cut
/// into `chunk`-byte accesses (fetch_size / commit_size, when known).
pub fn accesses(cfg: &Config, bits: u32, chunk: Option<u64>) -> Accesses {
    let e = &cfg.entries;
    let stride_bytes = |s: u64| s.saturating_mul(u64::from(bits)) / 8;
    let mut k = 0;
    let mut run: u64 = 1;
    if e.last().is_some_and(|l| l.stride == 1) {
        k = 1;
        run = e[e.len() - 1].size;
        while k < e.len() {
            let (outer, inner) = (e[e.len() - 1 - k], e[e.len() - k]);
            if outer.stride == inner.size.saturating_mul(inner.stride) {
                run = run.saturating_mul(outer.size);
                k += 1;
            } else {
                break;
            }
        }
    }
    let mut loops: Vec<(u64, u64)> = e[..e.len() - k]
        .iter()
        .map(|x| (x.size, stride_bytes(x.stride)))
        .collect();
    if k == 0 {
        return Accesses {
            loops,
            bytes: derive::bytes(1, bits).max(1),
        };
    }
    let cb = derive::bytes(run, bits).max(1);
    let f = chunk
        .filter(|&f| f > 0 && cb.is_multiple_of(f))
        .unwrap_or_else(|| gcd(cb, 8));
    loops.push((cb / f, f));
    Accesses { loops, bytes: f }
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

/// Consecutive same-bank runs of one command.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Runs {
    /// The longest number of consecutive accesses to one bank (1 when banks rotate).
    pub run: u64,
    /// Banks (bit b = bank b) where such runs happen.
    pub run_banks: u32,
    /// Every bank the command touches.
    pub touched: u32,
    /// Accesses in total.
    pub accesses: u64,
    /// The byte stride between the consecutive same-bank accesses.
    pub stride: u64,
}

/// The residues modulo `period` of `base + Σ i_k·d_k` over the given loops (a set, computed
/// loop by loop: at most `period` values per loop).
fn residues(base: u64, loops: &[(u64, u64)], period: u64) -> Vec<bool> {
    let p = period as usize;
    let mut set = vec![false; p];
    set[(base % period) as usize] = true;
    for &(n, d) in loops {
        let dm = d % period;
        if n <= 1 || dm == 0 {
            continue;
        }
        let mut next = vec![false; p];
        let steps = n.min(period);
        for r in (0..p).filter(|&r| set[r]) {
            let mut x = r as u64;
            for _ in 0..steps {
                next[x as usize] = true;
                x = (x + dm) % period;
            }
        }
        set = next;
    }
    set
}

/// Bank mask of accesses of `bytes` bytes starting at the given residues.
fn bank_mask(set: &[bool], bytes: u64, bank_bytes: u64, banks: u64) -> u32 {
    let mut mask = 0u32;
    for (r, _) in set.iter().enumerate().filter(|(_, s)| **s) {
        let first = r as u64 / bank_bytes;
        let last = (r as u64).saturating_add(bytes.max(1) - 1) / bank_bytes;
        for b in first..=last.min(first + banks - 1) {
            mask |= 1 << (b % banks);
        }
    }
    mask
}

/// The same-bank runs of a command whose first access is at DM address `base`.
pub fn runs(acc: &Accesses, base: u64, target: &Target) -> Option<Runs> {
    let (bb, nb) = (target.dm_bank_bytes, target.dm_banks);
    if bb == 0 || nb == 0 || nb > 32 {
        return None;
    }
    let period = bb.checked_mul(nb)?;
    if period > 4096 {
        return None;
    }
    let mut run: u64 = 1;
    let mut split = 0; // loops[..split] are outside the run
    let mut stride = 0;
    for (i, &(n, d)) in acc.loops.iter().enumerate().rev() {
        if n <= 1 {
            continue;
        }
        if d % period == 0 {
            if run == 1 {
                stride = d;
            }
            run = run.saturating_mul(n);
        } else {
            split = i + 1;
            break;
        }
    }
    let outer = &acc.loops[..split];
    let run_banks = bank_mask(&residues(base, outer, period), acc.bytes, bb, nb);
    let touched = bank_mask(&residues(base, &acc.loops, period), acc.bytes, bb, nb);
    let accesses = acc
        .loops
        .iter()
        .fold(1u64, |a, &(n, _)| a.saturating_mul(n));
    Some(Runs {
        run,
        run_banks,
        touched,
        accesses,
        stride,
    })
}
