#include <metal_stdlib>
using namespace metal;

kernel void control(
    device int* data [[buffer(0)]],
    device const uint* flags [[buffer(1)]],
    uint id [[thread_position_in_grid]]
) {
    int acc = 0;
    for (int i = 0; i < 8; i++) {
        if (i == 2) {
            continue;
        }
        for (int j = i; j < 8; j += 2) {
            if (j > 6) break;
            acc += i * j;
        }
    }
    int n = 0;
    do {
        n++;
        acc ^= n << 1;
    } while (n < 4);
    while (true) {
        if (--n <= 0) break;
    }
    switch (flags[id] & 3u) {
        case 0:
            acc = -acc;
            break;
        case 1:
        case 2: {
            acc *= 3;
            break;
        }
        default:
            acc = 0;
    }
    acc %= 1000;
    acc >>= 1;
    acc |= 0x10;
    acc &= ~0x1;
    float f = (float)acc;
    int back = int(f * 0.5f);
    uint u = static_cast<uint>(back) + (uint)flags[id];
    data[id] = acc > 0 ? acc : (u > 3u ? int(u) : -1);
    for (;;) {
        break;
    }
    ;
}
