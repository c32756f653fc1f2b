//! Where does the wgpu path lose time against CUDA? A probe on raw wgpu, below the
//! executor: each measurement is one compute pass (or one copy) bracketed by device
//! timestamps inside one command encoder, so submission and host overhead are not in it.
//!
//! ```text
//! cargo run --release -p orrery-backend-wgpu --example wgpu_probe
//! ```
//!
//! It compares, on 1 GiB of u32:
//! - `copy_buffer_to_buffer` (the executor's `copy` today) against a compute-shader copy
//!   (u32 and vec4<u32> per invocation, one element per invocation and grid-stride);
//! - every shader compiled with wgpu's runtime checks (bounds checks and loop bounding, the
//!   default) and without them (`create_shader_module_trusted`);
//! - a loop-heavy kernel (the 21-level bit interleave of a Morton key), checked and not;
//! - the cost of an empty dispatch: 1,000 one-workgroup passes in one encoder.
//!
//! The adapter follows `ORRERY_WGPU_ADAPTER` (substring of the name). This is a
//! diagnostic, not the benchmark suite, and never a test.

use std::time::Instant;

const N: u64 = 256 << 20; // u32 elements: 1 GiB
const REPEATS: usize = 7;
const WG: u32 = 256;

const COPY_U32: &str = r"
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> n: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * nwg.x * 256u;
    if i < n.x { dst[i] = src[i]; }
}
";

const COPY_VEC4: &str = r"
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> n: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * nwg.x * 256u;
    if i < n.x { dst[i] = src[i]; }
}
";

const COPY_VEC4_STRIDE: &str = r"
@group(0) @binding(0) var<storage, read> src: array<vec4<u32>>;
@group(0) @binding(1) var<storage, read_write> dst: array<vec4<u32>>;
@group(0) @binding(2) var<uniform> n: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let stride = nwg.x * 256u;
    for (var i = g.x; i < n.x; i += stride) { dst[i] = src[i]; }
}
";

const MORTON: &str = r"
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> n: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = g.x + g.y * nwg.x * 256u;
    if i >= n.x { return; }
    let v = src[i];
    let x = v & 0x1fffffu; let y = (v * 2654435761u) & 0x1fffffu; let z = (v ^ (v >> 7u)) & 0x1fffffu;
    var lo = 0u; var hi = 0u;
    for (var l = 21u; l > 0u; l--) {
        let b = l - 1u;
        let m = (((x >> b) & 1u) << 2u) | (((y >> b) & 1u) << 1u) | ((z >> b) & 1u);
        hi = (hi << 3u) | (lo >> 29u);
        lo = (lo << 3u) | m;
    }
    dst[i] = lo ^ hi;
}
";

const EMPTY: &str = r"
@group(0) @binding(0) var<storage, read> src: array<u32>;
@group(0) @binding(1) var<storage, read_write> dst: array<u32>;
@group(0) @binding(2) var<uniform> n: vec4<u32>;
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) g: vec3<u32>) {
    if g.x == 0u && n.y == 1u { dst[0] = src[0]; }
}
";

struct Gpu {
    device: wgpu::Device,
    queue: wgpu::Queue,
    period: f32,
}

