//! `orrery info`: what this machine offers each executor: CUDA devices and the driver,
//! every wgpu adapter, the CPU's threads and instruction-set level. Nothing that is
//! missing is an error: each section says why it is empty.

mod cpu;
mod cuda;
mod wgpu;

/// Prints the report on stdout.
pub fn run() {
    let mut out = String::new();
    out.push_str("CUDA\n");
    for line in cuda::lines() {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str("wgpu adapters\n");
    for line in wgpu::lines() {
        out.push_str(&format!("  {line}\n"));
    }
    out.push_str("CPU\n");
    for line in cpu::lines() {
        out.push_str(&format!("  {line}\n"));
    }
    print!("{out}");
}
