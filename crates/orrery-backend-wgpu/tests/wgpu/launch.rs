//! GpuExecutor: user kernels through the shared binding convention.

use orrery_backend_wgpu::WgpuExecutor;
use orrery_core::gpu::{GpuExecutor, KernelArg, KernelSource, Launch, Scalar, buf};
use orrery_core::{Error, Executor};

use crate::common::each;

const KERNELS: KernelSource = KernelSource {
    name: "test/launch",
    cuda: "",
    defines: &[],
    wgsl: r"
//#include core/common

struct AxpyParams {
    n: u32,
    offset: vec2<u32>,
    a: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> tag: array<vec2<u32>>;
@group(0) @binding(3) var<uniform> p: AxpyParams;

// y[i] += a * x[i]; tag[i] = offset + i (u64 arithmetic on word pairs).
@compute @workgroup_size(WORKGROUP_SIZE)
fn axpy(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = gid.x + gid.y * nwg.x * WORKGROUP_SIZE;
    if i < p.n {
        y[i] += p.a * x[i];
        tag[i] = u64_add(p.offset, vec2<u32>(i, 0u));
    }
}

struct BlockParams {
    blocks: u32,
}

@group(0) @binding(0) var<storage, read_write> seen: array<u32>;
@group(0) @binding(1) var<uniform> bp: BlockParams;

// seen[block] = block + 1, with the linear block id of a 2D dispatch.
@compute @workgroup_size(WORKGROUP_SIZE)
fn blocks(@builtin(local_invocation_index) lid: u32, @builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let b = linear_block(wid, nwg);
    if b < bp.blocks && lid == 0u {
        seen[b] = b + 1u;
    }
}

var<workgroup> zeroed: array<u32, 64>;

// out[i] = workgroup memory never written: WGSL promises zeroes.
@compute @workgroup_size(WORKGROUP_SIZE)
fn zero_init(@builtin(local_invocation_index) lid: u32) {
    seen[lid] = zeroed[lid % 64u];
}

// Subgroup or shared-memory path, whichever the executor picked: an exclusive scan of ones.
@compute @workgroup_size(WORKGROUP_SIZE)
fn ranks(inv: Invocation) {
    let me = lane_of(inv);
    let r = wg_exclusive_scan(me, 1u);
    seen[me.rank] = r;
}
//#include core/wg_scan
",
};

fn axpy(e: &WgpuExecutor, n: usize, threads: u32) {
    let x: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let gx = e.upload(&x).unwrap();
    let mut gy = e.upload(&vec![1.0f32; n]).unwrap();
    let gt = e.alloc::<u64>(n).unwrap();
    let offset = 0xffff_fff0u64;
    e.launch(
        &KERNELS,
        "axpy",
        Launch::per_item(n, threads),
        &[
            buf::<WgpuExecutor, f32>(&gx),
            buf::<WgpuExecutor, f32>(&gy),
            buf::<WgpuExecutor, u64>(&gt),
            KernelArg::Scalar(Scalar::U32(n as u32)),
            KernelArg::Scalar(Scalar::U64(offset)),
            KernelArg::Scalar(Scalar::F32(2.0)),
        ],
    )
    .unwrap();
    let y = e.download(&gy).unwrap();
    let t = e.download(&gt).unwrap();
    for i in 0..n {
        assert_eq!(y[i], 1.0 + 2.0 * i as f32);
        assert_eq!(t[i], offset + i as u64);
    }
    let _ = &mut gy;
}

#[test]
fn a_user_kernel_gets_buffers_and_scalars_by_the_convention() {
    each(|_, e| {
        e.prepare(&KERNELS).unwrap();
        axpy(e, 1000, 64);
        axpy(e, 0, 64);
        axpy(e, 5000, 256);
    });
}

#[test]
fn grids_beyond_65535_blocks_use_a_2d_dispatch() {
    each(|label, e| {
        let blocks = 70_001u32;
        let seen = e.alloc::<u32>(blocks as usize).unwrap();
        e.launch(
            &KERNELS,
            "blocks",
            Launch { blocks, threads: 32 },
            &[buf::<WgpuExecutor, u32>(&seen), KernelArg::Scalar(Scalar::U32(blocks))],
        )
        .unwrap();
        let got = e.download(&seen).unwrap();
        assert!(got.iter().enumerate().all(|(i, &v)| v == i as u32 + 1), "{label}");
    });
}

#[test]
fn user_kernels_see_zeroed_workgroup_memory_and_both_scan_paths() {
    each(|label, e| {
        let mut out = e.alloc::<u32>(256).unwrap();
        e.fill(&mut out, 7).unwrap();
        e.launch(&KERNELS, "zero_init", Launch { blocks: 1, threads: 256 }, &[buf::<WgpuExecutor, u32>(&out)]).unwrap();
        assert!(e.download(&out).unwrap().iter().all(|&v| v == 0), "{label}");
        e.launch(&KERNELS, "ranks", Launch { blocks: 1, threads: 256 }, &[buf::<WgpuExecutor, u32>(&out)]).unwrap();
        assert_eq!(e.download(&out).unwrap(), (0..256).collect::<Vec<u32>>(), "{label}");
    });
}

#[test]
fn launch_errors_name_the_problem() {
    each(|label, e| {
        let a = e.alloc::<f32>(4).unwrap();
        let args = |scalars: &[Scalar]| {
            let mut v = vec![buf::<WgpuExecutor, f32>(&a), buf::<WgpuExecutor, f32>(&a), buf::<WgpuExecutor, f32>(&a)];
            v.extend(scalars.iter().map(|&s| KernelArg::Scalar(s)));
            v
        };
        let launch = Launch { blocks: 1, threads: 64 };
        // Too few scalars.
        let r = e.launch(&KERNELS, "axpy", launch, &args(&[Scalar::U32(4)]));
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        // A u32 where the kernel has a vec2<u32>.
        let r = e.launch(&KERNELS, "axpy", launch, &args(&[Scalar::U32(4), Scalar::U32(0), Scalar::F32(1.0)]));
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        // An f32 where the kernel has a u32 (same width, other type).
        let r = e.launch(&KERNELS, "axpy", launch, &args(&[Scalar::F32(4.0), Scalar::U64(0), Scalar::F32(1.0)]));
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        // A missing buffer.
        let r = e.launch(&KERNELS, "axpy", launch, &[buf::<WgpuExecutor, f32>(&a), KernelArg::Scalar(Scalar::U32(4))]);
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        // A buffer after a scalar.
        let r =
            e.launch(&KERNELS, "blocks", launch, &[KernelArg::Scalar(Scalar::U32(1)), buf::<WgpuExecutor, f32>(&a)]);
        assert!(matches!(r, Err(Error::KernelSignature { .. })), "{label}: {r:?}");
        // An unknown entry point.
        let r = e.launch(&KERNELS, "nope", launch, &[]);
        assert!(matches!(r, Err(Error::KernelCompile { .. })), "{label}: {r:?}");
        // Zero threads.
        let r = e.launch(&KERNELS, "blocks", Launch { blocks: 1, threads: 0 }, &[]);
        assert!(matches!(r, Err(Error::InvalidArgument { .. })), "{label}: {r:?}");
    });
}

#[test]
fn kernels_that_do_not_compile_report_naga_s_message() {
    let broken = KernelSource::new("test/broken", "", "fn f() -> u32 { return 1.5; }\n");
    let unbalanced = KernelSource::new("test/unbalanced", "", "//#if SUBGROUP\n");
    each(|label, e| {
        match e.prepare(&broken) {
            Err(Error::KernelCompile { module, log, .. }) => {
                assert_eq!(module, "test/broken");
                assert!(log.contains("return"), "{label}: {log}");
            }
            other => panic!("{label}: {other:?}"),
        }
        assert!(matches!(e.prepare(&unbalanced), Err(Error::KernelCompile { .. })), "{label}");
    });
}

#[test]
fn invalid_work_is_reported_at_the_next_wait_and_the_executor_recovers() {
    if crate::common::executor().is_none() {
        return;
    }
    // A private executor: the error must not reach the waits of other tests.
    let e = WgpuExecutor::new().unwrap();
    let a = e.upload(&[1.0f32; 16]).unwrap();
    let tag = e.alloc::<u64>(16).unwrap();
    // The same buffer as x (read) and y (read-write) in one dispatch: a usage conflict
    // that only the device-side validation sees.
    e.launch(
        &KERNELS,
        "axpy",
        Launch { blocks: 1, threads: 64 },
        &[
            buf::<WgpuExecutor, f32>(&a),
            buf::<WgpuExecutor, f32>(&a),
            buf::<WgpuExecutor, u64>(&tag),
            KernelArg::Scalar(Scalar::U32(16)),
            KernelArg::Scalar(Scalar::U64(0)),
            KernelArg::Scalar(Scalar::F32(1.0)),
        ],
    )
    .unwrap();
    let r = e.synchronize();
    assert!(matches!(r, Err(Error::Device { .. })), "{r:?}");
    // Later work runs normally.
    let b = e.upload(&[5u32, 6]).unwrap();
    assert_eq!(e.download(&b).unwrap(), [5, 6]);
}
