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
    assert_eq!(
        listed_kernels(MATRIX),
        [
            "transform_points",
            "compose_float32",
            "compose_float16",
            "mixed_shapes"
        ]
    );
    assert_eq!(
        listed_kernels(COMPACT),
        ["compact_float32_128", "compact_int32_64"]
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

const IMAGE: &str = "tests/suite/image.metal";

/// A `[[texture]]` table; `size` is TOML keys such as `width = 4`.
fn texture(index: u32, name: &str, format: &str, size: &str, init: &str, output: bool) -> String {
    let init = if init.is_empty() {
        String::new()
    } else {
        format!("init = {init}\n")
    };
    format!(
        "[[texture]]\nindex = {index}\nname = \"{name}\"\nformat = \"{format}\"\n{size}\n{init}output = {output}\n"
    )
}

/// The texels of a texture's buffer (after its 16-byte header of sizes and format).
fn texels(bytes: &[u8]) -> &[u8] {
    &bytes[16..]
}

/// Writes the outputs of a run to a fresh folder and reads `<name>.npy` back as `ty`s.
fn texture_output(
    launch: &metalsim_launch::Launch,
    out: &[Vec<u8>],
    name: &str,
    ty: &str,
) -> Vec<u8> {
    // Tests run on parallel threads of one process and several name their output `out`.
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir =
        std::env::temp_dir().join(format!("metalsim-suite-{}-{n}-{name}", std::process::id()));
    metalsim_launch::write_outputs(launch, out, &dir).unwrap();
    let elem = metalsim_launch::ElemType::from_msl_name(ty).unwrap();
    let (_, bytes) = metalsim_launch::read_npy(&dir.join(format!("{name}.npy")), elem).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    bytes
}

#[test]
fn luminance_of_an_rgba8unorm_image_into_an_r32float_texture() {
    let (w, h) = (37u32, 19u32);
    let size = format!("width = {w}\nheight = {h}");
    let rest = texture(0, "src", "rgba8unorm", &size, &random(5, 0.0, 255.0), false)
        + &texture(1, "luma", "r32float", &size, "", true);
    let (launch, out) = run_specialized(IMAGE, &spec("luminance", [w, h, 1], [8, 8, 1], &rest));
    let src = f32s(texels(&launch.buffers[0].bytes));
    assert_eq!(src.len(), (w * h * 4) as usize);
    // rgba8unorm reads as c / 255 (MSL spec table 31), alpha included.
    for &c in &src {
        let k = (c * 255.0).round();
        assert_eq!(c, k / 255.0, "{c} is not an 8-bit unorm value");
    }
    let want: Vec<f32> = src
        .chunks_exact(4)
        .map(|p| p[0] * 0.2126 + p[1] * 0.7152 + p[2] * 0.0722)
        .collect();
    let got = f32s(&texture_output(&launch, &out.buffers, "luma", "float"));
    assert_close(&got, &want, 1e-6, "luminance");
}

/// One pass of the blur on the CPU: texels of half4 in, quantized to rgba8unorm out.
fn blur_reference(src: &[f32], (w, h): (i32, i32), weights: &[f32], horizontal: bool) -> Vec<u8> {
    let r = (weights.len() / 2) as i32;
    let mut out = Vec::new();
    for y in 0..h {
        for x in 0..w {
            for c in 0..4 {
                let mut acc = 0.0f32;
                for i in -r..=r {
                    let (px, py) = if horizontal { (x + i, y) } else { (x, y + i) };
                    let (px, py) = (px.clamp(0, w - 1), py.clamp(0, h - 1));
                    acc += weights[(i + r) as usize] * src[((py * w + px) * 4 + c) as usize];
                }
                let v = half::f16::from_f32(acc).to_f32();
                out.push((v.clamp(0.0, 1.0) * 255.0).round_ties_even() as u8);
            }
        }
    }
    out
}

#[test]
fn separable_blur_between_rgba8unorm_textures_read_as_half() {
    let (w, h) = (24i32, 10i32);
    let weights = [0.0625f32, 0.25, 0.375, 0.25, 0.0625];
    let size = format!("width = {w}\nheight = {h}");
    for (kernel, horizontal) in [("blur_h", true), ("blur_v", false)] {
        let rest = texture(0, "src", "rgba8unorm", &size, &random(9, 0.0, 255.0), false)
            + &texture(1, "dst", "rgba8unorm", &size, "", true)
            + &buffer(
                0,
                "weights",
                "float",
                5,
                &format!("{{ values = {weights:?} }}"),
                false,
            )
            + &buffer(1, "radius", "int", 1, "{ values = [2] }", false);
        let (launch, out) = run_specialized(
            IMAGE,
            &spec(kernel, [w as u32, h as u32, 1], [8, 4, 1], &rest),
        );
        let src = f16s(texels(&launch.buffers[2].bytes));
        let want = blur_reference(&src, (w, h), &weights, horizontal);
        let got = texture_output(&launch, &out.buffers, "dst", "uchar");
        assert_eq!(got.len(), want.len());
        for (i, (g, v)) in got.iter().zip(&want).enumerate() {
            // The sum may round differently in the last bit (FMA contraction).
            assert!(
                g.abs_diff(*v) <= 1,
                "{kernel}: channel {i}: got {g}, want {v}"
            );
        }
    }
}

#[test]
fn volume_updated_in_place_through_a_read_write_3d_texture() {
    let size = "width = 5\nheight = 3\ndepth = 2";
    let rest = texture(0, "vol", "r16uint", size, &random(3, 0.0, 40000.0), true);
    let (launch, out) = run_specialized(IMAGE, &spec("volume_step", [5, 3, 2], [4, 4, 2], &rest));
    let before: Vec<u32> = i32s(texels(&launch.buffers[0].bytes))
        .chunks_exact(4)
        .map(|t| t[0] as u32)
        .collect();
    let got = texture_output(&launch, &out.buffers, "vol", "ushort");
    let got: Vec<u32> = got
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]) as u32)
        .collect();
    // Writes to a 16-bit integer format saturate (MSL spec table 33).
    let want: Vec<u32> = before.iter().map(|v| (v * 2 + 1).min(65535)).collect();
    assert_eq!(got, want);
    assert!(
        before.iter().any(|&v| v * 2 + 1 > 65535),
        "no value saturates"
    );
}

#[test]
fn lookup_through_a_1d_texture_and_a_fault_outside_it() {
    let table: Vec<i32> = (0..16).map(|i| i * i - 50).collect();
    let keys = [3u32, 0, 15, 7, 7, 1, 9, 12];
    let rest = |keys: &[u32]| {
        texture(
            2,
            "table",
            "r32sint",
            "width = 16",
            &format!("{{ values = {table:?} }}"),
            false,
        ) + &buffer(
            0,
            "keys",
            "uint",
            keys.len() as u64,
            &format!("{{ values = {keys:?} }}"),
            false,
        ) + &buffer(1, "out", "int", keys.len() as u64, "", true)
    };
    let (_, out) = run_specialized(IMAGE, &spec("lookup", [8, 1, 1], [8, 1, 1], &rest(&keys)));
    let want: Vec<i32> = keys.iter().map(|&k| table[k as usize]).collect();
    assert_eq!(i32s(&out.buffers[1]), want);

    let source = std::fs::read_to_string(common::root().join(IMAGE)).unwrap();
    let bad = [3u32, 16, 0, 0, 0, 0, 0, 0];
    let (_, out) = common::run_source(&source, &spec("lookup", [8, 1, 1], [8, 1, 1], &rest(&bad)));
    let fault = out.fault.expect("reading texel 16 of 16 faults");
    assert!(fault.message.contains("`table`"), "{}", fault.message);
    assert_eq!(fault.thread, [1, 0, 0]);
    // At the user's `table.read(...)` line, not inside the standard library.
    assert!(
        fault.location.starts_with("test.metal:59:"),
        "{}",
        fault.location
    );
}

#[test]
fn list_kernels_shows_texture_bindings() {
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_metalsim"))
        .current_dir(common::root())
        .args(["check", "--list-kernels", IMAGE])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let want = "luminance\n  \
        [[texture(0)]] src : texture2d<float, access::read>\n  \
        [[texture(1)]] dst : texture2d<float, access::write>\n\
        blur_h\n  \
        [[texture(0)]] src : texture2d<half, access::read>\n  \
        [[texture(1)]] dst : texture2d<half, access::write>\n  \
        [[buffer(0)]] weights : constant float*\n  \
        [[buffer(1)]] radius : constant int&\n";
    assert!(text.starts_with(want), "{text}");
    assert!(
        text.contains("lookup\n  [[texture(2)]] table : texture1d<int, access::read>\n"),
        "{text}"
    );
    assert!(
        text.contains("volume_step\n  [[texture(0)]] vol : texture3d<uint, access::read_write>\n"),
        "{text}"
    );
}

const MATRIX: &str = "tests/suite/matrix.metal";

/// A column-major `cols` x `rows` matrix times a column vector.
fn mat_vec(m: &[f32], (cols, rows): (usize, usize), v: &[f32]) -> Vec<f32> {
    (0..rows)
        .map(|r| (0..cols).map(|c| m[c * rows + r] * v[c]).sum())
        .collect()
}

