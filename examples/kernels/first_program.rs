//! The manual's first program (L23-L66): host -> HBM -> DM, on one chip, with the sizes the
//! hardware requires. As printed, the manual maps A (8) to the Chip of a one-chip kernel and
//! leaves Cluster and Slice unpadded: visa-lint reports CAP-001/002/003 on it
//! (fixtures/manual/0023_first_program.rs) and offers the `#` padding applied here.
#![feature(register_tool)]
#![register_tool(tcp)]
extern crate furiosa_visa_std;
extern crate tokio;

use furiosa_visa_std::prelude::*;

axes![A = 8, B = 512];

#[tokio::main]
async fn main() {
    let mut ctx = Context::acquire();
    let mut rng = rand::rngs::SmallRng::seed_from_u64(42);
    // A is the major axis, B the minor one: 8 × 512 = 4096 elements.
    let host: HostTensor<i8, m![A, B]> = HostTensor::rand(&mut rng);
    // One chip: the Chip mapping is m![1] and both axes stay in the element mapping.
    let hbm: HbmTensor<i8, m![1], m![A, B]> = host.to_hbm(&mut ctx.pdma, 0x1000).await;
    launch(kernel, (&mut ctx, &hbm)).await;
}

#[device(chip = 1)]
fn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![1], m![A, B]>) {
    // A over 8 of the 256 slices of one of the 2 clusters; the rest is padding.
    let dm = hbm.to_dm::<m![1 # 2], m![A # 256], m![B]>(&mut ctx.tdma, 0);
}
