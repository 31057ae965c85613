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

// <metal_simdgroup>: a vote (what `simd_ballot` returns) is its lanes' bits, lane i in bit
// i. `all()` asks whether every lane of the 32-lane SIMD-group voted true (lanes that do not
// exist or are inactive did not), `any()` whether one did.
struct simd_vote {
    typedef ulong vote_t;
    vote_t __bits;
    explicit constexpr simd_vote(vote_t v = 0) : __bits(v) {}
    explicit constexpr operator vote_t() const { return __bits; }
    constexpr bool all() const { return (__bits & 0xffffffffull) == 0xffffffffull; }
    constexpr bool any() const { return __bits != 0; }
};

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

// <metal_matrix>: `matrix<T, Cols, Rows>` (MSL 2.2, 3.2, 5.6), column-major: an array of
// `Cols` column vectors of `Rows` elements, so its size and alignment are those of the spec's
// table 4 (a `float3` column takes 16 bytes). Like any array it lives in thread memory.
template <typename T> struct __matrix_scalar { typedef T type; };

template <typename T, int Cols, int Rows>
struct matrix {
    static_assert(Cols >= 2 && Cols <= 4 && Rows >= 2 && Rows <= 4,
                  "a matrix has 2, 3 or 4 columns and rows");
    vec<T, Rows> columns[Cols];

    matrix() = default;
    // The diagonal from one scalar, the rest 0.
    explicit matrix(T d) {
        for (int c = 0; c < Cols; c++) {
            columns[c] = vec<T, Rows>(T(0));
            if (c < Rows) {
                columns[c][c] = d;
            }
        }
    }
    // From a matrix of the same size (and any element type).
    template <typename U>
    explicit matrix(matrix<U, Cols, Rows> m) {
        for (int c = 0; c < Cols; c++) {
            columns[c] = vec<T, Rows>(m.columns[c]);
        }
    }
    // From its column vectors (templates, so that scalars never convert to columns).
    template <typename U>
    matrix(vec<U, Rows> c0, vec<U, Rows> c1) {
        static_assert(Cols == 2, "a matrix is constructed from as many vectors as it has columns");
        if constexpr (Cols == 2) {
            columns[0] = vec<T, Rows>(c0);
            columns[1] = vec<T, Rows>(c1);
        }
    }
    template <typename U>
    matrix(vec<U, Rows> c0, vec<U, Rows> c1, vec<U, Rows> c2) {
        static_assert(Cols == 3, "a matrix is constructed from as many vectors as it has columns");
        if constexpr (Cols == 3) {
            columns[0] = vec<T, Rows>(c0);
            columns[1] = vec<T, Rows>(c1);
            columns[2] = vec<T, Rows>(c2);
        }
    }
    template <typename U>
    matrix(vec<U, Rows> c0, vec<U, Rows> c1, vec<U, Rows> c2, vec<U, Rows> c3) {
        static_assert(Cols == 4, "a matrix is constructed from as many vectors as it has columns");
        if constexpr (Cols == 4) {
            columns[0] = vec<T, Rows>(c0);
            columns[1] = vec<T, Rows>(c1);
            columns[2] = vec<T, Rows>(c2);
            columns[3] = vec<T, Rows>(c3);
        }
    }
    // From all its elements, column by column.
    matrix(T a, T b, T c, T d) {
        static_assert(Cols * Rows == 4, "a matrix is constructed from all of its elements");
        __set(0, a); __set(1, b); __set(2, c); __set(3, d);
    }
    matrix(T a, T b, T c, T d, T e, T f) {
        static_assert(Cols * Rows == 6, "a matrix is constructed from all of its elements");
        __set(0, a); __set(1, b); __set(2, c); __set(3, d); __set(4, e); __set(5, f);
    }
    matrix(T a, T b, T c, T d, T e, T f, T g, T h) {
        static_assert(Cols * Rows == 8, "a matrix is constructed from all of its elements");
        __set(0, a); __set(1, b); __set(2, c); __set(3, d);
        __set(4, e); __set(5, f); __set(6, g); __set(7, h);
    }
    matrix(T a, T b, T c, T d, T e, T f, T g, T h, T i) {
        static_assert(Cols * Rows == 9, "a matrix is constructed from all of its elements");
        __set(0, a); __set(1, b); __set(2, c); __set(3, d); __set(4, e);
        __set(5, f); __set(6, g); __set(7, h); __set(8, i);
    }
    matrix(T a, T b, T c, T d, T e, T f, T g, T h, T i, T j, T k, T l) {
        static_assert(Cols * Rows == 12, "a matrix is constructed from all of its elements");
        __set(0, a); __set(1, b); __set(2, c); __set(3, d); __set(4, e); __set(5, f);
        __set(6, g); __set(7, h); __set(8, i); __set(9, j); __set(10, k); __set(11, l);
    }
    matrix(T a, T b, T c, T d, T e, T f, T g, T h,
           T i, T j, T k, T l, T m, T n, T o, T p) {
        static_assert(Cols * Rows == 16, "a matrix is constructed from all of its elements");
        __set(0, a); __set(1, b); __set(2, c); __set(3, d); __set(4, e); __set(5, f);
        __set(6, g); __set(7, h); __set(8, i); __set(9, j); __set(10, k); __set(11, l);
        __set(12, m); __set(13, n); __set(14, o); __set(15, p);
    }
    void __set(int k, T x) { columns[k / Rows][k % Rows] = x; }

    // `m[i]` is column i; `m[i][j]` row j of it.
    thread vec<T, Rows>& operator[](int i) { return columns[i]; }
    vec<T, Rows> operator[](int i) const { return columns[i]; }

    thread matrix& operator+=(matrix o) {
        for (int c = 0; c < Cols; c++) {
            columns[c] += o.columns[c];
        }
        return *this;
    }
    thread matrix& operator-=(matrix o) {
        for (int c = 0; c < Cols; c++) {
            columns[c] -= o.columns[c];
        }
        return *this;
    }
    thread matrix& operator*=(T s) {
        for (int c = 0; c < Cols; c++) {
            columns[c] *= s;
        }
        return *this;
    }
    thread matrix& operator*=(matrix<T, Cols, Cols> o) {
        *this = *this * o;
        return *this;
    }
};

template <typename T, int C, int R>
matrix<T, C, R> operator+(matrix<T, C, R> a, matrix<T, C, R> b) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) {
        r.columns[c] = a.columns[c] + b.columns[c];
    }
    return r;
}

template <typename T, int C, int R>
matrix<T, C, R> operator-(matrix<T, C, R> a, matrix<T, C, R> b) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) {
        r.columns[c] = a.columns[c] - b.columns[c];
    }
    return r;
}

template <typename T, int C, int R>
matrix<T, C, R> operator-(matrix<T, C, R> a) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) {
        r.columns[c] = -a.columns[c];
    }
    return r;
}

template <typename T, int C, int R>
matrix<T, C, R> operator*(matrix<T, C, R> a, typename __matrix_scalar<T>::type s) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) {
        r.columns[c] = a.columns[c] * s;
    }
    return r;
}

template <typename T, int C, int R>
matrix<T, C, R> operator*(typename __matrix_scalar<T>::type s, matrix<T, C, R> a) {
    return a * s;
}

// A right vector is a column: the sum of the columns weighted by its elements.
template <typename T, int C, int R>
vec<T, R> operator*(matrix<T, C, R> a, vec<T, C> v) {
    vec<T, R> r = a.columns[0] * v[0];
    for (int c = 1; c < C; c++) {
        r += a.columns[c] * v[c];
    }
    return r;
}

// A left vector is a row: its dot product with each column.
template <typename T, int C, int R>
vec<T, C> operator*(vec<T, R> v, matrix<T, C, R> a) {
    vec<T, C> r;
    for (int c = 0; c < C; c++) {
        r[c] = dot(v, a.columns[c]);
    }
    return r;
}

template <typename T, int K, int R, int C>
matrix<T, C, R> operator*(matrix<T, K, R> a, matrix<T, C, K> b) {
    matrix<T, C, R> r;
    for (int c = 0; c < C; c++) {
        r.columns[c] = a * b.columns[c];
    }
    return r;
}

