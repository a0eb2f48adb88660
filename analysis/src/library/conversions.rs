//! Each library generation's element-type conversions, stage by stage, as data
//! (`library-v06.md` R6-R8, R14, R20).
//!
//! The manual's library converts as the chip does, so its tables are the target's
//! ([`crate::target::Target`]: RNGD-S adds fetch conversions). furiosa-opt-std 0.6 names each
//! stage's legal pairs in a trait of its own (`furiosa-opt-std/src/cast.rs` at ebb846a), the
//! same on either chip ("the trait has no chip-generation axis", `cast.rs:34-35`): those tables
//! are here. The rules read [`Generation::conversions`], never a table directly.

use super::Generation;
use crate::dtype::Dtype::{self, *};
use crate::target::Target;

/// One converting stage: the element-type pairs it converts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stage<'t> {
    /// `(from, to)` pairs besides keeping the type.
    pub pairs: &'t [(Dtype, Dtype)],
    /// Whether keeping the type is one of its conversions.
    pub identity: bool,
}

impl Stage<'_> {
    /// Whether the stage converts `from` to `to`; a written `f8` stands for either 8-bit float
    /// (constraints.md §22 A-14).
    pub fn converts(&self, from: Dtype, to: Dtype) -> bool {
        (self.identity && same(from, to))
            || self
                .pairs
                .iter()
                .any(|&(a, b)| names(from, a) && names(to, b))
    }

    /// The types `from` converts to, besides itself, in table order.
    pub fn targets(&self, from: Dtype) -> Vec<Dtype> {
        let mut out: Vec<Dtype> = Vec::new();
        for &(a, b) in self.pairs {
            if names(from, a) && !out.contains(&b) {
                out.push(b);
            }
        }
        out
    }

    /// The types the stage converts from (besides keeping one), in table order.
    pub fn sources(&self) -> Vec<Dtype> {
        let mut out: Vec<Dtype> = Vec::new();
        for &(a, _) in self.pairs {
            if !out.contains(&a) {
                out.push(a);
            }
        }
        out
    }
}

/// Whether a written type names the table's `d` (`f8` names either 8-bit float).
fn names(written: Dtype, d: Dtype) -> bool {
    written == d || (written == F8 && d.is_f8())
}

/// Whether two written types are the same (`f8` is either 8-bit float).
fn same(a: Dtype, b: Dtype) -> bool {
    names(a, b) || names(b, a)
}

/// Which type's range a fetch's zero point must lie in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ZeroPointRange {
    /// The output type's: the manual subtracts while converting (L2117).
    Output,
    /// The source type's: furiosa-opt-std 0.6 asserts it so that every residual fits the
    /// staging type (`fetch_adapter.rs:314-318`, `cast.rs:83-108`).
    Source,
}

/// A generation's conversions, one table per stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Conversions<'t> {
    /// The Fetch Adapter's type-casting stage (`fetch::<D, ..>` / `fetch_cast::<D>()`).
    pub fetch_cast: Stage<'t>,
    /// The fetch's zero-point subtraction (`fetch_with_zero_point` / `fetch_zero_point_sub`).
    pub zero_point_sub: Stage<'t>,
    /// The range the zero point must lie in.
    pub zero_point_range: ZeroPointRange,
    /// The fetch's table lookup (`fetch_with_table` / `fetch_table_lookup::<D>()`).
    pub table_lookup: Stage<'t>,
    /// The Cast Engine (`cast::<D, OutPacket>()`).
    pub cast_engine: Stage<'t>,
    /// The Commit Adapter's conversion (`commit_cast[_relu]::<D>()`).
    pub commit_cast: Stage<'t>,
    /// The element types a tensor in HBM or DM can hold, which the DMA engine moves.
    pub storable: &'t [Dtype],
    /// Types the library offers the Reducer besides its own inputs, each with the input whose
    /// reduction tree it enters.
    pub contraction_staging: &'t [(Dtype, Dtype)],
    /// `(weight, stream)` pairs a contraction takes besides a weight of the stream's type.
    pub contraction_weights: &'t [(Dtype, Dtype)],
}

impl Conversions<'_> {
    /// The Reducer input an operand of type `d` is multiplied as.
    pub fn contraction_operand(&self, d: Dtype) -> Dtype {
        staged(self.contraction_staging, d)
    }

    /// Whether a TRF weight of type `weight` is contracted against a stream of type `stream`
    /// (the same type, as written, or one of the pairs).
    pub fn weight_pairs(&self, weight: Dtype, stream: Dtype) -> bool {
        weight == stream || self.contraction_weights.contains(&(weight, stream))
    }

    /// Whether a tensor of type `d` can be stored (and moved by the DMA engine).
    pub fn stores(&self, d: Dtype) -> bool {
        self.storable.contains(&d.canonical())
    }
}

