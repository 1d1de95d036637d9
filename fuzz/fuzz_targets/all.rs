//! Fuzz target `all`: one binary for every target, the one named by the environment variable
//! `KERNELAB_FUZZ_TARGET` (read once, at start-up; an unknown name stops the fuzzer there).
#![no_main]

use libfuzzer_sys::fuzz_target;
use std::sync::LazyLock;

/// The target function named by `KERNELAB_FUZZ_TARGET`.
static TARGET: LazyLock<kernelab_fuzz::Target> = LazyLock::new(|| {
    let name = std::env::var("KERNELAB_FUZZ_TARGET").unwrap_or_default();
    kernelab_fuzz::target(&name).unwrap_or_else(|| {
        let known: Vec<&str> = kernelab_fuzz::TARGETS.iter().map(|(n, _)| *n).collect();
        panic!(
            "KERNELAB_FUZZ_TARGET={name:?}: not a target; set it to one of {}",
            known.join(", ")
        )
    })
});

fuzz_target!(
    init: {
        LazyLock::force(&TARGET);
    },
    |data: &[u8]| TARGET(data)
);
