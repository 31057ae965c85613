//! Simulator throughput: simulated SIMD-group instructions per second of wall time on the
//! examples and a few heavier kernels, with the timing model on (`full`), on with the
//! profile counted (`profile`), sampled (`sampled`, with its error bound), and off on one
//! and on two worker threads, each against a
//! plain single-threaded Rust implementation of the same computation (the slowdown versus
//! native code is measured in the same run), and the peak memory of each run.
//!
//! `cargo bench -p metalsim-sim --bench throughput` prints a Markdown table (the one in
//! `docs/performance.md`). Environment:
//! - `METALSIM_BENCH=matmul_tiled` runs only the cases whose name contains it;
//! - `METALSIM_BENCH_TIMING=off` (or `full`, `profile`, `sampled`) runs only that timing
//!   mode;
//! - `METALSIM_BENCH_QUICK=1` shrinks the two heavy cases (tiled matrix multiply to
//!   N = 256, the reduction to 1M elements) for a quick look;
//! - `METALSIM_BENCH_REPEAT=n` keeps the best of `n` simulator runs (default 1: the
//!   heavy cases take tens of seconds each).

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Instant;

use metalsim_launch::{Launch, LaunchSpec};
use metalsim_sim::{RunOptions, SamplingPlan, run};

/// One benchmark: a kernel, its launch spec (text, possibly resized) and the native
/// reference, which returns its best compute time in seconds.
struct Case {
    name: &'static str,
    kernel: PathBuf,
    spec: String,
    native: fn(&Launch) -> f64,
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn case(name: &'static str, kernel: &str, spec: &str, native: fn(&Launch) -> f64) -> Case {
    let kernel = root().join(kernel);
    let spec_path = root().join(spec);
    let spec = std::fs::read_to_string(&spec_path)
        .unwrap_or_else(|e| panic!("{}: {e}", spec_path.display()));
    Case {
        name,
        kernel,
        spec,
        native,
    }
}

/// Replaces `from` (which must occur) by `to` in a spec's text.
fn resize(mut c: Case, name: &'static str, edits: &[(&str, &str)]) -> Case {
    for (from, to) in edits {
        assert!(c.spec.contains(from), "{}: no `{from}` to resize", c.name);
        c.spec = c.spec.replace(from, to);
    }
    c.name = name;
    c
}

fn cases(quick: bool) -> Vec<Case> {
    let mut v = vec![
        case(
            "vector_add 1M",
            "examples/vector_add.metal",
            "examples/vector_add.toml",
            native_vector_add,
        ),
        case(
            "brightness 3840x2160",
            "examples/brightness.metal",
            "examples/brightness.toml",
            native_brightness,
        ),
        resize(
            case(
                "",
                "examples/matmul_naive.metal",
                "examples/matmul_naive.toml",
                native_matmul,
            ),
            "matmul_naive N=256",
            &[
                ("threads = [1024, 1024, 1]", "threads = [256, 256, 1]"),
                ("count = 1048576", "count = 65536"),
                ("values = [1024]", "values = [256]"),
            ],
        ),
        case(
            "divergent 1M",
            "sim/benches/kernels/divergent.metal",
            "sim/benches/kernels/divergent.toml",
            native_divergent,
        ),
        case(
            "transpose 2048x2048",
            "sim/benches/kernels/transpose.metal",
            "sim/benches/kernels/transpose.toml",
            native_transpose,
        ),
    ];
    let reduce = case(
        "reduce_sum 16M",
        "examples/reduce_sum.metal",
        "examples/reduce_sum.toml",
        native_reduce,
    );
    let tiled = case(
        "matmul_tiled N=1024",
        "examples/matmul_tiled.metal",
        "examples/matmul_tiled.toml",
        native_matmul,
    );
    if quick {
        v.push(resize(reduce, "reduce_sum 1M", &[("16777216", "1048576")]));
        v.push(resize(
            tiled,
            "matmul_tiled N=256",
            &[
                ("threadgroups = [64, 64, 1]", "threadgroups = [16, 16, 1]"),
                ("count = 1048576", "count = 65536"),
                ("values = [1024]", "values = [256]"),
            ],
        ));
    } else {
        v.push(reduce);
        v.push(tiled);
    }
    v
}

fn f32s(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn u32_at(l: &Launch, index: u32, at: usize) -> u32 {
    let b = &l.buffer(index).expect("bound").bytes;
    u32::from_le_bytes(b[at * 4..at * 4 + 4].try_into().unwrap())
}

/// The best of three timings of `f`.
fn best_of_3(mut f: impl FnMut()) -> f64 {
    (0..3)
        .map(|_| {
            let t = Instant::now();
            f();
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn native_vector_add(l: &Launch) -> f64 {
    let (x, y) = (f32s(&l.buffers[0].bytes), f32s(&l.buffers[1].bytes));
    let mut out = vec![0f32; x.len()];
    best_of_3(|| {
        for ((o, a), b) in out.iter_mut().zip(&x).zip(&y) {
            *o = a + b;
        }
        black_box(&mut out);
    })
}

fn native_brightness(l: &Launch) -> f64 {
    let src = &l.buffer(0).expect("bound").bytes;
    let gain = f32::from_le_bytes(l.buffer(2).expect("bound").bytes[..4].try_into().unwrap());
    let mut dst = vec![0u8; src.len()];
    best_of_3(|| {
        for (d, s) in dst.chunks_exact_mut(4).zip(src.chunks_exact(4)) {
            for i in 0..4 {
                let c = s[i] as f32 / 255.0;
                let c = if i < 3 { (c * gain).clamp(0.0, 1.0) } else { c };
                d[i] = (c * 255.0) as u8;
            }
        }
        black_box(&mut dst);
    })
}

fn native_matmul(l: &Launch) -> f64 {
    let n = u32_at(l, 3, 0) as usize;
    let (a, b) = (f32s(&l.buffers[0].bytes), f32s(&l.buffers[1].bytes));
    let mut c = vec![0f32; n * n];
    best_of_3(|| {
        c.fill(0.0);
        for i in 0..n {
            for k in 0..n {
                let aik = a[i * n + k];
                let (row, brow) = (&mut c[i * n..(i + 1) * n], &b[k * n..(k + 1) * n]);
                for (cij, bkj) in row.iter_mut().zip(brow) {
                    *cij += aik * bkj;
                }
            }
        }
        black_box(&mut c);
    })
}

fn native_reduce(l: &Launch) -> f64 {
    let data = f32s(&l.buffers[0].bytes);
    best_of_3(|| {
        black_box(data.iter().sum::<f32>());
    })
}

fn native_divergent(l: &Launch) -> f64 {
    let n = l.buffers[0].count as u32;
    let mut out = vec![0u32; n as usize];
    best_of_3(|| {
        for (gid, o) in (0..n).zip(out.iter_mut()) {
            let mut x = gid.wrapping_mul(2654435761) ^ (gid >> 3);
            let mut acc = 0u32;
            for _ in 0..x & 31 {
                match x & 3 {
                    0 => acc = acc.wrapping_add(x >> 3),
                    1 => acc ^= x.wrapping_mul(2246822519),
                    _ => acc = acc.rotate_left(1),
                }
                x = x.wrapping_mul(1664525).wrapping_add(1013904223);
            }
            *o = acc;
        }
        black_box(&mut out);
    })
}

fn native_transpose(l: &Launch) -> f64 {
    let (w, h) = (u32_at(l, 2, 0) as usize, u32_at(l, 2, 1) as usize);
    let src = f32s(&l.buffers[0].bytes);
    let mut dst = vec![0f32; w * h];
    best_of_3(|| {
        for y in 0..h {
            for x in 0..w {
                dst[x * h + y] = src[y * w + x];
            }
        }
        black_box(&mut dst);
    })
}

/// Peak resident memory since the last [`reset_peak`], in bytes (`None` where `/proc`
/// does not say).
fn peak_rss() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

/// Resets the peak resident memory to the current (Linux: `5` to `clear_refs`); whether
/// it could.
fn reset_peak() -> bool {
    std::fs::write("/proc/self/clear_refs", "5").is_ok()
}

fn mb(bytes: u64) -> String {
    format!("{:.0}", bytes as f64 / (1 << 20) as f64)
}

fn main() {
    let only = std::env::var("METALSIM_BENCH").unwrap_or_default();
    let timing_only = std::env::var("METALSIM_BENCH_TIMING").unwrap_or_default();
    let quick = std::env::var("METALSIM_BENCH_QUICK").is_ok_and(|v| v != "0");
    let repeat: usize = std::env::var("METALSIM_BENCH_REPEAT")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(1)
        .max(1);
    let gpu = metalsim_models::builtin("m1").expect("m1 is built in");
    let mut peak_note = "";
    println!(
        "| kernel | timing | workers | SIMD-group instructions | wall s | M instr/s | native s | slowdown vs native | peak RSS MB | buffers MB |"
    );
    println!("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for c in cases(quick) {
        if !c.name.contains(&only) {
            continue;
        }
        let text = std::fs::read_to_string(&c.kernel)
            .unwrap_or_else(|e| panic!("{}: {e}", c.kernel.display()));
        let (module, diags, sources) =
            metalsim_frontend::compile_str(&c.kernel.display().to_string(), &text);
        let module = module
            .unwrap_or_else(|| panic!("{}", metalsim_frontend::render(&diags, &sources, false)));
        let spec = LaunchSpec::from_str(&c.spec, &root(), c.name).unwrap();
        let function = module.function(&spec.kernel).expect("the spec's kernel");
        let launch = spec.resolve(function, 16 << 30).unwrap();
        let buffer_bytes: u64 = launch.buffers.iter().map(|b| b.bytes.len() as u64).sum();
        let native = (c.native)(&launch);
        for (mode, timing, profile, sampled, workers) in [
            ("full", true, false, false, 1),
            ("profile", true, true, false, 1),
            ("sampled", true, false, true, 1),
            ("off", false, false, false, 1),
            ("off", false, false, false, 2),
        ] {
            if !timing_only.is_empty() && timing_only != mode {
                continue;
            }
            let opts = RunOptions {
                timing,
                profile,
                workers,
                sampling: sampled.then(SamplingPlan::default),
                ..RunOptions::default()
            };
            if !reset_peak() {
                peak_note =
                    "\n(peak RSS could not be reset between runs: it is the process's peak so far)";
            }
            let mut secs = f64::INFINITY;
            let mut out = None;
            for _ in 0..repeat {
                let start = Instant::now();
                let o = run(&module, &spec.kernel, &launch, &gpu, &opts).unwrap();
                secs = secs.min(start.elapsed().as_secs_f64());
                out = Some(o);
            }
            let out = out.expect("ran at least once");
            assert!(out.fault.is_none(), "{}: {:?}", c.name, out.fault);
            let n = out.stats.simd_instructions;
            let error_bound = out.sampling.as_ref().map_or(String::new(), |s| {
                format!(
                    " ±{:.1}%",
                    100.0 * s.bound_cycles as f64 / out.stats.cycles.max(1) as f64
                )
            });
            println!(
                "| {} | {mode}{error_bound} | {workers} | {n} | {secs:.2} | {:.2} | {native:.4} | {:.0}x | {} | {} |",
                c.name,
                n as f64 / secs / 1e6,
                secs / native.max(1e-9),
                peak_rss().map_or("?".into(), mb),
                mb(buffer_bytes),
            );
        }
    }
    print!("{peak_note}");
    println!();
}
