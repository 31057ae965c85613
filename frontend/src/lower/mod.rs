//! Type checking and lowering of the AST to the ISA.
//!
//! One pass does both: each expression is type-checked as it is lowered, so `metalsim
//! check` runs exactly the code `metalsim run` does. The pieces:
//!
//! - [`names`] records every declaration in its namespace or struct and answers "what does
//!   this name mean here" along a scope chain ([`names::Env`]);
//! - [`resolve`] turns paths and written types into types, constants, overload sets...;
//! - [`class`] instantiates structs and class templates (layout, bases, specializations);
//! - [`templates`] binds template parameters (explicit, deduced, default arguments);
//! - [`constexpr`] evaluates constant expressions, `constexpr` functions included;
//! - [`call`] resolves overloads with MSL's implicit conversions and inlines the chosen
//!   function (helpers, methods, constructors, operators; MSL has no recursion);
//! - [`expr`], [`place`], [`init`], [`stmt`], [`convert`] lower code; [`builtins`] the
//!   standard library;
//! - [`ssa`] turns local variables into SSA values; [`kernel`] lowers kernel signatures.
//!
//! Templates are instantiated by substitution in scope: a template's body is lowered with
//! its parameters bound in the scope chain, and class instantiations are memoized by their
//! arguments. Everything is lazy: a struct is laid out, a constant evaluated and a template
//! instantiated where it is first used. Declarations no kernel uses are still checked at
//! the end (non-template structs, constants and helper functions), so `check` reports
//! their errors too.
//!
//! Vectors and structs are split into scalar registers, local variables become SSA values,
//! and memory-backed objects (buffers, threadgroup arrays, local arrays, variables whose
//! address is taken) become loads and stores. `a * b + c` on floats is contracted into one
//! FMA, as Metal's default fast-math does.
//!
//! Errors are [`Diagnostic`]s; lowering goes on after one to report the file's other
//! problems, and returns no module when any error was found.

mod bitfield;
mod builtins;
mod call;
mod class;
mod consteval;
mod constexpr;
mod constobj;
mod convert;
mod expr;
mod init;
mod kernel;
mod names;
mod place;
mod resolve;
mod ssa;
mod stmt;
mod templates;
mod texture;
mod types;

use std::collections::{HashMap, HashSet};

use metalsim_isa::{Alloc, Block, DataObject, Module, Op, Space, SrcLoc, Value};

use crate::ast::{self, TranslationUnit};
use crate::diag::{Diagnostic, has_errors};
use crate::source::{SourceMap, Span};
use crate::{SpecValue, Specialization};

pub use types::{Scalar, Ty};

use class::{ClassInfo, ClassKey};
use consteval::Const;
use names::{DeclId, Env, Namespace, NsId};
use resolve::Resolved;
use ssa::{Slot, SsaBuilder};
use templates::TArg;
use types::Structs;

/// Where a kernel to lower comes from.
#[derive(Clone, Debug)]
pub(crate) enum KernelSource<'a> {
    /// A non-template kernel function.
    Plain(DeclId),
    /// An explicit instantiation of a kernel template.
    Instantiation(&'a ast::Instantiation, Env),
}

/// What identifies a program-scope value: the declaration, and for static members of a
/// class or variable templates, the class and the arguments.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub(crate) struct ValueKey {
    decl: DeclId,
    class: Option<types::StructId>,
    args: Vec<TArg>,
}

/// Lowers a parsed translation unit. Every kernel it defines (and every explicit
/// instantiation of a kernel template, and the kernel template the options instantiate)
/// becomes a function of the module, named by its `[[host_name]]` if it has one; helpers
/// are inlined into them.
pub fn lower(
    tu: &TranslationUnit,
    sources: &SourceMap,
    options: &Specialization,
) -> (Option<Module>, Vec<Diagnostic>) {
    let mut g = Globals::new(sources, options);
    g.note_addresses_taken(&tu.items);
    g.collect(&tu.items, NsId(0));
    g.metal_ns = g.namespace_path(NsId(0), &ast::Path::simple("metal", Span::default()));
    g.link_specializations();
    let functions = kernel::lower_kernels(&mut g);
    g.check_unused();
    let module = Module {
        files: sources.files().iter().map(|f| f.name.clone()).collect(),
        data: std::mem::take(&mut g.data),
        functions,
    };
    let diags = g.finish_diagnostics();
    if has_errors(&diags) {
        (None, diags)
    } else {
        (Some(module), diags)
    }
}

