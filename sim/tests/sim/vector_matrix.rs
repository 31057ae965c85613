//! Vector loads and stores (`ld.x4`, `st.x2`...) and SIMD-group 8x8 matrices
//! (`matrix_load`, `matrix_store`, `matrix_mac`), checked against CPU references.

use half::f16;
use metalsim_isa::{Type, matrix_element};
use metalsim_launch::Grid;
use metalsim_sim::FaultKind;

use crate::common::*;

const VECTOR_COPY: &str = include_str!("../data/vector_copy.isa");
const MATRIX_MAC: &str = include_str!("../data/matrix_mac.isa");

/// Runs `vector_copy.isa` over `threads` threads with `a` holding `a_len` floats `0, 1,
/// 2...` and the given element offset.
fn vector_copy(threads: u32, a_len: usize, offset: u32) -> metalsim_sim::RunOutcome {
    let a: Vec<f32> = (0..a_len).map(|i| i as f32).collect();
    let l = launch(
        Grid::Threads([threads, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "a", Type::F32, f32s(&a)),
            buffer(1, "out", Type::F32, f32s(&vec![-1.0; 4 * threads as usize])),
            buffer(2, "offset", Type::U32, u32s(&[offset])),
        ],
    );
    let m = module(VECTOR_COPY);
    let f = run_functional(&m, &l);
    let t = run_timed(&m, &l);
    assert_eq!(f.buffers, t.buffers, "timing changed the results");
    assert_eq!(f.fault, t.fault);
    f
}

#[test]
fn vector_load_and_store_move_consecutive_elements() {
    let out = vector_copy(64, 256, 0);
    assert_eq!(out.fault, None);
    let got = as_f32s(&out.buffers[1]);
    for t in 0..64 {
        for i in 0..4 {
            assert_eq!(got[4 * t + i], 2.0 * (4 * t + 3 - i) as f32, "thread {t}");
        }
    }
    // One load and one store of 16 bytes per lane.
    assert_eq!(out.stats.device_bytes_read, 64 * 16 + 64 * 4);
    assert_eq!(out.stats.device_bytes_written, 64 * 16);
}

#[test]
fn vector_load_needs_element_alignment_only() {
    // Offset 1: every vector starts 4 bytes past a 16-byte boundary, which is fine for
    // four f32 elements.
    let out = vector_copy(32, 129, 1);
    assert_eq!(out.fault, None);
    assert_eq!(as_f32s(&out.buffers[1])[..4], [8.0, 6.0, 4.0, 2.0]);
}

#[test]
fn vector_load_past_the_end_faults_at_the_first_lane_whose_last_element_is_outside() {
    // `a` has 4 * 20 + 2 elements: thread 20 reads elements 80..84, of which 82 and 83
    // are past the end.
    let out = vector_copy(32, 82, 0);
    let f = out.fault.expect("a fault");
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert_eq!((f.thread, f.lane), ([20, 0, 0], 20));
    assert_eq!(f.buffer.as_deref(), Some("a"));
    assert_eq!(f.offset, Some(82 * 4));
    assert_eq!(f.location, "vector.metal:7:20");
    // The faulting load stopped the run before any store.
    assert!(as_f32s(&out.buffers[1]).iter().all(|&x| x == -1.0));
}

#[test]
fn faulting_vector_store_writes_nothing() {
    let text = r#"file 0 "store.metal"
kernel k {
  param buffer(0) out device type "uint" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = const.u32 2
  v2 = mul.u32 v0, v1
  v3 = buffer_addr.0
  v4 = ptradd.4 v3, v2
  st.device.x2.u32 v4, v0, v0  @5:7
  ret
}
"#;
    // 31 elements: lane 15 writes elements 30 and 31; 31 is outside.
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![buffer(0, "out", Type::U32, u32s(&[7; 31]))],
    );
    let out = run_functional(&module(text), &l);
    let f = out.fault.expect("a fault");
    assert_eq!(
        (f.kind, f.lane, f.offset),
        (FaultKind::OutOfBounds, 15, Some(124))
    );
    assert_eq!(f.location, "store.metal:5:7");
    assert_eq!(
        as_u32s(&out.buffers[0]),
        vec![7; 31],
        "no lane may have stored"
    );
}

#[test]
fn misaligned_vector_access_faults() {
    let text = r#"kernel k {
  param buffer(0) a device type "uint" size 4 align 4
bb0:
  v0 = buffer_addr.0
  v1 = const.u32 1
  v2 = ptradd.2 v0, v1
  v3, v4 = ld.device.x2.u32 v2
  ret
}
"#;
    let l = launch(
        Grid::Threads([1, 1, 1]),
        [1, 1, 1],
        vec![buffer(0, "a", Type::U32, zeros(64))],
    );
    let f = run_functional(&module(text), &l).fault.expect("a fault");
    assert_eq!((f.kind, f.offset), (FaultKind::Misaligned, Some(2)));
}

