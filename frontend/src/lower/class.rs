//! Classes: instantiating a struct (or a class template specialization) into a laid-out
//! [`StructId`], choosing among partial and full specializations, and looking members up
//! (data members, methods, static members, nested types), base classes included.
//!
//! A class's data members are flattened: the fields of its bases come first, at their
//! offsets, then its own; so a base subobject is a prefix (for the first base) or a slice
//! of the derived object's fields and register leaves.

use std::collections::HashMap;

use crate::ast::{self, TemplateArg};
use crate::lower::bitfield::{BitField, STORAGE_FIELD, place_bit_field, storage_words, words_of};
use crate::lower::names::{DeclId, DeclKind, Env, Hit};
use crate::lower::templates::{MAX_INSTANTIATION_DEPTH, TArg, targ_specificity};
use crate::lower::types::{Scalar, StructId, StructInfo, Ty};
use crate::lower::{FnLowerer, Globals};
use crate::source::Span;

/// Template parameter names bound to their arguments.
type TemplateBindings = Vec<(String, TArg)>;

/// What lowering knows about a class beyond its layout.
#[derive(Clone, Debug)]
pub struct ClassInfo<'a> {
    /// The definition used (the primary template's or a specialization's).
    pub def: &'a ast::StructDef,
    /// That definition's declaration.
    pub decl: DeclId,
    /// The primary template, for a class template specialization.
    pub template: Option<DeclId>,
    /// The template arguments (for a class template specialization).
    pub args: Vec<TArg>,
    /// The class scope: its members, then its template parameters, then where it was
    /// declared.
    pub env: Env,
    /// Base classes: the class, the index of its first field among ours, and its offset.
    pub bases: Vec<BaseInfo>,
    /// Index of the first of our own fields in the flattened field list.
    pub own_fields: usize,
    /// Each flattened field's default member initializer, with the scope to evaluate it in.
    pub field_inits: Vec<Option<(&'a ast::Init, Env)>>,
    /// Laid out (false while its members are being resolved).
    pub complete: bool,
}

/// A base class subobject.
#[derive(Clone, Copy, Debug)]
pub struct BaseInfo {
    /// The base class.
    pub id: StructId,
    /// Index of its first field in the derived class's flattened fields.
    pub field_start: usize,
    /// Byte offset of the subobject.
    pub offset: u32,
}

/// What identifies an instantiation: the declaration, its arguments, and for a class
/// nested in another class, that class.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct ClassKey {
    /// The struct's declaration (the primary template for specializations).
    pub decl: DeclId,
    /// Template arguments.
    pub args: Vec<TArg>,
    /// The enclosing class instantiation.
    pub outer: Option<StructId>,
}

/// Whether two argument lists are equal, comparing integer values by value whatever their
/// type (`4` matches `4u`).
pub fn targs_match(a: &[TArg], b: &[TArg]) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| match (x, y) {
            (TArg::Value(p), TArg::Value(q)) => {
                if p.ty.is_float() || q.ty.is_float() {
                    p.as_f64() == q.as_f64()
                } else {
                    p.as_i128() == q.as_i128()
                }
            }
            (TArg::Pack(p), TArg::Pack(q)) => targs_match(p, q),
            _ => x == y,
        })
}

impl<'a> Globals<'a> {
    /// Looks a member up in a class and its bases (fields by their index in this class's
    /// flattened list).
    pub fn class_member(&self, id: StructId, name: &str) -> Option<Hit> {
        let info = self.classes.get(id.0)?;
        if name == info.def.name.name {
            // The injected class name: the class itself.
            return Some(Hit::Param(TArg::Type(Ty::Struct(id))));
        }
        if let Some(ids) = self
            .members
            .get(&info.decl)
            .and_then(|m| m.entries.get(name))
        {
            return Some(Hit::Decls(
                ids.iter().map(|d| (*d, info.env.clone())).collect(),
            ));
        }
        let fields = &self.structs.get(id).fields;
        if let Some(i) = fields[info.own_fields.min(fields.len())..]
            .iter()
            .position(|f| f.0 == name)
        {
            return Some(Hit::Field(id, info.own_fields + i));
        }
        for b in &info.bases {
            match self.class_member(b.id, name) {
                Some(Hit::Field(_, i)) => return Some(Hit::Field(id, b.field_start + i)),
                Some(h) => return Some(h),
                None => {}
            }
        }
        None
    }

