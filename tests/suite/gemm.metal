// A tiled GEMM in the style of MLX's steel kernels: C = A * B (row-major), with
// threadgroup tiles filled by a templated loader struct, SIMD-group 8x8 matrix
// multiply-accumulate, and a templated kernel instantiated per type and tile shape.
#include <metal_stdlib>
using namespace metal;

#define GEMM_CONST static constant constexpr const
#define GEMM_UNROLL _Pragma("clang loop unroll(full)")

struct GemmParams {
    int M;
    int N;
    int K;
};

namespace gemm {

// Copies a ROWS x COLS tile of a row-major matrix (leading dimension `ld`) into
// threadgroup memory; each thread moves `n_reads` consecutive elements of one row.
template <typename T, short ROWS, short COLS, short TGP_SIZE,
          short n_reads = (ROWS * COLS) / TGP_SIZE,
          short TCOLS = COLS / n_reads,
          short TROWS = TGP_SIZE / TCOLS>
struct TileLoader {
    GEMM_CONST short n_rows = (ROWS + TROWS - 1) / TROWS;

    const int ld;
    const short bi;
    const short bj;
    threadgroup T* dst;
    const device T* src;

    METAL_FUNC TileLoader(const device T* src_, int ld_, threadgroup T* dst_, ushort tid)
        : ld(ld_),
          bi(tid / TCOLS),
          bj(n_reads * (tid % TCOLS)),
          dst(dst_ + bi * COLS + bj),
          src(src_ + bi * ld_ + bj) {}

    // Loads the tile; elements outside `rows` x `cols` read as zero.
    METAL_FUNC void load_safe(short rows, short cols) const {
        GEMM_UNROLL
        for (short i = 0; i < ROWS; i += TROWS) {
            GEMM_UNROLL
            for (short j = 0; j < n_reads; j++) {
                const bool inside = (bi + i) < rows && (bj + j) < cols;
                dst[i * COLS + j] = inside ? src[i * ld + j] : T(0);
            }
        }
    }

    // Moves to the next tile along a row (`cols` elements to the right).
    METAL_FUNC void next_cols(int cols) { src += cols; }

    // Moves to the next tile down (`rows` rows below).
    METAL_FUNC void next_rows(int rows) { src += rows * ld; }
};

// One SIMD-group's share of the output tile: TM x TN fragments of 8x8.
template <typename T, short TM, short TN>
struct Accumulator {
    simdgroup_matrix<float, 8, 8> frags[TM][TN];

    METAL_FUNC Accumulator() {
        GEMM_UNROLL
        for (short i = 0; i < TM; i++) {
            GEMM_UNROLL
            for (short j = 0; j < TN; j++) {
                frags[i][j] = make_filled_simdgroup_matrix<float, 8, 8>(0.0f);
            }
        }
    }

    // Multiplies the A rows starting at `as` (leading dimension lda) by the B columns
    // starting at `bs` (leading dimension ldb) over an 8-deep slice.
    METAL_FUNC void mma(const threadgroup T* as, short lda, const threadgroup T* bs, short ldb) {
        simdgroup_matrix<T, 8, 8> a[TM];
        simdgroup_matrix<T, 8, 8> b[TN];
        GEMM_UNROLL
        for (short i = 0; i < TM; i++) {
            simdgroup_load(a[i], as + i * 8 * lda, lda);
        }
        GEMM_UNROLL
        for (short j = 0; j < TN; j++) {
            simdgroup_load(b[j], bs + j * 8, ldb);
        }
        GEMM_UNROLL
        for (short i = 0; i < TM; i++) {
            GEMM_UNROLL
            for (short j = 0; j < TN; j++) {
                simdgroup_multiply_accumulate(frags[i][j], a[i], b[j], frags[i][j]);
            }
        }
    }

