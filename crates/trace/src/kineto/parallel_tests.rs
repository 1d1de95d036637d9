//! Differential tests of the parallel reader against the one-thread reader.

use super::*;
