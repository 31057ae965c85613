//! MLX mode end to end: the body-only examples in `examples/mlx/` run through
//! `metalsim run` and match CPU references computed here from the same `.npy` inputs;
//! `--verbose` shows an MLX-shaped signature; bad specs and bad bodies are exit 2 with
//! the file and line.

use std::path::{Path, PathBuf};

use assert_cmd::Command;
use npyz::NpyFile;

fn metalsim() -> Command {
    let mut c = Command::cargo_bin("metalsim").unwrap();
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c
}

fn out_dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("metalsim-mlx-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// Runs `metalsim run BODY --spec SPEC --out DIR [extra]` and checks it succeeded;
/// returns its stderr.
fn run(body: &str, spec: &str, dir: &Path, extra: &[&str]) -> String {
    let out = metalsim()
        .args(["run", body, "--spec", spec, "--out"])
        .arg(dir)
        .args(extra)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    stderr
}

/// A float32 `.npy` file's shape and values.
fn load(path: &Path) -> (Vec<u64>, Vec<f32>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<f32>().unwrap())
}

fn example(name: &str) -> (Vec<u64>, Vec<f32>) {
    load(
        &Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("examples/mlx/data")
            .join(name),
    )
}

/// Asserts that `got` matches `want` within `tol` times the largest magnitude of `want`.
fn check_close(what: &str, got: &[f32], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let scale = want.iter().fold(1e-30f64, |m, w| m.max(w.abs()));
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!(
            (f64::from(*g) - w).abs() <= tol * scale,
            "{what}[{i}]: got {g}, expected {w}"
        );
    }
}

#[test]
fn exp_matches_cpu_and_verbose_prints_the_signature() {
    let (shape, inp) = example("inp.npy");
    let want: Vec<f64> = inp.iter().map(|&v| f64::from(v).exp()).collect();
    for (body, spec, verbose) in [
        ("examples/mlx/exp.body.metal", "examples/mlx/exp.toml", true),
        (
            "examples/mlx/exp_strided.body.metal",
            "examples/mlx/exp_strided.toml",
            false,
        ),
    ] {
        let dir = out_dir(if verbose { "exp" } else { "exp-strided" });
        let flags: &[&str] = if verbose { &["--verbose"] } else { &[] };
        let stderr = run(body, spec, &dir, flags);
        let (out_shape, got) = load(&dir.join("out.npy"));
        assert_eq!(out_shape, shape, "{spec}");
        check_close(spec, &got, &want, 1e-6);
        if verbose {
            assert!(
                stderr.contains(
                    "template <typename T>\n[[kernel]] void custom_kernel_myexp(\n    \
                     const device float* inp [[buffer(0)]],\n    \
                     device float* out [[buffer(1)]],\n    \
                     uint3 thread_position_in_grid [[thread_position_in_grid]]) {\n\
                     uint elem = thread_position_in_grid.x;\n"
                ),
                "{stderr}"
            );
        }
    }
}

/// The shapes and inputs of the grid-sample examples.
struct GridSample {
    x: Vec<f32>,
    grid: Vec<f32>,
    cot: Vec<f32>,
    dims: [usize; 6], // B, H, W, C, gH, gW
}

fn grid_sample_inputs() -> GridSample {
    let (xs, x) = example("gs_x.npy");
    let (gs, grid) = example("gs_grid.npy");
    let (_, cot) = example("gs_cotangent.npy");
    let d = |v: u64| v as usize;
    GridSample {
        x,
        grid,
        cot,
        dims: [d(xs[0]), d(xs[1]), d(xs[2]), d(xs[3]), d(gs[1]), d(gs[2])],
    }
}