/// A row vector times a column-major `cols` x `rows` matrix.
fn vec_mat(v: &[f32], m: &[f32], (cols, rows): (usize, usize)) -> Vec<f32> {
    (0..cols)
        .map(|c| (0..rows).map(|r| v[r] * m[c * rows + r]).sum())
        .collect()
}

/// The product of column-major `a` (`k` columns of `rows`) and `b` (`cols` columns of `k`).
fn mat_mul(a: &[f32], b: &[f32], (rows, k, cols): (usize, usize, usize)) -> Vec<f32> {
    (0..cols)
        .flat_map(|c| mat_vec(a, (k, rows), &b[c * k..][..k]))
        .collect()
}

/// The determinant of a column-major n x n matrix (Laplace expansion).
fn det(m: &[f32], n: usize) -> f32 {
    if n == 1 {
        return m[0];
    }
    (0..n)
        .map(|c| {
            let minor: Vec<f32> = (0..n)
                .filter(|&cc| cc != c)
                .flat_map(|cc| (1..n).map(move |r| m[cc * n + r]))
                .collect();
            let sign = if c % 2 == 0 { 1.0 } else { -1.0 };
            sign * m[c * n] * det(&minor, n - 1)
        })
        .sum()
}

#[test]
fn matrix_transform_of_float4_points_through_a_uniform_struct() {
    let n = 40usize;
    // Transform: float4x4 model (16 floats), float3x3 normal (3 columns padded to 4), scale.
    let model: Vec<f32> = (0..16)
        .map(|i| ((i * 7 % 11) as f32 - 5.0) * 0.25)
        .collect();
    let normal: Vec<f32> = (0..9).map(|i| ((i * 5 % 7) as f32 - 3.0) * 0.5).collect();
    let mut uniform = model.clone();
    for c in 0..3 {
        uniform.extend_from_slice(&normal[c * 3..][..3]);
        uniform.push(0.0);
    }
    uniform.push(1.5);
    uniform.resize(32, 0.0);
    let values: Vec<String> = uniform.iter().map(|v| format!("{v:?}")).collect();
    let rest = buffer(
        0,
        "points",
        "float4",
        n as u64,
        &random(3, -2.0, 2.0),
        false,
    ) + &buffer(
        1,
        "t",
        "float",
        32,
        &format!("{{ values = [{}] }}", values.join(", ")),
        false,
    ) + &buffer(2, "out", "float4", n as u64, "", true)
        + &buffer(3, "normals", "float4", n as u64, "", true);
    let (launch, out) = run_specialized(
        MATRIX,
        &spec("transform_points", [n as u32, 1, 1], [32, 1, 1], &rest),
    );
    let points = f32s(&launch.buffers[0].bytes);
    let (mut want, mut want_n) = (Vec::new(), Vec::new());
    for p in points.chunks(4) {
        want.extend(mat_vec(&model, (4, 4), p).iter().map(|x| x * 1.5));
        want_n.extend(mat_vec(&normal, (3, 3), &p[..3]));
        want_n.push(vec_mat(p, &model, (4, 4))[3]);
    }
    assert_close(&f32s(&out.buffers[2]), &want, 1e-5, "transform_points");
    assert_close(
        &f32s(&out.buffers[3]),
        &want_n,
        1e-5,
        "transform_points normals",
    );
}

#[test]
fn matrix_compose_for_float_and_half() {
    let n = 33usize;
    for (kernel, ty, vty, tol) in [
        ("compose_float32", "float", "float4", 1e-4),
        ("compose_float16", "half", "half4", 2e-2),
    ] {
        let rest = buffer(0, "a", ty, 16 * n as u64, &random(11, -1.0, 1.0), false)
            + &buffer(1, "b", vty, 4 * n as u64, &random(12, -1.0, 1.0), false)
            + &buffer(2, "c", ty, 16 * n as u64, "", true)
            + &buffer(3, "det", "float", n as u64, "", true);
        let (launch, out) =
            run_specialized(MATRIX, &spec(kernel, [n as u32, 1, 1], [32, 1, 1], &rest));
        let read = |b: &[u8]| if ty == "half" { f16s(b) } else { f32s(b) };
        let (a, b) = (
            read(&launch.buffers[0].bytes),
            read(&launch.buffers[1].bytes),
        );
        let (mut want, mut want_det) = (Vec::new(), Vec::new());
        for i in 0..n {
            let (m, nn) = (&a[16 * i..][..16], &b[16 * i..][..16]);
            let prod = mat_mul(m, nn, (4, 4, 4));
            for c in 0..4 {
                for r in 0..4 {
                    want.push(prod[c * 4 + r] + 0.5 * m[r * 4 + c]);
                }
            }
            want_det.push(det(m, 4));
        }
        assert_close(&read(&out.buffers[2]), &want, tol, kernel);
        assert_close(&f32s(&out.buffers[3]), &want_det, tol, kernel);
    }
}

#[test]
fn matrix_non_square_products_and_element_updates() {
    let n = 20usize;
    let rest = buffer(
        0,
        "in",
        "float",
        8 * n as u64,
        &random(21, -1.0, 1.0),
        false,
    ) + &buffer(1, "out", "float4", 2 * n as u64, "", true);
    let (launch, out) = run_specialized(
        MATRIX,
        &spec("mixed_shapes", [n as u32, 1, 1], [32, 1, 1], &rest),
    );
    let input = f32s(&launch.buffers[0].bytes);
    let mut want = Vec::new();
    for x in input.chunks(8) {
        let a = &x[..6]; // 2 columns of 3
        let b = [x[6], x[7], x[0], x[1], x[2], x[3]]; // 3 columns of 2
        let p = mat_mul(a, &b, (3, 2, 3));
        let q = mat_mul(&b, a, (2, 3, 2));
        let r = vec_mat(&[x[5], x[6], x[7]], a, (2, 3));
        let mut s: Vec<f32> = (0..9)
            .map(|i| x[i % 8] + if i % 4 == 0 { 2.0 } else { 0.0 })
            .collect();
        for (i, v) in s.iter_mut().enumerate() {
            *v = (*v + if i % 4 == 0 { 1.0 } else { 0.0 }) * 0.5;
            if i >= 6 {
                *v = -*v;
            }
        }
        let sum: Vec<f32> = (0..3).map(|k| p[k] + p[3 + k] + p[6 + k]).collect();
        want.extend_from_slice(&[sum[0], sum[1], sum[2], det(&q, 2)]);
        let h = half::f16::from_f32(q[2]).to_f32();
        want.extend_from_slice(&[r[0], r[1], det(&s, 3), h]);
    }
    assert_close(&f32s(&out.buffers[1]), &want, 1e-4, "mixed_shapes");
}

const UNIONS: &str = "tests/suite/unions.metal";

#[test]
fn union_type_punning_in_quantized_blocks() {
    let n = 24usize;
    let quants = lcg_bytes(77, n * 32);
    let mut bytes = Vec::with_capacity(n * 36);
    for b in 0..n {
        let q = &quants[b * 32..][..32];
        let d = half::f16::from_f32(0.02 + 0.005 * (b % 5) as f32);
        let sum: f32 = q.iter().map(|x| *x as i8 as f32).sum();
        let s = half::f16::from_f32(d.to_f32() * sum);
        bytes.extend_from_slice(&d.to_le_bytes());
        bytes.extend_from_slice(&s.to_le_bytes());
        bytes.extend_from_slice(q);
    }
    let values: Vec<String> = bytes.iter().map(|b| (*b as i8).to_string()).collect();
    let rest = buffer(
        0,
        "blocks",
        "char",
        bytes.len() as u64,
        &format!("{{ values = [{}] }}", values.join(", ")),
        false,
    ) + &buffer(1, "out", "float", 32 * n as u64, "", true)
        + &buffer(2, "sums", "float", n as u64, "", true)
        + &buffer(3, "scale_bits", "uint", n as u64, "", true);
    let (_, out) = run_specialized(
        UNIONS,
        &spec("dequantize_q8_1", [n as u32, 1, 1], [32, 1, 1], &rest),
    );
    let (mut want, mut want_sums, mut want_bits) = (Vec::new(), Vec::new(), Vec::new());
    for blk in bytes.chunks(36) {
        let d = half::f16::from_le_bytes([blk[0], blk[1]]).to_f32();
        let s = half::f16::from_le_bytes([blk[2], blk[3]]).to_f32();
        let mut sum = 0f32;
        for q in &blk[4..] {
            let v = d * (*q as i8 as f32);
            want.push(v.abs());
            sum += v;
        }
        want_sums.push(sum - s);
        want_bits.push(u32::from_le_bytes([blk[0], blk[1], blk[2], blk[3]]));
    }
    assert_close(&f32s(&out.buffers[1]), &want, 1e-6, "dequantized |d * q|");
    assert_close(&f32s(&out.buffers[2]), &want_sums, 1e-4, "sum - s");
    assert_eq!(
        common::u32s(&out.buffers[3]),
        want_bits,
        "the half2 read as a word"
    );
}

const BITFIELDS: &str = "tests/suite/bitfields.metal";

