//! The abstract syntax tree: what the parser produces and lowering consumes.
//!
//! Plain values with spans. Names are not resolved here and types are not checked: the
//! AST keeps what was written (e.g. `float4(x)` is a [`ExprKind::Call`] whose callee
//! names a type; lowering decides).

use crate::source::Span;

/// A name as written, with its span.
#[derive(Clone, PartialEq, Debug)]
pub struct Ident {
    /// The spelling.
    pub name: String,
    /// Where.
    pub span: Span,
}

/// One part of a qualified name: a name and the template arguments written after it
/// (`Tile<float, 4>` in `Tile<float, 4>::load`; empty when no `<...>` was written).
#[derive(Clone, PartialEq, Debug)]
pub struct PathSegment {
    /// The name.
    pub name: Ident,
    /// Template arguments.
    pub args: Vec<TemplateArg>,
}

/// A possibly qualified name: `x`, `metal::max`, `mem_flags::mem_threadgroup`, `::x`,
/// `vec<float, 4>`, `Loader<T, 8>::tile_rows`.
#[derive(Clone, PartialEq, Debug)]
pub struct Path {
    /// A leading `::`.
    pub global: bool,
    /// The parts, left to right (at least one).
    pub segments: Vec<PathSegment>,
    /// Where.
    pub span: Span,
}

impl Path {
    /// A one-segment path without template arguments.
    pub fn simple(name: &str, span: Span) -> Path {
        Path {
            global: false,
            segments: vec![PathSegment {
                name: Ident {
                    name: name.to_string(),
                    span,
                },
                args: Vec::new(),
            }],
            span,
        }
    }

    /// The last segment's spelling.
    pub fn last(&self) -> &str {
        self.segments
            .last()
            .map(|s| s.name.name.as_str())
            .unwrap_or("")
    }

    /// The last segment's template arguments.
    pub fn last_args(&self) -> &[TemplateArg] {
        self.segments
            .last()
            .map(|s| s.args.as_slice())
            .unwrap_or(&[])
    }

    /// Whether the path is one name without template arguments.
    pub fn is_plain(&self) -> bool {
        !self.global && self.segments.len() == 1 && self.segments[0].args.is_empty()
    }

    /// The path as written, `a::b`, without template arguments.
    pub fn to_text(&self) -> String {
        let parts: Vec<&str> = self.segments.iter().map(|s| s.name.name.as_str()).collect();
        let joined = parts.join("::");
        if self.global {
            format!("::{joined}")
        } else {
            joined
        }
    }
}

/// A Metal address space.
#[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
pub enum AddressSpace {
    /// `device`
    Device,
    /// `constant`
    Constant,
    /// `threadgroup`
    Threadgroup,
    /// `thread`
    Thread,
    /// `threadgroup_imageblock`
    ThreadgroupImageblock,
}

/// Type qualifiers written on a type.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Qualifiers {
    /// `const`
    pub is_const: bool,
    /// `volatile`
    pub is_volatile: bool,
    /// An address space.
    pub space: Option<AddressSpace>,
}

/// A template argument: a type or a constant expression.
#[derive(Clone, PartialEq, Debug)]
pub enum TemplateArg {
    /// A type, e.g. `float` in `vec<float, 4>`.
    Type(TypeExpr),
    /// A value, e.g. `4` in `vec<float, 4>` (or a name the parser could not classify,
    /// which lowering resolves to a type or a value).
    Expr(Expr),
    /// A pack expansion `Ts...`.
    Pack(Box<TemplateArg>),
}

/// What kind of thing a template parameter stands for.
#[derive(Clone, PartialEq, Debug)]
pub enum TemplateParamKind {
    /// `typename T` or `class T`.
    Type,
    /// A value of a type: `int N`, `bool B`.
    Value(TypeExpr),
    /// `template <typename> class TT` (not supported by lowering).
    Template,
}

