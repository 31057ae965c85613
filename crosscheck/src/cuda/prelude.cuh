// metalsim CUDA prelude: the ISA's operations whose meaning C++ does not give directly
// (wrapping and defined-by-zero integer arithmetic, saturating conversions, bit casts,
// SIMD-group operations over an explicit active mask, atomics of every type, 8x8
// SIMD-group matrices). Generated code calls these; each mirrors one entry of
// isa/src/op.rs.
#ifndef __CUDACC_RTC__
#include <cstdint>
#include <cstring>
#include <type_traits>
#else
#include <cuda/std/cstdint>
#include <cuda/std/type_traits>
namespace std { using cuda::std::is_same; }
#endif
#include <cuda_fp16.h>
#include <cuda_bf16.h>

typedef __half ms_f16;
typedef __nv_bfloat16 ms_bf16;

// ---- bit casts -------------------------------------------------------------------
template <class To, class From>
__device__ __forceinline__ To ms_bitcast(From x) {
    static_assert(sizeof(To) == sizeof(From), "bit cast between different widths");
    To y;
    memcpy(&y, &x, sizeof(To));
    return y;
}

// ---- integer helpers -------------------------------------------------------------
template <class T> struct ms_int;
#define MS_INT(T, U, W, S, MINV, MAXV)                                                    \
    template <> struct ms_int<T> {                                                       \
        typedef U uns;                                                                   \
        static constexpr int bits = W;                                                   \
        static constexpr bool is_signed = S;                                             \
        __device__ static constexpr T min() { return MINV; }                             \
        __device__ static constexpr T max() { return MAXV; }                             \
    };
MS_INT(bool, uint32_t, 1, false, false, true)
MS_INT(int8_t, uint32_t, 8, true, INT8_MIN, INT8_MAX)
MS_INT(uint8_t, uint32_t, 8, false, 0, UINT8_MAX)
MS_INT(int16_t, uint32_t, 16, true, INT16_MIN, INT16_MAX)
MS_INT(uint16_t, uint32_t, 16, false, 0, UINT16_MAX)
MS_INT(int32_t, uint32_t, 32, true, INT32_MIN, INT32_MAX)
MS_INT(uint32_t, uint32_t, 32, false, 0, UINT32_MAX)
MS_INT(int64_t, uint64_t, 64, true, INT64_MIN, INT64_MAX)
MS_INT(uint64_t, uint64_t, 64, false, 0, UINT64_MAX)
#undef MS_INT

// Wrapping arithmetic: computed on the unsigned type of at least 32 bits, truncated back.
template <class T> __device__ __forceinline__ T ms_iadd(T a, T b) {
    typedef typename ms_int<T>::uns U; return (T)((U)a + (U)b); }
template <class T> __device__ __forceinline__ T ms_isub(T a, T b) {
    typedef typename ms_int<T>::uns U; return (T)((U)a - (U)b); }
template <class T> __device__ __forceinline__ T ms_imul(T a, T b) {
    typedef typename ms_int<T>::uns U; return (T)((U)a * (U)b); }
template <class T> __device__ __forceinline__ T ms_ineg(T a) {
    typedef typename ms_int<T>::uns U; return (T)((U)0 - (U)a); }
template <class T> __device__ __forceinline__ T ms_iabs(T a) {
    return (ms_int<T>::is_signed && a < (T)0) ? ms_ineg(a) : a; }
template <class T> __device__ __forceinline__ T ms_ifma(T a, T b, T c) {
    return ms_iadd(ms_imul(a, b), c); }
