//! Texture kernel parameters (`texture2d<float, access::read> in [[texture(0)]]`).
//!
//! Every texture type ([`TEXTURE_TEMPLATES`]: `texture2d`, `texturecube_array`,
//! `depth2d_ms`, `texture_buffer`...) is a class template of the prelude whose methods
//! (`read`, `write`, `sample`, `gather`, `get_width`...) are MSL over five fields: a pointer
//! to the texels, the width, height and depth (the slices of arrays, cube faces and samples)
//! and the format word. A texture parameter is bound to the device
//! buffer at [`KernelParam::TEXTURE_BUFFER_BASE`]` + n`, which the launch spec fills with a
//! 16-byte header (the three sizes and a format code) and the texels converted to the
//! element type; here the header is read once at kernel entry and the fields built from it.
//! Every read and write is then an ordinary bounds-checked device access of that buffer,
//! which the simulator names after the texture.

use metalsim_isa::{KernelParam, Op, ParamKind, Space, Type};

use crate::ast;
use crate::lower::templates::TArg;
use crate::lower::types::{Scalar, StructId, Ty};
use crate::lower::{DeclType, FnLowerer, Place, Val};
use crate::parser::TEXTURE_TEMPLATES;

/// Bytes of the header in front of a texture's texels.
const HEADER_BYTES: u32 = 16;

/// Whether a type name looks like a texture but is none of the prelude's: the texture
/// types of later MSL versions and misspellings are refused by name.
pub(crate) fn is_unsupported_texture(name: &str) -> bool {
    !TEXTURE_TEMPLATES.contains(&name) && (name.starts_with("texture") || name.starts_with("depth"))
}

/// The message refusing a texture type that is not one of the prelude's.
pub(crate) fn texture_refusal(name: &str) -> String {
    format!(
        "textures of type `{name}` are not supported (the supported ones are {})",
        TEXTURE_TEMPLATES.join(", ")
    )
}

/// What a texture type is: its template, element type and access.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub struct TextureType {
    /// The template's name, one of [`TEXTURE_TEMPLATES`] (`texturecube_array`).
    pub template: &'static str,
    /// The element type `T` of `texture2d<T, A>`.
    pub elem: Scalar,
    /// `access::sample` (0), `read` (1), `write` (2) or `read_write` (3).
    pub access: u8,
}

impl TextureType {
    /// Whether the kernel may write the texture.
    pub fn writable(self) -> bool {
        matches!(self.access, 2 | 3)
    }

    /// The MSL spelling of the type (`texture2d<float, access::read>`).
    pub fn spelling(self) -> String {
        let access = match self.access {
            0 => "sample",
            1 => "read",
            2 => "write",
            _ => "read_write",
        };
        format!("{}<{}, access::{access}>", self.template, self.elem.name())
    }
}

impl FnLowerer<'_, '_> {
    /// Whether a struct is an instance of the prelude's textures, and which.
    pub(crate) fn texture_type(&self, id: StructId) -> Option<TextureType> {
        let class = self.g.classes.get(id.0)?;
        let name = self.g.decl(class.template?).name.as_str();
        let template = *TEXTURE_TEMPLATES.iter().find(|&&t| t == name)?;
        let fields = &self.g.structs.get(id).fields;
        if fields.first().map(|f| f.0.as_str()) != Some("__texels") {
            return None;
        }
        let elem = match class.args.first()? {
            TArg::Type(Ty::Scalar(s)) => *s,
            _ => return None,
        };
        let access = match class.args.get(1)? {
            TArg::Value(c) => u8::try_from(c.as_i128()).ok()?,
            _ => return None,
        };
        Some(TextureType {
            template,
            elem,
            access,
        })
    }

