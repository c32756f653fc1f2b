//! The v2 contract beyond the primitives: typed and indirect launches, dynamic shared
//! memory, defines, pending reads, forks, reserve, and record/replay (an update-shaped
//! sequence replayed with changed data, compared with the CPU each time; the operations
//! a recording refuses; a replay after a buffer was dropped).

use orrery_backend_wgpu::{WgpuExecutor, WgpuOptions};
use orrery_core::gpu::{Define, GpuExecutor, KernelArg, KernelSource, LaunchConfig, buf};
use orrery_core::{CpuExecutor, DeviceCount, Error, Executor, Reserve, Slice, kernels};

use crate::common::{coarse, each, executor, random_u32, rng};

const MARK: KernelSource = KernelSource::new(
    "test/v2_mark",
    "",
    r"
//#include core/common
struct P {
    off_kept: u32,
    off_kept_n: u32,
    off_marks: u32,
}
@group(0) @binding(0) var<storage, read> kept: array<u32>;
@group(0) @binding(1) var<storage, read> kept_n: array<u32>;
@group(0) @binding(2) var<storage, read_write> marks: array<u32>;
@group(0) @binding(3) var<uniform> p: P;

// marks[i] = 2 * kept[i] + 1 for i < kept_n[0]; launched indirectly, one thread per item.
@compute @workgroup_size(WORKGROUP_SIZE)
fn mark(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = linear_block(wid, nwg) * WORKGROUP_SIZE + lid;
    if i < kept_n[p.off_kept_n] {
        marks[p.off_marks + i] = kept[p.off_kept + i] * 2u + 1u;
    }
}

struct S {
    n: u32,
    factor: f32,
}
@group(0) @binding(0) var<storage, read> sx: array<f32>;
@group(0) @binding(1) var<storage, read_write> sy: array<f32>;
@group(0) @binding(2) var<uniform> s: S;

@compute @workgroup_size(WORKGROUP_SIZE)
fn scale(@builtin(global_invocation_id) gid: vec3<u32>) {
    if gid.x < s.n {
        sy[gid.x] = sx[gid.x] * s.factor;
    }
}
",
);

kernels! {
    module = MARK;
    fn mark(read kept: u32, read kept_n: u32, write marks: u32);
    fn scale(read sx: f32, write sy: f32, scalar n: u32, scalar factor: f32);
}

mod wrong {
    use super::MARK;
    orrery_core::kernels! {
        module = MARK;
        /// `sy` is read_write in WGSL.
        pub fn scale(read sx: f32, read sy: f32, scalar n: u32, scalar factor: f32);
    }
    pub mod types {
        use super::super::MARK;
        orrery_core::kernels! {
            module = MARK;
            /// `factor` is f32 in WGSL.
            pub fn scale(read sx: f32, write sy: f32, scalar n: u32, scalar factor: u32);
        }
    }
    pub mod count {
        use super::super::MARK;
        orrery_core::kernels! {
            module = MARK;
            /// One scalar missing.
            pub fn scale(read sx: f32, write sy: f32, scalar n: u32);
        }
    }
}

#[test]
fn typed_kernels_are_checked_against_the_reflected_bindings() {
    each(|label, e| {
        let x = e.upload(&[1.0f32, 2.0, 3.0]).unwrap();
        let mut y = e.alloc::<f32>(3).unwrap();
        scale(e, &LaunchConfig::per_item(3, 64), &x, &mut y, 3, 2.0).unwrap();
        assert_eq!(e.download(&y).unwrap(), [2.0, 4.0, 6.0], "{label}");
        let r = wrong::scale(e, &LaunchConfig::per_item(3, 64), &x, &y, 3, 2.0);
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        let r = wrong::types::scale(e, &LaunchConfig::per_item(3, 64), &x, &mut y, 3, 2);
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        let r = wrong::count::scale(e, &LaunchConfig::per_item(3, 64), &x, &mut y, 3);
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        // The untyped launch checks too: a read view for a read_write binding.
        let r = e.launch_with(
            &MARK,
            "scale",
            &LaunchConfig::per_item(3, 64),
            &[KernelArg::read(x.view()), KernelArg::read(y.view()), KernelArg::scalar(3u32), KernelArg::scalar(2.0f32)],
        );
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
    });
}

