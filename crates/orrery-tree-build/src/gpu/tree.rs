//! [`GpuTree`]: the host API of the GPU build — device buffers, the phases of a step, the
//! recordings, and the one status read per build or update.

use orrery_core::executor::DeviceBuffer;
use orrery_core::gpu::GpuExecutor;
use orrery_core::sfc::KeyLayout;
use orrery_core::{Aabb, Error, Executor, Reserve, Result, Slice, View, ViewOf};

use super::buffers::{LeafBuffers, with_headroom};
use super::keys::{KeyScratch, TreeReal, particle_keys};
use super::nf::{geometry_words, hilbert_flag};
use super::passes::{RunShape, begin, enqueue_run};
use super::status::{self, Status};
use crate::build::{Convergence, Criterion, Rebalance};
use crate::gpu_view::{DeviceTreeView, GpuTreeViewBuilder, GpuViewReal, LeafCount, ViewInput};
use crate::input::Shape;
use crate::leaves::Leaves;
use crate::nfcount::KeyGeometry;
use crate::view::Geometry;

/// The sorted particles of the last step.
struct Particles<E: Executor> {
    keys: E::Buffer<u64>,
    order: E::Buffer<u32>,
    /// Whether `keys` are sorted (the sort phase ran after the keys phase).
    sorted: bool,
}

/// Slots of a build's first run: LeafCount from the root converges in 4-6 passes on
/// octrees (a pass descends up to four levels), more on binary trees, which resume.
const RUN_SLOTS_BUILD: u32 = 8;
/// Slots of an update's first run: a step of small motions typically needs one changing
/// pass and the confirming one. Every slot after convergence still launches its kernels
/// (they return at once), so a run's slots are kept few and a run that needs more
/// resumes with twice as many, at the cost of one more status read.
const RUN_SLOTS_UPDATE: u32 = 3;
/// Run shapes whose recordings are kept (build, update and their resumes).
const MAX_RECORDED_SHAPES: usize = 6;

/// The recordings of one run shape, one per starting leaf buffer.
struct Recordings<E: Executor> {
    shape: RunShape,
    by_parity: [Option<E::Recording>; 2],
}

/// A Cornerstone tree (octree or binary) built and updated on a GPU, with the particles'
/// sorted keys and order: one orchestration for every [`GpuExecutor`] (CUDA and wgpu),
/// bit-identical to the CPU ([`crate::build()`], [`crate::update`],
/// [`crate::input::sort_particles`]).
///
/// A step is three phases, each a method so that a benchmark can put
/// [`Executor::mark`] around it: [`GpuTree::compute_keys`] (keys of device-resident
/// positions, `key_end` outside a given box), [`GpuTree::sort`] (the executor's stable
/// sort of `(key, index)`), [`GpuTree::rebalance`] (a build from the root the first time,
/// then an incremental update of the previous tree); [`GpuTree::step`] runs all three.
/// The rebalance reads one status block from the device per call (more only when the
/// leaf capacity had to grow); its passes are recorded once ([`Executor::record`]) and
/// replayed on every later call with the same leaf capacity and particle count.
///
/// Every call takes the executor that made the tree (its buffers and recordings belong
/// to it). A rebalance may record on the executor's stream: while it runs, give the
/// executor to no other thread (a CUDA stream capture would take in the launches other
/// threads enqueue, and the wgpu executor refuses a second recording with
/// [`Error::Recording`]).
///
/// ```no_run
/// # fn demo<E: orrery_core::GpuExecutor>(exec: &E, x: &E::Buffer<f32>, y: &E::Buffer<f32>, z: &E::Buffer<f32>) -> orrery_core::Result<()> {
/// use orrery_core::sfc::Curve;
/// use orrery_tree_build::{Criterion, Rebalance, Shape, gpu::GpuTree};
///
/// let mut tree = GpuTree::new(exec, Shape::Octree(Curve::Hilbert), Rebalance::new(Criterion::leaf_count(64)))?;
/// let run = tree.step(exec, x, y, z, None)?; // build
/// assert!(run.converged);
/// let run = tree.step(exec, x, y, z, None)?; // update of the same particles: one pass
/// assert_eq!(run.passes, 1);
/// let leaves = tree.leaves(exec)?;
/// # Ok(())
/// # }
/// ```
pub struct GpuTree<E: GpuExecutor> {
    shape: Shape,
    rebalance: Rebalance,
    replay: bool,
    initial_capacity: Option<usize>,
    status: E::Buffer<u32>,
    end_query: E::Buffer<u64>,
    scratch: KeyScratch<E>,
    particles: Option<Particles<E>>,
    bufs: Option<LeafBuffers<E>>,
    /// Recordings by run shape (a build, an update and their resumes differ in slots).
    recordings: Vec<Recordings<E>>,
    /// Runs resumed because their slots were spent before convergence.
    resumes: usize,
    /// Whether every kernel of a run has been launched once directly (so a recording
    /// compiles and loads nothing).
    warm: bool,
    /// The last status read; `None` before the first build or after a failed run.
    host: Option<Status>,
    /// NFCount: the stencil geometry of the last keys phase's keys.
    geometry: Option<KeyGeometry>,
    /// NFCount: the geometry whose table the device buffers hold.
    geometry_written: Option<KeyGeometry>,
    /// Overflows handled (growths of the leaf capacity) since the tree was made.
    growths: usize,
    /// Runs enqueued by replaying a recording, and recordings made.
    replays: usize,
    recorded: usize,
    /// The leaf starts handed to the TreeView (the exclusive scan of the counts).
    starts: Option<E::Buffer<u32>>,
}

