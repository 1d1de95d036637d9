//! Fuzz target `slurm_script`: see `kernelab_fuzz::slurm_script`, shared with the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::slurm_script(data));
