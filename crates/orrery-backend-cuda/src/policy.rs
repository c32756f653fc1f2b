//! Tuning constants: the one place where launch shapes are chosen.
//!
//! Kernels receive these values as `-D` defines when NVRTC compiles them (each kernel
//! file refuses to compile without the defines it needs), and the host uses the same
//! values to size grids and scratch memory, so the two can never disagree. A policy is
//! chosen per compute capability by [`Policy::for_compute_capability`]; every field
//! states why it has its value. Changing a field changes the compiled modules' cache
//! key, so stale binaries are never loaded.
//!
//! The measurements behind these choices (GPU, commit, date) are in
//! `docs/performance/primitives.md`: the current figures in its Current table, the first
//! sweeps in its section "First CUDA runs"; `NOTES.md` explains them.

/// Launch shapes of the built-in kernels (`kernels/core/*.cu`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Policy {
    /// Threads per block of the scan and the compaction. 256 = 8 warps: enough warps per
    /// tile to hide the look-back of warp 0, few enough that the block-level combine is
    /// one pass over 8 shared words. 256 x 8 vectors was the fastest tile shape of the
    /// first H200 sweep, ahead of 512 x 8 and 128 x 16 (primitives.md, "First CUDA runs").
    pub scan_threads: u32,
    /// 16-byte vectors per thread and tile of the scan (4 u32 each). 8 (32 KB tiles)
    /// halves the number of tiles, and with it the per-tile latency of drawing an id and
    /// looking back, against 4: the first H200 sweep's largest gain; 16 was slower (fewer
    /// resident blocks), and 6 or 12 gained nothing in the `ORRERY_CUDA_POLICY` sweep
    /// (primitives.md).
    pub scan_vecs: u32,
    /// Look-back window of the scan and the compaction, in status words per lane (the
    /// window is 32 times this many predecessor tiles per L2 round trip). Wider windows
    /// (2 and 4 words) were slower on the H200 (primitives.md, "First CUDA runs"): the
    /// nearest INCLUSIVE tile is usually within 32.
    pub scan_lookback_words: u32,
    /// Minimum resident blocks per SM asked of ptxas for the scan and compaction
    /// (`__launch_bounds__`). 4 caps the 256 x 8 kernel at 64 registers (ptxas alone
    /// chose 72, 3 blocks per SM): one more tile in flight per SM hides the per-tile
    /// latency. H200, 256M u32, one run (commit f5eb65d6d969): 1 -> 0.769 ms (65.8% of
    /// copy), 4 -> 0.719 ms (70.4%, the goal being 70%); the other shapes of that sweep
    /// were slower (primitives.md).
    pub scan_min_blocks: u32,
    /// Threads per block of the reductions (8 warps; see `scan_threads`).
    pub reduce_threads: u32,
    /// 16-byte vectors per thread of a reduction tile (16 KB of input per block). The tile
    /// size also fixes the floating-point summation order, so it must not depend on the
    /// device: it is the same in every policy.
    pub reduce_vecs: u32,
    /// Threads per block of the radix-sort pass. Must be 256: the kernel has one thread
    /// per 8-bit digit in its look-back and digit-offset scan.
    pub sort_threads: u32,
    /// Keys per thread of a radix-sort tile (tile = 256 * items pairs). 16 gives 4096-pair
    /// tiles: 32 KB of shared memory for the key exchange (the static 48 KB limit holds
    /// the exchange, 8 per-warp digit counters and the digit bases), and few enough tiles
    /// that the per-tile look-back (256 status words) costs about 2% of a pass's traffic.
    pub sort_items: u32,
    /// Minimum resident blocks per SM requested from ptxas for the sort pass
    /// (`__launch_bounds__`). 3 caps the kernel at 80 registers (36 bytes of spills) and
    /// beats 2 (128 registers, no spills): 64M pairs, 64 bits, H200: 7.10 ms against
    /// 7.80 ms (primitives.md, "First CUDA runs"; today's sort times are in its Current
    /// table).
    pub sort_min_blocks: u32,
    /// Threads per block of the radix histogram (one read of the keys for all passes).
    pub sort_hist_threads: u32,
    /// Keys per thread per round of the histogram: 8 independent 8-byte loads in flight.
    pub sort_hist_items: u32,
    /// Resident histogram blocks per SM in the grid-stride launch: enough to saturate
    /// memory while keeping the per-block merge of 8 x 256 counters (global atomics) small.
    pub sort_hist_blocks_per_sm: u32,
    /// Threads per block of gather, scatter, fill and iota.
    pub move_threads: u32,
    /// Elements per thread of gather, scatter, fill and iota: 4 independent loads in
    /// flight per thread before the first store.
    pub move_items: u32,
    /// Threads per block of the SFC key kernels.
    pub sfc_threads: u32,
    /// Points per thread per round of the SFC key kernels (loads of all of them are issued
    /// before the key arithmetic).
    pub sfc_items: u32,
    /// Blocks per SM of the grid-stride SFC launch: each block builds its 3 KB Hilbert
    /// table once, so fewer, longer-lived blocks amortise it; 8 x 256 threads fill an SM.
    pub sfc_blocks_per_sm: u32,
    /// Curve levels per table lookup of the Hilbert kernel: 3 (`sfc_hilbert3_*`, default)
    /// or 1 (`sfc_hilbert1_*`, the baseline); both give the same keys. 64M f32 points on
    /// the H200: 0.431-0.436 ms (73-74% of copy bandwidth) against 0.747 ms
    /// (primitives.md, "First CUDA runs").
    pub hilbert_levels: u32,
}