template <typename T, int C, int R>
matrix<T, R, C> transpose(matrix<T, C, R> a) {
    matrix<T, R, C> r;
    for (int c = 0; c < C; c++) {
        for (int k = 0; k < R; k++) {
            r.columns[k][c] = a.columns[c][k];
        }
    }
    return r;
}

template <typename T>
T __det3(vec<T, 3> a, vec<T, 3> b, vec<T, 3> c) {
    return a.x * (b.y * c.z - c.y * b.z) - b.x * (a.y * c.z - c.y * a.z)
           + c.x * (a.y * b.z - b.y * a.z);
}

template <typename T, int N, int R>
T determinant(matrix<T, N, R> a) {
    static_assert(N == R, "determinant() needs a square matrix");
    if constexpr (N != R) {
        return T(0);
    } else if constexpr (N == 2) {
        return a.columns[0].x * a.columns[1].y - a.columns[1].x * a.columns[0].y;
    } else if constexpr (N == 3) {
        return __det3(a.columns[0], a.columns[1], a.columns[2]);
    } else {
        // Laplace expansion along the last row.
        vec<T, 3> c0 = a.columns[0].xyz;
        vec<T, 3> c1 = a.columns[1].xyz;
        vec<T, 3> c2 = a.columns[2].xyz;
        vec<T, 3> c3 = a.columns[3].xyz;
        return -a.columns[0].w * __det3(c1, c2, c3) + a.columns[1].w * __det3(c0, c2, c3)
               - a.columns[2].w * __det3(c0, c1, c3) + a.columns[3].w * __det3(c0, c1, c2);
    }
}

typedef matrix<float, 2, 2> float2x2;
typedef matrix<float, 2, 3> float2x3;
typedef matrix<float, 2, 4> float2x4;
typedef matrix<float, 3, 2> float3x2;
typedef matrix<float, 3, 3> float3x3;
typedef matrix<float, 3, 4> float3x4;
typedef matrix<float, 4, 2> float4x2;
typedef matrix<float, 4, 3> float4x3;
typedef matrix<float, 4, 4> float4x4;
typedef matrix<half, 2, 2> half2x2;
typedef matrix<half, 2, 3> half2x3;
typedef matrix<half, 2, 4> half2x4;
typedef matrix<half, 3, 2> half3x2;
typedef matrix<half, 3, 3> half3x3;
typedef matrix<half, 3, 4> half3x4;
typedef matrix<half, 4, 2> half4x2;
typedef matrix<half, 4, 3> half4x3;
typedef matrix<half, 4, 4> half4x4;

// <metal_texture>, for compute kernels: every texture type (1D, 2D and 3D textures, their
// arrays, cubes, multisample and buffer textures, and the depth ones) with one mipmap
// level: `read`, `write`, the sizes, `sample`, `gather` and the atomics. A texture kernel parameter is lowered
// (`lower/texture.rs`) to its texels, four channels of T each in row-major order as the
// launch spec bound them (already converted from the pixel format, MSL spec 7.7), and its
// size. An out-of-bounds coordinate, or a `lod` other than 0, addresses the texel just past
// the end, so the simulator faults naming the texture rather than reading another texel.
enum class access { sample = 0, read = 1, write = 2, read_write = 3 };

// Samplers (MSL spec 2.6). Each enumerator carries its enum's kind in its high byte, so
// that one `__set(uint)` takes any of them: the lowering gives an enum the type of its
// underlying integer, so overloads could not tell `filter` from `address`.
enum class coord : uint { normalized = 0x100, pixel };
enum class address : uint {
    clamp_to_zero = 0x200, clamp_to_edge, clamp_to_border, repeat, mirrored_repeat
};
enum class s_address : uint {
    clamp_to_zero = 0x300, clamp_to_edge, clamp_to_border, repeat, mirrored_repeat
};
enum class t_address : uint {
    clamp_to_zero = 0x400, clamp_to_edge, clamp_to_border, repeat, mirrored_repeat
};
enum class r_address : uint {
    clamp_to_zero = 0x500, clamp_to_edge, clamp_to_border, repeat, mirrored_repeat
};
enum class filter : uint { nearest = 0x600, linear };
enum class mag_filter : uint { nearest = 0x700, linear };
enum class min_filter : uint { nearest = 0x800, linear };
enum class mip_filter : uint { none = 0x900, nearest, linear };
enum class border_color : uint { transparent_black = 0xa00, opaque_black, opaque_white };
enum class compare_func : uint {
    none = 0xb00, less, less_equal, greater, greater_equal, equal, not_equal, always, never
};

struct max_anisotropy {
    int __value;
    constexpr max_anisotropy(int v) : __value(v) {}
};

struct lod_clamp {
    float __min;
    float __max;
    constexpr lod_clamp(float lo, float hi) : __min(lo), __max(hi) {}
};

// The sampler state. A `[[sampler(n)]]` kernel parameter is loaded from a hidden buffer
// the launch spec fills with these twelve words in this order (launch/src/sampler.rs);
// the enums are stored as their position in the enum (`address::repeat` is 3).
struct sampler {
    uint __coord = 0;
    uint __s_address = 1;
    uint __t_address = 1;
    uint __r_address = 1;
    uint __mag_filter = 0;
    uint __min_filter = 0;
    uint __mip_filter = 0;
    uint __border_color = 0;
    uint __compare_func = 0;
    uint __max_anisotropy = 1;
    float __lod_min = 0.0f;
    float __lod_max = MAXFLOAT;

    // The last of several values of one enum wins (MSL spec 2.6).
    constexpr void __set(uint v) {
        uint kind = v >> 8;
        uint x = v & 0xff;
        if (kind == 1) {
            __coord = x;
        } else if (kind == 2) {
            __s_address = x;
            __t_address = x;
            __r_address = x;
        } else if (kind == 3) {
            __s_address = x;
        } else if (kind == 4) {
            __t_address = x;
        } else if (kind == 5) {
            __r_address = x;
        } else if (kind == 6) {
            __mag_filter = x;
            __min_filter = x;
        } else if (kind == 7) {
            __mag_filter = x;
        } else if (kind == 8) {
            __min_filter = x;
        } else if (kind == 9) {
            __mip_filter = x;
        } else if (kind == 10) {
            __border_color = x;
        } else if (kind == 11) {
            __compare_func = x;
        }
    }
    constexpr void __set(max_anisotropy a) { __max_anisotropy = uint(a.__value); }
    constexpr void __set(lod_clamp c) {
        __lod_min = c.__min;
        __lod_max = c.__max;
    }
    constexpr void __apply() {}
    template <typename P, typename... Ps> constexpr void __apply(P p, Ps... ps) {
        __set(p);
        __apply(ps...);
    }
    template <typename... Ps> constexpr sampler(Ps... params) { __apply(params...); }
};

// The level-of-detail options of `sample` (5.10.3). Textures have one mipmap level, so a
// level of detail only chooses between the sampler's `mag_filter` (0 or less) and
// `min_filter` (above 0), after the sampler's `lod_clamp`.
struct bias {
    float __value;
    constexpr bias(float v) : __value(v) {}
};
struct level {
    float __lod;
    constexpr level(float lod) : __lod(lod) {}
};
struct min_lod_clamp {
    float __value;
    constexpr min_lod_clamp(float v) : __value(v) {}
};
struct gradient2d {
    float2 __dx;
    float2 __dy;
    constexpr gradient2d(float2 dx, float2 dy) : __dx(dx), __dy(dy) {}
};
struct gradient3d {
    float3 __dx;
    float3 __dy;
    constexpr gradient3d(float3 dx, float3 dy) : __dx(dx), __dy(dy) {}
};
struct gradientcube {
    float3 __dx;
    float3 __dy;
    constexpr gradientcube(float3 dx, float3 dy) : __dx(dx), __dy(dy) {}
};

// The channel `gather` returns of each of its four texels.
enum class component : uint { x = 0, y, z, w };

