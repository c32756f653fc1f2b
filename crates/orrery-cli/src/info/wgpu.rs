//! The wgpu section of `orrery info`: every adapter wgpu finds, whether `--executor auto`
//! would consider it (hardware) or not (software rasterisers such as lavapipe).

use orrery_backend_wgpu::{WgpuOptions, wgpu};

use crate::executor::{enumerate_adapters, is_hardware};

/// The section's lines.
pub fn lines() -> Vec<String> {
    let options = match WgpuOptions::from_env() {
        Ok(o) => o,
        Err(e) => return vec![format!("environment: {e}")],
    };
    let adapters = enumerate_adapters(&options);
    if adapters.is_empty() {
        return vec!["none (no Vulkan, Metal, DX12 or GL driver found)".to_owned()];
    }
    adapters
        .iter()
        .enumerate()
        .map(|(i, (info, features))| {
            let subgroups = if features.contains(wgpu::Features::SUBGROUP) {
                format!("subgroups {}..{}", info.subgroup_min_size, info.subgroup_max_size)
            } else {
                "no subgroups".to_owned()
            };
            let driver = match (info.driver.is_empty(), info.driver_info.is_empty()) {
                (true, true) => "unknown".to_owned(),
                (false, true) => info.driver.clone(),
                (true, false) => info.driver_info.clone(),
                (false, false) => format!("{} {}", info.driver, info.driver_info),
            };
            let kind = match info.device_type {
                t if is_hardware(t) => "hardware",
                wgpu::DeviceType::Cpu => "software: auto skips it",
                _ => "unknown type: auto skips it",
            };
            format!(
                "{i}: {}, {:?}, {:?}, driver {driver}, {subgroups}, f64 {} ({kind})",
                info.name,
                info.backend,
                info.device_type,
                if features.contains(wgpu::Features::SHADER_F64) { "yes" } else { "no" },
            )
        })
        .collect()
}
