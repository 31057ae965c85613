kernel void k(device float* out [[buffer(0)]]) {
    out[0] = "abc;
}
/* never closed
