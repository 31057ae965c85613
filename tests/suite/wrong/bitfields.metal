// Misused bit-fields: each error is reported at its source, independently of the others.
#include <metal_stdlib>
using namespace metal;

struct Bad {
    float scale : 8;          // not an integer type
    uchar wide : 9;           // wider than its type
    uint named_zero : 0;      // a named bit-field needs a width
    int negative : -1;        // negative width
    uint n : 3 = 1;           // a default member initializer (C++20)
    uint ok : 4;
    uint : 0;                 // fine: closes the unit
};

struct Header {
    uint kind : 4;
    uint count : 28;
};

void set_one(thread uint& r) { r = 1; }

kernel void misuse(device uint* out [[buffer(0)]]) {
    Header h = {1, 2};
    thread uint* p = &h.kind;          // no address of a bit-field
    thread uint& r = h.count;          // no non-const reference to one
    set_one(h.kind);                   // nor as a reference argument
    const thread uint& copy = h.count; // a const reference binds to a copy: fine
    const Header c = h;
    c.kind = 2;                        // const object
    out[0] = h.kind + copy;
}
