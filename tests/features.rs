//! The MSL constructs of the end-to-end slice, each in a small kernel whose outputs are
//! checked against values computed here.

mod common;

use common::{f32s, i32s, run_source, u32s};

/// A spec with one output buffer `out` of `count` elements of `ty` at index 0, plus extra
/// TOML appended.
fn spec(
    kernel: &str,
    threads: [u32; 3],
    tg: [u32; 3],
    ty: &str,
    count: u32,
    extra: &str,
) -> String {
    format!(
        "kernel = \"{kernel}\"\nthreads = {threads:?}\nthreadgroup = {tg:?}\n[[buffer]]\nindex = 0\nname = \"out\"\ntype = \"{ty}\"\ncount = {count}\noutput = true\n{extra}"
    )
}

#[test]
fn thread_position_attributes_in_every_form() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void positions(device uint* out [[buffer(0)]],
                      uint3 gid [[thread_position_in_grid]],
                      ushort2 lid [[thread_position_in_threadgroup]],
                      uint tidx [[thread_index_in_threadgroup]],
                      uint2 tg [[threadgroup_position_in_grid]],
                      uint3 grid [[threads_per_grid]],
                      uint2 tpt [[threads_per_threadgroup]],
                      uint2 tgs [[threadgroups_per_grid]],
                      ushort lane [[thread_index_in_simdgroup]],
                      uint sg [[simdgroup_index_in_threadgroup]],
                      uint sgs [[simdgroups_per_threadgroup]],
                      uint width [[threads_per_simdgroup]])
{
    uint i = gid.y * grid.x + gid.x;
    device uint* o = out + i * 12;
    o[0] = gid.x; o[1] = gid.y; o[2] = uint(lid.x) + 100 * uint(lid.y);
    o[3] = tidx; o[4] = tg.x + 100 * tg.y; o[5] = grid.x * 1000 + grid.y;
    o[6] = tpt.x * 100 + tpt.y; o[7] = tgs.x * 100 + tgs.y; o[8] = lane;
    o[9] = sg; o[10] = sgs; o[11] = width + gid.z;
}
"#;
    let (w, h) = (10u32, 7u32);
    let (_, out) = run_source(
        src,
        &spec("positions", [w, h, 1], [4, 3, 1], "uint", w * h * 12, ""),
    );
    let got = u32s(&out.buffers[0]);
    for y in 0..h {
        for x in 0..w {
            let o = &got[((y * w + x) * 12) as usize..][..12];
            let (lx, ly) = (x % 4, y % 3);
            // Edge threadgroups are partial: their actual size is what remains.
            let tpx = if x / 4 == 2 { 2 } else { 4 };
            let tpy = if y / 3 == 2 { 1 } else { 3 };
            let tidx = ly * tpx + lx;
            let sgs = (tpx * tpy).div_ceil(32);
            let want = [
                x,
                y,
                lx + 100 * ly,
                tidx,
                x / 4 + 100 * (y / 3),
                w * 1000 + h,
                tpx * 100 + tpy,
                3 * 100 + 3,
                tidx % 32,
                tidx / 32,
                sgs,
                32,
            ];
            assert_eq!(o, &want, "thread ({x}, {y})");
        }
    }
}

