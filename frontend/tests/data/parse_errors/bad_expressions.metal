kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]]) {
    out[id] = (1.0f + ) * 2.0f;
    out[id] = * ;
    if (id > ) { out[id] = 0; }
    out[id] = out[id] + 1.0f;
}