impl<E: GpuExecutor> GpuTree<E> {
    /// An empty tree of `shape`, built and updated with `rebalance`.
    ///
    /// With NFCount the stencils use the geometry of the keys each keys phase computes:
    /// the octree's curve, or the split sequence of the box a binary tree's keys were
    /// computed in (the geometry [`Criterion::nf_count`] gives for that box, whatever box
    /// the criterion's own geometry was made for), so that the tree equals the CPU build
    /// with `Criterion::nf_count(shape, &sorted.bbox)`.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a bad criterion (bucket or threshold 0, an NFCount
    /// geometry of other keys than `shape`'s: another layout or another curve) or a zero
    /// pass cap; device failures.
    pub fn new(exec: &E, shape: Shape, rebalance: Rebalance) -> Result<Self> {
        rebalance.check()?;
        if let Criterion::NfCount { geometry, .. } = rebalance.criterion {
            check_geometry(shape, geometry)?;
        }
        let status = exec.upload(&[0u32; status::WORDS])?;
        let end_query = exec.upload(&[shape.layout().key_end::<u64>()])?;
        Ok(Self {
            shape,
            rebalance,
            replay: exec.limits().replay,
            initial_capacity: None,
            status,
            end_query,
            scratch: KeyScratch::default(),
            particles: None,
            bufs: None,
            recordings: Vec::new(),
            resumes: 0,
            warm: false,
            host: None,
            geometry: None,
            geometry_written: None,
            growths: 0,
            replays: 0,
            recorded: 0,
            starts: None,
        })
    }

    /// The same tree starting with room for `leaves` leaves (default: an estimate from the
    /// particle count and the bucket, with 25% headroom). A capacity that turns out too
    /// small is grown on the way (one more status read per growth).
    #[must_use]
    pub fn with_leaf_capacity(mut self, leaves: usize) -> Self {
        self.initial_capacity = Some(leaves.max(1));
        self
    }

    /// Whether the rebalance records its passes once and replays them ([`Executor::record`];
    /// the default where the executor can) or enqueues them directly every time. Both run
    /// the same kernels in the same order with the same result.
    #[must_use]
    pub fn with_replay(mut self, replay: bool) -> Self {
        self.replay = replay;
        self
    }