#[test]
fn scalar_types_conversions_and_operators() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
#define SCALE 3
constant int OFFSETS[4] = {1, -2, 3, -4};
constexpr constant float HALF_PI = 1.5707964f;
kernel void ops(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]])
{
    int x = int(i) - 8;
    uint u = i;
    uchar c = uchar(250 + i);          // wraps
    short s = short(x * 1000);
    half h = half(x) * 0.5h;
    bool odd = (i & 1u) != 0;
    device int* o = out + i * 16;
    o[0] = x * SCALE + OFFSETS[i % 4];
    o[1] = x / 3;                      // truncates toward zero
    o[2] = x % 3;
    o[3] = int(u << 3) ^ int(u >> 1);
    o[4] = ~x & 0xff | 0x100;
    o[5] = int(c);
    o[6] = int(s);
    o[7] = int(float(h) * 4.0f);
    o[8] = odd ? 11 : -11;
    o[9] = (x > 0 && x < 5) || x == -8;
    o[10] = int(-3.7f) + int(float(x) * 0.25f);
    o[11] = int(floor(float(x) / 3.0f));
    int acc = 0;
    acc += x; acc -= 2; acc *= 3; acc /= 2; acc %= 7; acc <<= 2; acc |= 1; acc &= 0x7f; acc ^= 5;
    o[12] = acc;
    int pre = x; int post = x;
    int a = ++pre; int b = post--;
    o[13] = a * 100 + b + pre + post;
    o[14] = int(HALF_PI * 1000.0f);
    o[15] = min(x, 2) + max(x, -1) + abs(x) + clamp(x, -3, 3);
}
"#;
    let n = 17u32;
    let (_, out) = run_source(src, &spec("ops", [n, 1, 1], [8, 1, 1], "int", n * 16, ""));
    let got = i32s(&out.buffers[0]);
    let offsets = [1, -2, 3, -4];
    for i in 0..n as i32 {
        let x = i - 8;
        let u = i as u32;
        let c = (250 + i) as u8;
        let s = (x * 1000) as i16;
        let h = half_round(x as f32 * 0.5);
        let mut acc = x;
        acc -= 2;
        acc *= 3;
        acc /= 2;
        acc %= 7;
        acc <<= 2;
        acc |= 1;
        acc &= 0x7f;
        acc ^= 5;
        let want = [
            x * 3 + offsets[(i % 4) as usize],
            x / 3,
            x % 3,
            ((u << 3) ^ (u >> 1)) as i32,
            (!x & 0xff) | 0x100,
            c as i32,
            s as i32,
            (h * 4.0) as i32,
            if i % 2 == 1 { 11 } else { -11 },
            ((x > 0 && x < 5) || x == -8) as i32,
            -3 + (x as f32 * 0.25) as i32,
            (x as f32 / 3.0).floor() as i32,
            acc,
            (x + 1) * 100 + x + (x + 1) + (x - 1),
            1570,
            x.min(2) + x.max(-1) + x.abs() + x.clamp(-3, 3),
        ];
        assert_eq!(&got[(i * 16) as usize..][..16], &want, "thread {i}");
    }
}

/// Rounds an f32 to the nearest half and back.
fn half_round(x: f32) -> f32 {
    half::f16::from_f32(x).to_f32()
}

#[test]
fn vectors_constructors_and_swizzles() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void vecs(device float4* out [[buffer(0)]], device const uchar4* px [[buffer(1)]],
                 uint i [[thread_position_in_grid]])
{
    float4 v = float4(float(i), 1.0f, 2.0f, 3.0f);
    float2 ab = v.xy + v.zw;                 // (i + 2, 4)
    float3 c = float3(ab, 5.0f);
    c.zx = c.xz;                             // swap
    v.rgb = clamp(c * 0.5f, 0.0f, 2.0f);
    float4 p = float4(px[i]) / 255.0f;
    out[i * 3] = v;
    out[i * 3 + 1] = float4(p.wzyx);
    int2 t = int2(7, -7);
    uint2 q = uint2(t) >> 1;
    out[i * 3 + 2] = float4(float(q.x), float(t.y), dot(v.xy, float2(1.0f, 2.0f)), length(float2(3.0f, 4.0f)));
}
"#;
    let n = 5u32;
    let extra = "[[buffer]]\nindex = 1\nname = \"px\"\ntype = \"uchar4\"\ncount = 5\ninit = { iota = { start = 10, step = 20 } }\n";
    let (launch, out) = run_source(
        src,
        &spec("vecs", [n, 1, 1], [32, 1, 1], "float4", n * 3, extra),
    );
    let got = f32s(&out.buffers[0]);
    let px = &launch.buffers[1].bytes;
    for i in 0..n as usize {
        let fi = i as f32;
        let c = [5.0f32, 4.0, fi + 2.0];
        let v = [
            (c[0] * 0.5f32).clamp(0.0, 2.0),
            (c[1] * 0.5f32).clamp(0.0, 2.0),
            (c[2] * 0.5f32).clamp(0.0, 2.0),
            3.0,
        ];
        assert_eq!(&got[i * 12..i * 12 + 4], &v, "thread {i} v");
        let p: Vec<f32> = px[i * 4..i * 4 + 4]
            .iter()
            .rev()
            .map(|b| *b as f32 / 255.0f32)
            .collect();
        assert_eq!(&got[i * 12 + 4..i * 12 + 8], &p[..], "thread {i} p");
        let d = v[0].mul_add(1.0, 0.0);
        let d = v[1].mul_add(2.0, d);
        let want = [((7u32) >> 1) as f32, -7.0, d, 5.0];
        assert_eq!(&got[i * 12 + 8..i * 12 + 12], &want, "thread {i} misc");
    }
}