    /// Whether a class declares a constructor (then brace and parenthesized initialization
    /// call one instead of initializing members directly).
    pub fn has_constructors(&self, id: StructId) -> bool {
        let Some(info) = self.classes.get(id.0) else {
            return false;
        };
        self.members
            .get(&info.decl)
            .is_some_and(|m| m.entries.contains_key(crate::lower::names::CONSTRUCTORS))
    }
}

impl<'a> FnLowerer<'_, 'a> {
    /// The type a struct declaration (or a class template with arguments) names,
    /// instantiating it on first use.
    pub fn class_type(
        &mut self,
        decl: DeclId,
        home: &Env,
        explicit: &[TArg],
        span: Span,
    ) -> Option<Ty> {
        let d = self.g.decl(decl).clone();
        let DeclKind::Struct(_) = d.kind else {
            return None;
        };
        let binds = match d.tparams {
            Some(params) if !params.is_empty() => {
                self.bind_template(params, explicit, &HashMap::new(), home, &d.name, span)?
            }
            _ => {
                if !explicit.is_empty() {
                    self.error(format!("`{}` is not a template", d.name), span);
                    return None;
                }
                Vec::new()
            }
        };
        let args: Vec<TArg> = binds.iter().map(|(_, a)| a.clone()).collect();
        let key = ClassKey {
            decl,
            args: args.clone(),
            outer: home.class_id(),
        };
        if let Some(id) = self.g.class_memo.get(&key) {
            return Some(Ty::Struct(*id));
        }
        if self.g.depth > MAX_INSTANTIATION_DEPTH {
            self.error(
                format!("templates instantiate each other too deeply (more than {MAX_INSTANTIATION_DEPTH} levels)"),
                span,
            );
            return None;
        }
        let (def_decl, binds) = if d.tparams.is_some_and(|p| !p.is_empty()) {
            self.choose_specialization(decl, &args, binds, span)
        } else {
            (decl, binds)
        };
        if let DeclKind::Struct(def) = self.g.decl(def_decl).kind
            && def.forward
        {
            let shown = if args.is_empty() {
                d.name.clone()
            } else {
                self.show_specialization(&d.name, &args)
            };
            self.error(
                format!("`{shown}` is declared but never defined (an incomplete type)"),
                span,
            );
            return None;
        }
        let display = if d.tparams.is_some_and(|p| !p.is_empty()) {
            self.show_specialization(&d.name, &args)
        } else {
            d.name.clone()
        };
        self.g.depth += 1;
        let id = self.instantiate(key, def_decl, decl, args, binds, home, display, span);
        self.g.depth -= 1;
        Some(Ty::Struct(id))
    }

    /// Picks the specialization of class template `primary` that matches `args`: a full
    /// specialization, else the most specialized matching partial one, else the primary
    /// template. Returns the definition and its parameter bindings.
    fn choose_specialization(
        &mut self,
        primary: DeclId,
        args: &[TArg],
        primary_binds: Vec<(String, TArg)>,
        span: Span,
    ) -> (DeclId, Vec<(String, TArg)>) {
        let specs = self
            .g
            .specializations
            .get(&primary)
            .cloned()
            .unwrap_or_default();
        let mut best: Option<(u32, DeclId, TemplateBindings)> = None;
        for spec in specs {
            let d = self.g.decl(spec).clone();
            let DeclKind::Struct(def) = d.kind else {
                continue;
            };
            let Some(pattern) = &def.spec_args else {
                continue;
            };
            let home = d.home.clone().unwrap_or_else(|| self.env.clone());
            let params = d.tparams.unwrap_or(&[]);
            let mark = self.g.diags.len();
            let matched = self.match_specialization(pattern, params, args, &home, span);
            self.g.diags.truncate(mark);
            let Some(binds) = matched else {
                continue;
            };
            let names: Vec<&str> = params
                .iter()
                .filter_map(|p| p.name.as_ref().map(|n| n.name.as_str()))
                .collect();
            let score = if params.is_empty() {
                u32::MAX
            } else {
                pattern
                    .iter()
                    .map(|a| targ_specificity(a, &names))
                    .sum::<u32>()
                    * 16
                    + 15u32.saturating_sub(params.len() as u32)
            };
            if best.as_ref().is_none_or(|(s, _, _)| score > *s) {
                best = Some((score, spec, binds));
            }
        }
        match best {
            Some((_, spec, binds)) => (spec, binds),
            None => (primary, primary_binds),
        }
    }

    /// Whether a specialization's argument pattern matches `args`; its parameters' bindings
    /// if so.
    fn match_specialization(
        &mut self,
        pattern: &[TemplateArg],
        params: &[ast::TemplateParam],
        args: &[TArg],
        home: &Env,
        span: Span,
    ) -> Option<Vec<(String, TArg)>> {
        let mut deduced = HashMap::new();
        if !params.is_empty() {
            let home2 = home.clone();
            let ok = self.in_env(home.clone(), |me| {
                me.deduce_args(pattern, args, params, &home2, &mut deduced)
            });
            if !ok {
                return None;
            }
        }
        let binds = self.bind_template(params, &[], &deduced, home, "specialization", span)?;
        let env = home.params(binds.clone());
        let values = self.in_env(env, |me| me.targ_values(pattern))?;
        targs_match(&values, args).then_some(binds)
    }

    /// Whether a class template is the prelude's `metal::matrix`.
    fn is_prelude_matrix(&self, primary: DeclId) -> bool {
        let d = self.g.decl(primary);
        d.name == "matrix"
            && d.tparams.is_some()
            && self.g.metal_ns.is_some()
            && d.home.as_ref().map(|h| h.namespace()) == self.g.metal_ns
    }

    #[allow(clippy::too_many_arguments)]
    fn instantiate(
        &mut self,
        key: ClassKey,
        def_decl: DeclId,
        primary: DeclId,
        args: Vec<TArg>,
        binds: Vec<(String, TArg)>,
        home: &Env,
        display: String,
        span: Span,
    ) -> StructId {
        let DeclKind::Struct(def) = self.g.decl(def_decl).kind else {
            unreachable!("instantiate is only called for struct declarations")
        };
        let is_template = self.g.decl(primary).tparams.is_some_and(|p| !p.is_empty());
        let id = StructId(self.g.structs.0.len());
        self.g.structs.0.push(StructInfo {
            name: display,
            fields: Vec::new(),
            size: 1,
            align: 1,
            arrays_in_registers: self.is_prelude_matrix(primary),
            union_members: Vec::new(),
            bit_fields: Vec::new(),
        });
        let params_env = home.params(binds);
        let env = params_env.class(id);
        self.g.classes.push(crate::lower::class::ClassInfo {
            def,
            decl: def_decl,
            template: is_template.then_some(primary),
            args,
            env: env.clone(),
            bases: Vec::new(),
            own_fields: 0,
            field_inits: Vec::new(),
            complete: false,
        });
        self.g.class_memo.insert(key, id);

        let mut fields: Vec<(String, Ty, u32)> = Vec::new();
        let mut inits: Vec<Option<(&'a ast::Init, Env)>> = Vec::new();
        let mut bases = Vec::new();
        let mut bit_fields: Vec<BitField> = Vec::new();
        let mut offset = 0u32;
        let mut align = 1u32;
        self.in_env(env.clone(), |me| {
            for b in &def.bases {
                let Some(d) = me.resolve_type(b) else {
                    continue;
                };
                let Ty::Struct(bid) = d.ty else {
                    let t = me.show(&d.ty);
                    me.error(format!("a base class must be a struct, not `{t}`"), b.span);
                    continue;
                };
                if !me.g.classes[bid.0].complete {
                    let t = me.show(&d.ty);
                    me.error(
                        format!("`{t}` is used as a base before it is complete"),
                        b.span,
                    );
                    continue;
                }
                let binfo = me.g.structs.get(bid).clone();
                let bclass = me.g.classes[bid.0].clone();
                // An empty base takes no space.
                let boffset = if binfo.fields.is_empty() {
                    offset
                } else {
                    offset.div_ceil(binfo.align) * binfo.align
                };
                bases.push(BaseInfo {
                    id: bid,
                    field_start: fields.len(),
                    offset: boffset,
                });
                for f in &binfo.bit_fields {
                    bit_fields.push(BitField {
                        bit_offset: f.bit_offset + 8 * boffset,
                        words: f.words.iter().map(|(o, w)| (o + boffset, *w)).collect(),
                        decl_pos: f.decl_pos + fields.len(),
                        ..f.clone()
                    });
                }
                for (i, (n, t, o)) in binfo.fields.iter().enumerate() {
                    fields.push((n.clone(), t.clone(), boffset + o));
                    inits.push(bclass.field_inits.get(i).cloned().flatten());
                }
                if !binfo.fields.is_empty() {
                    offset = boffset + binfo.size;
                    align = align.max(binfo.align);
                }
            }
        });
        let own_fields = fields.len();
        let own_bit_fields = bit_fields.len();
        // The next free bit while bit-fields are being laid out, and where this run of
        // them began among the bit-fields.
        let mut run: Option<(u64, usize)> = None;
        self.in_env(env.clone(), |me| {
            for f in &def.fields {
                let Some(d) = me.resolve_type(&f.ty) else {
                    continue;
                };
                if let Some(width) = &f.bit_width {
                    let Some(w) = me.bit_field_width(f, &d, width) else {
                        continue;
                    };
                    let Ty::Scalar(t) = d.ty else { continue };
                    let named = !f.name.name.is_empty();
                    if named
                        && (fields[own_fields..]
                            .iter()
                            .any(|(n, _, _)| *n == f.name.name)
                            || bit_fields[own_bit_fields..]
                                .iter()
                                .any(|b| b.name == f.name.name))
                    {
                        me.error(format!("duplicate field `{}`", f.name.name), f.name.span);
                        continue;
                    }
                    let bit_offset = if def.is_union {
                        offset = offset.max(w.div_ceil(8));
                        0
                    } else {
                        let (cursor, start) = run.unwrap_or((offset as u64 * 8, bit_fields.len()));
                        let at = place_bit_field(cursor, w, t.size() * 8);
                        let end = at + w as u64;
                        run = Some((end, start));
                        offset = u32::try_from(end.div_ceil(8)).unwrap_or(u32::MAX);
                        u32::try_from(at).unwrap_or(u32::MAX)
                    };
                    if named {
                        bit_fields.push(BitField {
                            name: f.name.name.clone(),
                            ty: t,
                            bit_offset,
                            width: w,
                            words: Vec::new(),
                            decl_pos: fields.len(),
                        });
                        align = align.max(t.size());
                    }
                    continue;
                }
                if let Some((_, start)) = run.take() {
                    end_bit_field_run(&mut bit_fields[start..], &mut fields, &mut inits);
                }
                if d.is_ref || matches!(d.ty, Ty::Void) {
                    me.error("a struct field cannot be a reference or void", f.span);
                    continue;
                }
                if let Ty::Struct(fid) = d.ty
                    && !me.g.classes[fid.0].complete
                {
                    let t = me.show(&d.ty);
                    me.error(
                        format!("field `{}` has the incomplete type `{t}`", f.name.name),
                        f.span,
                    );
                    continue;
                }
                if fields[own_fields..]
                    .iter()
                    .any(|(n, _, _)| *n == f.name.name)
                {
                    me.error(format!("duplicate field `{}`", f.name.name), f.name.span);
                    continue;
                }
                let a = me.g.structs.align(&d.ty);
                let size = me.g.structs.size(&d.ty);
                if def.is_union {
                    // Every member at offset 0; the union is as large as its largest.
                    fields.push((f.name.name.clone(), d.ty.clone(), 0));
                    offset = offset.max(size);
                } else {
                    offset = offset.div_ceil(a) * a;
                    fields.push((f.name.name.clone(), d.ty.clone(), offset));
                    offset = offset.saturating_add(size);
                }
                inits.push(f.init.as_ref().map(|i| (i, env.clone())));
                align = align.max(a);
            }
        });
        if let Some((_, start)) = run {
            end_bit_field_run(&mut bit_fields[start..], &mut fields, &mut inits);
        }
        if def.is_union {
            // A union's bit-fields all start at bit 0 of its storage.
            let own = &mut bit_fields[own_bit_fields..];
            let max_word = own.iter().map(|b| b.ty.size()).max().unwrap_or(1);
            let words = storage_words(own, max_word);
            for b in own {
                b.words = words_of(b, &words);
            }
        }
        let size = offset.div_ceil(align) * align;
        let mut union_members = Vec::new();
        if def.is_union && (!fields.is_empty() || bit_fields.len() > own_bit_fields) {
            union_members = std::mem::take(&mut fields);
            fields.push(union_storage(size, align));
            inits = vec![None];
        }
        let info = &mut self.g.structs.0[id.0];
        info.size = size.max(if fields.is_empty() { 1 } else { 0 });
        info.align = align;
        info.fields = fields;
        info.union_members = union_members;
        info.bit_fields = bit_fields;
        let c = &mut self.g.classes[id.0];
        c.bases = bases;
        c.own_fields = own_fields;
        c.field_inits = inits;
        c.complete = true;
        // Member `static_assert`s hold for each instantiation.
        let asserts = self
            .g
            .member_asserts
            .get(&def_decl)
            .cloned()
            .unwrap_or_default();
        for a in asserts {
            if let ast::Item::StaticAssert {
                cond,
                message,
                span,
            } = a
            {
                self.in_env(env.clone(), |me| {
                    me.check_static_assert(cond, message.as_deref(), *span)
                });
            }
        }
        let _ = span;
        id
    }
}

