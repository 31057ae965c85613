//! Output files: what `write_outputs` writes is what NumPy itself writes.

use std::path::{Path, PathBuf};

use metalsim_isa::parse_module;
use metalsim_launch::{ElemType, LaunchSpec, SpecError, read_npy, write_outputs};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/specs/npy")
        .join(name)
}

fn out_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("metalsim-launch-{test}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    dir
}

const SPEC: &str = r#"
kernel = "k"
threads = [4]
threadgroup = [4]

[[buffer]]
index = 0
name = "f32"
type = "float"
init = { npy = "f32.npy" }
output = true

[[buffer]]
index = 1
name = "vec3"
type = "float3"
init = { npy = "f32_2x3.npy" }
output = true

[[buffer]]
index = 2
name = "u8x4"
type = "uchar4"
init = { npy = "u8x4.npy" }
output = true

[[buffer]]
index = 3
name = "bool"
type = "bool"
init = { values = [true, false, true] }
output = true

[[buffer]]
index = 4
name = "bf"
type = "bfloat"
init = { values = [1, 2.5, -3] }
output = true

[[buffer]]
index = 5
name = "hidden"
type = "int"
count = 1
"#;

const KERNEL: &str = r#"kernel k {
  param buffer(0) a device type "float" size 4 align 4
  param buffer(1) b device type "float3" size 16 align 16
  param buffer(2) c device type "uchar4" size 4 align 4
  param buffer(3) d device type "bool" size 1 align 1
  param buffer(4) e device type "bfloat" size 2 align 2
  param buffer(5) f device type "int" size 4 align 4
bb0:
  ret
}
"#;

#[test]
fn outputs_are_byte_identical_to_numpys_files() {
    let spec = LaunchSpec::from_str(SPEC, &fixture(""), "outputs.toml").unwrap();
    let module = parse_module(KERNEL).unwrap();
    let launch = spec.resolve(&module.functions[0], 1 << 20).unwrap();
    let finals: Vec<Vec<u8>> = launch.buffers.iter().map(|b| b.bytes.clone()).collect();
    let dir = out_dir("identical");
    let written = write_outputs(&launch, &finals, &dir).unwrap();
    let names: Vec<String> = written
        .iter()
        .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names,
        ["f32.npy", "vec3.npy", "u8x4.npy", "bool.npy", "bf.npy"]
    );
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    // The padding of float3 is dropped: the output is the (2, 3) array that came in.
    for (ours, numpys) in [
        ("f32.npy", "f32.npy"),
        ("vec3.npy", "f32_2x3.npy"),
        ("u8x4.npy", "u8x4.npy"),
        ("bool.npy", "bool.npy"),
        // bfloat is written as float32; these values are exact in both.
        ("bf.npy", "f32.npy"),
    ] {
        assert_eq!(
            read(ours),
            std::fs::read(fixture(numpys)).unwrap(),
            "{ours}"
        );
    }
    // An independent reader agrees.
    let vec3 = read("vec3.npy");
    let npy = npyz::NpyFile::new(&vec3[..]).unwrap();
    assert_eq!(npy.shape(), &[2, 3]);
    assert_eq!(
        npy.into_vec::<f32>().unwrap(),
        [1.0, 2.0, 3.0, 4.0, 5.0, 6.0]
    );
    let bf = read("bf.npy");
    let npy = npyz::NpyFile::new(&bf[..]).unwrap();
    assert_eq!(npy.into_vec::<f32>().unwrap(), [1.0, 2.5, -3.0]);
    // And they read back as they were.
    let float3 = ElemType::from_msl_name("float3").unwrap();
    assert_eq!(
        read_npy(&dir.join("vec3.npy"), float3).unwrap(),
        (2, launch.buffers[1].bytes.clone())
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn outputs_must_match_the_launch() {
    let spec = LaunchSpec::from_str(SPEC, &fixture(""), "outputs.toml").unwrap();
    let module = parse_module(KERNEL).unwrap();
    let launch = spec.resolve(&module.functions[0], 1 << 20).unwrap();
    let dir = out_dir("mismatch");
    let err = write_outputs(&launch, &[], &dir).unwrap_err();
    assert!(matches!(err, SpecError::Output { .. }));
    assert!(
        err.to_string()
            .ends_with("cannot write the output: 0 final buffers given for 6 bindings")
    );
    let mut finals: Vec<Vec<u8>> = launch.buffers.iter().map(|b| b.bytes.clone()).collect();
    finals[1].pop();
    let err = write_outputs(&launch, &finals, &dir)
        .unwrap_err()
        .to_string();
    assert!(
        err.ends_with(
            "vec3.npy: cannot write the output: buffer 1 (vec3) holds 31 bytes, expected 32"
        ),
        "{err}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}