#[test]
fn control_flow_with_divergence() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void flow(device int* out [[buffer(0)]], uint i [[thread_position_in_grid]])
{
    int n = int(i);
    int sum = 0;
    for (int k = 0; k < 100; ++k) {
        if (k == n) break;
        if (k % 3 == 0) continue;
        sum += k;
    }
    int w = 0;
    while (w * w < n) { w++; }
    int d = 0;
    do { d += 2; } while (d < n % 5);
    int s = 0;
    switch (n % 4) {
        case 0: s = 10; break;
        case 1: s = 20;          // falls through
        case 2: s += 5; break;
        default: s = -1;
    }
    if (n == 13) { out[i] = -999; return; }
    out[i] = sum * 10000 + w * 100 + d * 10 + s;
}
"#;
    let n = 40u32;
    let (_, out) = run_source(src, &spec("flow", [n, 1, 1], [32, 1, 1], "int", n, ""));
    let got = i32s(&out.buffers[0]);
    for i in 0..n as i32 {
        let sum: i32 = (0..i.min(100)).filter(|k| k % 3 != 0).sum();
        let mut w = 0;
        while w * w < i {
            w += 1;
        }
        let mut d = 0;
        loop {
            d += 2;
            if d >= i % 5 {
                break;
            }
        }
        let s = match i % 4 {
            0 => 10,
            1 => 25,
            2 => 5,
            _ => -1,
        };
        let want = if i == 13 {
            -999
        } else {
            sum * 10000 + w * 100 + d * 10 + s
        };
        assert_eq!(got[i as usize], want, "thread {i}");
    }
    // Divergent lanes ran part of the time: SIMD efficiency is below 1.
    assert!(out.stats.thread_instructions < 32 * out.stats.simd_instructions);
}

#[test]
fn structs_arrays_and_helpers() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
struct Params { uint n; float scale; float2 bias; };
struct Pair { float a; int b; };

static inline float twice(float x) { return 2.0f * x; }
inline void bump(thread int& v, int by) { v += by; }
float weigh(Pair p, float s) {
    if (p.b < 0) { return -twice(p.a); }
    return p.a * s + float(p.b);
}

