//! The correctness gates on output tensors: `check_bitwise`, `check_close` and `check_oracle`,
//! `check_finite` and `check_repeat`, one file each, and their command views.

mod bitwise;
mod close;
pub mod finite;
mod repeat;
pub(crate) mod view;
