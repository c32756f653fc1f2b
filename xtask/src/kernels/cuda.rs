//! CUDA side: the entry points of a translation unit read from its text, the entry
//! points NVRTC put into the PTX, and the compilations themselves.
//!
//! The source parser is deliberately small: orrery's entry points are `extern "C"
//! __global__ void [attributes] name(params) {`, and the parser only has to be right for
//! those. It strips comments (keeping string literals and line breaks), skips
//! preprocessor directives (a `__global__` inside a `#define` is a macro template: its
//! entries exist only after expansion and are counted, not parsed), and between
//! `__global__` and the parameter list accepts any sequence of words with optional
//! parenthesised arguments (`void`, `__launch_bounds__(A, B)`, other attribute macros):
//! the parameter list is the parenthesised group followed by `{`, and the name is the
//! word before it. The PTX lists every entry with its parameter sizes, so each parsed
//! entry is also checked against it (the parser must agree with the compiler).

use anyhow::{Result, bail};
use orrery_core::KernelSource;

/// One parameter of a CUDA entry point.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaParam {
    /// Its name (empty when the declaration has none).
    pub name: String,
    /// Whether it is a pointer (or an array parameter).
    pub pointer: bool,
    /// Whether the pointee (for a pointer) or the value is `const`.
    pub constant: bool,
    /// The base type, words joined by one space (`u32`, `unsigned long long`, `float4`).
    pub base: String,
}

/// One `__global__` function defined in a translation unit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CudaEntry {
    /// Its name.
    pub name: String,
    /// Its parameters in order.
    pub params: Vec<CudaParam>,
    /// Whether it is declared `extern "C"` (otherwise its PTX name is mangled).
    pub extern_c: bool,
    /// Byte offset of the name in the text (for [`location`]).
    pub offset: usize,
}

/// What [`entries`] finds in a translation unit.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ParsedUnit {
    /// The entry points defined outside macros, in text order.
    pub entries: Vec<CudaEntry>,
    /// `__global__` inside `#define` bodies: entries that exist only once expanded.
    pub macro_templates: usize,
}

/// `text` with `//` and `/* */` comments replaced by spaces (line breaks kept, so byte
/// offsets and line numbers stay), and string and character literals left intact.
pub fn strip_comments(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        let next = bytes.get(i + 1).copied();
        if c == b'/' && next == Some(b'/') {
            while i < bytes.len() && bytes[i] != b'\n' {
                out.push(b' ');
                i += 1;
            }
        } else if c == b'/' && next == Some(b'*') {
            out.extend_from_slice(b"  ");
            i += 2;
            while i < bytes.len() && !(bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/')) {
                out.push(if bytes[i] == b'\n' { b'\n' } else { b' ' });
                i += 1;
            }
            if i < bytes.len() {
                out.extend_from_slice(b"  ");
                i += 2;
            }
        } else if c == b'"' || c == b'\'' {
            out.push(c);
            i += 1;
            while i < bytes.len() && bytes[i] != c && bytes[i] != b'\n' {
                if bytes[i] == b'\\' && i + 1 < bytes.len() {
                    out.push(bytes[i]);
                    i += 1;
                }
                out.push(bytes[i]);
                i += 1;
            }
            if i < bytes.len() && bytes[i] == c {
                out.push(c);
                i += 1;
            }
        } else {
            out.push(c);
            i += 1;
        }
    }
    // Only ASCII bytes were replaced (by ASCII), and multi-byte characters outside
    // comments were copied whole; inside comments every byte became a space.
    String::from_utf8(out).unwrap_or_default()
}

/// `text` with the contents of string and character literals replaced by spaces (the
/// quotes stay), so that no word inside a literal is read as code.
fn blank_literals(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for c in text.chars() {
        let Some(q) = quote else {
            if c == '"' || c == '\'' {
                quote = Some(c);
            }
            out.push(c);
            continue;
        };
        if escaped {
            escaped = false;
        } else if c == '\\' {
            escaped = true;
        } else if c == q || c == '\n' {
            quote = None;
            out.push(c);
            continue;
        }
        // Keep the byte length: offsets into the text stay valid.
        out.extend(std::iter::repeat_n(' ', c.len_utf8()));
    }
    out
}

