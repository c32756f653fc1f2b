//! Host dispatch of the core primitives: one file per primitive, each recording the
//! launches of its shader in `shaders/core/` (whose header documents the kernels).
//!
//! Every function takes a [`crate::context::Recorder`] (exclusive access to the stream)
//! and views as [`Arg`]s ([`arg`], [`arg_mut`], [`Arg::whole`] for scratch) whose lengths
//! the caller ([`crate::WgpuExecutor`]) has checked with orrery-core's `check_*`
//! functions. A dispatch is `rec.dispatch(&pipeline, &[args...], &params, grid)`: the
//! args are bindings 0.., the parameter block the uniform after them; [`Params`] lists
//! the scalar members in order, and the executor fills every `off_<binding variable>`
//! member with the element offset of that binding's view (see [`crate::context`]).
//! None waits for the device.

pub(crate) mod compact;
pub(crate) mod data;
pub(crate) mod histogram;
pub(crate) mod keys;
pub(crate) mod reduce;
pub(crate) mod scan;
pub(crate) mod search;
pub(crate) mod segmented;
pub(crate) mod sort;

use orrery_core::gpu::Scalar;
use orrery_core::{Error, Result, Storage, ViewMutOf, ViewOf};

pub(crate) use crate::context::{Arg, DispatchGrid};
use crate::executor::WgpuExecutor;
use crate::pipeline_cache::MemberType;
use crate::shaders::WORKGROUP;

/// The scalar members of a kernel's parameter block, in declaration order (the
/// `off_*` members excluded: the executor fills those). Each value is checked against
/// its member's size, and typed values against its type.
#[derive(Debug, Default, Clone)]
pub(crate) struct Params {
    bytes: Vec<u8>,
    values: Vec<(usize, usize, Option<MemberType>)>,
}

impl Params {
    /// An empty block.
    pub(crate) fn new() -> Self {
        Self::default()
    }

    fn push(mut self, b: &[u8], ty: Option<MemberType>) -> Self {
        self.values.push((self.bytes.len(), b.len(), ty));
        self.bytes.extend_from_slice(b);
        self
    }

    /// Appends a u32 member.
    pub(crate) fn u32(self, v: u32) -> Self {
        self.push(&v.to_le_bytes(), Some(MemberType::U32))
    }

    /// Appends a member of raw bytes (a typed value, an array), checked by size only.
    pub(crate) fn bytes(self, b: &[u8]) -> Self {
        self.push(b, None)
    }

    /// Appends a launch scalar.
    pub(crate) fn scalar(self, s: Scalar) -> Self {
        match s {
            Scalar::U32(v) => self.u32(v),
            Scalar::I32(v) => self.push(&v.to_le_bytes(), Some(MemberType::I32)),
            Scalar::F32(v) => self.push(&v.to_le_bytes(), Some(MemberType::F32)),
            Scalar::U64(v) => self.push(&v.to_le_bytes(), Some(MemberType::U64)),
            Scalar::F64(v) => self.push(&v.to_le_bytes(), Some(MemberType::F64)),
        }
    }

    /// Number of members.
    pub(crate) fn len(&self) -> usize {
        self.values.len()
    }

    /// Whether there are none.
    pub(crate) fn is_empty(&self) -> bool {
        self.values.is_empty()
    }

    /// The members' bytes and types.
    pub(crate) fn values(&self) -> impl Iterator<Item = (&[u8], Option<MemberType>)> {
        self.values.iter().map(|&(at, len, ty)| (&self.bytes[at..at + len], ty))
    }
}

/// A readable view as a dispatch argument.
pub(crate) fn arg<'a, T: Storage>(v: &ViewOf<'a, WgpuExecutor, T>) -> Arg<'a> {
    let size = size_of::<T>() as u64;
    Arg { buf: v.buffer().arc(), offset: v.offset() as u64 * size, len: v.len() as u64 * size, writable: false }
}

/// A writable view as a dispatch argument.
pub(crate) fn arg_mut<'v, T: Storage>(v: &'v ViewMutOf<'_, WgpuExecutor, T>) -> Arg<'v> {
    let size = size_of::<T>() as u64;
    Arg { buf: v.buffer().arc(), offset: v.offset() as u64 * size, len: v.len() as u64 * size, writable: true }
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

/// A direct grid of `blocks` workgroups.
pub(crate) fn blocks(blocks: u32) -> DispatchGrid<'static> {
    DispatchGrid::Blocks(blocks)
}
