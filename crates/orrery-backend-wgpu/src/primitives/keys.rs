//! 64-bit 3D Morton and Hilbert keys of positions (`shaders/core/sfc.wgsl`).
//!
//! # Policy
//! One grid-stride launch of [`WORKGROUP`] invocations per workgroup, [`ITEMS`]
//! positions per invocation and round, at most [`MAX_WORKGROUPS`] workgroups. The curve
//! is a compile-time variant of the shader (so Morton keys carry no workgroup table);
//! Hilbert keys walk three levels per lookup in a 24 KB table held in workgroup memory
//! when the device's `max_compute_workgroup_storage_size` has room for it
//! ([`HILBERT3_WORKGROUP_BYTES`]), and otherwise take the one-level fallback (the
//! 192-entry table, 768 bytes). Both tables are computed here from orrery-core's
//! [`ENCODE_3D`], once per device.

use orrery_core::executor::unsupported;
use orrery_core::sfc::hilbert::{ENCODE_3D, STATES_3D};
use orrery_core::sfc::{Curve, KeyMapper};
use orrery_core::{DType, Real, Result};

use super::{Arg, Params, blocks, count};
use crate::context::Recorder;
use crate::shaders::{SFC, WORKGROUP};

/// Positions per invocation and round (`ITEMS` in `sfc.wgsl`, whose round is written out
/// for exactly this many).
pub(crate) const ITEMS: u32 = 4;

/// Most workgroups of one launch. Each workgroup copies the 24 KB Hilbert table into its
/// workgroup memory once and then strides over the positions, so the cap bounds that
/// copy (1024 x 24 KB = 24 MB from L2 per launch, under 2% of the 1.28 GB that 64M f32
/// positions and their keys move). wgpu reports no multiprocessor count; 1024 is about
/// the CUDA executor's grid on the H200 (`sfc_blocks_per_sm` 8 x 132 SMs = 1056), where
/// the same loop measured 0.436 ms for 64M keys: 256K invocations with four positions
/// each in flight, 12 MB of loads, several times the bandwidth-latency product (4.8
/// TB/s x ~1 us). Smaller GPUs run it in a few waves of equal work. Not yet measured on
/// the wgpu path of the H200.
pub(crate) const MAX_WORKGROUPS: u32 = 1024;

/// Entries of the three-level Hilbert table: 24 states x 512 raw coordinate groups.
const HILBERT3_ENTRIES: usize = STATES_3D * 512;

/// Workgroup memory of the three-level Hilbert table: [`HILBERT3_ENTRIES`] u16 entries,
/// two per u32 word (`t3` in `sfc.wgsl`).
pub(crate) const HILBERT3_WORKGROUP_BYTES: u32 = (HILBERT3_ENTRIES * 2) as u32;

/// Entry `i = state * 512 + raw` of the three-level Hilbert table, where `raw` holds
/// three levels of each coordinate, `x[2..0] << 6 | y[2..0] << 3 | z[2..0]`, coarsest in
/// bit 2: `next_state << 9 | the three Hilbert digits` (`sfc_hilbert3_entry` of
/// `kernels/core/sfc.cu`).
fn hilbert3_entry(i: usize) -> u16 {
    let mut e = (i >> 9) << 3;
    let mut digits = 0;
    for j in (0..3).rev() {
        let m = (((i >> (6 + j)) & 1) << 2) | (((i >> (3 + j)) & 1) << 1) | ((i >> j) & 1);
        e = usize::from(ENCODE_3D[(e & !7) | m]);
        digits = (digits << 3) | (e & 7);
    }
    // next_state < 24, so the entry is below 24 << 9 and fits 16 bits.
    (((e >> 3) << 9) | digits) as u16
}

/// The three-level Hilbert table as `sfc.wgsl` reads it: entry `2k` in the low half of
/// word `k`, entry `2k + 1` in the high half (6144 words).
pub(crate) fn hilbert3_words() -> Vec<u32> {
    (0..HILBERT3_ENTRIES / 2)
        .map(|k| u32::from(hilbert3_entry(2 * k)) | (u32::from(hilbert3_entry(2 * k + 1)) << 16))
        .collect()
}

/// How a launch computes its keys: which variant of `sfc.wgsl` it compiles.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Variant {
    /// Magic-mask bit spreading.
    Morton,
    /// Seven lookups in the three-level table in workgroup memory.
    Hilbert3,
    /// The same seven groups, each entry recomputed from the 192-entry table.
    Hilbert1,
}

impl Variant {
    /// Every variant.
    pub(crate) const ALL: [Self; 3] = [Self::Morton, Self::Hilbert3, Self::Hilbert1];

    /// The variant for `curve` on a device with `workgroup_bytes` of workgroup memory.
    fn choose(curve: Curve, workgroup_bytes: u32) -> Self {
        match curve {
            Curve::Morton => Self::Morton,
            Curve::Hilbert if workgroup_bytes >= HILBERT3_WORKGROUP_BYTES => Self::Hilbert3,
            Curve::Hilbert => Self::Hilbert1,
        }
    }

    /// The shader's defines for this variant.
    fn defines(self) -> &'static [&'static str] {
        match self {
            Self::Morton => &[],
            Self::Hilbert3 => &["HILBERT"],
            Self::Hilbert1 => &["HILBERT", "HILBERT1"],
        }
    }
}

/// The defines of `sfc.wgsl` for `variant`, with `F64` (its f64 entry point) where the
/// adapter has `SHADER_F64`.
pub(crate) fn sfc_defines(variant: Variant, f64: bool) -> Vec<&'static str> {
    let mut defines = variant.defines().to_vec();
    if f64 {
        defines.push("F64");
    }
    defines
}

