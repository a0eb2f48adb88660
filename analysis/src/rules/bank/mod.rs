//! BNK: DM bank starvation and the 64-access rule (constraints.md §19).
//!
//! A slice address splits into byte (bits 0-2), bank (bits 3-6) and row (bits 7-18) (L2875-
//! L2879), so two accesses hit the same bank iff their addresses agree in bits 3-6. The access
//! sequence of a fetch or commit command is its derived sequencer configuration
//! ([`crate::derive::ops`]) with the contiguous innermost run cut into fetch_size (commit_size)
//! chunks; the longest run of consecutive same-bank accesses is the product of the innermost
//! loops whose byte stride is a multiple of 128 (`dm_bank_bytes × dm_banks`), stride 0
//! included. Which banks those runs hit is a set of residues modulo 128, computed loop by loop:
//! nothing is enumerated element by element. Concurrency with DMA comes from the
//! [`Timeline`]: every function is checked, kernels and helpers alike; a function that issues no
//! DMA itself leaves the concurrency unknown (its callers decide), which BNK-001 reports as such.
//!
//! Each rule is a file of its own, with its declaration and its check; this module only says
//! in which order they run and which silence the rest. [`commands`] derives once the fetch and
//! commit commands of the function with their same-bank runs, which BNK-001, BNK-002, BNK-004
//! and BNK-005 read.

mod bank_64_access_rule;
mod commands;
mod cumulative_bank_access;
mod dm_priority_order;
mod dmn_interleaving;
mod main_starves_sub;
mod noc_timeout_reset;
#[cfg(test)]
mod tests;

pub use bank_64_access_rule::BNK_001;
pub use cumulative_bank_access::{BNK_002, cumulative};
pub use dm_priority_order::BNK_004;
pub use dmn_interleaving::BNK_006;
pub use main_starves_sub::BNK_005;
pub use noc_timeout_reset::BNK_003;

use commands::{Cmd, NEAR, commands, concurrent_dma};

use super::context::FnContext;
use crate::derive::timeline::{Resource, Timeline};
use crate::diagnostic::Diagnostic;
use crate::rule::Rule;

/// Every rule of this family, in code order.
pub const RULES: &[Rule] = &[BNK_001, BNK_002, BNK_003, BNK_004, BNK_005, BNK_006];

/// Checks the function's fetch and commit commands on the schedule of its [`Timeline`]: main
/// and sub pairs that may overlap (BNK-002, then BNK-005), then each command alone (BNK-001,
/// else BNK-004), then the DM tensors its DMA moves (BNK-006).
pub fn check(cx: &FnContext<'_>, out: &mut Vec<Diagnostic>) {
    let Some(t) = Timeline::build(cx.model) else {
        return;
    };
    let cmds = commands(cx, &t);
    let in_pair = check_pairs(cx, &t, &cmds, out);
    check_commands(cx, &t, &cmds, &in_pair, out);
    dmn_interleaving::check(cx, &t, out);
}

/// BNK-002 (first pass) and BNK-005 (second pass) on the main/sub pairs that may overlap,
/// BNK-005 once per pair of chains and not where BNK-002 fired; returns which commands are in
/// a BNK-002 pair.
fn check_pairs(
    cx: &FnContext<'_>,
    t: &Timeline<'_>,
    cmds: &[Cmd<'_>],
    out: &mut Vec<Diagnostic>,
) -> Vec<bool> {
    let limit = cx.target.bank_max_consecutive;
    let mut in_pair = vec![false; cmds.len()];
    // Node pairs already reported (BNK-002 first, then BNK-005 once per pair of chains).
    let mut starved: Vec<(usize, usize)> = Vec::new();
    for pass in 0..2 {
        for (i, x) in cmds.iter().enumerate() {
            if x.resource != Resource::Main {
                continue;
            }
            for (j, y) in cmds.iter().enumerate() {
                if y.resource != Resource::Sub || !t.concurrent(x.node, y.node) {
                    continue;
                }
                if pass == 0 {
                    if cumulative_bank_access::check(t, limit, x, y, out) {
                        in_pair[i] = true;
                        in_pair[j] = true;
                        starved.push((x.node, y.node));
                    }
                } else if !starved.contains(&(x.node, y.node))
                    && main_starves_sub::check(cx, x, y, out)
                {
                    starved.push((x.node, y.node));
                }
            }
        }
    }
    in_pair
}

/// BNK-001 and BNK-004 on single commands: BNK-001 where the function issues no DMA (the
/// concurrency unknown) or a DMA may overlap the command, else BNK-004 for a command not in
/// a BNK-002 pair.
fn check_commands(
    cx: &FnContext<'_>,
    t: &Timeline<'_>,
    cmds: &[Cmd<'_>],
    in_pair: &[bool],
    out: &mut Vec<Diagnostic>,
) {
    let limit = cx.target.bank_max_consecutive;
    // Whether the function issues a DMA itself. When it does not, what runs alongside its
    // commands is decided where it is called (a helper) or by code visa-lint cannot see: the
    // concurrency with DMA is unknown here, not absent (BNK-001's unknown case).
    let dma_visible = t.nodes.iter().any(|n| n.resource == Some(Resource::Dma));
    for (i, c) in cmds.iter().enumerate() {
        if !dma_visible && c.runs.run >= limit {
            out.push(bank_64_access_rule::unknown_concurrency(cx, c, limit));
            continue;
        }
        let Some(d) = concurrent_dma(t, c.node) else {
            continue;
        };
        if c.runs.run >= limit {
            bank_64_access_rule::report(cx, t, c, d, out);
        } else if c.runs.run >= NEAR && !in_pair[i] {
            dm_priority_order::report(cx, t, c, d, out);
        }
    }
}