kernel void structs(device float* out [[buffer(0)]],
                    constant Params& prm [[buffer(1)]],
                    device const Pair* pairs [[buffer(2)]],
                    uint i [[thread_position_in_grid]])
{
    if (i >= prm.n) return;
    float grid[2][3] = {{1, 2, 3}, {4, 5, 6}};
    int counts[4];
    for (int k = 0; k < 4; k++) counts[k] = k * k;
    Pair p = pairs[i];
    Pair q = {p.a + 1.0f, p.b * 2};
    int bumped = 5;
    bump(bumped, int(i));
    out[i] = weigh(p, prm.scale) + weigh(q, 1.0f) + grid[i % 2][i % 3] + float(counts[i % 4])
             + prm.bias.y + float(bumped);
}
"#;
    let n = 6u32;
    // Params = {uint n; float scale; float2 bias} = 16 bytes: words 6, 0.5f, 0, 10.0f.
    let extra = format!(
        "[[buffer]]\nindex = 1\nname = \"prm\"\ntype = \"uint\"\ninit = {{ values = [{n}, {}, 0, {}] }}\n[[buffer]]\nindex = 2\nname = \"pairs\"\ntype = \"int\"\ncount = {}\ninit = {{ values = [{}] }}\n",
        0.5f32.to_bits(),
        10.0f32.to_bits(),
        n * 2,
        (0..n)
            .map(|i| format!("{}, {}", (i as f32 * 1.5).to_bits(), i as i32 - 2))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let (_, out) = run_source(
        src,
        &spec("structs", [8, 1, 1], [8, 1, 1], "float", 8, &extra),
    );
    let got = f32s(&out.buffers[0]);
    let grid = [[1.0f32, 2.0, 3.0], [4.0, 5.0, 6.0]];
    let weigh = |a: f32, b: i32, s: f32| {
        if b < 0 {
            -(2.0 * a)
        } else {
            a.mul_add(s, b as f32)
        }
    };
    for i in 0..n as usize {
        let (a, b) = (i as f32 * 1.5, i as i32 - 2);
        let want = weigh(a, b, 0.5)
            + weigh(a + 1.0, b * 2, 1.0)
            + grid[i % 2][i % 3]
            + ((i % 4) * (i % 4)) as f32
            + 10.0
            + (5 + i) as f32;
        assert_eq!(got[i], want, "thread {i}");
    }
    assert_eq!(&got[6..], &[0.0, 0.0], "threads past n return early");
}

#[test]
fn threadgroup_memory_barriers_simd_and_atomics() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void coop(device float* out [[buffer(0)]],
                 device atomic_int* hist [[buffer(1)]],
                 device atomic_uint* count [[buffer(2)]],
                 device atomic_float* total [[buffer(3)]],
                 uint gid [[thread_position_in_grid]],
                 uint lid [[thread_index_in_threadgroup]],
                 uint tgsize [[threads_per_threadgroup]],
                 uint lane [[thread_index_in_simdgroup]])
{
    threadgroup float stage[64];
    stage[lid] = float(gid);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    // Reverse within the threadgroup: needs the barrier.
    float mine = stage[tgsize - 1 - lid];
    float s = simd_sum(mine);
    float down = simd_shuffle_down(mine, 1);
    out[gid * 3] = mine;
    out[gid * 3 + 1] = s;
    out[gid * 3 + 2] = down;
    atomic_fetch_add_explicit(&hist[gid % 4], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(count, 1u, memory_order_relaxed);
    atomic_fetch_add_explicit(total, 0.5f, memory_order_relaxed);
    if (lane == 0) {
        atomic_fetch_max_explicit(&hist[4], int(gid), memory_order_relaxed);
    }
}
"#;
    let n = 128u32;
    let extra = "[[buffer]]\nindex = 1\nname = \"hist\"\ntype = \"int\"\ncount = 5\n[[buffer]]\nindex = 2\nname = \"count\"\ntype = \"uint\"\ncount = 1\n[[buffer]]\nindex = 3\nname = \"total\"\ntype = \"float\"\ncount = 1\n";
    let (_, out) = run_source(
        src,
        &spec("coop", [n, 1, 1], [64, 1, 1], "float", n * 3, extra),
    );
    let got = f32s(&out.buffers[0]);
    for g in 0..n {
        let (tg, lid) = (g / 64, g % 64);
        let mine = (tg * 64 + 63 - lid) as f32;
        let sg_base = g / 32 * 32;
        let sum: f32 = (sg_base..sg_base + 32)
            .map(|t| (tg * 64 + 63 - t % 64) as f32)
            .sum();
        let down = if g % 32 == 31 {
            mine
        } else {
            (tg * 64 + 63 - (lid + 1)) as f32
        };
        assert_eq!(
            &got[(g * 3) as usize..][..3],
            &[mine, sum, down],
            "thread {g}"
        );
    }
    assert_eq!(i32s(&out.buffers[1]), vec![32, 32, 32, 32, 96]);
    assert_eq!(u32s(&out.buffers[2]), vec![n]);
    assert_eq!(f32s(&out.buffers[3]), vec![n as f32 * 0.5]);
}

