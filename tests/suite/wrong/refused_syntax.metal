// Constructs refused while parsing, each by name at its location: lambdas (not supported
// yet), and what MSL itself forbids (virtual functions, goto, templates declared inside a
// function). All four are reported.
#include <metal_stdlib>
using namespace metal;

struct Shape {
    virtual float area() { return 0; }
};

kernel void lambda_user(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {
    auto twice = [](float x) { return 2 * x; };
    out[i] = twice(out[i]);
}

kernel void jumps(device float* out [[buffer(0)]]) {
    goto done;
    out[0] = 1;
}

kernel void local_templates(device float* out [[buffer(0)]]) {
    template <typename T> struct Pair { T a, b; };
    out[0] = 1;
}
