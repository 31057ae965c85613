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
            "spec.toml:8:1: `float4` is not a scalar MSL type",
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
