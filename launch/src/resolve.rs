//! Checking a spec against a kernel's parameters, and materializing its buffers.
//!
//! Everything that can be wrong is checked first, from the spec and from `.npy` headers,
//! and the total size compared with the memory limit; only then are buffers allocated
//! and filled. A spec asking for a petabyte fails at once.

use std::fs::File;

use metalsim_isa::{Function, KernelParam, ParamKind, Space};

use crate::dispatch::{BufferBinding, ElemType, Launch, ThreadgroupBinding};
use crate::error::{SpecError, bytes_text};
use crate::init::{Init, generate};
use crate::npy::{NpyLayout, read_data, read_layout};
use crate::sampler;
use crate::spec::{BufferSpec, LaunchSpec};
use crate::texture::{self, PlannedTexture, TextureSpec};

/// Threadgroup-memory lengths are multiples of this (Metal's
/// `setThreadgroupMemoryLength:atIndex:` requires it).
const THREADGROUP_MEMORY_GRANULE: u32 = 16;

/// Where a buffer's bytes come from, once checked.
enum Source<'a> {
    /// Zeros (no `init`).
    Zeros,
    /// Generated from `init`.
    Generate(&'a Init),
    /// Read from a `.npy` file whose header was checked (the key names it for messages).
    Npy(String, File, NpyLayout),
}

/// A checked buffer, not yet allocated.
struct Planned<'a> {
    spec: &'a BufferSpec,
    count: u64,
    source: Source<'a>,
}

impl LaunchSpec {
    /// Checks the spec against the kernel's parameters and materializes every buffer.
    ///
    /// Every `[[buffer(n)]]` and `[[threadgroup(n)]]` parameter must be bound, with a
    /// compatible type and size, and every binding must match a parameter.
    /// `memory_limit` is the most bytes all buffers may take together; it is checked,
    /// from counts and element sizes (and `.npy` headers), before anything is allocated.
    pub fn resolve(&self, kernel: &Function, memory_limit: u64) -> Result<Launch, SpecError> {
        let grid = self.grid()?;
        if self.kernel != kernel.name {
            return Err(self.launch_error(format!(
                "`kernel = \"{}\"` but the kernel given is `{}`",
                self.kernel, kernel.name
            )));
        }
        self.check_names()?;
        self.check_bindings(kernel)?;
        let threadgroup_memory = self.threadgroup_memory(kernel)?;
        let textures = self.plan_textures(kernel)?;
        let samplers = self.samplers(kernel)?;
        let texture_bytes: u128 = textures.iter().map(|t| t.bytes()).sum();
        if let Some(t) = textures
            .iter()
            .find(|_| texture_bytes > memory_limit as u128)
        {
            return Err(self.texture_error(
                t.spec,
                format!(
                    "the textures need {}, more than the memory limit of {}",
                    bytes_text(texture_bytes),
                    bytes_text(memory_limit as u128)
                ),
            ));
        }

        let mut plans = Vec::with_capacity(self.buffers.len());
        for spec in &self.buffers {
            let param = kernel
                .param(ParamKind::Buffer, spec.index)
                .unwrap_or_else(|| unreachable!("check_bindings matched every buffer"));
            plans.push(
                self.plan(spec, param)
                    .map_err(|m| self.buffer_error(spec, m))?,
            );
        }
        plans.sort_by_key(|p| p.spec.index);
        self.check_memory(&plans, memory_limit - texture_bytes as u64)?;

        let mut buffers = Vec::with_capacity(plans.len());
        for plan in plans {
            let (spec, count) = (plan.spec, plan.count);
            let bytes = materialize(plan).map_err(|m| self.buffer_error(spec, m))?;
            buffers.push(BufferBinding {
                index: spec.index,
                name: spec.name.clone(),
                elem: spec.elem,
                count,
                bytes,
                output: spec.output,
            });
        }
        for t in textures {
            let spec = t.spec;
            buffers.push(texture::materialize(t).map_err(|m| self.texture_error(spec, m))?);
        }
        buffers.extend(samplers);
        Ok(Launch {
            kernel: self.kernel.clone(),
            grid,
            threadgroup: self.threadgroup.0,
            buffers,
            threadgroup_memory,
        })
    }