impl Gpu {
    fn open() -> Gpu {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor {
            backends: wgpu::Backends::VULKAN,
            ..wgpu::InstanceDescriptor::new_without_display_handle()
        });
        let filter = std::env::var("ORRERY_WGPU_ADAPTER").ok().map(|s| s.to_lowercase());
        let adapter = pollster::block_on(instance.enumerate_adapters(wgpu::Backends::VULKAN))
            .into_iter()
            .find(|a| filter.as_ref().is_none_or(|f| a.get_info().name.to_lowercase().contains(f)))
            .expect("no Vulkan adapter");
        println!("adapter: {:?}", adapter.get_info());
        let features = wgpu::Features::TIMESTAMP_QUERY | wgpu::Features::TIMESTAMP_QUERY_INSIDE_ENCODERS;
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: None,
            required_features: features,
            required_limits: adapter.limits(),
            experimental_features: wgpu::ExperimentalFeatures::disabled(),
            memory_hints: wgpu::MemoryHints::Performance,
            trace: wgpu::Trace::Off,
        }))
        .expect("device");
        let period = queue.get_timestamp_period();
        Gpu { device, queue, period }
    }

    fn buffer(&self, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        self.device.create_buffer(&wgpu::BufferDescriptor {
            label: None,
            size: bytes,
            usage,
            mapped_at_creation: false,
        })
    }

    fn pipeline(&self, src: &str, checked: bool) -> wgpu::ComputePipeline {
        let desc = wgpu::ShaderModuleDescriptor { label: None, source: wgpu::ShaderSource::Wgsl(src.into()) };
        let module = if checked {
            self.device.create_shader_module(desc)
        } else {
            // SAFETY: the probe's shaders index only below `n`, which is within every
            // binding, and all their loops are bounded.
            unsafe { self.device.create_shader_module_trusted(desc, wgpu::ShaderRuntimeChecks::unchecked()) }
        };
        self.device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: None,
            layout: None,
            module: &module,
            entry_point: Some("main"),
            compilation_options: wgpu::PipelineCompilationOptions::default(),
            cache: None,
        })
    }

    /// Median device milliseconds of `record` (called once per repeat inside a
    /// timestamp pair), after one warm-up.
    fn time(&self, mut record: impl FnMut(&mut wgpu::CommandEncoder, &wgpu::QuerySet)) -> f64 {
        let set = self.device.create_query_set(&wgpu::QuerySetDescriptor {
            label: None,
            ty: wgpu::QueryType::Timestamp,
            count: 2,
        });
        let resolve = self.buffer(16, wgpu::BufferUsages::QUERY_RESOLVE | wgpu::BufferUsages::COPY_SRC);
        let read = self.buffer(16, wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST);
        let mut times = Vec::new();
        for rep in 0..=REPEATS {
            let mut enc = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
            record(&mut enc, &set);
            enc.resolve_query_set(&set, 0..2, &resolve, 0);
            enc.copy_buffer_to_buffer(&resolve, 0, &read, 0, 16);
            self.queue.submit([enc.finish()]);
            read.slice(..).map_async(wgpu::MapMode::Read, |_| {});
            self.device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
            let ticks: [u64; 2] = {
                let view = read.slice(..).get_mapped_range().expect("mapped");
                bytemuck::pod_read_unaligned(&view[..16])
            };
            read.unmap();
            if rep > 0 {
                times.push((ticks[1].saturating_sub(ticks[0])) as f64 * f64::from(self.period) * 1e-6);
            }
        }
        times.sort_by(f64::total_cmp);
        times[REPEATS / 2]
    }
}

