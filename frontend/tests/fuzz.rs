//! The frontend's fuzz target, on stable Rust: a mutation-based generator (driven by
//! proptest's runner) over the real-world-style kernels of the suite, the examples and the
//! parser fixtures. Each case mutates a kernel (deleting, duplicating, swapping and
//! transplanting tokens, inserting words of MSL, its preprocessor and its templates) and
//! runs the whole frontend on it: preprocessor, parser, type-checking, lowering and the
//! ISA optimizer. Whatever the input, the frontend must end in diagnostics or a module the
//! ISA verifier accepts; a panic, a hang or a stack overflow is a finding.
//!
//! `cargo test` runs a short, deterministic campaign. A longer one, with a fresh random
//! seed: `METALSIM_FUZZ_CASES=100000 cargo test -p metalsim-frontend --test fuzz --
//! --nocapture` (the test prints how many inputs it ran). A stack overflow aborts the
//! process before proptest can report the input: `METALSIM_FUZZ_DUMP=FILE` writes each input
//! to FILE before running it, so FILE then holds the culprit.

use std::cell::Cell;

use proptest::prelude::*;
use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};

/// How many entries of [`CORPUS`] (its first ones) are complete kernels that compile; the
/// rest are parser fixtures (some include files or use constructs lowering refuses).
const COMPILING: usize = 13;

/// The seed inputs: kernels in the styles of MLX, llama.cpp and the tutorials.
const CORPUS: &[&str] = &[
    include_str!("../../tests/suite/elementwise.metal"),
    include_str!("../../tests/suite/gemm.metal"),
    include_str!("../../tests/suite/qmatvec.metal"),
    include_str!("../../tests/suite/softmax.metal"),
    include_str!("../../tests/suite/radix_sort.metal"),
    include_str!("../../tests/suite/image.metal"),
    include_str!("../../tests/suite/matrix.metal"),
    include_str!("../../tests/suite/unions.metal"),
    include_str!("../../tests/suite/compact.metal"),
    include_str!("../../tests/suite/sampling.metal"),
    include_str!("../../tests/suite/cubes.metal"),
    include_str!("../../tests/suite/local_types.metal"),
    include_str!("../../tests/suite/bitfields.metal"),
    include_str!("../../tests/suite/vector_constants.metal"),
    include_str!("../../tests/suite/reduce_ops.metal"),
    include_str!("../../examples/matmul_tiled.metal"),
    include_str!("../../examples/reduce_sum.metal"),
    include_str!("data/parse/llama_style.metal"),
    include_str!("data/parse/macros.metal"),
    include_str!("data/parse/misc_syntax.metal"),
    include_str!("data/parse/structs_and_constants.metal"),
    include_str!("data/parse/simd_and_atomics.metal"),
];

/// Words inserted by mutations: pieces of templates, macros, attributes and declarations
/// that land the input in the frontend's less travelled paths.
const WORDS: &[&str] = &[
    "template <typename T>",
    "template <>",
    "texturecube_array<float>",
    "texture2d_ms<uint>",
    ".gather(",
    "component::w",
    "template <int N, typename... Ts>",
    "template <float (*F)(float)>",
    ".template f<float>(",
    "apply<&f>",
    "typename",
    "<",
    ">",
    ">>",
    "::",
    "...",
    "sizeof...(Ts)",
    "decltype(",
    "auto",
    "constexpr",
    "if constexpr (",
    "static_assert(",
    "enable_if_t<",
    "is_same_v<T, float>",
    "#define M(x, ...) x ## __VA_ARGS__ #x\n",
    "\n#if defined(X) && X > 1\n",
    "\n#else\n",
    "\n#endif\n",
    "\n#undef M\n",
    "[[host_name(\"k\")]]",
    "[[kernel]]",
    "[[buffer(0)]]",
    "[[function_constant(0)]]",
    "[[thread_position_in_grid]]",
    "template [[host_name(\"i\")]] [[kernel]] decltype(f<float>) f<float>;",
    "struct S { float x; S() : x(0) {} float operator()(float y) const { return x + y; } };",
    "struct B { uint k : 4; int s : 5; ushort : 0; uchar t : 3; };",
    " : 3",
    "using T = half;",
    "namespace n {",
    "}",
    "{",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    "operator",
    "this",
    "simdgroup_float8x8",
    "simd_sum(",
    "as_type<uint>(",
    "static_cast<int>(",
    "threadgroup",
    "device",
    "constant",
    "thread",
    "array<float, 4>",
    "vec<half, 3>",
    "packed_float3",
    "bfloat",
    "numeric_limits<float>::max()",
    "float4x4",
    "half3x2(",
    "matrix<float, 3, 2>",
    "transpose(",
    "determinant(",
    "union { uint u; float f; };",
    "union U { uint u; float f; } ",
    "struct { half d; half m; };",
    "namespace a = ",
    "simd_ballot(",
    ".all()",
    "simd_vote::vote_t",
    "-1",
    "0x7fffffff",
    "1e39f",
    "'",
    "\"",
    "\\",
    "/*",
    "//",
];

