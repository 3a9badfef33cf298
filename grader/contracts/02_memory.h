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

}  // namespace ch02
