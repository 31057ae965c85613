// A quantized block whose header is packed with bit-fields, as compact quantization formats
// write it: a signed zero point, a 16-bit count, flags, a `: 0` that closes a unit, an
// ordinary member sharing a bit-field's unit, a field split over two storage words, and a
// field that would straddle its unit moved to the next one.
//
// Layout (clang, Itanium ABI, little-endian), in bits from the start of the block:
//   scale_exp 0..5, zero 5..12 (signed), kind 12..16, count 16..32,
//   flags 32..35, `ushort : 0` moves to 48, level 48..54, tag (a uchar) byte 7,
//   check 64..84, low would be 84..98 and straddle the unit at 96: 96..110.
//   sizeof 16, alignof 4; the quants follow at byte 16.

#include <metal_stdlib>
using namespace metal;

struct block_header {
    uint scale_exp : 5;
    int zero : 7;
    uint kind : 4;
    uint count : 16;
    ushort flags : 3;
    ushort : 0;
    uchar level : 6;
    uchar tag;
    uint check : 20;
    uint low : 14;
};

static_assert(sizeof(block_header) == 16, "header size");
static_assert(alignof(block_header) == 4, "header alignment");

#define QK 16

struct block_q {
    block_header h;
    uchar qs[QK];
};

static_assert(sizeof(block_q) == 32, "block size");

// Builds each block's header from ten parameters (aggregate initialization in declaration
// order), updates it in thread memory, stores it, then updates it again in device memory.
kernel void pack_headers(device const uint* params [[buffer(0)]],
                         device block_q* blocks [[buffer(1)]],
                         uint id [[thread_position_in_grid]],
                         uint lid [[thread_position_in_threadgroup]]) {
    device const uint* p = params + id * 10;
    block_header h = {p[0], int(p[1]), p[2], p[3], ushort(p[4]), uchar(p[5]), uchar(p[6]),
                      p[7], p[8]};
    h.count += 1;   // wraps at 16 bits
    ++h.kind;       // wraps at 4 bits
    h.zero -= 1;    // sign-extends
    h.flags |= 4;
    // Through threadgroup memory, written whole first (its bytes start undefined).
    threadgroup block_header staged[64];
    staged[lid] = block_header{};
    staged[lid] = h;
    staged[lid].level = staged[lid].level ^ 0x15;
    blocks[id].h = staged[lid];
    blocks[id].h.check--;
    blocks[id].h.low ^= 1;
    for (uint j = 0; j < QK; ++j) {
        blocks[id].qs[j] = uchar(p[9] + j * 7);
    }
}

// Unpacks each header's fields and dequantizes its block: (q - zero) / 2^scale_exp.
kernel void unpack_blocks(device const block_q* blocks [[buffer(0)]],
                          device int* fields [[buffer(1)]],
                          device float* values [[buffer(2)]],
                          uint id [[thread_position_in_grid]]) {
    const block_header h = blocks[id].h;
    device int* f = fields + id * 9;
    f[0] = h.scale_exp;
    f[1] = h.zero;
    f[2] = h.kind;
    f[3] = h.count;
    f[4] = h.flags;
    f[5] = h.level;
    f[6] = h.tag;
    f[7] = blocks[id].h.check;
    f[8] = blocks[id].h.low;
    const float scale = 1.0f / float(1u << h.scale_exp);
    for (uint j = 0; j < QK; ++j) {
        values[id * QK + j] = float(int(blocks[id].qs[j]) - h.zero) * scale;
    }
}
