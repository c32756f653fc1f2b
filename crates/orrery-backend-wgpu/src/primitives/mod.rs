//! Host dispatch of the core primitives: one file per primitive, each recording the
//! launches of its shader in `shaders/core/` (whose header documents the kernels).
//!
//! Every function takes a [`crate::context::Recorder`] (exclusive access to the stream)
//! and raw `wgpu::Buffer`s whose lengths the caller ([`crate::WgpuExecutor`]) has
//! checked with orrery-core's `check_*` functions. None waits for the device.

pub(crate) mod compact;
pub(crate) mod data;
pub(crate) mod histogram;
pub(crate) mod keys;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod search;
pub(crate) mod segmented;
pub(crate) mod sort;

use orrery_core::{Error, Result};

use crate::shaders::WORKGROUP;

/// A kernel's uniform parameter block, packed as WGSL lays out its struct.
#[derive(Debug, Default)]
pub(crate) struct Params(Vec<u8>);

impl Params {
    /// An empty block.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Appends a u32 (4-byte aligned).
    pub(crate) fn u32(self, v: u32) -> Self {
        self.bytes(&v.to_le_bytes(), 4)
    }

    /// Appends raw bytes at the next multiple of `align`.
    pub(crate) fn bytes(mut self, b: &[u8], align: usize) -> Self {
        let at = self.0.len().next_multiple_of(align);
        self.0.resize(at, 0);
        self.0.extend_from_slice(b);
        self
    }

    /// The packed bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.0
    }
}

/// An element count as the u32 the kernels take.
///
/// # Errors
/// [`Error::TooManyPoints`] past `u32::MAX` (never for buffers within wgpu's 4 GiB
/// binding limit of 4-byte elements).
pub(crate) fn count(n: usize, what: &'static str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::TooManyPoints { count: n, max: u32::MAX as usize, what })
}

/// Workgroups for one invocation per element.
pub(crate) fn per_element(n: u32) -> u32 {
    n.div_ceil(WORKGROUP)
}