/// One parameter of a `template <...>` head.
#[derive(Clone, PartialEq, Debug)]
pub struct TemplateParam {
    /// Type, value or template.
    pub kind: TemplateParamKind,
    /// The name (optional: `typename = enable_if_t<...>`).
    pub name: Option<Ident>,
    /// A parameter pack (`typename... Ts`).
    pub pack: bool,
    /// The default argument.
    pub default: Option<TemplateArg>,
    /// Where.
    pub span: Span,
}

/// A type as written.
#[derive(Clone, PartialEq, Debug)]
pub struct TypeExpr {
    /// What kind of type.
    pub kind: TypeKind,
    /// Where.
    pub span: Span,
}

/// The shapes a written type takes.
///
/// Declarators are unwound by the parser: `device const float* p` is
/// `Pointer { pointee: Qualified { const device, Named(float) } }`; `float t[4][8]` is
/// `Array { elem: Array { elem: float, len: 8 }, len: 4 }` (outermost dimension first, as in C).
/// Multi-word builtin names are normalized: `unsigned int` → `uint`, `unsigned char` →
/// `uchar`, `unsigned short` → `ushort`, `unsigned long` → `ulong`, `signed char` → `char`,
/// `unsigned` alone → `uint`, `long long` → `long`.
#[derive(Clone, PartialEq, Debug)]
pub enum TypeKind {
    /// A named type: a builtin (`float`, `uint4`, `atomic_int`, `void`), a struct, a typedef,
    /// or a template specialization (`vec<float, 4>`, `array<int, 3>`, `atomic<uint>`, with
    /// the arguments on the path's last segment); `typename` before it is dropped.
    Named(Path),
    /// Qualifiers applied to a type (`const`, an address space).
    Qualified {
        /// The qualifiers.
        quals: Qualifiers,
        /// The qualified type.
        inner: Box<TypeExpr>,
    },
    /// A pointer; `quals` are those written after the `*` (the pointer's own).
    Pointer {
        /// What it points to (carries the pointee's address space and constness).
        pointee: Box<TypeExpr>,
        /// Qualifiers of the pointer itself.
        quals: Qualifiers,
    },
    /// A reference `T&`.
    Reference {
        /// The referred-to type.
        referent: Box<TypeExpr>,
    },
    /// An array `T[n]` (`len` is `None` for `T[]`).
    Array {
        /// Element type.
        elem: Box<TypeExpr>,
        /// Element count.
        len: Option<Box<Expr>>,
    },
    /// `auto`.
    Auto,
    /// `decltype(expr)`.
    Decltype(Box<Expr>),
}

/// An attribute `[[name]]` or `[[name(args)]]`.
#[derive(Clone, PartialEq, Debug)]
pub struct Attribute {
    /// The name (`buffer`, `thread_position_in_grid`, `kernel`, `host_name`...).
    pub name: Ident,
    /// Arguments, when parenthesized (string arguments are [`ExprKind::StringLit`]).
    pub args: Vec<Expr>,
    /// Where.
    pub span: Span,
}

/// A whole source file after preprocessing.
#[derive(Clone, PartialEq, Debug, Default)]
pub struct TranslationUnit {
    /// Top-level declarations in order.
    pub items: Vec<Item>,
}

