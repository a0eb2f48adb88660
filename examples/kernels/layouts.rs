//! Layouts from the Mapping Expressions and Memory and Stream pages (L583-L1161): padding,
//! tiling views, stride/modulo splits and spatial padding to the hardware's sizes.
use furiosa_visa_std::prelude::*;

axes![A = 2048, B = 512, C = 13, D = 61, N = 4, H = 32, W = 32];

/// Rows padded to 64 elements (L744).
type PaddedRows = m![C, D # 64];
/// A bit-permuted split of B (L920-L950).
type Permuted = m![B / 64, B % 32, B / 32 % 2];
/// 2048 rows over 256 slices, 8 per slice, one cluster padded to two (L1079-L1081).
type Slices = m![A / 8 # 256];
type OneCluster = m![1 # 2];
type PerSlice = m![A % 8, B];

fn tiles() {
    let tensor = unsafe { HbmTensor::<bf16, m![1], m![A, B]>::from_addr(0) };
    // Two blocks of 32 columns per tile (L963-L971).
    let tile = tensor.view().tile::<m![B / 32], 2, m![A, B / 32 = 2 # 16, B % 32]>(3);
}
