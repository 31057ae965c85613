// An error inside a macro's expansion: the report points at the use and at the
// definition.
#include <metal_stdlib>
using namespace metal;

#define LOAD(buf, i) (buf[i] + undefined_scale)
#define INSTANTIATE(name, type)                                             \
    template [[host_name(#name)]] [[kernel]] decltype(k<type>) k<type>;

template <typename T>
[[kernel]] void k(device T* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    out[i] = LOAD(out, i);
}

INSTANTIATE(k_float, float)