#[test]
fn an_unaligned_view_needs_an_off_field() {
    let Some(e) = coarse() else { return };
    let x = e.upload(&[1.0f32; 8]).unwrap();
    let mut y = e.alloc::<f32>(8).unwrap();
    // `scale` has no off_sx: a view at element 1 cannot reach it.
    let r = scale(e, &LaunchConfig::per_item(3, 64), x.slice(1..4).unwrap(), &mut y, 3, 2.0);
    match r {
        Err(Error::KernelSignature { reason, .. }) => assert!(reason.contains("off_sx"), "{reason}"),
        other => panic!("{other:?}"),
    }
    // `mark` has off_* fields: views anywhere work.
    let kept = e.upload(&[0u32, 5, 6, 7, 0]).unwrap();
    let n = e.upload(&[9u32, 3]).unwrap();
    let mut marks = e.upload(&[0u32; 6]).unwrap();
    mark(
        e,
        &LaunchConfig::blocks(1, 64),
        kept.slice(1..4).unwrap(),
        n.slice(1..2).unwrap(),
        marks.slice_mut(2..5).unwrap(),
    )
    .unwrap();
    assert_eq!(e.download(&marks).unwrap(), [0, 0, 11, 13, 15, 0]);
}

const SHARED: KernelSource = KernelSource::new(
    "test/v2_shared",
    "",
    r"
override WORKGROUP_SIZE: u32;
override DYNAMIC_SHARED_WORDS: u32;
var<workgroup> dynamic: array<u32, DYNAMIC_SHARED_WORDS>;
@group(0) @binding(0) var<storage, read_write> out: array<u32>;

// out[0] = the dynamic array's length; the last word round-trips through it.
@compute @workgroup_size(WORKGROUP_SIZE)
fn size(@builtin(local_invocation_index) lid: u32) {
    if lid == 0u {
        dynamic[DYNAMIC_SHARED_WORDS - 1u] = 77u;
        out[0] = arrayLength(&out) * 0u + DYNAMIC_SHARED_WORDS;
        out[1] = dynamic[DYNAMIC_SHARED_WORDS - 1u];
    }
}
",
);

static DEFS_A: [Define; 2] = [Define { name: "SCALE", value: "3u" }, Define { name: "FLAG", value: "" }];
static DEFS_B: [Define; 1] = [Define { name: "SCALE", value: "5u" }];
const DEFINED: &str = r"
@group(0) @binding(0) var<storage, read_write> out: array<u32>;
@compute @workgroup_size(1)
fn defined() {
    out[0] = SCALE;
//#if FLAG
    out[1] = 1u;
//#else
    out[1] = 2u;
//#endif
}
";

#[test]
fn shared_bytes_set_the_override_and_defines_key_the_cache() {
    each(|label, e| {
        let out = e.alloc::<u32>(2).unwrap();
        for bytes in [4u32, 1024, 4096] {
            let cfg = LaunchConfig::blocks(1, 64).with_shared_bytes(bytes);
            e.launch_with(&SHARED, "size", &cfg, &[buf::<WgpuExecutor, u32>(&out)]).unwrap();
            assert_eq!(e.download(&out).unwrap(), [bytes / 4, 77], "{label}");
        }
        let cfg = LaunchConfig::blocks(1, 64).with_shared_bytes(64);
        let r = e.launch_with(&MARK, "scale", &cfg, &[]);
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        let a = KernelSource::new("test/v2_defined", "", DEFINED).with_defines(&DEFS_A);
        let b = KernelSource::new("test/v2_defined", "", DEFINED).with_defines(&DEFS_B);
        e.launch_with(&a, "defined", &LaunchConfig::blocks(1, 1), &[buf::<WgpuExecutor, u32>(&out)]).unwrap();
        assert_eq!(e.download(&out).unwrap(), [3, 1], "{label}");
        e.launch_with(&b, "defined", &LaunchConfig::blocks(1, 1), &[buf::<WgpuExecutor, u32>(&out)]).unwrap();
        assert_eq!(e.download(&out).unwrap(), [5, 2], "{label}");
    });
}

