//! NVRTC compilation and the two module caches.
//!
//! A [`KernelSource`]'s CUDA text is compiled by NVRTC for the device's architecture
//! (`-arch=sm_XY` from its compute capability, so NVRTC emits a CUBIN and the driver
//! never JIT-compiles PTX), with `--std=c++17` and the executor's [`Policy`] as `-D`
//! defines. NVRTC optimises fully by default (ptxas `-O3`; NVRTC has no `-O3` option).
//!
//! - **In memory**, per device context (shared by an executor and its forks): one loaded
//!   module per source (keyed by name, the text's identity and the defines) and one
//!   function handle per `(module, entry)` with the driver's parameter sizes, so a launch
//!   costs two hash lookups. The source's [`KernelSource::defines`] are NVRTC `-D`
//!   options after the policy's.
//! - **On disk**, per user: the CUBIN under `ORRERY_KERNEL_CACHE`, else
//!   `$XDG_CACHE_HOME/orrery`, else `~/.cache/orrery`, named by a 128-bit hash of the
//!   source text, the NVRTC version, the architecture and every option (defines included). A second process
//!   loads it without compiling. The disk cache is best effort: a directory that cannot
//!   be written, or a file that does not load, only costs a compilation.

use std::collections::HashMap;
use std::ffi::{CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicU32;
use std::sync::{Arc, Mutex};

use cudarc::driver::result as dres;
use cudarc::driver::sys::{self, CUfunction, CUmodule, CUresult};
use cudarc::nvrtc::result as nres;
use cudarc::nvrtc::sys as nsys;
use orrery_core::gpu::{KernelSignature, ParamKind, check_cuda_signature, cuda_params};
use orrery_core::{Error, KernelSource, Result};

use crate::device::{Context, check_nvrtc};
use crate::error::describe;
use crate::policy::Policy;

/// The C++ dialect every module is compiled with.
const STD_OPTION: &str = "--std=c++17";

/// What NVRTC should produce.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Output {
    /// PTX text (virtual architecture `compute_XY`).
    Ptx,
    /// A CUBIN (real architecture `sm_XY`).
    Cubin,
}

/// The NVRTC version as `(major, minor)`.
///
/// # Errors
/// [`Error::DeviceUnavailable`] when NVRTC cannot be loaded.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    check_nvrtc()?;
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: both pointers are valid for writes of one c_int.
    let r = unsafe { nsys::nvrtcVersion(&raw mut major, &raw mut minor) };
    r.result().map_err(|e| nvrtc_failure("nvrtcVersion", e))?;
    Ok((major, minor))
}

fn nvrtc_failure(what: &str, e: nres::NvrtcError) -> Error {
    Error::Device { backend: crate::error::BACKEND, operation: what.to_owned(), message: format!("{:?}", e.0) }
}

