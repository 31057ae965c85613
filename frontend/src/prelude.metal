// metalsim's <metal_stdlib> prelude: the type-level part of Metal's standard library.
// The functions (math, SIMD-group, atomics...) are implemented by the lowering itself.

namespace metal {

namespace fast {}
namespace precise {}

// <metal_compute>, <metal_atomic>: flags and orders.
enum class mem_flags : uint {
    mem_none = 0,
    mem_device = 1,
    mem_threadgroup = 2,
    mem_texture = 4,
    mem_threadgroup_imageblock = 8,
};

enum memory_order : int {
    memory_order_relaxed = 0,
    memory_order_acquire = 2,
    memory_order_release = 3,
    memory_order_acq_rel = 4,
    memory_order_seq_cst = 5,
};

enum class thread_scope : int {
    thread_scope_thread = 0,
    thread_scope_simdgroup = 1,
    thread_scope_threadgroup = 2,
    thread_scope_device = 3,
};

// <metal_simdgroup>: a vote is its lanes' bits.
typedef ulong simd_vote;

// <metal_type_traits>.
template <typename T, T v>
struct integral_constant {
    static constexpr T value = v;
    typedef T value_type;
    typedef integral_constant type;
    constexpr operator value_type() const { return value; }
};

template <bool B> using bool_constant = integral_constant<bool, B>;
typedef bool_constant<true> true_type;
typedef bool_constant<false> false_type;

template <bool B, typename T = void> struct enable_if {};
template <typename T> struct enable_if<true, T> { typedef T type; };
template <bool B, typename T = void> using enable_if_t = typename enable_if<B, T>::type;

template <bool B, typename T, typename F> struct conditional { typedef T type; };
template <typename T, typename F> struct conditional<false, T, F> { typedef F type; };
template <bool B, typename T, typename F>
using conditional_t = typename conditional<B, T, F>::type;

template <typename T, typename U> struct is_same : false_type {};
template <typename T> struct is_same<T, T> : true_type {};
template <typename T, typename U> constexpr bool is_same_v = is_same<T, U>::value;

template <typename T> struct is_void : is_same<T, void> {};
template <typename T> constexpr bool is_void_v = is_void<T>::value;

template <typename T> struct is_bool : is_same<T, bool> {};

template <typename T> struct is_floating_point : false_type {};
template <> struct is_floating_point<float> : true_type {};
template <> struct is_floating_point<half> : true_type {};
template <> struct is_floating_point<bfloat> : true_type {};
template <typename T> constexpr bool is_floating_point_v = is_floating_point<T>::value;

template <typename T> struct is_integral : false_type {};
template <> struct is_integral<bool> : true_type {};
template <> struct is_integral<char> : true_type {};
template <> struct is_integral<uchar> : true_type {};
template <> struct is_integral<short> : true_type {};
template <> struct is_integral<ushort> : true_type {};
template <> struct is_integral<int> : true_type {};
template <> struct is_integral<uint> : true_type {};
template <> struct is_integral<long> : true_type {};
template <> struct is_integral<ulong> : true_type {};
template <typename T> constexpr bool is_integral_v = is_integral<T>::value;

template <typename T>
struct is_arithmetic : bool_constant<(is_integral<T>::value || is_floating_point<T>::value)> {};
template <typename T> constexpr bool is_arithmetic_v = is_arithmetic<T>::value;

template <typename T> struct is_signed : false_type {};
template <> struct is_signed<char> : true_type {};
template <> struct is_signed<short> : true_type {};
template <> struct is_signed<int> : true_type {};
template <> struct is_signed<long> : true_type {};
template <> struct is_signed<half> : true_type {};
template <> struct is_signed<bfloat> : true_type {};
template <> struct is_signed<float> : true_type {};
template <typename T> constexpr bool is_signed_v = is_signed<T>::value;

template <typename T> struct is_unsigned : false_type {};
template <> struct is_unsigned<bool> : true_type {};
template <> struct is_unsigned<uchar> : true_type {};
template <> struct is_unsigned<ushort> : true_type {};
template <> struct is_unsigned<uint> : true_type {};
template <> struct is_unsigned<ulong> : true_type {};
template <typename T> constexpr bool is_unsigned_v = is_unsigned<T>::value;

template <typename T> struct is_pointer : false_type {};
template <typename T> struct is_pointer<device T*> : true_type {};
template <typename T> struct is_pointer<device const T*> : true_type {};
template <typename T> struct is_pointer<constant T*> : true_type {};
template <typename T> struct is_pointer<threadgroup T*> : true_type {};
template <typename T> struct is_pointer<threadgroup const T*> : true_type {};
template <typename T> struct is_pointer<thread T*> : true_type {};
template <typename T> struct is_pointer<thread const T*> : true_type {};
template <typename T> constexpr bool is_pointer_v = is_pointer<T>::value;

template <typename T>
struct is_scalar : bool_constant<(is_arithmetic<T>::value || is_pointer<T>::value)> {};
template <typename T> constexpr bool is_scalar_v = is_scalar<T>::value;

template <typename T> struct is_vector : false_type {};
template <typename T, int N> struct is_vector<vec<T, N>> : true_type {};
template <typename T> constexpr bool is_vector_v = is_vector<T>::value;

template <typename T>
struct is_floating_point_or_vector
    : bool_constant<(is_floating_point<T>::value || is_vector<T>::value)> {};

template <typename T> struct vec_elements { static constexpr uint value = 1; };
template <typename T, int N> struct vec_elements<vec<T, N>> {
    static constexpr uint value = N;
};

// metalsim's types carry no top-level qualifiers or references: these are identities.
template <typename T> struct is_reference : false_type {};
template <typename T> constexpr bool is_reference_v = is_reference<T>::value;
template <typename T> struct is_const : false_type {};
template <typename T> constexpr bool is_const_v = is_const<T>::value;
template <typename T> struct remove_const { typedef T type; };
template <typename T> using remove_const_t = typename remove_const<T>::type;
template <typename T> struct remove_volatile { typedef T type; };
template <typename T> using remove_volatile_t = typename remove_volatile<T>::type;
template <typename T> struct remove_cv { typedef T type; };
template <typename T> using remove_cv_t = typename remove_cv<T>::type;
template <typename T> struct remove_reference { typedef T type; };
template <typename T> using remove_reference_t = typename remove_reference<T>::type;
template <typename T> struct remove_cvref { typedef T type; };
template <typename T> using remove_cvref_t = typename remove_cvref<T>::type;
template <typename T> struct remove_address_space { typedef T type; };
template <typename T> using remove_address_space_t = typename remove_address_space<T>::type;
template <typename T> struct add_const { typedef T type; };
template <typename T> using add_const_t = typename add_const<T>::type;
template <typename T> struct decay { typedef T type; };
template <typename T> using decay_t = typename decay<T>::type;

template <typename T> struct remove_pointer { typedef T type; };
template <typename T> struct remove_pointer<device T*> { typedef T type; };
template <typename T> struct remove_pointer<device const T*> { typedef T type; };
template <typename T> struct remove_pointer<constant T*> { typedef T type; };
template <typename T> struct remove_pointer<threadgroup T*> { typedef T type; };
template <typename T> struct remove_pointer<threadgroup const T*> { typedef T type; };
template <typename T> struct remove_pointer<thread T*> { typedef T type; };
template <typename T> struct remove_pointer<thread const T*> { typedef T type; };
template <typename T> using remove_pointer_t = typename remove_pointer<T>::type;

template <typename T> struct make_unsigned { typedef T type; };
template <> struct make_unsigned<char> { typedef uchar type; };
template <> struct make_unsigned<short> { typedef ushort type; };
template <> struct make_unsigned<int> { typedef uint type; };
template <> struct make_unsigned<long> { typedef ulong type; };
template <typename T> using make_unsigned_t = typename make_unsigned<T>::type;

template <typename T> struct make_signed { typedef T type; };
template <> struct make_signed<uchar> { typedef char type; };
template <> struct make_signed<ushort> { typedef short type; };
template <> struct make_signed<uint> { typedef int type; };
template <> struct make_signed<ulong> { typedef long type; };
template <typename T> using make_signed_t = typename make_signed<T>::type;

template <typename From, typename To>
struct is_convertible
    : bool_constant<(is_same<From, To>::value
                     || (is_scalar<From>::value && is_arithmetic<To>::value))> {};
template <typename From, typename To>
constexpr bool is_convertible_v = is_convertible<From, To>::value;

template <typename... B> struct conjunction : true_type {};
template <typename B1, typename... Bn>
struct conjunction<B1, Bn...> : conditional_t<B1::value, conjunction<Bn...>, B1> {};

template <typename... B> struct disjunction : false_type {};
template <typename B1, typename... Bn>
struct disjunction<B1, Bn...> : conditional_t<B1::value, B1, disjunction<Bn...>> {};

template <typename B> struct negation : bool_constant<(!B::value)> {};

// <metal_numeric>: numeric_limits.
template <typename T> struct numeric_limits {
    static constexpr bool is_specialized = false;
};

template <> struct numeric_limits<bool> {
    static constexpr bool is_specialized = true;
    static constexpr bool is_signed = false;
    static constexpr bool is_integer = true;
    static constexpr int digits = 1;
    static constexpr bool min() { return false; }
    static constexpr bool max() { return true; }
    static constexpr bool lowest() { return false; }
};

#define METALSIM_INT_LIMITS(T, SIGNED, DIGITS, DIGITS10, LO, HI)                          \
    template <> struct numeric_limits<T> {                                                \
        static constexpr bool is_specialized = true;                                      \
        static constexpr bool is_signed = SIGNED;                                         \
        static constexpr bool is_integer = true;                                          \
        static constexpr bool is_exact = true;                                            \
        static constexpr bool has_infinity = false;                                       \
        static constexpr bool has_quiet_NaN = false;                                      \
        static constexpr int radix = 2;                                                   \
        static constexpr int digits = DIGITS;                                             \
        static constexpr int digits10 = DIGITS10;                                         \
        static constexpr T min() { return LO; }                                           \
        static constexpr T max() { return HI; }                                           \
        static constexpr T lowest() { return LO; }                                        \
        static constexpr T epsilon() { return 0; }                                        \
    };

METALSIM_INT_LIMITS(char, true, 7, 2, -128, 127)
METALSIM_INT_LIMITS(uchar, false, 8, 2, 0, 255)
METALSIM_INT_LIMITS(short, true, 15, 4, -32768, 32767)
METALSIM_INT_LIMITS(ushort, false, 16, 4, 0, 65535)
METALSIM_INT_LIMITS(int, true, 31, 9, -2147483647 - 1, 2147483647)
METALSIM_INT_LIMITS(uint, false, 32, 9, 0u, 4294967295u)
METALSIM_INT_LIMITS(long, true, 63, 18, -9223372036854775807l - 1, 9223372036854775807l)
METALSIM_INT_LIMITS(ulong, false, 64, 19, 0ul, 18446744073709551615ul)

#undef METALSIM_INT_LIMITS

#define METALSIM_FLOAT_LIMITS(T, DIGITS, DIGITS10, MAXD10, MINEXP, MAXEXP, MIN, MAX, EPS, DENORM) \
    template <> struct numeric_limits<T> {                                                \
        static constexpr bool is_specialized = true;                                      \
        static constexpr bool is_signed = true;                                           \
        static constexpr bool is_integer = false;                                         \
        static constexpr bool is_exact = false;                                           \
        static constexpr bool is_iec559 = true;                                           \
        static constexpr bool has_infinity = true;                                        \
        static constexpr bool has_quiet_NaN = true;                                       \
        static constexpr bool has_signaling_NaN = true;                                   \
        static constexpr int radix = 2;                                                   \
        static constexpr int digits = DIGITS;                                             \
        static constexpr int digits10 = DIGITS10;                                         \
        static constexpr int max_digits10 = MAXD10;                                       \
        static constexpr int min_exponent = MINEXP;                                       \
        static constexpr int max_exponent = MAXEXP;                                       \
        static constexpr T min() { return MIN; }                                          \
        static constexpr T max() { return MAX; }                                          \
        static constexpr T lowest() { return -(MAX); }                                    \
        static constexpr T epsilon() { return EPS; }                                      \
        static constexpr T round_error() { return 0.5; }                                  \
        static constexpr T infinity() { return INFINITY; }                                \
        static constexpr T quiet_NaN() { return NAN; }                                    \
        static constexpr T signaling_NaN() { return NAN; }                                \
        static constexpr T denorm_min() { return DENORM; }                                \
    };

METALSIM_FLOAT_LIMITS(float, 24, 6, 9, -125, 128, 0x1p-126f, 0x1.fffffep127f, 0x1p-23f,
                      0x1p-149f)
METALSIM_FLOAT_LIMITS(half, 11, 3, 5, -13, 16, 0x1p-14h, 65504.0h, 0x1p-10h, 0x1p-24h)
METALSIM_FLOAT_LIMITS(bfloat, 8, 2, 4, -125, 128, 0x1p-126f, 0x1.fep127f, 0x1p-7f, 0x1p-133f)

#undef METALSIM_FLOAT_LIMITS

// <metal_texture>, for compute kernels: `read`, `write` and the sizes of 1D, 2D and 3D
// textures with one mipmap level. A texture kernel parameter is lowered
// (`lower/texture.rs`) to its texels, four channels of T each in row-major order as the
// launch spec bound them (already converted from the pixel format, MSL spec 7.7), and its
// size. An out-of-bounds coordinate, or a `lod` other than 0, addresses the texel just past
// the end, so the simulator faults naming the texture rather than reading another texel.
enum class access { sample = 0, read = 1, write = 2, read_write = 3 };

template <typename T, access A = access::sample>
struct texture1d {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint x, uint lod) const { return x < __width && lod == 0 ? x : __width; }
    vec<T, 4> read(uint coord, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, lod)];
    }
    void write(vec<T, 4> color, uint coord, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, lod)] = color;
    }
    vec<T, 4> read(ushort coord, ushort lod = 0) const { return read(uint(coord), uint(lod)); }
    void write(vec<T, 4> color, ushort coord, ushort lod = 0) const {
        write(color, uint(coord), uint(lod));
    }
    void fence() const {}
};