#[test]
fn pending_reads_complete_in_any_order_and_forks_share_the_queue() {
    each(|label, e| {
        let mut a = e.alloc::<u32>(100).unwrap();
        e.iota(&mut a, 0).unwrap();
        let first = e.read_async(a.slice(3..7).unwrap()).unwrap();
        e.iota(&mut a, 1000).unwrap();
        let second = e.read_async(&a).unwrap();
        let empty = e.read_async(a.slice(5..5).unwrap()).unwrap();
        assert_eq!(e.wait(second).unwrap(), (1000..1100).collect::<Vec<u32>>(), "{label}");
        assert_eq!(e.wait(first).unwrap(), [3, 4, 5, 6], "{label}: the first read saw the work before it only");
        assert!(e.wait(empty).unwrap().is_empty());
        let f = e.fork().unwrap();
        f.fill(&mut a, 9).unwrap();
        f.signal().unwrap();
        e.wait_for(&()).unwrap();
        assert_eq!(e.download(&a).unwrap(), vec![9; 100], "{label}");
        let limits = e.limits();
        assert!(limits.replay && limits.view_alignment >= 4 && limits.max_threads_per_block >= 256, "{label}");
        assert_eq!(limits.subgroup_size, e.capabilities().subgroup_size);
    });
}

/// The update-shaped step, run directly (the CPU) or recorded (wgpu): a counted scan of
/// the live elements, a counted compaction of the flagged ones, indirect arguments for
/// the kept count and an indirect launch over them (the CPU has no launches: its marks
/// are computed on the host from its compaction).
struct Step<E: Executor> {
    live: E::Buffer<u32>,
    input: E::Buffer<u32>,
    flags: E::Buffer<u32>,
    offsets: E::Buffer<u32>,
    kept: E::Buffer<u32>,
    kept_n: E::Buffer<u32>,
    args: E::Buffer<u32>,
    marks: E::Buffer<u32>,
}

const BOUND: usize = 5000;

impl<E: Executor> Step<E> {
    fn new(e: &E) -> Self {
        Self {
            live: e.alloc(2).unwrap(),
            input: e.alloc(BOUND + 1).unwrap(),
            flags: e.alloc(BOUND).unwrap(),
            offsets: e.alloc(BOUND + 2).unwrap(),
            kept: e.alloc(BOUND).unwrap(),
            kept_n: e.alloc(1).unwrap(),
            args: e.alloc(5).unwrap(),
            marks: e.alloc(BOUND).unwrap(),
        }
    }

    /// New data for one step (outside the recording).
    fn load(&mut self, e: &E, seed: u64, live: u32) {
        let mut r = rng(seed);
        let input: Vec<u32> = random_u32(&mut r, BOUND + 1).iter().map(|v| v % 1000).collect();
        let flags: Vec<u32> = random_u32(&mut r, BOUND).iter().map(|v| v % 3).collect();
        e.write(&mut self.live, 0, &[7, live]).unwrap();
        e.write(&mut self.input, 0, &input).unwrap();
        e.write(&mut self.flags, 0, &flags).unwrap();
        e.fill(&mut self.offsets, 0xffff_ffff).unwrap();
        e.fill(&mut self.marks, 0).unwrap();
    }

    fn primitives(&mut self, e: &E) -> orrery_core::Result<()> {
        let count = DeviceCount::new(self.live.slice(1..2)?, BOUND)?;
        e.exclusive_scan_counted(self.input.slice(1..BOUND + 1)?, count, self.offsets.slice_mut(1..BOUND + 2)?)?;
        e.compact_counted(self.input.slice(0..BOUND)?, &self.flags, count, &mut self.kept, &mut self.kept_n)
    }
}

fn gpu_step(e: &WgpuExecutor, s: &mut Step<WgpuExecutor>) -> orrery_core::Result<()> {
    s.primitives(e)?;
    let kept_count = DeviceCount::new(&s.kept_n, BOUND)?;
    e.indirect_args(kept_count, 64, s.args.slice_mut(1..5)?)?;
    let max_blocks = BOUND.div_ceil(64) as u32;
    let cfg = LaunchConfig::indirect(s.args.slice(1..5)?, max_blocks, 64)?;
    mark(e, &cfg, &s.kept, &s.kept_n, &mut s.marks)
}