/// furiosa-opt-std 0.6's `FetchCast`: identity, the integer widenings to i32 and the float
/// widenings to f32, and f32 to bf16; no i4 → i5 / i8 → i9 (zero-point subtraction's) and no
/// f16 (`cast.rs:20-33`).
const OPT_FETCH_CAST: &[(Dtype, Dtype)] = &[
    (I4, I32),
    (I8, I32),
    (I16, I32),
    (F8e4m3, F32),
    (F8e5m2, F32),
    (Bf16, F32),
    (F32, Bf16),
];

/// furiosa-opt-std 0.6's `FetchZeroPointSub`: i4 → i5 and i8 → i9 only (`cast.rs:83-108`).
const OPT_ZERO_POINT_SUB: &[(Dtype, Dtype)] = &[(I4, I5), (I8, I9)];

/// furiosa-opt-std 0.6's `TableLookup`: f4e2m1 to either 8-bit float, either 8-bit float to bf16
/// (`cast.rs:43-74`).
const OPT_TABLE_LOOKUP: &[(Dtype, Dtype)] = &[
    (F4e2m1, F8e4m3),
    (F4e2m1, F8e5m2),
    (F8e5m2, Bf16),
    (F8e4m3, Bf16),
];

/// furiosa-opt-std 0.6's `CastEngineCast`: the manual's pairs without f16, no identity
/// (`cast.rs:111-126`).
const OPT_CAST_ENGINE: &[(Dtype, Dtype)] = &[
    (I32, I4),
    (I32, I8),
    (I32, I16),
    (F32, F8e4m3),
    (F32, F8e5m2),
    (F32, Bf16),
];

/// furiosa-opt-std 0.6's `CommitCast`: f32 → bf16 only (`cast.rs:128-156`).
const OPT_COMMIT_CAST: &[(Dtype, Dtype)] = &[(F32, Bf16)];

/// furiosa-opt-std 0.6's `MaterializableScalar`s: the byte-aligned scalars, i4 and the packed
/// f4e2m1 (`scalar.rs:172-183,916,1091`), which an HBM tensor's DMA binds
/// (`tensor/memory.rs:339-370`). No f16 (CHANGES.md:33-35); i5 and i9 are staging types only.
const OPT_STORABLE: &[Dtype] = &[I4, I8, U8, I16, I32, F4e2m1, F8e4m3, F8e5m2, Bf16, F32];

/// furiosa-opt-std 0.6's `ContractionCast` beyond the Reducer's inputs: i5 and i9, an i4 or i8
/// with its zero point subtracted, enter the i4 and i8 trees (`cast.rs:294-375`).
const OPT_CONTRACTION_STAGING: &[(Dtype, Dtype)] = &[(I5, I4), (I9, I8)];

/// The Reducer input a stream of type `d` is multiplied as, by a staging table.
fn staged(staging: &[(Dtype, Dtype)], d: Dtype) -> Dtype {
    staging
        .iter()
        .find(|&&(s, _)| s == d)
        .map_or(d, |&(_, into)| into)
}

/// furiosa-opt-std 0.6's `ContractionWeight` pairs besides a weight of the stream's type: within
/// an integer family, raw and zero-point-subtracted mix (`cast.rs:320-345`).
const OPT_CONTRACTION_WEIGHTS: &[(Dtype, Dtype)] = &[(I5, I4), (I4, I5), (I9, I8), (I8, I9)];

impl Generation {
    /// The Contraction Engine's output type for a stream of type `d`: the accumulator of the
    /// reduction tree `d` enters (an i9 stream enters the i8 tree under furiosa-opt-std 0.6,
    /// `ContractionCast`, `cast.rs:294-375`), whatever the target.
    pub fn contraction_output(self, d: Dtype) -> Option<Dtype> {
        staged(self.contraction_staging(), d).widened()
    }

