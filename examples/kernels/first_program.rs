//! The manual's first program (L23-L66): host -> HBM -> DM, on one chip.
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
    // Chip mapping m![A], element mapping m![B].
    let hbm: HbmTensor<i8, m![A], m![B]> = host.to_hbm(&mut ctx.pdma, 0x1000).await;
    launch(kernel, (&mut ctx, &hbm)).await;
}

#[device(chip = 1)]
fn kernel(ctx: &mut Context, hbm: &HbmTensor<i8, m![A], m![B]>) {
    let dm = hbm.to_dm::<m![1], m![A], m![B]>(&mut ctx.tdma, 0);
}
