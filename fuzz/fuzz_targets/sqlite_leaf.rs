//! Fuzz target `sqlite_leaf`: a SQLite table leaf page decoded as the Nsight Systems reader
//! reads a kernel table from its pages. The body is `kernelab_fuzz::sqlite_leaf`, shared with
//! the dispatching `all` target.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| kernelab_fuzz::sqlite_leaf(data));