    /// A `[[texture(n)]]` kernel parameter: checks its type, binds its name to a texture
    /// built from the header of its buffer, and returns that buffer's binding.
    pub(crate) fn texture_param(
        &mut self,
        p: &ast::Param,
        d: &DeclType,
        name: &str,
        attr: &ast::Attribute,
    ) -> Option<KernelParam> {
        let index = self.binding_index(attr)?;
        let tex = match &d.ty {
            Ty::Struct(id) => self.texture_type(*id),
            _ => None,
        };
        let Some(tex) = tex.filter(|_| !d.is_ref) else {
            let t = self.show(&d.ty);
            self.error(
                format!(
                    "`[[texture({index})]]` parameter `{name}` must be a texture ({}) passed by value, not `{t}{}`",
                    TEXTURE_TEMPLATES.join(", "),
                    if d.is_ref { "&" } else { "" }
                ),
                p.span,
            );
            return None;
        };
        if !matches!(
            tex.elem,
            Scalar::Float
                | Scalar::Half
                | Scalar::Int
                | Scalar::UInt
                | Scalar::Short
                | Scalar::UShort
        ) {
            self.error(
                format!(
                    "textures of `{}` are not allowed; a texture's element type is float, half, int, uint, short or ushort",
                    tex.elem.name()
                ),
                p.ty.span,
            );
            return None;
        }
        if tex.template.contains("_ms") && tex.access != 1 {
            self.error(
                format!(
                    "`{}` is a multisample texture, which a kernel can only read: its access is `access::read`",
                    tex.spelling()
                ),
                p.ty.span,
            );
            return None;
        }
        let texel = Ty::vector(tex.elem, 4);
        let kp = KernelParam {
            kind: ParamKind::Buffer,
            index: KernelParam::TEXTURE_BUFFER_BASE + index,
            name: name.to_string(),
            space: Space::Device,
            type_name: tex.spelling(),
            elem_size: self.g.structs.size(&texel),
            elem_align: self.g.structs.align(&texel),
            readonly: !tex.writable(),
            is_ref: false,
            atomic: false,
            is_struct: false,
        };
        if name.is_empty() {
            return Some(kp);
        }
        let addr = self.s.val(Op::BufferAddr(kp.index), Type::U64, &[]);
        let header = Place::Mem {
            ty: Ty::vector(Scalar::UInt, 4),
            addr,
            offset: 0,
            space: Space::Device,
            is_const: true,
        };
        let sizes = self.load(&header, p.span)?;
        let texels = self.mem_addr(addr, HEADER_BYTES);
        let parts = vec![
            texels,
            sizes.parts[0],
            sizes.parts[1],
            sizes.parts[2],
            sizes.parts[3],
        ];
        if self.g.structs.leaf_count(&d.ty) != parts.len() {
            let t = self.show(&d.ty);
            self.error(
                format!("internal: `{t}` does not have the prelude's texture fields"),
                p.span,
            );
            return None;
        }
        let v = Val {
            ty: d.ty.clone(),
            parts,
        };
        self.bind_value(name, v, true);
        Some(kp)
    }
}

impl FnLowerer<'_, '_> {
    /// Whether a struct is the prelude's `sampler`.
    pub(crate) fn is_sampler(&self, id: StructId) -> bool {
        let info = self.g.structs.get(id);
        info.name == "sampler" && info.fields.first().map(|f| f.0.as_str()) == Some("__coord")
    }

    /// A `[[sampler(n)]]` kernel parameter: binds its name to the sampler state read from
    /// its hidden constant buffer at kernel entry, and returns that buffer's binding.
    pub(crate) fn sampler_param(
        &mut self,
        p: &ast::Param,
        d: &DeclType,
        name: &str,
        attr: &ast::Attribute,
    ) -> Option<KernelParam> {
        let index = self.binding_index(attr)?;
        let ty = match &d.ty {
            Ty::Struct(id) if self.is_sampler(*id) && !d.is_ref => d.ty.clone(),
            _ => {
                let t = self.show(&d.ty);
                self.error(
                    format!(
                        "`[[sampler({index})]]` parameter `{name}` must be a `sampler` passed by value, not `{t}{}`",
                        if d.is_ref { "&" } else { "" }
                    ),
                    p.span,
                );
                return None;
            }
        };
        if index > 15 {
            self.error(
                format!("`[[sampler({index})]]`: a kernel has samplers 0 to 15"),
                attr.span,
            );
            return None;
        }
        let kp = KernelParam {
            kind: ParamKind::Buffer,
            index: KernelParam::SAMPLER_BUFFER_BASE + index,
            name: name.to_string(),
            space: Space::Constant,
            type_name: "sampler".to_string(),
            elem_size: self.g.structs.size(&ty),
            elem_align: self.g.structs.align(&ty),
            readonly: true,
            is_ref: true,
            atomic: false,
            is_struct: true,
        };
        if name.is_empty() {
            return Some(kp);
        }
        let addr = self.s.val(Op::BufferAddr(kp.index), Type::U64, &[]);
        let state = Place::Mem {
            ty,
            addr,
            offset: 0,
            space: Space::Constant,
            is_const: true,
        };
        let v = self.load(&state, p.span)?;
        self.bind_value(name, v, true);
        Some(kp)
    }
}

