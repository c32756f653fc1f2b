//! The keys phase on the device: the box, the key of every particle (the executor's
//! `sfc_keys` for octrees, `tb_binary_keys_*` for binary trees), then `key_end` for the
//! particles outside a given box (`tb_remove_outside_*`), equal to
//! [`crate::input::particle_keys`] bit for bit.
//!
//! Without a box, the box is the particles' bounding box: six reductions on the device and
//! one read of the six values, because the key mapper's scale (and a binary tree's split
//! sequence) is computed on the host, exactly as the CPU computes it. That read belongs
//! to the keys phase, not to the rebalance (which reads only its status block).

use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::sfc::{BinaryLayout, KeyMapper};
use orrery_core::{Aabb, Error, Real, ReduceOp, Result, Slice, Vec3, ViewMutOf, ViewOf};

use super::kernels::{THREADS, keys as k};
use crate::input::{Shape, check_tree_box};

mod sealed {
    pub trait Sealed {}
    impl Sealed for f32 {}
    impl Sealed for f64 {}
}

/// Small device buffers of the keys phase, one set per position type (public only so
/// that [`TreeReal`]'s hidden methods can name it; not reachable from outside the crate).
pub struct KeyScratch<E: GpuExecutor> {
    bounds32: Option<E::Buffer<f32>>,
    bounds64: Option<E::Buffer<f64>>,
    axes: Option<E::Buffer<u32>>,
}

impl<E: GpuExecutor> Default for KeyScratch<E> {
    fn default() -> Self {
        Self { bounds32: None, bounds64: None, axes: None }
    }
}

/// A position type of the GPU tree build: `f32` everywhere, `f64` where the device does
/// f64 arithmetic ([`orrery_core::DeviceLimits::f64`]; binary keys of f64 positions also
/// need the CUDA kernels: WGSL has no f64 variant).
pub trait TreeReal: Real + sealed::Sealed {
    #[doc(hidden)]
    fn bounds_slot<E: GpuExecutor>(s: &mut KeyScratch<E>) -> &mut Option<E::Buffer<Self>>;

    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn remove_outside<'a, E: GpuExecutor>(
        exec: &E,
        config: &LaunchConfig<'a, E>,
        x: ViewOf<'a, E, Self>,
        y: ViewOf<'a, E, Self>,
        z: ViewOf<'a, E, Self>,
        bounds: ViewOf<'a, E, Self>,
        keys: ViewMutOf<'a, E, u64>,
        n: u32,
        key_bits: u32,
    ) -> Result<()>;

    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn binary_keys<'a, E: GpuExecutor>(
        exec: &E,
        config: &LaunchConfig<'a, E>,
        x: ViewOf<'a, E, Self>,
        y: ViewOf<'a, E, Self>,
        z: ViewOf<'a, E, Self>,
        axes: ViewOf<'a, E, u32>,
        keys: ViewMutOf<'a, E, u64>,
        n: u32,
        levels: u32,
        min: Vec3<Self>,
        scale: [Self; 3],
        bits: [u32; 3],
    ) -> Result<()>;
}

macro_rules! tree_real {
    ($t:ty, $slot:ident, $remove:path, $binary:path) => {
        impl TreeReal for $t {
            fn bounds_slot<E: GpuExecutor>(s: &mut KeyScratch<E>) -> &mut Option<E::Buffer<Self>> {
                &mut s.$slot
            }

            fn remove_outside<'a, E: GpuExecutor>(
                exec: &E,
                config: &LaunchConfig<'a, E>,
                x: ViewOf<'a, E, Self>,
                y: ViewOf<'a, E, Self>,
                z: ViewOf<'a, E, Self>,
                bounds: ViewOf<'a, E, Self>,
                keys: ViewMutOf<'a, E, u64>,
                n: u32,
                key_bits: u32,
            ) -> Result<()> {
                $remove(exec, config, x, y, z, bounds, keys, n, key_bits)
            }

            fn binary_keys<'a, E: GpuExecutor>(
                exec: &E,
                config: &LaunchConfig<'a, E>,
                x: ViewOf<'a, E, Self>,
                y: ViewOf<'a, E, Self>,
                z: ViewOf<'a, E, Self>,
                axes: ViewOf<'a, E, u32>,
                keys: ViewMutOf<'a, E, u64>,
                n: u32,
                levels: u32,
                min: Vec3<Self>,
                scale: [Self; 3],
                bits: [u32; 3],
            ) -> Result<()> {
                $binary(
                    exec, config, x, y, z, axes, keys, n, levels, min.x, min.y, min.z, scale[0], scale[1], scale[2],
                    bits[0], bits[1], bits[2],
                )
            }
        }
    };
}

tree_real!(f32, bounds32, k::tb_remove_outside_f32, k::tb_binary_keys_f32);
tree_real!(f64, bounds64, k::tb_remove_outside_f64, k::tb_binary_keys_f64);

