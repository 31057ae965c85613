//! Every atomic operation on `i32`, `u32` and `f32` in device and threadgroup memory: the
//! 32 lanes of one instruction hit one address and run one after another in ascending
//! lane order, each getting the value it found.

use metalsim_isa::Type;
use metalsim_launch::Grid;

use crate::common::*;

/// A kernel where every lane runs `atomic.OP.SPACE.TY` on one word that starts at
/// `init[0]`, with its own operands; it writes each lane's result to `old` and the final
/// word to `fin`.
fn kernel(op: &str, space: &str, t: &str, operands: usize) -> String {
    let args = ["v4", "v7"][..operands].join(", ");
    let (setup, addr) = if space == "device" {
        ("".to_string(), "v20")
    } else {
        (
            // Every lane stores the initial value into the threadgroup word first.
            format!(
                "  v21 = ld.device.{t} v20\n  v22 = tg_addr.0\n  st.threadgroup.{t} v22, v21\n"
            ),
            "v22",
        )
    };
    let result = if op == "store" {
        format!("  atomic.{op}.{space}.{t} {addr}, {args}\n  v8 = const.{t} 0\n")
    } else if operands == 0 {
        format!("  v8 = atomic.{op}.{space}.{t} {addr}\n")
    } else {
        format!("  v8 = atomic.{op}.{space}.{t} {addr}, {args}\n")
    };
    format!(
        r#"kernel k {{
  param buffer(0) a device readonly type "x" size 4 align 4
  param buffer(1) b device readonly type "x" size 4 align 4
  param buffer(2) word device atomic type "x" size 4 align 4
  param buffer(3) old device type "x" size 4 align 4
  param buffer(4) fin device type "x" size 4 align 4
  tgalloc 0 size 4 align 4 "word"
bb0:
  v0 = sreg.thread_index_in_simdgroup
  v1 = buffer_addr.0
  v2 = ptradd.4 v1, v0
  v4 = ld.device.{t} v2
  v5 = buffer_addr.1
  v6 = ptradd.4 v5, v0
  v7 = ld.device.{t} v6
  v20 = buffer_addr.2
{setup}{result}  v9 = buffer_addr.3
  v10 = ptradd.4 v9, v0
  st.device.{t} v10, v8
  v11 = ld.{space}.{t} {addr}
  v12 = buffer_addr.4
  st.device.{t} v12, v11
  ret
}}
"#
    )
}

/// The sequential reference: lane 0 first.
fn reference(op: &str, t: Type, init: u32, a: &[u32], b: &[u32]) -> (Vec<u32>, u32) {
    let mut word = init;
    let mut olds = Vec::new();
    let f = |x: u32| f32::from_bits(x);
    for i in 0..32 {
        let (x, y) = (a[i], b[i]);
        olds.push(word);
        let signed = t == Type::I32;
        let float = t == Type::F32;
        word = match op {
            "load" => word,
            "store" | "xchg" => x,
            "cmpxchg" => {
                if word == x {
                    y
                } else {
                    word
                }
            }
            "add" if float => (f(word) + f(x)).to_bits(),
            "sub" if float => (f(word) - f(x)).to_bits(),
            "min" if float => {
                if f(word).is_nan() || f(x) < f(word) {
                    x
                } else {
                    word
                }
            }
            "max" if float => {
                if f(word).is_nan() || f(word) < f(x) {
                    x
                } else {
                    word
                }
            }
            "add" => word.wrapping_add(x),
            "sub" => word.wrapping_sub(x),
            "min" if signed => (word as i32).min(x as i32) as u32,
            "max" if signed => (word as i32).max(x as i32) as u32,
            "min" => word.min(x),
            "max" => word.max(x),
            "and" => word & x,
            "or" => word | x,
            "xor" => word ^ x,
            _ => panic!("{op}"),
        };
    }
    (olds, word)
}

#[test]
fn atomics_run_lane_by_lane_in_ascending_order() {
    for t in [Type::I32, Type::U32, Type::F32] {
        let (a, b, init): (Vec<u32>, Vec<u32>, u32) = if t == Type::F32 {
            let a = (0..32).map(|i| (i as f32 * 0.37 - 3.0).to_bits()).collect();
            // cmpxchg expects: every third lane expects what the lane before stored.
            let b = (0..32).map(|i| (100.0 + i as f32).to_bits()).collect();
            (a, b, 1.5f32.to_bits())
        } else {
            let a = (0..32u32)
                .map(|i| i.wrapping_mul(0x9e37_79b9) >> 3)
                .collect();
            let b = (0..32u32).map(|i| i * 7 + 1).collect();
            (a, b, 5)
        };
        for op in [
            "load", "store", "xchg", "cmpxchg", "add", "sub", "min", "max", "and", "or", "xor",
        ] {
            if t == Type::F32 && matches!(op, "and" | "or" | "xor") {
                continue;
            }
            // cmpxchg: lane i expects a[i]; make some expectations hit by expecting the
            // value the previous lane stored (b[i - 1]) in every other lane.
            let a = if op == "cmpxchg" {
                let mut e = a.clone();
                e[0] = init;
                for i in (2..32).step_by(2) {
                    e[i] = b[i - 1];
                }
                e[1] = b[0];
                e
            } else {
                a.clone()
            };
            let operands = match op {
                "load" => 0,
                "cmpxchg" => 2,
                _ => 1,
            };
            for space in ["device", "threadgroup"] {
                let name = t.name();
                let text = kernel(op, space, name, operands);
                let l = launch(
                    Grid::Threads([32, 1, 1]),
                    [32, 1, 1],
                    vec![
                        buffer(0, "a", t, u32s(&a)),
                        buffer(1, "b", t, u32s(&b)),
                        buffer(2, "word", t, u32s(&[init])),
                        buffer(3, "old", t, zeros(128)),
                        buffer(4, "fin", t, zeros(4)),
                    ],
                );
                let out = run_both(&module(&text), &l);
                let (olds, word) = reference(op, t, init, &a, &b);
                let got_old = as_u32s(&out.buffers[3]);
                let got_fin = as_u32s(&out.buffers[4])[0];
                assert_eq!(got_fin, word, "atomic.{op}.{space}.{name}: final word");
                if op != "store" {
                    assert_eq!(got_old, olds, "atomic.{op}.{space}.{name}: old values");
                }
            }
        }
    }
}

