//! Type checking and lowering of the AST to the ISA.
//!
//! One pass does both: each expression is type-checked as it is lowered, so `metalsim
//! check` runs exactly the code `metalsim run` does. Helper functions are inlined (MSL has
//! no recursion), vectors and structs are split into scalar registers, local variables
//! become SSA values ([`ssa`]), and memory-backed objects (buffers, threadgroup arrays,
//! local arrays, variables whose address is taken) become loads and stores. `a * b + c`
//! on floats is contracted into one FMA, as Metal's default fast-math does.
//!
//! Errors are [`Diagnostic`]s; lowering goes on after one to report the file's other
//! problems, and returns no module when any error was found.

mod builtins;
mod consteval;
mod convert;
mod expr;
mod kernel;
mod ssa;
mod stmt;
mod types;

use std::collections::{HashMap, HashSet};

use metalsim_isa::{Alloc, Block, DataObject, Module, Op, Space, SrcLoc, Value};

use crate::ast::{self, Item, TranslationUnit, TypeExpr, TypeKind};
use crate::diag::{Diagnostic, has_errors};
use crate::source::{SourceMap, Span};

pub use types::{Scalar, Ty};

use consteval::Const;
use ssa::{Slot, SsaBuilder};
use types::{StructId, StructInfo, Structs, builtin_type};

/// Lowers a parsed translation unit. Every kernel it defines becomes a function of the
/// module (named by its `[[host_name]]` if it has one); helpers are inlined into them.
pub fn lower(tu: &TranslationUnit, sources: &SourceMap) -> (Option<Module>, Vec<Diagnostic>) {
    let mut g = Globals::new(sources);
    g.collect(&tu.items);
    let mut functions: Vec<metalsim_isa::Function> = Vec::new();
    let kernels = g.kernels.clone();
    for k in kernels {
        if let Some(f) = kernel::lower_kernel(&mut g, k) {
            if functions.iter().any(|o| o.name == f.name) {
                g.error(format!("two kernels are named `{}`", f.name), k.name.span);
            } else {
                functions.push(f);
            }
        }
    }
    let module = Module {
        files: sources.files().iter().map(|f| f.name.clone()).collect(),
        data: std::mem::take(&mut g.data),
        functions,
    };
    if has_errors(&g.diags) {
        (None, g.diags)
    } else {
        (Some(module), g.diags)
    }
}

/// A program-scope value.
#[derive(Clone, Debug)]
pub(crate) enum GlobalValue {
    /// A compile-time scalar constant.
    Const(Const),
    /// Read-only data in the constant address space (module data object `id`).
    Data { id: u32, ty: Ty },
    /// A declaration that was refused (and reported): uses stay silent.
    Poisoned,
}

/// A type as declared: the type, its top-level qualifiers, and whether it is a reference.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct DeclType {
    /// The type (for a reference: the referred-to type).
    pub ty: Ty,
    /// The address space written on it (for a reference: the referent's).
    pub space: Option<Space>,
    /// `const`.
    pub is_const: bool,
    /// A reference `T&`.
    pub is_ref: bool,
    /// An array declared without a size (`float a[] = {...}`): the size comes from the
    /// initializer.
    pub unsized_array: bool,
}

/// Program-wide lowering state: declarations, diagnostics, constant data.
pub(crate) struct Globals<'a> {
    pub sources: &'a SourceMap,
    pub diags: Vec<Diagnostic>,
    pub structs: Structs,
    pub struct_names: HashMap<String, StructId>,
    pub aliases: HashMap<String, DeclType>,
    pub functions: HashMap<String, Vec<&'a ast::FunctionDef>>,
    pub values: HashMap<String, GlobalValue>,
    pub data: Vec<DataObject>,
    pub kernels: Vec<&'a ast::FunctionDef>,
}

impl<'a> Globals<'a> {
    fn new(sources: &'a SourceMap) -> Self {
        Globals {
            sources,
            diags: Vec::new(),
            structs: Structs::default(),
            struct_names: HashMap::new(),
            aliases: HashMap::new(),
            functions: HashMap::new(),
            values: HashMap::new(),
            data: Vec::new(),
            kernels: Vec::new(),
        }
    }

