//! No input makes the lexer, preprocessor or parser panic, overflow the stack or hang:
//! random token soups, random mutations of the fixtures, and pathological nesting and
//! recursion, each of which must end in diagnostics.

use metalsim_frontend::parser::{parse, print_ast};
use metalsim_frontend::preprocess::{PreprocessOptions, preprocess};
use metalsim_frontend::{Diagnostic, SourceMap, Span, has_errors};
use proptest::prelude::*;

/// Runs the preprocessor and the parser on `src`; returns the diagnostics of both.
fn pipeline(src: &str) -> Vec<Diagnostic> {
    let mut sources = SourceMap::new();
    let main = sources.add("fuzz.metal", None, src);
    let (tokens, mut diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
    let (_, parse_diags) = parse(&tokens, Span::new(main, src.len(), src.len()));
    diags.extend(parse_diags);
    diags
}

fn messages(diags: &[Diagnostic]) -> String {
    diags
        .iter()
        .map(|d| d.message.as_str())
        .collect::<Vec<_>>()
        .join("\n")
}

/// Words of MSL, of its preprocessor and of things it rejects.
const VOCAB: &[&str] = &[
    "kernel",
    "void",
    "float",
    "float4",
    "uint",
    "int",
    "half",
    "bool",
    "device",
    "constant",
    "threadgroup",
    "thread",
    "const",
    "static",
    "constexpr",
    "inline",
    "struct",
    "class",
    "typedef",
    "using",
    "namespace",
    "template",
    "typename",
    "enum",
    "union",
    "if",
    "else",
    "for",
    "while",
    "do",
    "switch",
    "case",
    "default",
    "break",
    "continue",
    "return",
    "goto",
    "sizeof",
    "alignof",
    "static_cast",
    "as_type",
    "decltype",
    "auto",
    "unsigned",
    "long",
    "signed",
    "vec",
    "array",
    "atomic",
    "operator",
    "virtual",
    "new",
    "delete",
    "throw",
    "try",
    "catch",
    "true",
    "false",
    "nullptr",
    "this",
    "x",
    "y",
    "S",
    "T",
    "N",
    "metal",
    "0",
    "1",
    "16",
    "0xffu",
    "1.0f",
    ".5",
    "1e-3",
    "2.0h",
    "09",
    "1f",
    "'a'",
    "\"s\"",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "[[",
    "]]",
    "<",
    ">",
    ">>",
    "<<",
    "<=",
    ">=",
    "==",
    "!=",
    ";",
    ",",
    ".",
    "->",
    "::",
    ":",
    "?",
    "=",
    "+=",
    "-=",
    "*=",
    "+",
    "-",
    "*",
    "/",
    "%",
    "&",
    "&&",
    "|",
    "||",
    "^",
    "~",
    "!",
    "++",
    "--",
    "...",
    "\n",
    "\n",
    "\n",
    "#",
    "##",
    "#define",
    "#define F(a, ...)",
    "#define A A",
    "#undef",
    "#if",
    "#ifdef",
    "#ifndef",
    "#elif",
    "#else",
    "#endif",
    "#include",
    "#include <metal_stdlib>",
    "#pragma once",
    "#error",
    "defined",
    "__VA_ARGS__",
    "__LINE__",
    "__attribute__((",
    "F(",
    "A",
    "\\",
    "/*",
    "*/",
    "//",
    "@",
    "buffer(0)",
    "thread_position_in_grid",
];

/// The valid fixtures, the seeds of the mutation test.
const FIXTURES: &[&str] = &[
    include_str!("data/parse/vector_add.metal"),
    include_str!("data/parse/matmul_naive.metal"),
    include_str!("data/parse/matmul_tiled.metal"),
    include_str!("data/parse/parallel_reduce_sum.metal"),
    include_str!("data/parse/adjust_brightness.metal"),
    include_str!("data/parse/thread_positions.metal"),
    include_str!("data/parse/structs_and_constants.metal"),
    include_str!("data/parse/control_flow.metal"),
    include_str!("data/parse/tile_local.metal"),
    include_str!("data/parse/macros.metal"),
    include_str!("data/parse/misc_syntax.metal"),
    include_str!("data/parse/simd_and_atomics.metal"),
];

/// One edit of a source text: what, where (a fraction of the length), how much, and a
/// word to insert.
type Edit = (u8, prop::sample::Index, usize, &'static str, char);

fn apply(src: &str, edits: &[Edit]) -> String {
    let mut s = src.to_string();
    for (kind, at, len, word, ch) in edits {
        let mut pos = at.index(s.len() + 1);
        while !s.is_char_boundary(pos) {
            pos -= 1;
        }
        let mut end = (pos + len).min(s.len());
        while !s.is_char_boundary(end) {
            end += 1;
        }
        match kind % 5 {
            0 => s.replace_range(pos..end, ""),
            1 => s.insert_str(pos, word),
            2 => {
                let piece = s[pos..end].to_string();
                s.insert_str(pos, &piece);
            }
            3 => s.insert(pos, *ch),
            _ => s.replace_range(pos..end, word),
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: 1024,
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn token_soup_never_panics(words in prop::collection::vec(prop::sample::select(VOCAB), 0..160)) {
        pipeline(&words.join(" "));
    }

    #[test]
    fn mutated_fixtures_never_panic(
        which in 0..FIXTURES.len(),
        edits in prop::collection::vec(
            (any::<u8>(), any::<prop::sample::Index>(), 1usize..60, prop::sample::select(VOCAB), any::<char>()),
            1..10,
        ),
    ) {
        pipeline(&apply(FIXTURES[which], &edits));
    }
}

#[test]
fn ten_thousand_nested_parentheses_are_an_error() {
    let src = format!(
        "kernel void k() {{ float x = {}1{}; }}",
        "(".repeat(10_000),
        ")".repeat(10_000)
    );
    let diags = pipeline(&src);
    assert!(messages(&diags).contains("nested too deeply"), "{diags:?}");
}

#[test]
fn ten_thousand_nested_blocks_are_an_error() {
    let src = format!("void f() {}{}", "{".repeat(10_000), "}".repeat(10_001));
    assert!(messages(&pipeline(&src)).contains("nested too deeply"));
}

#[test]
fn nesting_just_under_the_limits_parses_and_prints() {
    for src in [
        format!(
            "kernel void k() {{ float x = {}1{}; }}",
            "(".repeat(250),
            ")".repeat(250)
        ),
        format!("kernel void k() {{ x = a{}; }}", " + a".repeat(1_900)),
        format!("kernel void k() {{ x = {}a; }}", "- ".repeat(1_900)),
        format!("void f() {}x;{}", "{ if (a) ".repeat(120), "}".repeat(120)),
    ] {
        let mut sources = SourceMap::new();
        let main = sources.add("deep.metal", None, src.as_str());
        let (tokens, diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
        assert!(diags.is_empty(), "{diags:?}");
        let (tu, diags) = parse(&tokens, Span::new(main, src.len(), src.len()));
        assert!(diags.is_empty(), "{}", messages(&diags));
        assert!(!print_ast(&tu).is_empty());
    }
}

#[test]
fn unclosed_nesting_is_an_error() {
    let src = format!("void f() {}", "{ if (x) [".repeat(5_000));
    assert!(has_errors(&pipeline(&src)));
}

#[test]
fn long_operator_chains_are_an_error() {
    let src = format!(
        "kernel void k() {{ float x = a{}; }}",
        " + a".repeat(100_000)
    );
    assert!(messages(&pipeline(&src)).contains("too complex"));
    let src = format!("kernel void k() {{ float x = {}a; }}", "- ".repeat(100_000));
    assert!(messages(&pipeline(&src)).contains("too complex"));
    let src = format!("kernel void k() {{ {} x = 1; }}", "if (a) ".repeat(100_000));
    assert!(messages(&pipeline(&src)).contains("too complex"));
    let src = format!("kernel void k() {{ x = a{}; }}", "[0]".repeat(100_000));
    assert!(messages(&pipeline(&src)).contains("too complex"));
    let src = format!("void f() {{ {} }}", "if (a) {} else ".repeat(100_000));
    assert!(messages(&pipeline(&src)).contains("too complex"));
}

#[test]
fn deep_template_arguments_are_an_error() {
    let src = format!("{}int{} x;", "array<".repeat(5_000), ", 1>".repeat(5_000));
    assert!(has_errors(&pipeline(&src)));
}

#[test]
fn many_items_are_fine() {
    let src = "constant int a = 1;\n".repeat(20_000);
    assert!(pipeline(&src).is_empty());
}

#[test]
fn big_initializer_tables_are_fine() {
    let elems = vec!["-1.0f"; 20_000].join(", ");
    let src = format!("constant float T[20000] = {{{elems}}};");
    let diags = pipeline(&src);
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn self_referential_macro_terminates() {
    let diags = pipeline("#define A A\nconstant int x = A;");
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn mutually_recursive_macros_terminate() {
    let diags = pipeline(
        "#define A B + 1\n#define B A * 2\n#define F(x) G(x)\n#define G(x) F(x)\nconstant int x = A + F(1);",
    );
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn exponential_macros_are_cut_off() {
    let mut src = String::from("#define M0 x x\n");
    for i in 1..64 {
        src.push_str(&format!("#define M{i} M{} M{}\n", i - 1, i - 1));
    }
    src.push_str("M63\n");
    assert!(messages(&pipeline(&src)).contains("too many tokens"));
}

#[test]
fn deeply_nested_macro_arguments_are_limited() {
    let src = format!(
        "#define F(x) x\n{}1{}",
        "F(".repeat(5_000),
        ")".repeat(5_000)
    );
    assert!(messages(&pipeline(&src)).contains("nested too deeply"));
}

#[test]
fn deeply_nested_conditionals_are_fine() {
    let src = format!(
        "{}int x;\n{}",
        "#if 1\n".repeat(10_000),
        "#endif\n".repeat(10_000)
    );
    let diags = pipeline(&src);
    assert!(diags.is_empty(), "{diags:?}");
}

#[test]
fn deeply_nested_if_expressions_are_an_error() {
    let src = format!("#if {}1{}\n#endif", "(".repeat(10_000), ")".repeat(10_000));
    assert!(messages(&pipeline(&src)).contains("nested too deeply"));
    let src = format!("#if {}1\n#endif", "- ".repeat(10_000));
    assert!(messages(&pipeline(&src)).contains("nested too deeply"));
}

#[test]
fn self_include_stops_at_the_depth_limit() {
    let dir = std::env::temp_dir().join(format!("metalsim-robust-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("loop.metal");
    let text = "#include \"loop.metal\"\nconstant int x = 1;\n";
    std::fs::write(&path, text).expect("write");
    let mut sources = SourceMap::new();
    let main = sources.add("loop.metal", Some(&path), text);
    let (_, diags) = preprocess(&mut sources, main, &PreprocessOptions::default());
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(diags.len(), 1, "{diags:?}");
    assert!(diags[0].message.contains("nested too deeply"), "{diags:?}");
}
