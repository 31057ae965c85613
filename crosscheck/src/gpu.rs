//! The NVIDIA side: whether a GPU and its tools are here, building a generated program
//! with nvcc, running it, and reading Nsight Compute's counters.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use crate::measurement::Counters;

/// The nvcc flags of every build: Hopper code, and no contraction of `a * b + c` (the
/// ISA already says where Metal fuses).
pub const NVCC_FLAGS: &[&str] = &["-O3", "-arch=sm_90", "--fmad=false", "-std=c++17", "-w"];

/// A build of a kernel besides the main one: the same generated CUDA, with `flags`
/// added to [`NVCC_FLAGS`].
#[derive(Clone, Debug, PartialEq)]
pub struct BuildVariant {
    /// What differs, as the table names it (`ptxas -O1`).
    pub label: String,
    /// The nvcc flags added.
    pub flags: Vec<String>,
}

/// The builds `--compiler-spread` adds: ptxas (the back end, which schedules the machine
/// code and allocates its registers) at -O1 and at -O0. nvcc's front end stays at -O3,
/// so the PTX is the main build's; docs/validation.md ("Probe 26") shows that the
/// outputs stay bit for bit the same while DRAM bytes move by up to 3.5 times.
pub fn ptxas_spread() -> Vec<BuildVariant> {
    ["1", "0"]
        .iter()
        .map(|level| BuildVariant {
            label: format!("ptxas -O{level}"),
            flags: vec![format!("--ptxas-options=-O{level}")],
        })
        .collect()
}

/// The Nsight Compute metrics read for each kernel, and the counter each fills.
pub const NCU_METRICS: &[(&str, &str)] = &[
    ("gpu__time_duration.sum", "profiler_duration_us"),
    (
        "sm__warps_active.avg.pct_of_peak_sustained_active",
        "achieved_occupancy",
    ),
    ("dram__bytes_read.sum", "dram_bytes_read"),
    ("dram__bytes_write.sum", "dram_bytes_written"),
    ("lts__t_sector_hit_rate.pct", "l2_hit_rate"),
    (
        "smsp__thread_inst_executed_per_inst_executed.ratio",
        "simd_efficiency",
    ),
    (
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum",
        "bank_conflicts",
    ),
    ("smsp__inst_executed.sum", "simd_instructions"),
    ("launch__registers_per_thread", "registers_per_thread"),
];

/// The tools found on `PATH`.
#[derive(Clone, Debug)]
pub struct Toolchain {
    /// `nvcc`.
    pub nvcc: PathBuf,
    /// `ncu`, when present.
    pub ncu: Option<PathBuf>,
}

/// Finds `nvcc` and `nvidia-smi` (both needed) and `ncu` (optional) on `PATH`; says
/// which are missing otherwise.
pub fn find_toolchain() -> Result<Toolchain, String> {
    let nvcc = which("nvcc");
    let smi = which("nvidia-smi");
    match (nvcc, smi) {
        (Some(nvcc), Some(_)) => Ok(Toolchain {
            nvcc,
            ncu: which("ncu"),
        }),
        (nvcc, smi) => {
            let missing: Vec<&str> = [("nvcc", nvcc.is_none()), ("nvidia-smi", smi.is_none())]
                .iter()
                .filter(|(_, m)| *m)
                .map(|(n, _)| *n)
                .collect();
            Err(format!(
                "no NVIDIA GPU here: {} not found on PATH. `metalsim crosscheck` builds and runs \
                 the CUDA versions of the kernels on an NVIDIA GPU; elsewhere, compare a \
                 measurement file with `--measured FILE`",
                missing.join(" and ")
            ))
        }
    }
}