    /// The generation's `(stream, reducer input)` staging pairs, whatever the target: the
    /// manual's contraction multiplies its stream's type as it is.
    fn contraction_staging(self) -> &'static [(Dtype, Dtype)] {
        match self {
            Generation::VisaStd => &[],
            Generation::OptStd => OPT_CONTRACTION_STAGING,
        }
    }

    /// The generation's conversions on `target`.
    pub fn conversions(self, target: &Target) -> Conversions<'_> {
        match self {
            Generation::VisaStd => {
                // One Fetch Adapter table, whatever else the fetch does: its zero-point fetch
                // converts i8 to i32 (L2030-L2049), its table fetch keeps i8 (L1940-L1946).
                let fetch = Stage {
                    pairs: target.fetch_casts,
                    identity: true,
                };
                Conversions {
                    fetch_cast: fetch,
                    zero_point_sub: fetch,
                    zero_point_range: ZeroPointRange::Output,
                    table_lookup: fetch,
                    cast_engine: Stage {
                        pairs: target.cast_pairs,
                        identity: false,
                    },
                    // The manual casts only in the Cast Engine.
                    commit_cast: Stage {
                        pairs: &[],
                        identity: false,
                    },
                    storable: target.dma_dtypes,
                    contraction_staging: self.contraction_staging(),
                    contraction_weights: &[],
                }
            }
            Generation::OptStd => Conversions {
                fetch_cast: Stage {
                    pairs: OPT_FETCH_CAST,
                    identity: true,
                },
                zero_point_sub: Stage {
                    pairs: OPT_ZERO_POINT_SUB,
                    identity: false,
                },
                zero_point_range: ZeroPointRange::Source,
                table_lookup: Stage {
                    pairs: OPT_TABLE_LOOKUP,
                    identity: false,
                },
                cast_engine: Stage {
                    pairs: OPT_CAST_ENGINE,
                    identity: false,
                },
                commit_cast: Stage {
                    pairs: OPT_COMMIT_CAST,
                    identity: false,
                },
                storable: OPT_STORABLE,
                contraction_staging: self.contraction_staging(),
                contraction_weights: OPT_CONTRACTION_WEIGHTS,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::target::{RNGD, RNGD_S};

    #[test]
    fn the_manuals_tables_are_the_targets() {
        let c = Generation::VisaStd.conversions(&RNGD);
        assert!(c.fetch_cast.converts(I4, I5) && c.fetch_cast.converts(F16, F32));
        assert!(!c.fetch_cast.converts(I4, I9));
        assert!(
            Generation::VisaStd
                .conversions(&RNGD_S)
                .fetch_cast
                .converts(I4, I9)
        );
        assert!(c.cast_engine.converts(F32, F16) && !c.cast_engine.converts(F32, F32));
        assert!(!c.commit_cast.converts(F32, Bf16));
        assert!(c.stores(F16) && !c.stores(I9));
        assert_eq!(c.contraction_operand(I5), I5);
    }

    #[test]
    fn furiosa_opt_std_splits_the_fetch_stages() {
        let c = Generation::OptStd.conversions(&RNGD_S);
        assert!(c.fetch_cast.converts(I8, I8) && c.fetch_cast.converts(I4, I32));
        assert!(!c.fetch_cast.converts(I4, I5) && !c.fetch_cast.converts(F16, F32));
        assert!(!c.fetch_cast.converts(I4, I9), "no RNGD-S extras");
        assert!(c.zero_point_sub.converts(I8, I9) && !c.zero_point_sub.converts(I8, I8));
        assert!(!c.zero_point_sub.converts(I8, I32));
        assert!(c.table_lookup.converts(F4e2m1, F8e4m3) && c.table_lookup.converts(F8, Bf16));
        assert_eq!(c.fetch_cast.targets(F8), vec![F32]);
    }

    #[test]
    fn furiosa_opt_std_casts_stores_and_contracts() {
        let c = Generation::OptStd.conversions(&RNGD);
        assert!(!c.cast_engine.converts(F32, F16) && c.cast_engine.converts(F32, F8));
        assert!(c.commit_cast.converts(F32, Bf16) && !c.commit_cast.converts(I32, Bf16));
        assert!(c.stores(U8) && c.stores(F4e2m1) && !c.stores(F16) && !c.stores(I9));
        assert_eq!(c.contraction_operand(I9), I8);
        assert_eq!(Generation::OptStd.contraction_output(I9), Some(I32));
        assert_eq!(Generation::VisaStd.contraction_output(I9), None);
        assert!(c.weight_pairs(I8, I9) && c.weight_pairs(I5, I4) && !c.weight_pairs(I4, I8));
        assert!(!Generation::VisaStd.conversions(&RNGD).weight_pairs(I8, I9));
    }
}