/// The block header's fields in `bitfields.metal` as (first bit, width), derived by hand
/// from clang's layout rules (the derivation is in the kernel file's header comment);
/// `tag` is the ordinary `uchar` at byte 7.
const HEADER_LAYOUT: [(u32, u32); 9] = [
    (0, 5),   // scale_exp
    (5, 7),   // zero (signed)
    (12, 4),  // kind
    (16, 16), // count
    (32, 3),  // flags
    (48, 6),  // level, after `ushort : 0`
    (56, 8),  // tag
    (64, 20), // check
    (96, 14), // low, moved off the 32-bit unit it would straddle
];

/// The header's 16 bytes with each field's low bits at its place and `padding` in every
/// bit no field holds.
fn pack_header(fields: &[i64; 9], padding: u128) -> [u8; 16] {
    let mut bits = padding;
    for ((at, width), v) in HEADER_LAYOUT.iter().zip(fields) {
        let mask = ((1u128 << width) - 1) << at;
        bits = (bits & !mask) | (((*v as u128) << at) & mask);
    }
    bits.to_le_bytes()
}

/// A header's fields read back from its bytes (`zero` sign-extended).
fn unpack_header(bytes: &[u8]) -> [i64; 9] {
    let bits = u128::from_le_bytes(bytes[..16].try_into().unwrap());
    let mut out = [0i64; 9];
    for (i, (at, width)) in HEADER_LAYOUT.iter().enumerate() {
        let v = ((bits >> at) & ((1u128 << width) - 1)) as i64;
        out[i] = if i == 1 && v >= 64 { v - 128 } else { v };
    }
    out
}

/// Random header fields in range, with the edge values that wrap on update mixed in.
fn header_fields(seed: u64, n: usize) -> Vec<[i64; 9]> {
    let r = lcg_bytes(seed, n * 27);
    (0..n)
        .map(|b| {
            let x = |k: usize| {
                let c = &r[b * 27 + k * 3..][..3];
                u32::from_le_bytes([c[0], c[1], c[2], 0]) as i64
            };
            let edge = b % 4 == 0;
            [
                x(0) % 32,
                x(1) % 128 - 64,
                if edge { 15 } else { x(2) % 16 },
                if edge { 65535 } else { x(3) % 65536 },
                x(4) % 8,
                x(5) % 64,
                x(6) % 256,
                if edge { 0 } else { x(7) % (1 << 20) },
                x(8) % (1 << 14),
            ]
        })
        .collect()
}

#[test]
fn bit_fields_pack_a_quantized_block_header() {
    let n = 40usize;
    let headers = header_fields(5, n);
    let bases = lcg_bytes(6, n);
    let mut params = Vec::new();
    for (h, base) in headers.iter().zip(&bases) {
        params.extend(h.iter().map(|v| (*v as i32 as u32).to_string()));
        params.push(base.to_string());
    }
    let rest = buffer(
        0,
        "params",
        "uint",
        params.len() as u64,
        &format!("{{ values = [{}] }}", params.join(", ")),
        false,
    ) + &buffer(1, "blocks", "uchar", 32 * n as u64, "", true);
    let (_, out) = run_specialized(
        BITFIELDS,
        &spec("pack_headers", [n as u32, 1, 1], [8, 1, 1], &rest),
    );
    let mut want = Vec::with_capacity(32 * n);
    for (h, base) in headers.iter().zip(&bases) {
        let zero = h[1] - 1;
        let updated = [
            h[0],
            if zero < -64 { zero + 128 } else { zero },
            (h[2] + 1) % 16,
            (h[3] + 1) % 65536,
            h[4] | 4,
            h[5] ^ 0x15,
            h[6],
            (h[7] - 1).rem_euclid(1 << 20),
            h[8] ^ 1,
        ];
        want.extend_from_slice(&pack_header(&updated, 0));
        want.extend((0..16u32).map(|j| (*base as u32 + j * 7) as u8));
    }
    assert_eq!(out.buffers[1], want, "packed blocks, byte for byte");
}

#[test]
fn bit_fields_unpack_and_dequantize_a_quantized_block() {
    let n = 40usize;
    let headers = header_fields(9, n);
    let quants = lcg_bytes(10, 16 * n);
    let mut bytes = Vec::with_capacity(32 * n);
    for (b, h) in headers.iter().enumerate() {
        // Every bit no field holds is set: unpacking must mask it away.
        bytes.extend_from_slice(&pack_header(h, u128::MAX));
        bytes.extend_from_slice(&quants[b * 16..][..16]);
    }
    let values: Vec<String> = bytes.iter().map(|b| b.to_string()).collect();
    let rest = buffer(
        0,
        "blocks",
        "uchar",
        bytes.len() as u64,
        &format!("{{ values = [{}] }}", values.join(", ")),
        false,
    ) + &buffer(1, "fields", "int", 9 * n as u64, "", true)
        + &buffer(2, "values", "float", 16 * n as u64, "", true);
    let (_, out) = run_specialized(
        BITFIELDS,
        &spec("unpack_blocks", [n as u32, 1, 1], [8, 1, 1], &rest),
    );
    let mut want_fields = Vec::new();
    let mut want_values = Vec::new();
    for (b, block) in bytes.chunks(32).enumerate() {
        let h = unpack_header(block);
        assert_eq!(h, headers[b], "the CPU packing round-trips");
        want_fields.extend(h.iter().map(|v| *v as i32));
        let scale = 1.0 / (1u64 << h[0]) as f32;
        want_values.extend(
            block[16..]
                .iter()
                .map(|q| (*q as i32 - h[1] as i32) as f32 * scale),
        );
    }
    assert_eq!(i32s(&out.buffers[1]), want_fields, "unpacked header fields");
    assert_close(
        &f32s(&out.buffers[2]),
        &want_values,
        1e-6,
        "dequantized values",
    );
}

const COMPACT: &str = "tests/suite/compact.metal";

/// Compacts `n` random values above `threshold` per threadgroup of `block` and checks each
/// threadgroup's kept values (in order) and count against the CPU.
fn check_compact(kernel: &str, ty: &str, n: u32, block: u32, threshold: &str) {
    let rest = buffer(0, "in", ty, n as u64, &random(41, -100.0, 100.0), false)
        + &buffer(
            1,
            "out",
            ty,
            n.div_ceil(block) as u64 * block as u64,
            "",
            true,
        )
        + &buffer(2, "counts", "uint", n.div_ceil(block) as u64, "", true)
        + &buffer(
            3,
            "threshold",
            ty,
            1,
            &format!("{{ values = [{threshold}] }}"),
            false,
        )
        + &buffer(4, "n", "uint", 1, &format!("{{ values = [{n}] }}"), false);
    let threads = n.div_ceil(block) * block;
    let (launch, out) = run_specialized(
        COMPACT,
        &spec(kernel, [threads, 1, 1], [block, 1, 1], &rest),
    );
    let as_f64 = |b: &[u8]| -> Vec<f64> {
        match ty {
            "float" => f32s(b).into_iter().map(f64::from).collect(),
            _ => i32s(b).into_iter().map(f64::from).collect(),
        }
    };
    let input = as_f64(&launch.buffers[0].bytes);
    let t = as_f64(&launch.buffers[3].bytes)[0];
    let got = as_f64(&out.buffers[1]);
    let counts = common::u32s(&out.buffers[2]);
    for (g, chunk) in input.chunks(block as usize).enumerate() {
        let kept: Vec<f64> = chunk.iter().copied().filter(|v| *v > t).collect();
        assert_eq!(
            counts[g] as usize,
            kept.len(),
            "{kernel}: count of group {g}"
        );
        let seg = &got[g * block as usize..][..kept.len()];
        assert_eq!(seg, kept.as_slice(), "{kernel}: kept values of group {g}");
    }
}

#[test]
fn stream_compaction_with_simd_ballots() {
    check_compact("compact_float32_128", "float", 300, 128, "10.5");
    check_compact("compact_int32_64", "int", 200, 64, "-30");
    // Everything kept: every SIMD-group's vote is all().
    check_compact("compact_float32_128", "float", 256, 128, "-1000.0");
}

const LOCAL_TYPES: &str = "tests/suite/local_types.metal";

#[test]
fn classes_declared_inside_function_templates_score_windows() {
    let windows = 96u32;
    for (kernel, ty, width) in [
        ("window_scores_f32", "float", 8usize),
        ("window_scores_f16", "half", 4),
    ] {
        let n = windows as u64 * width as u64;
        let rest = buffer(0, "x", ty, n, &random(5, -3.0, 3.0), false)
            + &buffer(1, "out", "float", windows as u64, "", true);
        let (launch, out) = run_specialized(
            LOCAL_TYPES,
            &spec(kernel, [windows, 1, 1], [32, 1, 1], &rest),
        );
        let x = match ty {
            "float" => f32s(&launch.buffers[0].bytes),
            _ => f16s(&launch.buffers[0].bytes),
        };
        let want: Vec<f32> = x
            .chunks(width)
            .map(|w| {
                let lo = w.iter().copied().fold(f32::INFINITY, f32::min);
                let hi = w.iter().copied().fold(f32::NEG_INFINITY, f32::max);
                let sum: f32 = w.iter().sum();
                sum / width as f32 * 0.5 + (hi - lo)
            })
            .collect();
        assert_close(&f32s(&out.buffers[1]), &want, 1e-5, kernel);
    }
}