// Division by zero gives all ones; MIN / -1 wraps to MIN.
template <class T> __device__ __forceinline__ T ms_idiv(T a, T b) {
    if (b == (T)0) return (T)~(typename ms_int<T>::uns)0;
    if (ms_int<T>::is_signed && a == ms_int<T>::min() && b == (T)-1) return a;
    return (T)(a / b);
}
// Remainder by zero gives `a`; MIN % -1 is 0.
template <class T> __device__ __forceinline__ T ms_irem(T a, T b) {
    if (b == (T)0) return a;
    if (ms_int<T>::is_signed && b == (T)-1) return (T)0;
    return (T)(a % b);
}
template <class T> __device__ __forceinline__ T ms_shl(T a, T b) {
    typedef typename ms_int<T>::uns U;
    return (T)((U)a << ((U)b & (U)(ms_int<T>::bits - 1)));
}
template <class T> __device__ __forceinline__ T ms_shr(T a, T b) {
    typedef typename ms_int<T>::uns U;
    U n = (U)b & (U)(ms_int<T>::bits - 1);
    if (ms_int<T>::is_signed) return (T)(a >> n);
    return (T)((U)a >> n);
}
template <class T> __device__ __forceinline__ T ms_clz(T a) {
    constexpr int w = ms_int<T>::bits;
    if (w == 64) return (T)__clzll((long long)a);
    return (T)(__clz((int)(uint32_t)((typename ms_int<T>::uns)a & (0xffffffffu >> (32 - w)))) - (32 - w));
}
template <class T> __device__ __forceinline__ T ms_ctz(T a) {
    constexpr int w = ms_int<T>::bits;
    if (w == 64) return a == (T)0 ? (T)64 : (T)(__ffsll((long long)a) - 1);
    uint32_t x = (uint32_t)((typename ms_int<T>::uns)a & (0xffffffffu >> (32 - w)));
    return x == 0 ? (T)w : (T)(__ffs((int)x) - 1);
}
template <class T> __device__ __forceinline__ T ms_popcount(T a) {
    constexpr int w = ms_int<T>::bits;
    if (w == 64) return (T)__popcll((unsigned long long)a);
    return (T)__popc((uint32_t)((typename ms_int<T>::uns)a & (0xffffffffu >> (32 - w))));
}
template <class T> __device__ __forceinline__ T ms_mulhi(T a, T b) {
    constexpr int w = ms_int<T>::bits;
    if (w == 64) {
        if (ms_int<T>::is_signed) return (T)__mul64hi((long long)a, (long long)b);
        return (T)__umul64hi((unsigned long long)a, (unsigned long long)b);
    }
    if (ms_int<T>::is_signed) return (T)(((int64_t)a * (int64_t)b) >> w);
    return (T)(((uint64_t)a * (uint64_t)b) >> w);
}
// Saturating integer arithmetic, exact in 64 bits for types up to 32 bits.
template <class T> __device__ __forceinline__ T ms_clamp_wide(int64_t v) {
    if (v < (int64_t)ms_int<T>::min()) return ms_int<T>::min();
    if (v > (int64_t)ms_int<T>::max()) return ms_int<T>::max();
    return (T)v;
}
template <class T> __device__ __forceinline__ T ms_addsat(T a, T b) {
    if (ms_int<T>::bits < 64) return ms_clamp_wide<T>((int64_t)a + (int64_t)b);
    T r = ms_iadd(a, b);
    if (ms_int<T>::is_signed) {
        if (a > (T)0 && b > (T)0 && r < (T)0) return ms_int<T>::max();
        if (a < (T)0 && b < (T)0 && r >= (T)0) return ms_int<T>::min();
        return r;
    }
    return r < a ? ms_int<T>::max() : r;
}
template <class T> __device__ __forceinline__ T ms_subsat(T a, T b) {
    if (ms_int<T>::bits < 64) return ms_clamp_wide<T>((int64_t)a - (int64_t)b);
    T r = ms_isub(a, b);
    if (ms_int<T>::is_signed) {
        if (a >= (T)0 && b < (T)0 && r < (T)0) return ms_int<T>::max();
        if (a < (T)0 && b > (T)0 && r >= (T)0) return ms_int<T>::min();
        return r;
    }
    return b > a ? (T)0 : r;
}
template <class T> __device__ __forceinline__ T ms_madsat(T a, T b, T c) {
    if (ms_int<T>::bits <= 16) return ms_clamp_wide<T>((int64_t)a * (int64_t)b + (int64_t)c);
    if (ms_int<T>::bits == 32) {
        if (ms_int<T>::is_signed) {
            int64_t p = (int64_t)a * (int64_t)b;
            int64_t s = p + (int64_t)c;
            return ms_clamp_wide<T>(s);
        }
        uint64_t p = (uint64_t)(uint32_t)a * (uint64_t)(uint32_t)b + (uint64_t)(uint32_t)c;
        return p > 0xffffffffull ? ms_int<T>::max() : (T)p;
    }
    // 64 bits: the exact 128-bit product as high and low words, then the addend.
    if constexpr (ms_int<T>::is_signed) {
        uint64_t lo = (uint64_t)a * (uint64_t)b;
        int64_t hi = __mul64hi((long long)a, (long long)b);
        uint64_t lo2 = lo + (uint64_t)c;
        int64_t hi2 = hi + ((int64_t)c < 0 ? -1 : 0) + (lo2 < lo ? 1 : 0);
        if (hi2 != ((int64_t)lo2 >> 63)) return hi2 < 0 ? ms_int<T>::min() : ms_int<T>::max();
        return (T)(int64_t)lo2;
    } else {
        uint64_t hi = __umul64hi((unsigned long long)a, (unsigned long long)b);
        uint64_t lo = (uint64_t)a * (uint64_t)b;
        uint64_t s2 = lo + (uint64_t)c;
        if (hi != 0 || s2 < lo) return ms_int<T>::max();
        return (T)s2;
    }
}
template <class T> __device__ __forceinline__ T ms_hadd(T a, T b) {
    if (ms_int<T>::bits < 64) return (T)(((int64_t)a + (int64_t)b) >> 1);
    return (T)((a >> 1) + (b >> 1) + (a & b & (T)1));
}
template <class T> __device__ __forceinline__ T ms_rhadd(T a, T b) {
    if (ms_int<T>::bits < 64) return (T)(((int64_t)a + (int64_t)b + 1) >> 1);
    return (T)((a >> 1) + (b >> 1) + ((a | b) & (T)1));
}
template <class T> __device__ __forceinline__ T ms_rotate(T a, T b) {
    typedef typename ms_int<T>::uns U;
    constexpr int w = ms_int<T>::bits;
    U x = (U)a & (U)(w == 64 ? ~(U)0 : (U)((1ull << w) - 1));
    U n = (U)b & (U)(w - 1);
    if (n == 0) return a;
    return (T)((x << n) | (x >> (w - n)));
}
template <class T> __device__ __forceinline__ T ms_reverse_bits(T a) {
    constexpr int w = ms_int<T>::bits;
    if (w == 64) return (T)__brevll((unsigned long long)a);
    return (T)(__brev((uint32_t)(typename ms_int<T>::uns)a) >> (32 - w));
}
template <class T> __device__ __forceinline__ T ms_extract_bits(T x, uint32_t off, uint32_t bits) {
    constexpr uint32_t w = ms_int<T>::bits;
    if (off > w) off = w;
    if (bits > w - off) bits = w - off;
    if (bits == 0) return (T)0;
    typedef typename ms_int<T>::uns U;
    U field = ((U)x >> off) & (bits >= 8 * sizeof(U) ? ~(U)0 : (((U)1 << bits) - 1));
    if (ms_int<T>::is_signed && bits < w && ((field >> (bits - 1)) & 1)) field |= ~(U)0 << bits;
    return (T)field;
}
template <class T> __device__ __forceinline__ T ms_insert_bits(T base, T ins, uint32_t off, uint32_t bits) {
    constexpr uint32_t w = ms_int<T>::bits;
    if (off > w) off = w;
    if (bits > w - off) bits = w - off;
    if (bits == 0) return base;
    typedef typename ms_int<T>::uns U;
    U m = (bits >= 8 * sizeof(U) ? ~(U)0 : (((U)1 << bits) - 1)) << off;
    return (T)(((U)base & ~m) | (((U)ins << off) & m));
}

