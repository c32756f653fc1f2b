//! [`DeviceTreeBodies`]: the bodies in tree order on the device, packed `[x, y, z, m]`.

use orrery_core::executor::{ViewOf, check_count, grown_capacity};
use orrery_core::gpu::{GpuExecutor, LaunchConfig};
use orrery_core::{DeviceBuffer as _, Error, Result, Storage, View, ViewMut};

use super::kernels::{THREADS, tu_gather};
use crate::tree_bodies::TreeBodies;

/// A buffer of `len` elements with 25% headroom.
pub(super) fn alloc<E: GpuExecutor, T: Storage>(exec: &E, len: usize) -> Result<E::Buffer<T>> {
    let mut buf = exec.alloc::<T>(grown_capacity(len).max(len))?;
    exec.resize(&mut buf, len)?;
    Ok(buf)
}

/// The bodies of a tree in tree order (the order of its sorted keys, where every node's
/// particles are one contiguous range), packed `[x, y, z, m]` per body so that one 16-byte
/// load fetches a body, with the order itself (tree position -> input index) for
/// scattering results back.
///
/// The device form of [`TreeBodies`]: [`DeviceTreeBodies::download`] gives exactly
/// `TreeBodies::gather` of the same bodies and order. Buffers are kept between
/// [`DeviceTreeBodies::gather_into`] calls, grown with 25% headroom and never shrunk: in a
/// steady state nothing is allocated.
pub struct DeviceTreeBodies<E: GpuExecutor> {
    /// `[x, y, z, m]` per body (`4 * len` elements).
    bodies: E::Buffer<f32>,
    /// The input index of each tree position (`len` elements).
    order: E::Buffer<u32>,
    /// The first tree position whose order entry was out of bounds, or `u32::MAX`.
    status: E::Buffer<u32>,
    /// Bodies.
    len: usize,
    /// The number of input bodies the order indexes (for the error message).
    inputs: usize,
}

