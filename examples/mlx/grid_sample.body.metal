// Bilinear grid sample, forward: one thread per output element (b, i, j, c).
// x is (B, H, W, C), grid is (B, gH, gW, 2) in [-1, 1] (x first, then y), out is
// (B, gH, gW, C). Corners outside the image count as zero.
uint elem = thread_position_in_grid.x;
int H = x_shape[1];
int W = x_shape[2];
int C = x_shape[3];
int gH = grid_shape[1];
int gW = grid_shape[2];

uint point = elem / C;
int c = elem % C;
int batch = point / (gH * gW);

float ix = ((grid[point * 2] + 1) * W - 1) / 2;
float iy = ((grid[point * 2 + 1] + 1) * H - 1) / 2;
int x0 = floor(ix);
int y0 = floor(iy);
float fx = ix - x0;
float fy = iy - y0;

const device T* plane = x + batch * H * W * C + c;
T acc = 0;
for (int dy = 0; dy < 2; ++dy) {
    for (int dx = 0; dx < 2; ++dx) {
        int yy = y0 + dy;
        int xx = x0 + dx;
        T weight = (dx ? fx : 1 - fx) * (dy ? fy : 1 - fy);
        if (yy >= 0 && yy < H && xx >= 0 && xx < W) {
            acc += weight * plane[(yy * W + xx) * C];
        }
    }
}
out[elem] = acc;
