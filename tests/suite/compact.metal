// Stream compaction with SIMD-group ballots, as filtering and top-k kernels write it:
// `simd_ballot` gives a `simd_vote`, its bits (`simd_vote::vote_t`) give each kept
// element's rank among its SIMD-group's kept ones, `all()`/`any()` take the fast paths, and
// one count per SIMD-group in threadgroup memory orders the SIMD-groups. Each threadgroup
// writes its kept elements, in order, to its own segment of the output and their count.

#include <metal_stdlib>
using namespace metal;

namespace compaction {
namespace detail {
template <typename T>
inline bool keep(T v, T threshold) {
    return v > threshold;
}
} // namespace detail
} // namespace compaction

namespace cd = compaction::detail;

template <typename T, uint BLOCK>
[[kernel, max_total_threads_per_threadgroup(BLOCK)]] void compact_block(
    device const T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    device uint* counts [[buffer(2)]],
    constant T& threshold [[buffer(3)]],
    constant uint& n [[buffer(4)]],
    uint gid [[thread_position_in_grid]],
    uint tid [[thread_index_in_threadgroup]],
    uint group [[threadgroup_position_in_grid]],
    uint lane [[thread_index_in_simdgroup]],
    uint simd [[simdgroup_index_in_threadgroup]]) {
    constexpr uint SIMDS = BLOCK / 32;
    threadgroup uint simd_counts[SIMDS];
    const T v = gid < n ? in[gid] : T(0);
    const bool kept = gid < n && cd::keep(v, threshold);
    const simd_vote vote = simd_ballot(kept);
    const simd_vote::vote_t bits = static_cast<simd_vote::vote_t>(vote);
    const uint below = popcount(uint(bits & ((1ul << lane) - 1ul)));
    if (lane == 0) {
        simd_counts[simd] = vote.all() ? 32u : popcount(uint(bits));
    }
    threadgroup_barrier(mem_flags::mem_threadgroup);
    if (vote.any() && kept) {
        uint base = 0;
        for (uint s = 0; s < simd; ++s) {
            base += simd_counts[s];
        }
        out[group * BLOCK + base + below] = v;
    }
    if (tid == 0) {
        uint total = 0;
        for (uint s = 0; s < SIMDS; ++s) {
            total += simd_counts[s];
        }
        counts[group] = total;
    }
}

#define INSTANTIATE_COMPACT(tname, T, BLOCK)                                             \
    template [[host_name("compact_" #tname "_" #BLOCK)]] [[kernel]] decltype(           \
        compact_block<T, BLOCK>) compact_block<T, BLOCK>;

INSTANTIATE_COMPACT(float32, float, 128)
INSTANTIATE_COMPACT(int32, int, 64)