#[test]
fn a_local_union_and_a_block_scoped_class_mix_float_bits() {
    let n = 200u64;
    let rest = buffer(0, "x", "float", n, &random(9, -100.0, 100.0), false)
        + &buffer(1, "out", "uint", n, "", true);
    let (launch, out) = run_specialized(
        LOCAL_TYPES,
        &spec("mixed_keys", [n as u32, 1, 1], [64, 1, 1], &rest),
    );
    let want: Vec<u32> = f32s(&launch.buffers[0].bytes)
        .iter()
        .map(|f| {
            let u = f.to_bits();
            (u >> 16) ^ ((u & 0xffff) << 3)
        })
        .collect();
    assert_eq!(common::u32s(&out.buffers[1]), want, "mixed keys");
}

const REDUCE_OPS: &str = "tests/suite/reduce_ops.metal";

#[test]
fn row_reductions_with_the_op_as_a_template_template_parameter() {
    let (rows, n) = (5u32, 77u64);
    for (kernel, ty) in [
        ("row_sum_float32", "float"),
        ("row_max_float32", "float"),
        ("row_max_int32", "int"),
        ("row_sum_default", "float"),
    ] {
        let count = rows as u64 * n;
        let rest = buffer(0, "x", ty, count, &random(11, -1000.0, 1000.0), false)
            + &buffer(1, "out", ty, rows as u64, "", true)
            + &buffer(2, "n", "uint", 1, &format!("{{ values = [{n}] }}"), false);
        let (launch, out) = run_specialized(
            REDUCE_OPS,
            &spec(kernel, [rows * 32, 1, 1], [32, 1, 1], &rest),
        );
        let x = &launch.buffers[0].bytes;
        if ty == "int" {
            let want: Vec<i32> = i32s(x)
                .chunks(n as usize)
                .map(|r| *r.iter().max().unwrap())
                .collect();
            assert_eq!(i32s(&out.buffers[1]), want, "{kernel}");
            continue;
        }
        let x = f32s(x);
        // The same order as the kernel: 32 strided partial results, then a tree.
        let want: Vec<f32> = x
            .chunks(n as usize)
            .map(|r| {
                let is_max = kernel.contains("max");
                let op = |a: f32, b: f32| if is_max { a.max(b) } else { a + b };
                let init = if is_max { f32::MIN } else { 0.0 };
                let mut lanes = [init; 32];
                for (i, v) in r.iter().enumerate() {
                    lanes[i % 32] = op(lanes[i % 32], *v);
                }
                let mut offset = 16;
                while offset > 0 {
                    for l in 0..32 {
                        // Lanes past the end read their own value.
                        let other = lanes[if l + offset < 32 { l + offset } else { l }];
                        lanes[l] = op(lanes[l], other);
                    }
                    offset /= 2;
                }
                lanes[0]
            })
            .collect();
        assert_close(&f32s(&out.buffers[1]), &want, 1e-5, kernel);
    }
}

const VECTOR_CONSTANTS: &str = "tests/suite/vector_constants.metal";

#[test]
fn vector_function_constants_from_the_spec_arrays() {
    let n = 100u32;
    let taps = [0.25f32, 0.5, -0.125, 2.0];
    for (bias, clamp) in [([0.5f32, -1.5], [true, false]), ([0.0, 2.0], [false, true])] {
        let constants = format!(
            "[constants]\ntaps = {taps:?}\nbias = {bias:?}\nclamp_ends = [{}, {}]\n",
            clamp[0], clamp[1]
        );
        let rest = buffer(0, "x", "float", n as u64, &random(3, -2.0, 2.0), false)
            + &buffer(1, "out", "float2", n as u64, "", true)
            + &buffer(2, "n", "uint", 1, &format!("{{ values = [{n}] }}"), false)
            + &constants;
        let (launch, out) = run_specialized(
            VECTOR_CONSTANTS,
            &spec("filter4", [n, 1, 1], [32, 1, 1], &rest),
        );
        let x = f32s(&launch.buffers[0].bytes);
        let mut want = Vec::new();
        for i in 0..n as i32 {
            let mut y = 0f32;
            for (k, t) in taps.iter().enumerate() {
                let mut j = i + k as i32 - 1;
                if clamp[0] {
                    j = j.max(0);
                }
                if clamp[1] {
                    j = j.min(n as i32 - 1);
                }
                let v = usize::try_from(j).ok().and_then(|j| x.get(j));
                y += t * v.copied().unwrap_or(0.0);
            }
            want.extend([y + bias[0], -y + bias[1]]);
        }
        assert_close(&f32s(&out.buffers[1]), &want, 1e-5, "filter4");
    }
}

const SAMPLING: &str = "tests/suite/sampling.metal";

/// A sampler's address mode, as the CPU reference applies it.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Address {
    Zero,
    Edge,
    Border,
    Repeat,
    Mirror,
}

/// The sampler state the CPU reference samples with.
#[derive(Clone, Copy, Debug)]
struct SamplerRef {
    pixel: bool,
    address: Address,
    linear: bool,
    border: [f32; 4],
}

impl SamplerRef {
    /// Normalized coordinates, a border of transparent black.
    fn normalized(address: Address, linear: bool) -> SamplerRef {
        SamplerRef {
            pixel: false,
            address,
            linear,
            border: [0.0; 4],
        }
    }
}

/// A texture for the CPU reference: RGBA texels, x fastest, and its size.
struct TexRef<'a> {
    texels: &'a [f32],
    size: [i32; 3],
    has_alpha: bool,
}

/// Where integer coordinate `i` lands on an axis of `n` texels, or `None` for a border.
fn wrap_ref(i: i32, n: i32, a: Address) -> Option<i32> {
    match a {
        Address::Repeat => Some(i.rem_euclid(n)),
        Address::Mirror => {
            let t = i.rem_euclid(2 * n) - n;
            Some(n - 1 - if t >= 0 { t } else { -(1 + t) })
        }
        Address::Edge => Some(i.clamp(0, n - 1)),
        Address::Zero | Address::Border => (0..n).contains(&i).then_some(i),
    }
}

/// Samples `tex` at `coord` (its first `dims` axes) the way the MSL and Vulkan
/// specifications describe it, in f64: each axis gives one tap (nearest) or two weighted
/// ones (linear), and the colour is the weighted sum over every combination.
fn sample_ref(
    tex: &TexRef,
    s: SamplerRef,
    coord: [f32; 3],
    offset: [i32; 3],
    dims: usize,
) -> [f32; 4] {
    let mut axes: Vec<Vec<(Option<i32>, f64)>> = Vec::new();
    for d in 0..dims {
        let n = tex.size[d];
        let u = if s.pixel {
            coord[d] as f64
        } else {
            coord[d] as f64 * n as f64
        };
        axes.push(if s.linear {
            let u = u - 0.5;
            let f = u.floor();
            let i = f as i32 + offset[d];
            let a = u - f;
            vec![
                (wrap_ref(i, n, s.address), 1.0 - a),
                (wrap_ref(i + 1, n, s.address), a),
            ]
        } else {
            vec![(wrap_ref(u.floor() as i32 + offset[d], n, s.address), 1.0)]
        });
    }
    let mut out = [0.0f64; 4];
    let taps: usize = axes.iter().map(|a| a.len()).product();
    for t in 0..taps {
        let (mut rest, mut weight, mut at, mut stride, mut inside) = (t, 1.0, 0usize, 1usize, true);
        for (d, axis) in axes.iter().enumerate() {
            let (i, w) = axis[rest % axis.len()];
            rest /= axis.len();
            weight *= w;
            match i {
                Some(i) => at += i as usize * stride,
                None => inside = false,
            }
            stride *= tex.size[d] as usize;
        }
        let color = if inside {
            let p = &tex.texels[at * 4..at * 4 + 4];
            [p[0], p[1], p[2], p[3]]
        } else if s.address == Address::Zero {
            [0.0, 0.0, 0.0, if tex.has_alpha { 0.0 } else { 1.0 }]
        } else {
            s.border
        };
        for c in 0..4 {
            out[c] += weight * color[c] as f64;
        }
    }
    out.map(|v| v as f32)
}

/// A `[[sampler]]` table.
fn sampler_table(index: u32, keys: &str) -> String {
    format!("[[sampler]]\nindex = {index}\n{keys}\n")
}