// Whether a sample at this level of detail filters linearly. Integer textures are never
// filtered (Metal's integer pixel formats are not filterable): they sample the nearest texel.
template <typename T> bool __sampler_linear(sampler s, float lod) {
    lod = clamp(lod, s.__lod_min, s.__lod_max);
    return is_floating_point_v<T> && (lod > 0.0f ? s.__min_filter : s.__mag_filter) == 1;
}

// The level of detail of a gradient (texel units): log2 of the longer footprint axis.
template <typename V> float __sampler_gradient_lod(V dx, V dy, V size, uint coord_mode) {
    V scale = coord_mode == 0 ? size : V(1.0f);
    return log2(max(length(dx * scale), length(dy * scale)));
}

// The texel coordinate of a sampling coordinate along an axis of `n` texels.
inline float __sampler_unnormalize(float c, uint n, uint coord_mode) {
    return coord_mode == 0 ? c * float(n) : c;
}

// Where the integer texel coordinate `i` lands on an axis of `n` texels under an address
// mode (0 clamp_to_zero, 1 clamp_to_edge, 2 clamp_to_border, 3 repeat, 4 mirrored_repeat;
// the wrapping of the Vulkan specification, 16.7.1, which Metal's modes match): x is a
// texel inside the texture, y says whether the tap is outside and reads a border instead
// (0 no, 1 clamp_to_zero's zero, 2 the sampler's border colour).
inline int2 __sampler_wrap(int i, int n, uint mode) {
    if (mode == 3) {
        int m = i % n;
        return int2(m < 0 ? m + n : m, 0);
    }
    if (mode == 4) {
        int t = i % (2 * n);
        t = t < 0 ? t + 2 * n : t;
        int a = t - n;
        return int2(n - 1 - (a >= 0 ? a : -(1 + a)), 0);
    }
    bool outside = i < 0 || i >= n;
    return int2(clamp(i, 0, n - 1), !outside || mode == 1 ? 0 : (mode == 0 ? 1 : 2));
}

// A tap's colour: the texel, or a border. clamp_to_zero gives transparent black, or opaque
// black for a format without alpha (the texture's header holds its channel count in bits
// 24 to 31 of the format word).
template <typename T>
vec<T, 4> __sampler_tap(sampler s, int outside, vec<T, 4> texel, uint format) {
    if (outside == 0) {
        return texel;
    }
    if (outside == 1) {
        return vec<T, 4>(0, 0, 0, (format >> 24) == 4 ? 0 : 1);
    }
    if (s.__border_color == 0) {
        return vec<T, 4>(0);
    }
    return s.__border_color == 1 ? vec<T, 4>(0, 0, 0, 1) : vec<T, 4>(1);
}

// Sampling (MSL spec 5.10) over `texels`, row-major, of a texture or one array slice of
// `w` x `h` x `d` texels, by the rules of the MSL and Vulkan specifications (16.5 to 16.8):
// coordinates scaled by the size when normalized; nearest takes the texel at floor(u) plus
// the offset; linear weights the texels around u - 0.5 by the fractions, in f32.
template <typename T>
vec<T, 4> __sample1d(device vec<T, 4>* texels, uint w_, uint format, sampler s, float coord,
                     float lod) {
    int w = int(w_);
    float u = __sampler_unnormalize(coord, w_, s.__coord);
    if (!__sampler_linear<T>(s, lod)) {
        int2 x = __sampler_wrap(int(floor(u)), w, s.__s_address);
        return __sampler_tap<T>(s, x.y, texels[x.x], format);
    }
    u -= 0.5f;
    float f = floor(u);
    float a = u - f;
    int2 x0 = __sampler_wrap(int(f), w, s.__s_address);
    int2 x1 = __sampler_wrap(int(f) + 1, w, s.__s_address);
    return vec<T, 4>((1.0f - a) * float4(__sampler_tap<T>(s, x0.y, texels[x0.x], format))
                     + a * float4(__sampler_tap<T>(s, x1.y, texels[x1.x], format)));
}

template <typename T>
vec<T, 4> __sample2d(device vec<T, 4>* texels, uint w_, uint h_, uint format, sampler s,
                     float2 coord, int2 offset, float lod) {
    int w = int(w_);
    int h = int(h_);
    float2 u = float2(__sampler_unnormalize(coord.x, w_, s.__coord),
                      __sampler_unnormalize(coord.y, h_, s.__coord));
    if (!__sampler_linear<T>(s, lod)) {
        int2 x = __sampler_wrap(int(floor(u.x)) + offset.x, w, s.__s_address);
        int2 y = __sampler_wrap(int(floor(u.y)) + offset.y, h, s.__t_address);
        return __sampler_tap<T>(s, max(x.y, y.y), texels[y.x * w + x.x], format);
    }
    u -= 0.5f;
    float2 f = floor(u);
    float2 a = u - f;
    int2 i = int2(f) + offset;
    int2 x0 = __sampler_wrap(i.x, w, s.__s_address);
    int2 x1 = __sampler_wrap(i.x + 1, w, s.__s_address);
    int2 y0 = __sampler_wrap(i.y, h, s.__t_address);
    int2 y1 = __sampler_wrap(i.y + 1, h, s.__t_address);
    float4 c00 = float4(__sampler_tap<T>(s, max(x0.y, y0.y), texels[y0.x * w + x0.x], format));
    float4 c10 = float4(__sampler_tap<T>(s, max(x1.y, y0.y), texels[y0.x * w + x1.x], format));
    float4 c01 = float4(__sampler_tap<T>(s, max(x0.y, y1.y), texels[y1.x * w + x0.x], format));
    float4 c11 = float4(__sampler_tap<T>(s, max(x1.y, y1.y), texels[y1.x * w + x1.x], format));
    return vec<T, 4>((1.0f - a.y) * ((1.0f - a.x) * c00 + a.x * c10)
                     + a.y * ((1.0f - a.x) * c01 + a.x * c11));
}

template <typename T>
vec<T, 4> __sample3d(device vec<T, 4>* texels, uint3 size, uint format, sampler s, float3 coord,
                     int3 offset, float lod) {
    int w = int(size.x);
    int h = int(size.y);
    int d = int(size.z);
    float3 u = float3(__sampler_unnormalize(coord.x, size.x, s.__coord),
                      __sampler_unnormalize(coord.y, size.y, s.__coord),
                      __sampler_unnormalize(coord.z, size.z, s.__coord));
    if (!__sampler_linear<T>(s, lod)) {
        int2 x = __sampler_wrap(int(floor(u.x)) + offset.x, w, s.__s_address);
        int2 y = __sampler_wrap(int(floor(u.y)) + offset.y, h, s.__t_address);
        int2 z = __sampler_wrap(int(floor(u.z)) + offset.z, d, s.__r_address);
        return __sampler_tap<T>(s, max(max(x.y, y.y), z.y), texels[(z.x * h + y.x) * w + x.x],
                                format);
    }
    u -= 0.5f;
    float3 f = floor(u);
    float3 a = u - f;
    int3 i = int3(f) + offset;
    int2 x0 = __sampler_wrap(i.x, w, s.__s_address);
    int2 x1 = __sampler_wrap(i.x + 1, w, s.__s_address);
    int2 y0 = __sampler_wrap(i.y, h, s.__t_address);
    int2 y1 = __sampler_wrap(i.y + 1, h, s.__t_address);
    int2 z0 = __sampler_wrap(i.z, d, s.__r_address);
    int2 z1 = __sampler_wrap(i.z + 1, d, s.__r_address);
    float4 front = (1.0f - a.y) * ((1.0f - a.x) * float4(__sampler_tap<T>(s, max(max(x0.y, y0.y), z0.y), texels[(z0.x * h + y0.x) * w + x0.x], format))
                                   + a.x * float4(__sampler_tap<T>(s, max(max(x1.y, y0.y), z0.y), texels[(z0.x * h + y0.x) * w + x1.x], format)))
                   + a.y * ((1.0f - a.x) * float4(__sampler_tap<T>(s, max(max(x0.y, y1.y), z0.y), texels[(z0.x * h + y1.x) * w + x0.x], format))
                            + a.x * float4(__sampler_tap<T>(s, max(max(x1.y, y1.y), z0.y), texels[(z0.x * h + y1.x) * w + x1.x], format)));
    float4 back = (1.0f - a.y) * ((1.0f - a.x) * float4(__sampler_tap<T>(s, max(max(x0.y, y0.y), z1.y), texels[(z1.x * h + y0.x) * w + x0.x], format))
                                  + a.x * float4(__sampler_tap<T>(s, max(max(x1.y, y0.y), z1.y), texels[(z1.x * h + y0.x) * w + x1.x], format)))
                  + a.y * ((1.0f - a.x) * float4(__sampler_tap<T>(s, max(max(x0.y, y1.y), z1.y), texels[(z1.x * h + y1.x) * w + x0.x], format))
                           + a.x * float4(__sampler_tap<T>(s, max(max(x1.y, y1.y), z1.y), texels[(z1.x * h + y1.x) * w + x1.x], format)));
    return vec<T, 4>((1.0f - a.z) * front + a.z * back);
}