    /// Reports an error.
    pub fn error(&mut self, message: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(message, span));
    }

    /// The ISA location of a span's start.
    pub fn loc(&self, span: Span) -> SrcLoc {
        if (span.file.0 as usize) >= self.sources.files().len() {
            return SrcLoc::UNKNOWN;
        }
        let (line, col) = self.sources.line_col(span);
        SrcLoc {
            file: span.file.0,
            line,
            col,
        }
    }

    fn collect(&mut self, items: &'a [Item]) {
        for item in items {
            match item {
                Item::Function(f) => {
                    let is_kernel =
                        f.specifiers.kernel || f.attrs.iter().any(|a| a.name.name == "kernel");
                    if is_kernel {
                        if f.body.is_some() {
                            self.kernels.push(f);
                        }
                    } else if f.body.is_some() {
                        self.functions
                            .entry(f.name.name.clone())
                            .or_default()
                            .push(f);
                    }
                }
                Item::Struct(s) => self.declare_struct(s),
                Item::Vars(vars) => {
                    for v in vars {
                        self.declare_global(v);
                    }
                }
                Item::UsingNamespace(..) => {}
                Item::Alias { name, ty, span } => {
                    if let Some(d) = self.resolve_type(ty, &|_| None) {
                        self.aliases.insert(name.name.clone(), d);
                    } else {
                        let _ = span;
                    }
                }
                Item::Namespace { items, .. } => self.collect(items),
                Item::StaticAssert {
                    cond,
                    message,
                    span,
                } => {
                    let values = &self.values;
                    let lookup = |n: &str| match values.get(n) {
                        Some(GlobalValue::Const(c)) => Some(*c),
                        _ => None,
                    };
                    match consteval::eval(cond, &lookup) {
                        Some(c) if c.as_bool() => {}
                        Some(_) => {
                            let m = message
                                .clone()
                                .unwrap_or_else(|| "static assertion failed".into());
                            self.error(format!("static_assert failed: {m}"), *span);
                        }
                        None => self.error("static_assert needs a constant condition", *span),
                    }
                }
                Item::Unsupported { what, span } => {
                    self.error(format!("{what} are not supported yet"), *span);
                }
                Item::Error(_) => {}
            }
        }
    }

    fn declare_struct(&mut self, s: &ast::StructDef) {
        if !s.methods.is_empty() {
            self.error(
                "struct member functions are not supported yet",
                s.methods[0].name.span,
            );
        }
        let mut fields = Vec::new();
        let mut offset = 0u32;
        let mut align = 1u32;
        for f in &s.fields {
            let Some(d) = self.resolve_type(&f.ty, &|_| None) else {
                continue;
            };
            if d.is_ref || matches!(d.ty, Ty::Void) {
                self.error("a struct field cannot be a reference or void", f.span);
                continue;
            }
            if fields
                .iter()
                .any(|(n, _, _): &(String, Ty, u32)| *n == f.name.name)
            {
                self.error(format!("duplicate field `{}`", f.name.name), f.name.span);
                continue;
            }
            let a = self.structs.align(&d.ty);
            offset = offset.div_ceil(a) * a;
            fields.push((f.name.name.clone(), d.ty.clone(), offset));
            offset = offset.saturating_add(self.structs.size(&d.ty));
            align = align.max(a);
        }
        let size = offset.div_ceil(align) * align;
        let id = StructId(self.structs.0.len());
        self.structs.0.push(StructInfo {
            name: s.name.name.clone(),
            fields,
            size: size.max(if s.fields.is_empty() { 1 } else { 0 }),
            align,
        });
        self.struct_names.insert(s.name.name.clone(), id);
    }

    fn declare_global(&mut self, v: &ast::VarDecl) {
        let lookup_values = self.values.clone();
        let lookup = move |n: &str| match lookup_values.get(n) {
            Some(GlobalValue::Const(c)) => Some(*c),
            _ => None,
        };
        let name = v.name.name.clone();
        self.values.insert(name.clone(), GlobalValue::Poisoned);
        let Some(mut d) = self.resolve_type(&v.ty, &lookup) else {
            return;
        };
        if v.attrs.iter().any(|a| a.name.name == "function_constant") {
            self.error("function constants are not supported yet", v.span);
            return;
        }
        let Some(init) = &v.init else {
            self.error(
                format!(
                    "program-scope variable `{}` needs an initializer",
                    v.name.name
                ),
                v.name.span,
            );
            return;
        };
        let init_expr = match init {
            ast::Init::Assign(e) => e.clone(),
            ast::Init::Brace(es) | ast::Init::Ctor(es) => ast::Expr {
                kind: ast::ExprKind::InitList(es.clone()),
                span: v.span,
            },
        };
        if let Ty::Scalar(s) = d.ty {
            match consteval::eval(&init_expr, &lookup) {
                Some(c) => {
                    self.values
                        .insert(v.name.name.clone(), GlobalValue::Const(c.cast(s)));
                }
                None => self.error(
                    "a program-scope constant needs a constant initializer",
                    init_expr.span,
                ),
            }
            return;
        }
        if d.unsized_array
            && let (Ty::Array(e, _), ast::ExprKind::InitList(items)) = (&d.ty, &init_expr.kind)
        {
            d.ty = Ty::Array(e.clone(), items.len() as u32);
        }
        let size = self.structs.size(&d.ty);
        let mut bytes = vec![0u8; size as usize];
        if self.const_init_bytes(&d.ty, &init_expr, 0, &mut bytes, &lookup) {
            let id = self.data.len() as u32;
            self.data.push(DataObject {
                bytes,
                align: self.structs.align(&d.ty),
                name: v.name.name.clone(),
            });
            self.values
                .insert(v.name.name.clone(), GlobalValue::Data { id, ty: d.ty });
        }
    }

    /// Writes a constant initializer's bytes; reports and returns false when it is not
    /// constant or does not fit the type.
    pub fn const_init_bytes(
        &mut self,
        ty: &Ty,
        e: &ast::Expr,
        offset: u32,
        out: &mut [u8],
        lookup: &dyn Fn(&str) -> Option<Const>,
    ) -> bool {
        let write = |out: &mut [u8], off: u32, c: Const| {
            let n = c.ty.size() as usize;
            let b = c.bits().to_le_bytes();
            if let Some(dst) = out.get_mut(off as usize..off as usize + n) {
                dst.copy_from_slice(&b[..n]);
            }
        };
        match (ty, &e.kind) {
            (Ty::Scalar(s), ast::ExprKind::InitList(items)) if items.len() == 1 => {
                let _ = s;
                self.const_init_bytes(ty, &items[0], offset, out, lookup)
            }
            (Ty::Scalar(s), _) => match consteval::eval(e, lookup) {
                Some(c) => {
                    write(out, offset, c.cast(*s));
                    true
                }
                None => {
                    self.error("expected a constant expression", e.span);
                    false
                }
            },
            (Ty::Vector { elem, len, .. }, ast::ExprKind::InitList(items)) => {
                self.const_list(items, *len as usize, e.span, |g, i, item| {
                    g.const_init_bytes(
                        &Ty::Scalar(*elem),
                        item,
                        offset + i as u32 * elem.size(),
                        out,
                        lookup,
                    )
                })
            }
            (Ty::Vector { elem, len, .. }, ast::ExprKind::Call { args, .. }) => {
                let items: Vec<ast::Expr> = args.clone();
                if items.len() == 1 {
                    let mut ok = true;
                    for i in 0..*len as u32 {
                        ok &= self.const_init_bytes(
                            &Ty::Scalar(*elem),
                            &items[0],
                            offset + i * elem.size(),
                            out,
                            lookup,
                        );
                    }
                    return ok;
                }
                self.const_list(&items, *len as usize, e.span, |g, i, item| {
                    g.const_init_bytes(
                        &Ty::Scalar(*elem),
                        item,
                        offset + i as u32 * elem.size(),
                        out,
                        lookup,
                    )
                })
            }
            (Ty::Array(elem, n), ast::ExprKind::InitList(items)) => {
                let stride = self.structs.size(elem);
                let elem = (**elem).clone();
                self.const_list(items, *n as usize, e.span, |g, i, item| {
                    g.const_init_bytes(&elem, item, offset + i as u32 * stride, out, lookup)
                })
            }
            (Ty::Struct(id), ast::ExprKind::InitList(items)) => {
                let fields = self.structs.get(*id).fields.clone();
                self.const_list(items, fields.len(), e.span, |g, i, item| {
                    g.const_init_bytes(&fields[i].1, item, offset + fields[i].2, out, lookup)
                })
            }
            _ => {
                let t = self.structs.display(ty);
                self.error(
                    format!("cannot initialize `{t}` from this expression at program scope"),
                    e.span,
                );
                false
            }
        }
    }

    fn const_list(
        &mut self,
        items: &[ast::Expr],
        max: usize,
        span: Span,
        mut each: impl FnMut(&mut Self, usize, &ast::Expr) -> bool,
    ) -> bool {
        if items.len() > max {
            self.error(
                format!(
                    "too many initializers: expected at most {max}, found {}",
                    items.len()
                ),
                span,
            );
            return false;
        }
        let mut ok = true;
        for (i, item) in items.iter().enumerate() {
            ok &= each(self, i, item);
        }
        ok
    }

    /// Resolves a written type. `lookup` gives the constants visible for array sizes.
    pub fn resolve_type(
        &mut self,
        te: &TypeExpr,
        lookup: &dyn Fn(&str) -> Option<Const>,
    ) -> Option<DeclType> {
        let plain = |ty: Ty| DeclType {
            ty,
            space: None,
            is_const: false,
            is_ref: false,
            unsized_array: false,
        };
        match &te.kind {
            TypeKind::Named { path, args } => {
                self.resolve_named(path, args, te.span, lookup).map(plain)
            }
            TypeKind::Qualified { quals, inner } => {
                let mut d = self.resolve_type(inner, lookup)?;
                d.is_const |= quals.is_const;
                if let Some(s) = quals.space {
                    let s = map_space(s, te.span, self)?;
                    if d.space.is_some_and(|o| o != s) {
                        self.error("a type cannot have two address spaces", te.span);
                        return None;
                    }
                    d.space = Some(s);
                }
                Some(d)
            }
            TypeKind::Pointer { pointee, quals } => {
                let p = self.resolve_type(pointee, lookup)?;
                if p.is_ref {
                    self.error("pointers to references are not allowed", te.span);
                    return None;
                }
                let space = p.space.unwrap_or(Space::Thread);
                Some(DeclType {
                    ty: Ty::pointer(p.ty, space, p.is_const),
                    space: None,
                    is_const: quals.is_const,
                    is_ref: false,
                    unsized_array: false,
                })
            }
            TypeKind::Reference { referent } => {
                let r = self.resolve_type(referent, lookup)?;
                if r.is_ref {
                    self.error("references to references are not allowed", te.span);
                    return None;
                }
                Some(DeclType { is_ref: true, ..r })
            }
            TypeKind::Array { elem, len } => {
                let e = self.resolve_type(elem, lookup)?;
                if e.is_ref {
                    self.error("arrays of references are not allowed", te.span);
                    return None;
                }
                let (n, unsized_array) = match len {
                    None => (0, true),
                    Some(len) => match consteval::eval(len, lookup) {
                        Some(c)
                            if !c.ty.is_float()
                                && c.as_i128() > 0
                                && c.as_i128() <= u32::MAX as i128 =>
                        {
                            (c.as_i128() as u32, false)
                        }
                        Some(_) => {
                            self.error("an array size must be a positive integer", len.span);
                            return None;
                        }
                        None => {
                            self.error("an array size must be a constant expression", len.span);
                            return None;
                        }
                    },
                };
                let ty = Ty::Array(Box::new(e.ty), n);
                if self.structs.size(&ty) > 1 << 30 {
                    self.error("this array is larger than 1 GiB", te.span);
                    return None;
                }
                Some(DeclType {
                    ty,
                    unsized_array,
                    ..e
                })
            }
            TypeKind::Auto => {
                self.error(
                    "`auto` is only supported for local variables with an initializer",
                    te.span,
                );
                None
            }
            TypeKind::Decltype(_) => {
                self.error("`decltype` is not supported yet", te.span);
                None
            }
        }
    }

    fn resolve_named(
        &mut self,
        path: &ast::Path,
        args: &[ast::TemplateArg],
        span: Span,
        lookup: &dyn Fn(&str) -> Option<Const>,
    ) -> Option<Ty> {
        let name = path.last();
        if !args.is_empty() {
            return self.resolve_template_type(name, args, span, lookup);
        }
        if name == "void" {
            return Some(Ty::Void);
        }
        if let Some(t) = builtin_type(name) {
            return Some(t);
        }
        if let Some(s) = name.strip_prefix("atomic_").and_then(Scalar::from_name) {
            return Some(Ty::Atomic(s));
        }
        if let Some(id) = self.struct_names.get(name) {
            return Some(Ty::Struct(*id));
        }
        if let Some(d) = self.aliases.get(name) {
            return Some(d.ty.clone());
        }
        let what = if is_matrix_name(name) {
            format!("matrix types (`{name}`) are not supported yet")
        } else if name.starts_with("texture") || name == "sampler" {
            format!("textures and samplers (`{name}`) are not supported yet")
        } else if name.starts_with("simdgroup_") {
            format!("`{name}` is not supported yet")
        } else {
            format!("unknown type `{name}`")
        };
        self.error(what, path.span);
        None
    }

    fn resolve_template_type(
        &mut self,
        name: &str,
        args: &[ast::TemplateArg],
        span: Span,
        lookup: &dyn Fn(&str) -> Option<Const>,
    ) -> Option<Ty> {
        let ty_arg = |g: &mut Self, a: &ast::TemplateArg| match a {
            ast::TemplateArg::Type(t) => g.resolve_type(t, lookup).map(|d| d.ty),
            ast::TemplateArg::Expr(ast::Expr {
                kind: ast::ExprKind::Name { path, args },
                ..
            }) if args.is_empty() => builtin_type(path.last())
                .or_else(|| g.struct_names.get(path.last()).map(|i| Ty::Struct(*i))),
            _ => None,
        };
        let int_arg = |a: &ast::TemplateArg| match a {
            ast::TemplateArg::Expr(e) => consteval::eval(e, lookup).map(|c| c.as_i128()),
            _ => None,
        };
        match (name, args) {
            ("vec", [t, n]) => match (ty_arg(self, t), int_arg(n)) {
                (Some(Ty::Scalar(s)), Some(n @ 1..=4)) => Some(Ty::vector(s, n as u8)),
                _ => {
                    self.error("`vec<T, N>` needs a scalar type and N from 1 to 4", span);
                    None
                }
            },
            ("array", [t, n]) => match (ty_arg(self, t), int_arg(n)) {
                (Some(t), Some(n)) if n > 0 && n <= u32::MAX as i128 => {
                    Some(Ty::Array(Box::new(t), n as u32))
                }
                _ => {
                    self.error("`array<T, N>` needs a type and a positive constant N", span);
                    None
                }
            },
            ("atomic", [t]) => match ty_arg(self, t) {
                Some(Ty::Scalar(
                    s @ (Scalar::Int | Scalar::UInt | Scalar::Float | Scalar::Bool),
                )) => Some(Ty::Atomic(s)),
                _ => {
                    self.error("`atomic<T>` needs int, uint, float or bool", span);
                    None
                }
            },
            _ => {
                self.error(
                    format!("template type `{name}<...>` is not supported yet"),
                    span,
                );
                None
            }
        }
    }

    /// The user functions with a name.
    pub fn function(&self, name: &str) -> Option<&[&'a ast::FunctionDef]> {
        self.functions.get(name).map(Vec::as_slice)
    }
}