/// A program-scope value.
#[derive(Clone, Debug)]
pub(crate) enum GlobalValue {
    /// A compile-time scalar constant.
    Const(Const),
    /// Read-only data in the constant address space (module data object `id`).
    Data { id: u32, ty: Ty },
    /// A function constant (`[[function_constant(n)]]`), or a program-scope constant
    /// computed from function constants: known when the pipeline is made, but not a
    /// constant expression. `value` is `None` when no value was given.
    Spec {
        name: String,
        value: Option<Const>,
        ty: Scalar,
    },
    /// A function constant of vector type (`constant float4 w [[function_constant(0)]]`):
    /// its components, `None` when no value was given.
    SpecVector {
        name: String,
        value: Option<Vec<Const>>,
        ty: Ty,
    },
    /// A `constexpr` struct built by a constructor (`constexpr sampler s(filter::linear);`):
    /// its initializer, lowered where the variable is used, in the scope it was declared in
    /// (the optimizer folds it to constants).
    Inline {
        init: ast::Init,
        ty: Ty,
        env: Env,
        span: Span,
    },
    /// A declaration that was refused (and reported): uses stay silent.
    Poisoned,
    /// Being evaluated (a use now is a cycle).
    InProgress,
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

impl DeclType {
    /// Whether the object cannot be written through it (`const`, or in the `constant`
    /// address space).
    pub fn is_const_ref(&self) -> bool {
        self.is_const || self.space == Some(Space::Constant)
    }

    /// A plain (non-reference, unqualified) type.
    pub fn plain(ty: Ty) -> DeclType {
        DeclType {
            ty,
            space: None,
            is_const: false,
            is_ref: false,
            unsized_array: false,
        }
    }
}

/// Program-wide lowering state: declarations, instantiations, diagnostics, constant data.
pub(crate) struct Globals<'a> {
    pub sources: &'a SourceMap,
    pub options: &'a Specialization,
    pub diags: Vec<Diagnostic>,
    pub structs: Structs,
    pub classes: Vec<ClassInfo<'a>>,
    pub class_memo: HashMap<ClassKey, types::StructId>,
    pub namespaces: Vec<Namespace>,
    pub ns_envs: Vec<Env>,
    pub metal_ns: Option<NsId>,
    /// A converting constructor is being tried for an implicit conversion: its parameter
    /// takes no second user-defined conversion (C++ allows one per conversion sequence).
    pub in_user_conversion: bool,
    pub decls: Vec<names::Decl<'a>>,
    pub members: HashMap<DeclId, names::MemberTable>,
    pub member_asserts: HashMap<DeclId, Vec<&'a ast::Item>>,
    pub struct_specializations: Vec<(NsId, DeclId)>,
    pub fn_specializations: Vec<(NsId, DeclId)>,
    /// Primary template → its specializations (class and function templates).
    pub specializations: HashMap<DeclId, Vec<DeclId>>,
    pub enum_values: HashMap<DeclId, Option<Vec<Const>>>,
    pub enum_homes: HashMap<DeclId, Env>,
    pub values: HashMap<ValueKey, GlobalValue>,
    pub data: Vec<DataObject>,
    pub kernel_sources: Vec<KernelSource<'a>>,
    /// Non-template helper functions, structs and globals: checked at the end if unused.
    pub helpers: Vec<DeclId>,
    pub plain_structs: Vec<DeclId>,
    pub plain_globals: Vec<DeclId>,
    /// Functions whose body has been lowered somewhere (so it was checked).
    pub lowered: HashSet<DeclId>,
    /// Names whose address is taken somewhere (those variables live in memory).
    pub addr_taken: HashSet<String>,
    /// The namespace of each class and scoped enum declared in a function, by the
    /// declaration (its address in the AST) and the instantiation of the scope it is
    /// declared in (see `FnLowerer::local_decl`).
    pub local_namespaces: HashMap<(usize, Vec<TArg>), NsId>,
    /// How deeply instantiations and constant evaluations nest right now.
    pub depth: u32,
    /// Steps left to the current constant evaluation.
    pub const_steps: u64,
    /// A limit (template instantiation depth) was hit while lowering the current kernel:
    /// its error stands even where constant evaluation is only an attempt, and no
    /// follow-on "not a constant expression" errors are added.
    pub limit_hit: bool,
}