// ---- conversions -----------------------------------------------------------------
template <class T> __device__ __forceinline__ float ms_to_f32(T x) { return (float)x; }
template <> __device__ __forceinline__ float ms_to_f32<ms_f16>(ms_f16 x) { return __half2float(x); }
template <> __device__ __forceinline__ float ms_to_f32<ms_bf16>(ms_bf16 x) { return __bfloat162float(x); }
template <class T> __device__ __forceinline__ T ms_from_f32(float x) { return (T)x; }
template <> __device__ __forceinline__ ms_f16 ms_from_f32<ms_f16>(float x) { return __float2half_rn(x); }
template <> __device__ __forceinline__ ms_bf16 ms_from_f32<ms_bf16>(float x) { return __float2bfloat16_rn(x); }
template <class T> struct ms_is_float { static constexpr bool value = false; };
template <> struct ms_is_float<float> { static constexpr bool value = true; };
template <> struct ms_is_float<ms_f16> { static constexpr bool value = true; };
template <> struct ms_is_float<ms_bf16> { static constexpr bool value = true; };

// Float to integer: toward zero, saturated, NaN to 0.
template <class To> __device__ __forceinline__ To ms_f2i(float x) {
    if (x != x) return (To)0;
    if (x <= (float)ms_int<To>::min()) return ms_int<To>::min();
    if (x >= (float)ms_int<To>::max()) return ms_int<To>::max();
    return (To)x;
}
// Integer to integer: wrap, or saturate when `sat`.
template <class To, class From> __device__ __forceinline__ To ms_i2i_sat(From x) {
    if (ms_int<From>::is_signed) {
        int64_t v = (int64_t)x;
        if (ms_int<To>::is_signed) {
            if (v < (int64_t)ms_int<To>::min()) return ms_int<To>::min();
            if (v > (int64_t)ms_int<To>::max()) return ms_int<To>::max();
            return (To)v;
        }
        if (v < 0) return (To)0;
        if ((uint64_t)v > (uint64_t)ms_int<To>::max()) return ms_int<To>::max();
        return (To)v;
    }
    uint64_t v = (uint64_t)x;
    if (v > (uint64_t)ms_int<To>::max()) return ms_int<To>::max();
    return (To)v;
}
// Integer to a 16-bit float: through float is exact for |x| < 2^24, and larger values
// overflow f16 anyway; bf16 rounds once from the exact integer.
template <class To, class From> __device__ __forceinline__ To ms_i2f(From x) {
    return ms_from_f32<To>((float)x);
}
template <> __device__ __forceinline__ ms_bf16 ms_i2f<ms_bf16, int32_t>(int32_t x) { return __int2bfloat16_rn(x); }
template <> __device__ __forceinline__ ms_bf16 ms_i2f<ms_bf16, uint32_t>(uint32_t x) { return __uint2bfloat16_rn(x); }
template <> __device__ __forceinline__ ms_bf16 ms_i2f<ms_bf16, int64_t>(int64_t x) { return __ll2bfloat16_rn(x); }
template <> __device__ __forceinline__ ms_bf16 ms_i2f<ms_bf16, uint64_t>(uint64_t x) { return __ull2bfloat16_rn(x); }
template <> __device__ __forceinline__ ms_f16 ms_i2f<ms_f16, int32_t>(int32_t x) { return __int2half_rn(x); }
template <> __device__ __forceinline__ ms_f16 ms_i2f<ms_f16, uint32_t>(uint32_t x) { return __uint2half_rn(x); }
template <> __device__ __forceinline__ ms_f16 ms_i2f<ms_f16, int64_t>(int64_t x) { return __ll2half_rn(x); }
template <> __device__ __forceinline__ ms_f16 ms_i2f<ms_f16, uint64_t>(uint64_t x) { return __ull2half_rn(x); }