/// Workgroups of a launch over `n` positions: one per round of `WORKGROUP * ITEMS`
/// positions up to [`MAX_WORKGROUPS`].
fn workgroups(n: u32) -> u32 {
    n.div_ceil(WORKGROUP * ITEMS).min(MAX_WORKGROUPS)
}

/// `keys[i] = mapper.key_clamped(x[i], y[i], z[i])` for every key of the view.
///
/// # Errors
/// [`orrery_core::Error::Unsupported`] for f64 positions without `SHADER_F64`.
pub(crate) fn sfc_keys<T: Real>(
    rec: &mut Recorder<'_>,
    xyz: [Arg<'_>; 3],
    mapper: &KeyMapper<T, u64>,
    keys: Arg<'_>,
) -> Result<()> {
    let n = count((keys.len / 8) as usize, "positions")?;
    let f64 = T::DTYPE == DType::F64;
    if f64 && !rec.ctx.caps.f64 {
        return Err(unsupported(
            "wgpu",
            "SFC keys of f64 positions",
            &format!("adapter {} has no SHADER_F64 (or it was disabled)", rec.ctx.caps.adapter),
        ));
    }
    if n == 0 {
        return Ok(());
    }
    let variant = Variant::choose(mapper.curve(), rec.ctx.limits.max_compute_workgroup_storage_size);
    let defines = sfc_defines(variant, rec.ctx.caps.f64);
    let pipeline = rec.pipeline(SFC, &defines, if f64 { "sfc_keys_f64" } else { "sfc_keys_f32" })?;
    let table = match variant {
        // Morton keys do not bind the table; the slot still has to hold a buffer.
        Variant::Morton => rec.ctx.dummy.clone(),
        Variant::Hilbert3 => rec.ctx.hilbert3_table()?,
        Variant::Hilbert1 => rec.ctx.hilbert_table()?,
    };
    let min = mapper.bbox().min();
    let scale = mapper.scale();
    let mut params = Params::new().u32(n);
    for v in [min[0], min[1], min[2], scale[0], scale[1], scale[2]] {
        params = params.bytes(bytemuck::bytes_of(&v));
    }
    let table = Arg::whole(&table).read_only();
    rec.dispatch(&pipeline, &[xyz[0], xyz[1], xyz[2], keys, table], &params, blocks(workgroups(n)))
}

#[cfg(test)]
mod tests {
    use orrery_core::sfc::hilbert::encode_3d_levels;

    use super::*;

    /// The seven-lookup walk of `sfc.wgsl` (HILBERT variant) over the packed words,
    /// marking the entries it reads in `seen`.
    fn walk(words: &[u32], [x, y, z]: [u32; 3], seen: &mut [bool]) -> u64 {
        let mut e = 0u32;
        let mut key = 0u64;
        for g in (0..7).rev() {
            let raw = (((x >> (3 * g)) & 7) << 6) | (((y >> (3 * g)) & 7) << 3) | ((z >> (3 * g)) & 7);
            let i = (e & !511) | raw;
            seen[i as usize] = true;
            e = (words[(i >> 1) as usize] >> ((i & 1) << 4)) & 0xffff;
            key |= u64::from(e & 511) << (9 * g);
        }
        key
    }

    #[test]
    fn the_three_level_table_walks_the_cpu_hilbert_curve() {
        let words = hilbert3_words();
        assert_eq!(words.len() * 4, HILBERT3_WORKGROUP_BYTES as usize);
        let last = (1u32 << 21) - 1;
        let mut s = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            (s >> 11) as u32 & last
        };
        let mut points: Vec<[u32; 3]> = (0..50_000).map(|_| [next(), next(), next()]).collect();
        points.extend([[0, 0, 0], [last, last, last], [last, 0, 0], [0, last, 0], [0, 0, last], [1, 2, 4]]);
        let mut seen = vec![false; HILBERT3_ENTRIES];
        for p in points {
            let [x, y, z] = p;
            assert_eq!(walk(&words, p, &mut seen), encode_3d_levels(x, y, z, 21), "({x}, {y}, {z})");
        }
        // 350K lookups reach every (state, raw group) entry, so each was compared.
        assert!(seen.iter().all(|&s| s), "{} entries never read", seen.iter().filter(|&&s| !s).count());
    }

    #[test]
    fn every_three_level_entry_names_a_state_and_fits_sixteen_bits() {
        for i in 0..HILBERT3_ENTRIES {
            assert!(usize::from(hilbert3_entry(i) >> 9) < STATES_3D, "entry {i}");
        }
    }

    #[test]
    fn the_host_policy_matches_the_shader() {
        let wgsl = SFC.wgsl;
        assert!(wgsl.contains("const ITEMS: u32 = 4u;"));
        assert!(wgsl.contains(&format!("array<u32, {}>", HILBERT3_WORKGROUP_BYTES / 4)));
        assert!(wgsl.contains(&format!("k < {}u", HILBERT3_WORKGROUP_BYTES / 16)));
        assert_eq!(Variant::choose(Curve::Hilbert, 16384), Variant::Hilbert1);
        assert_eq!(Variant::choose(Curve::Hilbert, 24576), Variant::Hilbert3);
        assert_eq!(Variant::choose(Curve::Morton, 0), Variant::Morton);
        assert_eq!(workgroups(1), 1);
        assert_eq!(workgroups(1025), 2);
        assert_eq!(workgroups(u32::MAX), MAX_WORKGROUPS);
    }
}