fn is_matrix_name(name: &str) -> bool {
    let b = name.as_bytes();
    b.len() >= 4
        && b[b.len() - 2] == b'x'
        && b[b.len() - 1].is_ascii_digit()
        && b[b.len() - 3].is_ascii_digit()
        && Scalar::from_name(&name[..name.len() - 3]).is_some()
}

fn map_space(s: ast::AddressSpace, span: Span, g: &mut Globals) -> Option<Space> {
    Some(match s {
        ast::AddressSpace::Device => Space::Device,
        ast::AddressSpace::Constant => Space::Constant,
        ast::AddressSpace::Threadgroup => Space::Threadgroup,
        ast::AddressSpace::Thread => Space::Thread,
        ast::AddressSpace::ThreadgroupImageblock => {
            g.error("threadgroup_imageblock memory is not supported", span);
            return None;
        }
    })
}

/// A value computed by an expression: its type and its register leaves.
#[derive(Clone, Debug)]
pub(crate) struct Val {
    /// The type.
    pub ty: Ty,
    /// One register per leaf (see [`Structs::leaves`]).
    pub parts: Vec<Value>,
}

impl Val {
    /// A value of type `void`.
    pub fn void() -> Val {
        Val {
            ty: Ty::Void,
            parts: Vec::new(),
        }
    }
}

