// Tile and quantization parameters held in `constexpr` struct values, as GEMM-style
// kernels write them: a program-scope aggregate with nested structs, an array of structs
// with bit-fields and an `array<T, N>` member, `constexpr` methods called on it, a static
// constexpr member built by a `constexpr` function returning a struct, and a block-scope
// object built by a `constexpr` constructor. Every member read here is a constant
// expression: array bounds, template arguments, `static_assert` and `if constexpr` use them.
#include <metal_stdlib>
using namespace metal;

struct TileShape {
    uint bm;
    uint bn;
    constexpr uint area() const { return bm * bn; }
};

struct Scale {
    uint w;
    uint bias : 4;
    uint shift : 4;
};

struct Params {
    TileShape tile;
    Scale scales[3];
    array<uint, 4> order;
    constexpr uint weight(uint k) const { return scales[k].w << scales[k].shift; }
};

constexpr TileShape square(uint n) { return TileShape{n, n}; }

struct Step {
    uint base;
    uint mul;
    constexpr Step(uint b) : base(b), mul(0) { mul = base * 2 + 1; }
};

struct Cfg {
    static constexpr TileShape t = square(4);
};

constexpr constant Params params = {{8, 4}, {{3, 1, 2}, {5, 2, 0}, {7, 3, 1}}, {2, 0, 3, 1}};

static_assert(params.tile.area() == 32, "tile area");
static_assert(params.tile.bm % 4 == 0, "bm is a multiple of 4");
static_assert(params.scales[2].bias == 3 && params.scales[0].shift == 2, "bit-fields");
static_assert(params.order.size() == 4 && params.order[2] == 3, "array member");
static_assert(Cfg::t.area() == 16, "static member from a constexpr function");

template <uint N>
uint times(uint v) { return v * N; }

// out[i] = x[i] * (order[i % 4] + 1) + weight(i % 3) + 100 + step.mul * t.area() + i % bn
//        + x[i] * bm.
kernel void constexpr_params(device const uint* x [[buffer(0)]],
                             device uint* out [[buffer(1)]],
                             uint i [[thread_position_in_grid]]) {
    constexpr Step step(3);
    static_assert(step.mul == 7, "constexpr constructor");
    uint acc[params.tile.bn];
    for (uint k = 0; k < params.tile.bn; k++) {
        acc[k] = x[i] * (k + 1);
    }
    uint r = acc[params.order[i % 4]] + params.weight(i % 3);
    if constexpr (params.weight(1) == 5) {
        r += 100;
    } else {
        r += 1000;
    }
    out[i] = r + step.mul * Cfg::t.area() + i % params.tile.bn + times<params.tile.bm>(x[i]);
}