// One measurement after another, each a few lines: splitting it would only scatter them.
#[allow(clippy::too_many_lines)]
fn main() {
    let gpu = Gpu::open();
    let usage = wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST;
    let bytes = N * 4;
    let src = gpu.buffer(bytes, usage);
    let dst = gpu.buffer(bytes, usage);
    let mut enc = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
    enc.clear_buffer(&src, 0, None);
    gpu.queue.submit([enc.finish()]);
    let report = |what: &str, ms: f64, moved: u64| {
        println!("{what:<44} {ms:>9.3} ms {:>8.0} GB/s", moved as f64 / ms * 1e-6);
    };

    let ms = gpu.time(|enc, set| {
        enc.write_timestamp(set, 0);
        enc.copy_buffer_to_buffer(&src, 0, &dst, 0, bytes);
        enc.write_timestamp(set, 1);
    });
    report("copy_buffer_to_buffer 1 GiB", ms, 2 * bytes);

    let max_x = 65_535u32;
    let dispatch = |enc: &mut wgpu::CommandEncoder,
                    set: &wgpu::QuerySet,
                    pipe: &wgpu::ComputePipeline,
                    bind: &wgpu::BindGroup,
                    groups: u64,
                    grid_stride: bool| {
        let (gx, gy) = if grid_stride {
            (groups.min(u64::from(max_x)) as u32, 1)
        } else {
            let gy = groups.div_ceil(u64::from(max_x)) as u32;
            (groups.div_ceil(u64::from(gy)) as u32, gy)
        };
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        pass.set_pipeline(pipe);
        pass.set_bind_group(0, bind, &[]);
        pass.dispatch_workgroups(gx, gy, 1);
    };
    let uniform_of = |elements: u64, flag: u32| {
        let buf = gpu.buffer(16, wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST);
        gpu.queue.write_buffer(&buf, 0, bytemuck::cast_slice(&[elements as u32, flag, 0, 0]));
        buf
    };
    let bind_of = |pipe: &wgpu::ComputePipeline, uniform: &wgpu::Buffer| {
        gpu.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: None,
            layout: &pipe.get_bind_group_layout(0),
            entries: &[
                wgpu::BindGroupEntry { binding: 0, resource: src.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 1, resource: dst.as_entire_binding() },
                wgpu::BindGroupEntry { binding: 2, resource: uniform.as_entire_binding() },
            ],
        })
    };

    for checked in [true, false] {
        let tag = if checked { "checked" } else { "unchecked" };
        for (name, src_text, per_elem, grid_stride, moved) in [
            ("shader copy u32", COPY_U32, 1u64, false, 2 * bytes),
            ("shader copy vec4", COPY_VEC4, 4, false, 2 * bytes),
            ("shader copy vec4 grid-stride 65535 wg", COPY_VEC4_STRIDE, 4, true, 2 * bytes),
            ("morton loop u32 -> u32", MORTON, 1, false, 2 * bytes),
        ] {
            let pipe = gpu.pipeline(src_text, checked);
            let elements = N / per_elem;
            let uniform = uniform_of(elements, 0);
            let bind = bind_of(&pipe, &uniform);
            let groups = elements.div_ceil(u64::from(WG));
            let ms = gpu.time(|enc, set| dispatch(enc, set, &pipe, &bind, groups, grid_stride));
            report(&format!("{name} ({tag})"), ms, moved);
        }
    }

    // Empty dispatches: the fixed cost of a compute pass in one encoder.
    let pipe = gpu.pipeline(EMPTY, true);
    let uniform = uniform_of(1, 0);
    let bind = bind_of(&pipe, &uniform);
    for passes in [1usize, 1000] {
        let ms = gpu.time(|enc, set| {
            enc.write_timestamp(set, 0);
            for _ in 0..passes {
                let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor::default());
                pass.set_pipeline(&pipe);
                pass.set_bind_group(0, &bind, &[]);
                pass.dispatch_workgroups(1, 1, 1);
            }
            enc.write_timestamp(set, 1);
        });
        println!("{passes:>5} empty passes in one encoder: {ms:>9.3} ms ({:.2} us each)", ms * 1e3 / passes as f64);
    }
    // 1000 dispatches in ONE pass (no barriers between them).
    let ms = gpu.time(|enc, set| {
        let mut pass = enc.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: None,
            timestamp_writes: Some(wgpu::ComputePassTimestampWrites {
                query_set: set,
                beginning_of_pass_write_index: Some(0),
                end_of_pass_write_index: Some(1),
            }),
        });
        pass.set_pipeline(&pipe);
        pass.set_bind_group(0, &bind, &[]);
        for _ in 0..1000 {
            pass.dispatch_workgroups(1, 1, 1);
        }
    });
    println!(" 1000 empty dispatches in one pass:   {ms:>9.3} ms ({ms:.2} us each)");

    // Host side: submission round trip of an empty encoder, and bind-group creation.
    let t = Instant::now();
    for _ in 0..100 {
        let enc = gpu.device.create_command_encoder(&wgpu::CommandEncoderDescriptor::default());
        gpu.queue.submit([enc.finish()]);
        gpu.device.poll(wgpu::PollType::wait_indefinitely()).expect("poll");
    }
    println!("submit + wait of an empty encoder (host): {:.1} us", t.elapsed().as_secs_f64() * 1e4);
    let t = Instant::now();
    for _ in 0..1000 {
        std::hint::black_box(bind_of(&pipe, &uniform));
    }
    println!("bind-group creation (host): {:.2} us", t.elapsed().as_secs_f64() * 1e3);
}