/// `Err(Unsupported)` for f64 positions on a device without f64 arithmetic.
fn check_supported<E: GpuExecutor, T: TreeReal>(exec: &E) -> Result<()> {
    if T::DTYPE == orrery_core::DType::F64 && !exec.limits().f64 {
        return Err(unsupported(exec, "the device has no f64 arithmetic; convert the positions to f32"));
    }
    Ok(())
}

fn unsupported<E: GpuExecutor>(exec: &E, reason: &str) -> Error {
    Error::Unsupported { executor: exec.name(), operation: "tree keys".to_owned(), reason: reason.to_owned() }
}

/// A device buffer of at least `len` elements in `slot`.
fn ensure<'s, E: GpuExecutor, T: orrery_core::Storage>(
    exec: &E,
    slot: &'s mut Option<E::Buffer<T>>,
    len: usize,
) -> Result<&'s mut E::Buffer<T>> {
    use orrery_core::executor::DeviceBuffer;
    if slot.as_ref().is_none_or(|b| b.len() != len) {
        *slot = Some(exec.alloc::<T>(len)?);
    }
    Ok(slot.as_mut().expect("set above"))
}

/// The particles' bounding box, from six reductions on the device and one read.
fn bounding_box<E: GpuExecutor, T: TreeReal>(
    exec: &E,
    scratch: &mut KeyScratch<E>,
    x: ViewOf<'_, E, T>,
    y: ViewOf<'_, E, T>,
    z: ViewOf<'_, E, T>,
) -> Result<Aabb<T>> {
    let bounds = ensure(exec, T::bounds_slot(scratch), 6)?;
    for (a, v) in [x, y, z].into_iter().enumerate() {
        exec.reduce(v, ReduceOp::Min, bounds.slice_mut(a..a + 1)?)?;
        exec.reduce(v, ReduceOp::Max, bounds.slice_mut(a + 3..a + 4)?)?;
    }
    let b = exec.download(&*bounds)?;
    let bbox = Aabb::new(Vec3::new(b[0], b[1], b[2]), Vec3::new(b[3], b[4], b[5]))?;
    check_tree_box(&bbox, "all particles coincide, so their bounding box is a point: pass a box")?;
    Ok(bbox)
}

/// The keys of `x, y, z` for a tree of `shape` in `bbox` (or the particles' bounding
/// box) into `keys`, `key_end` outside a given box. Returns the box used.
pub(crate) fn particle_keys<'a, E: GpuExecutor, T: TreeReal>(
    exec: &E,
    scratch: &mut KeyScratch<E>,
    shape: Shape,
    (x, y, z): (ViewOf<'a, E, T>, ViewOf<'a, E, T>, ViewOf<'a, E, T>),
    bbox: Option<Aabb<T>>,
    keys: &mut E::Buffer<u64>,
) -> Result<Aabb<T>> {
    check_supported::<E, T>(exec)?;
    let n = x.len();
    let n32 =
        u32::try_from(n).map_err(|_| Error::TooManyPoints { count: n, max: u32::MAX as usize, what: "particles" })?;
    let config = LaunchConfig::per_item(n, THREADS);
    let (bbox, remove) = match bbox {
        Some(b) => {
            check_tree_box(&b, "the given box has zero extent on every axis")?;
            (b, true)
        }
        None => (bounding_box(exec, scratch, x, y, z)?, false),
    };
    match shape {
        Shape::Octree(curve) => {
            let mapper = KeyMapper::<T, u64>::new(bbox, curve);
            exec.sfc_keys(x, y, z, &mapper, &mut *keys)?;
        }
        Shape::Binary => {
            let layout = BinaryLayout::<T, u64>::full_depth(bbox);
            let axes: Vec<u32> = layout.axes().iter().map(|&a| a as u32).collect();
            let axes_buf = ensure(exec, &mut scratch.axes, axes.len())?;
            exec.write(axes_buf, 0, &axes)?;
            let axes_view = scratch.axes.as_ref().expect("set above").view();
            let launched = T::binary_keys(
                exec,
                &config,
                x,
                y,
                z,
                axes_view,
                keys.view_mut(),
                n32,
                layout.levels(),
                bbox.min(),
                layout.scale(),
                layout.bits_per_axis(),
            );
            match launched {
                Err(Error::KernelSignature { reason, .. }) => {
                    return Err(unsupported(
                        exec,
                        &format!(
                            "binary keys of this position type have no kernel in this executor's language ({reason}); convert the positions to f32"
                        ),
                    ));
                }
                other => other?,
            }
        }
    }
    if remove {
        let (lo, hi) = (bbox.min(), bbox.max());
        let bounds = ensure(exec, T::bounds_slot(scratch), 6)?;
        exec.write(bounds, 0, &[lo.x, lo.y, lo.z, hi.x, hi.y, hi.z])?;
        let bounds = T::bounds_slot(scratch).as_ref().expect("set above").view();
        T::remove_outside(exec, &config, x, y, z, bounds, keys.view_mut(), n32, shape.layout().key_bits())?;
    }
    Ok(bbox)
}
