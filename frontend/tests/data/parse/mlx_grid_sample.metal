// An MLX `mx.fast.metal_kernel` body in the signature MLX generates for it, with the
// template parameter T fixed to float.
#include <metal_stdlib>
using namespace metal;

[[kernel]] void custom_kernel_grid_sample(
    const device float* x [[buffer(0)]],
    const constant int* x_shape [[buffer(1)]],
    const device float* grid [[buffer(2)]],
    const constant int* grid_shape [[buffer(3)]],
    device float* out [[buffer(4)]],
    uint3 thread_position_in_grid [[thread_position_in_grid]]
) {
    uint elem = thread_position_in_grid.x;
    int H = x_shape[1];
    int W = x_shape[2];
    int C = x_shape[3];
    int gH = grid_shape[1];
    int gW = grid_shape[2];

    int w_stride = C;
    int h_stride = W * w_stride;
    int b_stride = H * h_stride;

    uint grid_idx = elem / C * 2;
    float ix = ((grid[grid_idx] + 1) * W - 1) / 2;
    float iy = ((grid[grid_idx + 1] + 1) * H - 1) / 2;

    int ix_nw = floor(ix);
    int iy_nw = floor(iy);
    int ix_se = ix_nw + 1;
    int iy_se = iy_nw + 1;

    float nw = (ix_se - ix) * (iy_se - iy);
    float se = (ix - ix_nw) * (iy - iy_nw);

    int batch_idx = elem / C / gH / gW * b_stride;
    int channel_idx = elem % C;
    int base_idx = batch_idx + channel_idx;

    float I_nw = x[base_idx + iy_nw * h_stride + ix_nw * w_stride];
    float I_se = x[base_idx + iy_se * h_stride + ix_se * w_stride];

    I_nw = iy_nw >= 0 && iy_nw <= H - 1 && ix_nw >= 0 && ix_nw <= W - 1 ? I_nw : 0;
    I_se = iy_se >= 0 && iy_se <= H - 1 && ix_se >= 0 && ix_se <= W - 1 ? I_se : 0;

    out[elem] = nw * I_nw + se * I_se;
}