// The array slice a sample reads: the index clamped to the array (Vulkan 16.5.1 rounds and
// clamps the layer coordinate).
inline uint __sampler_layer(uint array, uint layers) { return min(array, layers - 1); }

// Channel `c` (0 x ... 3 w) of a texel.
template <typename T> T __texel_component(vec<T, 4> v, uint c) {
    return c == 0 ? v.x : (c == 1 ? v.y : (c == 2 ? v.z : v.w));
}

// `gather` (MSL spec 5.10): the four texels bilinear filtering at `coord` weights, channel
// `c` of each, "in counter clockwise order starting with the sample to the lower left":
// the nearest texels at unnormalized deltas (-,+), (+,+), (+,-), (-,-) of half a texel.
// With i, j the texel at floor(u - 0.5), floor(v - 0.5) (plus the offset): (i, j+1),
// (i+1, j+1), (i+1, j), (i, j), each wrapped by the sampler's address modes.
template <typename T>
vec<T, 4> __gather2d(device vec<T, 4>* texels, uint w_, uint h_, uint format, sampler s,
                     float2 coord, int2 offset, uint c) {
    int w = int(w_);
    int h = int(h_);
    float2 u = float2(__sampler_unnormalize(coord.x, w_, s.__coord),
                      __sampler_unnormalize(coord.y, h_, s.__coord)) - 0.5f;
    int2 i = int2(floor(u)) + offset;
    int2 x0 = __sampler_wrap(i.x, w, s.__s_address);
    int2 x1 = __sampler_wrap(i.x + 1, w, s.__s_address);
    int2 y0 = __sampler_wrap(i.y, h, s.__t_address);
    int2 y1 = __sampler_wrap(i.y + 1, h, s.__t_address);
    vec<T, 4> t01 = __sampler_tap<T>(s, max(x0.y, y1.y), texels[y1.x * w + x0.x], format);
    vec<T, 4> t11 = __sampler_tap<T>(s, max(x1.y, y1.y), texels[y1.x * w + x1.x], format);
    vec<T, 4> t10 = __sampler_tap<T>(s, max(x1.y, y0.y), texels[y0.x * w + x1.x], format);
    vec<T, 4> t00 = __sampler_tap<T>(s, max(x0.y, y0.y), texels[y0.x * w + x0.x], format);
    return vec<T, 4>(__texel_component(t01, c), __texel_component(t11, c),
                     __texel_component(t10, c), __texel_component(t00, c));
}

// Cube textures (MSL spec 5.10.6, 5.10.7, 5.10.11, 5.10.12): six square faces numbered as
// table 23 (0 +X, 1 -X, 2 +Y, 3 -Y, 4 +Z, 5 -Z); face f of array element a is slice
// 6a + f of the texels. A direction picks the face of its major axis (ties go to x, then
// y), and the face-local coordinates are s = (sc / |ma| + 1) / 2, t = (tc / |ma| + 1) / 2
// with sc, tc, ma per face as in the Vulkan specification's cube map face selection table
// (16.5.4), which OpenGL shares. Filtering stays within the face: taps past a face's edge
// clamp to that edge (hardware filters seamlessly across cube edges; that is not modelled).
inline uint __cube_face(float3 d) {
    float3 a = abs(d);
    if (a.x >= a.y && a.x >= a.z) {
        return d.x >= 0.0f ? 0u : 1u;
    }
    if (a.y >= a.z) {
        return d.y >= 0.0f ? 2u : 3u;
    }
    return d.z >= 0.0f ? 4u : 5u;
}

// sc, tc and |ma| of a direction on a face; linear in the direction, so it maps
// derivatives too.
inline float3 __cube_axes(float3 d, uint face) {
    switch (face) {
    case 0: return float3(-d.z, -d.y, d.x);
    case 1: return float3(d.z, -d.y, -d.x);
    case 2: return float3(d.x, d.z, d.y);
    case 3: return float3(d.x, -d.z, -d.y);
    case 4: return float3(d.x, -d.y, d.z);
    default: return float3(-d.x, -d.y, -d.z);
    }
}

// The normalized face-local coordinate of a direction on a face.
inline float2 __cube_coord(float3 d, uint face) {
    float3 a = __cube_axes(d, face);
    return (a.xy / a.z + 1.0f) * 0.5f;
}

// The level of detail of `gradientcube`: the derivatives of s and t (the quotient rule on
// sc / |ma|, as Vulkan 16.5.4 derives them) scaled to texels.
inline float __cube_gradient_lod(float3 d, float3 dx, float3 dy, uint size) {
    uint face = __cube_face(d);
    float3 a = __cube_axes(d, face);
    float3 ax = __cube_axes(dx, face);
    float3 ay = __cube_axes(dy, face);
    float2 gx = 0.5f * (ax.xy * a.z - a.xy * ax.z) / (a.z * a.z);
    float2 gy = 0.5f * (ay.xy * a.z - a.xy * ay.z) / (a.z * a.z);
    return log2(max(length(gx), length(gy)) * float(size));
}

// The sampler a face is filtered with: normalized coordinates clamped to the face's edges
// (a cube's coordinates are directions, so the sampler's coord and address modes do not
// apply).
inline sampler __cube_sampler(sampler s) {
    sampler f = s;
    f.__coord = 0;
    f.__s_address = 1;
    f.__t_address = 1;
    return f;
}

// `sample` on the cube whose six faces start at `faces`.
template <typename T>
vec<T, 4> __sample_cube(device vec<T, 4>* faces, uint size, uint format, sampler s, float3 dir,
                        float lod) {
    uint face = __cube_face(dir);
    return __sample2d<T>(faces + face * size * size, size, size, format, __cube_sampler(s),
                         __cube_coord(dir, face), int2(0), lod);
}

// `gather` on the cube whose six faces start at `faces`.
template <typename T>
vec<T, 4> __gather_cube(device vec<T, 4>* faces, uint size, uint format, sampler s, float3 dir,
                        uint c) {
    uint face = __cube_face(dir);
    return __gather2d<T>(faces + face * size * size, size, size, format, __cube_sampler(s),
                         __cube_coord(dir, face), int2(0), c);
}

// Texture atomics (MSL 3.1) on `int` and `uint` textures of `access::read_write` (Metal
// allows them on r32sint and r32uint): each works on the first channel of one texel with
// the atomic functions' semantics (relaxed order) and returns, as a `read` of an r32
// format would, (value, 0, 0, 1). `INDEX` is the texel's index, and the arguments after
// it the coordinate parameters of the texture type.
template <typename T> vec<T, 4> __texel_of(T v) { return vec<T, 4>(v, 0, 0, 1); }
template <typename T, access A> device atomic<T>* __texel_atomic(device vec<T, 4>* texel) {
    static_assert(is_same_v<T, int> || is_same_v<T, uint>,
                  "texture atomics need an int or uint texture");
    static_assert(A == access::read_write, "texture atomics need access::read_write");
    return (device atomic<T>*)texel;
}
#define METALSIM_TEXTURE_FETCH_OP(OP, INDEX, ...)                                             \
    vec<T, 4> atomic_fetch_##OP(__VA_ARGS__, vec<T, 4> operand) const {                      \
        return __texel_of(atomic_fetch_##OP##_explicit(__texel_atomic<T, A>(__texels + INDEX), \
                                                       operand.x, memory_order_relaxed));    \
    }
