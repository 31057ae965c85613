// Template errors: a failed static_assert in an instantiation, a call no overload
// matches, a missing template argument, and an overloaded function as a function pointer
// template argument.
#include <metal_stdlib>
using namespace metal;

template <typename T, int N>
struct Tile {
    static_assert(N % 8 == 0, "tiles are multiples of 8");
    T data[N];
};

template <typename T>
T scale(T x, T s) { return x * s; }

template <typename T, int BM>
[[kernel]] void tiled(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    thread Tile<T, BM> tile;
    tile.data[0] = scale(out[i], 2);
    out[i] = tile.data[0];
}

template [[host_name("tiled_f32_12")]] [[kernel]] decltype(tiled<float, 12>) tiled<float, 12>;
template [[host_name("tiled_f32")]] [[kernel]] decltype(tiled<float>) tiled<float>;

float twice(float x) { return 2 * x; }
half twice(half x) { return 2 * x; }
template <float (*F)(float)> float apply(float x) { return F(x); }

kernel void applied(device float* out [[buffer(0)]]) { out[0] = apply<twice>(out[0]); }
