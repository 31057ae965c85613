// A block radix sort in the style of CUB/MLX block sorts: each threadgroup sorts its block
// of keys (one per thread) one bit at a time, each pass a stable split computed with
// simd_prefix_exclusive_sum within SIMD-groups and a scan of the SIMD-groups' totals in
// threadgroup memory. Keys become radix-ordered unsigned bits through a traits struct
// (as_type flips for signed integers and floats).
#include <metal_stdlib>
using namespace metal;

template <typename T> struct RadixTraits;

template <> struct RadixTraits<uint> {
    static METAL_FUNC uint to_bits(uint x) { return x; }
    static METAL_FUNC uint from_bits(uint b) { return b; }
};

template <> struct RadixTraits<int> {
    static METAL_FUNC uint to_bits(int x) { return as_type<uint>(x) ^ 0x80000000u; }
    static METAL_FUNC int from_bits(uint b) { return as_type<int>(b ^ 0x80000000u); }
};

template <> struct RadixTraits<float> {
    // Negative floats order reversed: flip all their bits; positive ones: the sign bit.
    static METAL_FUNC uint to_bits(float x) {
        uint b = as_type<uint>(x);
        return (b & 0x80000000u) ? ~b : (b | 0x80000000u);
    }
    static METAL_FUNC float from_bits(uint b) {
        return as_type<float>((b & 0x80000000u) ? (b & 0x7fffffffu) : ~b);
    }
};

// An exclusive prefix sum over the threadgroup, of one value per thread.
template <int SIMD_GROUPS>
struct BlockScan {
    threadgroup uint* totals;
    uint lane;
    uint group;

    // Returns this thread's exclusive prefix and sets `total` to the sum of all.
    METAL_FUNC uint exclusive(uint v, thread uint& total) const {
        uint prefix = simd_prefix_exclusive_sum(v);
        uint group_sum = simd_sum(v);
        if (lane == 0) {
            totals[group] = group_sum;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        uint before = 0;
        total = 0;
        for (int g = 0; g < SIMD_GROUPS; ++g) {
            uint t = totals[g];
            before += uint(g) < group ? t : 0;
            total += t;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
        return before + prefix;
    }
};

template <typename T, int BLOCK>
[[kernel, max_total_threads_per_threadgroup(BLOCK)]] void block_radix_sort(
    const device T* in [[buffer(0)]],
    device T* out [[buffer(1)]],
    constant uint& n [[buffer(2)]],
    uint lid [[thread_position_in_threadgroup]],
    uint tgid [[threadgroup_position_in_grid]],
    uint simd_lane [[thread_index_in_simdgroup]],
    uint simd_group [[simdgroup_index_in_threadgroup]]) {
    static_assert(BLOCK % 32 == 0, "a block is whole SIMD-groups");
    using Traits = RadixTraits<T>;
    threadgroup uint keys[BLOCK];
    threadgroup uint totals[BLOCK / 32];

    const uint i = tgid * BLOCK + lid;
    // Padding sorts last.
    keys[lid] = i < n ? Traits::to_bits(in[i]) : 0xffffffffu;
    threadgroup_barrier(mem_flags::mem_threadgroup);

    BlockScan<BLOCK / 32> scan{totals, simd_lane, simd_group};
    for (uint bit = 0; bit < sizeof(uint) * 8; ++bit) {
        const uint key = keys[lid];
        const uint is_zero = ((key >> bit) & 1u) ^ 1u;
        uint zeros;
        const uint zeros_before = scan.exclusive(is_zero, zeros);
        const uint dest = is_zero ? zeros_before : zeros + (lid - zeros_before);
        keys[dest] = key;
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (i < n) {
        out[i] = Traits::from_bits(keys[lid]);
    }
}

#define instantiate_block_sort(tname, type, block)                                      \
    template [[host_name("block_radix_sort_" #tname "_" #block)]] [[kernel]]             \
    decltype(block_radix_sort<type, block>) block_radix_sort<type, block>;

instantiate_block_sort(uint32, uint, 128)
instantiate_block_sort(int32, int, 256)
instantiate_block_sort(float32, float, 64)