/// Ends a run of consecutive bit-fields of a struct: the storage words of its named
/// bit-fields become hidden fields (without initializers), and each bit-field learns its
/// words.
fn end_bit_field_run(
    run: &mut [BitField],
    fields: &mut Vec<(String, Ty, u32)>,
    inits: &mut Vec<Option<(&ast::Init, Env)>>,
) {
    let max_word = run.iter().map(|b| b.ty.size()).max().unwrap_or(1);
    let words = storage_words(run, max_word);
    for b in run.iter_mut() {
        b.words = words_of(b, &words);
    }
    for (off, w) in words {
        fields.push((STORAGE_FIELD.to_string(), Ty::Scalar(w), off));
        inits.push(None);
    }
}

/// The one field of a union of `size` bytes aligned to `align`: an array of the widest
/// words (up to 4 bytes) that tile it.
fn union_storage(size: u32, align: u32) -> (String, Ty, u32) {
    let word = [Scalar::UInt, Scalar::UShort, Scalar::UChar]
        .into_iter()
        .find(|w| size.is_multiple_of(w.size()) && align >= w.size())
        .unwrap_or(Scalar::UChar);
    (
        "<union storage>".to_string(),
        Ty::Array(Box::new(Ty::Scalar(word)), size / word.size()),
        0,
    )
}

