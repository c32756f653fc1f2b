//! [`GpuExecutor`] for [`WgpuExecutor`]: launching the WGSL half of a [`KernelSource`].
//!
//! The binding convention is orrery-core's ([`orrery_core::gpu`]): buffer `i` is
//! `@group(0) @binding(i)`, the scalars are one uniform struct at binding `buffers`,
//! `override WORKGROUP_SIZE: u32;` is set to the launch's threads, `override
//! DYNAMIC_SHARED_WORDS: u32;` (when the module declares it) to `shared_bytes / 4`
//! (at least 1), and grids of more than `max_compute_workgroups_per_dimension` (65535 on
//! most adapters) blocks are spread over a 2D dispatch, so kernels compute `wid.x + wid.y
//! * num_workgroups.x` and return past their block count. [`Grid::Indirect`] is
//! `dispatch_workgroups_indirect` at the args view's byte offset (`[x, y, z]`, then
//! `blocks`, which the kernel compares with its block id).
//!
//! What this executor adds:
//! - The WGSL is preprocessed ([`crate::preprocess`]): `//#if SUBGROUP` selects the
//!   subgroup path when the device runs subgroups, `//#if NAME` sees the source's
//!   [`orrery_core::gpu::Define`]s (valued ones also become `const NAME = VALUE;` lines),
//!   and `//#include core/common` or `core/wg_scan` splice the core snippets.
//! - Views: a view that does not start at the adapter's storage alignment is bound from
//!   the aligned offset below it and its element offset goes to the `off_<binding
//!   variable>` field of the parameter struct (see [`crate::context`]).
//! - Every launch is checked against naga's reflection of the entry point before
//!   anything reaches the device: bindings used but not passed, a read view for a
//!   `read_write` binding, scalars (the non-`off_*` fields) in count, width and type.
//!   Mismatches are [`Error::KernelSignature`]. [`GpuExecutor::check_signature`]
//!   compares a typed declaration with the reflection once (cached).
//! - Workgroup memory is zero-initialised as WGSL promises (the core primitives, which
//!   never read it before writing, skip that).
//! - A kernel keeps all of wgpu's runtime checks (bounds checks, loop bounding), unless
//!   its text is one of orrery's own modules (`crate::shaders::is_orrery_module`: the
//!   algorithm crates' shaders), which compile without loop bounding (see
//!   [`crate::pipeline_cache`]).

use orrery_core::executor::check_len;
use orrery_core::gpu::{
    GpuExecutor, Grid, KernelArg, KernelSignature, KernelSource, LaunchConfig, ParamKind, ScalarType,
};
use orrery_core::{DeviceCount, Error, Result, Storage, ViewMutOf};

use crate::buffer::{WgpuBuffer, WgpuRawBuffer};
use crate::context::{Arg, DispatchGrid, lock};
use crate::executor::WgpuExecutor;
use crate::pipeline_cache::MemberType;
use crate::primitives::{self, Params, arg, arg_mut};

fn signature_error(source: &KernelSource, entry: &str, reason: String) -> Error {
    Error::KernelSignature { module: source.name.to_owned(), entry: entry.to_owned(), reason }
}

fn member_matches(ty: ScalarType, m: MemberType) -> bool {
    matches!(
        (ty, m),
        (ScalarType::U32, MemberType::U32)
            | (ScalarType::I32, MemberType::I32)
            | (ScalarType::F32, MemberType::F32)
            | (ScalarType::U64, MemberType::U64)
            | (ScalarType::F64, MemberType::F64)
            | (_, MemberType::Other)
    )
}

impl GpuExecutor for WgpuExecutor {
    type RawBuffer = WgpuRawBuffer;

    fn raw<T: Storage>(buf: &WgpuBuffer<T>) -> &WgpuRawBuffer {
        &buf.raw
    }

    fn prepare(&self, source: &KernelSource) -> Result<()> {
        self.ctx.module_entry(source.name, source.wgsl, source.defines, None).map(|_| ())
    }

