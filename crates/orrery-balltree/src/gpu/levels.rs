//! The global levels' bounds and split dimensions (every strategy) and the per-level
//! sorts of [`super::Strategy::LevelSort`] / [`super::Strategy::Hybrid`]: module
//! `balltree/levels` (`kernels/balltree/levels.cu`, `shaders/balltree/levels.wgsl`).

use orrery_core::gpu::{GpuExecutor, KernelSignature, LaunchConfig, Param, ParamKind, ScalarType};
use orrery_core::{DType, Error, KernelSource, Result, View, ViewMut};

use super::build::{GpuReal, Scratch, Uploaded, view, view_mut};
use super::kernels::{BOUNDS_TILE, ITEM_THREADS, pass_module};

/// The module: `common.cuh` + `core/segment.cuh` + `levels.cu`; `common.wgsl` +
/// `levels.wgsl` (which includes `core/segment`).
pub const LEVELS: KernelSource = pass_module!("levels", LEVELS);

orrery_core::kernels! {
    module = LEVELS;
    /// `lo[i] = !0`, `hi[i] = 0` for `i < count` (u32 codes: f32 bounds).
    pub(crate) fn bt_reset_bounds(write lo: u32, write hi: u32, scalar count: u32);
    /// `bt_reset_bounds` for u64 codes (f64 bounds; CUDA only).
    pub(crate) fn bt_reset_bounds_u64(write lo: u64, write hi: u64, scalar count: u32);
    /// Segment of every point and per-segment bounds of the gathered coordinates.
    pub(crate) fn bt_bounds_f32(
        read points: f32, read seg_starts: u32, read seg_active: u32, read perm: u32,
        write node_of: u32, write lo: u32, write hi: u32,
        scalar n: u32, scalar dim: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// [`bt_bounds_f32`] for f64 (CUDA only).
    pub(crate) fn bt_bounds_f64(
        read points: f64, read seg_starts: u32, read seg_active: u32, read perm: u32,
        write node_of: u32, write lo: u64, write hi: u64,
        scalar n: u32, scalar dim: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// Per-segment bounds of the position-ordered coordinates (Select).
    pub(crate) fn bt_sbounds_f32(
        read coords_t: f32, read seg_starts: u32, read seg_active: u32, write lo: u32, write hi: u32,
        scalar n: u32, scalar dim: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// [`bt_sbounds_f32`] for f64 (CUDA only).
    pub(crate) fn bt_sbounds_f64(
        read coords_t: f64, read seg_starts: u32, read seg_active: u32, write lo: u64, write hi: u64,
        scalar n: u32, scalar dim: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// Split dimension of every active segment (`BT_FROZEN` for frozen ones).
    pub(crate) fn bt_choose_f32(
        read lo: u32, read hi: u32, read seg_active: u32, write seg_dim: u32,
        scalar segments: u32, scalar dim: u32, scalar level_offset: u32,
    );
    /// [`bt_choose_f32`] for f64 (CUDA only).
    pub(crate) fn bt_choose_f64(
        read lo: u64, read hi: u64, read seg_active: u32, write seg_dim: u32,
        scalar segments: u32, scalar dim: u32, scalar level_offset: u32,
    );
    /// Sort keys `node << 32 | code` and values `i`.
    pub(crate) fn bt_keys_f32(
        read points: f32, read node_of: u32, read seg_dim: u32, write keys: u64, write vals: u32,
        scalar n: u32, scalar dim: u32,
    );
    /// Sort keys `code` (64 bits) and values `i` (CUDA only).
    pub(crate) fn bt_keys_f64(
        read points: f64, read node_of: u32, read seg_dim: u32, write keys: u64, write vals: u32,
        scalar n: u32, scalar dim: u32,
    );
    /// `keys[p] = node_of[vals[p]]`: the second sort of an f64 level (CUDA only).
    pub(crate) fn bt_node_keys(read node_of: u32, read vals: u32, write keys: u64, scalar n: u32);
}

/// The declaration of `bt_choose_f64` (as in [`bt_choose_f64`]), probed to find whether
/// the executor's kernel language has the build's f64 kernels.
static F64_PROBE: KernelSignature = KernelSignature {
    entry: "bt_choose_f64",
    params: &[
        Param { name: "lo", kind: ParamKind::Read { elem_bytes: 8 } },
        Param { name: "hi", kind: ParamKind::Read { elem_bytes: 8 } },
        Param { name: "seg_active", kind: ParamKind::Read { elem_bytes: 4 } },
        Param { name: "seg_dim", kind: ParamKind::Write { elem_bytes: 4 } },
        Param { name: "segments", kind: ParamKind::Scalar(ScalarType::U32) },
        Param { name: "dim", kind: ParamKind::Scalar(ScalarType::U32) },
        Param { name: "level_offset", kind: ParamKind::Scalar(ScalarType::U32) },
    ],
};

/// The f64 build's capability test: f64 arithmetic on the device
/// ([`orrery_core::DeviceLimits::f64`]) and the f64 entry points in the module of the
/// executor's kernel language (CUDA has them; WGSL has no f64 build, so the typed check
/// finds no such entry there).
pub(crate) fn check_f64_supported<E: GpuExecutor>(exec: &E) -> Result<()> {
    let unsupported = |reason: String| Error::Unsupported {
        executor: exec.name(),
        operation: "ball tree build".to_owned(),
        reason: format!("f64 coordinates: {reason}; convert the points to f32"),
    };
    if !exec.limits().f64 {
        return Err(unsupported("the device has no f64 arithmetic".to_owned()));
    }
    match exec.check_signature(&LEVELS, &F64_PROBE) {
        Ok(()) => Ok(()),
        Err(Error::KernelSignature { reason, .. }) => {
            Err(unsupported(format!("this executor's kernels have no f64 build (WGSL has no f64): {reason}")))
        }
        Err(e) => Err(e),
    }
}

/// The launch of the per-item kernels: one thread per item.
pub(crate) fn per_item<'a, E: GpuExecutor>(items: usize) -> LaunchConfig<'a, E> {
    LaunchConfig::per_item(items, ITEM_THREADS)
}

/// The launch of the tiled kernels: one block of [`ITEM_THREADS`] per [`BOUNDS_TILE`]
/// positions.
pub(crate) fn tiles<'a, E: GpuExecutor>(n: usize) -> LaunchConfig<'a, E> {
    LaunchConfig::blocks(n.div_ceil(BOUNDS_TILE as usize) as u32, ITEM_THREADS)
}

/// The global levels of the sorting strategies: per level, segment bounds, split
/// dimensions and one stable sort; leaves the point order in `scratch.vals`.
pub(crate) fn run_levels<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    points: &E::Buffer<T>,
    n: usize,
    dim: usize,
) -> Result<()> {
    exec.iota(view_mut(&mut s.vals), 0)?;
    let f64_keys = T::DTYPE == DType::F64;
    let (n32, dim32) = (n as u32, dim as u32);
    for level in &up.plan.levels {
        let segments = level.segments as usize;
        let (offset, segs) = (level.offset, level.segments);
        let count = segments * dim;
        {
            let lo = view_mut(s.lo.get::<Option<E::Buffer<T::Ord>>>());
            let hi = view_mut(s.hi.get::<Option<E::Buffer<T::Ord>>>());
            T::reset_bounds(exec, &per_item(count), ViewMut::of(&mut *lo), ViewMut::of(&mut *hi), count as u32)?;
            T::bounds(
                exec,
                &tiles(n),
                View::of(points),
                View::of(&up.seg_starts),
                View::of(&up.seg_active),
                View::of(view(&s.vals)),
                ViewMut::of(view_mut(&mut s.node_of)),
                ViewMut::of(&mut *lo),
                ViewMut::of(&mut *hi),
                [n32, dim32, offset, segs],
            )?;
            T::choose(
                exec,
                &per_item(segments),
                View::of(&*lo),
                View::of(&*hi),
                View::of(&up.seg_active),
                ViewMut::of(view_mut(&mut s.seg_dim)),
                [segs, dim32, offset],
            )?;
        }
        T::keys(
            exec,
            &per_item(n),
            View::of(points),
            View::of(view(&s.node_of)),
            View::of(view(&s.seg_dim)),
            ViewMut::of(view_mut(&mut s.keys)),
            ViewMut::of(view_mut(&mut s.vals)),
            [n32, dim32],
        )?;
        let (keys, vals) = (view_mut(&mut s.keys), view_mut(&mut s.vals));
        if f64_keys {
            // Stable LSD composition: by coordinate code, then by segment.
            exec.sort_pairs(&mut *keys, &mut *vals, 0..64)?;
            if level.node_bits > 0 {
                bt_node_keys(exec, &per_item(n), view(&s.node_of), &*vals, &mut *keys, n32)?;
                exec.sort_pairs(keys, vals, 0..level.node_bits)?;
            }
        } else {
            exec.sort_pairs(keys, vals, 0..32 + level.node_bits)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use orrery_core::gpu::{check_cuda_signature, cuda_params};

    use super::*;

    #[test]
    fn the_f64_probe_is_the_cuda_declaration() {
        let params = cuda_params(LEVELS.cuda, "bt_choose_f64").expect("declared");
        check_cuda_signature(LEVELS.name, &params, &F64_PROBE).unwrap();
        assert!(!LEVELS.wgsl.contains("fn bt_choose_f64("));
    }

    /// The shared segment search (`segment_of` in `core/segment`: `upper_bound_one` over
    /// the starts after the first) is the old "last segment whose start is at most p".
    #[test]
    fn segment_search_is_upper_bound_over_the_later_starts() {
        let starts = [0u32, 3, 3, 7, 8, 20];
        for p in 0..25u32 {
            let last = starts.iter().rposition(|&s| s <= p).unwrap() as u32;
            assert_eq!(orrery_core::executor::upper_bound_one(&starts[1..], p), last, "p = {p}");
        }
        assert_eq!(orrery_core::executor::upper_bound_one(&starts[1..1], 5), 0, "one segment");
    }
}
