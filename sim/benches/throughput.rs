//! Simulator throughput: simulated SIMD-group instructions per second on small kernels,
//! functional-only and with the timing model. Run with
//! `cargo bench -p metalsim-sim --bench throughput`; `METALSIM_BENCH=alu_loop/functional`
//! runs only the cases whose `kernel/mode` label contains it; each case reports the best
//! of `METALSIM_BENCH_REPEAT` runs (default 3).

use std::time::Instant;

use metalsim_isa::{Type, parse_module};
use metalsim_launch::{BufferBinding, ElemType, Grid, Launch};
use metalsim_sim::{RunOptions, run};

/// A dependent float chain in a counted loop: 5 instructions per iteration.
const ALU_LOOP: &str = r#"
kernel k {
  param buffer(0) out device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = cvt.u32.f32 v0
  v2 = const.u32 0
  v20 = const.f32 1.0001
  v21 = const.f32 0.5
  v22 = const.f32 0.999
  v23 = const.u32 1
  v24 = const.u32 1000
  br bb1(v2, v1)
bb1(v4:u32, v5:f32):
  v6 = fma.f32 v5, v20, v21
  v7 = mul.f32 v6, v22
  v8 = add.u32 v4, v23
  v9 = cmp.lt.u32 v8, v24
  br_if v9, bb1(v8, v7), bb2
bb2:
  v10 = buffer_addr.0
  v11 = ptradd.4 v10, v0
  st.device.f32 v11, v7
  ret
}
"#;

/// Streaming: `b[i] = a[i] * 2` over a large buffer.
const STREAM: &str = r#"
kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) b device type "float" size 4 align 4
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = buffer_addr.0
  v2 = ptradd.4 v1, v0
  v3 = ld.device.f32 v2
  v4 = const.f32 2.0
  v5 = mul.f32 v3, v4
  v6 = buffer_addr.1
  v7 = ptradd.4 v6, v0
  st.device.f32 v7, v5
  ret
}
"#;

/// Threadgroup-memory tree reduction: each thread stores to a 256-float tile, then 8
/// halving steps with a barrier each (threadgroup loads, stores and barriers dominate).
const TG_REDUCE: &str = r#"
kernel k {
  param buffer(0) a device readonly type "float" size 4 align 4
  param buffer(1) b device type "float" size 4 align 4
  tgalloc 0 size 1024 align 16 "tile"
bb0:
  v0 = sreg.thread_position_in_grid.x
  v1 = sreg.thread_index_in_threadgroup
  v2 = buffer_addr.0
  v3 = ptradd.4 v2, v0
  v4 = ld.device.f32 v3
  v5 = tg_addr.0
  v6 = ptradd.4 v5, v1
  st.threadgroup.f32 v6, v4
  barrier.threadgroup.threadgroup
  v7 = const.u32 128
  br bb1(v7)
bb1(v8:u32):
  v9 = cmp.lt.u32 v1, v8
  br_if v9, bb2, bb3
bb2:
  v10 = add.u32 v1, v8
  v11 = ptradd.4 v5, v10
  v12 = ld.threadgroup.f32 v11
  v13 = ld.threadgroup.f32 v6
  v14 = add.f32 v12, v13
  st.threadgroup.f32 v6, v14
  br bb3
bb3:
  barrier.threadgroup.threadgroup
  v15 = const.u32 1
  v16 = shr.u32 v8, v15
  v17 = const.u32 0
  v18 = cmp.gt.u32 v16, v17
  br_if v18, bb1(v16), bb4
bb4:
  v19 = cmp.eq.u32 v1, v17
  br_if v19, bb5, bb6
bb5:
  v20 = ld.threadgroup.f32 v5
  v21 = sreg.threadgroup_position_in_grid.x
  v22 = buffer_addr.1
  v23 = ptradd.4 v22, v21
  st.device.f32 v23, v20
  br bb6
bb6:
  ret
}
"#;

fn buffer(index: u32, n: usize) -> BufferBinding {
    BufferBinding {
        index,
        name: format!("b{index}"),
        elem: ElemType {
            scalar: Type::F32,
            lanes: 1,
        },
        count: n as u64,
        bytes: vec![0; n * 4],
        output: true,
    }
}

fn measure(name: &str, text: &str, threads: u32, buffers: Vec<BufferBinding>) {
    let module = parse_module(text).unwrap();
    let gpu = metalsim_models::builtin("m1").unwrap();
    let launch = Launch {
        kernel: "k".into(),
        grid: Grid::Threads([threads, 1, 1]),
        threadgroup: [256, 1, 1],
        buffers,
        threadgroup_memory: vec![],
    };
    let only = std::env::var("METALSIM_BENCH").unwrap_or_default();
    for timing in [false, true] {
        let label = format!("{name}/{}", if timing { "timed" } else { "functional" });
        if !label.contains(&only) {
            continue;
        }
        let opts = RunOptions {
            timing,
            max_instructions: None,
            ..RunOptions::default()
        };
        // The best of a few runs: the machine's other work only ever slows a run down.
        let repeat: usize = std::env::var("METALSIM_BENCH_REPEAT")
            .ok()
            .and_then(|r| r.parse().ok())
            .unwrap_or(3);
        let mut secs = f64::INFINITY;
        let mut out = None;
        for _ in 0..repeat.max(1) {
            let start = Instant::now();
            let o = run(&module, "k", &launch, &gpu, &opts).unwrap();
            secs = secs.min(start.elapsed().as_secs_f64());
            out = Some(o);
        }
        let out = out.expect("ran at least once");
        let n = out.stats.simd_instructions;
        println!(
            "{name:10} timing={timing:5}: {n:>10} SIMD-group instructions in {secs:6.3} s = {:6.1} M/s (cycles {})",
            n as f64 / secs / 1e6,
            out.stats.cycles
        );
    }
}

fn main() {
    measure("alu_loop", ALU_LOOP, 64 * 1024, vec![buffer(0, 64 * 1024)]);
    let n = 4 << 20;
    measure("stream", STREAM, n as u32, vec![buffer(0, n), buffer(1, n)]);
    let n = 1 << 20;
    measure(
        "tg_reduce",
        TG_REDUCE,
        n as u32,
        vec![buffer(0, n), buffer(1, n / 256)],
    );
}
