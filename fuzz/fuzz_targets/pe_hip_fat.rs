//! Fuzz target `pe_hip_fat`: PE/COFF images carrying a HIP offload bundle in a .hip_fat section.
//! The body is `kernelab_fuzz::pe_hip_fat`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::pe_hip_fat(data));