#[test]
fn a_recorded_update_step_replays_with_new_data_and_matches_the_cpu() {
    each(|label, e| {
        let c = CpuExecutor::new();
        let mut g = Step::new(e);
        let mut h = Step::new(&c);
        e.reserve(&Reserve { scan: BOUND, ..Reserve::default() }).unwrap();
        let recording = e.record(&mut || gpu_step(e, &mut g)).unwrap();
        for (round, live) in [(0u64, 4321u32), (1, 17), (2, 99_999)] {
            g.load(e, round, live);
            h.load(&c, round, live);
            e.replay(&recording).unwrap();
            let status = e.read_async(&g.kept_n).unwrap();
            h.primitives(&c).unwrap();
            let n = e.wait(status).unwrap()[0];
            assert_eq!(n, c.download(&h.kept_n).unwrap()[0], "{label} round {round}: kept count");
            assert_eq!(e.download(&g.offsets).unwrap(), c.download(&h.offsets).unwrap(), "{label} round {round}");
            let kept = c.download(&h.kept).unwrap();
            assert_eq!(&e.download(&g.kept).unwrap()[..n as usize], &kept[..n as usize], "{label} round {round}");
            let mut marks = vec![0u32; BOUND];
            for i in 0..n as usize {
                marks[i] = kept[i] * 2 + 1;
            }
            assert_eq!(e.download(&g.marks).unwrap(), marks, "{label} round {round}: indirect launch");
        }
        // Replaying after a buffer was dropped is refused, not a fault.
        drop(g);
        match e.replay(&recording) {
            Err(Error::Recording { reason, .. }) => assert!(reason.contains("dropped"), "{label}: {reason}"),
            other => panic!("{label}: {other:?}"),
        }
    });
}

#[test]
fn recordings_refuse_reads_allocations_and_scratch_growth() {
    if executor().is_none() {
        return;
    }
    // A private executor: its scratch starts empty.
    let e = WgpuExecutor::with_options(&WgpuOptions::from_env().unwrap()).unwrap();
    let mut a = e.upload(&vec![1u32; 10_000]).unwrap();
    let mut out = e.alloc::<u32>(10_001).unwrap();
    let is_recording = |r: orrery_core::Result<_>, what: &str| match r {
        Err(Error::Recording { reason, .. }) => reason,
        other => panic!("{what}: {other:?}"),
    };
    is_recording(e.record(&mut || e.download(&a).map(|_| ())), "download");
    is_recording(e.record(&mut || e.read_async(&a).map(|_| ())), "read_async");
    is_recording(e.record(&mut || e.alloc::<u32>(4).map(|_| ())), "alloc");
    is_recording(e.record(&mut || e.synchronize()), "synchronize");
    is_recording(e.record(&mut || e.resize(&mut a, 20_000)), "resize");
    let reason = is_recording(e.record(&mut || e.exclusive_scan(&a, &mut out)), "scratch growth");
    assert!(reason.contains("reserve"), "{reason}");
    // Nested recordings are refused; the executor records normally afterwards.
    is_recording(e.record(&mut || e.record(&mut || Ok(())).map(|_| ())), "nested");
    e.reserve(&Reserve { scan: 10_000, ..Reserve::default() }).unwrap();
    let recording = e.record(&mut || e.exclusive_scan(&a, &mut out)).unwrap();
    e.fill(&mut out, 0).unwrap();
    e.replay(&recording).unwrap();
    let got = e.download(&out).unwrap();
    assert_eq!(got[10_000], 10_000);
    assert_eq!(got[1234], 1234);
    // A resize beyond the capacity reallocates: the recording's buffer is gone.
    e.resize(&mut out, 50_000).unwrap();
    assert!(matches!(e.replay(&recording), Err(Error::Recording { .. })));
}

#[test]
fn a_wrong_buffer_after_a_scalar_is_refused_by_the_typed_api_too() {
    each(|label, e| {
        let x = e.upload(&[1.0f32]).unwrap();
        let r = e.launch_with(
            &MARK,
            "scale",
            &LaunchConfig::blocks(1, 64),
            &[KernelArg::scalar(1u32), KernelArg::read(x.view())],
        );
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
    });
}