impl<'a> Globals<'a> {
    fn new(sources: &'a SourceMap, options: &'a Specialization) -> Self {
        let global = Env::ns(NsId(0), None);
        Globals {
            sources,
            options,
            diags: Vec::new(),
            structs: Structs::default(),
            classes: Vec::new(),
            class_memo: HashMap::new(),
            namespaces: vec![Namespace::default()],
            ns_envs: vec![global],
            metal_ns: None,
            in_user_conversion: false,
            decls: Vec::new(),
            members: HashMap::new(),
            member_asserts: HashMap::new(),
            struct_specializations: Vec::new(),
            fn_specializations: Vec::new(),
            specializations: HashMap::new(),
            enum_values: HashMap::new(),
            enum_homes: HashMap::new(),
            values: HashMap::new(),
            data: Vec::new(),
            kernel_sources: Vec::new(),
            helpers: Vec::new(),
            plain_structs: Vec::new(),
            plain_globals: Vec::new(),
            lowered: HashSet::new(),
            addr_taken: HashSet::new(),
            local_namespaces: HashMap::new(),
            depth: 0,
            const_steps: 0,
            limit_hit: false,
        }
    }

    /// Reports an error.
    pub fn error(&mut self, message: impl Into<String>, span: Span) {
        self.diags.push(Diagnostic::error(message, span));
    }

    /// The diagnostics in source order, duplicates (the same message at the same place,
    /// e.g. from a template instantiated twice) dropped.
    fn finish_diagnostics(&mut self) -> Vec<Diagnostic> {
        let mut out: Vec<Diagnostic> = Vec::with_capacity(self.diags.len());
        for d in std::mem::take(&mut self.diags) {
            if !out.contains(&d) {
                out.push(d);
            }
        }
        out
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

    /// Attaches every specialization (`template <> struct X<float>`, `template <> float
    /// f<float>(float)`) to its primary template.
    fn link_specializations(&mut self) {
        let all: Vec<(NsId, DeclId)> = self
            .struct_specializations
            .iter()
            .chain(&self.fn_specializations)
            .copied()
            .collect();
        for (ns, spec) in all {
            let name = self.decl(spec).name.clone();
            let is_struct = matches!(self.decl(spec).kind, names::DeclKind::Struct(_));
            let primary = self.ns_lookup(ns, &name).into_iter().find_map(|(id, _)| {
                let d = self.decl(id);
                let kind_ok = match d.kind {
                    names::DeclKind::Struct(_) => is_struct,
                    names::DeclKind::Function(_) => !is_struct,
                    _ => false,
                };
                (kind_ok && d.tparams.is_some_and(|p| !p.is_empty())).then_some(id)
            });
            match primary {
                Some(p) => self.specializations.entry(p).or_default().push(spec),
                None => {
                    let span = self.decl(spec).span;
                    self.error(
                        format!(
                            "`{name}` is specialized, but no template `{name}` is declared before"
                        ),
                        span,
                    );
                }
            }
        }
    }

    /// Records the names of variables whose address is taken anywhere (`&x`): those live in
    /// memory.
    fn note_addresses_taken(&mut self, items: &'a [ast::Item]) {
        for item in items {
            match item {
                ast::Item::Function(f) => {
                    if let Some(b) = &f.body {
                        stmt::addr_taken_names(&b.stmts, &mut self.addr_taken);
                    }
                }
                ast::Item::Struct(s) => self.note_addresses_taken(&s.members),
                ast::Item::Namespace { items, .. } => self.note_addresses_taken(items),
                ast::Item::Template { item, .. } => {
                    self.note_addresses_taken(std::slice::from_ref(&**item))
                }
                _ => {}
            }
        }
    }

    /// A lowerer for work outside any kernel (laying out structs, evaluating constants):
    /// its instructions go nowhere.
    pub fn scratch<'g>(&'g mut self, env: Env) -> FnLowerer<'g, 'a> {
        FnLowerer::new(self, "<scratch>", env)
    }
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
    /// One element of an array held in registers (a matrix's columns) chosen at run time.
    DynElement {
        base: Box<Place>,
        index: Value,
        elem: Ty,
    },
    /// A bit-field of a struct object (`base`).
    BitField {
        base: Box<Place>,
        field: Box<bitfield::BitField>,
    },
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
    /// A local type alias (`using T = float;` in a function).
    Type(Ty),
    /// A scoped enum declared in a function (`enum class Mode { a, b };`): its type (the
    /// underlying integer) and its enumerators, named `Mode::a`; `decl` declares it for the
    /// classes declared after it in the function.
    ScopedEnum {
        ty: Ty,
        values: Vec<(String, Const)>,
        decl: DeclId,
    },
    /// A function parameter pack (`Ts... xs`): one binding per element.
    Pack(Vec<Binding>),
    /// The object a method was called on (`this`).
    This(Place),
}