    // Writes the fragments to C (leading dimension ldc), skipping elements outside
    // `rows` x `cols`: each lane writes its own two elements.
    METAL_FUNC void store_safe(device T* c, int ldc, short rows, short cols, ushort lane) const {
        const ushort qid = lane / 4;
        const short sm = (qid & 4) + (lane / 2) % 4;
        const short sn = (qid & 2) * 2 + (lane % 2) * 2;
        GEMM_UNROLL
        for (short i = 0; i < TM; i++) {
            GEMM_UNROLL
            for (short j = 0; j < TN; j++) {
                thread simdgroup_matrix<float, 8, 8> frag = frags[i][j];
                const auto elems = frag.thread_elements();
                const short r = i * 8 + sm;
                const short col = j * 8 + sn;
                if (r < rows && col < cols) {
                    c[r * ldc + col] = static_cast<T>(elems[0]);
                }
                if (r < rows && col + 1 < cols) {
                    c[r * ldc + col + 1] = static_cast<T>(elems[1]);
                }
            }
        }
    }
};

} // namespace gemm

template <typename T, int BM, int BN, int BK, int WM, int WN>
[[kernel, max_total_threads_per_threadgroup(WM * WN * 32)]] void tiled_gemm(
    const device T* A [[buffer(0)]],
    const device T* B [[buffer(1)]],
    device T* C [[buffer(2)]],
    constant GemmParams& params [[buffer(3)]],
    uint3 tid [[threadgroup_position_in_grid]],
    ushort lid [[thread_index_in_threadgroup]],
    ushort simd_group [[simdgroup_index_in_threadgroup]],
    ushort simd_lane [[thread_index_in_simdgroup]]) {
    static_assert(BM % (WM * 8) == 0 && BN % (WN * 8) == 0, "tiles split into 8x8 fragments");
    constexpr short TGP_SIZE = WM * WN * 32;
    constexpr short TM = BM / (WM * 8);
    constexpr short TN = BN / (WN * 8);
    using LoaderA = gemm::TileLoader<T, BM, BK, TGP_SIZE>;
    using LoaderB = gemm::TileLoader<T, BK, BN, TGP_SIZE>;

    threadgroup T As[BM * BK];
    threadgroup T Bs[BK * BN];

    const int row0 = tid.y * BM;
    const int col0 = tid.x * BN;
    LoaderA loader_a(A + row0 * params.K, params.K, As, lid);
    LoaderB loader_b(B + col0, params.N, Bs, lid);

    // This SIMD-group's corner of the output tile.
    const short sg_row = (simd_group / WN) * TM * 8;
    const short sg_col = (simd_group % WN) * TN * 8;
    gemm::Accumulator<T, TM, TN> acc;

    const short rows_left = min(BM, params.M - row0);
    const short cols_left = min(BN, params.N - col0);
    for (int k0 = 0; k0 < params.K; k0 += BK) {
        const short k_left = min(BK, params.K - k0);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        loader_a.load_safe(rows_left, k_left);
        loader_b.load_safe(k_left, cols_left);
        threadgroup_barrier(mem_flags::mem_threadgroup);
        GEMM_UNROLL
        for (short kk = 0; kk < BK; kk += 8) {
            acc.mma(As + sg_row * BK + kk, BK, Bs + kk * BN + sg_col, BN);
        }
        loader_a.next_cols(BK);
        loader_b.next_rows(BK);
    }
    acc.store_safe(C + (row0 + sg_row) * params.N + col0 + sg_col, params.N,
                   rows_left - sg_row, cols_left - sg_col, simd_lane);
}

#define instantiate_gemm(tname, type, bm, bn, bk, wm, wn)                                 \
    template [[host_name("gemm_" #tname "_" #bm "x" #bn)]] [[kernel]]                     \
    decltype(tiled_gemm<type, bm, bn, bk, wm, wn>) tiled_gemm<type, bm, bn, bk, wm, wn>;

instantiate_gemm(float32, float, 32, 32, 16, 2, 2)
instantiate_gemm(float16, half, 32, 32, 16, 2, 2)
instantiate_gemm(float32, float, 16, 16, 8, 1, 1)