    fn launch_error(&self, message: String) -> SpecError {
        SpecError::Launch {
            origin: self.origin.clone(),
            message,
        }
    }

    fn texture_error(&self, spec: &TextureSpec, message: String) -> SpecError {
        SpecError::Texture {
            origin: self.origin.clone(),
            index: spec.index,
            name: spec.name.clone(),
            message,
        }
    }

    /// Checks every `[[texture]]` against the kernel's texture parameters (each bound
    /// once, each binding a parameter) and finds the textures' sizes.
    fn plan_textures(&self, kernel: &Function) -> Result<Vec<PlannedTexture<'_>>, SpecError> {
        let params: Vec<&KernelParam> = kernel
            .params
            .iter()
            .filter(|p| p.texture_index().is_some())
            .collect();
        let mut plans = Vec::with_capacity(self.textures.len());
        for (i, t) in self.textures.iter().enumerate() {
            if !is_file_name(&t.name) {
                return Err(self.texture_error(
                    t,
                    format!(
                        "`name = \"{}\"` cannot name a file: use letters, digits, `_`, `-` \
                         and `.` (not first)",
                        t.name
                    ),
                ));
            }
            let clash = self.buffers.iter().map(|b| &b.name);
            if let Some(other) = clash
                .chain(self.textures[..i].iter().map(|o| &o.name))
                .find(|o| o.eq_ignore_ascii_case(&t.name))
            {
                return Err(self.texture_error(
                    t,
                    format!(
                        "`name = \"{}\"` is already used by `{other}`; names must differ, \
                         even ignoring case, to make distinct output files",
                        t.name
                    ),
                ));
            }
            if self.textures[..i].iter().any(|o| o.index == t.index) {
                return Err(self.texture_error(
                    t,
                    format!(
                        "`index = {}` is given twice; give each [[texture]] once",
                        t.index
                    ),
                ));
            }
            let Some(p) = params.iter().find(|p| p.texture_index() == Some(t.index)) else {
                let listed: Vec<String> = params
                    .iter()
                    .filter_map(|p| Some(format!("{} ({})", p.texture_index()?, p.name)))
                    .collect();
                return Err(self.texture_error(
                    t,
                    format!(
                        "kernel `{}` has no [[texture({})]]; {}",
                        kernel.name,
                        t.index,
                        if listed.is_empty() {
                            "it has no texture parameters".to_string()
                        } else {
                            format!("its textures are {}", listed.join(", "))
                        }
                    ),
                ));
            };
            plans.push(texture::plan(t, p, &self.base_dir).map_err(|m| self.texture_error(t, m))?);
        }
        for p in &params {
            let n = p.texture_index().unwrap_or_default();
            if !self.textures.iter().any(|t| t.index == n) {
                return Err(self.launch_error(format!(
                    "kernel parameter `{} {}` ([[texture({n})]]) has no [[texture]] with \
                     `index = {n}`",
                    p.type_name, p.name
                )));
            }
        }
        Ok(plans)
    }

    /// Checks every `[[sampler]]` against the kernel's sampler parameters (each bound once,
    /// each binding a parameter) and makes their buffers.
    fn samplers(&self, kernel: &Function) -> Result<Vec<BufferBinding>, SpecError> {
        let params: Vec<(u32, &KernelParam)> = kernel
            .params
            .iter()
            .filter_map(|p| Some((p.sampler_index()?, p)))
            .collect();
        let fail = |index: u32, message: String| SpecError::Sampler {
            origin: self.origin.clone(),
            index,
            message,
        };
        let mut out = Vec::with_capacity(self.samplers.len());
        for (i, s) in self.samplers.iter().enumerate() {
            if self.samplers[..i].iter().any(|o| o.index == s.index) {
                return Err(fail(
                    s.index,
                    format!(
                        "`index = {}` is given twice; give each [[sampler]] once",
                        s.index
                    ),
                ));
            }
            if !params.iter().any(|(n, _)| *n == s.index) {
                let listed: Vec<String> = params
                    .iter()
                    .map(|(n, p)| format!("{n} ({})", p.name))
                    .collect();
                return Err(fail(
                    s.index,
                    format!(
                        "kernel `{}` has no [[sampler({})]]; {}",
                        kernel.name,
                        s.index,
                        if listed.is_empty() {
                            "it has no sampler parameters".to_string()
                        } else {
                            format!("its samplers are {}", listed.join(", "))
                        }
                    ),
                ));
            }
            out.push(sampler::materialize(s).map_err(|m| fail(s.index, m))?);
        }
        for (n, p) in &params {
            if !self.samplers.iter().any(|s| s.index == *n) {
                return Err(self.launch_error(format!(
                    "kernel parameter `sampler {}` ([[sampler({n})]]) has no [[sampler]] with \
                     `index = {n}`",
                    p.name
                )));
            }
        }
        Ok(out)
    }

    fn buffer_error(&self, spec: &BufferSpec, message: String) -> SpecError {
        SpecError::Buffer {
            origin: self.origin.clone(),
            index: spec.index,
            name: spec.name.clone(),
            message,
        }
    }

    /// Names are file names on every system: letters, digits, `_`, `-`, `.`, not
    /// starting with `.`, unique even ignoring case.
    fn check_names(&self) -> Result<(), SpecError> {
        for (i, b) in self.buffers.iter().enumerate() {
            if !is_file_name(&b.name) {
                return Err(self.buffer_error(
                    b,
                    format!(
                        "`name = \"{}\"` cannot name a file: use letters, digits, `_`, `-` \
                         and `.` (not first)",
                        b.name
                    ),
                ));
            }
            if let Some(other) = self.buffers[..i]
                .iter()
                .find(|o| o.name.eq_ignore_ascii_case(&b.name))
            {
                return Err(self.buffer_error(
                    b,
                    format!(
                        "`name = \"{}\"` is already used by buffer {} ({}); names must \
                         differ, even ignoring case, to make distinct output files",
                        b.name, other.index, other.name
                    ),
                ));
            }
            if let Some(other) = self.buffers[..i].iter().find(|o| o.index == b.index) {
                return Err(self.buffer_error(
                    b,
                    format!(
                        "`index = {}` is already bound by buffer {} ({})",
                        b.index, other.index, other.name
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Every buffer parameter has a `[[buffer]]` and every `[[buffer]]` a parameter.
    fn check_bindings(&self, kernel: &Function) -> Result<(), SpecError> {
        let mut params: Vec<&KernelParam> = kernel
            .params
            .iter()
            .filter(|p| {
                p.kind == ParamKind::Buffer
                    && p.texture_index().is_none()
                    && p.sampler_index().is_none()
            })
            .collect();
        params.sort_by_key(|p| p.index);
        for p in &params {
            if !self.buffers.iter().any(|b| b.index == p.index) {
                return Err(self.launch_error(format!(
                    "kernel parameter `{}` ([[buffer({})]]) has no [[buffer]] with \
                     `index = {}`",
                    describe(p),
                    p.index,
                    p.index
                )));
            }
        }
        for b in &self.buffers {
            if !params.iter().any(|p| p.index == b.index) {
                return Err(self.buffer_error(
                    b,
                    format!(
                        "kernel `{}` has no [[buffer({})]]; {}",
                        kernel.name,
                        b.index,
                        list_params(&params, "buffer")
                    ),
                ));
            }
        }
        Ok(())
    }

    /// Checks `[[threadgroup_memory]]` against the kernel's threadgroup parameters.
    fn threadgroup_memory(&self, kernel: &Function) -> Result<Vec<ThreadgroupBinding>, SpecError> {
        let mut params: Vec<&KernelParam> = kernel
            .params
            .iter()
            .filter(|p| p.kind == ParamKind::Threadgroup)
            .collect();
        params.sort_by_key(|p| p.index);
        let mut out = Vec::new();
        for (i, t) in self.threadgroup_memory.iter().enumerate() {
            let fail = |message: String| SpecError::ThreadgroupMemory {
                origin: self.origin.clone(),
                index: t.index,
                message,
            };
            if self.threadgroup_memory[..i]
                .iter()
                .any(|o| o.index == t.index)
            {
                return Err(fail(format!(
                    "`index = {}` is given twice; give each [[threadgroup_memory]] once",
                    t.index
                )));
            }
            let Some(p) = params.iter().find(|p| p.index == t.index) else {
                return Err(fail(format!(
                    "kernel `{}` has no [[threadgroup({})]]; {}",
                    kernel.name,
                    t.index,
                    list_params(&params, "threadgroup")
                )));
            };
            if t.bytes == 0 || !t.bytes.is_multiple_of(THREADGROUP_MEMORY_GRANULE) {
                return Err(fail(format!(
                    "`bytes = {}` must be a positive multiple of {THREADGROUP_MEMORY_GRANULE}, as \
                     Metal requires; use {}",
                    t.bytes,
                    t.bytes.max(1).div_ceil(THREADGROUP_MEMORY_GRANULE)
                        * THREADGROUP_MEMORY_GRANULE
                )));
            }
            if p.elem_size > 0 && !t.bytes.is_multiple_of(p.elem_size) {
                return Err(fail(format!(
                    "`bytes = {}` is not a whole number of `{}` ({} bytes each) for kernel \
                     parameter `{}`",
                    t.bytes,
                    p.type_name,
                    p.elem_size,
                    describe(p)
                )));
            }
            out.push(ThreadgroupBinding {
                index: t.index,
                bytes: t.bytes,
            });
        }
        for p in &params {
            if !out.iter().any(|t| t.index == p.index) {
                return Err(self.launch_error(format!(
                    "kernel parameter `{}` ([[threadgroup({})]]) has no [[threadgroup_memory]] \
                     with `index = {}`; add one giving its size in `bytes`",
                    describe(p),
                    p.index,
                    p.index
                )));
            }
        }
        out.sort_by_key(|t| t.index);
        Ok(out)
    }

    /// Checks one buffer against its parameter and finds its count, allocating nothing.
    fn plan<'a>(&self, spec: &'a BufferSpec, param: &KernelParam) -> Result<Planned<'a>, String> {
        let elem = spec.elem;
        let shape = check_type(param, elem)?;
        let lanes = elem.lanes as u64;
        let (source, from_init) = match &spec.init {
            None => (Source::Zeros, None),
            Some(Init::Npy(rel)) => {
                let key = format!("`init.npy = \"{}\"`", rel.display());
                let path = self.base_dir.join(rel);
                let file = File::open(&path)
                    .map_err(|e| format!("{key}: cannot open {}: {e}", path.display()))?;
                let layout = read_layout(&file, elem).map_err(|e| format!("{key}: {e}"))?;
                let n = layout.count;
                (Source::Npy(key, file, layout), Some(("`init.npy`", n)))
            }
            Some(init @ Init::Values(v)) => {
                if !(v.len() as u64).is_multiple_of(lanes) {
                    return Err(format!(
                        "`init.values` has {} components, not a whole number of `{}` \
                         ({lanes} each)",
                        v.len(),
                        elem.msl_name()
                    ));
                }
                (
                    Source::Generate(init),
                    Some(("`init.values`", v.len() as u64 / lanes)),
                )
            }
            Some(init) => (Source::Generate(init), None),
        };
        let count = match (spec.count, from_init) {
            (Some(c), Some((key, n))) if c != n => {
                return Err(if key == "`init.values`" {
                    format!(
                        "`init.values` gives {} components but `count = {c}` needs {}; give \
                         that many, drop `count`, or use `fill`",
                        n * lanes,
                        c as u128 * lanes as u128
                    )
                } else {
                    format!("`init.npy` holds {n} elements but `count = {c}`; drop `count`")
                });
            }
            (Some(c), _) => c,
            (None, Some((_, n))) => n,
            (None, None) => match shape {
                ParamShape::Typed { is_ref: true } => 1,
                ParamShape::Sized {
                    is_ref: true,
                    bytes,
                } if bytes.is_multiple_of(elem.size()) => (bytes / elem.size()) as u64,
                _ => {
                    return Err(format!(
                        "`count` is missing; it may be left out only when `init` is `values` \
                         or `npy`, or the kernel parameter (`{}`) is a reference",
                        describe(param)
                    ));
                }
            },
        };
        if count == 0 {
            return Err("the buffer is empty (0 elements); Metal has no empty buffers".into());
        }
        if let ParamShape::Sized { is_ref, bytes } = shape {
            check_size(param, elem, count, is_ref, bytes)?;
        }
        Ok(Planned {
            spec,
            count,
            source,
        })
    }

    /// Refuses a spec whose buffers need more than `limit` bytes together.
    fn check_memory(&self, plans: &[Planned<'_>], limit: u64) -> Result<(), SpecError> {
        let size = |p: &Planned<'_>| p.count as u128 * p.spec.elem.size() as u128;
        let needed: u128 = plans.iter().map(size).sum();
        if needed <= limit as u128 && usize::try_from(needed).is_ok() {
            return Ok(());
        }
        let largest = plans
            .iter()
            .max_by_key(|p| (size(p), std::cmp::Reverse(p.spec.index)))
            .unwrap_or_else(|| unreachable!("a positive total has a buffer"));
        Err(SpecError::MemoryLimit {
            origin: self.origin.clone(),
            needed,
            limit,
            largest_index: largest.spec.index,
            largest_name: largest.spec.name.clone(),
            largest_bytes: size(largest),
        })
    }
}

/// What the kernel parameter asks of a buffer's size.
#[derive(Clone, Copy)]
enum ParamShape {
    /// A scalar or vector type matching the spec's: any count (at least 1).
    Typed { is_ref: bool },
    /// A struct or other type the spec cannot spell: only the size is checked, `bytes`
    /// per element.
    Sized { is_ref: bool, bytes: u32 },
}

/// Checks the spec's `type` against the parameter's.
fn check_type(param: &KernelParam, elem: ElemType) -> Result<ParamShape, String> {
    let is_ref = param.is_ref;
    let declared = canonical_type_name(&param.type_name);
    let sized = ParamShape::Sized {
        is_ref,
        bytes: param.elem_size,
    };
    if param.is_struct {
        return Ok(sized);
    }
    if param.atomic {
        let underlying = atomic_underlying(&declared);
        return match underlying.as_deref().and_then(ElemType::from_msl_name) {
            Some(e) if e == elem => Ok(ParamShape::Typed { is_ref }),
            Some(e) => Err(format!(
                "kernel parameter `{}` is `{}`, given as `{}`, but `type` is `{}`",
                describe(param),
                param.type_name,
                e.msl_name(),
                elem.msl_name()
            )),
            None => Ok(sized),
        };
    }
    match ElemType::from_msl_name(&declared) {
        Some(e) if e == elem => Ok(ParamShape::Typed { is_ref }),
        Some(e) => Err(format!(
            "kernel parameter `{}` is `{}` but `type` is `{}`",
            describe(param),
            e.msl_name(),
            elem.msl_name()
        )),
        // Packed vectors, matrices and the like: bytes the spec gives as words.
        None => Ok(sized),
    }
}

/// For a struct (or other opaque) parameter: a reference takes exactly one element's
/// bytes, a pointer a whole number of elements.
fn check_size(
    param: &KernelParam,
    elem: ElemType,
    count: u64,
    is_ref: bool,
    bytes: u32,
) -> Result<(), String> {
    let given = count as u128 * elem.size() as u128;
    let words = format!("{count} × `{}` = {given} bytes", elem.msl_name());
    let hint = |want: u128| {
        if want.is_multiple_of(elem.size() as u128) {
            format!("; give `count = {}`", want / elem.size() as u128)
        } else {
            String::new()
        }
    };
    if is_ref && given != bytes as u128 {
        return Err(format!(
            "kernel parameter `{}` takes {bytes} bytes (one `{}`) but the spec gives {words}{}",
            describe(param),
            param.type_name,
            hint(bytes as u128)
        ));
    }
    if !is_ref && bytes > 0 && !given.is_multiple_of(bytes as u128) {
        return Err(format!(
            "kernel parameter `{}` takes whole `{}`s of {bytes} bytes but the spec gives \
             {words}, not a multiple of {bytes}",
            describe(param),
            param.type_name,
        ));
    }
    Ok(())
}

fn materialize(plan: Planned<'_>) -> Result<Vec<u8>, String> {
    let elem = plan.spec.elem;
    let len = plan.count as usize * elem.size() as usize;
    match plan.source {
        Source::Zeros => {
            let mut out = allocate(len)?;
            out.resize(len, 0);
            Ok(out)
        }
        Source::Generate(init) => {
            let mut out = allocate(len)?;
            generate(init, elem, plan.count, &mut out)?;
            Ok(out)
        }
        Source::Npy(key, file, layout) => {
            read_data(file, &layout, elem).map_err(|e| format!("{key}: {e}"))
        }
    }
}

/// An empty vector with room for `len` bytes, or an error when the system refuses (the
/// memory limit given to `resolve` was more than the machine has).
pub(crate) fn allocate(len: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| format!("cannot allocate {}", bytes_text(len as u128)))?;
    Ok(out)
}

/// Whether a name can name a file on every system: letters, digits, `_`, `-`, `.`, not
/// starting with `.`.
fn is_file_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

/// The parameter as MSL declares it: `const device float* A`, `constant uint& N`.
fn describe(p: &KernelParam) -> String {
    let space = match p.space {
        Space::Device if p.readonly => "const device",
        s => s.name(),
    };
    let sigil = if p.is_ref { '&' } else { '*' };
    format!("{space} {}{sigil} {}", p.type_name, p.name)
}

/// "its buffers are 0 (A), 1 (B)" or "it has no buffer parameters".
fn list_params(params: &[&KernelParam], kind: &str) -> String {
    if params.is_empty() {
        return format!("it has no {kind} parameters");
    }
    let items: Vec<String> = params
        .iter()
        .map(|p| format!("{} ({})", p.index, p.name))
        .collect();
    format!("its {kind}s are {}", items.join(", "))
}

/// A type name in the spelling `ElemType::from_msl_name` knows: `metal::` dropped,
/// `unsigned int` and `uint32_t` as `uint`, `vec<float, 4>` as `float4`.
fn canonical_type_name(name: &str) -> String {
    let name = name.trim();
    let name = name.strip_prefix("metal::").unwrap_or(name);
    if let Some(inner) = name.strip_prefix("vec<").and_then(|s| s.strip_suffix('>'))
        && let Some((t, n)) = inner.split_once(',')
    {
        return format!("{}{}", canonical_type_name(t), n.trim());
    }
    let words: Vec<&str> = name.split_whitespace().collect();
    let base = match words.join(" ").as_str() {
        "unsigned char" | "uint8_t" => "uchar",
        "signed char" | "int8_t" => "char",
        "unsigned short" | "uint16_t" => "ushort",
        "int16_t" => "short",
        "unsigned" | "unsigned int" | "uint32_t" => "uint",
        "int32_t" => "int",
        "unsigned long" | "uint64_t" | "size_t" => "ulong",
        "int64_t" | "ptrdiff_t" => "long",
        "bfloat16_t" => "bfloat",
        other => return other.to_string(),
    };
    base.to_string()
}

/// The value type of an atomic: `atomic_int` and `atomic<int>` give `int`.
fn atomic_underlying(name: &str) -> Option<String> {
    if let Some(t) = name.strip_prefix("atomic_") {
        return Some(canonical_type_name(t));
    }
    name.strip_prefix("atomic<")
        .and_then(|s| s.strip_suffix('>'))
        .map(canonical_type_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_spellings_are_canonical() {
        for (given, want) in [
            ("float", "float"),
            ("metal::float4", "float4"),
            ("unsigned  int", "uint"),
            ("uint8_t", "uchar"),
            ("vec<float, 4>", "float4"),
            ("vec<unsigned short,2>", "ushort2"),
            ("Params", "Params"),
        ] {
            assert_eq!(canonical_type_name(given), want, "{given}");
        }
        assert_eq!(atomic_underlying("atomic_uint").as_deref(), Some("uint"));
        assert_eq!(atomic_underlying("atomic<float>").as_deref(), Some("float"));
        assert_eq!(
            atomic_underlying("atomic< unsigned int >").as_deref(),
            Some("uint")
        );
        assert_eq!(atomic_underlying("float"), None);
    }
}
