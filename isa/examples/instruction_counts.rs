//! Instruction counts of the example kernels (`examples/*.metal` with their launch specs)
//! as the frontend lowers them and after `metalsim_isa::optimize`:
//!
//! - static: instructions and terminators of the kernel's reachable blocks, constants
//!   left out (the simulator hoists them, they never issue);
//! - dynamic: SIMD-group instructions issued by a run of the example's launch spec (the
//!   `simd_instructions` of the report), and with `--timing` the simulated cycles.
//!
//! ```text
//! cargo run --release -p metalsim-isa --example instruction_counts -- [--matmul-n N] [--timing] [--isa]
//! ```
//!
//! `--matmul-n N` runs the two matrix multiplications at N x N instead of the specs'
//! 1024 x 1024 (a multiple of 16; instruction counts scale as N^3, so N = 256 gives the
//! same ratio 64 times faster). `--isa` prints each kernel's optimized ISA.

use std::path::{Path, PathBuf};
use std::time::Instant;

use metalsim_isa::{Cfg, Function, Module, Op, optimize, verify_function};
use metalsim_launch::LaunchSpec;
use metalsim_sim::RunOptions;

const EXAMPLES: [&str; 5] = [
    "vector_add",
    "brightness",
    "reduce_sum",
    "matmul_naive",
    "matmul_tiled",
];

/// Instructions the simulator can issue: every placed non-constant instruction and every
/// terminator of a reachable block.
fn static_count(f: &Function) -> usize {
    let cfg = Cfg::new(f);
    f.block_ids()
        .filter(|&b| cfg.is_reachable(b))
        .map(|b| {
            let data = f.block(b);
            1 + data
                .insts
                .iter()
                .filter(|&&i| !matches!(f.inst(i).op, Op::Const(_)))
                .count()
        })
        .sum()
}

/// The spec text with the matrix size changed from 1024 to `n`.
fn resize_matmul(spec: &str, n: u32) -> Result<String, String> {
    let edits = [
        ("count = 1048576".to_string(), format!("count = {}", n * n)),
        (
            "threadgroups = [64, 64, 1]".to_string(),
            format!("threadgroups = [{0}, {0}, 1]", n / 16),
        ),
        (
            "threads = [1024, 1024, 1]".to_string(),
            format!("threads = [{n}, {n}, 1]"),
        ),
        ("values = [1024]".to_string(), format!("values = [{n}]")),
    ];
    let mut out = spec.to_string();
    let mut changed = 0;
    for (from, to) in &edits {
        if out.contains(from.as_str()) {
            out = out.replace(from.as_str(), to);
            changed += 1;
        }
    }
    if changed < 3 {
        return Err("the matmul spec no longer has the 1024 x 1024 shape this tool edits".into());
    }
    Ok(out)
}

struct Options {
    matmul_n: Option<u32>,
    timing: bool,
    print_isa: bool,
}

fn parse_args() -> Result<Options, String> {
    let mut o = Options {
        matmul_n: None,
        timing: false,
        print_isa: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--matmul-n" => {
                let n: u32 = args
                    .next()
                    .and_then(|v| v.parse().ok())
                    .ok_or("--matmul-n needs a number")?;
                if n == 0 || !n.is_multiple_of(16) {
                    return Err("--matmul-n must be a positive multiple of 16".into());
                }
                o.matmul_n = Some(n);
            }
            "--timing" => o.timing = true,
            "--isa" => o.print_isa = true,
            other => return Err(format!("unknown argument `{other}`")),
        }
    }
    Ok(o)
}

fn main() {
    let options = parse_args().unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2);
    });
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples");
    println!(
        "| kernel | static before | static after | dynamic before | dynamic after | after/before |{}",
        if options.timing {
            " cycles before | cycles after |"
        } else {
            ""
        }
    );
    println!(
        "|---|---|---|---|---|---|{}",
        if options.timing { "---|---|" } else { "" }
    );
    for name in EXAMPLES {
        if let Err(e) = report(&root, name, &options) {
            eprintln!("error: {name}: {e}");
            std::process::exit(1);
        }
    }
}

fn report(root: &Path, name: &str, options: &Options) -> Result<(), String> {
    let read = |ext: &str| {
        let path = root.join(format!("{name}.{ext}"));
        std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))
    };
    let src = read("metal")?;
    let mut spec_text = read("toml")?;
    let mut label = name.to_string();
    if let (Some(n), true) = (options.matmul_n, name.starts_with("matmul")) {
        spec_text = resize_matmul(&spec_text, n)?;
        label = format!("{name} (N = {n})");
    }
    let (module, diags, sources) = metalsim_frontend::compile_str(&format!("{name}.metal"), &src);
    let base = module.ok_or_else(|| metalsim_frontend::render(&diags, &sources, false))?;
    let mut opt: Module = base.clone();
    for f in &mut opt.functions {
        optimize(f);
        verify_function(f, base.data.len()).map_err(|e| e.to_string())?;
    }
    let spec = LaunchSpec::from_str(&spec_text, root, name).map_err(|e| e.to_string())?;
    let kernel = spec.kernel.clone();
    let f = base
        .function(&kernel)
        .ok_or("the spec's kernel is missing")?;
    let launch = spec.resolve(f, 8 << 30).map_err(|e| e.to_string())?;
    let gpu = metalsim_models::builtin("m1").map_err(|e| e.to_string())?;
    let run_options = RunOptions {
        timing: options.timing,
        ..RunOptions::default()
    };
    let mut dynamic = Vec::new();
    for m in [&base, &opt] {
        let start = Instant::now();
        let out = metalsim_sim::run(m, &kernel, &launch, &gpu, &run_options)
            .map_err(|e| e.to_string())?;
        if let Some(fault) = out.fault {
            return Err(format!("the kernel faulted: {fault}"));
        }
        eprintln!("{label}: ran in {:.1?}", start.elapsed());
        dynamic.push(out);
    }
    // With timing, threadgroups finish in a different order once the code is shorter, and
    // reduce_sum's float atomics round in that order.
    let order_dependent = options.timing && name == "reduce_sum";
    if dynamic[0].buffers != dynamic[1].buffers && !order_dependent {
        return Err("optimized outputs differ".into());
    }
    let statics = [&base, &opt].map(|m| m.function(&kernel).map_or(0, static_count));
    let (d0, d1) = (
        dynamic[0].stats.simd_instructions,
        dynamic[1].stats.simd_instructions,
    );
    let mut line = format!(
        "| {label} | {} | {} | {d0} | {d1} | {:.3} |",
        statics[0],
        statics[1],
        d1 as f64 / d0 as f64
    );
    if options.timing {
        line += &format!(
            " {} | {} |",
            dynamic[0].stats.cycles, dynamic[1].stats.cycles
        );
    }
    println!("{line}");
    if options.print_isa
        && let Some(f) = opt.function(&kernel)
    {
        eprintln!("{f}");
    }
    Ok(())
}
