//! The H100 cross-check model (models/chips/h100.toml) loads, and every figure in it
//! names its source, as the built-in models must.

use std::path::Path;

use metalsim_models::Gpu;

#[test]
fn the_h100_model_loads_with_a_source_for_every_figure() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../models/chips/h100.toml");
    let gpu = Gpu::from_toml_file(&path).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(gpu.name, "h100");
    assert_eq!(gpu.cores, 132);
    let figures = gpu.figure_paths();
    for f in &figures {
        let src = gpu.sources.get(f);
        assert!(
            src.is_some_and(|s| !s.trim().is_empty()),
            "figure `{f}` has no source"
        );
    }
    for key in gpu.sources.keys() {
        assert!(figures.contains(key), "source `{key}` names no figure");
    }
}