/// Something that can be read and written: a variable, memory, or a part of a vector.
#[derive(Clone, Debug)]
pub(crate) enum Place {
    /// An SSA variable's leaves.
    Var {
        ty: Ty,
        slots: Vec<Slot>,
        is_const: bool,
    },
    /// Memory at `addr + offset`.
    Mem {
        ty: Ty,
        addr: Value,
        offset: u32,
        space: Space,
        is_const: bool,
    },
    /// Selected components of a vector place (`v.xz`).
    Swizzle { base: Box<Place>, comps: Vec<u8> },
    /// One component of a vector place chosen at run time (`v[i]`).
    DynComponent { base: Box<Place>, index: Value },
}

/// A name in a function's scope.
#[derive(Clone, Debug)]
pub(crate) enum Binding {
    /// An SSA variable (or a memory object) — anything with a place.
    Place(Place),
    /// A memory object whose value was loaded once (a `constant` buffer reference).
    Cached { place: Place, value: Val },
    /// A compile-time constant.
    Const(Const),
}

/// Where `break` and `continue` go.
pub(crate) struct LoopCtx {
    pub break_to: Block,
    pub continue_to: Option<Block>,
}

/// An inlined helper call in progress.
pub(crate) struct InlineCtx {
    pub name: String,
    pub ret_block: Block,
    pub ret_ty: Ty,
    pub ret_slots: Vec<Slot>,
    pub loops_base: usize,
}