#[test]
fn resize_through_the_sampler_the_launch_spec_binds() {
    let (sw, sh, dw, dh) = (7i32, 5i32, 16u32, 9u32);
    let cases = [
        (
            "filter = \"linear\"\naddress = \"clamp_to_edge\"",
            true,
            Address::Edge,
        ),
        ("address = \"repeat\"", false, Address::Repeat),
        (
            "filter = \"linear\"\naddress = \"clamp_to_border\"\nborder_color = \"opaque_black\"",
            true,
            Address::Border,
        ),
    ];
    for (keys, linear, address) in cases {
        let rest = texture(
            0,
            "src",
            "rgba8unorm",
            &format!("width = {sw}\nheight = {sh}"),
            &random(11, 0.0, 255.0),
            false,
        ) + &texture(
            1,
            "dst",
            "rgba32float",
            &format!("width = {dw}\nheight = {dh}"),
            "",
            true,
        ) + &sampler_table(0, keys);
        let (launch, out) =
            run_specialized(SAMPLING, &spec("resize", [dw, dh, 1], [8, 8, 1], &rest));
        let src = f32s(texels(&launch.buffers[0].bytes));
        let tex = TexRef {
            texels: &src,
            size: [sw, sh, 1],
            has_alpha: true,
        };
        let s = SamplerRef {
            border: [0.0, 0.0, 0.0, 1.0],
            ..SamplerRef::normalized(address, linear)
        };
        let mut want = Vec::new();
        for y in 0..dh {
            for x in 0..dw {
                let uv = [
                    (x as f32 + 0.5) / dw as f32,
                    (y as f32 + 0.5) / dh as f32,
                    0.0,
                ];
                want.extend(sample_ref(&tex, s, uv, [0; 3], 2));
            }
        }
        let got = f32s(&texture_output(&launch, &out.buffers, "dst", "float"));
        assert_close(&got, &want, 1e-5, keys);
    }
}

#[test]
fn tiled_pattern_through_a_constexpr_sampler_with_repeat_and_an_offset() {
    let (pw, ph, w, h) = (5i32, 3i32, 24u32, 16u32);
    let scale = 2.7f32;
    let rest = texture(
        0,
        "pattern",
        "rgba16float",
        &format!("width = {pw}\nheight = {ph}"),
        &random(4, -2.0, 2.0),
        false,
    ) + &buffer(0, "out", "half4", (w * h) as u64, "", true)
        + &buffer(
            1,
            "scale",
            "float",
            1,
            &format!("{{ values = [{scale}] }}"),
            false,
        );
    let (launch, out) = run_specialized(SAMPLING, &spec("tile", [w, h, 1], [8, 8, 1], &rest));
    let pattern = f16s(texels(&launch.buffers[2].bytes));
    let tex = TexRef {
        texels: &pattern,
        size: [pw, ph, 1],
        has_alpha: true,
    };
    let s = SamplerRef::normalized(Address::Repeat, false);
    let mut want = Vec::new();
    for y in 0..h {
        for x in 0..w {
            let uv = [
                (x as f32 + 0.5) / w as f32 * scale - 0.25,
                (y as f32 + 0.5) / h as f32 * scale - 0.25,
                0.0,
            ];
            want.extend(sample_ref(&tex, s, uv, [1, 0, 0], 2));
        }
    }
    // Nearest sampling returns a texel unchanged.
    assert_eq!(f16s(&out.buffers[0]), want);
}

#[test]
fn colour_grading_through_a_3d_table_with_trilinear_filtering_and_a_border() {
    let (n, size) = (40u32, [4i32, 3, 5]);
    let rest = texture(
        0,
        "lut",
        "rgba16unorm",
        "width = 4\nheight = 3\ndepth = 5",
        &random(8, 0.0, 65535.0),
        false,
    ) + &buffer(0, "colors", "float4", n as u64, &random(2, 0.0, 1.0), false)
        + &buffer(1, "graded", "float4", n as u64, "", true);
    let (launch, out) = run_specialized(SAMPLING, &spec("grade", [n, 1, 1], [32, 1, 1], &rest));
    let lut = f32s(texels(&launch.buffers[2].bytes));
    let colors = f32s(&launch.buffers[0].bytes);
    let tex = TexRef {
        texels: &lut,
        size,
        has_alpha: true,
    };
    let s = SamplerRef {
        pixel: true,
        border: [1.0; 4],
        ..SamplerRef::normalized(Address::Border, true)
    };
    let mut want = Vec::new();
    for c in colors.chunks_exact(4) {
        let p = [0, 1, 2].map(|d| c[d] * (size[d] as f32 + 2.0) - 1.0);
        want.extend(sample_ref(&tex, s, p, [0; 3], 3));
    }
    let got = f32s(&out.buffers[1]);
    assert_close(&got, &want, 1e-5, "graded");
    // Some colours fall in the margin and blend with the white border.
    assert!(
        colors
            .chunks_exact(4)
            .any(|c| c[..3].iter().any(|&v| v < 0.5 / 6.0))
    );
}

#[test]
fn curves_with_mirrored_repeat_and_integer_textures_sampled_nearest() {
    let n = 48u32;
    let rest = texture(
        0,
        "curve",
        "r32float",
        "width = 6",
        "{ values = [0.0, 1.0, 4.0, 9.0, 16.0, 25.0] }",
        false,
    ) + &texture(
        1,
        "labels",
        "rg16sint",
        "width = 4",
        "{ values = [1, -1, 2, -2, 3, -3, 4, -4] }",
        false,
    ) + &buffer(0, "values", "float", n as u64, "", true)
        + &buffer(1, "ids", "int4", n as u64, "", true);
    let (launch, out) = run_specialized(SAMPLING, &spec("curves", [n, 1, 1], [16, 1, 1], &rest));
    let curve = f32s(texels(&launch.buffers[2].bytes));
    let labels: Vec<f32> = i32s(texels(&launch.buffers[3].bytes))
        .iter()
        .map(|&v| v as f32)
        .collect();
    let mirror = SamplerRef::normalized(Address::Mirror, true);
    let zero = SamplerRef::normalized(Address::Zero, false);
    let curve_tex = TexRef {
        texels: &curve,
        size: [6, 1, 1],
        has_alpha: false,
    };
    let label_tex = TexRef {
        texels: &labels,
        size: [4, 1, 1],
        has_alpha: false,
    };
    let (mut values, mut ids) = (Vec::new(), Vec::new());
    for i in 0..n {
        let x = 3.0 * i as f32 / n as f32 - 1.0;
        values.push(sample_ref(&curve_tex, mirror, [x, 0.0, 0.0], [0; 3], 1)[0]);
        ids.extend(sample_ref(&label_tex, zero, [x, 0.0, 0.0], [0; 3], 1).map(|v| v as i32));
    }
    assert_close(&f32s(&out.buffers[0]), &values, 1e-5, "values");
    assert_eq!(i32s(&out.buffers[1]), ids);
    // Outside the texture a format without alpha reads opaque black (0, 0, 0, 1).
    assert_eq!(i32s(&out.buffers[1])[..4], [0, 0, 0, 1]);
}

#[test]
fn level_of_detail_chooses_between_the_magnification_and_minification_filters() {
    let (w, h) = (6u32, 4u32);
    for (lod, linear) in [(-1.0f32, false), (0.0, false), (1.5, true)] {
        let rest = texture(
            0,
            "src",
            "rgba32float",
            "width = 3\nheight = 2",
            &random(1, 0.0, 1.0),
            false,
        ) + &buffer(0, "out", "float4", (w * h) as u64, "", true)
            + &buffer(
                1,
                "lod",
                "float",
                1,
                &format!("{{ values = [{lod}] }}"),
                false,
            );
        let (launch, out) = run_specialized(SAMPLING, &spec("minify", [w, h, 1], [8, 8, 1], &rest));
        let src = f32s(texels(&launch.buffers[2].bytes));
        let tex = TexRef {
            texels: &src,
            size: [3, 2, 1],
            has_alpha: true,
        };
        let s = SamplerRef::normalized(Address::Edge, linear);
        let mut want = Vec::new();
        for y in 0..h {
            for x in 0..w {
                let uv = [
                    (x as f32 + 0.25) / w as f32,
                    (y as f32 + 0.25) / h as f32,
                    0.0,
                ];
                want.extend(sample_ref(&tex, s, uv, [0; 3], 2));
            }
        }
        assert_close(&f32s(&out.buffers[0]), &want, 1e-5, &format!("lod {lod}"));
    }
}

