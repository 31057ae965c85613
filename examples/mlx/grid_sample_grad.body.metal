// Bilinear grid sample, backward: given the cotangent of the output, accumulate the
// gradients of x and of grid with atomics. One SIMD-group per sampling point: channels
// are padded to a multiple of the SIMD-group width so that simd_sum adds up one point's
// channels only, and one lane adds the grid gradient.
uint elem = thread_position_in_grid.x;
int H = x_shape[1];
int W = x_shape[2];
int C = x_shape[3];
int C_padded = ceildiv(C, threads_per_simdgroup) * threads_per_simdgroup;
int gH = grid_shape[1];
int gW = grid_shape[2];

uint point = elem / C_padded;
int c = elem % C_padded;
int batch = point / (gH * gW);

float ix = ((grid[point * 2] + 1) * W - 1) / 2;
float iy = ((grid[point * 2 + 1] + 1) * H - 1) / 2;
int x0 = floor(ix);
int y0 = floor(iy);
float fx = ix - x0;
float fy = iy - y0;

T gix = 0;
T giy = 0;
if (c < C) {
    T cot = cotangent[point * C + c];
    int base = batch * H * W * C + c;
    for (int dy = 0; dy < 2; ++dy) {
        for (int dx = 0; dx < 2; ++dx) {
            int yy = y0 + dy;
            int xx = x0 + dx;
            if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
                T wx = dx ? fx : 1 - fx;
                T wy = dy ? fy : 1 - fy;
                int offset = base + (yy * W + xx) * C;
                atomic_fetch_add_explicit(&x_grad[offset], wx * wy * cot, memory_order_relaxed);
                T v = x[offset] * cot;
                // d(wx)/d(ix) is +1 for the right corners and -1 for the left ones.
                gix += (dx ? v : -v) * wy;
                giy += (dy ? v : -v) * wx;
            }
        }
    }
}

gix = simd_sum(gix);
giy = simd_sum(giy);
if (thread_index_in_simdgroup == 0) {
    // d(ix)/d(grid.x) = W / 2 and d(iy)/d(grid.y) = H / 2.
    atomic_fetch_add_explicit(&grid_grad[point * 2], gix * W / 2, memory_order_relaxed);
    atomic_fetch_add_explicit(&grid_grad[point * 2 + 1], giy * H / 2, memory_order_relaxed);
}