/// The MSL call of `op` on the atomic `w` with operands `a[lane]`, `b[lane]`, leaving
/// the value found in `r`.
fn msl_call(op: &str, t: &str) -> String {
    let o = "memory_order_relaxed";
    match op {
        "load" => format!("{t} r = atomic_load_explicit(w, {o});"),
        "store" => format!("atomic_store_explicit(w, a[lane], {o}); {t} r = 0;"),
        "xchg" => format!("{t} r = atomic_exchange_explicit(w, a[lane], {o});"),
        // After the call, `r` holds the value found whether or not it matched.
        "cmpxchg" => format!(
            "{t} r = a[lane]; atomic_compare_exchange_weak_explicit(w, &r, b[lane], {o}, {o});"
        ),
        _ => format!("{t} r = atomic_fetch_{op}_explicit(w, a[lane], {o});"),
    }
}

/// Every `atomic_*_explicit` function, called from MSL on `int`, `uint` and `float` in
/// device and threadgroup memory, runs lane by lane in ascending order like the ISA's
/// atomics (the frontend maps each name to the right operation).
#[test]
fn msl_atomic_functions_run_lane_by_lane() {
    for (t, msl) in [
        (Type::I32, "int"),
        (Type::U32, "uint"),
        (Type::F32, "float"),
    ] {
        let (a, b, init): (Vec<u32>, Vec<u32>, u32) = if t == Type::F32 {
            let a = (0..32).map(|i| (i as f32 * 0.37 - 3.0).to_bits()).collect();
            let b = (0..32).map(|i| (100.0 + i as f32).to_bits()).collect();
            (a, b, 1.5f32.to_bits())
        } else {
            let a = (0..32u32)
                .map(|i| i.wrapping_mul(0x9e37_79b9) >> 3)
                .collect();
            let b = (0..32u32).map(|i| i * 7 + 1).collect();
            (a, b, 5)
        };
        let ops: &[&str] = if t == Type::F32 {
            &["load", "store", "xchg", "cmpxchg", "add", "sub"]
        } else {
            &[
                "load", "store", "xchg", "cmpxchg", "add", "sub", "min", "max", "and", "or", "xor",
            ]
        };
        for &op in ops {
            // cmpxchg: every other lane expects what the lane before stored.
            let a = if op == "cmpxchg" {
                let mut e = a.clone();
                e[0] = init;
                for i in (2..32).step_by(2) {
                    e[i] = b[i - 1];
                }
                e
            } else {
                a.clone()
            };
            for space in ["device", "threadgroup"] {
                let setup = if space == "device" {
                    format!("device atomic_{msl}* w = word;")
                } else {
                    format!(
                        "threadgroup atomic_{msl}* w = tw;
    if (lane == 0) {{
        atomic_store_explicit(w, atomic_load_explicit(word, memory_order_relaxed),
                              memory_order_relaxed);
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup);"
                    )
                };
                let src = format!(
                    "#include <metal_stdlib>
using namespace metal;
kernel void k(device const {msl}* a [[buffer(0)]], device const {msl}* b [[buffer(1)]],
              device atomic_{msl}* word [[buffer(2)]], device {msl}* old [[buffer(3)]],
              device {msl}* fin [[buffer(4)]], threadgroup atomic_{msl}* tw [[threadgroup(0)]],
              uint lane [[thread_index_in_simdgroup]]) {{
    {setup}
    {call}
    old[lane] = r;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lane == 0) {{
        fin[0] = atomic_load_explicit(w, memory_order_relaxed);
    }}
}}
",
                    call = msl_call(op, msl),
                );
                let (m, d, s) = metalsim_frontend::compile_str("k.metal", &src);
                let m = m.unwrap_or_else(|| {
                    panic!("{}\n{src}", metalsim_frontend::render(&d, &s, false))
                });
                let l = with_tg_memory(
                    launch(
                        Grid::Threads([32, 1, 1]),
                        [32, 1, 1],
                        vec![
                            buffer(0, "a", t, u32s(&a)),
                            buffer(1, "b", t, u32s(&b)),
                            buffer(2, "word", t, u32s(&[init])),
                            buffer(3, "old", t, zeros(128)),
                            buffer(4, "fin", t, zeros(4)),
                        ],
                    ),
                    &[(0, 4)],
                );
                let out = run_both(&m, &l);
                let (olds, word) = reference(op, t, init, &a, &b);
                let what = format!("{op} on {space} atomic_{msl}");
                assert_eq!(as_u32s(&out.buffers[4])[0], word, "{what}: final value");
                if op != "store" {
                    assert_eq!(as_u32s(&out.buffers[3]), olds, "{what}: values found");
                }
            }
        }
    }
}