#define METALSIM_TEXTURE_ATOMICS(INDEX, ...)                                                  \
    vec<T, 4> atomic_load(__VA_ARGS__) const {                                                \
        return __texel_of(                                                                    \
            atomic_load_explicit(__texel_atomic<T, A>(__texels + INDEX), memory_order_relaxed)); \
    }                                                                                         \
    void atomic_store(__VA_ARGS__, vec<T, 4> color) const {                                   \
        atomic_store_explicit(__texel_atomic<T, A>(__texels + INDEX), color.x,                \
                              memory_order_relaxed);                                          \
    }                                                                                         \
    vec<T, 4> atomic_exchange(__VA_ARGS__, vec<T, 4> desired) const {                         \
        return __texel_of(atomic_exchange_explicit(__texel_atomic<T, A>(__texels + INDEX),    \
                                                   desired.x, memory_order_relaxed));         \
    }                                                                                         \
    bool atomic_compare_exchange_weak(__VA_ARGS__, thread vec<T, 4>* expected,                \
                                      vec<T, 4> desired) const {                              \
        T seen = (*expected).x;                                                               \
        bool ok = atomic_compare_exchange_weak_explicit(                                      \
            __texel_atomic<T, A>(__texels + INDEX), &seen, desired.x, memory_order_relaxed,   \
            memory_order_relaxed);                                                            \
        *expected = __texel_of(seen);                                                         \
        return ok;                                                                            \
    }                                                                                         \
    METALSIM_TEXTURE_FETCH_OP(add, INDEX, __VA_ARGS__)                                        \
    METALSIM_TEXTURE_FETCH_OP(sub, INDEX, __VA_ARGS__)                                        \
    METALSIM_TEXTURE_FETCH_OP(and, INDEX, __VA_ARGS__)                                        \
    METALSIM_TEXTURE_FETCH_OP(or, INDEX, __VA_ARGS__)                                         \
    METALSIM_TEXTURE_FETCH_OP(xor, INDEX, __VA_ARGS__)                                        \
    METALSIM_TEXTURE_FETCH_OP(min, INDEX, __VA_ARGS__)                                        \
    METALSIM_TEXTURE_FETCH_OP(max, INDEX, __VA_ARGS__)

template <typename T, access A = access::sample>
struct texture1d {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
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
    vec<T, 4> sample(sampler s, float coord) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample1d<T>(__texels, __width, __format, s, coord, 0.0f);
    }
    METALSIM_TEXTURE_ATOMICS(__index(coord, 0), uint coord)
    void fence() const {}
};

// A 1D texture array: slice `i` is row `i` of the texels (`__height` is the array size).
template <typename T, access A = access::sample>
struct texture1d_array {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_array_size() const { return __height; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint x, uint array, uint lod) const {
        return x < __width && array < __height && lod == 0 ? array * __width + x
                                                           : __width * __height;
    }
    vec<T, 4> read(uint coord, uint array, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, array, lod)];
    }
    void write(vec<T, 4> color, uint coord, uint array, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, array, lod)] = color;
    }
    vec<T, 4> read(ushort coord, ushort array, ushort lod = 0) const {
        return read(uint(coord), uint(array), uint(lod));
    }
    void write(vec<T, 4> color, ushort coord, ushort array, ushort lod = 0) const {
        write(color, uint(coord), uint(array), uint(lod));
    }
    vec<T, 4> sample(sampler s, float coord, uint array) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        device vec<T, 4>* slice = __texels + __sampler_layer(array, __height) * __width;
        return __sample1d<T>(slice, __width, __format, s, coord, 0.0f);
    }
    METALSIM_TEXTURE_ATOMICS(__index(coord, array, 0), uint coord, uint array)
    void fence() const {}
};

template <typename T, access A = access::sample>
struct texture2d {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
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
    vec<T, 4> __sample(sampler s, float2 coord, int2 offset, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample2d<T>(__texels, __width, __height, __format, s, coord, offset, lod);
    }
    vec<T, 4> sample(sampler s, float2 coord, int2 offset = int2(0)) const {
        return __sample(s, coord, offset, 0.0f);
    }
    vec<T, 4> sample(sampler s, float2 coord, bias b, int2 offset = int2(0)) const {
        return __sample(s, coord, offset, b.__value);
    }
    vec<T, 4> sample(sampler s, float2 coord, level l, int2 offset = int2(0)) const {
        return __sample(s, coord, offset, l.__lod);
    }
    vec<T, 4> sample(sampler s, float2 coord, min_lod_clamp m, int2 offset = int2(0)) const {
        return __sample(s, coord, offset, max(m.__value, 0.0f));
    }
    vec<T, 4> sample(sampler s, float2 coord, gradient2d g, int2 offset = int2(0)) const {
        float2 size = float2(float(__width), float(__height));
        return __sample(s, coord, offset,
                          __sampler_gradient_lod(g.__dx, g.__dy, size, s.__coord));
    }
    vec<T, 4> gather(sampler s, float2 coord, int2 offset = int2(0),
                     component c = component::x) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather2d<T>(__texels, __width, __height, __format, s, coord, offset, uint(c));
    }
    METALSIM_TEXTURE_ATOMICS(__index(coord, 0), uint2 coord)
    void fence() const {}
};

// A 2D texture array: slice `i` is depth slice `i` of the texels (`__depth` is the array
// size).
template <typename T, access A = access::sample>
struct texture2d_array {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_array_size() const { return __depth; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint array, uint lod) const {
        return c.x < __width && c.y < __height && array < __depth && lod == 0
                   ? (array * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    vec<T, 4> read(uint2 coord, uint array, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, array, lod)];
    }
    void write(vec<T, 4> color, uint2 coord, uint array, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, array, lod)] = color;
    }
    vec<T, 4> read(ushort2 coord, ushort array, ushort lod = 0) const {
        return read(uint2(coord), uint(array), uint(lod));
    }
    void write(vec<T, 4> color, ushort2 coord, ushort array, ushort lod = 0) const {
        write(color, uint2(coord), uint(array), uint(lod));
    }
    vec<T, 4> __sample(sampler s, float2 coord, uint array, int2 offset, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        device vec<T, 4>* slice =
            __texels + __sampler_layer(array, __depth) * (__width * __height);
        return __sample2d<T>(slice, __width, __height, __format, s, coord, offset, lod);
    }
    vec<T, 4> sample(sampler s, float2 coord, uint array, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, 0.0f);
    }
    vec<T, 4> sample(sampler s, float2 coord, uint array, bias b, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, b.__value);
    }
    vec<T, 4> sample(sampler s, float2 coord, uint array, level l, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, l.__lod);
    }
    vec<T, 4> sample(sampler s, float2 coord, uint array, min_lod_clamp m, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, max(m.__value, 0.0f));
    }
    vec<T, 4> sample(sampler s, float2 coord, uint array, gradient2d g, int2 offset = int2(0)) const {
        float2 size = float2(float(__width), float(__height));
        return __sample(s, coord, array, offset,
                          __sampler_gradient_lod(g.__dx, g.__dy, size, s.__coord));
    }
    vec<T, 4> gather(sampler s, float2 coord, uint array, int2 offset = int2(0),
                     component c = component::x) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        device vec<T, 4>* slice =
            __texels + __sampler_layer(array, __depth) * (__width * __height);
        return __gather2d<T>(slice, __width, __height, __format, s, coord, offset, uint(c));
    }
    METALSIM_TEXTURE_ATOMICS(__index(coord, array, 0), uint2 coord, uint array)
    void fence() const {}
};