    /// The tree's shape.
    pub fn shape(&self) -> Shape {
        self.shape
    }

    /// The key layout of the leaves.
    pub fn layout(&self) -> KeyLayout {
        self.shape.layout()
    }

    /// How the tree is rebalanced.
    pub fn options(&self) -> &Rebalance {
        &self.rebalance
    }

    /// Leaves the device buffers hold now (0 before the first rebalance).
    pub fn leaf_capacity(&self) -> usize {
        self.bufs.as_ref().map_or(0, |b| b.capacity)
    }

    /// How often the leaf capacity had to grow (each growth re-records the passes).
    pub fn growths(&self) -> usize {
        self.growths
    }

    /// Runs (builds, updates, resumes after a growth) enqueued by replaying a recording,
    /// and recordings made, since the tree was made: a steady sequence of updates records
    /// at most twice (one recording per starting leaf buffer) and replays every run after
    /// the first.
    pub fn replay_stats(&self) -> (usize, usize) {
        (self.replays, self.recorded)
    }

    /// Runs resumed because their slots were spent before convergence (one more status
    /// read each; see `RUN_SLOTS_UPDATE`), since the tree was made.
    pub fn resumes(&self) -> usize {
        self.resumes
    }

    /// Leaves of the current tree (0 before the first rebalance).
    pub fn num_leaves(&self) -> usize {
        self.host.map_or(0, |s| s.leaf_count as usize)
    }

    /// Particles inside the box at the last rebalance (the others have the key `key_end`
    /// and sort last).
    pub fn active(&self) -> usize {
        self.host.map_or(0, |s| s.active as usize)
    }

    /// The report of the last rebalance.
    pub fn convergence(&self) -> Option<Convergence> {
        self.host.map(|s| s.convergence())
    }

    /// Particles of the last keys phase.
    pub fn num_particles(&self) -> usize {
        self.particles.as_ref().map_or(0, |p| p.keys.len())
    }

    // ---- phases ---------------------------------------------------------------------

