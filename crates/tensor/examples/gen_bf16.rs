//! Writes a raw bf16 tensor of SIZE_MIB mebibytes with pseudo-random values (fixed seed); with
//! `PERTURB_EVERY = k > 0`, every k-th element is moved one ULP, for the benchmark's candidate.
//!
//! Usage: `cargo run --release -p kernelab-tensor --example gen_bf16 -- SIZE_MIB OUT [PERTURB_EVERY]`
// An example, not the library: it prints and may stop at the first failure.
#![allow(
    clippy::expect_used,
    clippy::print_stdout,
    clippy::print_stderr,
    unreachable_pub
)]

use std::io::{BufWriter, Write};

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: gen_bf16 SIZE_MIB OUT [PERTURB_EVERY]");
        std::process::exit(2);
    }
    let mib: usize = args[1].parse().unwrap_or(16);
    let every: usize = args.get(3).and_then(|a| a.parse().ok()).unwrap_or(0);
    let n = mib * (1 << 20) / 2;
    let mut out = BufWriter::with_capacity(1 << 22, std::fs::File::create(&args[2])?);
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut buf = Vec::with_capacity(1 << 22);
    for i in 0..n {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        // A normal-ish value in [-4, 4): sign, exponent 125..=129, random mantissa.
        let r = (state >> 33) as u32;
        let mut bits: u16 =
            ((r & 0x8000) as u16) | (((125 + (r >> 16) % 5) as u16) << 7) | ((r & 0x7f) as u16);
        if every > 0 && i % every == 0 {
            bits = bits.wrapping_add(1);
        }
        buf.extend_from_slice(&bits.to_le_bytes());
        if buf.len() >= 1 << 22 {
            out.write_all(&buf)?;
            buf.clear();
        }
    }
    out.write_all(&buf)?;
    out.flush()
}