#[test]
fn threadgroup_atomic_declared_in_the_kernel_body() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void count_odd(device int* out [[buffer(0)]],
                      uint gid [[thread_position_in_grid]],
                      uint lid [[thread_position_in_threadgroup]],
                      uint tg [[threadgroup_position_in_grid]]) {
    threadgroup atomic_int counter;
    if (lid == 0) atomic_store_explicit(&counter, 0, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if ((gid % 3) == 1) atomic_fetch_add_explicit(&counter, 1, memory_order_relaxed);
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (lid == 0) out[tg] = atomic_load_explicit(&counter, memory_order_relaxed);
}
"#;
    let (_, out) = run_source(
        src,
        &spec("count_odd", [192, 1, 1], [64, 1, 1], "int", 3, ""),
    );
    let expect: Vec<i32> = (0..3)
        .map(|tg| (tg * 64..tg * 64 + 64).filter(|g| g % 3 == 1).count() as i32)
        .collect();
    assert_eq!(i32s(&out.buffers[0]), expect);
}

#[test]
fn short_circuit_and_ternary_never_read_out_of_bounds() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void guarded(device float* out [[buffer(0)]], device const float* in [[buffer(1)]],
                    constant uint& n [[buffer(2)]], uint i [[thread_position_in_grid]])
{
    float v = i < n ? in[i] : -1.0f;
    bool big = i < n && in[i] > 2.0f;
    out[i] = v + (big ? 100.0f : 0.0f);
}
"#;
    let extra = "[[buffer]]\nindex = 1\nname = \"in\"\ntype = \"float\"\ncount = 5\ninit = { values = [0, 1, 2, 3, 4] }\n[[buffer]]\nindex = 2\nname = \"n\"\ntype = \"uint\"\ninit = { values = [5] }\n";
    let (_, out) = run_source(
        src,
        &spec("guarded", [8, 1, 1], [8, 1, 1], "float", 8, extra),
    );
    assert!(out.fault.is_none(), "{:?}", out.fault);
    assert_eq!(
        f32s(&out.buffers[0]),
        vec![0.0, 1.0, 2.0, 103.0, 104.0, -1.0, -1.0, -1.0]
    );
}

#[test]
fn math_functions() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
kernel void math(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]])
{
    float x = float(i) * 0.25f + 0.5f;
    device float* o = out + i * 6;
    o[0] = exp(x);
    o[1] = sqrt(x);
    o[2] = fma(x, 2.0f, 1.0f);
    o[3] = floor(x * 3.0f);
    o[4] = fabs(-x) + fmin(x, 1.0f) + fmax(x, 1.0f);
    o[5] = precise::sqrt(x) + fast::exp(0.0f);
}
"#;
    let (_, out) = run_source(src, &spec("math", [8, 1, 1], [8, 1, 1], "float", 48, ""));
    let got = f32s(&out.buffers[0]);
    for i in 0..8 {
        let x = i as f32 * 0.25 + 0.5;
        let want = [
            x.exp(),
            x.sqrt(),
            x.mul_add(2.0, 1.0),
            (x * 3.0).floor(),
            x + x.min(1.0) + x.max(1.0),
            x.sqrt() + 1.0,
        ];
        for (k, (g, w)) in got[i * 6..i * 6 + 6].iter().zip(want).enumerate() {
            let ulps = (g.to_bits() as i64 - w.to_bits() as i64).abs();
            assert!(ulps <= 4, "thread {i} result {k}: got {g}, want {w}");
        }
    }
}

