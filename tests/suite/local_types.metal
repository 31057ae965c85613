// Types declared inside functions, as kernels write them to keep a helper type next to its
// only use: a class with constructors, an operator and a static constexpr member inside a
// function template (it uses the template's parameters and the local alias and constant
// declared before it), a local `typedef union` for bit punning, and a local class in an
// inner block that shadows a namespace-scope one until the block ends.
#include <metal_stdlib>
using namespace metal;

// The score of a window of W values: mean * 0.5 + (max - min).
template <typename T, int W>
float window_score(device const T* x, uint start) {
    using Acc = float;
    constexpr int width = W;
    struct Stats {
        Acc lo, hi, sum;
        static constexpr Acc scale = 0.5f;
        Stats() : lo(INFINITY), hi(-INFINITY), sum(0) {}
        explicit Stats(Acc v) : lo(v), hi(v), sum(v) {}
        Stats operator+(Stats o) const {
            Stats r;
            r.lo = min(lo, o.lo);
            r.hi = max(hi, o.hi);
            r.sum = sum + o.sum;
            return r;
        }
        Acc score() const { return sum / width * scale + (hi - lo); }
    };
    Stats s;
    for (int i = 0; i < width; i++) {
        s = s + Stats(Acc(x[start + i]));
    }
    return s.score();
}

kernel void window_scores_f32(device const float* x [[buffer(0)]],
                              device float* out [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
    out[i] = window_score<float, 8>(x, i * 8);
}

kernel void window_scores_f16(device const half* x [[buffer(0)]],
                              device float* out [[buffer(1)]],
                              uint i [[thread_position_in_grid]]) {
    out[i] = window_score<half, 4>(x, i * 4);
}

struct Key {
    uint v;
};

// Mixes the two halves of each float's bits: (bits >> 16) ^ ((bits & 0xffff) << 3).
kernel void mixed_keys(device const float* x [[buffer(0)]],
                       device uint* out [[buffer(1)]],
                       uint i [[thread_position_in_grid]]) {
    typedef union {
        float f;
        uint u;
    } Bits;
    Bits b;
    b.f = x[i];
    uint mixed;
    {
        struct Key {
            uint hi, lo;
            uint mix() const { return hi ^ (lo << 3); }
        };
        Key k{b.u >> 16, b.u & 0xffffu};
        mixed = k.mix();
    }
    Key outer{mixed};
    out[i] = outer.v;
}
