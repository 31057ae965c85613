#include <metal_stdlib>
#include <metal_simdgroup_matrix>
using namespace metal;

namespace util {
    constexpr constant float PI = 3.14159265358979f;
    inline float deg(float r) { return r * 180.0f / PI; }
    namespace detail {
        struct Pair { int a; int b; };
    }
}

typedef float4 color;
using index_t = uint;
using fptr = device float*;

static_assert(sizeof(float4) == 16, "float4 is 16 bytes");

template <typename T>
T twice(T x) { return x + x; }

template <typename T, int N>
struct Buffer {
    T data[N];
};

template [[host_name("twice_f")]] kernel void twice_kernel<float>(device float*);

struct Complex {
    float re, im;
    Complex(float r, float i) { re = r; im = i; }
    float norm() const { return re * re + im * im; }
    Complex operator+(Complex o) const { return Complex(re + o.re, im + o.im); }
};

enum class Mode { Add, Mul };

[[max_total_threads_per_threadgroup(256)]]
kernel void misc(
    device float* out [[buffer(0)]],
    device const uint* bits [[buffer(1)]],
    texture2d<float, access::read> tex [[texture(0)]],
    index_t id [[thread_position_in_grid]]
) {
    vec<float, 4> v = vec<float, 4>(1.0f, 2.0f, 3.0f, 4.0f);
    array<int, 3> arr = {1, 2, 3};
    float2 p = float2{0.5f, 0.25f};
    color c = color(v.x, v.y, 0.0h, 1.h);
    uint raw = as_type<uint>(p.x);
    float back = as_type<float>(raw);
    half h = static_cast<half>(back);
    unsigned int ui = 0xFFFFu;
    long long big = 1LL;
    unsigned short us = (unsigned short)ui;
    signed char sc = 'a';
    size_t sz = sizeof(Complex) + sizeof v + alignof(float4);
    auto z = util::deg(metal::max(p.x, p.y)) + ::util::PI;
    float k = float(twice(2));
    util::detail::Pair pr = {1, 2};
    fptr q = out;
    float m = min(min(1.0f, 2.0f), fast::sqrt(4.0f));
    bool t = !(ui > 3u) && bits[0] != 0 || false;
    q[id] = t ? m + k + float(h) + float(sz) + float(big + us + sc) + z + pr.a : 0.0f;
    out[id] += .5e1f - 1e-3 + 0x1p-2f + 0b101 + 017 + 'x' + raw;
}