/// A top-level (or namespace-level, or struct-member) declaration.
#[derive(Clone, PartialEq, Debug)]
pub enum Item {
    /// A function definition or declaration (kernel, helper, method, constructor, operator).
    Function(FunctionDef),
    /// A struct (or class) definition.
    Struct(StructDef),
    /// An `enum` or `enum class`.
    Enum(EnumDef),
    /// Program-scope variables (`constant float W[3] = {...};`, `constexpr uint N = 4;`), or
    /// static data members inside a struct.
    Vars(Vec<VarDecl>),
    /// `using namespace metal;`
    UsingNamespace(Path, Span),
    /// `using metal::min;` (a using-declaration).
    UsingDecl(Path, Span),
    /// `namespace short_name = some::long_name;`
    NamespaceAlias {
        /// The new name.
        name: Ident,
        /// The namespace it names.
        target: Path,
        /// Where.
        span: Span,
    },
    /// `typedef T name;` or `using name = T;`.
    Alias {
        /// The new name.
        name: Ident,
        /// The aliased type.
        ty: TypeExpr,
        /// Where.
        span: Span,
    },
    /// `namespace name { items }`.
    Namespace {
        /// The namespace name (`None` for an anonymous namespace).
        name: Option<Ident>,
        /// Its declarations.
        items: Vec<Item>,
        /// Where.
        span: Span,
    },
    /// `template <params> item`: a function, struct, alias or variable template, or with no
    /// parameters an explicit specialization (`template <> struct X<float> {...}`).
    Template {
        /// The template parameters.
        params: Vec<TemplateParam>,
        /// The templated declaration.
        item: Box<Item>,
        /// Where (the `template` head included).
        span: Span,
    },
    /// An explicit instantiation: `template [[host_name("k_f32")]] [[kernel]]
    /// decltype(k<float>) k<float>;` or `template [[host_name("k")]] kernel void
    /// k<float>(device float*, uint);`.
    Instantiation(Instantiation),
    /// `static_assert(cond, "message");`
    StaticAssert {
        /// The condition.
        cond: Expr,
        /// The message.
        message: Option<String>,
        /// Where.
        span: Span,
    },
    /// A declaration the parser recognized but that is not supported yet; lowering reports
    /// `what` at `span` ("unions are not supported yet").
    Unsupported {
        /// The construct's name.
        what: String,
        /// Where.
        span: Span,
    },
    /// A declaration that failed to parse (already reported).
    Error(Span),
}

/// An explicit instantiation of a function template.
#[derive(Clone, PartialEq, Debug)]
pub struct Instantiation {
    /// Attributes (`[[host_name("x")]]`, `[[kernel]]`).
    pub attrs: Vec<Attribute>,
    /// Specifiers written (`kernel`).
    pub specifiers: FnSpecifiers,
    /// The instantiated function with its template arguments (`k<float>`).
    pub name: Path,
    /// The parameter list when written out (absent in the `decltype(k<float>)` form).
    pub params: Option<Vec<Param>>,
    /// Where.
    pub span: Span,
}

/// Function specifiers.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct FnSpecifiers {
    /// `kernel` (or `[[kernel]]`, which lowering also accepts).
    pub kernel: bool,
    /// `inline` (also `METAL_FUNC`, `__attribute__((always_inline))`).
    pub inline: bool,
    /// `static`.
    pub is_static: bool,
    /// `constexpr`.
    pub constexpr: bool,
}

/// What kind of function a [`FunctionDef`] is.
#[derive(Clone, PartialEq, Debug)]
pub enum FnKind {
    /// A plain function, method or operator (`operator+`, `operator()`, `operator[]`).
    Normal,
    /// A constructor (its `name` is the struct's).
    Constructor,
    /// A destructor `~S()`.
    Destructor,
    /// A conversion operator `operator float()`; `ret` is the target type.
    Conversion,
}

/// A member initializer of a constructor: `x(a)` or `x{a}`.
#[derive(Clone, PartialEq, Debug)]
pub struct MemberInit {
    /// The member (or base class) initialized.
    pub name: Path,
    /// The arguments.
    pub args: Vec<Expr>,
    /// Written with braces.
    pub brace: bool,
    /// Where.
    pub span: Span,
}

/// A function definition (`body: Some`) or declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct FunctionDef {
    /// The name (`operator+` for operators, the struct's name for constructors).
    pub name: Ident,
    /// The qualifier of an out-of-class definition (`Tile<T>` in `Tile<T>::load`).
    pub scope: Vec<PathSegment>,
    /// Template arguments after the name of an explicit specialization (`f<float>`).
    pub spec_args: Option<Vec<TemplateArg>>,
    /// Constructor, destructor, conversion or plain.
    pub kind: FnKind,
    /// Specifiers.
    pub specifiers: FnSpecifiers,
    /// Attributes written before the declaration or after the name (`[[kernel]]`,
    /// `[[max_total_threads_per_threadgroup(256)]]`, `[[host_name("x")]]`).
    pub attrs: Vec<Attribute>,
    /// The return type (for `auto f() -> T`, `T`; for constructors, the struct).
    pub ret: TypeExpr,
    /// Parameters.
    pub params: Vec<Param>,
    /// Qualifiers after the parameter list of a method (`const`, `device`, `thread`...).
    pub method_quals: Qualifiers,
    /// A constructor's member initializers.
    pub inits: Vec<MemberInit>,
    /// `= delete`.
    pub deleted: bool,
    /// The body.
    pub body: Option<Block>,
    /// The whole definition.
    pub span: Span,
}