// ---- float arithmetic ------------------------------------------------------------
template <class T> __device__ __forceinline__ T ms_fmin(T a, T b) {
    return ms_from_f32<T>(fminf(ms_to_f32(a), ms_to_f32(b))); }
template <> __device__ __forceinline__ float ms_fmin<float>(float a, float b) { return fminf(a, b); }
template <class T> __device__ __forceinline__ T ms_fmax(T a, T b) {
    return ms_from_f32<T>(fmaxf(ms_to_f32(a), ms_to_f32(b))); }
template <> __device__ __forceinline__ float ms_fmax<float>(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ float ms_fma(float a, float b, float c) { return __fmaf_rn(a, b, c); }
__device__ __forceinline__ ms_f16 ms_fma(ms_f16 a, ms_f16 b, ms_f16 c) { return __hfma(a, b, c); }
__device__ __forceinline__ ms_bf16 ms_fma(ms_bf16 a, ms_bf16 b, ms_bf16 c) { return __hfma(a, b, c); }
__device__ __forceinline__ float ms_fabs(float a) { return fabsf(a); }
__device__ __forceinline__ ms_f16 ms_fabs(ms_f16 a) { return __habs(a); }
__device__ __forceinline__ ms_bf16 ms_fabs(ms_bf16 a) { return __habs(a); }
__device__ __forceinline__ float ms_tanpi(float x) { return sinpif(x) / cospif(x); }
__device__ __forceinline__ float ms_rcp(float x) { return 1.0f / x; }
__device__ __forceinline__ float ms_ldexp(float x, int32_t k) { return ldexpf(x, k); }
// A math function of any float type, computed in f32 and rounded back.
#define MS_MATH1(NAME, F) \
    template <class T> __device__ __forceinline__ T NAME(T x) { return ms_from_f32<T>(F(ms_to_f32(x))); }
#define MS_MATH2(NAME, F) \
    template <class T> __device__ __forceinline__ T NAME(T x, T y) { return ms_from_f32<T>(F(ms_to_f32(x), ms_to_f32(y))); }

// ---- SIMD-group operations -------------------------------------------------------
// Every operation takes the active mask. Values travel as 32- or 64-bit words.
template <class T> struct ms_word { typedef uint32_t type; };
template <> struct ms_word<int64_t> { typedef uint64_t type; };
template <> struct ms_word<uint64_t> { typedef uint64_t type; };
template <class T> __device__ __forceinline__ typename ms_word<T>::type ms_to_word(T x) {
    typedef typename ms_word<T>::type W;
    W w = 0;
    memcpy(&w, &x, sizeof(T));
    return w;
}
template <class T> __device__ __forceinline__ T ms_from_word(typename ms_word<T>::type w) {
    T x;
    memcpy(&x, &w, sizeof(T));
    return x;
}
__device__ __forceinline__ uint32_t ms_lane() { return threadIdx.x & 31u; }
template <class T> __device__ __forceinline__ T ms_shfl(unsigned mask, T v, uint32_t src, int width = 32) {
    return ms_from_word<T>(__shfl_sync(mask, ms_to_word(v), (int)src, width));
}
template <class T> __device__ __forceinline__ T ms_shfl_up(unsigned mask, T v, uint32_t d, int width = 32) {
    return ms_from_word<T>(__shfl_up_sync(mask, ms_to_word(v), d, width));
}
template <class T> __device__ __forceinline__ T ms_shfl_down(unsigned mask, T v, uint32_t d, int width = 32) {
    return ms_from_word<T>(__shfl_down_sync(mask, ms_to_word(v), d, width));
}
template <class T> __device__ __forceinline__ T ms_shfl_xor(unsigned mask, T v, uint32_t m, int width = 32) {
    return ms_from_word<T>(__shfl_xor_sync(mask, ms_to_word(v), (int)m, width));
}
// The lanes of `mask` inside this lane's group of `width` (32 or 4).
__device__ __forceinline__ unsigned ms_group_mask(unsigned mask, int width) {
    if (width == 32) return mask;
    unsigned base = ms_lane() & ~(unsigned)(width - 1);
    return mask & (((1u << width) - 1) << base);
}
__device__ __forceinline__ uint32_t ms_rotate_src(uint32_t delta, bool up, int width) {
    uint32_t lane = ms_lane(), base = lane & ~(uint32_t)(width - 1), i = lane - base;
    uint32_t w = (uint32_t)width, d = delta % w;
    return base + (up ? (i + w - d) % w : (i + d) % w);
}
__device__ __forceinline__ uint32_t ms_first_lane(unsigned mask, int width) {
    return (uint32_t)(__ffs((int)ms_group_mask(mask, width)) - 1);
}

// Reduction operators.
struct ms_op_sum { template <class T> __device__ static T apply(T a, T b) {
    if constexpr (ms_is_float<T>::value) return a + b; else return ms_iadd(a, b); } };
struct ms_op_product { template <class T> __device__ static T apply(T a, T b) {
    if constexpr (ms_is_float<T>::value) return a * b; else return ms_imul(a, b); } };
struct ms_op_min { template <class T> __device__ static T apply(T a, T b) {
    if constexpr (ms_is_float<T>::value) return ms_fmin(a, b); else return a < b ? a : b; } };
struct ms_op_max { template <class T> __device__ static T apply(T a, T b) {
    if constexpr (ms_is_float<T>::value) return ms_fmax(a, b); else return a > b ? a : b; } };
struct ms_op_and { template <class T> __device__ static T apply(T a, T b) { return (T)(a & b); } };
struct ms_op_or { template <class T> __device__ static T apply(T a, T b) { return (T)(a | b); } };
struct ms_op_xor { template <class T> __device__ static T apply(T a, T b) { return (T)(a ^ b); } };

// Reduction over the active lanes of this lane's group, in lane order. A full 32-lane
// mask takes a butterfly (every lane ends with the same bits); other masks visit each
// active lane in turn.
template <class Op, class T> __device__ __forceinline__ T ms_reduce(unsigned mask, T v, int width = 32) {
    unsigned g = ms_group_mask(mask, width);
    if (width == 32 && mask == 0xffffffffu) {
        for (int m = 16; m > 0; m >>= 1) v = Op::apply(v, ms_shfl_xor(mask, v, (uint32_t)m));
        // The ISA's reduction is one instruction of every lane. Without this shuffle
        // ptxas moves the last step into a branch that alone reads the result (a lane-0
        // store), which the simulated program cannot do (docs/validation.md, run 20).
        return ms_shfl(mask, v, 0u);
    }
    int first = __ffs((int)g) - 1;
    T acc = ms_shfl(mask, v, (uint32_t)first);
    for (unsigned all = mask; all; all &= all - 1) {
        // Every active lane takes part in every shuffle so the mask stays truthful.
        int src = __ffs((int)all) - 1;
        T x = ms_shfl(mask, v, (uint32_t)src);
        if (src != first && ((g >> src) & 1u)) acc = Op::apply(acc, x);
    }
    return acc;
}
// Prefix scan over the active lanes of this lane's group, in lane order.
template <class Op, class T> __device__ __forceinline__ T ms_scan(unsigned mask, T v, bool inclusive, T identity, int width = 32) {
    unsigned g = ms_group_mask(mask, width);
    uint32_t lane = ms_lane();
    if (width == 32 && mask == 0xffffffffu) {
        // Every lane active: Hillis-Steele over shuffles, five steps.
        T x = v;
        for (uint32_t d = 1; d < 32; d <<= 1) {
            T y = ms_shfl_up(mask, x, d);
            if (lane >= d) x = Op::apply(y, x);
        }
        if (inclusive) return x;
        T prev = ms_shfl_up(mask, x, 1u);
        return lane == 0 ? identity : prev;
    }
    T acc = identity;
    for (unsigned all = mask; all; all &= all - 1) {
        int src = __ffs((int)all) - 1;
        T x = ms_shfl(mask, v, (uint32_t)src);
        if (((g >> src) & 1u) && ((uint32_t)src < lane || (inclusive && (uint32_t)src == lane)))
            acc = Op::apply(acc, x);
    }
    return acc;
}
template <class T> __device__ __forceinline__ T ms_zero() {
    if constexpr (ms_is_float<T>::value) return ms_from_f32<T>(0.0f); else return (T)0; }
template <class T> __device__ __forceinline__ T ms_one() {
    if constexpr (ms_is_float<T>::value) return ms_from_f32<T>(1.0f); else return (T)1; }
__device__ __forceinline__ uint64_t ms_ballot(unsigned mask, bool p, int width) {
    unsigned b = __ballot_sync(mask, p) & ms_group_mask(mask, width);
    return (uint64_t)b;
}
__device__ __forceinline__ bool ms_all(unsigned mask, bool p, int width) {
    unsigned g = ms_group_mask(mask, width);
    return (__ballot_sync(mask, p) & g) == g;
}
__device__ __forceinline__ bool ms_any(unsigned mask, bool p, int width) {
    return (__ballot_sync(mask, p) & ms_group_mask(mask, width)) != 0;
}

// ---- atomics ---------------------------------------------------------------------
// Read-modify-write through compare-and-swap on the aligned 32- or 64-bit word holding
// the value: the fallback for types and operations CUDA has no instruction for.
template <class T, class F> __device__ __forceinline__ T ms_atomic_cas_loop(T* p, F f) {
    if constexpr (sizeof(T) == 8) {
        unsigned long long* w = (unsigned long long*)p;
        unsigned long long old = *(volatile unsigned long long*)w, assumed;
        do {
            assumed = old;
            T cur = ms_bitcast<T>(assumed);
            old = atomicCAS(w, assumed, ms_bitcast<unsigned long long>(f(cur)));
        } while (old != assumed);
        return ms_bitcast<T>(old);
    } else {
        uintptr_t a = (uintptr_t)p;
        unsigned* w = (unsigned*)(a & ~(uintptr_t)3);
        unsigned shift = (unsigned)(a & 3) * 8;
        unsigned mask = sizeof(T) == 4 ? 0xffffffffu : (((1u << (8 * sizeof(T))) - 1) << shift);
        unsigned old = *(volatile unsigned*)w, assumed;
        do {
            assumed = old;
            T cur;
            unsigned bits = (assumed & mask) >> shift;
            memcpy(&cur, &bits, sizeof(T));
            T nv = f(cur);
            unsigned nbits = 0;
            memcpy(&nbits, &nv, sizeof(T));
            old = atomicCAS(w, assumed, (assumed & ~mask) | ((nbits << shift) & mask));
        } while (old != assumed);
        T prev;
        unsigned bits = (old & mask) >> shift;
        memcpy(&prev, &bits, sizeof(T));
        return prev;
    }
}
template <class T> __device__ __forceinline__ T ms_atomic_load(T* p) {
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) return *(volatile T*)p;
    else return ms_atomic_cas_loop(p, [](T x) { return x; });
}
template <class T> __device__ __forceinline__ void ms_atomic_store(T* p, T v) {
    if constexpr (sizeof(T) == 4 || sizeof(T) == 8) { *(volatile T*)p = v; __threadfence_block(); }
    else ms_atomic_cas_loop(p, [v](T) { return v; });
}
template <class T> __device__ __forceinline__ T ms_atomic_xchg(T* p, T v) {
    if constexpr (sizeof(T) == 4) return ms_bitcast<T>(atomicExch((unsigned*)p, ms_bitcast<unsigned>(v)));
    else if constexpr (sizeof(T) == 8) return ms_bitcast<T>(atomicExch((unsigned long long*)p, ms_bitcast<unsigned long long>(v)));
    else return ms_atomic_cas_loop(p, [v](T) { return v; });
}
template <class T> __device__ __forceinline__ T ms_atomic_cmpxchg(T* p, T expected, T desired) {
    if constexpr (sizeof(T) == 4) return ms_bitcast<T>(atomicCAS((unsigned*)p, ms_bitcast<unsigned>(expected), ms_bitcast<unsigned>(desired)));
    else if constexpr (sizeof(T) == 8) return ms_bitcast<T>(atomicCAS((unsigned long long*)p, ms_bitcast<unsigned long long>(expected), ms_bitcast<unsigned long long>(desired)));
    else {
        // Compare the bits (as Metal compares the atomic's representation).
        return ms_atomic_cas_loop(p, [expected, desired](T x) {
            return ms_to_word(x) == ms_to_word(expected) ? desired : x; });
    }
}
template <class T> __device__ __forceinline__ T ms_atomic_add(T* p, T v) {
    if constexpr (std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value || std::is_same<T, float>::value) return atomicAdd(p, v);
    else if constexpr (sizeof(T) == 8 && !ms_is_float<T>::value) return (T)atomicAdd((unsigned long long*)p, (unsigned long long)v);
    else if constexpr (std::is_same<T, ms_f16>::value || std::is_same<T, ms_bf16>::value) return atomicAdd(p, v);
    else return ms_atomic_cas_loop(p, [v](T x) { return ms_op_sum::apply(x, v); });
}
template <class T> __device__ __forceinline__ T ms_atomic_sub(T* p, T v) {
    if constexpr (std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value) return atomicSub(p, v);
    else if constexpr (sizeof(T) == 8 && !ms_is_float<T>::value) return (T)atomicAdd((unsigned long long*)p, (unsigned long long)0 - (unsigned long long)v);
    else if constexpr (ms_is_float<T>::value) return ms_atomic_cas_loop(p, [v](T x) { return x - v; });
    else return ms_atomic_cas_loop(p, [v](T x) { return ms_isub(x, v); });
}
template <class T> __device__ __forceinline__ T ms_atomic_min(T* p, T v) {
    if constexpr (std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value) return atomicMin(p, v);
    else if constexpr (std::is_same<T, int64_t>::value) return (T)atomicMin((long long*)p, (long long)v);
    else if constexpr (std::is_same<T, uint64_t>::value) return (T)atomicMin((unsigned long long*)p, (unsigned long long)v);
    else return ms_atomic_cas_loop(p, [v](T x) { return ms_op_min::apply(x, v); });
}
template <class T> __device__ __forceinline__ T ms_atomic_max(T* p, T v) {
    if constexpr (std::is_same<T, int32_t>::value || std::is_same<T, uint32_t>::value) return atomicMax(p, v);
    else if constexpr (std::is_same<T, int64_t>::value) return (T)atomicMax((long long*)p, (long long)v);
    else if constexpr (std::is_same<T, uint64_t>::value) return (T)atomicMax((unsigned long long*)p, (unsigned long long)v);
    else return ms_atomic_cas_loop(p, [v](T x) { return ms_op_max::apply(x, v); });
}
#define MS_ATOMIC_BITS(NAME, CUDAFN, OP)                                                   \
    template <class T> __device__ __forceinline__ T NAME(T* p, T v) {                      \
        if constexpr (sizeof(T) == 4) return (T)CUDAFN((unsigned*)p, (unsigned)v);           \
        else if constexpr (sizeof(T) == 8) return (T)CUDAFN((unsigned long long*)p, (unsigned long long)v); \
        else return ms_atomic_cas_loop(p, [v](T x) { return (T)(x OP v); });                \
    }
