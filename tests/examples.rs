//! Every example kernel, at sizes that exercise partial threadgroups and tiles, against a
//! CPU reference computed here from the same inputs.

mod common;

use common::{f32s, run};

#[test]
fn vector_add_matches_cpu() {
    let n = 1000;
    let spec = format!(
        r#"
kernel = "vector_add"
threads = [{n}, 1, 1]
threadgroup = [256, 1, 1]
[[buffer]]
index = 0
name = "x"
type = "float"
count = {n}
init = {{ random = "uniform", min = -10.0, max = 10.0, seed = 3 }}
[[buffer]]
index = 1
name = "y"
type = "float"
count = {n}
init = {{ random = "uniform", min = -10.0, max = 10.0, seed = 4 }}
[[buffer]]
index = 2
name = "out"
type = "float"
count = {n}
output = true
[[buffer]]
index = 3
name = "n"
type = "uint"
init = {{ values = [{n}] }}
"#
    );
    for timing in [true, false] {
        let (launch, out) = run("examples/vector_add.metal", &spec, timing);
        let (x, y) = (
            f32s(&launch.buffers[0].bytes),
            f32s(&launch.buffers[1].bytes),
        );
        let got = f32s(&out.buffers[2]);
        for i in 0..n {
            assert_eq!(got[i], x[i] + y[i], "element {i}");
        }
    }
}

fn matmul_spec(kernel: &str, n: u32, tiled: bool) -> String {
    let grid = if tiled {
        let g = n.div_ceil(16);
        format!("threadgroups = [{g}, {g}, 1]")
    } else {
        format!("threads = [{n}, {n}, 1]")
    };
    let tg = if tiled {
        "[[threadgroup_memory]]\nindex = 0\nbytes = 1024\n[[threadgroup_memory]]\nindex = 1\nbytes = 1024\n"
    } else {
        ""
    };
    let nn = n * n;
    format!(
        r#"
kernel = "{kernel}"
{grid}
threadgroup = [16, 16, 1]
[[buffer]]
index = 0
name = "A"
type = "float"
count = {nn}
init = {{ random = "uniform", min = 0.0, max = 1.0, seed = 1 }}
[[buffer]]
index = 1
name = "B"
type = "float"
count = {nn}
init = {{ random = "uniform", min = 0.0, max = 1.0, seed = 2 }}
[[buffer]]
index = 2
name = "C"
type = "float"
count = {nn}
output = true
[[buffer]]
index = 3
name = "N"
type = "uint"
init = {{ values = [{n}] }}
{tg}"#
    )
}

/// C = A B with one fused multiply-add per k in ascending order, as both kernels do
/// (Metal contracts `acc += a * b` into an FMA), so the results match bit for bit.
fn matmul_reference(a: &[f32], b: &[f32], n: usize) -> Vec<f32> {
    let mut c = vec![0.0f32; n * n];
    for r in 0..n {
        for col in 0..n {
            let mut acc = 0.0f32;
            for k in 0..n {
                acc = a[r * n + k].mul_add(b[k * n + col], acc);
            }
            c[r * n + col] = acc;
        }
    }
    c
}

#[test]
fn matmul_naive_matches_cpu() {
    let n = 37;
    let (launch, out) = run(
        "examples/matmul_naive.metal",
        &matmul_spec("matmul_naive", n, false),
        true,
    );
    let want = matmul_reference(
        &f32s(&launch.buffers[0].bytes),
        &f32s(&launch.buffers[1].bytes),
        n as usize,
    );
    assert_eq!(f32s(&out.buffers[2]), want);
}

#[test]
fn matmul_tiled_matches_cpu_with_partial_tiles() {
    let n = 40;
    let (launch, out) = run(
        "examples/matmul_tiled.metal",
        &matmul_spec("matmul_tiled", n, true),
        true,
    );
    let want = matmul_reference(
        &f32s(&launch.buffers[0].bytes),
        &f32s(&launch.buffers[1].bytes),
        n as usize,
    );
    assert_eq!(f32s(&out.buffers[2]), want);
}

// The reduction's shuffle tree assumes whole SIMD-groups (a shuffle from a lane that does
// not exist is undefined in Metal), so these dispatch whole threadgroups and let the
// `gid < count` guard pad with zeros, as the guide's host code does.
#[test]
fn reduce_sum_matches_cpu() {
    let n = 5000;
    let groups = n / 256 + 1;
    let spec = format!(
        r#"
kernel = "reduce_sum"
threadgroups = [{groups}, 1, 1]
threadgroup = [256, 1, 1]
[[buffer]]
index = 0
name = "data"
type = "float"
count = {n}
init = {{ random = "uniform", min = 0.0, max = 1.0, seed = 9 }}
[[buffer]]
index = 1
name = "total"
type = "float"
count = 1
output = true
[[buffer]]
index = 2
name = "count"
type = "uint"
init = {{ values = [{n}] }}
[[threadgroup_memory]]
index = 0
bytes = 32
"#
    );
    let (launch, out) = run("examples/reduce_sum.metal", &spec, true);
    let data = f32s(&launch.buffers[0].bytes);
    let want: f64 = data.iter().map(|x| *x as f64).sum();
    let got = f32s(&out.buffers[1])[0] as f64;
    assert!((got - want).abs() < 1e-4 * want, "got {got}, want {want}");
}

#[test]
fn reduce_sum_of_ones_is_exact() {
    let n = 4096 + 77;
    let groups = n / 1024 + 1;
    let spec = format!(
        r#"
kernel = "reduce_sum"
threadgroups = [{groups}, 1, 1]
threadgroup = [1024, 1, 1]
[[buffer]]
index = 0
name = "data"
type = "float"
count = {n}
init = {{ fill = 1.0 }}
[[buffer]]
index = 1
name = "total"
type = "float"
count = 1
output = true
[[buffer]]
index = 2
name = "count"
type = "uint"
init = {{ values = [{n}] }}
[[threadgroup_memory]]
index = 0
bytes = 128
"#
    );
    let (_, out) = run("examples/reduce_sum.metal", &spec, false);
    assert_eq!(f32s(&out.buffers[1])[0], n as f32);
}

#[test]
fn brightness_matches_cpu() {
    let (w, h) = (37u32, 23u32);
    let n = w * h;
    let spec = format!(
        r#"
kernel = "brightness"
threads = [{w}, {h}, 1]
threadgroup = [8, 8, 1]
[[buffer]]
index = 0
name = "src"
type = "uchar4"
count = {n}
init = {{ random = "uniform", min = 0, max = 255, seed = 5 }}
[[buffer]]
index = 1
name = "dst"
type = "uchar4"
count = {n}
output = true
[[buffer]]
index = 2
name = "gain"
type = "float"
init = {{ values = [1.5] }}
[[buffer]]
index = 3
name = "size"
type = "uint2"
init = {{ values = [{w}, {h}] }}
"#
    );
    let (launch, out) = run("examples/brightness.metal", &spec, true);
    let src = &launch.buffers[0].bytes;
    let dst = &out.buffers[1];
    for (i, (s, d)) in src.chunks(4).zip(dst.chunks(4)).enumerate() {
        let mut c: Vec<f32> = s.iter().map(|v| *v as f32 / 255.0f32).collect();
        for ch in c.iter_mut().take(3) {
            *ch = (*ch * 1.5f32).clamp(0.0, 1.0);
        }
        // float -> uchar truncates toward zero and saturates.
        let want: Vec<u8> = c.iter().map(|v| (v * 255.0f32) as u8).collect();
        assert_eq!(d, &want[..], "pixel {i}");
    }
}
