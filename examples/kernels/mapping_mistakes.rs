//! Mistakes visa-lint catches in mappings, with the fixes it offers.
use furiosa_visa_std::prelude::*;

axes![R = 20, C = 2, K = 63];

/// 63 does not split into blocks of 8: pad to 64 first.
type Blocks = m![K / 8, K % 8];
/// `#` pads *to* a size (it never adds): 20 rows do not fit in 16 positions.
type Flit = m![C, R # 16];
/// Resize only shrinks; use `#` to grow.
type Grown = m![R = 32];