/// A function parameter.
#[derive(Clone, PartialEq, Debug)]
pub struct Param {
    /// Its type.
    pub ty: TypeExpr,
    /// Its name (optional in declarations).
    pub name: Option<Ident>,
    /// Attributes after the name (`[[buffer(0)]]`, `[[thread_position_in_grid]]`).
    pub attrs: Vec<Attribute>,
    /// A default value.
    pub default: Option<Expr>,
    /// A function parameter pack (`Ts... xs`).
    pub pack: bool,
    /// Where.
    pub span: Span,
}

/// A struct or class.
#[derive(Clone, PartialEq, Debug)]
pub struct StructDef {
    /// The name.
    pub name: Ident,
    /// Template arguments after the name of a (partial or full) specialization.
    pub spec_args: Option<Vec<TemplateArg>>,
    /// Base classes, in order.
    pub bases: Vec<TypeExpr>,
    /// Data members in order.
    pub fields: Vec<Field>,
    /// Every other member: methods, constructors, operators, static data members, nested
    /// types and aliases, member templates, `static_assert`s.
    pub members: Vec<Item>,
    /// A declaration without a body (`struct S;`, `template <typename T> struct Traits;`).
    pub forward: bool,
    /// A `union`: its data members share storage.
    pub is_union: bool,
    /// Where.
    pub span: Span,
}

/// The name given to an anonymous union (or struct) member of a struct and to its type
/// (followed by its source offset); its members are found as members of the struct.
pub const ANONYMOUS_MEMBER: &str = "__anonymous";

/// A data member.
#[derive(Clone, PartialEq, Debug)]
pub struct Field {
    /// Its type (array dimensions folded in).
    pub ty: TypeExpr,
    /// Its name.
    pub name: Ident,
    /// Attributes.
    pub attrs: Vec<Attribute>,
    /// A default member initializer (`float x = 0;`).
    pub init: Option<Init>,
    /// The width of a bit-field (`uint kind : 4;`); an unnamed bit-field (`uint : 0;`)
    /// has an empty name.
    pub bit_width: Option<Expr>,
    /// Where.
    pub span: Span,
}

/// An enumeration.
#[derive(Clone, PartialEq, Debug)]
pub struct EnumDef {
    /// The name (`None` for `enum { A, B };`).
    pub name: Option<Ident>,
    /// `enum class` / `enum struct`.
    pub scoped: bool,
    /// The underlying type (`enum E : uint8_t`).
    pub underlying: Option<TypeExpr>,
    /// The enumerators with their explicit values.
    pub variants: Vec<(Ident, Option<Expr>)>,
    /// Where.
    pub span: Span,
}

/// Storage specifiers of a variable.
#[derive(Clone, Copy, PartialEq, Eq, Debug, Default)]
pub struct Storage {
    /// `static`
    pub is_static: bool,
    /// `constexpr`
    pub constexpr: bool,
}

/// A variable declaration (one declarator; `int a, b;` gives two).
#[derive(Clone, PartialEq, Debug)]
pub struct VarDecl {
    /// `static`, `constexpr`.
    pub storage: Storage,
    /// The type, with qualifiers (`Qualified` at the top for `threadgroup float t[16]`) and
    /// array dimensions folded in.
    pub ty: TypeExpr,
    /// The name.
    pub name: Ident,
    /// The initializer.
    pub init: Option<Init>,
    /// Attributes (`[[function_constant(0)]]`).
    pub attrs: Vec<Attribute>,
    /// Where.
    pub span: Span,
}

/// A variable's initializer.
#[derive(Clone, PartialEq, Debug)]
pub enum Init {
    /// `= expr` (including `= {...}`, an [`ExprKind::InitList`]).
    Assign(Expr),
    /// `T x(args)`.
    Ctor(Vec<Expr>),
    /// `T x{args}`.
    Brace(Vec<Expr>),
}

