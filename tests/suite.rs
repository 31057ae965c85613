//! The kernel suite: kernels of our own in the styles of MLX, llama.cpp and candle
//! (`tests/suite/*.metal`), each compiled with its launch spec and run on the simulator,
//! its outputs checked against a CPU reference computed here. `tests/suite/wrong/` holds
//! wrong kernels whose diagnostics are snapshots.

mod common;

use common::{f16s, f32s, i32s, run_specialized};

/// A spec: the kernel, the grid in threads, the threadgroup size, then buffer tables and
/// any other TOML.
fn spec(kernel: &str, threads: [u32; 3], tg: [u32; 3], rest: &str) -> String {
    format!("kernel = \"{kernel}\"\nthreads = {threads:?}\nthreadgroup = {tg:?}\n{rest}")
}

/// A `[[buffer]]` table.
fn buffer(index: u32, name: &str, ty: &str, count: u64, init: &str, output: bool) -> String {
    let init = if init.is_empty() {
        String::new()
    } else {
        format!("init = {init}\n")
    };
    format!(
        "[[buffer]]\nindex = {index}\nname = \"{name}\"\ntype = \"{ty}\"\ncount = {count}\n{init}output = {output}\n"
    )
}

fn random(seed: u64, min: f64, max: f64) -> String {
    format!("{{ random = \"uniform\", min = {min}, max = {max}, seed = {seed} }}")
}

/// Asserts two float slices agree within a relative-and-absolute tolerance.
fn assert_close(got: &[f32], want: &[f32], tol: f32, what: &str) {
    assert_eq!(got.len(), want.len(), "{what}: lengths");
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let err = (g - w).abs();
        assert!(
            err <= tol * (1.0 + w.abs()),
            "{what}: element {i}: got {g}, want {w}"
        );
    }
}

const ELEMENTWISE: &str = "tests/suite/elementwise.metal";

#[test]
fn elementwise_binary_kernels_for_every_type() {
    let n = 1000u64;
    let threads = (n as u32).div_ceil(4);
    for (kernel, ty) in [
        ("vv_addfloat32", "float"),
        ("vv_maximumfloat32", "float"),
        ("vv_mulfloat16", "half"),
        ("vv_addint32", "int"),
        ("vv_muluint8", "uchar"),
    ] {
        let (lo, hi) = match ty {
            "int" => (-1000.0, 1000.0),
            "uchar" => (0.0, 255.0),
            _ => (-4.0, 4.0),
        };
        let rest = buffer(0, "a", ty, n, &random(1, lo, hi), false)
            + &buffer(1, "b", ty, n, &random(2, lo, hi), false)
            + &buffer(2, "out", ty, n, "", true)
            + &buffer(
                3,
                "size",
                "uint",
                1,
                &format!("{{ values = [{n}] }}"),
                false,
            );
        let (launch, out) = run_specialized(
            ELEMENTWISE,
            &spec(kernel, [threads, 1, 1], [64, 1, 1], &rest),
        );
        let (a, b) = (&launch.buffers[0].bytes, &launch.buffers[1].bytes);
        let got = &out.buffers[2];
        match ty {
            "float" => {
                let (a, b) = (f32s(a), f32s(b));
                let want: Vec<f32> = a
                    .iter()
                    .zip(&b)
                    .map(|(x, y)| {
                        if kernel.contains("add") {
                            x + y
                        } else {
                            x.max(*y)
                        }
                    })
                    .collect();
                assert_eq!(f32s(got), want, "{kernel}");
            }
            "half" => {
                let want: Vec<f32> = f16s(a)
                    .iter()
                    .zip(f16s(b))
                    .map(|(x, y)| half::f16::from_f32(x * y).to_f32())
                    .collect();
                assert_eq!(f16s(got), want, "{kernel}");
            }
            "int" => {
                let want: Vec<i32> = i32s(a).iter().zip(i32s(b)).map(|(x, y)| x + y).collect();
                assert_eq!(i32s(got), want, "{kernel}");
            }
            _ => {
                let want: Vec<u8> = a.iter().zip(b).map(|(x, y)| x.wrapping_mul(*y)).collect();
                assert_eq!(got, &want, "{kernel}");
            }
        }
    }
}