#[test]
fn texture_arrays_read_sampled_and_written_per_slice() {
    let (w, h, n) = (5u32, 4u32, 3u32);
    let rest = texture(
        0,
        "stack",
        "rgba32float",
        &format!("width = {w}\nheight = {h}\narray_length = {n}"),
        &random(6, -1.0, 1.0),
        false,
    ) + &texture(
        1,
        "mean",
        "rgba32float",
        &format!("width = {w}\nheight = {h}"),
        "",
        true,
    );
    let (launch, out) = run_specialized(SAMPLING, &spec("stack_mean", [w, h, 1], [8, 8, 1], &rest));
    let stack = f32s(texels(&launch.buffers[0].bytes));
    let plane = (w * h * 4) as usize;
    let want: Vec<f32> = (0..plane)
        .map(|i| (0..n as usize).map(|s| stack[s * plane + i]).sum::<f32>() / n as f32)
        .collect();
    assert_close(
        &f32s(&texture_output(&launch, &out.buffers, "mean", "float")),
        &want,
        1e-6,
        "mean",
    );

    let (pw, ow, lw) = (6i32, 9u32, 4i32);
    let row = 0.6f32;
    let rest = texture(
        0,
        "palette",
        "rgba16float",
        &format!("width = {pw}\narray_length = {n}"),
        &random(3, 0.0, 1.0),
        false,
    ) + &texture(
        1,
        "layers",
        "rgba8unorm",
        &format!("width = {lw}\nheight = {lw}\narray_length = {n}"),
        &random(7, 0.0, 255.0),
        false,
    ) + &texture(
        2,
        "out",
        "rgba32float",
        &format!("width = {ow}\narray_length = {n}"),
        "",
        true,
    ) + &buffer(
        0,
        "row",
        "float",
        1,
        &format!("{{ values = [{row}] }}"),
        false,
    );
    let (launch, out) = run_specialized(SAMPLING, &spec("ramps", [ow, n, 1], [16, 4, 1], &rest));
    let palette = f16s(texels(&launch.buffers[1].bytes));
    let layers = f32s(texels(&launch.buffers[2].bytes));
    let s = SamplerRef::normalized(Address::Edge, true);
    let mut want = Vec::new();
    for slice in 0..n as usize {
        let ramp = &palette[slice * pw as usize * 4..][..pw as usize * 4];
        let layer = (slice + 1).min(n as usize - 1);
        let image = &layers[layer * (lw * lw * 4) as usize..][..(lw * lw * 4) as usize];
        for x in 0..ow {
            let u = (x as f32 + 0.5) / ow as f32;
            let base = sample_ref(
                &TexRef {
                    texels: ramp,
                    size: [pw, 1, 1],
                    has_alpha: true,
                },
                s,
                [u, 0.0, 0.0],
                [0; 3],
                1,
            );
            let base = base.map(|c| half::f16::from_f32(c).to_f32());
            let tint = sample_ref(
                &TexRef {
                    texels: image,
                    size: [lw, lw, 1],
                    has_alpha: true,
                },
                s,
                [u, row, 0.0],
                [0; 3],
                2,
            );
            want.extend((0..4).map(|c| base[c] + tint[c]));
        }
    }
    let got = f32s(&texture_output(&launch, &out.buffers, "out", "float"));
    // The half palette's filtered value is rounded to half before the f32 sum.
    assert_close(&got, &want, 2e-3, "ramps");
}

#[test]
fn shadow_lookups_compare_and_filter_a_depth_texture() {
    let (n, w, h) = (64u32, 7i32, 5i32);
    let rest = texture(
        0,
        "shadow_map",
        "depth32float",
        &format!("width = {w}\nheight = {h}"),
        &random(12, 0.0, 1.0),
        false,
    ) + &buffer(
        0,
        "points",
        "float4",
        n as u64,
        &random(13, 0.0, 1.0),
        false,
    ) + &buffer(1, "lit", "float4", n as u64, "", true);
    let (launch, out) = run_specialized(SAMPLING, &spec("shadow", [n, 1, 1], [32, 1, 1], &rest));
    let depth = f32s(texels(&launch.buffers[2].bytes));
    let points = f32s(&launch.buffers[0].bytes);
    let tex = TexRef {
        texels: &depth,
        size: [w, h, 1],
        has_alpha: false,
    };
    let s = SamplerRef::normalized(Address::Edge, true);
    // The comparisons as a texture of 1s and 0s, sampled the same way.
    let mut want = Vec::new();
    let mut partly = 0;
    for p in points.chunks_exact(4) {
        let passed: Vec<f32> = depth
            .chunks_exact(4)
            .flat_map(|t| [if p[2] <= t[0] { 1.0 } else { 0.0 }, 0.0, 0.0, 1.0])
            .collect();
        let compared = TexRef {
            texels: &passed,
            size: [w, h, 1],
            has_alpha: false,
        };
        let pcf = sample_ref(&compared, s, [p[0], p[1], 0.0], [0; 3], 2)[0];
        partly += usize::from(pcf > 0.0 && pcf < 1.0);
        let filtered = sample_ref(&tex, s, [p[0], p[1], 0.0], [0; 3], 2)[0];
        let (x, y) = ((p[0] * w as f32) as i32, (p[1] * h as f32) as i32);
        let read = depth[((y.min(h - 1) * w + x.min(w - 1)) * 4) as usize];
        want.extend([pcf, filtered, read, 0.0]);
    }
    assert_close(&f32s(&out.buffers[1]), &want, 1e-5, "shadow");
    assert!(partly > 4, "too few points on a shadow edge: {partly}");
}

const CUBES: &str = "tests/suite/cubes.metal";

/// The cube face a direction selects and its normalized face coordinate, by the major-axis
/// table of the Vulkan specification (16.5.4) with Metal's face numbers (+X, -X, +Y, -Y,
/// +Z, -Z), ties to x then y.
fn cube_face_ref(d: [f32; 3]) -> (usize, [f32; 3]) {
    let a = d.map(f32::abs);
    let face = if a[0] >= a[1] && a[0] >= a[2] {
        usize::from(d[0] < 0.0)
    } else if a[1] >= a[2] {
        2 + usize::from(d[1] < 0.0)
    } else {
        4 + usize::from(d[2] < 0.0)
    };
    let (sc, tc, ma) = match face {
        0 => (-d[2], -d[1], d[0]),
        1 => (d[2], -d[1], -d[0]),
        2 => (d[0], d[2], d[1]),
        3 => (d[0], -d[2], -d[1]),
        4 => (d[0], -d[1], d[2]),
        _ => (-d[0], -d[1], -d[2]),
    };
    (face, [(sc / ma + 1.0) * 0.5, (tc / ma + 1.0) * 0.5, 0.0])
}

/// The four texels `gather` returns at `coord` (channel `c` of each): the bilinear
/// footprint's (i, j+1), (i+1, j+1), (i+1, j), (i, j) for (i, j) the texel at
/// floor(coord * size - 0.5) plus the offset, as the MSL specification orders them.
fn gather_ref(
    tex: &TexRef,
    s: SamplerRef,
    coord: [f32; 2],
    offset: [i32; 2],
    c: usize,
) -> [f32; 4] {
    let corner = |d: usize| {
        let n = tex.size[d];
        let u = if s.pixel {
            coord[d] as f64
        } else {
            coord[d] as f64 * n as f64
        };
        (u - 0.5).floor() as i32 + offset[d]
    };
    let (i, j) = (corner(0), corner(1));
    [(i, j + 1), (i + 1, j + 1), (i + 1, j), (i, j)].map(|(x, y)| {
        let x = wrap_ref(x, tex.size[0], s.address);
        let y = wrap_ref(y, tex.size[1], s.address);
        match (x, y) {
            (Some(x), Some(y)) => tex.texels[(y * tex.size[0] + x) as usize * 4 + c],
            _ if s.address == Address::Zero => {
                if c == 3 && !tex.has_alpha {
                    1.0
                } else {
                    0.0
                }
            }
            _ => s.border[c],
        }
    })
}

/// Slice `i` of `n`-texel slices of RGBA texels.
fn slice(texels: &[f32], i: usize, n: usize) -> &[f32] {
    &texels[i * n * 4..(i + 1) * n * 4]
}

#[test]
fn environment_lookups_through_a_cube_map_sampled_and_gathered() {
    let (w, n) = (4i32, 96u32);
    for (keys, linear) in [
        ("filter = \"linear\"", true),
        ("filter = \"nearest\"\naddress = \"repeat\"", false),
    ] {
        let rest = texture(
            0,
            "sky",
            "rgba8unorm",
            &format!("width = {w}"),
            &random(21, 0.0, 255.0),
            false,
        ) + &buffer(0, "dirs", "float4", n as u64, &random(22, -1.0, 1.0), false)
            + &buffer(1, "colors", "float4", n as u64, "", true)
            + &buffer(2, "reds", "float4", n as u64, "", true)
            + &buffer(3, "alphas", "float4", n as u64, "", true)
            + &sampler_table(0, keys);
        let (launch, out) =
            run_specialized(CUBES, &spec("environment", [n, 1, 1], [32, 1, 1], &rest));
        let sky = f32s(texels(&launch.buffers[4].bytes));
        assert_eq!(sky.len(), (6 * w * w * 4) as usize);
        let dirs = f32s(&launch.buffers[0].bytes);
        // A cube's faces clamp to their edges whatever the sampler's address mode.
        let s = SamplerRef::normalized(Address::Edge, linear);
        let (mut colors, mut reds, mut alphas, mut faces) = (vec![], vec![], vec![], [0; 6]);
        for d in dirs.chunks_exact(4) {
            let (face, st) = cube_face_ref([d[0], d[1], d[2]]);
            faces[face] += 1;
            let tex = TexRef {
                texels: slice(&sky, face, (w * w) as usize),
                size: [w, w, 1],
                has_alpha: true,
            };
            colors.extend(sample_ref(&tex, s, st, [0; 3], 2));
            reds.extend(gather_ref(&tex, s, [st[0], st[1]], [0; 2], 0));
            alphas.extend(gather_ref(&tex, s, [st[0], st[1]], [0; 2], 3));
        }
        assert!(
            faces.iter().all(|&f| f > 4),
            "every face looked up: {faces:?}"
        );
        assert_close(&f32s(&out.buffers[1]), &colors, 1e-5, keys);
        assert_eq!(f32s(&out.buffers[2]), reds, "{keys}: gathered reds");
        assert_eq!(f32s(&out.buffers[3]), alphas, "{keys}: gathered alphas");
    }
}