/// Bilinear grid sample on the CPU, in f64: the output, and the gradients of x and grid
/// for the cotangent.
fn grid_sample_cpu(g: &GridSample) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let [b_n, h, w, c_n, gh, gw] = g.dims;
    let mut out = vec![0.0; b_n * gh * gw * c_n];
    let mut x_grad = vec![0.0; g.x.len()];
    let mut grid_grad = vec![0.0; g.grid.len()];
    for p in 0..b_n * gh * gw {
        let b = p / (gh * gw);
        let ix = ((f64::from(g.grid[2 * p]) + 1.0) * w as f64 - 1.0) / 2.0;
        let iy = ((f64::from(g.grid[2 * p + 1]) + 1.0) * h as f64 - 1.0) / 2.0;
        let (x0, y0) = (ix.floor(), iy.floor());
        let (fx, fy) = (ix - x0, iy - y0);
        for (dy, wy, sy) in [(0.0, 1.0 - fy, -1.0), (1.0, fy, 1.0)] {
            for (dx, wx, sx) in [(0.0, 1.0 - fx, -1.0), (1.0, fx, 1.0)] {
                let (yy, xx) = (y0 + dy, x0 + dx);
                if yy < 0.0 || yy >= h as f64 || xx < 0.0 || xx >= w as f64 {
                    continue;
                }
                let base = ((b * h + yy as usize) * w + xx as usize) * c_n;
                for c in 0..c_n {
                    let v = f64::from(g.x[base + c]);
                    let cot = f64::from(g.cot[p * c_n + c]);
                    out[p * c_n + c] += wx * wy * v;
                    x_grad[base + c] += wx * wy * cot;
                    grid_grad[2 * p] += sx * wy * v * cot * w as f64 / 2.0;
                    grid_grad[2 * p + 1] += sy * wx * v * cot * h as f64 / 2.0;
                }
            }
        }
    }
    (out, x_grad, grid_grad)
}

#[test]
fn grid_sample_forward_and_backward_match_cpu() {
    let g = grid_sample_inputs();
    let (out, x_grad, grid_grad) = grid_sample_cpu(&g);
    let [b, h, w, c, gh, gw] = g.dims.map(|d| d as u64);

    let dir = out_dir("grid-sample");
    run(
        "examples/mlx/grid_sample.body.metal",
        "examples/mlx/grid_sample.toml",
        &dir,
        &[],
    );
    let (shape, got) = load(&dir.join("out.npy"));
    assert_eq!(shape, [b, gh, gw, c]);
    check_close("out", &got, &out, 1e-5);

    let dir = out_dir("grid-sample-grad");
    let stderr = run(
        "examples/mlx/grid_sample_grad.body.metal",
        "examples/mlx/grid_sample_grad.toml",
        &dir,
        &["--verbose"],
    );
    assert!(
        stderr.contains("device atomic<float>* x_grad [[buffer(5)]]"),
        "{stderr}"
    );
    let (shape, got) = load(&dir.join("x_grad.npy"));
    assert_eq!(shape, [b, h, w, c]);
    check_close("x_grad", &got, &x_grad, 1e-5);
    let (shape, got) = load(&dir.join("grid_grad.npy"));
    assert_eq!(shape, [b, gh, gw, 2]);
    check_close("grid_grad", &got, &grid_grad, 1e-5);
}

/// Writes `files` (name, text) into a fresh folder, with a copy of the exp example's
/// input as `inp.npy`.
fn scratch(name: &str, files: &[(&str, &str)]) -> PathBuf {
    let dir = out_dir(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mlx/data/inp.npy"),
        dir.join("inp.npy"),
    )
    .unwrap();
    for (file, text) in files {
        std::fs::write(dir.join(file), text).unwrap();
    }
    dir
}

const SPEC: &str = "[mlx]\nname = \"k\"\ninput_names = [\"inp\"]\noutput_names = [\"out\"]\n\
                    grid = [4096]\nthreadgroup = [256]\noutput_shapes = [[4096]]\n\
                    output_dtypes = [\"float\"]\n[mlx.inputs]\ninp = \"inp.npy\"\n";

