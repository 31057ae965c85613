kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
    float x = out[id]
    out[id] = x * 2.0f;
    int a b;
}
