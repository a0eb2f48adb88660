//! What is known of an integer the evaluator cannot know in full: its low bits. A host that
//! places a page at `KV_POOL + page * 0x1_1000 + 4` with `page` a run-time parameter places it
//! 4 bytes past a multiple of 4096, whichever page it is; that decides an 8-byte alignment
//! rule as surely as the whole address would.

use ra_ap_syntax::ast::ArithOp;

/// An integer known modulo `2^bits` (`0 < bits < 64`): it is `value` plus a multiple of
/// `2^bits`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct LowBits {
    pub bits: u32,
    pub value: u64,
}

/// An operand of integer arithmetic: `bits` of it known (64 for a whole integer, 0 for
/// nothing), `value` those bits.
#[derive(Clone, Copy)]
struct Known {
    bits: u32,
    value: u64,
}

impl Known {
    fn whole(v: u64) -> Known {
        Known { bits: 64, value: v }
    }

    fn of(low: Option<LowBits>) -> Known {
        low.map_or(Known { bits: 0, value: 0 }, |l| Known {
            bits: l.bits,
            value: l.value,
        })
    }

    /// The trailing zero bits of what is known: a known part of zero is a multiple of
    /// `2^bits`.
    fn zeros(self) -> u32 {
        match self.value {
            0 => self.bits,
            v => v.trailing_zeros().min(self.bits),
        }
    }
}

fn mask(bits: u32) -> u64 {
    match bits {
        64.. => u64::MAX,
        b => (1u64 << b) - 1,
    }
}

impl LowBits {
    /// `x op y` with `x` and `y` known as `Ok` whole integers or `Err` low bits (either may
    /// be `None`: nothing known), when some low bits of the result are known and not all.
    /// `+`, `-` and `*` keep what Rust's arithmetic keeps modulo a power of two; `<<` by a
    /// known count moves the known bits up.
    pub fn of_arith(
        op: ArithOp,
        x: Result<u64, Option<LowBits>>,
        y: Result<u64, Option<LowBits>>,
    ) -> Option<LowBits> {
        let known = |v: Result<u64, Option<LowBits>>| v.map_or_else(Known::of, Known::whole);
        let (a, b) = (known(x), known(y));
        let (bits, value) = match op {
            ArithOp::Add => (a.bits.min(b.bits), a.value.wrapping_add(b.value)),
            ArithOp::Sub => (a.bits.min(b.bits), a.value.wrapping_sub(b.value)),
            // (r + 2^a·u)(s + 2^b·v) = rs + r·2^b·v + s·2^a·u + 2^(a+b)·uv.
            ArithOp::Mul => {
                let bits = (b.bits + a.zeros())
                    .min(a.bits + b.zeros())
                    .min(a.bits + b.bits);
                (bits, a.value.wrapping_mul(b.value))
            }
            ArithOp::Shl => match y {
                Ok(n) if n < 64 => (a.bits.saturating_add(n as u32), a.value << n),
                _ => return None,
            },
            _ => return None,
        };
        let bits = bits.min(64);
        (0 < bits && bits < 64).then_some(LowBits {
            bits,
            value: value & mask(bits),
        })
    }

    /// How far past a multiple of `align` (a power of two) the integer is, when these bits
    /// say: `Some(0)` for an aligned one.
    pub fn past_multiple_of(self, align: u64) -> Option<u64> {
        let needed = align.trailing_zeros();
        (align.is_power_of_two() && self.bits >= needed).then(|| self.value & mask(needed))
    }

    /// The modulus these bits are known to (`4096`).
    pub fn modulus(self) -> u64 {
        1u64 << self.bits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nothing() -> Result<u64, Option<LowBits>> {
        Err(None)
    }

    #[test]
    fn a_multiple_of_a_known_stride_plus_a_constant_keeps_the_constant() {
        // `page * 0x1_1000`: 0x1_1000 is 17 × 4096.
        let scaled = LowBits::of_arith(ArithOp::Mul, nothing(), Ok(0x1_1000)).unwrap();
        assert_eq!((scaled.bits, scaled.value), (12, 0));
        let placed = LowBits::of_arith(ArithOp::Add, Ok(0x1000_0000), Err(Some(scaled))).unwrap();
        let placed = LowBits::of_arith(ArithOp::Add, Err(Some(placed)), Ok(4)).unwrap();
        assert_eq!((placed.bits, placed.value), (12, 4));
        assert_eq!(placed.past_multiple_of(8), Some(4));
        assert_eq!(placed.modulus(), 4096);
    }

    #[test]
    fn an_odd_factor_or_an_unknown_addend_leaves_nothing_known() {
        assert_eq!(LowBits::of_arith(ArithOp::Mul, nothing(), Ok(3)), None);
        assert_eq!(LowBits::of_arith(ArithOp::Add, nothing(), Ok(8)), None);
        // Division and remainder are not followed.
        assert_eq!(LowBits::of_arith(ArithOp::Div, nothing(), Ok(8)), None);
    }

    #[test]
    fn a_shift_moves_the_known_bits_up() {
        let shifted = LowBits::of_arith(ArithOp::Shl, nothing(), Ok(5)).unwrap();
        assert_eq!((shifted.bits, shifted.value), (5, 0));
        assert_eq!(shifted.past_multiple_of(8), Some(0));
        assert_eq!(shifted.past_multiple_of(64), None);
    }

    #[test]
    fn the_product_of_two_partly_known_integers_keeps_the_bits_both_decide() {
        // x = 4 + 8u, y = 2 + 4v: xy = 8 + 16v + 16u + 32uv, known modulo 16 (8).
        let x = LowBits { bits: 3, value: 4 };
        let y = LowBits { bits: 2, value: 2 };
        let p = LowBits::of_arith(ArithOp::Mul, Err(Some(x)), Err(Some(y))).unwrap();
        assert_eq!((p.bits, p.value), (4, 8));
    }
}