    /// The keys phase: the key of every particle of `x, y, z` (device-resident positions,
    /// any views of equal length) for this tree's shape in `bbox`, `key_end` for the
    /// particles outside it; without a box, in the particles' bounding box (read back
    /// once). Returns the box used.
    ///
    /// # Errors
    /// [`Error::LengthMismatch`] for views of different lengths; [`Error::EmptyInput`]
    /// for none; [`Error::TooManyPoints`] beyond 32-bit indices; [`Error::InvalidBox`]
    /// for a degenerate box (given, or the bounding box of coincident particles);
    /// [`Error::Unsupported`] for f64 positions on a device without f64 arithmetic, or
    /// binary keys of f64 positions on wgpu; device failures.
    pub fn compute_keys<'a, T: TreeReal>(
        &mut self,
        exec: &E,
        x: impl Into<ViewOf<'a, E, T>>,
        y: impl Into<ViewOf<'a, E, T>>,
        z: impl Into<ViewOf<'a, E, T>>,
        bbox: Option<Aabb<T>>,
    ) -> Result<Aabb<T>> {
        let (x, y, z) = (x.into(), y.into(), z.into());
        let n = x.len();
        orrery_core::executor::check_sfc_keys(n, y.len(), z.len(), n)?;
        if n == 0 {
            return Err(Error::EmptyInput { what: "particles", min: 1 });
        }
        crate::input::check_particle_count(n)?;
        let particles = match self.particles.take() {
            Some(mut p) => {
                if p.keys.len() != n {
                    exec.resize(&mut p.keys, n)?;
                    exec.resize(&mut p.order, n)?;
                }
                p
            }
            None => Particles { keys: exec.alloc(n)?, order: exec.alloc(n)?, sorted: false },
        };
        let mut particles = Particles { sorted: false, ..particles };
        let result = particle_keys(exec, &mut self.scratch, self.shape, (x, y, z), bbox, &mut particles.keys);
        self.particles = Some(particles);
        let bbox = result?;
        if let Criterion::NfCount { .. } = self.rebalance.criterion {
            self.geometry = Some(KeyGeometry::new(self.shape, &bbox)?);
        }
        Ok(bbox)
    }

    /// The sort phase: sorts the keys with their input indices (stable, so equal keys keep
    /// input order: the CPU's order) and counts the particles inside the box.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before a keys phase; device failures.
    pub fn sort(&mut self, exec: &E) -> Result<()> {
        let p = self.particles.as_mut().ok_or_else(|| no_keys("sort"))?;
        exec.iota(&mut p.order, 0)?;
        exec.sort_pairs(&mut p.keys, &mut p.order, 0..64)?;
        exec.lower_bound(&p.keys, &self.end_query, self.status.slice_mut(status::ACTIVE..status::ACTIVE + 1)?)?;
        p.sorted = true;
        Ok(())
    }

    /// The rebalance phase: builds the tree of the sorted keys from the root the first
    /// time (or after a failed run), then updates the previous tree. Runs every pass of
    /// the budget back to back on the device and reads the status block once.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before a sort phase; [`Error::TooManyPoints`] when the
    /// leaves would not fit 32-bit indices; [`Error::InvalidTree`] if the device produced
    /// an inconsistent status (a bug, reported rather than used); device failures.
    pub fn rebalance(&mut self, exec: &E) -> Result<Convergence> {
        let mode = if self.host.is_some() { status::BEGIN_UPDATE } else { status::BEGIN_BUILD };
        self.run(exec, mode)
    }

    /// [`GpuTree::rebalance`] from the root leaf, whatever the current tree.
    ///
    /// # Errors
    /// As [`GpuTree::rebalance`].
    pub fn rebuild(&mut self, exec: &E) -> Result<Convergence> {
        self.run(exec, status::BEGIN_BUILD)
    }

    /// All three phases: keys, sort, rebalance.
    ///
    /// # Errors
    /// As [`GpuTree::compute_keys`], [`GpuTree::sort`] and [`GpuTree::rebalance`].
    pub fn step<'a, T: TreeReal>(
        &mut self,
        exec: &E,
        x: impl Into<ViewOf<'a, E, T>>,
        y: impl Into<ViewOf<'a, E, T>>,
        z: impl Into<ViewOf<'a, E, T>>,
        bbox: Option<Aabb<T>>,
    ) -> Result<Convergence> {
        self.compute_keys(exec, x, y, z, bbox)?;
        self.sort(exec)?;
        self.rebalance(exec)
    }

    // ---- results --------------------------------------------------------------------

    /// The current leaf array, downloaded and validated.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before the first rebalance; [`Error::InvalidTree`] if the
    /// device's array breaks the Cornerstone invariants; device failures.
    pub fn leaves(&self, exec: &E) -> Result<Leaves> {
        let view = self.leaves_view()?;
        let mut keys = vec![0u64; view.len()];
        exec.read(view.buffer(), view.offset(), &mut keys)?;
        Leaves::from_keys(keys, self.layout())
    }

    /// Particles per leaf of the current tree, downloaded.
    ///
    /// # Errors
    /// As [`GpuTree::leaves`].
    pub fn counts(&self, exec: &E) -> Result<Vec<u32>> {
        let view = self.counts_view()?;
        let mut out = vec![0u32; view.len()];
        exec.read(view.buffer(), view.offset(), &mut out)?;
        Ok(out)
    }

    /// `W_i = n_i * S_i` per leaf of the current tree ([`crate::nfcount`]), downloaded:
    /// equal to [`crate::Tree::nf`] of the CPU build.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a LeafCount tree or before the first rebalance;
    /// device failures.
    pub fn nf(&self, exec: &E) -> Result<Vec<u64>> {
        let view = self.nf_view()?;
        let mut out = vec![0u64; view.len()];
        exec.read(view.buffer(), view.offset(), &mut out)?;
        Ok(out)
    }

    /// The stencil geometry of the last keys phase (NFCount only; `None` before it).
    pub fn stencil_geometry(&self) -> Option<KeyGeometry> {
        self.geometry
    }

    /// The sorted keys of the last sort (removed particles last, with `key_end`).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before a sort; device failures.
    pub fn sorted_keys(&self, exec: &E) -> Result<Vec<u64>> {
        exec.download(&self.sorted()?.keys)
    }

    /// `order[s]`: the input index of the particle in sorted slot `s`.
    ///
    /// # Errors
    /// As [`GpuTree::sorted_keys`].
    pub fn order(&self, exec: &E) -> Result<Vec<u32>> {
        exec.download(&self.sorted()?.order)
    }

    /// The current leaf array on the device (`L + 1` keys).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before the first rebalance.
    pub fn leaves_view(&self) -> Result<View<'_, u64, E::Buffer<u64>>> {
        let (bufs, s) = self.built()?;
        bufs.leaves[s.current as usize].slice(0..s.leaf_count as usize + 1)
    }

    /// The particle counts of the current leaves on the device (`L` values).
    ///
    /// # Errors
    /// As [`GpuTree::leaves_view`].
    pub fn counts_view(&self) -> Result<View<'_, u32, E::Buffer<u32>>> {
        let (bufs, s) = self.built()?;
        bufs.counts.slice(0..s.leaf_count as usize)
    }

    /// The `W` values of the current leaves on the device (`L` values, NFCount only).
    ///
    /// # Errors
    /// As [`GpuTree::nf`].
    pub fn nf_view(&self) -> Result<View<'_, u64, E::Buffer<u64>>> {
        let (bufs, s) = self.built()?;
        match &bufs.nf {
            Some(nf) => nf.nf_view(bufs.capacity, s.current as usize, s.leaf_count as usize),
            None => Err(Error::InvalidArgument {
                what: "GPU tree NF values",
                reason: "the tree is rebalanced with LeafCount, which computes no NF values".to_owned(),
            }),
        }
    }

    /// The sorted keys on the device.
    ///
    /// # Errors
    /// As [`GpuTree::sorted_keys`].
    pub fn keys_view(&self) -> Result<View<'_, u64, E::Buffer<u64>>> {
        Ok(self.sorted()?.keys.view())
    }

    /// The sorted order on the device.
    ///
    /// # Errors
    /// As [`GpuTree::sorted_keys`].
    pub fn order_view(&self) -> Result<View<'_, u32, E::Buffer<u32>>> {
        Ok(self.sorted()?.order.view())
    }

    /// The TreeView of the current tree, built on the device by `builder` from the leaf
    /// array, the leaf starts (the exclusive scan of the counts: the leaves tile the key
    /// range in order, so leaf `i` begins where the particles of the leaves before it
    /// end) and the leaf count the last rebalance read back, so it costs no further host
    /// read. `geometry` must be of this tree's shape (the box the keys were computed in).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] before the first rebalance or for a geometry of other
    /// keys; as [`GpuTreeViewBuilder::build`].
    pub fn build_view<'b, T: GpuViewReal>(
        &mut self,
        exec: &E,
        builder: &'b mut GpuTreeViewBuilder<E, T>,
        geometry: &Geometry<T>,
    ) -> Result<&'b DeviceTreeView<E, T>> {
        geometry.check_fits(self.layout())?;
        let leaves = self.built()?.1.leaf_count as usize;
        let particles = self.sorted()?.keys.len();
        let mut starts = match self.starts.take() {
            Some(b) if b.len() > leaves => b,
            _ => exec.alloc(with_headroom(leaves + 1))?,
        };
        exec.exclusive_scan(self.counts_view()?, starts.slice_mut(0..leaves + 1)?)?;
        let built = {
            let input = ViewInput {
                leaves: self.leaves_view()?,
                leaf_count: LeafCount::Host(leaves),
                leaf_starts: starts.slice(0..leaves + 1)?,
                particle_bound: particles,
                nf: None,
            };
            builder.build(exec, geometry, &input)
        };
        self.starts = Some(starts);
        built
    }

    // ---- internals ------------------------------------------------------------------

    fn sorted(&self) -> Result<&Particles<E>> {
        match &self.particles {
            Some(p) if p.sorted => Ok(p),
            _ => Err(no_keys("sorted keys")),
        }
    }

    fn built(&self) -> Result<(&LeafBuffers<E>, Status)> {
        match (&self.bufs, self.host) {
            (Some(b), Some(s)) => Ok((b, s)),
            _ => Err(Error::InvalidArgument {
                what: "GPU tree",
                reason: "no tree yet: run a rebalance (or a step) first".to_owned(),
            }),
        }
    }

    /// The first capacity: the caller's, or an estimate (a converged LeafCount tree has
    /// typically fewer than 4 leaves per bucket of particles; an NFCount leaf of `n`
    /// particles has `W >= n^2`, so its leaves hold about `sqrt(threshold / 27)` particles
    /// in a resolved density, used as the bucket), with headroom.
    fn first_capacity(&self, n: usize) -> usize {
        self.initial_capacity.unwrap_or_else(|| {
            let bucket = match self.rebalance.criterion {
                Criterion::LeafCount { bucket } => u64::from(bucket),
                Criterion::NfCount { threshold, .. } => (threshold / 27).isqrt().max(1),
            };
            let bucket = usize::try_from(bucket).unwrap_or(usize::MAX);
            with_headroom(4 * n.div_ceil(bucket) + 8)
        })
    }

    fn run(&mut self, exec: &E, mode: u32) -> Result<Convergence> {
        let result = self.run_inner(exec, mode);
        if result.is_err() {
            // The device state is unknown: the next rebalance builds from the root.
            self.host = None;
        }
        result
    }

    fn run_inner(&mut self, exec: &E, mut mode: u32) -> Result<Convergence> {
        let n = self.sorted()?.keys.len();
        let nf = matches!(self.rebalance.criterion, Criterion::NfCount { .. });
        if self.bufs.is_none() {
            self.bufs = Some(LeafBuffers::new(exec, self.first_capacity(n), nf)?);
            self.geometry_written = None;
        }
        let mut parity = if mode == status::BEGIN_BUILD { 0 } else { self.host.map_or(0, |s| s.current as usize) };
        // Passes done before this run (a resume keeps them) and the slots of this run:
        // a few (RUN_SLOTS_*), doubled on each resume, never past the caller's cap.
        let mut done = 0u32;
        let mut slots = if mode == status::BEGIN_BUILD { RUN_SLOTS_BUILD } else { RUN_SLOTS_UPDATE };
        loop {
            let bufs = self.bufs.as_mut().expect("allocated above");
            let shape = RunShape {
                n: n as u32,
                capacity: bufs.capacity as u32,
                layout: self.shape.layout(),
                criterion: self.rebalance.criterion,
                max_passes: slots.min(self.rebalance.max_passes - done),
                hilbert: self.geometry.map_or(0, hilbert_flag),
            };
            if let Some(nf) = bufs.nf.as_mut() {
                let geometry = self.geometry.ok_or_else(|| no_keys("NFCount rebalance"))?;
                if self.geometry_written != Some(geometry) {
                    exec.write(&mut nf.geom, 0, &geometry_words(geometry))?;
                    self.geometry_written = Some(geometry);
                }
            }
            begin(exec, bufs, &mut self.status, mode, shape.layout)?;
            self.enqueue(exec, &shape, parity)?;
            let words = exec.wait(exec.read_async(&self.status)?)?;
            let st = Status::from_words(&words);
            if !st.overflow {
                if st.state != status::DONE || st.leaf_count as usize > shape.capacity as usize {
                    return Err(Error::InvalidTree {
                        index: 0,
                        reason: format!("the device run ended in an inconsistent status {st:?}"),
                    });
                }
                self.host = Some(st);
                if st.converged || st.passes >= self.rebalance.max_passes {
                    return Ok(st.convergence());
                }
                // The run's slots are spent with passes left: resume from the current
                // tree (its counts are the final count's) with twice the slots.
                done = st.passes;
                slots = slots.saturating_mul(2);
                parity = st.current as usize;
                mode = status::BEGIN_RESUME;
                self.resumes += 1;
                continue;
            }
            // The proposal did not fit: nothing was written, the tree of the last
            // completed pass is current. Grow outside any recording and resume.
            let needed = st.needed as usize;
            if needed <= shape.capacity as usize {
                return Err(Error::InvalidTree {
                    index: 0,
                    reason: format!("the device reported an overflow of {needed} leaves within the capacity"),
                });
            }
            let bufs = self.bufs.as_mut().expect("allocated above");
            bufs.grow(exec, with_headroom(needed), st.leaf_count as usize, st.current as usize)?;
            self.geometry_written = None;
            self.recordings.clear();
            self.growths += 1;
            done = st.passes;
            parity = st.current as usize;
            mode = status::BEGIN_RESUME;
        }
    }

    /// Enqueues the passes of a run from leaf buffer `parity`: replays its recording
    /// (recording it first when the shape changed), or enqueues them directly (before the
    /// first direct run, so that a recording compiles and loads nothing, and when replay
    /// is off).
    fn enqueue(&mut self, exec: &E, shape: &RunShape, parity: usize) -> Result<()> {
        let keys = match &self.particles {
            Some(p) if p.sorted => &p.keys,
            _ => return Err(no_keys("rebalance")),
        };
        let bufs = self.bufs.as_mut().ok_or_else(|| no_keys("rebalance"))?;
        let status = &mut self.status;
        if !self.replay || !self.warm {
            enqueue_run(exec, shape, parity, keys, bufs, status)?;
            self.warm = true;
            return Ok(());
        }
        let at = if let Some(at) = self.recordings.iter().position(|r| r.shape == *shape) {
            at
        } else {
            if self.recordings.len() == MAX_RECORDED_SHAPES {
                self.recordings.remove(0);
            }
            self.recordings.push(Recordings { shape: *shape, by_parity: [None, None] });
            self.recordings.len() - 1
        };
        let recs = &mut self.recordings[at];
        let mut retried = false;
        loop {
            let rec = match &mut recs.by_parity[parity] {
                Some(rec) => rec,
                slot => {
                    exec.reserve(&Reserve {
                        scan: shape.capacity as usize,
                        sort_pairs: shape.n as usize,
                        reduce: shape.n as usize,
                        ..Reserve::default()
                    })?;
                    let rec = exec.record(&mut || enqueue_run(exec, shape, parity, keys, bufs, status))?;
                    self.recorded += 1;
                    slot.insert(rec)
                }
            };
            match exec.replay(rec) {
                Ok(()) => {
                    self.replays += 1;
                    return Ok(());
                }
                // A buffer or scratch region it used was reallocated (e.g. a larger sort
                // grew the executor's scratch): record again, once.
                Err(Error::Recording { .. }) if !retried => {
                    recs.by_parity = [None, None];
                    retried = true;
                }
                other => return other,
            }
        }
    }
}

fn no_keys(what: &'static str) -> Error {
    Error::InvalidArgument { what, reason: "run the keys phase (and the sort) first".to_owned() }
}

/// Checks that an NFCount geometry describes the keys of `shape`: its layout, and for an
/// octree its curve.
fn check_geometry(shape: Shape, geometry: KeyGeometry) -> Result<()> {
    geometry.check_layout(shape.layout())?;
    if let (Shape::Octree(curve), KeyGeometry::Octree(other)) = (shape, geometry)
        && curve != other
    {
        return Err(Error::InvalidArgument {
            what: "NFCount geometry",
            reason: format!("the stencil geometry is for {other:?} keys, the tree's keys are {curve:?} keys"),
        });
    }
    Ok(())
}
