//! WGSL side: every variant the wgpu executor may compile, validated with naga as the
//! executor does ([`orrery_backend_wgpu::offline`]), and a small reader of compute entry
//! points in raw WGSL text.
//!
//! The reader sees every entry of a file, those inside `//#if` branches too (directives
//! are comments), so comparing it with the validated variants shows an entry that no
//! variant compiles: one that would never be validated here, nor compiled by the
//! executor. It strips `//` and (nested) `/* */` comments and accepts attributes in any
//! order before `fn`: `@compute @workgroup_size(X, Y) fn name(...)`.

use orrery_backend_wgpu::offline::{self, ShaderVariant, ValidatedModule};
use orrery_core::KernelSource;

/// `text` with `//` and nested `/* */` comments replaced by spaces (line breaks kept).
pub fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut depth = 0usize;
    let mut line_comment = false;
    while let Some(c) = chars.next() {
        let next = chars.peek().copied();
        if line_comment {
            if c == '\n' {
                line_comment = false;
                out.push('\n');
            } else {
                out.push(' ');
            }
        } else if c == '/' && next == Some('*') {
            chars.next();
            depth += 1;
            out.push_str("  ");
        } else if depth > 0 && c == '*' && next == Some('/') {
            chars.next();
            depth -= 1;
            out.push_str("  ");
        } else if depth > 0 {
            out.push(if c == '\n' { '\n' } else { ' ' });
        } else if c == '/' && next == Some('/') {
            line_comment = true;
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    out
}

/// One `@compute` function of a WGSL text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WgslEntry {
    /// Its name.
    pub name: String,
    /// The arguments of its `@workgroup_size(...)`, as written (empty without one).
    pub workgroup_size: String,
}

fn is_word_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Every `@compute` function of `text`, in order.
pub fn compute_entries(text: &str) -> Vec<WgslEntry> {
    let code = strip_comments(text);
    let mut out = Vec::new();
    // The attributes seen since the last other token: (name, arguments).
    let mut attributes: Vec<(&str, &str)> = Vec::new();
    let mut i = 0;
    let bytes = code.as_bytes();
    let word_at = |at: usize| {
        let end = code[at..].find(|c: char| !is_word_char(c)).map_or(code.len(), |e| at + e);
        (&code[at..end], end)
    };
    while i < bytes.len() {
        let c = bytes[i] as char;
        if c.is_whitespace() {
            i += 1;
        } else if c == '@' {
            let start = i + 1 + (code[i + 1..].len() - code[i + 1..].trim_start().len());
            let (name, end) = word_at(start);
            let mut j = end + (code[end..].len() - code[end..].trim_start().len());
            let mut args = "";
            if code[j..].starts_with('(') {
                let mut depth = 0usize;
                let mut close = code.len();
                for (k, ch) in code[j..].char_indices() {
                    match ch {
                        '(' => depth += 1,
                        ')' => {
                            depth -= 1;
                            if depth == 0 {
                                close = j + k;
                                break;
                            }
                        }
                        _ => {}
                    }
                }
                args = code.get(j + 1..close).unwrap_or("").trim();
                j = (close + 1).min(code.len());
            } else {
                j = end;
            }
            attributes.push((name, args));
            i = j.max(i + 1);
        } else if is_word_char(c) {
            let (word, end) = word_at(i);
            if word == "fn" {
                let start = end + (code[end..].len() - code[end..].trim_start().len());
                let (name, _) = word_at(start);
                if !name.is_empty() && attributes.iter().any(|(a, _)| *a == "compute") {
                    let workgroup_size =
                        attributes.iter().find(|(a, _)| *a == "workgroup_size").map_or("", |(_, s)| *s);
                    out.push(WgslEntry { name: name.to_owned(), workgroup_size: workgroup_size.to_owned() });
                }
            }
            attributes.clear();
            i = end.max(i + 1);
        } else {
            attributes.clear();
            i += c.len_utf8().max(1);
            while i < bytes.len() && !code.is_char_boundary(i) {
                i += 1;
            }
        }
    }
    out
}

/// The outcome of validating one variant.
#[derive(Debug)]
pub struct Validation {
    /// The variant.
    pub variant: ShaderVariant,
    /// Its reflection, or the preprocessor's or naga's message.
    pub result: Result<ValidatedModule, String>,
}

/// Every variant the executor may compile: the core modules' and those of every
/// module's WGSL (`sources` with an empty WGSL text are CUDA only and have none).
pub fn variants(sources: &[KernelSource]) -> Vec<ShaderVariant> {
    let mut out = offline::core_variants();
    for source in sources.iter().filter(|s| !s.wgsl.trim().is_empty()) {
        for v in offline::source_variants(source) {
            if !out.contains(&v) {
                out.push(v);
            }
        }
    }
    out
}

/// Validates every variant.
pub fn validate_all(variants: Vec<ShaderVariant>) -> Vec<Validation> {
    variants
        .into_iter()
        .map(|variant| {
            let result = offline::validate(&variant).map_err(|e| match e {
                orrery_core::Error::KernelCompile { target, log, .. } => format!("{target}: {log}"),
                other => other.to_string(),
            });
            Validation { variant, result }
        })
        .collect()
}

/// The `//#include` names of a WGSL text.
pub fn include_names(text: &str) -> Vec<&str> {
    text.lines().filter_map(|l| l.trim_start().strip_prefix("//#include")).map(str::trim).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn comments_nest_and_lines_stay() {
        let s = strip_comments("a /* b /* c */ d */ e // f\ng");
        assert_eq!(s.split_whitespace().collect::<Vec<_>>(), ["a", "e", "g"]);
        assert_eq!(s.lines().count(), 2);
    }

    #[test]
    fn compute_entries_are_found_with_attributes_in_any_order() {
        let text = "\
// @compute @workgroup_size(1) fn commented() {}
/* @compute fn hidden() {} */
fn helper(x: u32) -> u32 { return x; }
@compute @workgroup_size(WORKGROUP_SIZE)
fn first(@builtin(global_invocation_id) gid: vec3<u32>) {}
@workgroup_size(64, 1, 1) @compute fn second() {}
//#if SUBGROUP
@compute
@workgroup_size(min(THREADS, 256u))
fn third(@builtin(subgroup_size) s: u32) {}
//#endif
@vertex fn not_compute() -> @builtin(position) vec4<f32> { return vec4<f32>(); }
";
        let e = compute_entries(text);
        let names: Vec<(&str, &str)> = e.iter().map(|e| (e.name.as_str(), e.workgroup_size.as_str())).collect();
        assert_eq!(names, [("first", "WORKGROUP_SIZE"), ("second", "64, 1, 1"), ("third", "min(THREADS, 256u)")]);
    }

    #[test]
    fn broken_text_gives_what_it_can() {
        assert!(compute_entries("@compute @workgroup_size(64 fn").is_empty());
        assert!(compute_entries("@").is_empty());
        assert_eq!(compute_entries("@compute fn é() {} @compute fn k() {}").len(), 1);
    }

    #[test]
    fn includes_are_listed() {
        assert_eq!(
            include_names("a\n  //#include core/common\n//#include core/segment \n"),
            ["core/common", "core/segment"]
        );
    }
}
