//! The checks behind every checked encoder, decoder and key-range helper.
//!
//! Kept in one place so that every curve reports the same error variants with the same
//! fields; the unchecked hot paths never call into this file.

use crate::error::{Axis, Error, Result};

/// Checks integer coordinates against a resolution of `levels` bits per axis.
///
/// # Errors
/// [`Error::CoordinateOverflow`] for the first coordinate (in axis order) `>= 2^levels`.
pub(crate) fn coords(coords: &[u64], levels: u32, key_bits: u32, curve: &'static str) -> Result<()> {
    let max = (1u64 << levels) - 1;
    for (a, &value) in coords.iter().enumerate() {
        if value > max {
            return Err(Error::CoordinateOverflow { axis: Axis::from_index(a), value, max, bits: key_bits, curve });
        }
    }
    Ok(())
}

/// Checks one integer coordinate on `axis` against a resolution of `levels` bits.
///
/// # Errors
/// [`Error::CoordinateOverflow`] when `value >= 2^levels`.
pub(crate) fn coord(axis: Axis, value: u64, levels: u32, key_bits: u32, curve: &'static str) -> Result<()> {
    let max = (1u64 << levels) - 1;
    if value > max {
        return Err(Error::CoordinateOverflow { axis, value, max, bits: key_bits, curve });
    }
    Ok(())
}

/// Checks that a key has no bits at or above `used_bits`.
///
/// # Errors
/// [`Error::KeyOutOfRange`] when `key >= 1 << used_bits`.
pub(crate) fn key(key: u64, used_bits: u32, key_bits: u32, curve: &'static str) -> Result<()> {
    let max = (1u64 << used_bits) - 1;
    if key > max {
        return Err(Error::KeyOutOfRange { key, max, bits: key_bits, curve });
    }
    Ok(())
}

/// Checks a tree level against `0..=max`.
///
/// # Errors
/// [`Error::LevelOutOfRange`] when `level > max`.
pub(crate) fn level(level: u32, max: u32, what: &'static str) -> Result<()> {
    if level > max {
        return Err(Error::LevelOutOfRange { level, max, what });
    }
    Ok(())
}
