//! The four-lane vectors the boundary-element inner loops run on: those of
//! [`shatter_solver::wide`] (one AVX register where the machine has AVX2, a plain array
//! elsewhere, the same bits either way), with `+`, `-` and `*`.

use core::ops::{Add, Mul, Sub};

pub use shatter_solver::wide::{Lane, Portable, WIDTH as LANES, Wide, avx_available};

#[cfg(target_arch = "x86_64")]
pub use shatter_solver::wide::Avx;

/// A [`Wide`] vector with the arithmetic operators.
pub trait Lanes: Wide + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> {}

impl<V: Wide + Add<Output = V> + Sub<Output = V> + Mul<Output = V>> Lanes for V {}