#[test]
fn elementwise_unary_kernels() {
    let n = 300u64;
    for kernel in [
        "square_float32",
        "sigmoid_float32",
        "sigmoid_float16",
        "abs_int32",
    ] {
        let ty = match kernel {
            "sigmoid_float16" => "half",
            "abs_int32" => "int",
            _ => "float",
        };
        let rest = buffer(0, "in", ty, n, &random(7, -6.0, 6.0), false)
            + &buffer(1, "out", ty, n, "", true)
            + &buffer(
                2,
                "size",
                "uint",
                1,
                &format!("{{ values = [{n}] }}"),
                false,
            );
        let (launch, out) = run_specialized(
            ELEMENTWISE,
            &spec(kernel, [n as u32, 1, 1], [32, 1, 1], &rest),
        );
        let input = &launch.buffers[0].bytes;
        match kernel {
            "square_float32" => {
                let want: Vec<f32> = f32s(input).iter().map(|x| x * x).collect();
                assert_eq!(f32s(&out.buffers[1]), want);
            }
            "sigmoid_float32" => {
                let want: Vec<f32> = f32s(input)
                    .iter()
                    .map(|x| 1.0 / (1.0 + (-x).exp()))
                    .collect();
                assert_close(&f32s(&out.buffers[1]), &want, 1e-5, kernel);
            }
            "sigmoid_float16" => {
                let want: Vec<f32> = f16s(input)
                    .iter()
                    .map(|x| 1.0 / (1.0 + (-x).exp()))
                    .collect();
                assert_close(&f16s(&out.buffers[1]), &want, 4e-3, kernel);
            }
            _ => {
                let want: Vec<i32> = i32s(input).iter().map(|x| x.abs()).collect();
                assert_eq!(i32s(&out.buffers[1]), want);
            }
        }
    }
}

const GEMM: &str = "tests/suite/gemm.metal";

/// Runs a GEMM kernel on M x K by K x N random matrices and checks C against a CPU
/// product.
fn check_gemm(kernel: &str, ty: &str, (m, n, k): (u32, u32, u32), (bm, bn): (u32, u32), tg: u32) {
    let rest = buffer(0, "A", ty, (m * k) as u64, &random(11, -1.0, 1.0), false)
        + &buffer(1, "B", ty, (k * n) as u64, &random(12, -1.0, 1.0), false)
        + &buffer(2, "C", ty, (m * n) as u64, "", true)
        + &buffer(
            3,
            "params",
            "int",
            3,
            &format!("{{ values = [{m}, {n}, {k}] }}"),
            false,
        );
    let grid = [n.div_ceil(bn) * tg, m.div_ceil(bm), 1];
    let (launch, out) = run_specialized(GEMM, &spec(kernel, grid, [tg, 1, 1], &rest));
    let read = |b: &[u8]| if ty == "half" { f16s(b) } else { f32s(b) };
    let (a, b) = (
        read(&launch.buffers[0].bytes),
        read(&launch.buffers[1].bytes),
    );
    let mut want = vec![0f32; (m * n) as usize];
    for i in 0..m as usize {
        for j in 0..n as usize {
            let mut s = 0f32;
            for p in 0..k as usize {
                s += a[i * k as usize + p] * b[p * n as usize + j];
            }
            want[i * n as usize + j] = s;
        }
    }
    let tol = if ty == "half" { 1e-2 } else { 1e-5 };
    assert_close(&read(&out.buffers[2]), &want, tol, kernel);
}

#[test]
fn gemm_with_simdgroup_matrices_and_threadgroup_tiles() {
    // Sizes that are not multiples of the tiles exercise the loader's bounds checks.
    check_gemm("gemm_float32_32x32", "float", (70, 45, 37), (32, 32), 128);
    check_gemm("gemm_float32_16x16", "float", (16, 24, 8), (16, 16), 32);
    check_gemm("gemm_float16_32x32", "half", (32, 40, 48), (32, 32), 128);
}

/// The kernel names `metalsim check --list-kernels FILE` prints (its unindented lines).
fn listed_kernels(file: &str) -> Vec<String> {
    listed_kernels_with(file, &[])
}

