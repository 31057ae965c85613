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
