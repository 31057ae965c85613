//! Tokens: what the lexer produces, the preprocessor rewrites and the parser reads.

use std::fmt;
use std::rc::Rc;

use crate::source::Span;

/// Declares the keyword enum with its spellings.
macro_rules! keywords {
    ($($var:ident = $text:literal),* $(,)?) => {
        /// Reserved words of MSL (C++14 plus Metal's address spaces and function kinds).
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        #[allow(missing_docs)]
        pub enum Keyword { $($var),* }

        impl Keyword {
            /// The spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Keyword::$var => $text),* }
            }

            /// The keyword spelled `s`, if it is one.
            #[allow(clippy::should_implement_trait)]
            pub fn from_str(s: &str) -> Option<Keyword> {
                match s { $($text => Some(Keyword::$var),)* _ => None }
            }
        }
    };
}

keywords! {
    Kernel = "kernel", Vertex = "vertex", Fragment = "fragment",
    Device = "device", Constant = "constant", Threadgroup = "threadgroup", Thread = "thread",
    ThreadgroupImageblock = "threadgroup_imageblock", RayData = "ray_data", ObjectData = "object_data",
    Const = "const", Constexpr = "constexpr", Volatile = "volatile", Static = "static",
    Inline = "inline", Extern = "extern", Restrict = "restrict",
    Struct = "struct", Class = "class", Union = "union", Enum = "enum", Typedef = "typedef",
    Using = "using", Namespace = "namespace", Template = "template", Typename = "typename",
    Public = "public", Private = "private", Protected = "protected", Operator = "operator",
    If = "if", Else = "else", For = "for", While = "while", Do = "do",
    Switch = "switch", Case = "case", Default = "default",
    Break = "break", Continue = "continue", Return = "return", Goto = "goto",
    True = "true", False = "false", Sizeof = "sizeof", Alignof = "alignof",
    StaticCast = "static_cast", ReinterpretCast = "reinterpret_cast",
    ConstCast = "const_cast", DynamicCast = "dynamic_cast",
    StaticAssert = "static_assert", Decltype = "decltype", Auto = "auto",
    Unsigned = "unsigned", Signed = "signed", Void = "void",
    This = "this", Nullptr = "nullptr", New = "new", Delete = "delete",
    Virtual = "virtual", Friend = "friend", Mutable = "mutable", Explicit = "explicit",
    Noexcept = "noexcept", Throw = "throw", Try = "try", Catch = "catch",
}

/// Declares the punctuator enum with its spellings, longest first for the lexer.
macro_rules! puncts {
    ($($var:ident = $text:literal),* $(,)?) => {
        /// Operators and punctuation.
        #[derive(Clone, Copy, PartialEq, Eq, Hash, Debug)]
        #[allow(missing_docs)]
        pub enum Punct { $($var),* }

        impl Punct {
            /// Every punctuator, longest spelling first (the order the lexer tries them).
            pub const ALL: &'static [Punct] = &[$(Punct::$var),*];

            /// The spelling.
            pub fn as_str(self) -> &'static str {
                match self { $(Punct::$var => $text),* }
            }
        }
    };
}

puncts! {
    ShlAssign = "<<=", ShrAssign = ">>=", Ellipsis = "...", ArrowStar = "->*",
    Arrow = "->", PlusPlus = "++", MinusMinus = "--", Shl = "<<", Shr = ">>",
    Le = "<=", Ge = ">=", EqEq = "==", Ne = "!=", AndAnd = "&&", OrOr = "||",
    PlusAssign = "+=", MinusAssign = "-=", StarAssign = "*=", SlashAssign = "/=",
    PercentAssign = "%=", AndAssign = "&=", OrAssign = "|=", XorAssign = "^=",
    ColonColon = "::", HashHash = "##",
    LParen = "(", RParen = ")", LBracket = "[", RBracket = "]", LBrace = "{", RBrace = "}",
    Comma = ",", Semi = ";", Colon = ":", Dot = ".", Question = "?",
    Plus = "+", Minus = "-", Star = "*", Slash = "/", Percent = "%",
    Amp = "&", Pipe = "|", Caret = "^", Tilde = "~", Bang = "!",
    Assign = "=", Lt = "<", Gt = ">", Hash = "#",
}

/// A token. Text-carrying tokens share their text (`Rc<str>`) so the preprocessor and the
/// parser can clone them cheaply.
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub enum Token {
    /// An identifier (including type names such as `float4`).
    Ident(Rc<str>),
    /// A keyword.
    Keyword(Keyword),
    /// An integer literal as written, with its suffix (`16`, `0xffu`, `1ul`).
    Int(Rc<str>),
    /// A floating-point literal as written, with its suffix (`1.0f`, `2.5h`, `1e-3`).
    Float(Rc<str>),
    /// A string literal's contents, escapes already decoded.
    Str(Rc<str>),
    /// A character literal's value.
    Char(u32),
    /// An operator or punctuation mark.
    Punct(Punct),
    /// The end of a source line. Only the preprocessor sees these; it drops them.
    Newline,
}

impl Token {
    /// The identifier (or keyword) spelling, for the preprocessor, which treats keywords as
    /// names too.
    pub fn name(&self) -> Option<&str> {
        match self {
            Token::Ident(s) => Some(s),
            Token::Keyword(k) => Some(k.as_str()),
            _ => None,
        }
    }
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(s) | Token::Int(s) | Token::Float(s) => f.write_str(s),
            Token::Keyword(k) => f.write_str(k.as_str()),
            Token::Str(s) => write!(f, "{s:?}"),
            Token::Char(c) => match char::from_u32(*c) {
                Some(ch) => write!(f, "{ch:?}"),
                None => write!(f, "'\\x{c:x}'"),
            },
            Token::Punct(p) => f.write_str(p.as_str()),
            Token::Newline => f.write_str("end of line"),
        }
    }
}

/// A token with the span it was written at. For tokens produced by macro expansion, the
/// span is the macro name at the use site, so diagnostics point at the user's code.
#[derive(Clone, PartialEq, Debug)]
pub struct Spanned {
    /// The token.
    pub token: Token,
    /// Where it came from.
    pub span: Span,
    /// Whether whitespace came before it (the preprocessor needs this for `#define F(x)`
    /// versus `#define F (x)` and for stringizing).
    pub space_before: bool,
}