/// [`listed_kernels`] with more command-line arguments.
fn listed_kernels_with(file: &str, args: &[&str]) -> Vec<String> {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_metalsim"))
        .current_dir(common::root())
        .args(["check", "--list-kernels", file])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .filter(|l| !l.starts_with(' '))
        .map(str::to_string)
        .collect()
}

#[test]
fn list_kernels_prints_exactly_the_host_names_the_macros_instantiate() {
    let mut want = vec![
        "square_float32".to_string(),
        "square_float16".into(),
        "sigmoid_float32".into(),
        "sigmoid_float16".into(),
        "abs_int32".into(),
    ];
    for op in ["add", "maximum", "mul"] {
        for t in ["float32", "float16", "int32", "uint8"] {
            want.push(format!("vv_{op}{t}"));
        }
    }
    assert_eq!(listed_kernels(ELEMENTWISE), want);
    assert_eq!(
        listed_kernels(GEMM),
        [
            "gemm_float32_32x32",
            "gemm_float16_32x32",
            "gemm_float32_16x16"
        ]
    );
    assert_eq!(
        listed_kernels(QMATVEC),
        ["kernel_mul_mv_q4_0_f32", "kernel_mul_mv_q8_0_f32"]
    );
    assert_eq!(
        listed_kernels(SOFTMAX),
        ["softmax_looped_float32", "softmax_looped_float16"]
    );
    assert_eq!(
        listed_kernels(RADIX_SORT),
        [
            "block_radix_sort_uint32_128",
            "block_radix_sort_int32_256",
            "block_radix_sort_float32_64"
        ]
    );
}

const QMATVEC: &str = "tests/suite/qmatvec.metal";

/// A deterministic stream of bytes for quantized weights.
fn lcg_bytes(seed: u64, n: usize) -> Vec<u8> {
    let mut s = seed;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as u8
        })
        .collect()
}

/// Builds `rows` x `cols` weights as `bytes_per_block`-byte blocks (a half scale, then
/// `quant_bytes` of quants) and checks the kernel's product with random `y`.
fn check_qmatvec(kernel: &str, rows: usize, cols: usize, quant_bytes: usize) {
    let nb = cols / 32;
    let block = 2 + quant_bytes;
    let mut w = Vec::with_capacity(rows * nb * block);
    let quants = lcg_bytes(kernel.len() as u64, rows * nb * quant_bytes);
    for b in 0..rows * nb {
        let d = half::f16::from_f32(0.01 + 0.003 * (b % 7) as f32);
        w.extend_from_slice(&d.to_le_bytes());
        w.extend_from_slice(&quants[b * quant_bytes..(b + 1) * quant_bytes]);
    }
    let _values: Vec<String> = w.iter().map(|b| b.to_string()).collect();
    let values: Vec<String> = w.iter().map(|b| (*b as i8).to_string()).collect();
    let rest = buffer(
        0,
        "src0",
        "char",
        w.len() as u64,
        &format!("{{ values = [{}] }}", values.join(", ")),
        false,
    ) + &buffer(
        1,
        "src1",
        "float",
        cols as u64,
        &random(5, -1.0, 1.0),
        false,
    ) + &buffer(2, "dst", "float", rows as u64, "", true)
        + &buffer(
            3,
            "args",
            "int",
            2,
            &format!("{{ values = [{cols}, {rows}] }}"),
            false,
        );
    let tgs = rows.div_ceil(8) as u32;
    let (launch, out) =
        run_specialized(QMATVEC, &spec(kernel, [tgs * 64, 1, 1], [64, 1, 1], &rest));
    let y = f32s(&launch.buffers[1].bytes);
    let mut want = vec![0f32; rows];
    for (r, wr) in want.iter_mut().enumerate() {
        let mut sum = 0f32;
        for ib in 0..nb {
            let blk = &w[(r * nb + ib) * block..][..block];
            let d = half::f16::from_le_bytes([blk[0], blk[1]]).to_f32();
            let q = &blk[2..];
            let mut acc = 0f32;
            for j in 0..32 {
                let v = if quant_bytes == 16 {
                    let byte = q[j % 16];
                    (if j < 16 { byte & 0x0f } else { byte >> 4 }) as f32 - 8.0
                } else {
                    q[j] as i8 as f32
                };
                acc += y[ib * 32 + j] * v;
            }
            sum += d * acc;
        }
        *wr = sum;
    }
    assert_close(&f32s(&out.buffers[2]), &want, 1e-4, kernel);
}

