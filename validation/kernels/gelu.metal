// GELU in its erf form, y = x / 2 * (1 + erf(x / sqrt(2))), fused into one kernel as
// mx.compile makes it. erf is Abramowitz and Stegun 7.1.26 (|error| < 1.5e-7).
#include <metal_stdlib>
using namespace metal;

static float erf_approx(float x)
{
    const float t = 1.0f / (1.0f + 0.3275911f * fabs(x));
    const float p = ((((1.061405429f * t - 1.453152027f) * t + 1.421413741f) * t
                      - 0.284496736f) * t + 0.254829592f) * t;
    const float y = 1.0f - p * exp(-x * x);
    return x < 0.0f ? -y : y;
}

kernel void gelu(device const float* x [[buffer(0)]],
                 device float*       y [[buffer(1)]],
                 uint i [[thread_position_in_grid]])
{
    const float v = x[i];
    y[i] = 0.5f * v * (1.0f + erf_approx(v * 0.70710678f));
}
