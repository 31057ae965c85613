//! Launch specs in `tests/data/specs/*.toml`, each resolved against the kernel that its
//! own `# param` comment lines declare (in the ISA text format); the outcome, the
//! resolved buffers or the error, is an insta snapshot in `tests/snapshots/`.
//!
//! A `# memory_limit N` line sets the memory limit (default 1 GiB). Re-bless with
//! `INSTA_UPDATE=always cargo test -p metalsim-launch --test specs`, then read every
//! changed snapshot: the messages are what users see.

use std::fmt::Write;
use std::path::Path;

use half::{bf16, f16};
use metalsim_isa::{Function, Type, parse_module};
use metalsim_launch::{BufferBinding, Launch, LaunchSpec};

/// The kernel `# param` lines declare, named by the spec's own `kernel` key.
fn kernel_of(text: &str, name: &str) -> Function {
    let params: String = text
        .lines()
        .filter_map(|l| l.strip_prefix("# param "))
        .map(|p| format!("  param {p}\n"))
        .collect();
    let isa = format!("kernel {name} {{\n{params}bb0:\n  ret\n}}\n");
    let module = parse_module(&isa).unwrap_or_else(|e| panic!("bad `# param` lines: {e:?}"));
    module.functions.into_iter().next().unwrap()
}

fn memory_limit(text: &str) -> u64 {
    text.lines()
        .find_map(|l| l.strip_prefix("# memory_limit "))
        .map_or(1 << 30, |n| n.trim().parse().unwrap())
}

/// Parses and resolves one spec file; renders the launch or the error.
fn run(path: &Path) -> String {
    let text = std::fs::read_to_string(path).unwrap();
    let spec = match LaunchSpec::from_file(path) {
        Ok(spec) => spec,
        Err(e) => return format!("error: {e}\n"),
    };
    // Name the kernel after the spec, unless a `# kernel` line says otherwise.
    let name = text
        .lines()
        .find_map(|l| l.strip_prefix("# kernel "))
        .unwrap_or(&spec.kernel);
    let kernel = kernel_of(&text, name);
    match spec.resolve(&kernel, memory_limit(&text)) {
        Ok(launch) => render(&launch),
        Err(e) => format!("error: {e}\n"),
    }
}

fn render(l: &Launch) -> String {
    let mut s = String::new();
    let [x, y, z] = l.threadgroup;
    writeln!(
        s,
        "kernel {}: {:?}, threadgroup [{x}, {y}, {z}]",
        l.kernel, l.grid
    )
    .unwrap();
    for b in &l.buffers {
        let out = if b.output { ", output" } else { "" };
        writeln!(
            s,
            "buffer {} ({}): {} x {}{out}, {} bytes",
            b.index,
            b.name,
            b.elem.msl_name(),
            b.count,
            b.bytes.len()
        )
        .unwrap();
        writeln!(s, "  {}", elements(b)).unwrap();
    }
    for t in &l.threadgroup_memory {
        writeln!(s, "threadgroup_memory {}: {} bytes", t.index, t.bytes).unwrap();
    }
    s
}

/// The first elements of a buffer, decoded; vectors in parentheses, padding left out.
fn elements(b: &BufferBinding) -> String {
    const SHOWN: usize = 8;
    let ty = b.elem.scalar;
    let w = ty.bytes() as usize;
    let mut items = Vec::new();
    for e in b.bytes.chunks(b.elem.size() as usize).take(SHOWN) {
        let comps: Vec<String> = e
            .chunks(w)
            .take(b.elem.lanes as usize)
            .map(|c| component(ty, c))
            .collect();
        items.push(if comps.len() == 1 {
            comps[0].clone()
        } else {
            format!("({})", comps.join(", "))
        });
    }
    let mut text = items.join(" ");
    if b.count as usize > SHOWN {
        write!(text, " ... ({} more)", b.count as usize - SHOWN).unwrap();
    }
    text
}

fn component(ty: Type, c: &[u8]) -> String {
    let mut wide = [0u8; 8];
    wide[..c.len()].copy_from_slice(c);
    let u = u64::from_le_bytes(wide);
    let bits = ty.bytes() * 8;
    let signed = || ((u << (64 - bits)) as i64 >> (64 - bits)).to_string();
    match ty {
        Type::Pred => (u != 0).to_string(),
        Type::I8 | Type::I16 | Type::I32 | Type::I64 => signed(),
        Type::U8 | Type::U16 | Type::U32 | Type::U64 => u.to_string(),
        Type::F16 => format!("{:?}", f16::from_bits(u as u16).to_f32()),
        Type::BF16 => format!("{:?}", bf16::from_bits(u as u16).to_f32()),
        Type::F32 => format!("{:?}", f32::from_bits(u as u32)),
    }
}

#[test]
fn specs() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    insta::glob!("data/specs/*.toml", |path| {
        // Messages name the spec as given; give it relative to the crate.
        let relative = path.strip_prefix(root).unwrap();
        // Paths the messages make absolute (a missing `.npy`) are machine-dependent.
        let outcome = run(relative).replace(&root.display().to_string(), "[CRATE]");
        insta::assert_snapshot!(outcome);
    });
}

/// The project's example specs (`examples/*.toml`) are in this format.
#[test]
fn example_specs_parse() {
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples");
    let Ok(entries) = std::fs::read_dir(&examples) else {
        return;
    };
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "toml")
            && let Err(e) = LaunchSpec::from_file(&path)
        {
            panic!("{e}");
        }
    }
}
