kernel void k(device uint* out [[buffer(0)]]) {
    out[0] = 09 + 1f + 0x;
    out[1] = 99999999999999999999999;
    out[2] = 1.0q;
    out[3] = '';
    out[4] = @;
}