fn c_chars_to_string(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v.iter().take_while(|&&c| c != 0).map(|&c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compiles `source` with NVRTC; `module` and `target` name it in errors. Returns the
/// output and NVRTC's log (warnings, and ptxas's report when asked for with
/// `--ptxas-options=-v`).
fn nvrtc_compile(
    module: &str,
    source: &str,
    options: &[String],
    output: Output,
    target: &str,
) -> Result<(Vec<u8>, String)> {
    check_nvrtc()?;
    let compile_error =
        |log: String| Error::KernelCompile { module: module.to_owned(), target: target.to_owned(), log };
    let src = CString::new(source).map_err(|_| compile_error("the source contains a NUL byte".to_owned()))?;
    let name = CString::new(module.replace('\0', "")).unwrap_or_default();
    let prog = nres::create_program(&src, Some(&name)).map_err(|e| nvrtc_failure("nvrtcCreateProgram", e))?;
    // SAFETY: `prog` was created above and is destroyed exactly once at the end; `src`
    // and `name` outlive it.
    unsafe {
        let compiled = nres::compile_program(prog, options);
        let log = nres::get_program_log(prog).map(|l| c_chars_to_string(&l)).unwrap_or_default();
        let out = match compiled {
            Err(_) => Err(compile_error(log)),
            Ok(()) => match output {
                Output::Ptx => nres::get_ptx(prog)
                    .map(|p| p.iter().map(|&c| c as u8).collect())
                    .map_err(|e| nvrtc_failure("nvrtcGetPTX", e)),
                Output::Cubin => get_cubin(prog),
            }
            .map(|image| (image, log)),
        };
        let _ = nres::destroy_program(prog);
        out
    }
}

/// The CUBIN of a compiled program.
///
/// # Safety
/// `prog` must be a live, successfully compiled NVRTC program.
unsafe fn get_cubin(prog: nsys::nvrtcProgram) -> Result<Vec<u8>> {
    let mut size = 0usize;
    // SAFETY: `prog` is live (caller), `size` is valid for writes.
    unsafe { nsys::nvrtcGetCUBINSize(prog, &raw mut size) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcGetCUBINSize", e))?;
    let mut buf = vec![0u8; size];
    // SAFETY: `buf` holds exactly the `size` bytes NVRTC reported.
    unsafe { nsys::nvrtcGetCUBIN(prog, buf.as_mut_ptr().cast()) }
        .result()
        .map_err(|e| nvrtc_failure("nvrtcGetCUBIN", e))?;
    Ok(buf)
}

fn compile_options(arch_flag: &str, policy: &Policy) -> Vec<String> {
    let mut options = vec![format!("-arch={arch_flag}"), STD_OPTION.to_owned()];
    options.extend(policy.defines());
    if line_info_requested() {
        options.push(LINE_INFO_OPTION.to_owned());
    }
    options
}

/// NVRTC's option for source-line tables in the CUBIN (what compute-sanitizer and Nsight
/// Compute need to name source lines; no effect on the generated code).
const LINE_INFO_OPTION: &str = "-lineinfo";

/// Whether `ORRERY_CUDA_LINEINFO=1` asks for [`LINE_INFO_OPTION`] (for sanitizer and
/// profiler runs; the option is part of the module cache's key, so such modules are cached
/// apart).
fn line_info_requested() -> bool {
    std::env::var("ORRERY_CUDA_LINEINFO").is_ok_and(|v| v == "1")
}

/// Compiles CUDA C `source` to PTX for the virtual architecture `arch` (e.g.
/// `"compute_90"`) without a GPU: only libnvrtc is needed. The options are those the
/// executor uses (`--std=c++17` and the default [`Policy`]'s defines), so a module that
/// compiles here compiles on a device of that architecture.
///
/// ```no_run
/// let ptx = orrery_backend_cuda::compile_to_ptx(
///     r#"extern "C" __global__ void twice(float* v) { v[threadIdx.x] *= 2.0f; }"#,
///     "compute_90",
/// )?;
/// assert!(ptx.contains(".entry twice"));
/// # Ok::<(), orrery_core::Error>(())
/// ```
///
/// # Errors
/// [`Error::KernelCompile`] with NVRTC's log; [`Error::DeviceUnavailable`] when NVRTC
/// cannot be loaded.
pub fn compile_to_ptx(source: &str, arch: &str) -> Result<String> {
    let options = compile_options(arch, &Policy::default());
    let (ptx, _) = nvrtc_compile("source", source, &options, Output::Ptx, arch)?;
    Ok(String::from_utf8_lossy(&ptx).trim_end_matches('\0').to_owned())
}

/// Compiles a [`KernelSource`] to PTX for `arch` (see [`compile_to_ptx`]), naming the
/// module in errors.
///
/// # Errors
/// As [`compile_to_ptx`].
pub fn compile_module_to_ptx(source: &KernelSource, arch: &str) -> Result<String> {
    let options = module_options(source, arch);
    let (ptx, _) = nvrtc_compile(source.name, source.cuda, &options, Output::Ptx, arch)?;
    Ok(String::from_utf8_lossy(&ptx).trim_end_matches('\0').to_owned())
}

/// Compiles a [`KernelSource`] to a CUBIN for the real architecture `arch` (e.g.
/// `"sm_90"`) without a GPU: NVRTC runs ptxas, so register and shared-memory limits are
/// checked too. The options are those of [`compile_to_ptx`].
///
/// # Errors
/// As [`compile_to_ptx`].
pub fn compile_module_to_cubin(source: &KernelSource, arch: &str) -> Result<Vec<u8>> {
    let options = module_options(source, arch);
    nvrtc_compile(source.name, source.cuda, &options, Output::Cubin, arch).map(|(cubin, _)| cubin)
}

/// The compute capability `(major, minor)` of an architecture name: `sm_90`,
/// `compute_90` and `sm_90a` are (9, 0), `sm_100` is (10, 0); `None` for anything else.
fn arch_capability(arch: &str) -> Option<(u32, u32)> {
    let digits = arch.strip_prefix("sm_").or_else(|| arch.strip_prefix("compute_"))?;
    let digits = digits.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    if digits.len() < 2 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let (major, minor) = digits.split_at(digits.len() - 1);
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// The NVRTC options an executor compiles `source` with on a device of architecture
/// `arch` (`sm_XY` or `compute_XY`): `-arch=<arch>`, `--std=c++17`, the defines of
/// [`Policy::for_compute_capability`] for that architecture (without the
/// [`crate::policy::POLICY_ENV`] overrides; [`Policy::default`] when `arch` names no
/// compute capability), then the source's own defines ([`KernelSource::cuda_options`]).
/// Tools that compile every module ahead of time (`cargo xtask kernels`) use exactly
/// these.
pub fn module_options(source: &KernelSource, arch: &str) -> Vec<String> {
    let policy = arch_capability(arch)
        .map_or_else(Policy::default, |(major, minor)| Policy::for_compute_capability(major, minor));
    let mut options = compile_options(arch, &policy);
    options.extend(source.cuda_options());
    options
}

/// A module compiled by [`compile_module_with_log`].
#[derive(Debug, Clone)]
pub struct CompiledModule {
    /// PTX text (for a `compute_XY` target) or a CUBIN (for `sm_XY`).
    pub image: Vec<u8>,
    /// NVRTC's log: warnings, and ptxas's resource report when the options ask for it.
    pub log: String,
    /// Every option NVRTC was given ([`module_options`], then the extra ones).
    pub options: Vec<String>,
}

/// Compiles a [`KernelSource`] without a GPU, with the options of [`module_options`]
/// followed by `extra`, and keeps NVRTC's log: PTX for a virtual architecture
/// (`compute_90`), a CUBIN through ptxas for a real one (`sm_90`). With
/// `extra = ["--ptxas-options=-v"]` and a real architecture, the log holds ptxas's
/// registers, spills and shared memory per entry point.
///
/// # Errors
/// [`Error::InvalidArgument`] for an architecture that is neither `compute_*` nor
/// `sm_*`; otherwise as [`compile_to_ptx`].
pub fn compile_module_with_log(source: &KernelSource, arch: &str, extra: &[&str]) -> Result<CompiledModule> {
    let output = if arch.starts_with("compute_") {
        Output::Ptx
    } else if arch.starts_with("sm_") {
        Output::Cubin
    } else {
        return Err(Error::InvalidArgument {
            what: "architecture",
            reason: format!("{arch:?} is neither a virtual (compute_XY) nor a real (sm_XY) architecture"),
        });
    };
    let mut options = module_options(source, arch);
    options.extend(extra.iter().map(|&o| o.to_owned()));
    let (mut image, log) = nvrtc_compile(source.name, source.cuda, &options, output, arch)?;
    if output == Output::Ptx {
        // NVRTC's PTX ends in a NUL byte.
        while image.last() == Some(&0) {
            image.pop();
        }
    }
    Ok(CompiledModule { image, log, options })
}

/// The directory of the on-disk cache, if any: `ORRERY_KERNEL_CACHE`, else
/// `$XDG_CACHE_HOME/orrery`, else `$HOME/.cache/orrery`.
pub fn disk_cache_dir() -> Option<PathBuf> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(dir) = non_empty("ORRERY_KERNEL_CACHE") {
        return Some(PathBuf::from(dir));
    }
    if let Some(xdg) = non_empty("XDG_CACHE_HOME") {
        return Some(PathBuf::from(xdg).join("orrery"));
    }
    non_empty("HOME").map(|h| PathBuf::from(h).join(".cache").join("orrery"))
}

/// FNV-1a over `parts` (separated by a 0xff byte), from `basis`: stable across Rust
/// versions and platforms, unlike `DefaultHasher`.
fn fnv1a(basis: u64, parts: &[&[u8]]) -> u64 {
    let mut h = basis;
    for part in parts {
        for &b in part.iter().chain(std::iter::once(&0xffu8)) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The file name of a module in the disk cache.
fn cache_file_name(module: &str, source: &str, nvrtc: (i32, i32), options: &[String]) -> String {
    let version = format!("nvrtc {}.{}", nvrtc.0, nvrtc.1);
    let joined = options.join("\u{1f}");
    let parts: [&[u8]; 3] = [source.as_bytes(), version.as_bytes(), joined.as_bytes()];
    let a = fnv1a(0xcbf2_9ce4_8422_2325, &parts);
    let b = fnv1a(0x6c62_272e_07bb_0142, &parts);
    let stem: String = module.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!("{stem}-{a:016x}{b:016x}.cubin")
}

/// Writes `bytes` to `path` atomically (temporary file, then rename); errors ignored.
fn write_atomically(path: &Path, bytes: &[u8]) {
    let Some(dir) = path.parent() else { return };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    let tmp = dir.join(format!(
        ".{}.{}.tmp",
        path.file_name().and_then(|n| n.to_str()).unwrap_or("module"),
        std::process::id()
    ));
    if std::fs::write(&tmp, bytes).is_ok() && std::fs::rename(&tmp, path).is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
}

/// A module loaded into the device's context, with its function handles.
struct LoadedModule {
    handle: CUmodule,
    functions: Mutex<HashMap<String, Arc<Function>>>,
    ctx: Arc<Context>,
}

// SAFETY: CUmodule and CUfunction are handles valid in any thread that has their context
// current (`Context::bind` before every use); the map is behind a mutex.
unsafe impl Send for LoadedModule {}
// SAFETY: as above.
unsafe impl Sync for LoadedModule {}

impl Drop for LoadedModule {
    fn drop(&mut self) {
        if self.ctx.bind().is_ok() {
            // SAFETY: the module is owned here and unloaded once; every executor sharing
            // this cache has synchronised its stream before dropping it (no kernel runs).
            let _ = unsafe { dres::module::unload(self.handle) };
        }
    }
}

/// Identity of a kernel source: its name, the address and length of its static CUDA
/// text, and its defines ([`KernelSource::define_key`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct SourceKey {
    name: &'static str,
    text: (usize, usize),
    defines: String,
}

pub(crate) fn source_key(source: &KernelSource) -> SourceKey {
    SourceKey {
        name: source.name,
        text: (source.cuda.as_ptr() as usize, source.cuda.len()),
        defines: if source.defines.is_empty() { String::new() } else { source.define_key() },
    }
}

/// One kernel entry point: its handle, its parameter sizes as the driver reports them
/// (`cuFuncGetParamInfo`), its static shared memory, and the dynamic shared memory it was
/// last allowed.
pub(crate) struct Function {
    pub(crate) handle: CUfunction,
    /// Size in bytes of each parameter, in order.
    pub(crate) param_sizes: Vec<usize>,
    /// Statically allocated shared memory per block (`CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES`):
    /// it counts against the same 48 KB default limit as the dynamic part.
    pub(crate) static_shared: u32,
    /// Largest `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` set so far.
    pub(crate) dynamic_shared: AtomicU32,
}

// SAFETY: a CUfunction is an immutable handle, usable from any thread with its context
// current.
unsafe impl Send for Function {}
// SAFETY: as above; the mutable part is an atomic.
unsafe impl Sync for Function {}

/// The static shared memory of `f` in bytes.
fn static_shared(f: CUfunction) -> Result<u32> {
    let mut bytes = 0i32;
    // SAFETY: `f` is a live function of the current context; the pointer is valid for one
    // write.
    unsafe {
        sys::cuFuncGetAttribute(&raw mut bytes, sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, f)
    }
    .result()
    .map_err(|e| crate::error::device_error("cuFuncGetAttribute(SHARED_SIZE_BYTES)", e))?;
    Ok(u32::try_from(bytes).unwrap_or(0))
}

/// The parameter sizes of `f`, by asking `cuFuncGetParamInfo` for index 0, 1, ... until
/// the driver answers `CUDA_ERROR_INVALID_VALUE` (past the last parameter).
fn param_sizes(f: CUfunction) -> Result<Vec<usize>> {
    let mut sizes = Vec::new();
    // CUDA limits kernel parameters to 32764 bytes, so at most that many parameters.
    for index in 0..32_768usize {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: `f` is a live function of the current context; both pointers are valid
        // for one write.
        let r = unsafe { sys::cuFuncGetParamInfo(f, index, &raw mut offset, &raw mut size) };
        match r {
            CUresult::CUDA_SUCCESS => sizes.push(size),
            CUresult::CUDA_ERROR_INVALID_VALUE => return Ok(sizes),
            other => return Err(crate::error::device_error("cuFuncGetParamInfo", cudarc::driver::DriverError(other))),
        }
    }
    Ok(sizes)
}

/// The compiled modules of one device, shared by an executor and its forks.
pub(crate) struct ModuleCache {
    ctx: Arc<Context>,
    options: Vec<String>,
    arch: String,
    nvrtc: (i32, i32),
    dir: Option<PathBuf>,
    modules: Mutex<HashMap<SourceKey, Arc<LoadedModule>>>,
    /// Declarations already checked, with their entry point: keyed by the addresses of
    /// the signature, the module's name and text, and its defines (all `'static`), so a
    /// typed launch costs one lookup of plain integers.
    checked: Mutex<HashMap<TypedKey, Arc<Function>>>,
}

impl ModuleCache {
    pub(crate) fn new(ctx: Arc<Context>, policy: &Policy) -> Result<Self> {
        let (major, minor) = ctx.compute_capability;
        let arch = format!("sm_{major}{minor}");
        Ok(Self {
            options: compile_options(&arch, policy),
            arch,
            nvrtc: nvrtc_version()?,
            dir: disk_cache_dir(),
            modules: Mutex::new(HashMap::new()),
            checked: Mutex::new(HashMap::new()),
            ctx,
        })
    }

    /// The architecture modules are compiled for (e.g. `sm_90`).
    pub(crate) fn arch(&self) -> &str {
        &self.arch
    }

    fn load_image(image: &[u8]) -> std::result::Result<CUmodule, cudarc::driver::DriverError> {
        // SAFETY: `image` is a complete CUBIN produced by NVRTC (or read back from the
        // cache, which the driver validates); the context is current.
        unsafe { dres::module::load_data(image.as_ptr().cast()) }
    }

    /// Compiles (or fetches from disk) and loads `source`.
    fn load(&self, source: &KernelSource) -> Result<Arc<LoadedModule>> {
        self.ctx.bind()?;
        let mut options = self.options.clone();
        options.extend(source.cuda_options());
        let path = self.dir.as_ref().map(|d| d.join(cache_file_name(source.name, source.cuda, self.nvrtc, &options)));
        if let Some(path) = &path
            && let Ok(bytes) = std::fs::read(path)
            && let Ok(handle) = Self::load_image(&bytes)
        {
            return Ok(self.wrap(handle));
        }
        let (cubin, _) = nvrtc_compile(source.name, source.cuda, &options, Output::Cubin, &self.arch)?;
        let handle = Self::load_image(&cubin).map_err(|e| Error::KernelCompile {
            module: source.name.to_owned(),
            target: self.arch.clone(),
            log: format!("the driver refused the compiled module: {}", describe(e)),
        })?;
        if let Some(path) = &path {
            write_atomically(path, &cubin);
        }
        Ok(self.wrap(handle))
    }

    fn wrap(&self, handle: CUmodule) -> Arc<LoadedModule> {
        Arc::new(LoadedModule { handle, functions: Mutex::new(HashMap::new()), ctx: Arc::clone(&self.ctx) })
    }

    fn module(&self, source: &KernelSource) -> Result<Arc<LoadedModule>> {
        let key = source_key(source);
        let mut modules = self.modules.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(m) = modules.get(&key) {
            return Ok(Arc::clone(m));
        }
        let m = self.load(source)?;
        modules.insert(key, Arc::clone(&m));
        Ok(m)
    }

    /// Compiles and loads `source` if it is not loaded yet.
    pub(crate) fn prepare(&self, source: &KernelSource) -> Result<()> {
        self.module(source).map(|_| ())
    }

    /// The entry point `entry` of `source` (compiling and loading on first use).
    pub(crate) fn function(&self, source: &KernelSource, entry: &str) -> Result<Arc<Function>> {
        let module = self.module(source)?;
        let mut functions = module.functions.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(f) = functions.get(entry) {
            return Ok(Arc::clone(f));
        }
        let name = CString::new(entry).map_err(|_| Error::InvalidArgument {
            what: "kernel entry",
            reason: format!("{entry:?} contains a NUL byte"),
        })?;
        self.ctx.bind()?;
        // SAFETY: the module is loaded in the current context and `name` is a valid C string.
        let handle = unsafe { dres::module::get_function(module.handle, name) }.map_err(|e| {
            if e.0 == CUresult::CUDA_ERROR_NOT_FOUND {
                Error::InvalidArgument {
                    what: "kernel entry",
                    reason: format!(
                        "module {} has no entry point {entry:?} (is it declared extern \"C\"?)",
                        source.name
                    ),
                }
            } else {
                crate::error::device_error("cuModuleGetFunction", e)
            }
        })?;
        let f = Arc::new(Function {
            handle,
            param_sizes: param_sizes(handle)?,
            static_shared: static_shared(handle)?,
            dynamic_shared: AtomicU32::new(0),
        });
        functions.insert(entry.to_owned(), Arc::clone(&f));
        Ok(f)
    }

    /// The entry point of a typed declaration, checked against `source` once: its own
    /// order, the CUDA text's parameter list ([`cuda_params`] + [`check_cuda_signature`])
    /// and the driver's parameter count and sizes. Later calls are one map lookup.
    pub(crate) fn typed_function(
        &self,
        source: &KernelSource,
        signature: &'static KernelSignature,
    ) -> Result<Arc<Function>> {
        let key = typed_key(source, signature);
        if let Some(f) = self.checked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).get(&key) {
            return Ok(Arc::clone(f));
        }
        signature.check_order(source.name)?;
        if let Some(params) = cuda_params(source.cuda, signature.entry) {
            check_cuda_signature(source.name, &params, signature)?;
        }
        let f = self.function(source, signature.entry)?;
        let err = |reason: String| Error::KernelSignature {
            module: source.name.to_owned(),
            entry: signature.entry.to_owned(),
            reason,
        };
        if f.param_sizes.len() != signature.params.len() {
            return Err(err(format!(
                "declared with {} parameter(s), the compiled entry point has {}",
                signature.params.len(),
                f.param_sizes.len()
            )));
        }
        for (i, (p, &size)) in signature.params.iter().zip(&f.param_sizes).enumerate() {
            let want = match p.kind {
                ParamKind::Read { .. } | ParamKind::Write { .. } => 8,
                ParamKind::Scalar(ty) => ty.size(),
            };
            if want != size {
                return Err(err(format!(
                    "parameter {i} ({}) takes {want} bytes as declared, the compiled entry point {size}",
                    p.name
                )));
            }
        }
        self.checked.lock().unwrap_or_else(std::sync::PoisonError::into_inner).insert(key, Arc::clone(&f));
        Ok(f)
    }

    /// [`ModuleCache::typed_function`] without the handle.
    pub(crate) fn check_signature(&self, source: &KernelSource, signature: &'static KernelSignature) -> Result<()> {
        self.typed_function(source, signature).map(drop)
    }
}

/// Identity of a (declaration, module) pair: the addresses and lengths of `'static` data.
type TypedKey = [usize; 6];

fn typed_key(source: &KernelSource, signature: &'static KernelSignature) -> TypedKey {
    [
        std::ptr::from_ref(signature) as usize,
        source.name.as_ptr() as usize,
        source.cuda.as_ptr() as usize,
        source.cuda.len(),
        source.defines.as_ptr() as usize,
        source.defines.len(),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_names_change_with_every_input() {
        let opts = vec!["-arch=sm_90".to_owned()];
        let base = cache_file_name("core/scan", "src", (13, 0), &opts);
        assert!(base.starts_with("core_scan-"));
        assert!(std::path::Path::new(&base).extension().is_some_and(|e| e == "cubin"));
        assert_ne!(base, cache_file_name("core/scan", "src2", (13, 0), &opts));
        assert_ne!(base, cache_file_name("core/scan", "src", (13, 1), &opts));
        assert_ne!(base, cache_file_name("core/scan", "src", (13, 0), &["-arch=sm_80".to_owned()]));
        assert_eq!(base, cache_file_name("core/scan", "src", (13, 0), &opts));
    }

    #[test]
    fn architecture_names_give_their_compute_capability() {
        assert_eq!(arch_capability("sm_90"), Some((9, 0)));
        assert_eq!(arch_capability("compute_80"), Some((8, 0)));
        assert_eq!(arch_capability("sm_90a"), Some((9, 0)));
        assert_eq!(arch_capability("sm_100"), Some((10, 0)));
        assert_eq!(arch_capability("sm_"), None);
        assert_eq!(arch_capability("gfx90a"), None);
    }

    #[test]
    fn module_options_are_the_executors() {
        static DEFS: [orrery_core::Define; 1] = [orrery_core::Define { name: "X", value: "1" }];
        let source = KernelSource::new("m", "", "").with_defines(&DEFS);
        let options = module_options(&source, "compute_80");
        assert_eq!(options[..2], ["-arch=compute_80".to_owned(), STD_OPTION.to_owned()]);
        assert!(options[2..].starts_with(&Policy::for_compute_capability(8, 0).defines()));
        assert_eq!(options.last().map(String::as_str), Some("-DX=1"));
    }
}