#[test]
fn quantized_matvec_with_block_structs_and_as_type() {
    check_qmatvec("kernel_mul_mv_q4_0_f32", 10, 96, 16);
    check_qmatvec("kernel_mul_mv_q8_0_f32", 13, 64, 32);
}

const SOFTMAX: &str = "tests/suite/softmax.metal";

/// Runs a row softmax over `rows` x `cols` random values with `tg` threads per row; with
/// `constants` (the spec's `[constants]` table) and a mask buffer when it sets `has_mask`.
fn check_softmax(kernel: &str, ty: &str, (rows, cols): (u32, u32), tg: u32, constants: &str) {
    let n = (rows * cols) as u64;
    let masked = constants.contains("has_mask = true");
    let scale: f32 = constants
        .lines()
        .find_map(|l| l.strip_prefix("scale_given = "))
        .map_or(1.0, |v| v.parse().unwrap());
    let mut rest = buffer(0, "in", ty, n, &random(21, -3.0, 3.0), false)
        + &buffer(1, "out", ty, n, "", true)
        + &buffer(
            2,
            "axis",
            "int",
            1,
            &format!("{{ values = [{cols}] }}"),
            false,
        );
    if masked {
        rest += &buffer(3, "mask", ty, n, &random(22, -1.0, 0.0), false);
    }
    rest += "[[threadgroup_memory]]\nindex = 0\nbytes = 128\n";
    rest += constants;
    let (launch, out) =
        run_specialized(SOFTMAX, &spec(kernel, [rows * tg, 1, 1], [tg, 1, 1], &rest));
    let read = |b: &[u8]| if ty == "half" { f16s(b) } else { f32s(b) };
    let x = read(&launch.buffers[0].bytes);
    let mask = masked.then(|| read(&launch.buffers[3].bytes));
    let mut want = Vec::with_capacity(n as usize);
    for r in 0..rows as usize {
        let row: Vec<f32> = (0..cols as usize)
            .map(|c| {
                let i = r * cols as usize + c;
                x[i] * scale + mask.as_ref().map_or(0.0, |m| m[i])
            })
            .collect();
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = row.iter().map(|v| (v - max).exp()).sum();
        want.extend(row.iter().map(|v| (v - max).exp() / sum));
    }
    let tol = if ty == "half" { 2e-3 } else { 1e-5 };
    assert_close(&read(&out.buffers[1]), &want, tol, kernel);
}

#[test]
fn softmax_with_simd_reductions_and_function_constants() {
    // No constants set: no mask, scale 1.
    check_softmax("softmax_looped_float32", "float", (3, 1000), 256, "");
    check_softmax(
        "softmax_looped_float32",
        "float",
        (2, 77),
        64,
        "[constants]\nhas_mask = true\nscale_given = 0.5\n",
    );
    check_softmax(
        "softmax_looped_float16",
        "half",
        (2, 300),
        128,
        "[constants]\nhas_mask = false\n",
    );
}

#[test]
fn wrong_kernels_report_every_problem_at_its_source() {
    insta::glob!("suite/wrong/*.metal", |path| {
        let text = std::fs::read_to_string(path).unwrap();
        let name = format!(
            "tests/suite/wrong/{}",
            path.file_name().unwrap().to_string_lossy()
        );
        let mut sources = metalsim_frontend::SourceMap::new();
        let id = sources.add(name, Some(path), text);
        let (module, diags) = metalsim_frontend::compile(
            &mut sources,
            id,
            &metalsim_frontend::CompileOptions::default(),
        );
        assert!(module.is_none(), "{} compiled", path.display());
        insta::assert_snapshot!(metalsim_frontend::render(&diags, &sources, false));
    });
}

const RADIX_SORT: &str = "tests/suite/radix_sort.metal";

