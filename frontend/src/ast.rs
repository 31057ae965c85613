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

/// A possibly qualified name: `x`, `metal::max`, `mem_flags::mem_threadgroup`, `::x`.
#[derive(Clone, PartialEq, Debug)]
pub struct Path {
    /// A leading `::`.
    pub global: bool,
    /// The parts, left to right (at least one).
    pub segments: Vec<Ident>,
    /// Where.
    pub span: Span,
}

impl Path {
    /// The last segment's spelling.
    pub fn last(&self) -> &str {
        self.segments.last().map(|s| s.name.as_str()).unwrap_or("")
    }

    /// The path as written, `a::b`.
    pub fn to_text(&self) -> String {
        let parts: Vec<&str> = self.segments.iter().map(|s| s.name.as_str()).collect();
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
    /// A value, e.g. `4` in `vec<float, 4>`.
    Expr(Expr),
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
    /// or a template specialization (`vec<float, 4>`, `array<int, 3>`, `atomic<uint>`; `args`
    /// empty when no `<...>` was written).
    Named {
        /// The name.
        path: Path,
        /// Template arguments.
        args: Vec<TemplateArg>,
    },
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

/// A top-level (or namespace-level) declaration.
#[derive(Clone, PartialEq, Debug)]
pub enum Item {
    /// A function definition or declaration (kernel or helper).
    Function(FunctionDef),
    /// A struct (or class) definition.
    Struct(StructDef),
    /// Program-scope variables (`constant float W[3] = {...};`, `constexpr uint N = 4;`).
    Vars(Vec<VarDecl>),
    /// `using namespace metal;`
    UsingNamespace(Path, Span),
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
    /// `what` at `span` ("templates are not supported yet").
    Unsupported {
        /// The construct's name.
        what: String,
        /// Where.
        span: Span,
    },
    /// A declaration that failed to parse (already reported).
    Error(Span),
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

/// A function definition (`body: Some`) or declaration.
#[derive(Clone, PartialEq, Debug)]
pub struct FunctionDef {
    /// The name.
    pub name: Ident,
    /// Specifiers.
    pub specifiers: FnSpecifiers,
    /// Attributes written before the declaration or after the name (`[[kernel]]`,
    /// `[[max_total_threads_per_threadgroup(256)]]`, `[[host_name("x")]]`).
    pub attrs: Vec<Attribute>,
    /// The return type.
    pub ret: TypeExpr,
    /// Parameters.
    pub params: Vec<Param>,
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
    /// Where.
    pub span: Span,
}

/// A struct or class.
#[derive(Clone, PartialEq, Debug)]
pub struct StructDef {
    /// The name.
    pub name: Ident,
    /// Data members in order.
    pub fields: Vec<Field>,
    /// Member functions (not supported by lowering yet).
    pub methods: Vec<FunctionDef>,
    /// Where.
    pub span: Span,
}

/// A data member.
#[derive(Clone, PartialEq, Debug)]
pub struct Field {
    /// Its type (array dimensions folded in).
    pub ty: TypeExpr,
    /// Its name.
    pub name: Ident,
    /// Attributes.
    pub attrs: Vec<Attribute>,
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
    /// `if (cond) then_ else else_`.
    If {
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
    /// [`ExprKind::Cast`] instead; `args` is empty when no `<...>` was written).
    Name {
        /// The name.
        path: Path,
        /// Template arguments.
        args: Vec<TemplateArg>,
    },
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
