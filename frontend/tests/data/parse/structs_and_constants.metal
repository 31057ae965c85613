#include <metal_stdlib>
using namespace metal;

struct Particle {
    float3 position;
    float3 velocity;
    float mass, charge;
    float4 history[2];
};

struct Params {
    uint count;
    float dt;
    packed_float3 gravity;
};

typedef struct {
    float x, y;
} Point;

constant float WEIGHTS[3] = {0.25f, 0.5f, 0.25f};
constexpr constant uint BLOCK = 64;
constant constexpr int RADIUS = 1;
static constant float EPS = 1e-6f;
constant bool use_gravity [[function_constant(0)]];
constant int GRID[2][3] = {{1, 2, 3}, {4, 5, 6}};

static inline float sq(float x) { return x * x; }

METAL_FUNC float3 accel(thread const Particle& p, constant Params& params) {
    float3 a = float3(0.0f);
    if (use_gravity) {
        a += float3(params.gravity) / max(p.mass, EPS);
    }
    return a;
}

float blur_at(device const float* in, int i) {
    float s = 0.0f;
    for (int k = -RADIUS; k <= RADIUS; k++) {
        s += WEIGHTS[k + RADIUS] * in[i + k];
    }
    return s;
}

kernel void step(
    device Particle* particles [[buffer(0)]],
    constant Params& params [[buffer(1)]],
    uint id [[thread_position_in_grid]]
) {
    if (id >= params.count) {
        return;
    }
    device Particle& p = particles[id];
    thread Particle local = p;
    Point pt = {local.position.x, local.position.y};
    local.velocity += accel(local, params) * params.dt;
    local.position = local.position + local.velocity * params.dt;
    local.history[id % 2] = float4(local.position, sq(pt.x));
    p = local;
}