#[test]
fn wide_vectors_go_through_threadgroup_and_thread_memory() {
    // u64 pairs: device -> threadgroup (x2) -> thread (x2) -> device.
    let text = r#"kernel k {
  param buffer(0) a device readonly type "ulong" size 8 align 8
  param buffer(1) out device type "ulong" size 8 align 8
  tgalloc 0 size 512 align 16 "tile"
  local 0 size 16 align 16 "pair"
bb0:
  v0 = sreg.thread_index_in_threadgroup
  v1 = const.u32 2
  v2 = mul.u32 v0, v1
  v3 = buffer_addr.0
  v4 = ptradd.8 v3, v2
  v5, v6 = ld.device.x2.u64 v4
  v7 = tg_addr.0
  v8 = ptradd.8 v7, v2
  st.threadgroup.x2.u64 v8, v6, v5
  v9, v10 = ld.threadgroup.x2.u64 v8
  v11 = local_addr.0
  st.thread.x2.u64 v11, v9, v10
  v12, v13 = ld.thread.x2.u64 v11
  v14 = buffer_addr.1
  v15 = ptradd.8 v14, v2
  st.device.x2.u64 v15, v12, v13
  ret
}
"#;
    let vals: Vec<u64> = (0..64).map(|i| 0x1234_5678_9abc_def0 ^ (i << 40)).collect();
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "a", Type::U64, to_bytes(Type::U64, &vals)),
            buffer(1, "out", Type::U64, zeros(64 * 8)),
        ],
    );
    let out = run_both(&module(text), &l);
    let got = from_bytes(Type::U64, &out.buffers[1]);
    for t in 0..32 {
        assert_eq!([got[2 * t], got[2 * t + 1]], [vals[2 * t + 1], vals[2 * t]]);
    }
}

/// An 8x8 matrix stored row-major with a row stride, as `f(row, column)`.
struct Stored {
    stride: usize,
    values: Vec<f32>,
}

impl Stored {
    fn new(stride: usize, f: impl Fn(usize, usize) -> f32) -> Stored {
        let mut values = vec![0.0; 8 * stride];
        for r in 0..8 {
            for c in 0..8 {
                values[r * stride + c] = f(r, c);
            }
        }
        Stored { stride, values }
    }

    fn at(&self, r: usize, c: usize) -> f32 {
        self.values[r * self.stride + c]
    }
}

/// `D = A x B + C` by the documented order: FMAs in ascending k, starting from C, each
/// rounded by `round`.
fn reference(
    a: impl Fn(usize, usize) -> f32,
    b: impl Fn(usize, usize) -> f32,
    c: impl Fn(usize, usize) -> f32,
    fma: impl Fn(f32, f32, f32) -> f32,
) -> [[f32; 8]; 8] {
    std::array::from_fn(|i| {
        std::array::from_fn(|j| (0..8).fold(c(i, j), |acc, k| fma(a(i, k), b(k, j), acc)))
    })
}

fn matrix_kernel(ty: &str, stride: usize, transpose_a: bool, transpose_d: bool) -> String {
    let size = Type::bytes(match ty {
        "f16" => Type::F16,
        _ => Type::F32,
    });
    MATRIX_MAC
        .replace("SIZE", &size.to_string())
        .replace("STRIDE", &stride.to_string())
        .replace(
            "LOADA",
            if transpose_a {
                "matrix_load_t"
            } else {
                "matrix_load"
            },
        )
        .replace(
            "STORE",
            if transpose_d {
                "matrix_store_t"
            } else {
                "matrix_store"
            },
        )
        .replace("TY", ty)
}

#[test]
fn matrix_multiply_accumulate_matches_a_cpu_reference() {
    for (stride, transpose_a, transpose_d) in
        [(8, false, false), (12, true, false), (9, false, true)]
    {
        let a = Stored::new(stride, |r, c| ((r * 7 + c * 3) % 11) as f32 * 0.25 - 1.1);
        let b = Stored::new(stride, |r, c| 1.0 / (1.0 + r as f32 + 3.0 * c as f32));
        let c = Stored::new(stride, |r, c| (r as f32 - 2.0 * c as f32) * 0.001);
        let l = launch(
            Grid::Threads([32, 1, 1]),
            [32, 1, 1],
            vec![
                buffer(0, "a", Type::F32, f32s(&a.values)),
                buffer(1, "b", Type::F32, f32s(&b.values)),
                buffer(2, "c", Type::F32, f32s(&c.values)),
                buffer(3, "d", Type::F32, f32s(&vec![f32::NAN; 8 * stride])),
            ],
        );
        let m = module(&matrix_kernel("f32", stride, transpose_a, transpose_d));
        let out = run_both(&m, &l);
        let d = as_f32s(&out.buffers[3]);
        let ma = |i, k| if transpose_a { a.at(k, i) } else { a.at(i, k) };
        let want = reference(ma, |k, j| b.at(k, j), |i, j| c.at(i, j), f32::mul_add);
        for (i, row) in want.iter().enumerate() {
            for (j, &w) in row.iter().enumerate() {
                let at = if transpose_d {
                    j * stride + i
                } else {
                    i * stride + j
                };
                assert_eq!(d[at], w, "stride {stride}: D({i}, {j})");
            }
        }
        // Elements of the rows' padding were not written.
        for r in 0..8 {
            for p in 8..stride {
                assert!(d[r * stride + p].is_nan());
            }
        }
    }
}

