constant float W[3] = {1, 2, 3}
kernel void k(device float* out [[buffer(0)]], uint id [[thread_position_in_grid]] {
}
struct S { int a; float b }
typedef;
kernel void ok(device float* out [[buffer(0)]]) { out[0] = 1; }