#[cfg(test)]
mod tests {
    /// Compiles `src` and returns the printed ISA, or the short diagnostics.
    fn check(src: &str) -> Result<String, String> {
        let (m, diags, sources) = crate::compile_str("t.metal", src);
        match m {
            Some(m) if !crate::has_errors(&diags) => Ok(m.to_string()),
            _ => Err(crate::render_short(&diags, &sources)),
        }
    }

    const HEAD: &str = "#include <metal_stdlib>\nusing namespace metal;\n";

    #[test]
    fn unions_overlap_their_members_and_live_in_memory() {
        let isa = check(&format!(
            "{HEAD}union U {{ uint u; float f; half2 h; }};\n\
             struct B {{ union {{ struct {{ half d; half m; }}; uint dm; }}; char q[3]; }};\n\
             static_assert(sizeof(U) == 4 && alignof(U) == 4);\n\
             static_assert(sizeof(B) == 8 && alignof(B) == 4);\n\
             kernel void k(device uint* o [[buffer(0)]], device B* b [[buffer(1)]]) {{\n\
               U x = {{1u}}; x.f = 2.0f; o[0] = x.u + as_type<ushort>(b->m) + b[1].dm;\n}}\n"
        ))
        .unwrap();
        // The float is stored and the word read back from the same thread memory.
        assert!(isa.contains("local 0 size 4 align 4"), "{isa}");
        assert!(isa.contains("st.thread.f32"), "{isa}");
        assert!(isa.contains("ld.thread.u32"), "{isa}");
        let err = check(&format!(
            "{HEAD}union U {{ uint u; float f; }};\n\
             kernel void k(device float* o [[buffer(0)]]) {{ U x = {{1u, 2.0f}}; o[0] = x.f; }}\n"
        ))
        .unwrap_err();
        assert!(
            err.contains("a union is initialized from one value"),
            "{err}"
        );
    }