MS_ATOMIC_BITS(ms_atomic_and, atomicAnd, &)
MS_ATOMIC_BITS(ms_atomic_or, atomicOr, |)
MS_ATOMIC_BITS(ms_atomic_xor, atomicXor, ^)
#undef MS_ATOMIC_BITS

// ---- 8x8 SIMD-group matrices -----------------------------------------------------
// The element (row, column) that lane `lane` holds as its k-th element (isa's
// `matrix_element`), and the inverse.
__device__ __forceinline__ void ms_matrix_element(uint32_t lane, uint32_t k, uint32_t& row, uint32_t& col) {
    uint32_t quad = (lane % 32) / 4;
    row = (quad / 4) * 4 + (lane / 2) % 4;
    col = (quad & 2) * 2 + (lane % 2) * 2 + (k & 1);
}
__device__ __forceinline__ void ms_matrix_holder(uint32_t row, uint32_t col, uint32_t& lane, uint32_t& k) {
    // Inverse of ms_matrix_element: rows 4-7 live in lanes 16-31, columns 4-7 in the
    // upper 8 of each 16, and within a group of 8 lane pairs share a row.
    k = col & 1;
    uint32_t pair = (col % 4) / 2;
    lane = (row / 4) * 16 + (col / 4) * 8 + (row % 4) * 2 + pair;
}
// D = A x B + C, each element a chain of fused multiply-adds in ascending k, as the
// simulator computes it. Every lane of the SIMD-group must take part.
template <class T> __device__ __forceinline__ void ms_matrix_mac(unsigned mask,
    T a0, T a1, T b0, T b1, T c0, T c1, T& d0, T& d1) {
    T out[2] = {c0, c1};
    uint32_t lane = ms_lane();
    uint32_t row[2], col[2];
    ms_matrix_element(lane, 0, row[0], col[0]);
    ms_matrix_element(lane, 1, row[1], col[1]);
    for (uint32_t i = 0; i < 8; ++i) {
        for (int e = 0; e < 2; ++e) {
            uint32_t la, ka, lb, kb;
            ms_matrix_holder(row[e], i, la, ka);
            ms_matrix_holder(i, col[e], lb, kb);
            T x0 = ms_shfl(mask, a0, la), x1 = ms_shfl(mask, a1, la);
            T y0 = ms_shfl(mask, b0, lb), y1 = ms_shfl(mask, b1, lb);
            out[e] = ms_fma(ka ? x1 : x0, kb ? y1 : y0, out[e]);
        }
    }
    d0 = out[0];
    d1 = out[1];
}
