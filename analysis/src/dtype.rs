//! The element types of `furiosa_visa_std` (api.md §2.1): their names, widths and byte sizes.
//!
//! A basic layer (below `target.rs`, whose tables are keyed by element type): the model
//! re-exports it as `model::Dtype`.

/// Declares [`Dtype`] from its variants, their names and their widths in bits.
macro_rules! dtypes {
    ($($variant:ident = $name:literal, $bits:literal;)*) => {
        /// An element type, by the name a kernel writes (`f8`, the manual's shorthand, is its own
        /// variant so it prints as written; [`Dtype::canonical`] measures it as `f8e4m3`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Dtype {
            $($variant,)*
        }

        impl Dtype {
            /// The element type called `name`; `None` for a name that is not one.
            pub fn from_name(name: &str) -> Option<Dtype> {
                Some(match name {
                    $($name => Dtype::$variant,)*
                    _ => return None,
                })
            }

            /// The type's name, as a kernel writes it.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Dtype::$variant => $name,)*
                }
            }

            /// The element's width in bits.
            pub fn bits(self) -> u32 {
                match self {
                    $(Dtype::$variant => $bits,)*
                }
            }
        }
    };
}

// Integers (i5 and i9 are fetch-adapter conversion targets only, L1962-L1977), then the
// floats: `f8` is the manual's shorthand for either 8-bit format (constraints.md §22 A-14).
// `u8` and the packed 4-bit float `f4e2m1` are furiosa-opt-std 0.6's additions
// (`furiosa-opt-std/src/scalar.rs:172-183,1069-1091` at ebb846a); the manual has neither.
dtypes! {
    I4 = "i4", 4; I5 = "i5", 5; I8 = "i8", 8; I9 = "i9", 9; I16 = "i16", 16; I32 = "i32", 32;
    U8 = "u8", 8;
    F4e2m1 = "f4e2m1", 4; F8 = "f8", 8; F8e4m3 = "f8e4m3", 8; F8e5m2 = "f8e5m2", 8;
    Bf16 = "bf16", 16; F16 = "f16", 16; F32 = "f32", 32;
}

impl std::fmt::Display for Dtype {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Dtype {
    /// The bits an element takes in memory (HBM, DM, TRF, VRF): its width, except the staging
    /// types i5 and i9, which are stored as i4 and i8, their extra bit living in the
    /// contraction engine (`impl Scalar for i5 / i9`, `BITS = 4 / 8`,
    /// `furiosa-opt-std/src/scalar.rs:777-782,884-889` at ebb846a; the manual gives no width).
    pub fn memory_bits(self) -> u32 {
        match self {
            Dtype::I5 => 4,
            Dtype::I9 => 8,
            d => d.bits(),
        }
    }

    /// `f8` (the manual's shorthand) measured as an 8-bit float: `f8e4m3`; every other type is
    /// itself.
    pub fn canonical(self) -> Dtype {
        match self {
            Dtype::F8 => Dtype::F8e4m3,
            d => d,
        }
    }

    /// An 8-bit float of either format (`f8`, `f8e4m3`, `f8e5m2`).
    pub fn is_f8(self) -> bool {
        matches!(self, Dtype::F8 | Dtype::F8e4m3 | Dtype::F8e5m2)
    }

    /// A Vector Engine lane type (`VeScalar`): i32 or f32 (L6759).
    pub fn is_ve_scalar(self) -> bool {
        matches!(self, Dtype::I32 | Dtype::F32)
    }

    /// A signed integer type (`i4` .. `i32`).
    pub fn is_int(self) -> bool {
        matches!(
            self,
            Dtype::I4 | Dtype::I5 | Dtype::I8 | Dtype::I9 | Dtype::I16 | Dtype::I32
        )
    }

    /// The range of a signed integer type; `None` for a float.
    pub fn int_range(self) -> Option<(i64, i64)> {
        if !self.is_int() {
            return None;
        }
        let half = 1i64 << (self.bits() - 1);
        Some((-half, half - 1))
    }

    /// The widened accumulator type of the Contraction Engine (api.md §2.1).
    pub fn widened(self) -> Option<Dtype> {
        match self {
            Dtype::I4 | Dtype::I8 => Some(Dtype::I32),
            Dtype::F8 | Dtype::F8e4m3 | Dtype::F8e5m2 | Dtype::Bf16 => Some(Dtype::F32),
            _ => None,
        }
    }

    /// Bytes that `n` elements occupy; i4 packs two elements per byte (§22 A-3). `None` for
    /// i5/i9, whose in-stream width the manual does not give (§22 A-21), and on overflow.
    pub fn size_bytes(self, n: u64) -> Option<u64> {
        let bits = u64::from(self.canonical().bits());
        if bits != 4 && !bits.is_multiple_of(8) {
            return None;
        }
        n.checked_mul(bits).map(|b| b.div_ceil(8))
    }

    /// Elements that fill exactly `bytes` bytes, when whole.
    pub fn elems_for(self, bytes: u64) -> Option<u64> {
        let bits = u64::from(self.canonical().bits());
        let b = bytes.checked_mul(8)?;
        (b.is_multiple_of(bits)).then_some(b / bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for n in [
            "i4", "i5", "i8", "f8", "f8e4m3", "f8e5m2", "i9", "i16", "bf16", "f16", "i32", "f32",
            "u8", "f4e2m1",
        ] {
            assert_eq!(Dtype::from_name(n).map(Dtype::as_str), Some(n));
        }
        assert_eq!(Dtype::from_name("u16"), None);
        assert_eq!(Dtype::from_name("fp16"), None);
    }
}
