//! Plain token-slice questions the grammar asks before committing to a shape: "does a
//! declaration start here?", "is this parenthesized thing a type?", "where does this
//! broken statement end?". Each takes the parser's [`Ctx`] and a token index, never
//! consumes anything and never fails.

use crate::token::{Keyword, Punct, Token};

use super::Ctx;

/// Whether `name` is a builtin MSL type name: scalars with vector suffixes, matrices,
/// packed vectors, atomics, `simdgroup_*` matrices, textures and the template names.
pub fn is_builtin_type(name: &str) -> bool {
    const SCALARS: &[&str] = &[
        "bool",
        "char",
        "uchar",
        "short",
        "ushort",
        "int",
        "uint",
        "long",
        "ulong",
        "half",
        "float",
        "bfloat",
        "size_t",
        "ptrdiff_t",
    ];
    const OTHERS: &[&str] = &[
        "void",
        "int8_t",
        "uint8_t",
        "int16_t",
        "uint16_t",
        "int32_t",
        "uint32_t",
        "int64_t",
        "uint64_t",
        "intptr_t",
        "uintptr_t",
        "atomic_int",
        "atomic_uint",
        "atomic_float",
        "atomic_bool",
        "atomic_long",
        "atomic_ulong",
        "sampler",
        "simdgroup_float8x8",
        "simdgroup_half8x8",
        "simdgroup_bfloat8x8",
        "packed_float2x2",
    ];
    if SCALARS.contains(&name) || OTHERS.contains(&name) || is_template_type(name) {
        return true;
    }
    let unpacked = name.strip_prefix("packed_").unwrap_or(name);
    // Vectors: a scalar name and 2, 3 or 4.
    if let Some(base) = unpacked.strip_suffix(['2', '3', '4']) {
        if SCALARS[..12].contains(&base) {
            return true;
        }
        // Matrices: float4x4, half2x3, bfloat3x3 (not packed).
        if let Some(base) = base
            .strip_suffix('x')
            .filter(|_| unpacked.len() == name.len())
        {
            return base
                .strip_suffix(['2', '3', '4'])
                .is_some_and(|b| matches!(b, "float" | "half" | "bfloat"));
        }
    }
    false
}

/// The prelude's texture class templates, each a kernel parameter type.
pub const TEXTURE_TEMPLATES: &[&str] = &[
    "texture1d",
    "texture1d_array",
    "texture2d",
    "texture2d_array",
    "texture3d",
    "texturecube",
    "texturecube_array",
    "texture2d_ms",
    "texture2d_ms_array",
    "texture_buffer",
    "depth2d",
    "depth2d_array",
    "depthcube",
    "depthcube_array",
    "depth2d_ms",
    "depth2d_ms_array",
];

/// The class, alias and variable templates the built-in `<metal_stdlib>` prelude declares
/// besides [`TEXTURE_TEMPLATES`]
/// (type traits, `numeric_limits`...): known to the parser before it sees their declarations.
pub const PRELUDE_TEMPLATES: &[&str] = &[
    "matrix",
    "__matrix_scalar",
    "integral_constant",
    "bool_constant",
    "enable_if",
    "enable_if_t",
    "conditional",
    "conditional_t",
    "is_same",
    "is_same_v",
    "is_void",
    "is_void_v",
    "is_bool",
    "is_integral",
    "is_integral_v",
    "is_floating_point",
    "is_floating_point_v",
    "is_arithmetic",
    "is_arithmetic_v",
    "is_signed",
    "is_signed_v",
    "is_unsigned",
    "is_unsigned_v",
    "is_scalar",
    "is_scalar_v",
    "is_vector",
    "is_vector_v",
    "is_pointer",
    "is_pointer_v",
    "is_reference",
    "is_reference_v",
    "is_const",
    "is_const_v",
    "is_convertible",
    "is_convertible_v",
    "remove_const",
    "remove_const_t",
    "remove_volatile",
    "remove_volatile_t",
    "remove_cv",
    "remove_cv_t",
    "remove_reference",
    "remove_reference_t",
    "remove_cvref",
    "remove_cvref_t",
    "remove_pointer",
    "remove_pointer_t",
    "remove_address_space",
    "remove_address_space_t",
    "add_const",
    "add_const_t",
    "decay",
    "decay_t",
    "make_unsigned",
    "make_unsigned_t",
    "make_signed",
    "make_signed_t",
    "vec_elements",
    "numeric_limits",
    "conjunction",
    "disjunction",
    "negation",
    "is_floating_point_or_vector",
];

