//! The host side of a generated CUDA program: reads the launch's buffers as raw bytes,
//! runs the kernel once for its outputs, then times it (warm-up, then the median of
//! repeated CUDA-event timings, each on restored buffers and a flushed L2 cache).

use std::fmt::Write;

use metalsim_isa::{Function, KernelParam, ParamKind};
use metalsim_launch::Launch;

use super::EmitError;
use super::kernel::{buffer_indices, cuda_name, threadgroup_indices};

/// How to run a generated program (also printed by the program on bad arguments).
pub const HOST_USAGE: &str = "usage: PROGRAM DIR [--once] [--warmup N] [--repeats N]\n\
  reads DIR/inputs/<binding>.bin (each buffer's bytes as MSL lays them out), runs the kernel\n\
  once and writes DIR/outputs/<binding>.bin for the output buffers; then, unless --once,\n\
  times --warmup (default 5) launches and --repeats (default 30) timed ones, each on\n\
  freshly restored writable buffers after a 256 MiB write and read that leave the L2 cache\n\
  holding only clean, unrelated lines, and\n\
  writes DIR/measurement.json (times in microseconds, CUDA events around the launch).";

/// Bytes of scratch written before each timed launch to evict the L2 cache (the H100
/// has 50 MB of L2; twice that and some).
const FLUSH_BYTES: u64 = 256 << 20;

pub(super) fn emit_host(f: &Function, launch: &Launch, out: &mut String) -> Result<(), EmitError> {
    let fail = |message: String| EmitError::Launch {
        kernel: f.name.clone(),
        message,
    };
    let groups = launch.threadgroups_per_grid();
    if groups[1] > 65_535 || groups[2] > 65_535 || groups[0] > i32::MAX as u32 {
        return Err(fail(format!(
            "{groups:?} threadgroups exceed CUDA's grid limits (2^31-1 x 65535 x 65535)"
        )));
    }
    let threads = launch.threads_per_grid();
    let mut bufs = Vec::new();
    for n in buffer_indices(f) {
        let p = param(f, ParamKind::Buffer, n);
        let b = launch
            .buffer(n)
            .ok_or_else(|| fail(format!("the launch binds nothing at buffer({n})")))?;
        bufs.push(format!(
            "    {{{n}u, \"{}\", {}ull, {}, {}}},",
            b.name.escape_default(),
            b.bytes.len(),
            !p.readonly,
            b.output
        ));
    }
    let mut tg = Vec::new();
    let mut offset = 0u64;
    for n in threadgroup_indices(f) {
        let bytes = launch
            .threadgroup_memory(n)
            .ok_or_else(|| fail(format!("the launch gives no threadgroup({n}) memory")))?;
        tg.push((n, offset));
        offset += (bytes as u64).div_ceil(16) * 16;
    }
    let dynamic = offset;
    let name = cuda_name(f);
    let args: Vec<String> = std::iter::once("geom".to_string())
        .chain(tg.iter().map(|(_, off)| format!("{off}u")))
        .chain((0..bufs.len()).map(|k| format!("dev[{k}]")))
        .collect();
    let _ = write!(
        out,
        r#"
// ---- host ----------------------------------------------------------------------
#ifndef __CUDACC_RTC__
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>
#include <cuda_runtime.h>

#define MS_CHECK(x) do {{ cudaError_t e_ = (x); if (e_ != cudaSuccess) {{ \
    fprintf(stderr, "%s:%d: %s failed: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
    exit(3); }} }} while (0)

// Reads the flush buffer after it was written, so that the write-backs of its dirty lines
// happen here and not inside the timed kernel: the L2 is left full of clean lines, as
// after Nsight Compute's cache control.
__global__ void ms_flush_read(const uint4* p, size_t n, unsigned* sink) {{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {{
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }}
    if (acc == 0x9e3779b9u) sink[0] = acc;
}}