#[cfg(test)]
mod tests {

    /// Compiles `src` and returns the first kernel's parameters as `name index type
    /// readonly size` lines and its printed ISA, or the rendered diagnostics.
    fn check(src: &str) -> Result<(String, String), String> {
        let (m, diags, sources) = crate::compile_str("t.metal", src);
        match m {
            Some(m) if !crate::has_errors(&diags) => {
                let f = &m.functions[0];
                let params = f
                    .params
                    .iter()
                    .map(|p| {
                        format!(
                            "{} {} {} {} {}",
                            p.name, p.index, p.type_name, p.readonly, p.elem_size
                        )
                    })
                    .collect::<Vec<_>>()
                    .join("\n");
                Ok((params, m.to_string()))
            }
            _ => Err(crate::render_short(&diags, &sources)),
        }
    }

    #[test]
    fn texture_parameters_bind_buffers_after_the_user_ones() {
        let (params, isa) = check(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(texture2d<float, access::read> src [[texture(0)]],\n\
             texture2d<half, access::write> dst [[texture(3)]],\n\
             uint2 gid [[thread_position_in_grid]]) {\n\
               if (gid.x >= src.get_width() || gid.y >= src.get_height()) return;\n\
               dst.write(half4(src.read(gid)), gid);\n}\n",
        )
        .unwrap();
        assert_eq!(
            params,
            "src 1024 texture2d<float, access::read> true 16\n\
             dst 1027 texture2d<half, access::write> false 8"
        );
        assert!(isa.contains("buffer_addr.1024"), "{isa}");
        assert!(isa.contains("buffer_addr.1027"), "{isa}");
    }

    #[test]
    fn coordinates_may_be_ushort_and_access_is_checked_at_the_call() {
        let head = "#include <metal_stdlib>\nusing namespace metal;\n\
                    kernel void k(texture3d<short, access::read_write> t [[texture(1)]],\n\
                    texture1d<uint> lut [[texture(2)]],\n\
                    ushort3 p [[thread_position_in_grid]]) {\n";
        let (params, _) = check(&format!(
            "{head}t.write(t.read(p, 0) + short4(lut.read(ushort(p.x))), p);\nt.fence();\n}}\n"
        ))
        .unwrap();
        assert_eq!(
            params,
            "t 1025 texture3d<short, access::read_write> false 8\n\
             lut 1026 texture1d<uint, access::sample> true 16"
        );
        let err = check(&format!("{head}lut.write(uint4(1), 0u);\n}}\n")).unwrap_err();
        assert!(
            err.contains("write() needs a texture with access::write") && err.contains("t.metal:6"),
            "{err}"
        );
    }

    /// How many elements of each kind (`device.f32`...) the ISA's loads read: one per
    /// scalar load (`ld.device.f32`), `n` per vector load (`ld.device.xN.f32`).
    fn loads(isa: &str, kind: &str) -> usize {
        let (space, ty) = kind.split_once('.').unwrap();
        (1..=4)
            .map(|n| {
                let op = match n {
                    1 => format!("ld.{kind} "),
                    _ => format!("ld.{space}.x{n}.{ty} "),
                };
                n * isa.matches(&op).count()
            })
            .sum()
    }