/// A `{ ... }` block.
#[derive(Clone, PartialEq, Debug)]
pub struct Block {
    /// The statements.
    pub stmts: Vec<Stmt>,
    /// Where (braces included).
    pub span: Span,
}

/// A statement.
#[derive(Clone, PartialEq, Debug)]
pub struct Stmt {
    /// What kind.
    pub kind: StmtKind,
    /// Where.
    pub span: Span,
}

/// The statements of MSL.
#[derive(Clone, PartialEq, Debug)]
pub enum StmtKind {
    /// Variable declarations.
    Decl(Vec<VarDecl>),
    /// An expression evaluated for its effects.
    Expr(Expr),
    /// A nested block.
    Block(Block),
    /// Types declared inside a function: aliases and enums.
    Items(Vec<Item>),
    /// `if (cond) then_ else else_`, or `if constexpr (...)`.
    If {
        /// `if constexpr`: only the taken branch is compiled.
        constexpr_: bool,
        /// Condition.
        cond: Expr,
        /// Taken branch.
        then_: Box<Stmt>,
        /// Other branch.
        else_: Option<Box<Stmt>>,
    },
    /// `for (init; cond; step) body`.
    For {
        /// A declaration or expression statement.
        init: Option<Box<Stmt>>,
        /// Loop condition (absent: forever).
        cond: Option<Expr>,
        /// Step expression.
        step: Option<Expr>,
        /// Body.
        body: Box<Stmt>,
    },
    /// `while (cond) body`.
    While {
        /// Condition.
        cond: Expr,
        /// Body.
        body: Box<Stmt>,
    },
    /// `do body while (cond);`
    DoWhile {
        /// Body.
        body: Box<Stmt>,
        /// Condition.
        cond: Expr,
    },
    /// `switch (cond) body`.
    Switch {
        /// The switched value.
        cond: Expr,
        /// The body, holding `Case`/`Default` labels.
        body: Box<Stmt>,
    },
    /// `case value:` (a label; the statement after it follows in the block).
    Case(Expr),
    /// `default:`.
    Default,
    /// `break;`
    Break,
    /// `continue;`
    Continue,
    /// `return;` or `return expr;`
    Return(Option<Expr>),
    /// `static_assert(cond, "message");`
    StaticAssert {
        /// The condition.
        cond: Expr,
        /// The message.
        message: Option<String>,
    },
    /// `;`
    Empty,
    /// A statement that failed to parse (already reported).
    Error,
}

/// An expression.
#[derive(Clone, PartialEq, Debug)]
pub struct Expr {
    /// What kind.
    pub kind: ExprKind,
    /// Where.
    pub span: Span,
}

/// Prefix operators.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum UnaryOp {
    /// `-x`
    Neg,
    /// `+x`
    Plus,
    /// `!x`
    Not,
    /// `~x`
    BitNot,
    /// `*p`
    Deref,
    /// `&x`
    AddrOf,
    /// `++x`
    PreInc,
    /// `--x`
    PreDec,
}

/// Postfix increment and decrement.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum PostfixOp {
    /// `x++`
    Inc,
    /// `x--`
    Dec,
}

/// Binary operators (assignment forms use [`ExprKind::Assign`]).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum BinaryOp {
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `&`
    BitAnd,
    /// `^`
    BitXor,
    /// `|`
    BitOr,
    /// `&&`
    LogAnd,
    /// `||`
    LogOr,
    /// `,`
    Comma,
}

impl BinaryOp {
    /// How the operator is spelled (as printed, and for `operator+` lookup).
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Shl => "<<",
            BinaryOp::Shr => ">>",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::BitAnd => "&",
            BinaryOp::BitXor => "^",
            BinaryOp::BitOr => "|",
            BinaryOp::LogAnd => "&&",
            BinaryOp::LogOr => "||",
            BinaryOp::Comma => ",",
        }
    }
}