    fn launch_with(
        &self,
        source: &KernelSource,
        entry: &str,
        config: &LaunchConfig<'_, Self>,
        args: &[KernelArg<'_, Self>],
    ) -> Result<()> {
        let max_threads = self.ctx.limits.max_compute_invocations_per_workgroup;
        if config.threads == 0 || config.threads > max_threads {
            return Err(Error::InvalidArgument {
                what: "launch threads",
                reason: format!("{} threads per block; the device allows 1..={max_threads}", config.threads),
            });
        }
        let max_shared = self.ctx.limits.max_compute_workgroup_storage_size;
        if config.shared_bytes > max_shared {
            return Err(Error::InvalidArgument {
                what: "launch shared memory",
                reason: format!("{} bytes per block; the device allows {max_shared}", config.shared_bytes),
            });
        }
        let mut buffers = Vec::new();
        let mut params = Params::new();
        for (i, a) in args.iter().enumerate() {
            match a {
                KernelArg::Buffer(b) if params.is_empty() => buffers.push(Arg {
                    buf: &b.raw.buffer,
                    offset: b.offset_bytes,
                    len: b.len_bytes,
                    writable: b.writable,
                }),
                KernelArg::Buffer(_) => {
                    return Err(signature_error(
                        source,
                        entry,
                        format!("argument {i} is a buffer after a scalar: buffers come first"),
                    ));
                }
                KernelArg::Scalar(s) => params = params.scalar(*s),
            }
        }
        let shared_words = config.shared_bytes.div_ceil(4);
        let pipeline = self.ctx.pipeline(
            source.name,
            source.wgsl,
            &[],
            source.defines,
            entry,
            config.threads,
            shared_words,
            false,
        )?;
        let grid = match config.grid {
            Grid::Blocks(b) => DispatchGrid::Blocks(b),
            Grid::Indirect { args, .. } => DispatchGrid::Indirect(arg(&args)),
        };
        self.ctx.recorder().dispatch(&pipeline, &buffers, &params, grid)
    }

    fn check_signature(&self, source: &KernelSource, signature: &'static KernelSignature) -> Result<()> {
        let key = (source.name.to_owned(), source.define_key(), std::ptr::from_ref(signature) as usize);
        if lock(&self.ctx.signatures).contains(&key) {
            return Ok(());
        }
        let entry = signature.entry;
        signature.check_order(source.name)?;
        let bindings =
            self.ctx.module_entry(source.name, source.wgsl, source.defines, Some(entry))?.ok_or_else(|| {
                signature_error(source, entry, "the module has no compute entry point of this name".into())
            })?;
        let declared: Vec<_> = signature.buffers().collect();
        for (b, read_only, stride) in bindings.storage() {
            let Some(p) = declared.get(b.binding as usize) else {
                return Err(signature_error(
                    source,
                    entry,
                    format!(
                        "WGSL binding {} ({}) is beyond the {} declared buffer(s)",
                        b.binding,
                        b.name,
                        declared.len()
                    ),
                ));
            };
            let (write, elem) = match p.kind {
                ParamKind::Read { elem_bytes } => (false, elem_bytes),
                ParamKind::Write { elem_bytes } => (true, elem_bytes),
                ParamKind::Scalar(_) => unreachable!("buffers() yields buffers"),
            };
            if write == read_only {
                return Err(signature_error(
                    source,
                    entry,
                    format!(
                        "buffer {} ({}) is declared {} but WGSL binding {} is var<storage, {}>",
                        b.binding,
                        p.name,
                        if write { "write" } else { "read" },
                        b.name,
                        if read_only { "read" } else { "read_write" }
                    ),
                ));
            }
            if let Some(stride) = stride
                && stride != elem
            {
                return Err(signature_error(
                    source,
                    entry,
                    format!(
                        "buffer {} ({}) has {elem}-byte elements, WGSL's {} has {stride}",
                        b.binding, p.name, b.name
                    ),
                ));
            }
        }
        let scalars: Vec<_> = signature.scalars().collect();
        let members: Vec<_> = match bindings.uniform() {
            Some((binding, _, members)) => {
                if binding as usize != declared.len() {
                    return Err(signature_error(
                        source,
                        entry,
                        format!(
                            "WGSL has its parameters at binding {binding}, the declaration {} buffer(s)",
                            declared.len()
                        ),
                    ));
                }
                members.iter().filter(|m| m.offset_of().is_none()).collect()
            }
            None => Vec::new(),
        };
        if members.len() != scalars.len() {
            return Err(signature_error(
                source,
                entry,
                format!("declared with {} scalar(s), the WGSL parameters have {}", scalars.len(), members.len()),
            ));
        }
        for (p, m) in scalars.iter().zip(&members) {
            let ParamKind::Scalar(ty) = p.kind else { unreachable!("scalars() yields scalars") };
            if ty.size() != m.size as usize || !member_matches(ty, m.ty) {
                return Err(signature_error(
                    source,
                    entry,
                    format!(
                        "scalar {} is declared {ty:?}, WGSL's field {} is {:?} ({} bytes)",
                        p.name, m.name, m.ty, m.size
                    ),
                ));
            }
        }
        lock(&self.ctx.signatures).insert(key);
        Ok(())
    }

    fn indirect_args<'a>(
        &self,
        count: DeviceCount<'a, Self>,
        items_per_block: u32,
        args: impl Into<ViewMutOf<'a, Self, u32>>,
    ) -> Result<()> {
        let args = args.into();
        check_len("indirect launch arguments", orrery_core::gpu::INDIRECT_ARGS_WORDS, args.len())?;
        if items_per_block == 0 {
            return Err(Error::InvalidArgument { what: "items per block", reason: "must be at least 1".into() });
        }
        let slot = count.slot();
        let bound = primitives::count(count.bound(), "device count bound")?;
        primitives::data::indirect_args(&mut self.ctx.recorder(), arg(&slot), bound, items_per_block, arg_mut(&args))
    }
}
