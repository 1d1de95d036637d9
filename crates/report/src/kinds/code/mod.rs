//! The code evidence kinds: `code_show`, `code_diff` and `code_matrix`, one file each, and
//! their command views.

mod diff;
mod matrix;
pub mod show;
pub(crate) mod view;

use crate::table::Block;

/// Spill and scratch callouts, each marked; or the line saying there are none.
pub(crate) fn callouts(c: &[String]) -> Block {
    Block::Lines(if c.is_empty() {
        vec!["no spills, no scratch or stack growth".into()]
    } else {
        c.iter().map(|x| format!("⚠ **{x}**")).collect()
    })
}