/// What an expression denotes: an object (with its value when already loaded) or a value.
#[derive(Clone, Debug)]
pub(crate) enum Operand {
    /// A value with no object behind it.
    Value(Val),
    /// An object; `cached` holds its value when it was loaded once already.
    Place { place: Place, cached: Option<Val> },
}

/// Where `break` and `continue` go.
pub(crate) struct LoopCtx {
    pub break_to: Block,
    pub continue_to: Option<Block>,
}

/// How an inlined function returns.
pub(crate) enum ReturnSlot {
    /// A value of a known type, in these slots.
    Value { ty: Ty, slots: Vec<Slot> },
    /// A value whose type comes from the first `return` (`auto`).
    Deduced(Option<(Ty, Vec<Slot>)>),
    /// A reference: the first `return` fixes the object; later ones must return an object
    /// at the same kind of place (`addr` carries differing addresses).
    Reference {
        is_const: bool,
        place: Option<(Place, Option<Slot>)>,
    },
}

/// An inlined helper call in progress.
pub(crate) struct InlineCtx {
    pub decl: DeclId,
    /// The template arguments and classes of the instantiation being inlined (a call of
    /// `g<2>` from `g<3>` is no recursion).
    pub instance: Vec<TArg>,
    pub ret_block: Block,
    pub ret: ReturnSlot,
    pub loops_base: usize,
    /// Where the call was written.
    pub call_span: Span,
}

/// Lowering state for one kernel (or for scratch work outside any).
pub(crate) struct FnLowerer<'g, 'a> {
    pub g: &'g mut Globals<'a>,
    pub s: SsaBuilder,
    /// The scope non-local names are looked up in.
    pub env: Env,
    pub scopes: Vec<HashMap<String, Binding>>,
    pub loops: Vec<LoopCtx>,
    pub inlines: Vec<InlineCtx>,
    /// How many calls were inlined into this function so far.
    pub inlined: usize,
    pub locals: Vec<Alloc>,
    pub tg_allocs: Vec<Alloc>,
    /// Constant evaluation: the local variables of the `constexpr` calls being evaluated.
    pub cframes: Vec<HashMap<String, Const>>,
    /// Constant evaluation may read function constants (program-scope initializers).
    pub spec_ok: bool,
    /// Constant evaluation read a function constant.
    pub touched_spec: bool,
    /// The values of this function's `constexpr` (and constant-initialized `const`) local
    /// objects of struct or array type, by where they live.
    pub const_objects: HashMap<constobj::ConstKey, constobj::ConstObj>,
    /// The `constexpr` calls being interpreted (their object and return type), parallel
    /// to `cframes`.
    pub const_calls: Vec<constobj::ConstCall>,
}

