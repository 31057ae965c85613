// What the H100 probes that time each warp share (store_trace_probe.cu,
// copy_trace_probe.cu, pattern_probe.cu): the SM's clock, its SM and warp slot, and the
// record of copy_trace_probe.cu and pattern_probe.cu that validation/h100/probe13.py
// reads.
#pragma once

// clock64() with a "memory" clobber, so that memory operations stay on either side of it.
__device__ __forceinline__ unsigned long long stamp() {
    unsigned long long r;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(r)::"memory");
    return r;
}
__device__ __forceinline__ unsigned smid() {
    unsigned r;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(r));
    return r;
}
__device__ __forceinline__ unsigned warpslot() {
    unsigned r;
    asm volatile("mov.u32 %0, %%warpid;" : "=r"(r));
    return r;
}

// u32 words a warp's record takes: warp index, SM, warp slot, t0, t1, t2 (the clock's
// low 32 bits), 0, 0; lanes 0-7 write one each (one whole sector).
constexpr int kRecordWords = 8;

// Lane `lane`'s word of warp `warp`'s record, written to `trace`. Every value first,
// then one select a lane, so that writing the record takes no branches (a switch on the
// lane made a traced copy 34% slower than the plain one).
__device__ __forceinline__ void write_record(unsigned* trace, unsigned warp, unsigned lane,
                                             unsigned long long t0, unsigned long long t1,
                                             unsigned long long t2) {
    const unsigned sm = smid(), slot = warpslot();
    unsigned word = lane == 0 ? warp : 0u;
    word = lane == 1 ? sm : word;
    word = lane == 2 ? slot : word;
    word = lane == 3 ? (unsigned)t0 : word;
    word = lane == 4 ? (unsigned)t1 : word;
    word = lane == 5 ? (unsigned)t2 : word;
    if (lane < kRecordWords) trace[(size_t)warp * kRecordWords + lane] = word;
}