/// The ways to write a cast.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum CastKind {
    /// `(T)x`
    CStyle,
    /// `static_cast<T>(x)`
    Static,
    /// `reinterpret_cast<T>(x)`
    Reinterpret,
    /// `const_cast<T>(x)`
    Const,
    /// `as_type<T>(x)` (bit reinterpretation)
    AsType,
}

/// The expressions of MSL.
#[derive(Clone, PartialEq, Debug)]
pub enum ExprKind {
    /// An integer literal (character literals too). `value` is the literal's value; the
    /// suffix decides the type together with the value, as in C++.
    IntLit {
        /// The value.
        value: u64,
        /// `u`/`U` suffix.
        unsigned: bool,
        /// `l`/`L`/`ll` suffix.
        long: bool,
        /// Written in hex, octal or binary (C++ then allows an unsigned type).
        non_decimal: bool,
    },
    /// A floating literal; `suffix` is `None`, `Some('f')` or `Some('h')` (lower-cased).
    FloatLit {
        /// The value.
        value: f64,
        /// The suffix.
        suffix: Option<char>,
    },
    /// `true` / `false`.
    BoolLit(bool),
    /// A string literal (attribute arguments only; adjacent literals are concatenated).
    StringLit(String),
    /// A name, possibly qualified and possibly with template arguments (`as_type<uint>` is a
    /// [`ExprKind::Cast`] instead).
    Name(Path),
    /// A prefix operator.
    Unary {
        /// The operator.
        op: UnaryOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// `x++` / `x--`.
    Postfix {
        /// The operator.
        op: PostfixOp,
        /// The operand.
        operand: Box<Expr>,
    },
    /// A binary operator.
    Binary {
        /// The operator.
        op: BinaryOp,
        /// Left operand.
        lhs: Box<Expr>,
        /// Right operand.
        rhs: Box<Expr>,
    },
    /// `lhs = rhs` (`op: None`) or a compound assignment `lhs op= rhs`.
    Assign {
        /// The compound operator, if any.
        op: Option<BinaryOp>,
        /// The target.
        lhs: Box<Expr>,
        /// The value.
        rhs: Box<Expr>,
    },
    /// `cond ? then_ : else_`.
    Conditional {
        /// Condition.
        cond: Box<Expr>,
        /// Value when true.
        then_: Box<Expr>,
        /// Value when false.
        else_: Box<Expr>,
    },
    /// A call `f(args)`; also functional casts and constructors (`float4(x)`), decided by
    /// lowering from what the callee names.
    Call {
        /// What is called.
        callee: Box<Expr>,
        /// Arguments.
        args: Vec<Expr>,
    },
    /// `base.name` or `base->name` (also swizzles `v.xyz`).
    Member {
        /// The object.
        base: Box<Expr>,
        /// The member.
        name: Ident,
        /// Explicit template arguments of a member template (`obj.template f<T>`, or
        /// `obj.f<T>` where `f` is known as a template); empty when none are written.
        targs: Vec<TemplateArg>,
        /// Written with `->`.
        arrow: bool,
    },
    /// `base[index]`.
    Index {
        /// The array, pointer or vector.
        base: Box<Expr>,
        /// The index.
        index: Box<Expr>,
    },
    /// A cast.
    Cast {
        /// How it was written.
        kind: CastKind,
        /// The target type.
        ty: TypeExpr,
        /// The operand.
        expr: Box<Expr>,
    },
    /// `sizeof(T)`.
    SizeofType(TypeExpr),
    /// `sizeof expr`.
    SizeofExpr(Box<Expr>),
    /// `alignof(T)`.
    AlignofType(TypeExpr),
    /// `sizeof...(Ts)`.
    SizeofPack(Ident),
    /// `x...`: a pack expansion (in call arguments and initializer lists).
    PackExpansion(Box<Expr>),
    /// `{a, b, c}` (an initializer list).
    InitList(Vec<Expr>),
    /// `T{a, b}` (a braced constructor).
    TypedInitList {
        /// The type.
        ty: TypeExpr,
        /// The elements.
        elems: Vec<Expr>,
    },
    /// An expression that failed to parse (already reported).
    Error,
}