/// Sorts `n` random keys in blocks of `block` with `kernel` and checks each block against
/// a CPU sort of the same keys.
fn check_block_sort(kernel: &str, ty: &str, n: u32, block: u32, (lo, hi): (f64, f64)) {
    let rest = buffer(0, "in", ty, n as u64, &random(31, lo, hi), false)
        + &buffer(1, "out", ty, n as u64, "", true)
        + &buffer(2, "n", "uint", 1, &format!("{{ values = [{n}] }}"), false);
    let threads = n.div_ceil(block) * block;
    let (launch, out) = run_specialized(
        RADIX_SORT,
        &spec(kernel, [threads, 1, 1], [block, 1, 1], &rest),
    );
    let (input, got) = (&launch.buffers[0].bytes, &out.buffers[1]);
    let chunk = block as usize;
    match ty {
        "float" => {
            let mut want = f32s(input);
            want.chunks_mut(chunk)
                .for_each(|c| c.sort_by(|a, b| a.total_cmp(b)));
            assert_eq!(f32s(got), want, "{kernel}");
        }
        "int" => {
            let mut want = i32s(input);
            want.chunks_mut(chunk).for_each(|c| c.sort());
            assert_eq!(i32s(got), want, "{kernel}");
        }
        _ => {
            let mut want = common::u32s(input);
            want.chunks_mut(chunk).for_each(|c| c.sort());
            assert_eq!(common::u32s(got), want, "{kernel}");
        }
    }
}

#[test]
fn block_radix_sort_with_simd_prefix_sums() {
    check_block_sort("block_radix_sort_uint32_128", "uint", 300, 128, (0.0, 4e9));
    check_block_sort("block_radix_sort_int32_256", "int", 256, 256, (-2e9, 2e9));
    check_block_sort("block_radix_sort_float32_64", "float", 100, 64, (-1e3, 1e3));
}

#[test]
fn metal_version_and_defines_select_preprocessor_branches() {
    let path = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("versioned.metal");
    std::fs::write(
        &path,
        "#if __METAL_VERSION__ >= 310 && defined(__HAVE_BFLOAT__)\n#define NAME(x) x##_metal31\n\
         #else\n#define NAME(x) x##_older\n#endif\n#ifdef EXTRA\n#define SUFFIX _extra\n\
         #else\n#define SUFFIX\n#endif\n#define CAT2(a, b) a##b\n#define CAT(a, b) CAT2(a, b)\n\
         kernel void CAT(NAME(k), SUFFIX)(device float* o [[buffer(0)]]) { o[0] = 1; }\n",
    )
    .unwrap();
    let file = path.to_str().unwrap();
    assert_eq!(listed_kernels(file), ["k_metal31"]);
    assert_eq!(
        listed_kernels_with(file, &["--metal-version", "3.0"]),
        ["k_older"]
    );
    assert_eq!(
        listed_kernels_with(file, &["--metal-version", "320", "-D", "EXTRA"]),
        ["k_metal31_extra"]
    );
}

#[test]
fn kernel_template_instantiated_from_the_launch_spec() {
    // `softmax_looped` has no instantiation with these arguments: the spec's `template`
    // table makes one (T = half, N_READS = 2).
    let (rows, cols) = (2u32, 100u32);
    let n = (rows * cols) as u64;
    let text = format!(
        "kernel = \"softmax_looped\"\ntemplate = {{ T = \"half\", N_READS = 2 }}\n\
         threads = [{}, 1, 1]\nthreadgroup = [64, 1, 1]\n{}{}{}[[threadgroup_memory]]\nindex = 0\nbytes = 128\n",
        rows * 64,
        buffer(0, "in", "half", n, &random(41, -2.0, 2.0), false),
        buffer(1, "out", "half", n, "", true),
        buffer(
            2,
            "axis",
            "int",
            1,
            &format!("{{ values = [{cols}] }}"),
            false
        ),
    );
    let (launch, out) = run_specialized(SOFTMAX, &text);
    let x = f16s(&launch.buffers[0].bytes);
    let mut want = Vec::with_capacity(n as usize);
    for row in x.chunks(cols as usize) {
        let max = row.iter().copied().fold(f32::NEG_INFINITY, f32::max);
        let sum: f32 = row.iter().map(|v| (v - max).exp()).sum();
        want.extend(row.iter().map(|v| (v - max).exp() / sum));
    }
    assert_close(
        &f16s(&out.buffers[1]),
        &want,
        2e-3,
        "softmax_looped<half, 2>",
    );
}
