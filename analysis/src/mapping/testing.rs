//! Test helpers shared by the derivation and rule tests: mappings from text.

use super::layout::{Dim, Layout};

/// The layout of `mapping` (an `m!` body) under `axes`; panics on any problem.
pub fn lay(axes: &str, mapping: &str) -> Layout {
    let e = super::evaluate(axes, mapping);
    assert!(e.problems.is_empty(), "{mapping}: {:?}", e.problems);
    e.layout.expect("layout")
}

/// Digits term by term, as written (each comma-separated term lowered on its own), the way
/// the derivation reads a stream's Time and Packet.
pub fn terms(axes: &str, mapping: &str) -> Vec<Dim> {
    mapping
        .split(',')
        .flat_map(|t| lay(axes, t.trim()).dims)
        .collect()
}