#[test]
fn cpp_constructs_of_real_kernels() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;

template <int N> struct Factorial { static constexpr int value = N * Factorial<N - 1>::value; };
template <> struct Factorial<0> { static constexpr int value = 1; };

template <typename T, int N> struct Width { static constexpr int value = N; };
template <typename T> struct Width<T, 0> { static constexpr int value = 100; };

template <typename... Ts> constexpr int count(Ts...) { return sizeof...(Ts); }

template <typename T, typename = enable_if_t<is_floating_point_v<T>>>
T twice(T x) { return x * 2; }

template <typename T>
T bump(T x) {
    if constexpr (is_same_v<T, int>) { return x + 1; } else { return x * 3; }
}

auto scaled(float x) -> decltype(x * 2) { return x * 2; }

enum class Mode : int { Copy = 1, Add = 2 };

struct Loader {
    const device float* src;
    int stride;
    Loader(const device float* s, int st) : src(s), stride(st) {}
    template <typename U> U load(int i) const { return static_cast<U>(src[i * stride]); }
};

kernel void constructs(device float* out [[buffer(0)]],
                       const device float* in [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    array<float, 3> a = {1, 2, 3};
    Loader l(in, 2);
    int sum = 0;
    switch (int(i % 3)) {
    case 0:
        sum += 10;
        [[fallthrough]];
    case 1:
        sum += 1;
        break;
    default:
        sum = -1;
    }
    Mode m = Mode::Add;
    float v = l.template load<float>(i) + l.load<int>(i);
    v += a.size() + Factorial<5>::value + Width<float, 0>::value + Width<int, 7>::value;
    v += count(1, 2.0f, 3u) + twice(0.25f) + bump(4) + bump(1.0f) + scaled(in[i]);
    out[i] = v + sum + int(m);
}
"#;
    let n = 6u32;
    let input: Vec<String> = (0..2 * n).map(|k| format!("{}.5", k)).collect();
    let extra = format!(
        "[[buffer]]\nindex = 1\nname = \"in\"\ntype = \"float\"\ncount = {}\ninit = {{ values = [{}] }}\n",
        2 * n,
        input.join(", ")
    );
    let (_, out) = run_source(
        src,
        &spec("constructs", [n, 1, 1], [n, 1, 1], "float", n, &extra),
    );
    let got = f32s(&out.buffers[0]);
    for i in 0..n as usize {
        let at = |k: usize| k as f32 + 0.5;
        let loaded = at(2 * i) + at(2 * i).trunc();
        let sum = [11.0, 1.0, -1.0][i % 3];
        let want =
            loaded + 3.0 + 120.0 + 100.0 + 7.0 + 3.0 + 0.5 + 5.0 + 3.0 + at(i) * 2.0 + sum + 2.0;
        assert_eq!(got[i], want, "thread {i}");
    }
}

#[test]
fn functions_as_template_arguments() {
    let src = r#"
#include <metal_stdlib>
using namespace metal;
float dbl(float x) { return 2 * x; }
float sq(float x) { return x * x; }
template <float (*F)(float)> float apply(float x) { return F(x); }
template <float (*F)(float), int N> struct Repeat {
    static float run(float x) { for (int i = 0; i < N; i++) { x = F(x); } return x; }
};
kernel void fnargs(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    float x = float(i) + 0.5f;
    out[i] = apply<dbl>(x) + 10 * apply<&sq>(x) + 100 * Repeat<dbl, 3>::run(x);
}
"#;
    let n = 8u32;
    let (_, out) = run_source(src, &spec("fnargs", [n, 1, 1], [n, 1, 1], "float", n, ""));
    let got = f32s(&out.buffers[0]);
    for (i, g) in got.iter().enumerate() {
        let x = i as f32 + 0.5;
        assert_eq!(*g, 2.0 * x + 10.0 * x * x + 100.0 * 8.0 * x, "thread {i}");
    }
}