struct MsBuffer {{ unsigned index; const char* name; size_t bytes; bool writable; bool output; }};
static const MsBuffer ms_buffers[] = {{
{bufs}
    {{0u, nullptr, 0ull, false, false}}
}};
static const size_t ms_buffer_count = {nbufs};

static std::vector<unsigned char> ms_read(const std::string& path, size_t bytes) {{
    std::vector<unsigned char> data(bytes);
    FILE* f = fopen(path.c_str(), "rb");
    if (!f) {{ fprintf(stderr, "cannot open %s\n", path.c_str()); exit(2); }}
    size_t got = bytes ? fread(data.data(), 1, bytes, f) : 0;
    int extra = fgetc(f);
    fclose(f);
    if (got != bytes || extra != EOF) {{
        fprintf(stderr, "%s: expected exactly %zu bytes\n", path.c_str(), bytes); exit(2); }}
    return data;
}}

static void ms_write(const std::string& path, const void* data, size_t bytes) {{
    FILE* f = fopen(path.c_str(), "wb");
    if (!f || fwrite(data, 1, bytes, f) != bytes) {{ fprintf(stderr, "cannot write %s\n", path.c_str()); exit(2); }}
    fclose(f);
}}

int main(int argc, char** argv) {{
    static const char* usage = "{usage}";
    if (argc < 2) {{ fprintf(stderr, "%s\n", usage); return 2; }}
    std::string dir = argv[1];
    bool once = false;
    int warmup = 5, repeats = 30;
    for (int i = 2; i < argc; ++i) {{
        std::string a = argv[i];
        if (a == "--once") once = true;
        else if (a == "--warmup" && i + 1 < argc) warmup = atoi(argv[++i]);
        else if (a == "--repeats" && i + 1 < argc) repeats = atoi(argv[++i]);
        else {{ fprintf(stderr, "%s\n", usage); return 2; }}
    }}
    if (repeats < 1 || warmup < 0) {{ fprintf(stderr, "%s\n", usage); return 2; }}
    cudaDeviceProp prop;
    MS_CHECK(cudaGetDeviceProperties(&prop, 0));
    std::vector<unsigned char*> dev(ms_buffer_count + 1, nullptr), pristine(ms_buffer_count + 1, nullptr);
    for (size_t k = 0; k < ms_buffer_count; ++k) {{
        const MsBuffer& b = ms_buffers[k];
        std::vector<unsigned char> host = ms_read(dir + "/inputs/" + std::to_string(b.index) + ".bin", b.bytes);
        MS_CHECK(cudaMalloc(&dev[k], b.bytes ? b.bytes : 1));
        if (b.bytes) MS_CHECK(cudaMemcpy(dev[k], host.data(), b.bytes, cudaMemcpyHostToDevice));
        if (b.writable) {{
            MS_CHECK(cudaMalloc(&pristine[k], b.bytes ? b.bytes : 1));
            if (b.bytes) MS_CHECK(cudaMemcpy(pristine[k], host.data(), b.bytes, cudaMemcpyHostToDevice));
        }}
    }}
    const size_t dynamic_shared = {dynamic}ull;
    if (dynamic_shared > 48 * 1024)
        MS_CHECK(cudaFuncSetAttribute({name}, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dynamic_shared));
    MsGeom geom = {{{{{t0}u, {t1}u, {t2}u}}, {{{g0}u, {g1}u, {g2}u}}}};
    dim3 grid({gx}u, {gy}u, {gz}u), block({block}u, 1u, 1u);
    auto launch = [&]() {{
        {name}<<<grid, block, dynamic_shared>>>({args});
        MS_CHECK(cudaGetLastError());
    }};
    auto restore = [&]() {{
        for (size_t k = 0; k < ms_buffer_count; ++k)
            if (ms_buffers[k].writable && ms_buffers[k].bytes)
                MS_CHECK(cudaMemcpyAsync(dev[k], pristine[k], ms_buffers[k].bytes, cudaMemcpyDeviceToDevice));
    }};
    launch();
    MS_CHECK(cudaDeviceSynchronize());
    if (once) return 0;
    std::string outdir = dir + "/outputs";
    std::string mk = "mkdir -p '" + outdir + "'";
    if (system(mk.c_str()) != 0) {{ fprintf(stderr, "cannot create %s\n", outdir.c_str()); return 2; }}
    for (size_t k = 0; k < ms_buffer_count; ++k) {{
        const MsBuffer& b = ms_buffers[k];
        if (!b.output) continue;
        std::vector<unsigned char> host(b.bytes);
        if (b.bytes) MS_CHECK(cudaMemcpy(host.data(), dev[k], b.bytes, cudaMemcpyDeviceToHost));
        ms_write(outdir + "/" + std::to_string(b.index) + ".bin", host.data(), b.bytes);
    }}
    unsigned char* flush = nullptr;
    MS_CHECK(cudaMalloc(&flush, {flush}ull));
    cudaEvent_t start, stop;
    MS_CHECK(cudaEventCreate(&start));
    MS_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; ++i) {{ restore(); launch(); }}
    MS_CHECK(cudaDeviceSynchronize());
    std::vector<double> times;
    for (int i = 0; i < repeats; ++i) {{
        restore();
        MS_CHECK(cudaMemsetAsync(flush, i & 0xff, {flush}ull));
        ms_flush_read<<<prop.multiProcessorCount * 4, 512>>>((const uint4*)flush, {flush}ull / 16, (unsigned*)flush);
        MS_CHECK(cudaGetLastError());
        MS_CHECK(cudaEventRecord(start));
        launch();
        MS_CHECK(cudaEventRecord(stop));
        MS_CHECK(cudaEventSynchronize(stop));
        float ms = 0.0f;
        MS_CHECK(cudaEventElapsedTime(&ms, start, stop));
        times.push_back(ms * 1000.0);
    }}
    std::vector<double> sorted = times;
    std::sort(sorted.begin(), sorted.end());
    size_t n = sorted.size();
    double median = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
    std::string json = "{{\"kernel\": \"{kernel}\", \"device\": \"" + std::string(prop.name) +
        "\", \"sm_count\": " + std::to_string(prop.multiProcessorCount) +
        ", \"warmup\": " + std::to_string(warmup) + ", \"repeats\": " + std::to_string(repeats) +
        ", \"median_us\": " + std::to_string(median) + ", \"min_us\": " + std::to_string(sorted[0]) +
        ", \"max_us\": " + std::to_string(sorted[n - 1]) + ", \"times_us\": [";
    for (size_t i = 0; i < times.size(); ++i) json += (i ? ", " : "") + std::to_string(times[i]);
    json += "]}}\n";
    ms_write(dir + "/measurement.json", json.data(), json.size());
    printf("%s: median %.3f us over %d launches (min %.3f, max %.3f)\n", "{kernel}", median, repeats, sorted[0], sorted[n - 1]);
    return 0;
}}
#endif
"#,
        bufs = bufs.join("\n"),
        nbufs = bufs.len(),
        usage = HOST_USAGE.escape_default(),
        dynamic = dynamic,
        name = name,
        t0 = threads[0],
        t1 = threads[1],
        t2 = threads[2],
        g0 = launch.threadgroup[0],
        g1 = launch.threadgroup[1],
        g2 = launch.threadgroup[2],
        gx = groups[0],
        gy = groups[1],
        gz = groups[2],
        block = launch.threadgroup.iter().product::<u32>(),
        args = args.join(", "),
        flush = FLUSH_BYTES,
        kernel = f.name.escape_default(),
    );
    Ok(())
}

fn param(f: &Function, kind: ParamKind, index: u32) -> &KernelParam {
    f.param(kind, index)
        .expect("binding indices come from the function's own parameters")
}