template <typename T, access A = access::sample>
struct texture2d {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint lod) const {
        return c.x < __width && c.y < __height && lod == 0 ? c.y * __width + c.x
                                                           : __width * __height;
    }
    vec<T, 4> read(uint2 coord, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, lod)];
    }
    void write(vec<T, 4> color, uint2 coord, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, lod)] = color;
    }
    vec<T, 4> read(ushort2 coord, ushort lod = 0) const { return read(uint2(coord), uint(lod)); }
    void write(vec<T, 4> color, ushort2 coord, ushort lod = 0) const {
        write(color, uint2(coord), uint(lod));
    }
    void fence() const {}
};

template <typename T, access A = access::sample>
struct texture3d {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_depth(uint lod = 0) const { return __depth; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint3 c, uint lod) const {
        return c.x < __width && c.y < __height && c.z < __depth && lod == 0
                   ? (c.z * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    vec<T, 4> read(uint3 coord, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, lod)];
    }
    void write(vec<T, 4> color, uint3 coord, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, lod)] = color;
    }
    vec<T, 4> read(ushort3 coord, ushort lod = 0) const { return read(uint3(coord), uint(lod)); }
    void write(vec<T, 4> color, ushort3 coord, ushort lod = 0) const {
        write(color, uint3(coord), uint(lod));
    }
    void fence() const {}
};

} // namespace metal