template <typename T, access A = access::sample>
struct texture3d {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
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
    vec<T, 4> __sample(sampler s, float3 coord, int3 offset, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        uint3 size = uint3(__width, __height, __depth);
        return __sample3d<T>(__texels, size, __format, s, coord, offset, lod);
    }
    vec<T, 4> sample(sampler s, float3 coord, int3 offset = int3(0)) const {
        return __sample(s, coord, offset, 0.0f);
    }
    vec<T, 4> sample(sampler s, float3 coord, bias b, int3 offset = int3(0)) const {
        return __sample(s, coord, offset, b.__value);
    }
    vec<T, 4> sample(sampler s, float3 coord, level l, int3 offset = int3(0)) const {
        return __sample(s, coord, offset, l.__lod);
    }
    vec<T, 4> sample(sampler s, float3 coord, min_lod_clamp m, int3 offset = int3(0)) const {
        return __sample(s, coord, offset, max(m.__value, 0.0f));
    }
    vec<T, 4> sample(sampler s, float3 coord, gradient3d g, int3 offset = int3(0)) const {
        float3 size = float3(float(__width), float(__height), float(__depth));
        return __sample(s, coord, offset,
                          __sampler_gradient_lod(g.__dx, g.__dy, size, s.__coord));
    }
    METALSIM_TEXTURE_ATOMICS(__index(coord, 0), uint3 coord)
    void fence() const {}
};

// Whether a depth comparison passes: `ref` against the texel's depth `d` by the sampler's
// compare_func (none, less, less_equal, greater, greater_equal, equal, not_equal, always,
// never), as Metal's compare functions test a new value against a stored one.
inline bool __sampler_compare(uint func, float ref, float d) {
    switch (func) {
    case 1: return ref < d;
    case 2: return ref <= d;
    case 3: return ref > d;
    case 4: return ref >= d;
    case 5: return ref == d;
    case 6: return ref != d;
    case 7: return true;
    default: return false;
    }
}

// `sample_compare` (percentage-closer filtering): each tap's comparison gives 1 or 0, and
// those are filtered as `sample` filters texels.
inline float __sample_compare2d(device float4* texels, uint w_, uint h_, uint format, sampler s,
                                float2 coord, float ref, int2 offset, float lod) {
    int w = int(w_);
    int h = int(h_);
    float2 u = float2(__sampler_unnormalize(coord.x, w_, s.__coord),
                      __sampler_unnormalize(coord.y, h_, s.__coord));
    if (!__sampler_linear<float>(s, lod)) {
        int2 x = __sampler_wrap(int(floor(u.x)) + offset.x, w, s.__s_address);
        int2 y = __sampler_wrap(int(floor(u.y)) + offset.y, h, s.__t_address);
        float d = __sampler_tap<float>(s, max(x.y, y.y), texels[y.x * w + x.x], format).x;
        return __sampler_compare(s.__compare_func, ref, d) ? 1.0f : 0.0f;
    }
    u -= 0.5f;
    float2 f = floor(u);
    float2 a = u - f;
    int2 i = int2(f) + offset;
    int2 x0 = __sampler_wrap(i.x, w, s.__s_address);
    int2 x1 = __sampler_wrap(i.x + 1, w, s.__s_address);
    int2 y0 = __sampler_wrap(i.y, h, s.__t_address);
    int2 y1 = __sampler_wrap(i.y + 1, h, s.__t_address);
    float d00 = __sampler_tap<float>(s, max(x0.y, y0.y), texels[y0.x * w + x0.x], format).x;
    float d10 = __sampler_tap<float>(s, max(x1.y, y0.y), texels[y0.x * w + x1.x], format).x;
    float d01 = __sampler_tap<float>(s, max(x0.y, y1.y), texels[y1.x * w + x0.x], format).x;
    float d11 = __sampler_tap<float>(s, max(x1.y, y1.y), texels[y1.x * w + x1.x], format).x;
    float c00 = __sampler_compare(s.__compare_func, ref, d00) ? 1.0f : 0.0f;
    float c10 = __sampler_compare(s.__compare_func, ref, d10) ? 1.0f : 0.0f;
    float c01 = __sampler_compare(s.__compare_func, ref, d01) ? 1.0f : 0.0f;
    float c11 = __sampler_compare(s.__compare_func, ref, d11) ? 1.0f : 0.0f;
    return (1.0f - a.y) * ((1.0f - a.x) * c00 + a.x * c10)
           + a.y * ((1.0f - a.x) * c01 + a.x * c11);
}

// `gather_compare`: the comparisons of `gather`'s four depths with `ref` (1 passes, 0 fails),
// in its order.
inline float4 __gather_compare2d(device float4* texels, uint w, uint h, uint format, sampler s,
                                 float2 coord, float ref, int2 offset) {
    float4 d = __gather2d<float>(texels, w, h, format, s, coord, offset, 0);
    uint f = s.__compare_func;
    return float4(__sampler_compare(f, ref, d.x) ? 1.0f : 0.0f,
                  __sampler_compare(f, ref, d.y) ? 1.0f : 0.0f,
                  __sampler_compare(f, ref, d.z) ? 1.0f : 0.0f,
                  __sampler_compare(f, ref, d.w) ? 1.0f : 0.0f);
}

// `sample_compare` on the depth cube whose six faces start at `faces`.
inline float __sample_compare_cube(device float4* faces, uint size, uint format, sampler s,
                                   float3 dir, float ref, float lod) {
    uint face = __cube_face(dir);
    return __sample_compare2d(faces + face * size * size, size, size, format, __cube_sampler(s),
                              __cube_coord(dir, face), ref, int2(0), lod);
}

// `gather_compare` on the depth cube whose six faces start at `faces`.
inline float4 __gather_compare_cube(device float4* faces, uint size, uint format, sampler s,
                                    float3 dir, float ref) {
    uint face = __cube_face(dir);
    return __gather_compare2d(faces + face * size * size, size, size, format, __cube_sampler(s),
                              __cube_coord(dir, face), ref, int2(0));
}

// A 2D depth texture: depth in the first channel of each texel (MSL spec 5.10.9).
template <typename T, access A = access::sample>
struct depth2d {
    static_assert(is_same_v<T, float>, "a depth texture's type is float");
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint lod) const {
        return c.x < __width && c.y < __height && lod == 0 ? c.y * __width + c.x
                                                           : __width * __height;
    }
    T read(uint2 coord, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, lod)].x;
    }
    T read(ushort2 coord, ushort lod = 0) const { return read(uint2(coord), uint(lod)); }
    void write(T depth, uint2 coord, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, lod)] = vec<T, 4>(depth, 0, 0, 1);
    }
    void write(T depth, ushort2 coord, ushort lod = 0) const {
        write(depth, uint2(coord), uint(lod));
    }
    T sample(sampler s, float2 coord, int2 offset = int2(0)) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample2d<T>(__texels, __width, __height, __format, s, coord, offset, 0.0f).x;
    }
    T sample(sampler s, float2 coord, level l, int2 offset = int2(0)) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample2d<T>(__texels, __width, __height, __format, s, coord, offset, l.__lod).x;
    }
    T sample_compare(sampler s, float2 coord, float compare_value, int2 offset = int2(0)) const {
        static_assert(A == access::sample,
                      "sample_compare() needs a texture with access::sample");
        return __sample_compare2d(__texels, __width, __height, __format, s, coord, compare_value,
                                  offset, 0.0f);
    }
    T sample_compare(sampler s, float2 coord, float compare_value, level l,
                     int2 offset = int2(0)) const {
        static_assert(A == access::sample,
                      "sample_compare() needs a texture with access::sample");
        return __sample_compare2d(__texels, __width, __height, __format, s, coord, compare_value,
                                  offset, l.__lod);
    }
    vec<T, 4> gather(sampler s, float2 coord, int2 offset = int2(0)) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather2d<T>(__texels, __width, __height, __format, s, coord, offset, 0);
    }
    vec<T, 4> gather_compare(sampler s, float2 coord, float compare_value,
                             int2 offset = int2(0)) const {
        static_assert(A == access::sample,
                      "gather_compare() needs a texture with access::sample");
        return __gather_compare2d(__texels, __width, __height, __format, s, coord,
                                  compare_value, offset);
    }
    void fence() const {}
};

