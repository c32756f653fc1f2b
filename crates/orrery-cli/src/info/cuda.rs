//! The CUDA section of `orrery info`: the driver, NVRTC and every device.

use orrery_backend_cuda::{CudaExecutor, check_nvrtc, device_count, nvrtc_version};

use crate::executor::one_line;

/// The section's lines.
pub fn lines() -> Vec<String> {
    let count = match device_count() {
        Ok(n) => n,
        Err(e) => return vec![format!("unavailable: {}", one_line(&e.to_string()))],
    };
    let mut lines = vec![format!("driver: {}", driver_version())];
    lines.push(match check_nvrtc().and_then(|()| nvrtc_version()) {
        Ok((major, minor)) => format!("nvrtc: {major}.{minor}"),
        Err(e) => format!("nvrtc: {}", one_line(&e.to_string())),
    });
    if count == 0 {
        lines.push("devices: none".to_owned());
    }
    for ordinal in 0..count {
        lines.push(match CudaExecutor::new(ordinal) {
            Ok(exec) => {
                let (major, minor) = exec.compute_capability();
                format!(
                    "device {ordinal}: {}, compute capability {major}.{minor}, {} SMs, {:.1} GiB, kernels for {}",
                    exec.device_name(),
                    exec.sm_count(),
                    exec.total_memory() as f64 / f64::from(1u32 << 30),
                    exec.arch()
                )
            }
            Err(e) => format!("device {ordinal}: cannot open: {}", one_line(&e.to_string())),
        });
    }
    lines
}

/// The driver's CUDA API version (`12.8`). orrery-backend-cuda checks it but does not
/// report it, so it is read here with cudarc; call only after [`device_count`] succeeded
/// (libcuda is loaded and initialised then).
fn driver_version() -> String {
    let mut version = 0i32;
    // SAFETY: `device_count` succeeded, so libcuda is present and cudarc's dynamic
    // loader finds it; `version` is valid for one write.
    let status = unsafe { cudarc::driver::sys::cuDriverGetVersion(&raw mut version) };
    if status == cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        format!("CUDA {}.{} (API version {version})", version / 1000, (version % 1000) / 10)
    } else {
        format!("unknown ({status:?})")
    }
}