#[test]
fn cube_map_faces_are_slices_in_the_spec_order() {
    // Straight at each face's centre, and towards a corner texel of +Y (the face whose
    // t axis runs along +z).
    let dirs = "[1, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0, 0, -1, 0, 0, 0, 0, 1, 0, 0, 0, -1, 0, \
                -0.9, 1, -0.9, 0, 0.9, 1, 0.9, 0]";
    let rest = texture(
        0,
        "sky",
        "r32float",
        "width = 2",
        &format!(
            "{{ values = [{}] }}",
            (0..24)
                .map(|i| i.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
        false,
    ) + &buffer(
        0,
        "dirs",
        "float4",
        8,
        &format!("{{ values = {dirs} }}"),
        false,
    ) + &buffer(1, "colors", "float4", 8, "", true)
        + &buffer(2, "reds", "float4", 8, "", true)
        + &buffer(3, "alphas", "float4", 8, "", true)
        + &sampler_table(0, "filter = \"nearest\"");
    let (_, out) = run_specialized(CUBES, &spec("environment", [8, 1, 1], [8, 1, 1], &rest));
    let reds: Vec<f32> = f32s(&out.buffers[1])
        .chunks_exact(4)
        .map(|c| c[0])
        .collect();
    // Face f holds 4f..4f+3; a face's centre is its texel (1, 1) under nearest sampling.
    // On +Y, -x and -z is the top-left texel (0, 0); +x and +z the bottom-right (1, 1).
    assert_eq!(reds, [3.0, 7.0, 11.0, 15.0, 19.0, 23.0, 8.0, 11.0]);
}

#[test]
fn cube_array_faces_updated_in_place() {
    let (w, cubes) = (3u32, 2u32);
    let rest = texture(
        0,
        "cubes",
        "rgba32float",
        &format!("width = {w}\narray_length = {cubes}"),
        &random(23, -1.0, 1.0),
        true,
    );
    let (launch, out) = run_specialized(
        CUBES,
        &spec("mark_faces", [w, w, 6 * cubes], [4, 4, 2], &rest),
    );
    let before = f32s(texels(&launch.buffers[0].bytes));
    let face = (w * w * 4) as usize;
    let want: Vec<f32> = before
        .iter()
        .enumerate()
        .map(|(i, &v)| {
            let slice = i / face;
            v + match i % 4 {
                0 => (slice % 6) as f32,
                1 => (slice / 6) as f32,
                _ => 0.0,
            }
        })
        .collect();
    assert_eq!(
        f32s(&texture_output(&launch, &out.buffers, "cubes", "float")),
        want
    );
}

#[test]
fn shadow_tests_against_cube_and_array_depth_maps() {
    let (n, lw, lights, cw, ch, cascades) = (128u32, 4i32, 2usize, 5i32, 4i32, 3usize);
    let rest = texture(
        0,
        "lights",
        "depth32float",
        &format!("width = {lw}\narray_length = {lights}"),
        &random(24, 0.0, 1.0),
        false,
    ) + &texture(
        1,
        "cascades",
        "depth16unorm",
        &format!("width = {cw}\nheight = {ch}\narray_length = {cascades}"),
        &random(25, 0.0, 65535.0),
        false,
    ) + &buffer(
        0,
        "points",
        "float4",
        n as u64,
        &random(26, 0.0, 1.0),
        false,
    ) + &buffer(1, "lit", "float4", n as u64, "", true)
        + &buffer(2, "light_taps", "float4", n as u64, "", true)
        + &buffer(3, "cascade_taps", "float4", n as u64, "", true);
    let (launch, out) = run_specialized(CUBES, &spec("shadows", [n, 1, 1], [32, 1, 1], &rest));
    let points = f32s(&launch.buffers[0].bytes);
    let light_depth = f32s(texels(&launch.buffers[4].bytes));
    let cascade_depth = f32s(texels(&launch.buffers[5].bytes));
    let s = SamplerRef::normalized(Address::Edge, true);
    // A depth map's comparisons (less_equal) as a texture of 1s and 0s.
    let compared = |depth: &[f32], r: f32| -> Vec<f32> {
        depth
            .chunks_exact(4)
            .flat_map(|t| [if r <= t[0] { 1.0 } else { 0.0 }, 0.0, 0.0, 1.0])
            .collect()
    };
    let (mut lit, mut light_taps, mut cascade_taps, mut partly) = (vec![], vec![], vec![], 0);
    for (i, p) in points.chunks_exact(4).enumerate() {
        let (light, cascade) = (i % lights, i % cascades);
        let dir = [p[0] * 2.0 - 1.0, p[1] * 2.0 - 1.0, p[2] * 2.0 - 1.0];
        let (face, st) = cube_face_ref(dir);
        let faces = (lw * lw) as usize;
        let depth = slice(&light_depth, light * 6 + face, faces);
        let passed = compared(depth, p[3]);
        let on_face = |texels| TexRef {
            texels,
            size: [lw, lw, 1],
            has_alpha: false,
        };
        let light_pcf = sample_ref(&on_face(&passed), s, st, [0; 3], 2)[0];
        let light_depth = sample_ref(&on_face(depth), s, st, [0; 3], 2)[0];
        light_taps.extend(gather_ref(&on_face(&passed), s, [st[0], st[1]], [0; 2], 0));
        let depth = slice(&cascade_depth, cascade, (cw * ch) as usize);
        let passed = compared(depth, p[3]);
        let in_cascade = |texels| TexRef {
            texels,
            size: [cw, ch, 1],
            has_alpha: false,
        };
        let cascade_pcf = sample_ref(&in_cascade(&passed), s, [p[0], p[1], 0.0], [0; 3], 2)[0];
        partly += usize::from(cascade_pcf > 0.0 && cascade_pcf < 1.0);
        cascade_taps.extend(gather_ref(
            &in_cascade(&passed),
            s,
            [p[0], p[1]],
            [1, -1],
            0,
        ));
        let (x, y) = ((p[0] * cw as f32) as i32, (p[1] * ch as f32) as i32);
        let read = depth[((y * cw + x) * 4) as usize];
        lit.extend([light_pcf, cascade_pcf, light_depth, read]);
    }
    assert_close(&f32s(&out.buffers[1]), &lit, 1e-5, "lit");
    assert_eq!(f32s(&out.buffers[2]), light_taps, "light gather_compare");
    assert_eq!(
        f32s(&out.buffers[3]),
        cascade_taps,
        "cascade gather_compare"
    );
    assert!(partly > 4, "too few points on a shadow edge: {partly}");
}

#[test]
fn multisample_resolve_averages_samples_and_keeps_the_nearest_depth() {
    let (w, h, samples, depth_samples, layers) = (5u32, 3u32, 4usize, 2usize, 3usize);
    let size = format!("width = {w}\nheight = {h}");
    let rest = texture(
        0,
        "color",
        "rgba16float",
        &format!("{size}\nsample_count = {samples}"),
        &random(27, 0.0, 1.0),
        false,
    ) + &texture(
        1,
        "depth",
        "depth32float",
        &format!("{size}\nsample_count = {depth_samples}\narray_length = {layers}"),
        &random(28, 0.0, 1.0),
        false,
    ) + &texture(
        2,
        "ids",
        "r32uint",
        &format!("{size}\nsample_count = 8"),
        &random(29, 0.0, 4000.0),
        false,
    ) + &texture(3, "out", "rgba32float", &size, "", true)
        + &buffer(0, "nearest", "float", (w * h) as u64, "", true)
        + &buffer(1, "id_masks", "uint", (w * h) as u64, "", true);
    let (launch, out) = run_specialized(CUBES, &spec("resolve", [w, h, 1], [8, 4, 1], &rest));
    let tex = |name: &str| {
        texels(
            &launch
                .buffers
                .iter()
                .find(|b| b.name == name)
                .unwrap()
                .bytes,
        )
    };
    // `texture2d_ms<float>` holds the rgba16float texels as floats.
    let color = f32s(tex("color"));
    let depth = f32s(tex("depth"));
    let ids = common::u32s(tex("ids"));
    let pixels = (w * h) as usize;
    let (mut avg, mut nearest, mut masks) = (vec![], vec![], vec![]);
    for p in 0..pixels {
        let mut sum = [0.0f32; 4];
        for s in 0..samples {
            for c in 0..4 {
                sum[c] += color[(s * pixels + p) * 4 + c];
            }
        }
        avg.extend(sum.map(|v| v / samples as f32));
        let d = (0..layers * depth_samples).fold(1.0f32, |d, s| d.min(depth[(s * pixels + p) * 4]));
        nearest.push(d);
        masks.push((0..8).fold(0, |m, s| m | ids[(s * pixels + p) * 4]));
    }
    assert_close(
        &f32s(&texture_output(&launch, &out.buffers, "out", "float")),
        &avg,
        1e-6,
        "resolve",
    );
    assert_eq!(f32s(&out.buffers[0]), nearest, "nearest depth");
    assert_eq!(common::u32s(&out.buffers[1]), masks, "id masks");
}

#[test]
fn texel_buffers_read_and_written_by_index() {
    let n = 37u32;
    let rest = texture(
        0,
        "in",
        "rgba16float",
        &format!("width = {n}"),
        &random(30, -4.0, 4.0),
        false,
    ) + &texture(1, "out", "rgba32float", &format!("width = {n}"), "", true)
        + &buffer(0, "k", "float", 1, "{ values = [1.5] }", false);
    let (launch, out) = run_specialized(CUBES, &spec("scale_texels", [n, 1, 1], [32, 1, 1], &rest));
    let input = f16s(texels(&launch.buffers[1].bytes));
    let want: Vec<f32> = input
        .chunks_exact(4)
        .rev()
        .flat_map(|t| t.iter().map(|v| v * 1.5).collect::<Vec<_>>())
        .collect();
    assert_eq!(
        f32s(&texture_output(&launch, &out.buffers, "out", "float")),
        want
    );
}

#[test]
fn gathered_footprints_of_a_texture_and_an_array_slice() {
    let (n, iw, ih, lw, layers) = (64u32, 6i32, 5i32, 4i32, 3usize);
    for (keys, address) in [
        ("address = \"repeat\"", Address::Repeat),
        ("address = \"clamp_to_zero\"", Address::Zero),
    ] {
        let rest = texture(
            0,
            "image",
            "rgba8unorm",
            &format!("width = {iw}\nheight = {ih}"),
            &random(31, 0.0, 255.0),
            false,
        ) + &texture(
            1,
            "labels",
            "r32sint",
            &format!("width = {lw}\nheight = {lw}\narray_length = {layers}"),
            &random(32, -100.0, 100.0),
            false,
        ) + &buffer(
            0,
            "points",
            "float2",
            n as u64,
            &random(33, -0.2, 1.2),
            false,
        ) + &buffer(1, "greens", "float4", n as u64, "", true)
            + &buffer(2, "label_taps", "int4", n as u64, "", true)
            + &sampler_table(0, keys);
        let (launch, out) =
            run_specialized(CUBES, &spec("footprints", [n, 1, 1], [32, 1, 1], &rest));
        let points = f32s(&launch.buffers[0].bytes);
        let image = f32s(texels(&launch.buffers[3].bytes));
        let labels: Vec<f32> = i32s(texels(&launch.buffers[4].bytes))
            .iter()
            .map(|&v| v as f32)
            .collect();
        let s = SamplerRef::normalized(address, false);
        let (mut greens, mut taps) = (vec![], vec![]);
        for (i, p) in points.chunks_exact(2).enumerate() {
            let tex = TexRef {
                texels: &image,
                size: [iw, ih, 1],
                has_alpha: true,
            };
            greens.extend(gather_ref(&tex, s, [p[0], p[1]], [1, -2], 1));
            let tex = TexRef {
                texels: slice(&labels, i % layers, (lw * lw) as usize),
                size: [lw, lw, 1],
                has_alpha: false,
            };
            taps.extend(gather_ref(&tex, s, [p[0], p[1]], [0; 2], 0).map(|v| v as i32));
        }
        assert_eq!(f32s(&out.buffers[1]), greens, "{keys}: greens");
        assert_eq!(i32s(&out.buffers[2]), taps, "{keys}: labels");
    }
}

#[test]
fn texture_atomics_count_points_and_fold_values() {
    let (n, w, h) = (128u32, 4u32, 3u32);
    let rest = texture(
        0,
        "counts",
        "r32uint",
        &format!("width = {w}\nheight = {h}"),
        &random(34, 0.0, 10.0),
        true,
    ) + &texture(
        1,
        "folds",
        "r32sint",
        "width = 9",
        &random(35, -50.0, 50.0),
        true,
    ) + &buffer(
        0,
        "points",
        "float2",
        n as u64,
        &random(36, 0.0, 1.0),
        false,
    ) + &buffer(
        1,
        "values",
        "int",
        n as u64,
        &random(37, -1000.0, 1000.0),
        false,
    ) + &buffer(2, "exchanged", "int", 1, "", true);
    let (launch, out) = run_specialized(CUBES, &spec("splat", [n, 1, 1], [32, 1, 1], &rest));
    let tex = |name: &str| {
        texels(
            &launch
                .buffers
                .iter()
                .find(|b| b.name == name)
                .unwrap()
                .bytes,
        )
    };
    let mut counts: Vec<u32> = common::u32s(tex("counts"))
        .iter()
        .step_by(4)
        .copied()
        .collect();
    let init: Vec<i32> = i32s(tex("folds")).iter().step_by(4).copied().collect();
    let points = f32s(
        &launch
            .buffers
            .iter()
            .find(|b| b.name == "points")
            .unwrap()
            .bytes,
    );
    let values = i32s(
        &launch
            .buffers
            .iter()
            .find(|b| b.name == "values")
            .unwrap()
            .bytes,
    );
    for p in points.chunks_exact(2) {
        let (x, y) = ((p[0] * w as f32) as u32, (p[1] * h as f32) as u32);
        counts[(y * w + x) as usize] += 1;
    }
    let mut folds = init.clone();
    for &v in &values {
        folds[0] = folds[0].min(v);
        folds[1] = folds[1].max(v);
        folds[2] |= v & 0xff;
        folds[3] &= !(1 << (v & 15));
        folds[4] ^= v;
        folds[5] = folds[5].wrapping_sub(v);
        folds[6] = folds[6].wrapping_add(v);
    }
    folds[7] = 42;
    folds[8] = -5;
    assert_eq!(
        common::u32s(&texture_output(&launch, &out.buffers, "counts", "uint")),
        counts
    );
    assert_eq!(
        i32s(&texture_output(&launch, &out.buffers, "folds", "int")),
        folds
    );
    let exchanged = launch
        .buffers
        .iter()
        .position(|b| b.name == "exchanged")
        .unwrap();
    assert_eq!(i32s(&out.buffers[exchanged]), [init[8]]);
}

const CONSTEXPR_STRUCTS: &str = "tests/suite/constexpr_structs.metal";

#[test]
fn constexpr_struct_parameters_size_arrays_and_pick_branches() {
    let n = 200u64;
    let rest = buffer(0, "x", "uint", n, &random(17, 0.0, 4e9), false)
        + &buffer(1, "out", "uint", n, "", true);
    let (launch, out) = run_specialized(
        CONSTEXPR_STRUCTS,
        &spec("constexpr_params", [n as u32, 1, 1], [64, 1, 1], &rest),
    );
    // The kernel's parameters, written out: order {2, 0, 3, 1}, weights w << shift of
    // {3, 2}, {5, 0}, {7, 1}, the constructor's mul 3 * 2 + 1 times the 4x4 tile's area,
    // bn 4 and bm 8; the `if constexpr` takes its first branch (weight(1) is 5).
    let order = [2u32, 0, 3, 1];
    let weight = [3u32 << 2, 5, 7 << 1];
    let want: Vec<u32> = common::u32s(&launch.buffers[0].bytes)
        .iter()
        .enumerate()
        .map(|(i, &x)| {
            let i = i as u32;
            x.wrapping_mul(order[i as usize % 4] + 1)
                .wrapping_add(weight[i as usize % 3])
                .wrapping_add(100 + 7 * 16 + i % 4)
                .wrapping_add(x.wrapping_mul(8))
        })
        .collect();
    assert_eq!(common::u32s(&out.buffers[1]), want, "constexpr parameters");
}

#[test]
fn a_whole_float4_read_is_bounds_checked_as_one_access_at_its_source_line() {
    let src = "#include <metal_stdlib>\nusing namespace metal;\n\
               kernel void scale(device const float* x [[buffer(0)]],\n\
                                 device float4* y [[buffer(1)]],\n\
                                 uint i [[thread_position_in_grid]]) {\n\
                   y[i] = ((device const float4*)x)[i] * 2.0f;\n}\n";
    // 36.5 float4s: thread 36's vector starts in bounds and ends past the buffer.
    let rest = buffer(0, "x", "float", 146, &random(5, -1.0, 1.0), false)
        + &buffer(1, "y", "float4", 40, "", true);
    let (_, out) = common::run_source(src, &spec("scale", [40, 1, 1], [32, 1, 1], &rest));
    let fault = out.fault.expect("thread 36 reads past the end of `x`");
    assert_eq!(fault.thread, [36, 0, 0], "{}", fault.message);
    assert!(fault.message.contains("`x`"), "{}", fault.message);
    assert!(
        fault.location.starts_with("test.metal:6:"),
        "{}",
        fault.location
    );
    // Without thread 36, the vectors are read and doubled whole.
    let (launch, ok) = common::run_source(src, &spec("scale", [36, 1, 1], [36, 1, 1], &rest));
    assert!(ok.fault.is_none(), "{:?}", ok.fault);
    let want: Vec<f32> = f32s(&launch.buffers[0].bytes)[..144]
        .iter()
        .map(|v| v * 2.0)
        .collect();
    assert_eq!(&f32s(&ok.buffers[1])[..144], &want[..]);
}
