// Chapter 02 (memory spaces): the functions the grader calls. Your memory.cu implements them; do
// not change this file, or the grader will not build against your code.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>

namespace ch02 {

// ---- Exercise 1: pitched 2D memory --------------------------------------------------------------
// Adds `delta` to every pixel of a width x height image of floats whose rows start `pitch` bytes
// apart, on `stream`, returning without waiting. The bytes between the end of a row and the start
// of the next are not the image's: leave them as they are. `pitch` may be larger than the one
// cudaMallocPitch would choose.
void brighten_pitched(float* image, size_t pitch, int width, int height, float delta, cudaStream_t stream);

// The round trip: a pitched device image (cudaMallocPitch), `host_in` (width x height floats, rows
// packed one after the other) copied into it (cudaMemcpy2D), brightened by brighten_pitched, copied
// back into `host_out` (rows packed, cudaMemcpy2D), and the device image freed. Returns the pitch
// cudaMallocPitch gave.
size_t brighten_round_trip(const float* host_in, float* host_out, int width, int height, float delta);

// ---- Exercise 2: constant memory and symbols ----------------------------------------------------
constexpr int kTaps = 9;  // the filter's length; tap kTaps / 2 is the centre

// Copies kTaps coefficients into the __constant__ array the filter reads (cudaMemcpyToSymbol).
void set_filter(const float* coefficients);

// out[i] = sum over k of coefficient[k] * in[i + k - kTaps / 2], where in[j] is 0 outside [0, n),
// for i in [0, n), on `stream`, returning without waiting. The kernel also adds, to a counter in a
// __device__ variable, the number of outputs it wrote that are greater than `threshold`.
void filter(const float* in, float* out, int n, float threshold, cudaStream_t stream);

// Sets the counter to 0 through its symbol (cudaMemcpyToSymbol), and reads it back through its
// symbol (cudaMemcpyFromSymbol) once the device has finished.
void reset_count();
unsigned read_count();

// The filter's kernel, so that the grader can ask the runtime about it (cudaFuncGetAttributes).
const void* filter_kernel();

// ---- Exercise 3: coalescing and bank conflicts: a matrix transpose -------------------------------
// out (cols x rows) = the transpose of in (rows x cols); both row-major floats; on `stream`,
// returning without waiting. out[c * rows + r] = in[r * cols + c].
//
// Straight from global memory to global memory: a warp reads along a row of `in` and writes down a
// column of `out` (strided writes).
void transpose_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream);
// Through a 32 x 32 tile in shared memory: a block reads a tile in rows and writes it in rows.
void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream);
// The same tile with a padding column, so that reading a tile's column hits 32 different banks.
void transpose_padded(const float* in, float* out, int rows, int cols, cudaStream_t stream);

// ---- Exercise 4: a tiled matrix multiply ------------------------------------------------------------
// c (m x n) = a (m x k) times b (k x n); all row-major floats; on `stream`, returning without waiting.
//
// One thread per element of c, reading a and b straight from global memory.
void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream);
// Through tiles of a and of b staged in shared memory (at least 16 x 16 floats each), so that each
// element loaded from global memory is used by a whole row or column of the block's threads.
void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream);

// ---- Exercise 5: register pressure ------------------------------------------------------------------
constexpr int kHeavyValues = 32;  // float4 values each thread of heavy_kernel reads
constexpr int kHeavyThreads = 256;

// out[i] = the sum over v of ((x.x * 0.5 + x.y) * x.z + x.w) * (v + 1), where x = in[v * n + i], for
// v in [0, kHeavyValues) and i in [0, n); blocks of kHeavyThreads threads, on `stream`.
void launch_heavy(const float4* in, float* out, int n, cudaStream_t stream);
// The kernel launch_heavy launches. It must let at least 4 blocks of kHeavyThreads threads stay
// resident on an SM, as cudaOccupancyMaxActiveBlocksPerMultiprocessor reports, without spilling
// registers to local memory (cudaFuncGetAttributes' localSizeBytes is 0).
const void* heavy_kernel();

// ---- Exercise 6: page-locked and mapped memory ----------------------------------------------------
// `bytes` of page-locked host memory that the GPU can also map (cudaHostAlloc with
// cudaHostAllocMapped), and its release.
void* allocate_pinned(size_t bytes);
void free_pinned(void* host);

// Adds up the n ints at `host`, page-locked and mapped memory from allocate_pinned, into *total
// (device memory, 64-bit, wrapping), with a kernel that reads them across the bus itself: no copy.
// On `stream`, returning without waiting. *total must be zero before the call.
void sum_mapped(const int* host, size_t n, unsigned long long* total, cudaStream_t stream);

// ---- Exercise 7: unified memory ---------------------------------------------------------------------
// Multiplies the n floats of `data`, managed memory (cudaMallocManaged) last written by the host, by
// `factor` with a kernel on `stream`, having moved them to the GPU ahead of the kernel
// (cudaMemPrefetchAsync on the same stream), returning without waiting.
void scale_managed(float* data, size_t n, float factor, cudaStream_t stream);

}  // namespace ch02
