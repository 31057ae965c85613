//! `--measured`: a hand-written measurement file (tests/data/measured) compared with the
//! real simulator, end to end through `run_crosscheck`: outputs, times, counters, the
//! table, `results.json` and the plot.

use std::path::{Path, PathBuf};

use metalsim_crosscheck::report::SimCounters;
use metalsim_crosscheck::{Backend, CrosscheckError, Options, Simulated, run_crosscheck};
use metalsim_isa::{Module, parse_module};
use metalsim_launch::{Launch, LaunchSpec};
use metalsim_models::Gpu;
use metalsim_sim::RunOptions;

/// Compiles ISA text files and simulates them on the M1 model.
struct IsaBackend {
    gpu: Gpu,
}

impl Backend for IsaBackend {
    fn compile(&self, kernel: &Path) -> Result<Module, String> {
        let text = std::fs::read_to_string(kernel).map_err(|e| e.to_string())?;
        parse_module(&text).map_err(|e| format!("{e:?}"))
    }

    fn simulate(&self, module: &Module, launch: &Launch) -> Result<Simulated, String> {
        let o = metalsim_sim::run(
            module,
            &launch.kernel,
            launch,
            &self.gpu,
            &RunOptions::default(),
        )
        .map_err(|e| e.to_string())?;
        Ok(Simulated {
            time_us: self.gpu.cycles_to_us(o.stats.cycles),
            buffers: o.buffers,
            counters: SimCounters {
                dram_bytes: Some(o.stats.dram_bytes as f64),
                simd_instructions: Some(o.stats.simd_instructions as f64),
                ..SimCounters::default()
            },
        })
    }

    fn model(&self) -> String {
        self.gpu.name.clone()
    }
}

/// A fresh copy of the fixture folder, with `outputs/dst.npy` holding `src * 2` and
/// element 7 replaced by `wrong_7` when given.
fn fixture(tag: &str, wrong_7: Option<f32>) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/measured");
    let dir = std::env::temp_dir().join(format!(
        "metalsim-crosscheck-measured-{tag}-{}",
        std::process::id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    for f in ["scale2.isa", "scale2.toml", "measured.json"] {
        std::fs::copy(src.join(f), dir.join(f)).unwrap();
    }
    let module = parse_module(&std::fs::read_to_string(dir.join("scale2.isa")).unwrap()).unwrap();
    let spec = LaunchSpec::from_file(&dir.join("scale2.toml")).unwrap();
    let launch = spec
        .resolve(module.function("scale2").unwrap(), 1 << 30)
        .unwrap();
    let mut dst: Vec<u8> = launch.buffers[0]
        .bytes
        .chunks(4)
        .flat_map(|b| (f32::from_le_bytes(b.try_into().unwrap()) * 2.0).to_le_bytes())
        .collect();
    if let Some(w) = wrong_7 {
        dst[28..32].copy_from_slice(&w.to_le_bytes());
    }
    let finals = vec![launch.buffers[0].bytes.clone(), dst];
    metalsim_launch::write_outputs(&launch, &finals, &dir.join("outputs")).unwrap();
    dir
}

fn options(dir: &Path) -> Options {
    Options {
        out: dir.join("out"),
        measured: Some(dir.join("measured.json")),
        only: vec![],
        warmup: 0,
        repeats: 1,
        jobs: 2,
        memory_limit: 1 << 30,
        other_builds: vec![],
    }
}

fn backend() -> IsaBackend {
    IsaBackend {
        gpu: metalsim_models::builtin("m1").unwrap(),
    }
}

/// The rows of `results.json`.
fn rows(dir: &Path) -> Vec<serde_json::Value> {
    let text = std::fs::read_to_string(dir.join("out/results.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["rows"].as_array().unwrap().clone()
}

#[test]
fn a_hand_written_file_gives_the_comparison_table() {
    let dir = fixture("match", None);
    let results = run_crosscheck(&[], &options(&dir), &backend(), &|_| {}).unwrap();
    assert_eq!(results.device, "Apple M1 (hand-written test file)");
    assert!(
        results.table.contains("| scale2 | match | 12.50 |"),
        "{}",
        results.table
    );
    assert!(
        results.table.contains("| scale2_no_outputs | – | 10.00 |"),
        "{}",
        results.table
    );
    let summary = results.summary.expect("two kernels compared");
    assert_eq!(summary.kernels, 2);
    assert_eq!(
        results.counters[0].compared, 0,
        "scale2 moves under 1 MB of DRAM"
    );
    let rows = rows(&dir);
    assert_eq!(rows[0]["outputs_match"], serde_json::json!(true));
    let simulated = rows[0]["simulated_us"].as_f64().unwrap();
    assert!(simulated > 0.0);
    assert_eq!(
        rows[0]["measured"]["dram_bytes_read"],
        serde_json::json!(16384.0)
    );
    assert_eq!(
        rows[0]["measured"]["registers_per_thread"],
        serde_json::json!(18.0)
    );
    assert!(
        results.table.contains("| 18 / – |"),
        "the registers column: {}",
        results.table
    );
    assert!(
        results
            .table
            .contains("| scale2 | Metal -O0 (by hand) | same | 14.00 | – | – | 0.0 | – |"),
        "the builds section: {}",
        results.table
    );
    assert_eq!(
        rows[0]["other_builds"][0]["counters"]["dram_bytes_written"],
        serde_json::json!(20480.0)
    );
    for f in ["table.md", "scatter.png", "scatter.svg"] {
        assert!(dir.join("out").join(f).is_file(), "{f} not written");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_wrong_output_is_reported_as_differing() {
    let dir = fixture("differ", Some(1234.5));
    let results = run_crosscheck(&[], &options(&dir), &backend(), &|_| {}).unwrap();
    assert!(
        results.table.contains("| scale2 | DIFFER |"),
        "{}",
        results.table
    );
    let rows = rows(&dir);
    assert_eq!(rows[0]["outputs_match"], serde_json::json!(false));
    let detail = rows[0]["output_details"][0].as_str().unwrap();
    assert!(detail.starts_with("dst:"), "{detail}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_malformed_file_is_bad_input() {
    let dir = fixture("bad", None);
    std::fs::write(
        dir.join("measured.json"),
        r#"{"format": "metalsim-measurement/1", "device": "x", "kernels": [{"name": "a"}]}"#,
    )
    .unwrap();
    match run_crosscheck(&[], &options(&dir), &backend(), &|_| {}) {
        Err(CrosscheckError::BadInput(m)) => assert!(m.contains("measured.json"), "{m}"),
        other => panic!("expected bad input, got {other:?}"),
    }
    let _ = std::fs::remove_dir_all(&dir);
}