    #[test]
    fn arrays_of_an_unnamed_union_are_members() {
        let isa = check(&format!(
            "{HEAD}struct B {{ union {{ uint u; float f; }} v[2], w; half h; }};\n\
             static_assert(sizeof(B) == 16 && alignof(B) == 4);\n\
             kernel void k(device uint* o [[buffer(0)]], device B* b [[buffer(1)]]) {{\n\
               B x; x.v[0].f = 1.0f; x.v[1].u = 3u; x.w.u = 4u;\n\
               o[0] = x.v[0].u + x.v[1].u + b->v[1].u + x.w.u;\n}}\n"
        ))
        .unwrap();
        assert!(isa.contains("st.thread.f32"), "{isa}");
        assert!(isa.contains("ld.device.u32"), "{isa}");
    }

    #[test]
    fn a_union_method_reads_its_members() {
        check(&format!(
            "{HEAD}union W {{ uint u; float f; uint bits() const {{ return u; }} }};\n\
             W make(float x) {{ W w; w.f = x; return w; }}\n\
             kernel void k(device uint* o [[buffer(0)]]) {{ o[0] = make(1.0f).bits() + make(2.0f).u; }}\n"
        ))
        .unwrap();
    }

    #[test]
    fn matrices_have_the_spec_layout_and_stay_in_registers() {
        let isa = check(&format!(
            "{HEAD}static_assert(sizeof(float3x3) == 48 && alignof(float3x3) == 16);\n\
             static_assert(sizeof(half3x2) == 12 && alignof(half3x2) == 4);\n\
             static_assert(sizeof(float2x3) == 32 && sizeof(half4x4) == 32);\n\
             static_assert(sizeof(matrix<float, 4, 2>) == 32);\n\
             kernel void k(device float4* o [[buffer(0)]], device float4x4* m [[buffer(1)]],\n\
                           uint i [[thread_position_in_grid]]) {{\n\
               float4x4 a(2.0f);\n\
               for (uint c = 0; c < 4; c++) a[c][3] = float(c);\n\
               o[i] = (a * transpose(m[i]))[i % 4] + float4(determinant(a));\n}}\n"
        ))
        .unwrap();
        assert!(
            !isa.contains("local "),
            "a matrix went to thread memory:\n{isa}"
        );
    }

