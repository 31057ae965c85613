struct Shape {
    virtual float area();
};

kernel void k(device float* out [[buffer(0)]]) {
    auto f = [](float x) { return x * x; };
    float* p = new float[4];
    delete p;
    try { out[0] = 1.0f; } catch (...) { }
    goto done;
    throw 1;
    out[0] = dynamic_cast<float>(1);
}