/// Splits source into rough tokens (words, numbers, single other characters), keeping
/// whitespace as tokens so the result re-joins into similar text.
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

/// One mutation: its kind, two positions and a word.
type Mutation = (u8, prop::sample::Index, prop::sample::Index, &'static str);

/// Applies `mutations` to the tokens of corpus entry `which`, with `donor` as the source
/// of transplanted tokens and ranges.
fn mutate(which: usize, donor: usize, mutations: &[Mutation]) -> String {
    let mut p = pieces(CORPUS[which]);
    let d = pieces(CORPUS[donor]);
    for (kind, a, b, word) in mutations {
        if p.is_empty() {
            p.push(word.to_string());
            continue;
        }
        let (i, j) = (a.index(p.len()), b.index(p.len()));
        match kind % 6 {
            0 => {
                let (lo, hi) = (i.min(j), i.max(j).min(i.min(j) + 40));
                p.drain(lo..hi.max(lo + 1).min(p.len()));
            }
            1 => {
                let t = p[i].clone();
                p.insert(j, t);
            }
            2 => p.swap(i, j),
            3 => p.insert(i, format!(" {word} ")),
            4 => p[i] = d[b.index(d.len())].clone(),
            _ => {
                // Splice a run of the donor's tokens in.
                let start = b.index(d.len());
                let run: Vec<String> = d[start..(start + 30).min(d.len())].to_vec();
                p.splice(i..i, run);
            }
        }
    }
    p.concat()
}

/// Runs the whole frontend on `src`; a module it returns must pass the ISA verifier.
/// Returns whether it compiled to a module.
fn compile_and_verify(src: &str) -> Result<bool, TestCaseError> {
    let (module, _diags, _sources) = metalsim_frontend::compile_str("fuzz.metal", src);
    if let Some(m) = &module {
        for f in &m.functions {
            if let Err(e) = metalsim_isa::verify_function(f, m.data.len()) {
                return Err(TestCaseError::fail(format!(
                    "kernel `{}` fails verification: {e}\n--- input ---\n{src}",
                    f.name
                )));
            }
        }
    }
    Ok(module.is_some())
}

#[test]
fn mutated_real_world_kernels_end_in_diagnostics_or_verified_modules() {
    let given = std::env::var("METALSIM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse::<u32>().ok());
    let config = Config {
        cases: given.unwrap_or(384),
        failure_persistence: None,
        max_shrink_iters: 200,
        ..Config::default()
    };
    // The short campaign of `cargo test` is reproducible; a long one explores afresh.
    let mut runner = match given {
        Some(_) => TestRunner::new(config),
        None => TestRunner::new_with_rng(config, TestRng::deterministic_rng(RngAlgorithm::ChaCha)),
    };
    let strategy = (
        0..CORPUS.len(),
        0..CORPUS.len(),
        prop::collection::vec(
            (
                any::<u8>(),
                any::<prop::sample::Index>(),
                any::<prop::sample::Index>(),
                prop::sample::select(WORDS),
            ),
            1..4,
        ),
    );
    let (executions, compiled) = (Cell::new(0u64), Cell::new(0u64));
    let result = runner.run(&strategy, |(which, donor, mutations)| {
        executions.set(executions.get() + 1);
        let src = mutate(which, donor, &mutations);
        if let Ok(path) = std::env::var("METALSIM_FUZZ_DUMP") {
            std::fs::write(path, &src).unwrap();
        }
        let ok = compile_and_verify(&src)?;
        compiled.set(compiled.get() + u64::from(ok));
        Ok(())
    });
    eprintln!(
        "fuzz: {} inputs run through the frontend, {} of them compiled to verified modules",
        executions.get(),
        compiled.get()
    );
    if let Err(e) = result {
        panic!("{e}");
    }
}

#[test]
fn every_corpus_kernel_compiles_unmutated() {
    // The mutations start from valid kernels, so they reach lowering and the optimizer.
    for (i, src) in CORPUS.iter().enumerate() {
        let (module, diags, sources) = metalsim_frontend::compile_str("corpus.metal", src);
        assert!(
            module.is_some() || i >= COMPILING,
            "corpus entry {i}: {}",
            metalsim_frontend::render(&diags, &sources, false)
        );
    }
}