    #[test]
    fn matrix_constructors_and_operators_are_checked() {
        let err = check(&format!(
            "{HEAD}kernel void k(device float* o [[buffer(0)]]) {{\n\
               float2x2 a = float2x2(float2(1), float2(2), float2(3));\n\
               float3x3 b(1.0f);\n\
               float2 v = b * float2(1);\n\
               o[0] = v.x + determinant(float2x3(1.0f));\n}}\n"
        ))
        .unwrap_err();
        assert!(err.contains("as many vectors as it has columns"), "{err}");
        assert!(!err.contains("out of bounds"), "{err}");
        assert!(
            err.contains("cannot be applied to `matrix<float, 3, 3>` and `float2`"),
            "{err}"
        );
        assert!(err.contains("determinant() needs a square matrix"), "{err}");
        let err = check(&format!(
            "{HEAD}kernel void k(device float* o [[buffer(0)]]) {{ o[0] = transpose(o[1]); }}\n"
        ))
        .unwrap_err();
        assert!(
            err.contains(
                "`transpose` takes a matrix (`floatNxM` or `halfNxM`, MSL 5.6), not (float)"
            ),
            "{err}"
        );
    }

    #[test]
    fn a_member_template_deduces_from_its_class_template_name() {
        check(&format!(
            "{HEAD}template <typename T, int N> struct Box {{\n\
               T v[N];\n\
               Box() = default;\n\
               template <typename U> Box(Box<U, N> o) {{ for (int i = 0; i < N; i++) v[i] = T(o.v[i]); }}\n\
             }};\n\
             kernel void k(device half* o [[buffer(0)]]) {{\n\
               Box<float, 2> a; a.v[0] = 1; Box<half, 2> b(a); o[0] = b.v[0];\n}}\n"
        ))
        .unwrap();
    }

    #[test]
    fn namespace_aliases_name_the_namespace() {
        check(&format!(
            "{HEAD}namespace a {{ namespace b {{ inline float twice(float x) {{ return 2 * x; }} }} }}\n\
             namespace ab = a::b;\nnamespace mt = metal;\n\
             kernel void k(device float* o [[buffer(0)]]) {{ o[0] = ab::twice(mt::fast::exp(o[0])); }}\n"
        ))
        .unwrap();
        let err = check("namespace x = nowhere;\n").unwrap_err();
        assert!(err.contains("unknown namespace `nowhere`"), "{err}");
    }

    #[test]
    fn simd_ballot_returns_a_vote() {
        let isa = check(&format!(
            "{HEAD}kernel void k(device uint* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{\n\
               simd_vote v = simd_ballot(i % 2 == 0);\n\
               simd_vote::vote_t bits = static_cast<simd_vote::vote_t>(v);\n\
               o[i] = uint(bits) + (v.all() ? 1u : 0u) + (v.any() ? 2u : 0u) + uint(ulong(v));\n}}\n"
        ))
        .unwrap();
        assert!(isa.contains("simd.ballot"), "{isa}");
        let err = check(&format!(
            "{HEAD}kernel void k(device uint* o [[buffer(0)]]) {{ simd_vote v = simd_ballot(true); o[0] = v.none(); }}\n"
        ))
        .unwrap_err();
        assert!(err.contains("none"), "{err}");
    }
}
