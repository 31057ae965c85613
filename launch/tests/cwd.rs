//! `.npy` paths resolve against the spec file's folder, whatever the working folder is.
//!
//! Alone in its test binary because it changes the process's working folder.

use std::path::Path;

use metalsim_isa::parse_module;
use metalsim_launch::LaunchSpec;

const SPEC: &str = r#"
kernel = "k"
threads = [4]
threadgroup = [4]

[[buffer]]
index = 0
name = "a"
type = "float"
init = { npy = "npy/f32.npy" }
"#;

#[test]
fn npy_paths_follow_the_spec_file_not_the_working_folder() {
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/specs/npy/f32.npy");
    // root/specs/launch.toml beside root/specs/npy/f32.npy; root/elsewhere is empty.
    let root = std::env::temp_dir().join(format!("metalsim-cwd-{}", std::process::id()));
    let specs = root.join("specs");
    let elsewhere = root.join("elsewhere");
    std::fs::create_dir_all(specs.join("npy")).unwrap();
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(&fixture, specs.join("npy/f32.npy")).unwrap();
    std::fs::write(specs.join("launch.toml"), SPEC).unwrap();
    std::fs::write(elsewhere.join("launch.toml"), SPEC).unwrap();

    let module = parse_module(
        "kernel k {\n  param buffer(0) a device type \"float\" size 4 align 4\nbb0:\n  ret\n}\n",
    )
    .unwrap();
    let kernel = &module.functions[0];
    let expected: Vec<u8> = [1.0f32, 2.5, -3.0]
        .iter()
        .flat_map(|x| x.to_le_bytes())
        .collect();
    let check = |spec: LaunchSpec| {
        let launch = spec.resolve(kernel, 1 << 20).unwrap();
        assert_eq!(launch.buffers[0].bytes, expected);
    };

    // By absolute path, from a folder that is not the spec's.
    std::env::set_current_dir(&elsewhere).unwrap();
    check(LaunchSpec::from_file(&specs.join("launch.toml")).unwrap());

    // By a path relative to the working folder.
    std::env::set_current_dir(&root).unwrap();
    let spec = LaunchSpec::from_file(Path::new("specs/launch.toml")).unwrap();
    // Moving elsewhere between reading and resolving changes nothing.
    std::env::set_current_dir(&elsewhere).unwrap();
    check(spec);
    check(LaunchSpec::from_file(Path::new("../specs/launch.toml")).unwrap());

    // From the spec's own folder, by its bare name.
    std::env::set_current_dir(&specs).unwrap();
    check(LaunchSpec::from_file(Path::new("launch.toml")).unwrap());

    // The same spec in another folder does not find the file, though the working
    // folder has it.
    let err = LaunchSpec::from_file(&elsewhere.join("launch.toml"))
        .unwrap()
        .resolve(kernel, 1 << 20)
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot open"), "{err}");

    std::env::set_current_dir(std::env::temp_dir()).unwrap();
    std::fs::remove_dir_all(&root).unwrap();
}