/// `text` (comments already stripped) with every preprocessor directive, continuation
/// lines included, replaced by spaces; also the number of `__global__` words they held.
fn blank_directives(text: &str) -> (String, usize) {
    let mut out = String::with_capacity(text.len());
    let mut templates = 0;
    let mut in_directive = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        if in_directive || body.trim_start().starts_with('#') {
            templates += words(body).filter(|(_, w)| *w == "__global__").count();
            in_directive = body.trim_end().ends_with('\\');
            out.extend(line.chars().map(|c| if c == '\n' { '\n' } else { ' ' }));
        } else {
            out.push_str(line);
        }
    }
    (out, templates)
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The identifiers of `text` with their byte offsets.
fn words(text: &str) -> impl Iterator<Item = (usize, &str)> {
    let mut rest = text.char_indices().peekable();
    std::iter::from_fn(move || {
        loop {
            let (start, c) = rest.next()?;
            if is_word_char(c) {
                let mut end = start + c.len_utf8();
                while let Some(&(i, c)) = rest.peek() {
                    if !is_word_char(c) {
                        break;
                    }
                    end = i + c.len_utf8();
                    rest.next();
                }
                return Some((start, &text[start..end]));
            }
        }
    })
}

/// The end (exclusive) of the balanced group opened at `open` (`text[open]` is `(`).
fn balanced_end(text: &str, open: usize) -> Option<usize> {
    let mut depth = 0usize;
    for (i, c) in text[open..].char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth == 0 {
                    return Some(open + i + 1);
                }
            }
            _ => {}
        }
    }
    None
}

fn skip_ws(text: &str, at: usize) -> usize {
    at + (text[at..].len() - text[at..].trim_start().len())
}

/// The entry points defined in a CUDA translation unit (see the module documentation).
///
/// # Errors
/// A `__global__` whose declaration cannot be read (no parameter list before the end of
/// the text or before a `;` or `{`), naming its line.
pub fn entries(text: &str) -> Result<ParsedUnit> {
    let (with_literals, macro_templates) = blank_directives(&strip_comments(text));
    // Scanned for code; `with_literals` (same offsets) still says `extern "C"`.
    let code = blank_literals(&with_literals);
    let mut found = Vec::new();
    for (at, word) in words(&code) {
        if word != "__global__" {
            continue;
        }
        // `extern "C"` right before, possibly with other words between (`static`).
        let start = code[..at].rfind([';', '}', '{', ')']).map_or(0, |i| i + 1);
        let linkage = &with_literals[start..at];
        let extern_c = linkage.contains("extern") && linkage.contains("\"C\"");
        let mut pos = at + word.len();
        let mut last_word: Option<(usize, &str)> = None;
        let decl = loop {
            pos = skip_ws(&code, pos);
            let Some(c) = code[pos..].chars().next() else {
                bail!("line {}: `__global__` without a parameter list", line_of(text, at));
            };
            if is_word_char(c) {
                let end = pos + code[pos..].find(|c: char| !is_word_char(c)).unwrap_or(code.len() - pos);
                last_word = Some((pos, &code[pos..end]));
                pos = end;
            } else if c == '(' {
                let Some(end) = balanced_end(&code, pos) else {
                    bail!("line {}: unbalanced parentheses after `__global__`", line_of(text, at));
                };
                let after = skip_ws(&code, end);
                match code[after..].chars().next() {
                    Some('{') => break Some((last_word, pos, end)),
                    // A prototype: its definition comes later (or elsewhere).
                    Some(';') => break None,
                    // An attribute's arguments (`__launch_bounds__(256)`): keep going.
                    _ => pos = end,
                }
            } else if c == '*' || c == '&' || c == ':' || c == '<' || c == '>' || c == ',' {
                pos += 1;
            } else {
                bail!("line {}: unexpected `{c}` in a `__global__` declaration", line_of(text, at));
            }
        };
        let Some((name, open, close)) = decl else { continue };
        let Some((offset, name)) = name else {
            bail!("line {}: `__global__` function without a name", line_of(text, at));
        };
        let params = split_params(&code[open + 1..close - 1]).into_iter().map(parse_param).collect();
        found.push(CudaEntry { name: name.to_owned(), params, extern_c, offset });
    }
    Ok(ParsedUnit { entries: found, macro_templates })
}