impl<E: GpuExecutor> DeviceTreeBodies<E> {
    /// Gathers `n_active` bodies from the input arrays `x, y, z, m` (equal lengths, the
    /// caller's order) by the first `n_active` entries of `order` (tree position -> input
    /// index: the sort's order, e.g. [`orrery_tree_build::gpu::GpuTree::order_view`]).
    /// Nothing is read back: an out-of-bounds order entry is reported by
    /// [`Self::check`] (and [`Self::download`]); its body is zeros.
    ///
    /// # Errors
    /// As [`Self::gather_into`].
    pub fn gather<'a>(
        exec: &E,
        x: impl Into<ViewOf<'a, E, f32>>,
        y: impl Into<ViewOf<'a, E, f32>>,
        z: impl Into<ViewOf<'a, E, f32>>,
        m: impl Into<ViewOf<'a, E, f32>>,
        order: impl Into<ViewOf<'a, E, u32>>,
        n_active: usize,
    ) -> Result<Self> {
        check_active(n_active)?;
        let mut out = Self {
            bodies: alloc(exec, 4 * n_active)?,
            order: alloc(exec, n_active)?,
            status: exec.alloc(1)?,
            len: n_active,
            inputs: 0,
        };
        out.gather_into(exec, x, y, z, m, order, n_active)?;
        Ok(out)
    }

    /// [`Self::gather`] into these buffers (resized, reallocated with 25% headroom only
    /// past their capacity).
    ///
    /// # Errors
    /// [`Error::EmptyInput`] for `n_active == 0`; [`Error::LengthMismatch`] when `y`, `z`
    /// or `m` differ from `x` in length or `order` is shorter than `n_active`;
    /// [`Error::InvalidArgument`] for more active bodies than bodies;
    /// [`Error::TooManyPoints`] past 32-bit indices; device failures.
    #[allow(clippy::too_many_arguments)] // the four body arrays, the order and the count
    pub fn gather_into<'a>(
        &mut self,
        exec: &E,
        x: impl Into<ViewOf<'a, E, f32>>,
        y: impl Into<ViewOf<'a, E, f32>>,
        z: impl Into<ViewOf<'a, E, f32>>,
        m: impl Into<ViewOf<'a, E, f32>>,
        order: impl Into<ViewOf<'a, E, u32>>,
        n_active: usize,
    ) -> Result<()> {
        let (x, y, z, m, order) = (x.into(), y.into(), z.into(), m.into(), order.into());
        check_active(n_active)?;
        let n = x.len();
        check_count("bodies", n)?;
        for (what, len) in [("y", y.len()), ("z", z.len()), ("masses", m.len())] {
            orrery_core::executor::check_len(what, n, len)?;
        }
        if n_active > n {
            return Err(Error::InvalidArgument {
                what: "active bodies",
                reason: format!("{n_active} active bodies of only {n} bodies"),
            });
        }
        orrery_core::executor::check_range("order", order.len(), 0, n_active)?;
        let order = order.slice(0..n_active)?;
        exec.resize(&mut self.bodies, 4 * n_active)?;
        exec.resize(&mut self.order, n_active)?;
        exec.fill(ViewMut::of(&mut self.status), u32::MAX)?;
        let config = LaunchConfig::<E>::per_item(n_active, THREADS);
        tu_gather(
            exec,
            &config,
            x,
            y,
            z,
            m,
            order,
            &mut self.bodies,
            &mut self.order,
            &mut self.status,
            n_active as u32,
            n as u32,
        )?;
        self.len = n_active;
        self.inputs = n;
        Ok(())
    }

    /// Bodies.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether there are none (never, once gathered: at least one body is required).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// `[x, y, z, m]` per body in tree order (`4 * len` elements).
    pub fn bodies(&self) -> &E::Buffer<f32> {
        &self.bodies
    }

    /// The input index of each tree position (`len` elements).
    pub fn order(&self) -> &E::Buffer<u32> {
        &self.order
    }

    /// Reads the gather's status word (one small read, waiting for the gather).
    ///
    /// # Errors
    /// [`Error::IndexOutOfBounds`] naming the first tree position whose order entry is
    /// past the bodies; device failures.
    pub fn check(&self, exec: &E) -> Result<()> {
        let mut word = [0u32];
        exec.read(&self.status, 0, &mut word)?;
        if word[0] == u32::MAX {
            return Ok(());
        }
        let position = word[0] as usize;
        let mut index = [0u32];
        exec.read(&self.order, position, &mut index)?;
        Err(Error::IndexOutOfBounds { what: "order", position, index: u64::from(index[0]), len: self.inputs })
    }

    /// The bodies on the host, as [`TreeBodies::gather`] gives them (after [`Self::check`]).
    ///
    /// # Errors
    /// As [`Self::check`].
    pub fn download(&self, exec: &E) -> Result<TreeBodies<f32>> {
        self.check(exec)?;
        let mut packed = vec![0f32; 4 * self.len];
        exec.read(&self.bodies, 0, &mut packed)?;
        let mut order = vec![0u32; self.len];
        exec.read(&self.order, 0, &mut order)?;
        let pick = |k: usize| packed.chunks_exact(4).map(|b| b[k]).collect();
        Ok(TreeBodies { x: pick(0), y: pick(1), z: pick(2), m: pick(3), order })
    }

    /// The capacity of the packed buffer, in bodies (for tests of the reuse).
    pub fn capacity(&self) -> usize {
        self.bodies.capacity() / 4
    }

    /// The packed view (for launches).
    pub(crate) fn view(&self) -> ViewOf<'_, E, f32> {
        View::of(&self.bodies)
    }
}

fn check_active(n_active: usize) -> Result<()> {
    if n_active == 0 {
        return Err(Error::EmptyInput { what: "tree bodies", min: 1 });
    }
    check_count("tree bodies", n_active)
}