/// Lowering state for one kernel.
pub(crate) struct FnLowerer<'g, 'a> {
    pub g: &'g mut Globals<'a>,
    pub s: SsaBuilder,
    pub scopes: Vec<HashMap<String, Binding>>,
    pub loops: Vec<LoopCtx>,
    pub inlines: Vec<InlineCtx>,
    pub locals: Vec<Alloc>,
    pub tg_allocs: Vec<Alloc>,
    pub addr_taken: HashSet<String>,
}

impl<'g, 'a> FnLowerer<'g, 'a> {
    /// Reports an error.
    pub fn error(&mut self, message: impl Into<String>, span: Span) {
        self.g.error(message, span);
    }

    /// Sets the location of the instructions emitted next.
    pub fn at(&mut self, span: Span) {
        let loc = self.g.loc(span);
        self.s.set_loc(loc);
    }

    /// Looks a name up in the scopes, innermost first.
    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Binds a name in the innermost scope.
    pub fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), b);
        }
    }

    /// Constants visible here (for array sizes and constant folding).
    pub fn const_lookup(&self) -> impl Fn(&str) -> Option<Const> + '_ {
        move |n: &str| match self.lookup(n) {
            Some(Binding::Const(c)) => Some(*c),
            Some(_) => None,
            None => match self.g.values.get(n) {
                Some(GlobalValue::Const(c)) => Some(*c),
                _ => None,
            },
        }
    }

    /// Evaluates a constant expression with the constants visible here.
    pub fn eval_const(&self, e: &ast::Expr) -> Option<Const> {
        let lookup = self.const_lookup();
        consteval::eval(e, &lookup)
    }

    /// Resolves a written type with the constants visible here.
    pub fn resolve_type(&mut self, te: &TypeExpr) -> Option<DeclType> {
        let consts: HashMap<String, Const> = self
            .scopes
            .iter()
            .flat_map(|s| s.iter())
            .filter_map(|(k, b)| match b {
                Binding::Const(c) => Some((k.clone(), *c)),
                _ => None,
            })
            .collect();
        let globals: HashMap<String, Const> = self
            .g
            .values
            .iter()
            .filter_map(|(k, v)| match v {
                GlobalValue::Const(c) => Some((k.clone(), *c)),
                _ => None,
            })
            .collect();
        let lookup = move |n: &str| consts.get(n).or_else(|| globals.get(n)).copied();
        self.g.resolve_type(te, &lookup)
    }

    /// Emits a scalar constant.
    pub fn constant(&mut self, c: Const) -> Value {
        self.s.val(Op::Const(c.bits()), c.ty.isa(), &[])
    }

    /// Emits a constant as a value of its scalar type.
    pub fn const_val(&mut self, c: Const) -> Val {
        let v = self.constant(c);
        Val {
            ty: Ty::Scalar(c.ty),
            parts: vec![v],
        }
    }

    /// Emits a `u32` constant.
    pub fn const_u32(&mut self, v: u32) -> Value {
        self.constant(Const::int(Scalar::UInt, v as i128))
    }

    /// New SSA slots for every leaf of a type.
    pub fn new_slots(&mut self, ty: &Ty) -> Vec<Slot> {
        let leaves = self.g.structs.leaves(ty);
        leaves
            .into_iter()
            .map(|(t, _)| self.s.new_slot(t))
            .collect()
    }

    /// The display form of a type.
    pub fn show(&self, ty: &Ty) -> String {
        self.g.structs.display(ty)
    }
}