#[test]
fn half_matrix_multiply_rounds_each_fma_to_half() {
    let h = |x: f32| f16::from_f32(x);
    let a = |r: usize, c: usize| h((r as f32 + 1.0) / (c as f32 + 3.0)).to_f32();
    let b = |r: usize, c: usize| h(((r * 5 + c) % 7) as f32 - 3.3).to_f32();
    let c = |r: usize, c: usize| h(r as f32 * 0.125 + c as f32).to_f32();
    let bits = |f: &dyn Fn(usize, usize) -> f32| -> Vec<u64> {
        (0..64)
            .map(|i| h(f(i / 8, i % 8)).to_bits() as u64)
            .collect()
    };
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "a", Type::F16, to_bytes(Type::F16, &bits(&a))),
            buffer(1, "b", Type::F16, to_bytes(Type::F16, &bits(&b))),
            buffer(2, "c", Type::F16, to_bytes(Type::F16, &bits(&c))),
            buffer(3, "d", Type::F16, zeros(128)),
        ],
    );
    let out = run_both(&module(&matrix_kernel("f16", 8, false, false)), &l);
    let d = from_bytes(Type::F16, &out.buffers[3]);
    // An f16 FMA is the f64 sum rounded once to f16: f64 holds the exact product of two
    // halves and, for these magnitudes, the exact sum.
    let fma16 = |x: f32, y: f32, z: f32| f16::from_f64(x as f64 * y as f64 + z as f64).to_f32();
    let want = reference(a, b, c, fma16);
    for i in 0..8 {
        for j in 0..8 {
            assert_eq!(
                f16::from_bits(d[i * 8 + j] as u16).to_f32(),
                want[i][j],
                "({i}, {j})"
            );
        }
    }
}

#[test]
fn matrix_load_gives_each_lane_its_documented_elements() {
    // Load a matrix whose element (r, c) is r * 8 + c and store each lane's two elements.
    let text = r#"kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) out device type "float" size 4 align 4
bb0:
  v0 = const.u32 8
  v1 = buffer_addr.0
  v2, v3 = matrix_load.device.f32 v1, v0
  v4 = sreg.thread_index_in_simdgroup
  v5 = const.u32 2
  v6 = mul.u32 v4, v5
  v7 = buffer_addr.1
  v8 = ptradd.4 v7, v6
  st.device.x2.f32 v8, v2, v3
  ret
}
"#;
    let a: Vec<f32> = (0..64).map(|i| i as f32).collect();
    let l = launch(
        Grid::Threads([32, 1, 1]),
        [32, 1, 1],
        vec![
            buffer(0, "a", Type::F32, f32s(&a)),
            buffer(1, "out", Type::F32, zeros(256)),
        ],
    );
    let out = run_both(&module(text), &l);
    let got = as_f32s(&out.buffers[1]);
    for lane in 0..32u32 {
        for k in 0..2 {
            let (r, c) = matrix_element(lane, k);
            assert_eq!(
                got[(2 * lane + k) as usize],
                (r * 8 + c) as f32,
                "lane {lane}"
            );
        }
    }
}

#[test]
fn matrix_load_out_of_bounds_faults_before_loading() {
    // A 7-row buffer: the lanes holding row 7 fault; the first of them is lane 18.
    let stride = 8;
    let m = module(&matrix_kernel("f32", stride, false, false));
    let mut buffers = vec![buffer(0, "a", Type::F32, zeros(7 * 8 * 4))];
    for (i, name) in ["b", "c", "d"].iter().enumerate() {
        buffers.push(buffer(i as u32 + 1, name, Type::F32, zeros(64 * 4)));
    }
    let l = launch(Grid::Threads([32, 1, 1]), [32, 1, 1], buffers);
    let f = run_functional(&m, &l).fault.expect("a fault");
    assert_eq!(f.kind, FaultKind::OutOfBounds);
    assert_eq!(matrix_element(f.lane, 0).0, 7);
    assert!((0..f.lane).all(|l| matrix_element(l, 0).0 != 7));
    assert_eq!(f.buffer.as_deref(), Some("a"));
}