/// Whether `name` is a builtin template (`vec<float, 4>`, `array<int, 3>`, `atomic<uint>`, the
/// prelude's type traits...), after which `<` opens template arguments rather than comparing.
pub fn is_template_type(name: &str) -> bool {
    PRELUDE_TEMPLATES.contains(&name)
        || TEXTURE_TEMPLATES.contains(&name)
        || matches!(
            name,
            "vec"
                | "make_filled_simdgroup_matrix"
                | "array"
                | "atomic"
                | "matrix"
                | "packed_vec"
                | "simdgroup_matrix"
                | "array_ref"
                | "texture1d_array"
                | "texture2d_array"
                | "texture2d_ms"
                | "texture2d_ms_array"
                | "texturecube"
                | "texturecube_array"
                | "texture_buffer"
                | "depth2d"
                | "depth2d_array"
                | "depth2d_ms"
                | "depth2d_ms_array"
                | "depthcube"
                | "depthcube_array"
        )
}

impl Ctx<'_> {
    fn tok(&self, i: usize) -> Option<&Token> {
        self.tokens.get(i)
    }

    pub fn is(&self, i: usize, p: Punct) -> bool {
        self.tok(i) == Some(&Token::Punct(p))
    }

    fn is_kw(&self, i: usize, k: Keyword) -> bool {
        self.tok(i) == Some(&Token::Keyword(k))
    }

    /// Whether a program-scope `constexpr sampler s(coord::pixel, ...);` starts here: a
    /// variable constructed from its arguments, which C++'s rule would otherwise read as
    /// a function declaration (the arguments are values, which only name lookup can tell).
    pub fn starts_sampler_var(&self, mut i: usize) -> bool {
        use Keyword::{Const, Constant, Constexpr, Static};
        while [Constexpr, Constant, Static, Const]
            .iter()
            .any(|&k| self.is_kw(i, k))
        {
            i += 1;
        }
        if self.ident(i) == Some("metal") && self.is(i + 1, Punct::ColonColon) {
            i += 2;
        }
        self.ident(i) == Some("sampler")
            && self.ident(i + 1).is_some()
            && self.is(i + 2, Punct::LParen)
    }

    fn ident(&self, i: usize) -> Option<&str> {
        match self.tok(i) {
            Some(Token::Ident(s)) => Some(s),
            _ => None,
        }
    }

    /// A builtin template or a template declared anywhere in the input.
    pub fn is_template_name(&self, name: &str) -> bool {
        is_template_type(name) || self.templates.contains(name)
    }

    /// A builtin type or a struct/typedef name seen anywhere in the input.
    pub fn is_type_name(&self, name: &str) -> bool {
        is_builtin_type(name) || self.types.contains(name)
    }

    /// After a path `a::b<T>::c` starting at `i` (with an optional leading `::`, template
    /// arguments after segments that name templates, and `::template`): the index after
    /// it, its last segment, and whether template arguments followed the last segment.
    fn path_end(&self, mut i: usize) -> Option<(usize, &str, bool)> {
        if self.is(i, Punct::ColonColon) {
            i += 1;
        }
        let mut last = self.ident(i)?;
        i += 1;
        let mut args = false;
        loop {
            if self.is(i, Punct::Lt) && self.is_template_name(last) {
                match self.template_args_end(i) {
                    Some(end) => {
                        i = end;
                        args = true;
                    }
                    None => break,
                }
            }
            if !self.is(i, Punct::ColonColon) {
                break;
            }
            let mut j = i + 1;
            if self.is_kw(j, Keyword::Template) {
                j += 1;
            }
            match self.ident(j) {
                Some(s) => {
                    last = s;
                    i = j + 1;
                    args = false;
                }
                None => break,
            }
        }
        Some((i, last, args))
    }

    /// At `<` (index `i`): the index after the matching `>`, or `None` when a `;`, `{`, `}`
    /// or the end comes first.
    pub fn template_args_end(&self, mut i: usize) -> Option<usize> {
        let mut angles = 0usize;
        let mut parens = 0usize;
        while let Some(t) = self.tok(i) {
            match t {
                Token::Punct(Punct::Lt) if parens == 0 => angles += 1,
                Token::Punct(Punct::Gt) if parens == 0 => {
                    angles = angles.checked_sub(1)?;
                    if angles == 0 {
                        return Some(i + 1);
                    }
                }
                Token::Punct(Punct::LParen | Punct::LBracket) => parens += 1,
                Token::Punct(Punct::RParen | Punct::RBracket) => parens = parens.checked_sub(1)?,
                Token::Punct(Punct::Semi | Punct::LBrace | Punct::RBrace) => return None,
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// Whether an attribute group `[[` starts at `i`.
    pub fn attribute_starts(&self, i: usize) -> bool {
        self.is(i, Punct::LBracket) && self.is(i + 1, Punct::LBracket)
    }

    /// Whether the token before `i` names a template, so a `<` at `i` opens arguments.
    pub fn opens_template_args(&self, i: usize) -> bool {
        self.is(i, Punct::Lt)
            && i > 0
            && match self.tok(i - 1) {
                Some(Token::Ident(s)) => {
                    self.is_template_name(s)
                        || &**s == "as_type"
                        || (i > 1 && self.is_kw(i - 2, Keyword::Template))
                }
                Some(Token::Keyword(k)) => matches!(
                    k,
                    Keyword::StaticCast
                        | Keyword::ReinterpretCast
                        | Keyword::ConstCast
                        | Keyword::DynamicCast
                        | Keyword::Template
                ),
                _ => false,
            }
    }

    /// Whether a type certainly starts at `i`: a qualifier or type keyword, or a (qualified)
    /// name whose last part is a builtin type or a known struct/typedef name. Used where an
    /// expression could also appear: casts, `sizeof`, template arguments.
    pub fn type_starts(&self, i: usize) -> bool {
        match self.tok(i) {
            Some(Token::Keyword(k)) => matches!(
                k,
                Keyword::Const
                    | Keyword::Volatile
                    | Keyword::Device
                    | Keyword::Constant
                    | Keyword::Threadgroup
                    | Keyword::Thread
                    | Keyword::ThreadgroupImageblock
                    | Keyword::Unsigned
                    | Keyword::Signed
                    | Keyword::Void
                    | Keyword::Auto
                    | Keyword::Decltype
                    | Keyword::Struct
                    | Keyword::Class
                    | Keyword::Typename
                    | Keyword::Enum
                    | Keyword::Union
            ),
            Some(Token::Ident(_) | Token::Punct(Punct::ColonColon)) => self.named_type_starts(i),
            _ => false,
        }
    }

    /// Whether a (qualified) type name starts at `i` (no keywords).
    pub fn named_type_starts(&self, i: usize) -> bool {
        self.path_end(i)
            .is_some_and(|(_, last, _)| self.is_type_name(last))
    }

    /// Whether `(` at `i` opens a C-style cast: `(` then a certain type.
    pub fn cast_starts(&self, i: usize) -> bool {
        self.is(i, Punct::LParen) && self.type_starts(i + 1)
    }

    /// Whether a statement starting at `i` is a declaration rather than an expression.
    pub fn decl_starts(&self, i: usize) -> bool {
        match self.tok(i) {
            Some(Token::Keyword(k)) => matches!(
                k,
                Keyword::Const
                    | Keyword::Volatile
                    | Keyword::Static
                    | Keyword::Constexpr
                    | Keyword::Device
                    | Keyword::Constant
                    | Keyword::Threadgroup
                    | Keyword::Thread
                    | Keyword::ThreadgroupImageblock
                    | Keyword::Unsigned
                    | Keyword::Signed
                    | Keyword::Auto
                    | Keyword::Decltype
                    | Keyword::Struct
                    | Keyword::Class
                    | Keyword::Union
                    | Keyword::Enum
                    | Keyword::Typename
                    | Keyword::Void
                    | Keyword::Inline
                    | Keyword::Extern
                    | Keyword::Mutable
                    | Keyword::Restrict
            ),
            Some(Token::Ident(_) | Token::Punct(Punct::ColonColon)) => {
                let Some((j, last, args)) = self.path_end(i) else {
                    return false;
                };
                let known = self.is_type_name(last) || (args && self.is_template_name(last));
                match self.tok(j) {
                    Some(Token::Ident(_)) => true,
                    Some(Token::Keyword(
                        Keyword::Const
                        | Keyword::Volatile
                        | Keyword::Device
                        | Keyword::Constant
                        | Keyword::Threadgroup
                        | Keyword::Thread,
                    )) => true,
                    Some(Token::Punct(Punct::Star | Punct::Amp | Punct::AndAnd)) => {
                        if known {
                            return true;
                        }
                        // `T * p =`, `T & r =`, `T ** p;`, `T * const p,` ...
                        let mut k = j;
                        while matches!(
                            self.tok(k),
                            Some(Token::Punct(Punct::Star | Punct::Amp | Punct::AndAnd))
                                | Some(Token::Keyword(
                                    Keyword::Const
                                        | Keyword::Volatile
                                        | Keyword::Device
                                        | Keyword::Constant
                                        | Keyword::Threadgroup
                                        | Keyword::Thread
                                ))
                        ) {
                            k += 1;
                        }
                        self.ident(k).is_some()
                            && matches!(
                                self.tok(k + 1),
                                Some(Token::Punct(
                                    Punct::Assign | Punct::Semi | Punct::Comma | Punct::LBracket
                                ))
                            )
                    }
                    _ => false,
                }
            }
            _ => false,
        }
    }

    /// Whether `struct`/`class`/`enum`/`union` at `i` defines a type (`struct S {`,
    /// `struct {`, `enum class E`) rather than naming one in a declaration.
    pub fn type_definition_starts(&self, i: usize) -> bool {
        let tagged = [
            Keyword::Struct,
            Keyword::Class,
            Keyword::Enum,
            Keyword::Union,
        ]
        .iter()
        .any(|k| self.is_kw(i, *k));
        if !tagged {
            return self.is_kw(i, Keyword::Typedef)
                || self.is_kw(i, Keyword::Template)
                || (self.is_kw(i, Keyword::Using) && !self.is_kw(i + 1, Keyword::Namespace));
        }
        let mut j = i + 1;
        if self.is_kw(j, Keyword::Class) || self.is_kw(j, Keyword::Struct) {
            j += 1;
        }
        if self.ident(j).is_some() {
            j += 1;
        }
        matches!(
            self.tok(j),
            Some(Token::Punct(Punct::LBrace | Punct::Colon | Punct::Semi))
        )
    }

    /// Whether a class declaration a function body may hold starts at `i`: `struct S {`,
    /// `class S : Base {`, `union U;`, or `typedef struct { ... } X;` (enums and aliases
    /// have their own parsers).
    pub fn local_class_starts(&self, i: usize) -> bool {
        let tagged = |j: usize| {
            [Keyword::Struct, Keyword::Class, Keyword::Union]
                .iter()
                .any(|k| self.is_kw(j, *k))
        };
        if self.is_kw(i, Keyword::Typedef) {
            return tagged(i + 1);
        }
        tagged(i) && self.type_definition_starts(i)
    }

    /// Whether a class definition followed by variables of it starts at `i`: `struct {
    /// ... } v;`, `union U { ... } a, b;`.
    pub fn class_with_vars_starts(&self, i: usize) -> bool {
        let tagged = [Keyword::Struct, Keyword::Class, Keyword::Union]
            .iter()
            .any(|k| self.is_kw(i, *k));
        if !tagged {
            return false;
        }
        let mut j = i + 1;
        while let Some(t) = self.tok(j) {
            match t {
                Token::Punct(Punct::LBrace) => return self.ident(self.group_end(j)).is_some(),
                Token::Punct(Punct::Semi | Punct::RBrace) => return false,
                _ => j += 1,
            }
        }
        false
    }

    /// Whether a template declaration starts at `i` (`template <`).
    pub fn template_starts(&self, i: usize) -> bool {
        self.is_kw(i, Keyword::Template)
    }

    /// Whether a constructor starts at `i` in a struct body: attributes and `inline`,
    /// `constexpr`, `explicit`... then a name directly followed by `(` (every other member
    /// has a type before its name).
    pub fn ctor_starts(&self, mut i: usize) -> bool {
        loop {
            if self.is(i, Punct::LBracket) && self.is(i + 1, Punct::LBracket) {
                i = self.group_end(i);
                continue;
            }
            match self.tok(i) {
                Some(Token::Keyword(
                    Keyword::Inline
                    | Keyword::Constexpr
                    | Keyword::Explicit
                    | Keyword::Static
                    | Keyword::Friend,
                )) => i += 1,
                _ => break,
            }
        }
        self.ident(i).is_some() && self.is(i + 1, Punct::LParen)
    }

    /// Whether a type parameter starts at `i` in a template head: `typename` or `class`,
    /// then `...`, a name or neither, then `,`, `>` or `=` (`typename T::type N` is a value
    /// parameter).
    pub fn type_param_starts(&self, i: usize) -> bool {
        if !self.is_kw(i, Keyword::Typename) && !self.is_kw(i, Keyword::Class) {
            return false;
        }
        let mut j = i + 1;
        if self.is(j, Punct::Ellipsis) {
            j += 1;
        }
        if self.ident(j).is_some() {
            j += 1;
        }
        matches!(
            self.tok(j),
            Some(Token::Punct(Punct::Comma | Punct::Gt | Punct::Assign))
        )
    }

    /// At `<`: the index after the matching `>` (a nested template head).
    pub fn skip_angles(&self, i: usize) -> Option<usize> {
        self.template_args_end(i)
    }

    /// Whether `[` at `i` opens an array dimension (not an attribute `[[`).
    pub fn array_dim_starts(&self, i: usize) -> bool {
        self.is(i, Punct::LBracket) && !self.is(i + 1, Punct::LBracket)
    }

    /// At `(` or `[`: the index after the matching closer. A group left open ends before the
    /// first `{` or `}` inside it, or its first `;` unless it is a `for` header, so that
    /// recovery does not swallow the rest of the file.
    fn paren_end(&self, i: usize) -> usize {
        let for_header = i > 0 && self.is_kw(i - 1, Keyword::For);
        let mut depth = 0usize;
        let mut j = i;
        while let Some(t) = self.tok(j) {
            match t {
                Token::Punct(Punct::LParen | Punct::LBracket) => depth += 1,
                Token::Punct(Punct::RParen | Punct::RBracket) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return j + 1;
                    }
                }
                Token::Punct(Punct::LBrace | Punct::RBrace) if j > i => return j,
                Token::Punct(Punct::Semi) if j > i && !for_header => return j,
                _ => {}
            }
            j += 1;
        }
        j
    }

    /// At an opening bracket: the index after its matching closer.
    pub fn skip_group(&self, i: usize) -> Option<usize> {
        matches!(
            self.tok(i),
            Some(Token::Punct(
                Punct::LParen | Punct::LBracket | Punct::LBrace
            ))
        )
        .then(|| self.group_end(i))
    }

    /// At an opening bracket: the index after its matching closer (or the end).
    fn group_end(&self, i: usize) -> usize {
        let mut depth = 0usize;
        let mut j = i;
        while let Some(t) = self.tok(j) {
            match t {
                Token::Punct(Punct::LParen | Punct::LBracket | Punct::LBrace) => depth += 1,
                Token::Punct(Punct::RParen | Punct::RBracket | Punct::RBrace) => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return j + 1;
                    }
                }
                _ => {}
            }
            j += 1;
        }
        j
    }

    /// Where a broken statement starting at `i` ends: after its `;` or its braced group, or
    /// before the `}` closing the enclosing block. `None` when nothing can be skipped.
    pub fn skip_stmt(&self, i: usize) -> Option<usize> {
        let mut j = i;
        while let Some(t) = self.tok(j) {
            match t {
                Token::Punct(Punct::Semi) => return Some(j + 1),
                Token::Punct(Punct::LBrace) => {
                    j = self.group_end(j);
                    if self.is(j, Punct::Semi) {
                        j += 1;
                    }
                    return Some(j);
                }
                Token::Punct(Punct::LParen | Punct::LBracket) => j = self.paren_end(j),
                Token::Punct(Punct::RBrace) => break,
                _ => j += 1,
            }
        }
        (j > i).then_some(j)
    }

    /// Where a broken declaration starting at `i` ends: after its `;` at depth 0, or after
    /// its braced body (and a `;` right after it), or before a `}` closing an enclosing
    /// namespace or struct.
    pub fn skip_decl(&self, i: usize) -> Option<usize> {
        let mut j = i;
        while let Some(t) = self.tok(j) {
            match t {
                Token::Punct(Punct::Semi) => return Some(j + 1),
                Token::Punct(Punct::LBrace) => {
                    j = self.group_end(j);
                    if self.is(j, Punct::Semi) {
                        j += 1;
                    }
                    return Some(j);
                }
                Token::Punct(Punct::LParen | Punct::LBracket) => j = self.paren_end(j),
                Token::Punct(Punct::RBrace | Punct::RParen | Punct::RBracket) => break,
                _ => j += 1,
            }
        }
        (j > i).then_some(j)
    }

    /// One token, whatever it is (the last resort at the top level).
    pub fn skip_one(&self, i: usize) -> Option<usize> {
        (i < self.tokens.len()).then_some(i + 1)
    }

    /// At `[` starting a lambda: the index after `[captures](params) mutable -> T { body }`.
    pub fn skip_lambda(&self, i: usize) -> Option<usize> {
        if !self.is(i, Punct::LBracket) {
            return None;
        }
        let mut j = self.group_end(i);
        if self.is(j, Punct::LParen) {
            j = self.group_end(j);
        }
        // `mutable`, `noexcept`, `-> T`: anything up to the body on the same statement.
        let mut k = j;
        while let Some(t) = self.tok(k) {
            match t {
                Token::Punct(Punct::LBrace) => return Some(self.group_end(k)),
                Token::Punct(Punct::Semi | Punct::RBrace | Punct::RParen | Punct::Comma) => {
                    return None;
                }
                _ => k += 1,
            }
        }
        None
    }
}