/// The comma-separated items of a parameter list (commas inside `()`, `<>`, `[]` kept).
fn split_params(list: &str) -> Vec<&str> {
    let mut items = Vec::new();
    let (mut depth, mut start) = (0i32, 0);
    for (i, c) in list.char_indices() {
        match c {
            '(' | '<' | '[' => depth += 1,
            ')' | '>' | ']' => depth -= 1,
            ',' if depth == 0 => {
                items.push(list[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    items.push(list[start..].trim());
    items.retain(|p| !p.is_empty() && *p != "void");
    items
}

/// Words of C type names that can never be a parameter's name.
const TYPE_WORDS: &[&str] = &["unsigned", "signed", "int", "long", "short", "char", "float", "double", "bool"];

fn parse_param(text: &str) -> CudaParam {
    let star = text.find('*');
    let array = text.contains('[');
    let pointer = star.is_some() || array;
    let before_star = star.map_or(text, |s| &text[..s]);
    let ignored = |w: &str| w.starts_with("__restrict") || w == "restrict" || w == "volatile" || w == "struct";
    let mut all: Vec<&str> = words(text.split('[').next().unwrap_or(text)).map(|(_, w)| w).collect();
    all.retain(|w| !ignored(w));
    let constant = if star.is_some() { words(before_star).any(|(_, w)| w == "const") } else { all.contains(&"const") };
    all.retain(|w| *w != "const");
    let name = match all.last() {
        Some(w) if all.len() > 1 && !TYPE_WORDS.contains(w) => all.pop().unwrap_or_default().to_owned(),
        _ => String::new(),
    };
    CudaParam { name, pointer, constant, base: all.join(" ") }
}

/// 1-based line of byte `offset` in `text`.
pub fn line_of(text: &str, offset: usize) -> usize {
    text[..offset.min(text.len())].matches('\n').count() + 1
}

/// `file:line` of byte `offset` in a translation unit, following its `#line N "file"`
/// directives (`unit` names it where none precedes the offset).
pub fn location(text: &str, offset: usize, unit: &str) -> String {
    let mut file = unit.to_owned();
    let mut line = 1usize;
    let upto = &text[..offset.min(text.len())];
    for l in upto.split_inclusive('\n') {
        if !l.ends_with('\n') {
            break;
        }
        let directive = l.trim_start().strip_prefix("#line").map(str::trim);
        match directive.and_then(|d| d.split_once(char::is_whitespace)) {
            Some((n, f)) if n.parse::<usize>().is_ok() => {
                line = n.parse().unwrap_or(1);
                f.trim().trim_matches('"').clone_into(&mut file);
            }
            _ => line += 1,
        }
    }
    format!("{file}:{line}")
}

/// One `.entry` of a PTX text with the byte size of each parameter.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PtxEntry {
    /// The entry's (unmangled, for `extern "C"`) name.
    pub name: String,
    /// Byte size of each `.param`, in order.
    pub param_sizes: Vec<usize>,
}

/// Every `.entry` of a PTX text.
pub fn ptx_entries(ptx: &str) -> Vec<PtxEntry> {
    let mut out = Vec::new();
    let mut lines = ptx.lines();
    while let Some(line) = lines.next() {
        let Some(rest) = line.split(".entry").nth(1).filter(|_| line.trim_start().starts_with('.')) else {
            continue;
        };
        let rest = rest.trim();
        let name: String = rest.chars().take_while(|&c| is_word_char(c) || c == '$').collect();
        if name.is_empty() {
            continue;
        }
        let mut params = Vec::new();
        let mut list = rest[name.len()..].to_owned();
        // The parameter list runs to the line with `)`.
        while !list.contains(')') {
            match lines.next() {
                Some(l) => {
                    list.push('\n');
                    list.push_str(l);
                }
                None => break,
            }
        }
        for decl in list.split(".param").skip(1) {
            params.push(ptx_param_size(decl));
        }
        out.push(PtxEntry { name, param_sizes: params });
    }
    out
}

/// Byte size of one PTX parameter declaration (after `.param`): `.u64 .ptr ... name`,
/// `.u32 name`, `.align 8 .b8 name[16]`.
fn ptx_param_size(decl: &str) -> usize {
    let decl = decl.split([',', ')']).next().unwrap_or(decl);
    let elem = decl
        .split_whitespace()
        .find_map(|t| {
            let t = t.strip_prefix('.')?;
            let bits = t.strip_prefix(['u', 's', 'b', 'f'])?;
            bits.parse::<usize>().ok()
        })
        .unwrap_or(0)
        / 8;
    let count = decl
        .split('[')
        .nth(1)
        .and_then(|r| r.split(']').next())
        .and_then(|n| n.trim().parse::<usize>().ok())
        .unwrap_or(1);
    elem * count
}

/// Size in bytes of a CUDA base type of a by-value parameter, where known.
pub fn base_size(base: &str) -> Option<usize> {
    Some(match canonical(base)? {
        "u32" | "i32" | "f32" => 4,
        "u64" | "i64" | "f64" | "vec2<u32>" | "vec2<i32>" | "vec2<f32>" => 8,
        "vec4<u32>" | "vec4<i32>" | "vec4<f32>" | "vec2<f64>" => 16,
        _ => return None,
    })
}

/// A CUDA base type under the WGSL-style name of what it holds (`unsigned int` and
/// `u32` are `u32`, `unsigned long long` is `u64`, `float4` is `vec4<f32>`); `None` for
/// types outside this list (structs).
pub fn canonical(base: &str) -> Option<&'static str> {
    Some(match base {
        "u32" | "unsigned" | "unsigned int" | "uint32_t" => "u32",
        "i32" | "int" | "signed" | "signed int" | "int32_t" => "i32",
        "f32" | "float" => "f32",
        "f64" | "double" => "f64",
        "u64" | "unsigned long long" | "unsigned long long int" | "uint64_t" => "u64",
        "i64" | "long long" | "long long int" | "int64_t" => "i64",
        "uint2" => "vec2<u32>",
        "int2" => "vec2<i32>",
        "float2" => "vec2<f32>",
        "uint4" => "vec4<u32>",
        "int4" => "vec4<i32>",
        "float4" => "vec4<f32>",
        "double2" => "vec2<f64>",
        _ => return None,
    })
}

/// Checks a parsed entry against its PTX: the same parameter count, pointers as 8
/// bytes, known scalar types at their size. `None` when they agree.
pub fn disagreement(entry: &CudaEntry, ptx: &PtxEntry) -> Option<String> {
    if entry.params.len() != ptx.param_sizes.len() {
        return Some(format!(
            "the source declares {} parameter(s), the PTX has {}",
            entry.params.len(),
            ptx.param_sizes.len()
        ));
    }
    for (i, (p, &size)) in entry.params.iter().zip(&ptx.param_sizes).enumerate() {
        let want = if p.pointer { Some(8) } else { base_size(&p.base) };
        if let Some(want) = want
            && want != size
        {
            return Some(format!("parameter {i} ({} `{}`) is {want} bytes, the PTX's {size}", p.name, p.base));
        }
    }
    None
}

/// One CUDA module to compile: the crate that launches it and its source.
#[derive(Debug, Clone, Copy)]
pub struct Module {
    /// The crate that owns and launches it.
    pub owner: &'static str,
    /// The module (name, texts, defines).
    pub source: KernelSource,
}

impl Module {
    /// `name` or `name [DEFINES]`: unique among the modules (a module compiled for
    /// several define sets appears once per set).
    pub fn label(&self) -> String {
        if self.source.defines.is_empty() {
            self.source.name.to_owned()
        } else {
            format!("{} [{}]", self.source.name, self.source.define_key())
        }
    }
}

/// Every kernel module the crates compile at run time, from each crate's own list.
pub fn modules() -> Vec<Module> {
    let mut out = Vec::new();
    let mut add = |owner: &'static str, sources: &[KernelSource]| {
        out.extend(sources.iter().map(|&source| Module { owner, source }));
    };
    add("orrery-backend-cuda", &orrery_backend_cuda::CORE_MODULES);
    add("orrery-balltree", &orrery_balltree::gpu::KERNEL_MODULES);
    add("orrery-tree-build", &orrery_tree_build::gpu::KERNEL_MODULES);
    add("orrery-tree-build", &orrery_tree_build::gpu_view::KERNEL_MODULES);
    add("orrery-traverse", &orrery_traverse::gpu::KERNEL_MODULES);
    add("orrery-sim", &orrery_sim::backend::device::KERNEL_MODULES);
    add("orrery-clusters", &orrery_clusters::gpu::KERNEL_MODULES);
    add("orrery-conformance", &[orrery_conformance::TEST_KERNELS]);
    out
}

/// The outcome of compiling one module for one architecture.
#[derive(Debug)]
pub struct Compilation {
    /// Index into the module list.
    pub module: usize,
    /// The architecture (`compute_90`, `sm_90`).
    pub arch: String,
    /// The image and log, or the error (NVRTC's log for a compile error).
    pub result: Result<orrery_backend_cuda::CompiledModule, String>,
    /// Wall time of the compilation.
    pub seconds: f64,
}

/// The extra NVRTC option that makes ptxas report each entry's resources.
pub const PTXAS_VERBOSE: &str = "--ptxas-options=-v";

/// Compiles every module for every architecture on `jobs` threads: PTX for the
/// `compute_*` ones, CUBINs with ptxas's report for the `sm_*` ones. Results come back
/// in (module, architecture) order.
pub fn compile_all(modules: &[Module], archs: &[String], jobs: usize) -> Vec<Compilation> {
    let work: Vec<(usize, &str)> =
        (0..modules.len()).flat_map(|m| archs.iter().map(move |a| (m, a.as_str()))).collect();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::with_capacity(work.len()));
    std::thread::scope(|s| {
        for _ in 0..jobs.max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(&(m, arch)) = work.get(i) else { break };
                    let extra: &[&str] = if arch.starts_with("sm_") { &[PTXAS_VERBOSE] } else { &[] };
                    let t = std::time::Instant::now();
                    let result =
                        orrery_backend_cuda::compile_module_with_log(&modules[m].source, arch, extra).map_err(|e| {
                            match e {
                                orrery_core::Error::KernelCompile { log, .. } => log,
                                other => other.to_string(),
                            }
                        });
                    let c =
                        Compilation { module: m, arch: arch.to_owned(), result, seconds: t.elapsed().as_secs_f64() };
                    results.lock().unwrap_or_else(std::sync::PoisonError::into_inner).push((i, c));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(std::sync::PoisonError::into_inner);
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, c)| c).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const UNIT: &str = r#"// header: __global__ void commented(int* p) {}
#define K_THREADS 256
#line 1 "kernels/demo/k.cu"
/* a block comment with __global__ void not_an_entry(float* q) { } */
__device__ u32 helper(u32 a) { return a; }
extern "C" __global__ void __launch_bounds__(K_THREADS, 2) scale(const float* __restrict__ input,
    float* __restrict__ output, u32 n, float factor) {
    const char* s = "// not a comment, nor __global__ void k(int* p) {}";
}
extern "C" __global__ void plain(unsigned long long* keys, const unsigned int count) {}
extern "C" __global__ void prototype(int* p);
#define ENTRY(NAME, T) \
    extern "C" __global__ void NAME(const T* in, T* out) { out[0] = in[0]; }
ENTRY(copy_u32, u32)
__global__ void mangled(double values[], int) {}
extern "C" __global__ void none() {}
"#;

    #[test]
    fn comments_are_blanked_but_strings_and_lines_kept() {
        let s = strip_comments("a // x\n/* y\nz */ b \"// s\" '/'");
        assert_eq!(s.len(), "a // x\n/* y\nz */ b \"// s\" '/'".len());
        assert_eq!(s.lines().count(), 3);
        assert!(s.contains("\"// s\"") && s.contains("'/'"));
        assert!(!s.contains('x') && !s.contains('y') && !s.contains('z'));
    }

    #[test]
    fn entries_are_read_past_attributes_comments_and_macros() {
        let unit = entries(UNIT).unwrap();
        let names: Vec<&str> = unit.entries.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["scale", "plain", "mangled", "none"]);
        assert_eq!(unit.macro_templates, 1);
        let scale = &unit.entries[0];
        assert!(scale.extern_c);
        let p = &scale.params;
        assert_eq!(p.len(), 4);
        assert_eq!(p[0], CudaParam { name: "input".into(), pointer: true, constant: true, base: "float".into() });
        assert_eq!(p[1], CudaParam { name: "output".into(), pointer: true, constant: false, base: "float".into() });
        assert_eq!(p[2], CudaParam { name: "n".into(), pointer: false, constant: false, base: "u32".into() });
        let plain = &unit.entries[1].params;
        assert_eq!(plain[0].base, "unsigned long long");
        assert_eq!(
            plain[1],
            CudaParam { name: "count".into(), pointer: false, constant: true, base: "unsigned int".into() }
        );
        let mangled = &unit.entries[2];
        assert!(!mangled.extern_c);
        assert_eq!(
            mangled.params[0],
            CudaParam { name: "values".into(), pointer: true, constant: false, base: "double".into() }
        );
        assert_eq!(
            mangled.params[1],
            CudaParam { name: String::new(), pointer: false, constant: false, base: "int".into() }
        );
        assert!(unit.entries[3].params.is_empty());
        assert_eq!(location(UNIT, scale.offset, "unit"), "kernels/demo/k.cu:3");
        assert_eq!(location(UNIT, 3, "unit"), "unit:1");
    }

    #[test]
    fn literals_are_blanked_with_their_length() {
        let text = "a \"x\\\"y\" 'z' é\"ü\" b";
        let blank = blank_literals(text);
        assert_eq!(blank.len(), text.len());
        assert_eq!(blank.split_whitespace().collect::<Vec<_>>(), ["a", "\"", "\"", "'", "'", "é\"", "\"", "b"]);
    }

    #[test]
    fn a_pointer_to_const_is_not_a_const_pointer() {
        assert!(parse_param("const float* p").constant);
        assert!(parse_param("float const* p").constant);
        assert!(!parse_param("float* const p").constant);
    }

    #[test]
    fn broken_declarations_are_errors_not_panics() {
        assert!(entries("extern \"C\" __global__ void k(int* p").is_err());
        assert!(entries("extern \"C\" __global__").is_err());
        assert!(entries("extern \"C\" __global__ void k(int* p) {").is_ok());
        assert!(entries("__global__ (int) {}").is_err());
        assert_eq!(entries("").unwrap(), ParsedUnit::default());
    }

    #[test]
    fn ptx_entries_have_their_parameter_sizes() {
        let ptx = "\n.visible .entry scale(\n\t.param .u64 .ptr .align 1 scale_param_0,\n\t.param .u32 scale_param_1,\n\
                   \t.param .align 8 .b8 scale_param_2[16]\n)\n{\n}\n.visible .entry none()\n{\n}\n";
        let e = ptx_entries(ptx);
        assert_eq!(e.len(), 2);
        assert_eq!(e[0], PtxEntry { name: "scale".into(), param_sizes: vec![8, 4, 16] });
        assert_eq!(e[1], PtxEntry { name: "none".into(), param_sizes: vec![] });
    }

    #[test]
    fn parsed_entries_are_checked_against_the_ptx() {
        let unit = entries(UNIT).unwrap();
        let scale = &unit.entries[0];
        assert_eq!(disagreement(scale, &PtxEntry { name: "scale".into(), param_sizes: vec![8, 8, 4, 4] }), None);
        assert!(disagreement(scale, &PtxEntry { name: "scale".into(), param_sizes: vec![8, 8, 4] }).is_some());
        assert!(disagreement(scale, &PtxEntry { name: "scale".into(), param_sizes: vec![8, 8, 8, 4] }).is_some());
    }
}