impl<'g, 'a> FnLowerer<'g, 'a> {
    /// A lowerer for a function named `name` whose names resolve in `env`.
    pub fn new(g: &'g mut Globals<'a>, name: &str, env: Env) -> Self {
        FnLowerer {
            g,
            s: SsaBuilder::new(name),
            env,
            scopes: vec![HashMap::new()],
            loops: Vec::new(),
            inlines: Vec::new(),
            inlined: 0,
            locals: Vec::new(),
            tg_allocs: Vec::new(),
            cframes: Vec::new(),
            spec_ok: false,
            touched_spec: false,
            const_objects: HashMap::new(),
            const_calls: Vec::new(),
        }
    }

    /// Reports an error. One inside the prelude (a `static_assert` of a texture method) is
    /// reported at the user's call that led there, pointing into the prelude as well.
    pub fn error(&mut self, message: impl Into<String>, span: Span) {
        match self.user_call(span) {
            Some(call) => self.g.diags.push(
                Diagnostic::error(message, call)
                    .with_label(span, "required by the standard library here"),
            ),
            None => self.g.error(message, span),
        }
    }

    /// For a span in the prelude, the innermost call in the user's code that led there.
    fn user_call(&self, span: Span) -> Option<Span> {
        let in_prelude = |s: Span| {
            self.g
                .sources
                .files()
                .get(s.file.0 as usize)
                .map(|f| f.name.as_str())
                == Some(crate::prelude::FILE_NAME)
        };
        if !in_prelude(span) {
            return None;
        }
        self.inlines
            .iter()
            .rev()
            .map(|c| c.call_span)
            .find(|s| !in_prelude(*s))
    }

    /// Sets the location of the instructions emitted next.
    ///
    /// Code of the prelude (texture methods) takes the location of the user's call, so
    /// faults and profiles name the user's line.
    pub fn at(&mut self, span: Span) {
        let span = self.user_call(span).unwrap_or(span);
        let loc = self.g.loc(span);
        self.s.set_loc(loc);
    }

    /// Looks a name up in the local scopes, innermost first.
    pub fn lookup(&self, name: &str) -> Option<&Binding> {
        self.scopes.iter().rev().find_map(|s| s.get(name))
    }

    /// Binds a name in the innermost scope.
    pub fn bind(&mut self, name: &str, b: Binding) {
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), b);
        }
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

    /// A fresh variable holding `v` (in memory when it holds an array).
    pub fn temp(&mut self, v: &Val, is_const: bool) -> Place {
        // Arrays are indexed at run time: they live in memory.
        if stmt::contains_array(&v.ty, &self.g.structs) {
            return self.memory_var("<temporary>", v, is_const);
        }
        let slots = self.new_slots(&v.ty);
        for (s, p) in slots.iter().zip(&v.parts) {
            self.s.write(*s, *p);
        }
        Place::Var {
            ty: v.ty.clone(),
            slots,
            is_const,
        }
    }

    /// The display form of a type.
    pub fn show(&self, ty: &Ty) -> String {
        self.g.structs.display(ty)
    }

    /// The value of a spec given for a function constant or a template parameter, as a
    /// constant of `ty`.
    pub fn spec_value(&mut self, v: &SpecValue, ty: Scalar) -> Option<Const> {
        Some(match v {
            SpecValue::Bool(b) => Const::bool(*b).cast(ty),
            SpecValue::Int(i) => Const::int(Scalar::Long, *i as i128).cast(ty),
            SpecValue::Float(f) => Const::float(Scalar::Float, *f).cast(ty),
            SpecValue::Type(_) | SpecValue::List(_) => return None,
        })
    }
}
