//! The whole frontend (preprocess, parse, type-check and lower) on hostile input: it
//! reports errors and never panics, loops or overflows the stack.

use proptest::prelude::*;

const EXAMPLES: [&str; 5] = [
    include_str!("../../examples/vector_add.metal"),
    include_str!("../../examples/matmul_naive.metal"),
    include_str!("../../examples/matmul_tiled.metal"),
    include_str!("../../examples/reduce_sum.metal"),
    include_str!("../../examples/brightness.metal"),
];

fn compile(src: &str) {
    let _ = metalsim_frontend::compile_str("fuzz.metal", src);
}

/// Splits source into rough tokens (words, numbers, single punctuation) with the
/// whitespace kept, so mutations operate on meaningful units.
fn pieces(src: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in src.chars() {
        if c.is_alphanumeric() || c == '_' || c == '.' {
            cur.push(c);
        } else {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            out.push(c.to_string());
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, failure_persistence: None, ..ProptestConfig::default() })]

    /// Deleting, duplicating and swapping tokens of the examples never panics.
    #[test]
    fn mutated_examples(which in 0usize..5, edits in prop::collection::vec((0u8..3, any::<prop::sample::Index>(), any::<prop::sample::Index>()), 1..6)) {
        let mut p = pieces(EXAMPLES[which]);
        for (kind, a, b) in edits {
            if p.is_empty() {
                break;
            }
            let (i, j) = (a.index(p.len()), b.index(p.len()));
            match kind {
                0 => { p.remove(i); }
                1 => { let t = p[i].clone(); p.insert(j, t); }
                _ => p.swap(i, j),
            }
        }
        compile(&p.concat());
    }

    /// Replacing one token of an example with another token from any example (so types,
    /// names and operators land in wrong places) never panics.
    #[test]
    fn transplanted_tokens(which in 0usize..5, from in 0usize..5, a in any::<prop::sample::Index>(), b in any::<prop::sample::Index>()) {
        let mut p = pieces(EXAMPLES[which]);
        let donor = pieces(EXAMPLES[from]);
        let i = a.index(p.len());
        p[i] = donor[b.index(donor.len())].clone();
        compile(&p.concat());
    }
}

#[test]
fn long_expression_chains_lower_without_overflowing_the_stack() {
    // 2000 chained additions: a left-leaning tree 2000 deep.
    let chain = vec!["x"; 2000].join(" + ");
    let src = format!(
        "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ float x = o[i]; o[i] = {chain}; }}"
    );
    let (m, diags, _) = metalsim_frontend::compile_str("deep.metal", &src);
    assert!(m.is_some(), "{diags:?}");
    // Deeply nested parentheses and blocks near the parser's limits.
    let parens = format!("{}x{}", "(".repeat(250), ")".repeat(250));
    let blocks = format!("{}o[i] = x;{}", "{".repeat(200), "}".repeat(200));
    for body in [format!("o[i] = {parens};"), blocks] {
        let src = format!(
            "kernel void k(device float* o [[buffer(0)]], uint i [[thread_position_in_grid]]) {{ float x = 1.0f; {body} }}"
        );
        compile(&src);
    }
}

#[test]
fn recursion_is_refused_not_looped() {
    let src = "int f(int x) { return x <= 0 ? 0 : f(x - 1); }\nkernel void k(device int* o [[buffer(0)]]) { o[0] = f(3); }";
    let (m, diags, sources) = metalsim_frontend::compile_str("rec.metal", src);
    assert!(m.is_none());
    let text = metalsim_frontend::render_short(&diags, &sources);
    assert!(text.contains("recursion"), "{text}");
}

/// Compiles `src`, which must fail; returns the one-line diagnostics.
fn errors_of(src: &str) -> String {
    let (m, diags, sources) = metalsim_frontend::compile_str("limits.metal", src);
    assert!(m.is_none(), "compiled: {src}");
    metalsim_frontend::render_short(&diags, &sources)
}

#[test]
fn exponential_inlining_is_refused_not_waited_for() {
    // Each function calls the one before twice: 2^16 calls in all.
    let mut src = String::from("float f0(float x) { return x + 1; }\n");
    for i in 1..=15 {
        src += &format!(
            "float f{i}(float x) {{ return f{p}(x) + f{p}(x); }}\n",
            p = i - 1
        );
    }
    src += "kernel void k(device float* o [[buffer(0)]]) { o[0] = f15(o[0]); }\n";
    let text = errors_of(&src);
    assert!(text.contains("inlines more than"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn huge_thread_arrays_are_refused() {
    let text = errors_of(
        "kernel void k(device int* o [[buffer(0)]]) { thread int big[1 << 20]; o[0] = big[0]; }",
    );
    assert!(text.contains("holds 1048576 scalars"), "{text}");
}

#[test]
fn runaway_template_recursion_reports_the_depth_limit_once() {
    let text = errors_of(
        "template <int N> struct F { static constexpr int v = F<N - 1>::v + 1; };\n\
         template <> struct F<0> { static constexpr int v = 0; };\n\
         kernel void k(device int* o [[buffer(0)]]) { o[0] = F<100000>::v; }",
    );
    assert!(text.contains("too deeply"), "{text}");
    assert_eq!(text.lines().count(), 1, "{text}");
}

#[test]
fn distinct_instantiations_calling_each_other_are_not_recursion() {
    let src = "template <int N> int g(int x) { return g<N - 1>(x) + g<N - 1>(x); }\n\
               template <> int g<0>(int x) { return x; }\n\
               template <int N> struct F { static constexpr int v = N * F<N - 1>::v; };\n\
               template <> struct F<0> { static constexpr int v = 1; };\n\
               kernel void k(device int* o [[buffer(0)]]) { o[0] = g<3>(o[0]) + F<5>::v; }";
    let (m, diags, sources) = metalsim_frontend::compile_str("inst.metal", src);
    assert!(
        m.is_some(),
        "{}",
        metalsim_frontend::render_short(&diags, &sources)
    );
}
