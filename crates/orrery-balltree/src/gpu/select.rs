//! The global levels of [`super::Strategy::Select`]: the segmented radix selection of
//! every node's median and the stable partition, module `balltree/select`
//! (`kernels/balltree/select.cu`, `shaders/balltree/select.wgsl`); the bounds and split
//! dimensions come from [`super::levels`].

use orrery_core::gpu::GpuExecutor;
use orrery_core::{KernelSource, Result, View, ViewMut};

use super::build::{GpuReal, Scratch, Uploaded, sized, view, view_mut};
use super::kernels::{ITEM_THREADS, SELECT_BINS, SELECT_WORDS, pass_module};
use super::levels::{per_item, tiles};
use super::plan::LevelShape;

/// The module: `common.cuh` + `core/segment.cuh` + `select.cu`; `common.wgsl` +
/// `select.wgsl` (which includes `core/segment`).
pub const SELECT: KernelSource = pass_module!("select", SELECT);

orrery_core::kernels! {
    module = SELECT;
    /// `coords_t[d * n + p] = points[p * dim + d]`.
    pub(crate) fn bt_transpose_f32(read points: f32, write coords_t: f32, scalar n: u32, scalar dim: u32);
    /// [`bt_transpose_f32`] for f64 (CUDA only).
    pub(crate) fn bt_transpose_f64(read points: f64, write coords_t: f64, scalar n: u32, scalar dim: u32);
    /// Every segment's selection state: rank `floor(m/2)`, nothing resolved; counts the
    /// active segments into `pending`.
    pub(crate) fn bt_select_init(
        read seg_starts: u32, read seg_active: u32, write state: u32, write pending: u32,
        scalar n: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// One round's histogram of the candidates' digits.
    pub(crate) fn bt_select_count_f32(
        read coords_t: f32, read perm: u32, read seg_starts: u32, read seg_active: u32, read seg_dim: u32,
        read state: u32, write hist: u32, read pending: u32,
        scalar n: u32, scalar level_offset: u32, scalar segments: u32,
        scalar part: u32, scalar shift: u32, scalar width: u32,
    );
    /// [`bt_select_count_f32`] for f64 (CUDA only).
    pub(crate) fn bt_select_count_f64(
        read coords_t: f64, read perm: u32, read seg_starts: u32, read seg_active: u32, read seg_dim: u32,
        read state: u32, write hist: u32, read pending: u32,
        scalar n: u32, scalar level_offset: u32, scalar segments: u32,
        scalar part: u32, scalar shift: u32, scalar width: u32,
    );
    /// One block per segment: the bucket of the pivot's rank; clears the histogram.
    pub(crate) fn bt_select_find_f32(
        read seg_active: u32, write state: u32, write hist: u32, write pending: u32,
        scalar level_offset: u32, scalar segments: u32, scalar part: u32, scalar shift: u32, scalar width: u32,
    );
    /// [`bt_select_find_f32`] for 64-bit codes (CUDA only).
    pub(crate) fn bt_select_find_f64(
        read seg_active: u32, write state: u32, write hist: u32, write pending: u32,
        scalar level_offset: u32, scalar segments: u32, scalar part: u32, scalar shift: u32, scalar width: u32,
    );
    /// `flags[p] = 1` where position `p` goes to the left child.
    pub(crate) fn bt_select_flags_f32(
        read coords_t: f32, read perm: u32, read seg_starts: u32, read seg_active: u32, read seg_dim: u32,
        read state: u32, write flags: u32,
        scalar n: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// [`bt_select_flags_f32`] for f64 (CUDA only).
    pub(crate) fn bt_select_flags_f64(
        read coords_t: f64, read perm: u32, read seg_starts: u32, read seg_active: u32, read seg_dim: u32,
        read state: u32, write flags: u32,
        scalar n: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// The stable partition of the permutation and the coordinates.
    pub(crate) fn bt_select_scatter_f32(
        read coords_t: f32, read perm: u32, read seg_starts: u32, read seg_active: u32, read scan: u32,
        write coords_out: f32, write perm_out: u32,
        scalar n: u32, scalar dim: u32, scalar level_offset: u32, scalar segments: u32,
    );
    /// [`bt_select_scatter_f32`] for f64 (CUDA only).
    pub(crate) fn bt_select_scatter_f64(
        read coords_t: f64, read perm: u32, read seg_starts: u32, read seg_active: u32, read scan: u32,
        write coords_out: f64, write perm_out: u32,
        scalar n: u32, scalar dim: u32, scalar level_offset: u32, scalar segments: u32,
    );
}

/// The global levels of [`super::Strategy::Select`]: per level, bounds from the
/// position-ordered coordinates, split dimensions, the radix selection of every node's
/// pivot, and a stable partition of the permutation and the coordinates; leaves the point
/// order in `scratch.vals`.
pub(crate) fn run_levels_select<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    points: &E::Buffer<T>,
    n: usize,
    dim: usize,
) -> Result<()> {
    let code_words = size_of::<T>() / 4;
    exec.iota(view_mut(&mut s.vals), 0)?;
    if up.plan.levels.is_empty() {
        return Ok(());
    }
    let segments_max = up.plan.max_segments;
    sized(exec, &mut s.vals_next, n)?;
    sized(exec, s.coords.get::<Option<E::Buffer<T>>>(), n * dim)?;
    sized(exec, s.coords_next.get::<Option<E::Buffer<T>>>(), n * dim)?;
    sized(exec, &mut s.flags, n)?;
    sized(exec, &mut s.scan, n + 1)?;
    sized(exec, &mut s.state, segments_max * SELECT_WORDS)?;
    if s.hist.as_ref().is_none_or(|h| orrery_core::DeviceBuffer::len(h) != segments_max * SELECT_BINS) {
        sized(exec, &mut s.hist, segments_max * SELECT_BINS)?;
        exec.fill(view_mut(&mut s.hist), 0)?;
    }
    if s.pending.is_none() {
        s.pending = Some(exec.upload(&[0u32])?);
    }
    T::transpose(
        exec,
        &per_item(n),
        View::of(points),
        ViewMut::of(view_mut(s.coords.get::<Option<E::Buffer<T>>>())),
        [n as u32, dim as u32],
    )?;
    let rounds = up.plan.select_rounds(code_words);
    for level in &up.plan.levels {
        select_level::<E, T>(exec, up, s, level, rounds, n, dim)?;
        std::mem::swap(&mut s.vals, &mut s.vals_next);
        std::mem::swap(s.coords.get::<Option<E::Buffer<T>>>(), s.coords_next.get::<Option<E::Buffer<T>>>());
    }
    Ok(())
}

/// One global level of [`super::Strategy::Select`]: bounds, split dimensions, the
/// selection rounds, flags, scan and the stable partition into `vals_next` /
/// `coords_next`.
#[allow(clippy::too_many_lines)] // one launch after the other, each with its arguments
fn select_level<E: GpuExecutor, T: GpuReal>(
    exec: &E,
    up: &Uploaded<E>,
    s: &mut Scratch<E>,
    level: &LevelShape,
    rounds: &[[u32; 3]],
    n: usize,
    dim: usize,
) -> Result<()> {
    let segments = level.segments as usize;
    let (offset, segs) = (level.offset, level.segments);
    let (n32, dim32) = (n as u32, dim as u32);
    let count = segments * dim;
    let coords = view(s.coords.get::<Option<E::Buffer<T>>>());
    let coords_next = view_mut(s.coords_next.get::<Option<E::Buffer<T>>>());
    let lo = view_mut(s.lo.get::<Option<E::Buffer<T::Ord>>>());
    let hi = view_mut(s.hi.get::<Option<E::Buffer<T::Ord>>>());
    let perm = view(&s.vals);
    let (starts, active) = (View::of(&up.seg_starts), View::of(&up.seg_active));
    T::reset_bounds(exec, &per_item(count), ViewMut::of(&mut *lo), ViewMut::of(&mut *hi), count as u32)?;
    T::sbounds(
        exec,
        &tiles(n),
        View::of(coords),
        starts,
        active,
        ViewMut::of(&mut *lo),
        ViewMut::of(&mut *hi),
        [n32, dim32, offset, segs],
    )?;
    T::choose(
        exec,
        &per_item(segments),
        View::of(&*lo),
        View::of(&*hi),
        active,
        ViewMut::of(view_mut(&mut s.seg_dim)),
        [segs, dim32, offset],
    )?;
    bt_select_init(
        exec,
        &per_item(segments),
        starts,
        active,
        view_mut(&mut s.state),
        view_mut(&mut s.pending),
        n32,
        offset,
        segs,
    )?;
    let seg_dim = view(&s.seg_dim);
    for &[part, shift, width] in rounds {
        T::select_count(
            exec,
            &tiles(n),
            View::of(coords),
            View::of(perm),
            starts,
            active,
            View::of(seg_dim),
            View::of(view(&s.state)),
            ViewMut::of(view_mut(&mut s.hist)),
            View::of(view(&s.pending)),
            [n32, offset, segs, part, shift, width],
        )?;
        T::select_find(
            exec,
            &orrery_core::LaunchConfig::blocks(segs, ITEM_THREADS),
            active,
            ViewMut::of(view_mut(&mut s.state)),
            ViewMut::of(view_mut(&mut s.hist)),
            ViewMut::of(view_mut(&mut s.pending)),
            [offset, segs, part, shift, width],
        )?;
    }
    T::select_flags(
        exec,
        &per_item(n),
        View::of(coords),
        View::of(perm),
        starts,
        active,
        View::of(seg_dim),
        View::of(view(&s.state)),
        ViewMut::of(view_mut(&mut s.flags)),
        [n32, offset, segs],
    )?;
    exec.exclusive_scan(view(&s.flags), view_mut(&mut s.scan))?;
    T::select_scatter(
        exec,
        &per_item(n),
        View::of(coords),
        View::of(perm),
        starts,
        active,
        View::of(view(&s.scan)),
        ViewMut::of(coords_next),
        ViewMut::of(view_mut(&mut s.vals_next)),
        [n32, dim32, offset, segs],
    )?;
    Ok(())
}