#[test]
fn bad_specs_and_bodies_are_exit_2_with_file_and_line() {
    let body = "uint i = thread_position_in_grid.x;\nout[i] = inp[i];\n";
    let cases = [
        (
            SPEC.replace("[[4096]]", "[[4096]]\noutput_dtypes = [\"float\"]"),
            body.to_string(),
            "spec.toml:9:1: duplicate key",
        ),
        (
            SPEC.replace(
                "output_dtypes = [\"float\"]",
                "output_dtypes = [\"float4\"]",
            ),
            body.to_string(),
            "spec.toml:8:1: `float4` is a vector type; MLX dtypes are scalars",
        ),
        (
            SPEC.replace("inp.npy", "nothing.npy"),
            body.to_string(),
            "spec.toml:10:1: input `inp`",
        ),
        (
            SPEC.to_string(),
            "uint i = thread_position_in_grid.x;\nout[i] = inp[i] + missing;\n".to_string(),
            "body.metal:2:19",
        ),
    ];
    for (i, (spec, body, expected)) in cases.iter().enumerate() {
        let dir = scratch(
            &format!("bad-{i}"),
            &[("spec.toml", spec), ("body.metal", body)],
        );
        let out = metalsim()
            .arg("run")
            .arg(dir.join("body.metal"))
            .arg("--spec")
            .arg(dir.join("spec.toml"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "case {i}: {stderr}");
        assert!(stderr.contains(expected), "case {i}: {stderr}");
    }
}

#[test]
fn a_plain_spec_still_runs_the_ordinary_way() {
    let dir = scratch("plain", &[("spec.toml", SPEC), ("body.metal", "")]);
    let out = metalsim()
        .args(["run", "examples/vector_add.metal", "--spec"])
        .arg(dir.join("spec.toml"))
        .output()
        .unwrap();
    // An MLX spec with a full kernel file as its body: the generated kernel then holds
    // a kernel inside a kernel, a compile error, exit 2.
    assert_eq!(out.status.code(), Some(2));
    let out = metalsim()
        .args([
            "run",
            "examples/vector_add.metal",
            "--spec",
            "tests/data/vector_add_small.toml",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Writes `values` as a `.npy` file of `shape` in C or Fortran order; `values` are in
/// row-major order of the logical array either way.
fn save<T: npyz::AutoSerialize + Copy>(path: &Path, shape: &[u64], fortran: bool, values: &[T]) {
    use npyz::WriterBuilder;
    let order = if fortran {
        npyz::Order::Fortran
    } else {
        npyz::Order::C
    };
    let mut w = npyz::WriteOptions::<T>::new()
        .default_dtype()
        .shape(shape)
        .order(order)
        .writer(std::io::BufWriter::new(
            std::fs::File::create(path).unwrap(),
        ))
        .begin_nd()
        .unwrap();
    if fortran {
        // Storage order: the first index varies fastest.
        let (rows, cols) = (shape[0] as usize, shape[1] as usize);
        for j in 0..cols {
            for i in 0..rows {
                w.push(&values[i * cols + j]).unwrap();
            }
        }
    } else {
        for v in values {
            w.push(v).unwrap();
        }
    }
    w.finish().unwrap();
}

/// An `.npy` file's values as `T`.
fn load_as<T: npyz::Deserialize>(path: &Path) -> (Vec<u64>, Vec<T>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let npy = NpyFile::new(&bytes[..]).unwrap();
    let shape = npy.shape().to_vec();
    (shape, npy.into_vec::<T>().unwrap())
}

/// Runs `metalsim run` in `dir` and returns its exit code and stderr.
fn run_in(dir: &Path, args: &[&str]) -> (Option<i32>, String) {
    let out = Command::cargo_bin("metalsim")
        .unwrap()
        .current_dir(dir)
        .arg("run")
        .args(args)
        .output()
        .unwrap();
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The exp example's flags, MLX's keywords spelled as flags.
const EXP_FLAGS: &[&str] = &[
    "--mlx-name",
    "myexp",
    "--input-names",
    "inp",
    "--output-names",
    "out",
    "--template",
    "T=float",
    "--grid",
    "4096,1,1",
    "--threadgroup",
    "256,1,1",
    "--output-shapes",
    "64,64",
    "--output-dtypes",
    "float32",
    "--input",
    "inp=data/inp.npy",
];

#[test]
fn flags_alone_run_the_exp_example_as_its_spec_does() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mlx");
    let flags_dir = out_dir("flags-exp");
    let mut args = vec!["exp.body.metal", "--verbose", "--out"];
    let out = flags_dir.display().to_string();
    args.push(&out);
    args.extend_from_slice(EXP_FLAGS);
    let (code, stderr) = run_in(&examples, &args);
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains("Generated source code for `myexp`:\n```\n#include <metal_stdlib>\n")
            && stderr.contains(
                "[[kernel]] void custom_kernel_myexp(\n    const device float* inp [[buffer(0)]],\n"
            ),
        "{stderr}"
    );
    let spec_dir = out_dir("flags-exp-spec");
    run(
        "examples/mlx/exp.body.metal",
        "examples/mlx/exp.toml",
        &spec_dir,
        &[],
    );
    assert_eq!(
        std::fs::read(flags_dir.join("out.npy")).unwrap(),
        std::fs::read(spec_dir.join("out.npy")).unwrap()
    );
}

#[test]
fn flags_complete_and_override_a_spec() {
    // The spec lacks `grid` (a flag gives it); flags replace its output shape and input.
    let spec = SPEC.replace("grid = [4096]\n", "");
    let dir = scratch(
        "override",
        &[
            ("spec.toml", &spec),
            (
                "body.metal",
                "uint i = thread_position_in_grid.x;\nout[i] = inp[i] * 2;\n",
            ),
        ],
    );
    let values: Vec<f32> = (0..64).map(|i| i as f32).collect();
    save(&dir.join("small.npy"), &[64], false, &values);
    let (code, stderr) = run_in(&dir, &["body.metal", "--spec", "spec.toml"]);
    assert_eq!(code, Some(2));
    assert!(
        stderr.contains("spec.toml: missing key `grid` in `[mlx]` (or give --grid)"),
        "{stderr}"
    );
    let (code, stderr) = run_in(
        &dir,
        &[
            "body.metal",
            "--spec",
            "spec.toml",
            "--grid",
            "64",
            "--output-shapes",
            "8,8",
            "--input",
            "inp=small.npy",
            "--out",
            "o",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    let (shape, got) = load(&dir.join("o/out.npy"));
    assert_eq!(shape, [8, 8]);
    assert_eq!(got, values.iter().map(|v| v * 2.0).collect::<Vec<_>>());
}

#[test]
fn bad_flags_are_exit_2_naming_the_flag() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/mlx");
    let with = |flag: &str, value: &str| -> Vec<String> {
        let mut args: Vec<String> = vec!["exp.body.metal".into()];
        let mut skip = false;
        for (i, a) in EXP_FLAGS.iter().enumerate() {
            if skip {
                skip = false;
                continue;
            }
            if *a == flag && i % 2 == 0 {
                skip = true;
                continue;
            }
            args.push(a.to_string());
        }
        if !value.is_empty() {
            args.push(flag.into());
            args.push(value.into());
        }
        args
    };
    for (flag, value, expected) in [
        (
            "--grid",
            "0,1",
            "--grid: `0,1`: `0` is not a positive integer",
        ),
        (
            "--threadgroup",
            "64,64",
            "--threadgroup: `threadgroup = [64, 64, 1]` has 4096 threads",
        ),
        (
            "--output-dtypes",
            "complex64",
            "--output-dtypes: `complex64` is not supported",
        ),
        (
            "--output-names",
            "",
            "missing --output-names (MLX's `output_names`)",
        ),
        ("--input", "inp=nothing.npy", "--input inp: input `inp` ("),
        ("--input", "inp", "--input: `inp` is not NAME=VALUE"),
        (
            "--template",
            "T=float3",
            "--template T: template `T`: `float3` is a vector type",
        ),
    ] {
        let args = with(flag, value);
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, stderr) = run_in(&examples, &args);
        assert_eq!(code, Some(2), "{flag} {value}: {stderr}");
        assert!(stderr.contains(expected), "{flag} {value}: {stderr}");
    }
    let (code, stderr) = run_in(&examples, &["exp.body.metal"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("give --spec FILE"), "{stderr}");
    let (code, stderr) = run_in(
        &examples,
        &[
            "../vector_add.metal",
            "--spec",
            "../vector_add.toml",
            "--grid",
            "4",
        ],
    );
    assert_eq!(code, Some(2));
    assert!(stderr.contains("need a spec in MLX form"), "{stderr}");
}

/// A body that reads its input through `elem_to_loc` and reports the strides it got.
const STRIDED_BODY: &str = "\
uint elem = thread_position_in_grid.x;
out[elem] = metal::exp(inp[elem_to_loc(elem, inp_shape, inp_strides, inp_ndim)]);
if (elem < uint(inp_ndim)) {
    st[elem] = inp_strides[elem];
}
";

#[test]
fn strided_inputs_bind_as_mlx_binds_them() {
    let dir = scratch("strided", &[("body.metal", STRIDED_BODY)]);
    // The logical (8, 16) array A[i][j] = (16 i + j) / 100, in both orders.
    let a: Vec<f32> = (0..128).map(|v| v as f32 / 100.0).collect();
    save(&dir.join("a_f.npy"), &[8, 16], true, &a);
    save(&dir.join("a_c.npy"), &[8, 16], false, &a);
    let exp_of = |v: &[f32]| v.iter().map(|&x| f64::from(x).exp()).collect::<Vec<_>>();
    let transposed: Vec<f32> = (0..128).map(|k| a[(k % 8) * 16 + k / 8]).collect();
    let view = "inp={ npy = \"a_c.npy\", shape = [16, 8], strides = [1, 16] }";
    for (i, (input, contiguous, strides, want)) in [
        ("inp=a_f.npy", "true", [16i64, 1], &a),
        ("inp=a_f.npy", "false", [1, 8], &a),
        (view, "true", [8, 1], &transposed),
        (view, "false", [1, 16], &transposed),
    ]
    .into_iter()
    .enumerate()
    {
        let out = format!("o{i}");
        let contiguous = format!("--ensure-row-contiguous={contiguous}");
        let (code, stderr) = run_in(
            &dir,
            &[
                "body.metal",
                "--mlx-name",
                "strided",
                "--input-names",
                "inp",
                "--output-names",
                "out,st",
                "--output-dtypes",
                "float32,int64",
                "--output-shapes",
                "128",
                "--output-shapes",
                "2",
                "--grid",
                "128",
                "--threadgroup",
                "64",
                "--input",
                input,
                &contiguous,
                "--out",
                &out,
            ],
        );
        assert_eq!(code, Some(0), "case {i}: {stderr}");
        let (_, got_strides) = load_as::<i64>(&dir.join(&out).join("st.npy"));
        assert_eq!(got_strides, strides, "case {i}");
        let (_, got) = load(&dir.join(&out).join("out.npy"));
        check_close(&format!("case {i}"), &got, &exp_of(want), 1e-6);
    }
}

#[test]
fn scalar_inputs_are_constant_references() {
    let body = "uint i = thread_position_in_grid.x;\nout[i] = inp[i] * alpha + float(beta);\n";
    let dir = scratch("scalars", &[("body.metal", body)]);
    let (code, stderr) = run_in(
        &dir,
        &[
            "body.metal",
            "--mlx-name",
            "axpb",
            "--input-names",
            "inp,alpha,beta",
            "--output-names",
            "out",
            "--output-dtypes",
            "float",
            "--output-shapes",
            "4096",
            "--grid",
            "4096",
            "--threadgroup",
            "256",
            "--input",
            "inp=inp.npy",
            "--input",
            "alpha=2.5",
            "--input",
            "beta={ value = 1.5, dtype = \"float16\" }",
            "--verbose",
            "--out",
            "o",
        ],
    );
    assert_eq!(code, Some(0), "{stderr}");
    assert!(
        stderr.contains(
            "const device float* inp [[buffer(0)]],\n    \
             const constant float& alpha [[buffer(1)]],\n    \
             const constant float16_t& beta [[buffer(2)]],\n    \
             device float* out [[buffer(3)]]"
        ),
        "{stderr}"
    );
    let (_, inp) = example("inp.npy");
    let want: Vec<f64> = inp.iter().map(|&v| f64::from(v) * 2.5 + 1.5).collect();
    let (_, got) = load(&dir.join("o/out.npy"));
    check_close("out", &got, &want, 1e-6);
}

#[test]
fn every_mlx_dtype_is_read_and_named_as_mlx_names_it() {
    let body = "uint i = thread_position_in_grid.x;\n\
                out[i] = float(a[i]) + float(b[i]) + float(c[i]) + float(d[i])\n\
                       + (e[i] ? 1000.0f : 0.0f) + float(f[i]) + float(g[i]);\n\
                whole[i] = int(a[i]) * 2;\n";
    let dir = scratch("dtypes", &[("body.metal", body)]);
    let n = 16usize;
    let a: Vec<i8> = (0..n).map(|i| i as i8 - 8).collect();
    let b: Vec<u16> = (0..n).map(|i| 60000 + i as u16).collect();
    let c: Vec<i64> = (0..n).map(|i| -(1i64 << 40) * i as i64).collect();
    let d: Vec<u64> = (0..n).map(|i| (1u64 << 50) + i as u64).collect();
    let e: Vec<bool> = (0..n).map(|i| i % 3 == 0).collect();
    let f: Vec<half::f16> = (0..n)
        .map(|i| half::f16::from_f32(i as f32 * 0.25))
        .collect();
    let g: Vec<f32> = (0..n).map(|i| 1.0 + i as f32 / 128.0).collect();
    save(&dir.join("a.npy"), &[n as u64], false, &a);
    save(&dir.join("b.npy"), &[n as u64], false, &b);
    save(&dir.join("c.npy"), &[n as u64], false, &c);
    save(&dir.join("d.npy"), &[n as u64], false, &d);
    save(&dir.join("e.npy"), &[n as u64], false, &e);
    save(&dir.join("f.npy"), &[n as u64], false, &f);
    save(&dir.join("g.npy"), &[n as u64], false, &g);
    let mut args = vec![
        "body.metal",
        "--mlx-name",
        "dtypes",
        "--input-names",
        "a,b,c,d,e,f,g",
        "--output-names",
        "out,whole",
        "--output-dtypes",
        "float32,int32",
        "--output-shapes",
        "16",
        "--output-shapes",
        "16",
        "--grid",
        "16",
        "--threadgroup",
        "16",
        "--input",
        "g={ npy = \"g.npy\", dtype = \"bfloat16\" }",
        "--verbose",
        "--out",
        "o",
    ];
    let files: Vec<String> = ["a", "b", "c", "d", "e", "f"]
        .iter()
        .map(|x| format!("{x}={x}.npy"))
        .collect();
    for f in &files {
        args.push("--input");
        args.push(f);
    }
    let (code, stderr) = run_in(&dir, &args);
    assert_eq!(code, Some(0), "{stderr}");
    for decl in [
        "const device int8_t* a",
        "const device uint16_t* b",
        "const device int64_t* c",
        "const device uint64_t* d",
        "const device bool* e",
        "const device float16_t* f",
        "const device bfloat16_t* g",
        "device int32_t* whole",
    ] {
        assert!(stderr.contains(decl), "{decl}: {stderr}");
    }
    let want: Vec<f64> = (0..n)
        .map(|i| {
            let bf = half::bf16::from_f32(g[i]).to_f64();
            f64::from(a[i])
                + f64::from(b[i])
                + c[i] as f64
                + d[i] as f64
                + if e[i] { 1000.0 } else { 0.0 }
                + f[i].to_f64()
                + bf
        })
        .collect();
    let (_, got) = load(&dir.join("o/out.npy"));
    check_close("out", &got, &want, 1e-6);
    let (_, whole) = load_as::<i32>(&dir.join("o/whole.npy"));
    assert_eq!(
        whole,
        a.iter().map(|&v| i32::from(v) * 2).collect::<Vec<_>>()
    );
}
