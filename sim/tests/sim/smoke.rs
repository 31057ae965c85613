use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

const VECTOR_ADD: &str = r#"file 0 "vadd.metal"
kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) b device readonly type "float" size 4 align 4
  param buffer(2) c device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.0
  v2 = ptradd.4 v1, v0
  v3 = ld.device.f32 v2  @5:10
  v4 = buffer_addr.1
  v5 = ptradd.4 v4, v0
  v6 = ld.device.f32 v5
  v7 = add.f32 v3, v6
  v8 = buffer_addr.2
  v9 = ptradd.4 v8, v0
  st.device.f32 v9, v7  @6:3
  ret
}
"#;

#[test]
fn vector_add() {
    let n = 1000;
    let a: Vec<f32> = (0..n).map(|i| i as f32).collect();
    let b: Vec<f32> = (0..n).map(|i| 2.0 * i as f32).collect();
    let m = module(VECTOR_ADD);
    let l = launch(
        Grid::Threads([n as u32, 1, 1]),
        [256, 1, 1],
        vec![
            buffer(0, "a", Type::F32, f32s(&a)),
            buffer(1, "b", Type::F32, f32s(&b)),
            buffer(2, "c", Type::F32, zeros(4 * n)),
        ],
    );
    let out = run_both(&m, &l);
    let c = as_f32s(&out.buffers[2]);
    for (i, &x) in c.iter().enumerate() {
        assert_eq!(x, 3.0 * i as f32);
    }
    let t = run_timed(&m, &l);
    assert!(t.stats.cycles > 0);
    assert_eq!(out.stats.simdgroups, 32);
    assert_eq!(out.stats.thread_instructions, 12 * n as u64);
}