fn which(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Starts nvcc on `kernel.cu` with `extra` flags after [`NVCC_FLAGS`], producing
/// `kernel` beside it (the caller waits, so that several builds run at once).
pub fn start_build(tools: &Toolchain, cu: &Path, extra: &[String]) -> std::io::Result<Child> {
    Command::new(&tools.nvcc)
        .args(NVCC_FLAGS)
        .args(extra)
        .arg("-o")
        .arg(cu.with_extension(""))
        .arg(cu)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
}

/// Runs a built program over its bundle folder with the timing flags; returns its
/// stderr on failure.
pub fn run_program(exe: &Path, dir: &Path, warmup: u32, repeats: u32) -> Result<(), String> {
    let out = Command::new(exe)
        .arg(dir)
        .args([
            "--warmup",
            &warmup.to_string(),
            "--repeats",
            &repeats.to_string(),
        ])
        .output()
        .map_err(|e| format!("cannot run {}: {e}", exe.display()))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{} failed ({}): {}",
            exe.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

/// Profiles one launch of a built program with Nsight Compute (clocks left as the card
/// has them: `--clock-control none`); returns the counters and ncu's raw CSV.
pub fn profile(ncu: &Path, exe: &Path, dir: &Path) -> Result<(Counters, String), String> {
    let metrics: Vec<&str> = NCU_METRICS.iter().map(|(m, _)| *m).collect();
    let out = Command::new(ncu)
        .args([
            "--csv",
            "--print-units",
            "base",
            "--clock-control",
            "none",
            "--metrics",
        ])
        .arg(metrics.join(","))
        .arg(exe)
        .arg(dir)
        .arg("--once")
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ncu.display()))?;
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    if !out.status.success() {
        return Err(format!(
            "ncu failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let csv: String = stdout
        .lines()
        .filter(|l| l.starts_with('"'))
        .map(|l| format!("{l}\n"))
        .collect();
    let counters = parse_ncu_csv(&csv)?;
    Ok((counters, csv))
}

/// Reads the counters out of `ncu --csv --print-units base` output (one kernel).
pub fn parse_ncu_csv(text: &str) -> Result<Counters, String> {
    let mut reader = csv::ReaderBuilder::new().from_reader(text.as_bytes());
    let headers = reader
        .headers()
        .map_err(|e| format!("ncu printed no CSV header: {e}"))?
        .clone();
    let col = |name: &str| {
        headers
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| format!("ncu's CSV has no `{name}` column"))
    };
    let (name_col, unit_col, value_col) = (
        col("Metric Name")?,
        col("Metric Unit")?,
        col("Metric Value")?,
    );
    let mut c = Counters::default();
    let mut seen = 0;
    for row in reader.records() {
        let row = row.map_err(|e| format!("bad CSV from ncu: {e}"))?;
        let (Some(name), Some(unit), Some(value)) =
            (row.get(name_col), row.get(unit_col), row.get(value_col))
        else {
            continue;
        };
        let Ok(x) = value.replace(',', "").parse::<f64>() else {
            continue;
        };
        let Some((_, field)) = NCU_METRICS.iter().find(|(m, _)| *m == name) else {
            continue;
        };
        seen += 1;
        let slot = match *field {
            "profiler_duration_us" => {
                c.profiler_duration_us = Some(to_us(x, unit));
                continue;
            }
            "achieved_occupancy" => &mut c.achieved_occupancy,
            "dram_bytes_read" => &mut c.dram_bytes_read,
            "dram_bytes_written" => &mut c.dram_bytes_written,
            "l2_hit_rate" => &mut c.l2_hit_rate,
            "simd_efficiency" => &mut c.simd_efficiency,
            "bank_conflicts" => &mut c.bank_conflicts,
            "registers_per_thread" => &mut c.registers_per_thread,
            _ => &mut c.simd_instructions,
        };
        // Nsight Compute's percentages can overshoot 100 by rounding (an L2 hit rate of
        // 100.37% was seen); a fraction is at most 1.
        *slot = Some(match *field {
            "achieved_occupancy" | "l2_hit_rate" => (x / 100.0).min(1.0),
            "simd_efficiency" => (x / 32.0).min(1.0),
            "registers_per_thread" => x,
            _ => x * byte_scale(unit),
        });
    }
    if seen == 0 {
        return Err("ncu reported none of the requested metrics".into());
    }
    Ok(c)
}

fn to_us(x: f64, unit: &str) -> f64 {
    match unit {
        "nsecond" | "ns" => x / 1e3,
        "msecond" | "ms" => x * 1e3,
        "second" | "s" => x * 1e6,
        _ => x,
    }
}

fn byte_scale(unit: &str) -> f64 {
    match unit {
        "Kbyte" | "KB" => 1e3,
        "Mbyte" | "MB" => 1e6,
        "Gbyte" | "GB" => 1e9,
        _ => 1.0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncu_csv_becomes_counters() {
        let csv = r#""ID","Process ID","Process Name","Host Name","Kernel Name","Context","Stream","Block Size","Grid Size","Device","CC","Section Name","Metric Name","Metric Unit","Metric Value"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_read.sum","byte","4,194,304"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","dram__bytes_write.sum","Kbyte","4,096"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","gpu__time_duration.sum","nsecond","5,120"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","lts__t_sector_hit_rate.pct","%","100.37"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","sm__warps_active.avg.pct_of_peak_sustained_active","%","80"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","smsp__thread_inst_executed_per_inst_executed.ratio","","32"
"0","1","kernel","h","ms_kernel_copy","1","7","(256, 1, 1)","(4096, 1, 1)","0","9.0","Command line profiler metrics","launch__registers_per_thread","register/thread","18"
"#;
        let c = parse_ncu_csv(csv).unwrap();
        assert_eq!(c.dram_bytes_read, Some(4_194_304.0));
        assert_eq!(c.dram_bytes_written, Some(4_096_000.0));
        assert_eq!(c.profiler_duration_us, Some(5.12));
        assert_eq!(c.l2_hit_rate, Some(1.0));
        assert_eq!(c.achieved_occupancy, Some(0.8));
        assert_eq!(c.simd_efficiency, Some(1.0));
        assert_eq!(c.bank_conflicts, None);
        assert_eq!(c.registers_per_thread, Some(18.0));
    }

    #[test]
    fn ncu_output_without_metrics_is_an_error() {
        let csv = "\"ID\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n";
        assert!(
            parse_ncu_csv(csv)
                .unwrap_err()
                .contains("none of the requested")
        );
        assert!(
            parse_ncu_csv("\"ID\"\n")
                .unwrap_err()
                .contains("no `Metric Name` column")
        );
    }
}