// A cube texture: face f is slice f of the texels (`__depth` is 6).
template <typename T, access A = access::sample>
struct texturecube {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint face, uint lod) const {
        return c.x < __width && c.y < __height && face < 6 && lod == 0
                   ? (face * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    vec<T, 4> read(uint2 coord, uint face, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, face, lod)];
    }
    void write(vec<T, 4> color, uint2 coord, uint face, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, face, lod)] = color;
    }
    vec<T, 4> read(ushort2 coord, ushort face, ushort lod = 0) const {
        return read(uint2(coord), uint(face), uint(lod));
    }
    void write(vec<T, 4> color, ushort2 coord, ushort face, ushort lod = 0) const {
        write(color, uint2(coord), uint(face), uint(lod));
    }
    vec<T, 4> __sample(sampler s, float3 coord, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample_cube<T>(__texels, __width, __format, s, coord, lod);
    }
    vec<T, 4> sample(sampler s, float3 coord) const { return __sample(s, coord, 0.0f); }
    vec<T, 4> sample(sampler s, float3 coord, bias b) const {
        return __sample(s, coord, b.__value);
    }
    vec<T, 4> sample(sampler s, float3 coord, level l) const { return __sample(s, coord, l.__lod); }
    vec<T, 4> sample(sampler s, float3 coord, gradientcube g) const {
        return __sample(s, coord, __cube_gradient_lod(coord, g.__dx, g.__dy, __width));
    }
    vec<T, 4> gather(sampler s, float3 coord, component c = component::x) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather_cube<T>(__texels, __width, __format, s, coord, uint(c));
    }
    void fence() const {}
};

// A cube texture array: face f of element a is slice 6a + f (`__depth` is 6 x the array
// size).
template <typename T, access A = access::sample>
struct texturecube_array {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_array_size() const { return __depth / 6; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint face, uint array, uint lod) const {
        return c.x < __width && c.y < __height && face < 6 && array < __depth / 6 && lod == 0
                   ? ((array * 6 + face) * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    device vec<T, 4>* __faces(uint array) const {
        return __texels + __sampler_layer(array, __depth / 6) * 6 * (__width * __height);
    }
    vec<T, 4> read(uint2 coord, uint face, uint array, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, face, array, lod)];
    }
    void write(vec<T, 4> color, uint2 coord, uint face, uint array, uint lod = 0) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord, face, array, lod)] = color;
    }
    vec<T, 4> read(ushort2 coord, ushort face, ushort array, ushort lod = 0) const {
        return read(uint2(coord), uint(face), uint(array), uint(lod));
    }
    void write(vec<T, 4> color, ushort2 coord, ushort face, ushort array, ushort lod = 0) const {
        write(color, uint2(coord), uint(face), uint(array), uint(lod));
    }
    vec<T, 4> __sample(sampler s, float3 coord, uint array, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample_cube<T>(__faces(array), __width, __format, s, coord, lod);
    }
    vec<T, 4> sample(sampler s, float3 coord, uint array) const {
        return __sample(s, coord, array, 0.0f);
    }
    vec<T, 4> sample(sampler s, float3 coord, uint array, bias b) const {
        return __sample(s, coord, array, b.__value);
    }
    vec<T, 4> sample(sampler s, float3 coord, uint array, level l) const {
        return __sample(s, coord, array, l.__lod);
    }
    vec<T, 4> sample(sampler s, float3 coord, uint array, gradientcube g) const {
        return __sample(s, coord, array, __cube_gradient_lod(coord, g.__dx, g.__dy, __width));
    }
    vec<T, 4> gather(sampler s, float3 coord, uint array, component c = component::x) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather_cube<T>(__faces(array), __width, __format, s, coord, uint(c));
    }
    void fence() const {}
};

// A 2D depth texture array: slice i is depth slice i of the texels (`__depth` is the array
// size).
template <typename T, access A = access::sample>
struct depth2d_array {
    static_assert(is_same_v<T, float>, "a depth texture's type is float");
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_array_size() const { return __depth; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint array, uint lod) const {
        return c.x < __width && c.y < __height && array < __depth && lod == 0
                   ? (array * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    device vec<T, 4>* __slice(uint array) const {
        return __texels + __sampler_layer(array, __depth) * (__width * __height);
    }
    T read(uint2 coord, uint array, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, array, lod)].x;
    }
    T read(ushort2 coord, ushort array, ushort lod = 0) const {
        return read(uint2(coord), uint(array), uint(lod));
    }
    T __sample(sampler s, float2 coord, uint array, int2 offset, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample2d<T>(__slice(array), __width, __height, __format, s, coord, offset, lod)
            .x;
    }
    T sample(sampler s, float2 coord, uint array, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, 0.0f);
    }
    T sample(sampler s, float2 coord, uint array, bias b, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, b.__value);
    }
    T sample(sampler s, float2 coord, uint array, level l, int2 offset = int2(0)) const {
        return __sample(s, coord, array, offset, l.__lod);
    }
    T sample(sampler s, float2 coord, uint array, gradient2d g, int2 offset = int2(0)) const {
        float2 size = float2(float(__width), float(__height));
        return __sample(s, coord, array, offset,
                        __sampler_gradient_lod(g.__dx, g.__dy, size, s.__coord));
    }
    T __sample_compare(sampler s, float2 coord, uint array, float ref, int2 offset,
                       float lod) const {
        static_assert(A == access::sample,
                      "sample_compare() needs a texture with access::sample");
        return __sample_compare2d(__slice(array), __width, __height, __format, s, coord, ref,
                                  offset, lod);
    }
    T sample_compare(sampler s, float2 coord, uint array, float compare_value,
                     int2 offset = int2(0)) const {
        return __sample_compare(s, coord, array, compare_value, offset, 0.0f);
    }
    T sample_compare(sampler s, float2 coord, uint array, float compare_value, level l,
                     int2 offset = int2(0)) const {
        return __sample_compare(s, coord, array, compare_value, offset, l.__lod);
    }
    T sample_compare(sampler s, float2 coord, uint array, float compare_value, bias b,
                     int2 offset = int2(0)) const {
        return __sample_compare(s, coord, array, compare_value, offset, b.__value);
    }
    vec<T, 4> gather(sampler s, float2 coord, uint array, int2 offset = int2(0)) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather2d<T>(__slice(array), __width, __height, __format, s, coord, offset, 0);
    }
    vec<T, 4> gather_compare(sampler s, float2 coord, uint array, float compare_value,
                             int2 offset = int2(0)) const {
        static_assert(A == access::sample,
                      "gather_compare() needs a texture with access::sample");
        return __gather_compare2d(__slice(array), __width, __height, __format, s, coord,
                                  compare_value, offset);
    }
    void fence() const {}
};

// A cube depth texture: face f is slice f of the texels (`__depth` is 6).
template <typename T, access A = access::sample>
struct depthcube {
    static_assert(is_same_v<T, float>, "a depth texture's type is float");
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint face, uint lod) const {
        return c.x < __width && c.y < __height && face < 6 && lod == 0
                   ? (face * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    T read(uint2 coord, uint face, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, face, lod)].x;
    }
    T read(ushort2 coord, ushort face, ushort lod = 0) const {
        return read(uint2(coord), uint(face), uint(lod));
    }
    T __sample(sampler s, float3 coord, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample_cube<T>(__texels, __width, __format, s, coord, lod).x;
    }
    T sample(sampler s, float3 coord) const { return __sample(s, coord, 0.0f); }
    T sample(sampler s, float3 coord, bias b) const { return __sample(s, coord, b.__value); }
    T sample(sampler s, float3 coord, level l) const { return __sample(s, coord, l.__lod); }
    T sample(sampler s, float3 coord, gradientcube g) const {
        return __sample(s, coord, __cube_gradient_lod(coord, g.__dx, g.__dy, __width));
    }
    T __sample_compare(sampler s, float3 coord, float ref, float lod) const {
        static_assert(A == access::sample,
                      "sample_compare() needs a texture with access::sample");
        return __sample_compare_cube(__texels, __width, __format, s, coord, ref, lod);
    }
    T sample_compare(sampler s, float3 coord, float compare_value) const {
        return __sample_compare(s, coord, compare_value, 0.0f);
    }
    T sample_compare(sampler s, float3 coord, float compare_value, level l) const {
        return __sample_compare(s, coord, compare_value, l.__lod);
    }
    T sample_compare(sampler s, float3 coord, float compare_value, bias b) const {
        return __sample_compare(s, coord, compare_value, b.__value);
    }
    vec<T, 4> gather(sampler s, float3 coord) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather_cube<T>(__texels, __width, __format, s, coord, 0);
    }
    vec<T, 4> gather_compare(sampler s, float3 coord, float compare_value) const {
        static_assert(A == access::sample,
                      "gather_compare() needs a texture with access::sample");
        return __gather_compare_cube(__texels, __width, __format, s, coord, compare_value);
    }
    void fence() const {}
};

