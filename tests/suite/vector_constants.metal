// Function constants of vector type, fixed when the pipeline is made from the launch
// spec's `[constants]` arrays: the weights of a 4-tap filter (`float4`), a bias (`half2`)
// and two edge switches (`bool2`).
#include <metal_stdlib>
using namespace metal;

constant float4 taps [[function_constant(0)]];
constant half2 bias [[function_constant(1)]];
constant bool2 clamp_ends [[function_constant(2)]];
constant bool has_bias = is_function_constant_defined(bias);

// out[i] = (y, -y) + bias, y = the taps over x[i - 1 .. i + 2]; an index before the
// start reads x[0] under clamp_ends.x, one past the end x[n - 1] under clamp_ends.y, and
// otherwise 0.
kernel void filter4(device const float* x [[buffer(0)]],
                    device float2* out [[buffer(1)]],
                    constant uint& n [[buffer(2)]],
                    uint i [[thread_position_in_grid]]) {
    float4 window;
    for (int k = 0; k < 4; k++) {
        int j = int(i) + k - 1;
        if (clamp_ends.x) {
            j = max(j, 0);
        }
        if (clamp_ends.y) {
            j = min(j, int(n) - 1);
        }
        window[k] = (j >= 0 && j < int(n)) ? x[j] : 0.0f;
    }
    float y = dot(window, taps);
    float2 r = float2(y, -y);
    if (has_bias) {
        r += float2(bias);
    }
    out[i] = r;
}
