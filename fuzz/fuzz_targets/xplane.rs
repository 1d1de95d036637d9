//! Fuzz target `xplane`: the XPlane protobuf reader (JAX / XLA profiles).
//! The body is `kernelab_fuzz::xplane`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::xplane(data));
