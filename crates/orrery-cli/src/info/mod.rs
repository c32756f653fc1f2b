//! `orrery info`: what this machine offers each executor: CUDA devices and the driver,
//! every wgpu adapter, the CPU's threads and instruction-set level. Nothing that is
//! missing is an error: each section says why it is empty.

mod cpu;
mod cuda;
mod wgpu;

/// The report: a heading per executor family, its lines indented below it.
pub fn report() -> String {
    let mut out = String::new();
    for (heading, lines) in [("CUDA", cuda::lines()), ("wgpu adapters", wgpu::lines()), ("CPU", cpu::lines())] {
        out.push_str(heading);
        out.push('\n');
        for line in lines {
            out.push_str("  ");
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}
