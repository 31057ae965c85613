kernel void first(device float* out [[buffer(0)]]) {
    out[0] = 1.0f;
}
}

kernel void second(device float* out [[buffer(0)]]) {
    out[0] = 2.0f;