    #[test]
    fn sampler_parameters_read_hidden_constant_buffers() {
        let (params, isa) = check(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(texture2d<float> t [[texture(0)]], sampler s [[sampler(2)]],\n\
             device float4* o [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) {\n\
               o[gid.x] = t.sample(s, float2(gid) / 8.0f);\n}\n",
        )
        .unwrap();
        assert_eq!(
            params,
            "t 1024 texture2d<float, access::sample> true 16\n\
             s 1538 sampler true 48\n\
             o 0 float4 false 16"
        );
        // The sampler's state is read at run time: both filters' texel loads remain.
        assert!(isa.contains("buffer_addr.1538"), "{isa}");
        assert!(loads(&isa, "constant.u32") > 0, "{isa}");
        assert_eq!(loads(&isa, "device.f32"), 4 * 5, "{isa}");
    }

    #[test]
    fn constexpr_samplers_fold_at_program_and_function_scope() {
        for decl in [
            "constexpr sampler n(address::repeat, filter::nearest);\nkernel void k(",
            "kernel void k(",
        ] {
            let local = if decl.starts_with("kernel") {
                "constexpr sampler n = sampler(filter::linear, address::repeat, filter::nearest);\n"
            } else {
                ""
            };
            let (_, isa) = check(&format!(
                "#include <metal_stdlib>\nusing namespace metal;\n{decl}\
                 texture2d<float> t [[texture(0)]], device float4* o [[buffer(0)]],\n\
                 uint2 gid [[thread_position_in_grid]]) {{\n{local}\
                 o[gid.x] = t.sample(n, float2(gid) / 8.0f);\n}}\n"
            ))
            .unwrap();
            // Nearest sampling of one texel: its four channels, no sampler state.
            assert_eq!(loads(&isa, "device.f32"), 4, "{isa}");
            assert_eq!(loads(&isa, "constant.u32"), 0, "{isa}");
        }
    }

    #[test]
    fn cube_multisample_and_buffer_textures_bind_with_their_spelling() {
        let (params, _) = check(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(texturecube_array<half> c [[texture(0)]],\n\
             depth2d_ms_array<float> d [[texture(1)]],\n\
             texture_buffer<int, access::read_write> b [[texture(2)]],\n\
             device float4* o [[buffer(0)]], uint2 gid [[thread_position_in_grid]]) {\n\
               b.write(b.read(gid.x) + int(d.read(gid, 1u, 0u)), gid.x);\n\
               o[gid.x] = float4(c.read(gid, 5u, c.get_array_size() - 1));\n}\n",
        )
        .unwrap();
        assert_eq!(
            params,
            "c 1024 texturecube_array<half, access::sample> true 8\n\
             d 1025 depth2d_ms_array<float, access::read> true 16\n\
             b 1026 texture_buffer<int, access::read_write> false 16\n\
             o 0 float4 false 16"
        );
    }

    #[test]
    fn a_cube_sample_filters_within_one_face_and_gather_reads_four_texels() {
        let src = |call: &str| {
            format!(
                "#include <metal_stdlib>\nusing namespace metal;\n\
                 kernel void k(texturecube<float> c [[texture(0)]], depth2d<float> d [[texture(1)]],\n\
                 device float4* o [[buffer(0)]], uint gid [[thread_position_in_grid]]) {{\n\
                   constexpr sampler s(filter::linear);\n\
                   float3 dir = float3(float(gid), 1.0f, -0.5f);\n\
                   o[gid] = {call};\n}}\n"
            )
        };
        // Bilinear: four taps of four channels, from the one face the direction selects.
        let (_, isa) = check(&src("c.sample(s, dir)")).unwrap();
        assert_eq!(loads(&isa, "device.f32"), 4 * 4, "{isa}");
        // A gather's four taps, of which it keeps one channel each.
        let (_, isa) = check(&src("c.gather(s, dir, component::z)")).unwrap();
        assert_eq!(loads(&isa, "device.f32"), 4 * 4, "{isa}");
        let (_, isa) = check(&src("d.gather_compare(s, float2(0.5f), 0.5f)")).unwrap();
        assert_eq!(loads(&isa, "device.f32"), 4 * 4, "{isa}");
    }

    #[test]
    fn multisample_textures_are_read_only() {
        let err = check(
            "#include <metal_stdlib>\nusing namespace metal;\n\
             kernel void k(texture2d_ms<float, access::read_write> t [[texture(0)]]) {}\n",
        )
        .unwrap_err();
        assert!(
            err.contains("multisample texture, which a kernel can only read")
                && err.contains("t.metal:3"),
            "{err}"
        );
    }
}