// A cube depth texture array: face f of element a is slice 6a + f (`__depth` is 6 x the
// array size).
template <typename T, access A = access::sample>
struct depthcube_array {
    static_assert(is_same_v<T, float>, "a depth texture's type is float");
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width(uint lod = 0) const { return __width; }
    uint get_height(uint lod = 0) const { return __height; }
    uint get_array_size() const { return __depth / 6; }
    uint get_num_mip_levels() const { return 1; }
    uint __index(uint2 c, uint face, uint array, uint lod) const {
        return c.x < __width && c.y < __height && face < 6 && array < __depth / 6 && lod == 0
                   ? ((array * 6 + face) * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    device vec<T, 4>* __faces(uint array) const {
        return __texels + __sampler_layer(array, __depth / 6) * 6 * (__width * __height);
    }
    T read(uint2 coord, uint face, uint array, uint lod = 0) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord, face, array, lod)].x;
    }
    T read(ushort2 coord, ushort face, ushort array, ushort lod = 0) const {
        return read(uint2(coord), uint(face), uint(array), uint(lod));
    }
    T __sample(sampler s, float3 coord, uint array, float lod) const {
        static_assert(A == access::sample, "sample() needs a texture with access::sample");
        return __sample_cube<T>(__faces(array), __width, __format, s, coord, lod).x;
    }
    T sample(sampler s, float3 coord, uint array) const {
        return __sample(s, coord, array, 0.0f);
    }
    T sample(sampler s, float3 coord, uint array, bias b) const {
        return __sample(s, coord, array, b.__value);
    }
    T sample(sampler s, float3 coord, uint array, level l) const {
        return __sample(s, coord, array, l.__lod);
    }
    T sample(sampler s, float3 coord, uint array, gradientcube g) const {
        return __sample(s, coord, array, __cube_gradient_lod(coord, g.__dx, g.__dy, __width));
    }
    T __sample_compare(sampler s, float3 coord, uint array, float ref, float lod) const {
        static_assert(A == access::sample,
                      "sample_compare() needs a texture with access::sample");
        return __sample_compare_cube(__faces(array), __width, __format, s, coord, ref, lod);
    }
    T sample_compare(sampler s, float3 coord, uint array, float compare_value) const {
        return __sample_compare(s, coord, array, compare_value, 0.0f);
    }
    T sample_compare(sampler s, float3 coord, uint array, float compare_value, level l) const {
        return __sample_compare(s, coord, array, compare_value, l.__lod);
    }
    T sample_compare(sampler s, float3 coord, uint array, float compare_value, bias b) const {
        return __sample_compare(s, coord, array, compare_value, b.__value);
    }
    vec<T, 4> gather(sampler s, float3 coord, uint array) const {
        static_assert(A == access::sample, "gather() needs a texture with access::sample");
        return __gather_cube<T>(__faces(array), __width, __format, s, coord, 0);
    }
    vec<T, 4> gather_compare(sampler s, float3 coord, uint array, float compare_value) const {
        static_assert(A == access::sample,
                      "gather_compare() needs a texture with access::sample");
        return __gather_compare_cube(__faces(array), __width, __format, s, coord, compare_value);
    }
    void fence() const {}
};

// Multisample textures (MSL spec 5.10.8, 5.10.13): sample i of array element a is slice
// a * n + i of the texels, for the n samples the header's format word holds in bits 20 to
// 23 (`__depth` is n x the array size). They are read-only (the lowering refuses other
// access): no `write`, `sample` or `gather`.
template <typename T, access A = access::read>
struct texture2d_ms {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width() const { return __width; }
    uint get_height() const { return __height; }
    uint get_num_samples() const { return (__format >> 20) & 15u; }
    uint __index(uint2 c, uint sample) const {
        return c.x < __width && c.y < __height && sample < __depth
                   ? (sample * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    vec<T, 4> read(uint2 coord, uint sample) const { return __texels[__index(coord, sample)]; }
    vec<T, 4> read(ushort2 coord, ushort sample) const {
        return read(uint2(coord), uint(sample));
    }
};

template <typename T, access A = access::read>
struct texture2d_ms_array {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width() const { return __width; }
    uint get_height() const { return __height; }
    uint get_num_samples() const { return (__format >> 20) & 15u; }
    uint get_array_size() const { return __depth / get_num_samples(); }
    uint __index(uint2 c, uint array, uint sample) const {
        uint n = get_num_samples();
        return c.x < __width && c.y < __height && sample < n && array < __depth / n
                   ? ((array * n + sample) * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    vec<T, 4> read(uint2 coord, uint array, uint sample) const {
        return __texels[__index(coord, array, sample)];
    }
    vec<T, 4> read(ushort2 coord, ushort array, ushort sample) const {
        return read(uint2(coord), uint(array), uint(sample));
    }
};

template <typename T, access A = access::read>
struct depth2d_ms {
    static_assert(is_same_v<T, float>, "a depth texture's type is float");
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width() const { return __width; }
    uint get_height() const { return __height; }
    uint get_num_samples() const { return (__format >> 20) & 15u; }
    uint __index(uint2 c, uint sample) const {
        return c.x < __width && c.y < __height && sample < __depth
                   ? (sample * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    T read(uint2 coord, uint sample) const { return __texels[__index(coord, sample)].x; }
    T read(ushort2 coord, ushort sample) const { return read(uint2(coord), uint(sample)); }
};

template <typename T, access A = access::read>
struct depth2d_ms_array {
    static_assert(is_same_v<T, float>, "a depth texture's type is float");
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width() const { return __width; }
    uint get_height() const { return __height; }
    uint get_num_samples() const { return (__format >> 20) & 15u; }
    uint get_array_size() const { return __depth / get_num_samples(); }
    uint __index(uint2 c, uint array, uint sample) const {
        uint n = get_num_samples();
        return c.x < __width && c.y < __height && sample < n && array < __depth / n
                   ? ((array * n + sample) * __height + c.y) * __width + c.x
                   : __width * __height * __depth;
    }
    T read(uint2 coord, uint array, uint sample) const {
        return __texels[__index(coord, array, sample)].x;
    }
    T read(ushort2 coord, ushort array, ushort sample) const {
        return read(uint2(coord), uint(array), uint(sample));
    }
};

// A buffer texture (MSL 2.1): `__width` texels in a row, read and written by index, never
// sampled.
template <typename T, access A = access::read>
struct texture_buffer {
    device vec<T, 4>* __texels;
    uint __width;
    uint __height;
    uint __depth;
    uint __format;
    uint get_width() const { return __width; }
    uint __index(uint x) const { return x < __width ? x : __width; }
    vec<T, 4> read(uint coord) const {
        static_assert(A != access::write, "read() on a texture with access::write");
        return __texels[__index(coord)];
    }
    void write(vec<T, 4> color, uint coord) const {
        static_assert(A == access::write || A == access::read_write,
                      "write() needs a texture with access::write or access::read_write");
        __texels[__index(coord)] = color;
    }
    METALSIM_TEXTURE_ATOMICS(__index(coord), uint coord)
    void fence() const {}
};

// Whether a texture is null (MSL spec 5.10.15): never, since the launch spec must bind
// every `[[texture(n)]]` parameter.
template <typename T, access A> bool is_null_texture(texture1d<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture1d_array<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture2d<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture2d_array<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture3d<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texturecube<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texturecube_array<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture2d_ms<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture2d_ms_array<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(texture_buffer<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(depth2d<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(depth2d_array<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(depthcube<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(depthcube_array<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(depth2d_ms<T, A>) { return false; }
template <typename T, access A> bool is_null_texture(depth2d_ms_array<T, A>) { return false; }

} // namespace metal