impl Policy {
    /// The policy for a device of compute capability `major.minor`. Only Hopper (9.0)
    /// has been measured; other architectures get the same shapes, which are valid on
    /// every architecture from Volta (7.0) on.
    pub const fn for_compute_capability(_major: u32, _minor: u32) -> Self {
        Self::HOPPER
    }

    /// The shapes chosen on the H200 (see the field documentation).
    pub const HOPPER: Self = Self {
        scan_threads: 256,
        scan_vecs: 8,
        scan_lookback_words: 1,
        scan_min_blocks: 4,
        reduce_threads: 256,
        reduce_vecs: 4,
        sort_threads: 256,
        sort_items: 16,
        sort_min_blocks: 3,
        sort_hist_threads: 256,
        sort_hist_items: 8,
        sort_hist_blocks_per_sm: 4,
        move_threads: 256,
        move_items: 4,
        sfc_threads: 256,
        sfc_items: 4,
        sfc_blocks_per_sm: 8,
        hilbert_levels: 3,
    };

    /// Elements (u32) per scan / compaction tile.
    pub const fn scan_tile(&self) -> u32 {
        self.scan_threads * self.scan_vecs * 4
    }

    /// Elements of `elem_size` bytes per reduction tile.
    pub const fn reduce_tile(&self, elem_size: u32) -> u32 {
        self.reduce_threads * self.reduce_vecs * (16 / elem_size)
    }

    /// Pairs per radix-sort tile.
    pub const fn sort_tile(&self) -> u32 {
        self.sort_threads * self.sort_items
    }

    /// Elements per block of the movement kernels.
    pub const fn move_block_items(&self) -> u32 {
        self.move_threads * self.move_items
    }

    /// The `-D` options that hand this policy to the kernels.
    pub fn defines(&self) -> Vec<String> {
        [
            ("SCAN_THREADS", self.scan_threads),
            ("SCAN_VECS", self.scan_vecs),
            ("SCAN_LOOKBACK_WORDS", self.scan_lookback_words),
            ("SCAN_MIN_BLOCKS", self.scan_min_blocks),
            ("REDUCE_THREADS", self.reduce_threads),
            ("REDUCE_VECS", self.reduce_vecs),
            ("SORT_THREADS", self.sort_threads),
            ("SORT_ITEMS", self.sort_items),
            ("SORT_MIN_BLOCKS", self.sort_min_blocks),
            ("SORT_HIST_THREADS", self.sort_hist_threads),
            ("SORT_HIST_ITEMS", self.sort_hist_items),
            ("MOVE_THREADS", self.move_threads),
            ("MOVE_ITEMS", self.move_items),
            ("SFC_THREADS", self.sfc_threads),
            ("SFC_ITEMS", self.sfc_items),
        ]
        .iter()
        .map(|(name, value)| format!("-D{name}={value}"))
        .collect()
    }
}

/// Environment variable with tuning overrides, `name=value` pairs separated by commas
/// (e.g. `scan_vecs=6,scan_min_blocks=4`); read by [`crate::CudaExecutor::from_env`].
pub const POLICY_ENV: &str = "ORRERY_CUDA_POLICY";

impl Policy {
    /// This policy with the overrides of [`POLICY_ENV`] applied (for tuning sweeps
    /// without a rebuild): the scan's and the sort's shapes.
    ///
    /// # Errors
    /// [`orrery_core::Error::InvalidArgument`] naming a malformed pair or unknown field.
    pub fn with_env_overrides(mut self) -> orrery_core::Result<Self> {
        let Ok(spec) = std::env::var(POLICY_ENV) else { return Ok(self) };
        for pair in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            let bad = || orrery_core::Error::InvalidArgument {
                what: POLICY_ENV,
                reason: format!("{pair:?} is not name=value with a known scan or sort field and a positive integer"),
            };
            let (name, value) = pair.split_once('=').ok_or_else(bad)?;
            let name = name.trim();
            let value: u32 = value.trim().parse().ok().filter(|&v| v > 0).ok_or_else(bad)?;
            match name {
                "sort_items" => self.sort_items = value,
                "sort_min_blocks" => self.sort_min_blocks = value,
                "sort_hist_items" => self.sort_hist_items = value,
                "sort_hist_blocks_per_sm" => self.sort_hist_blocks_per_sm = value,
                "scan_threads" => self.scan_threads = value,
                "scan_vecs" => self.scan_vecs = value,
                "scan_lookback_words" => self.scan_lookback_words = value,
                "scan_min_blocks" => self.scan_min_blocks = value,
                _ => return Err(bad()),
            }
        }
        Ok(self)
    }
}

impl Default for Policy {
    fn default() -> Self {
        Self::HOPPER
    }
}
