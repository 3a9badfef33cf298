// Chapter 02: memory spaces. Reference solution.
//
// Read notes/02_memory.md first. The exercises, in the order of the notes:
//   1. pitched 2D memory: a kernel that walks rows by the pitch, and the round trip through it
//   2. constant memory and symbols: a filter whose coefficients live in __constant__ memory
//   3. coalescing and bank conflicts: a matrix transpose, naive, tiled, and tiled with padding
#include "02_memory.h"
#include "check.h"

namespace ch02 {

// ---- Exercise 1: pitched 2D memory --------------------------------------------------------------
__global__ void brighten_kernel(float* image, size_t pitch, int width, int height, float delta) {
    const int x = blockIdx.x * blockDim.x + threadIdx.x;
    const int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    // A row starts `pitch` bytes after the previous one: step in bytes, then index in floats.
    float* row = reinterpret_cast<float*>(reinterpret_cast<char*>(image) + y * pitch);
    row[x] += delta;
}

void brighten_pitched(float* image, size_t pitch, int width, int height, float delta, cudaStream_t stream) {
    const dim3 block(32, 8);
    const dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    brighten_kernel<<<grid, block, 0, stream>>>(image, pitch, width, height, delta);
    CHECK(cudaGetLastError());
}

size_t brighten_round_trip(const float* host_in, float* host_out, int width, int height, float delta) {
    const size_t row_bytes = size_t(width) * sizeof(float);
    float* image = nullptr;
    size_t pitch = 0;
    CHECK(cudaMallocPitch(reinterpret_cast<void**>(&image), &pitch, row_bytes, height));
    CHECK(cudaMemcpy2D(image, pitch, host_in, row_bytes, row_bytes, height, cudaMemcpyHostToDevice));
    brighten_pitched(image, pitch, width, height, delta, 0);
    CHECK(cudaMemcpy2D(host_out, row_bytes, image, pitch, row_bytes, height, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(image));
    return pitch;
}

// ---- Exercise 2: constant memory and symbols ----------------------------------------------------
// Every thread of a warp reads the same coefficient at the same time: the constant cache
// broadcasts it in one transaction.
__constant__ float filter_coefficients[kTaps];
__device__ unsigned outputs_above;

__global__ void filter_kernel_impl(const float* in, float* out, int n, float threshold) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    bool above = false;
    if (i < n) {
        float sum = 0;
        for (int k = 0; k < kTaps; ++k) {
            const int j = i + k - kTaps / 2;
            if (j >= 0 && j < n) sum += filter_coefficients[k] * in[j];
        }
        out[i] = sum;
        above = sum > threshold;
    }
    // One atomic per warp instead of one per output.
    const unsigned votes = __ballot_sync(0xffffffffu, above);
    if (threadIdx.x % 32 == 0 && votes != 0) atomicAdd(&outputs_above, __popc(votes));
}

void set_filter(const float* coefficients) {
    CHECK(cudaMemcpyToSymbol(filter_coefficients, coefficients, kTaps * sizeof(float)));
}

void filter(const float* in, float* out, int n, float threshold, cudaStream_t stream) {
    const int threads = 256;
    filter_kernel_impl<<<(n + threads - 1) / threads, threads, 0, stream>>>(in, out, n, threshold);
    CHECK(cudaGetLastError());
}

void reset_count() {
    const unsigned zero = 0;
    CHECK(cudaMemcpyToSymbol(outputs_above, &zero, sizeof(zero)));
}

unsigned read_count() {
    CHECK(cudaDeviceSynchronize());  // the filter may run on a stream that does not wait for this copy
    unsigned count = 0;
    CHECK(cudaMemcpyFromSymbol(&count, outputs_above, sizeof(count)));
    return count;
}

const void* filter_kernel() { return reinterpret_cast<const void*>(filter_kernel_impl); }

// ---- Exercise 3: a matrix transpose ---------------------------------------------------------------
constexpr int kTile = 32;      // a tile is 32 x 32 elements
constexpr int kTileRows = 8;   // a block of 32 x 8 threads; each thread moves 4 elements

// Reads are coalesced (a warp reads 32 neighbours of a row); writes are 32 floats, each in its own
// row of `out`: 32 separate 32-byte sectors for 128 useful bytes.
__global__ void transpose_naive_kernel(const float* in, float* out, int rows, int cols) {
    const int c = blockIdx.x * kTile + threadIdx.x;
    const int r0 = blockIdx.y * kTile + threadIdx.y;
    for (int r = r0; r < r0 + kTile && r < rows; r += kTileRows)
        if (c < cols) out[size_t(c) * rows + r] = in[size_t(r) * cols + c];
}

// Stages a tile in shared memory: both the global read and the global write go along rows.
// `Pad` is 0 or 1: the padded tile is 33 floats wide, so the 32 elements of a tile's column fall
// in 32 different banks instead of all in one.
template <int Pad>
__global__ void transpose_tile_kernel(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[kTile][kTile + Pad];
    const int c = blockIdx.x * kTile + threadIdx.x;
    const int r0 = blockIdx.y * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kTileRows)
        if (c < cols && r0 + j < rows) tile[threadIdx.y + j][threadIdx.x] = in[size_t(r0 + j) * cols + c];
    __syncthreads();
    // The block now writes the tile's transpose: out's rows are in's columns.
    const int out_c = blockIdx.y * kTile + threadIdx.x;  // a column of out is a row of in
    const int out_r0 = blockIdx.x * kTile + threadIdx.y;
    for (int j = 0; j < kTile; j += kTileRows)
        if (out_c < rows && out_r0 + j < cols) out[size_t(out_r0 + j) * rows + out_c] = tile[threadIdx.x][threadIdx.y + j];
}

dim3 transpose_grid(int rows, int cols) { return dim3((cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile); }

void transpose_naive(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    transpose_naive_kernel<<<transpose_grid(rows, cols), dim3(kTile, kTileRows), 0, stream>>>(in, out, rows, cols);
    CHECK(cudaGetLastError());
}

void transpose_tiled(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    transpose_tile_kernel<0><<<transpose_grid(rows, cols), dim3(kTile, kTileRows), 0, stream>>>(in, out, rows, cols);
    CHECK(cudaGetLastError());
}

void transpose_padded(const float* in, float* out, int rows, int cols, cudaStream_t stream) {
    transpose_tile_kernel<1><<<transpose_grid(rows, cols), dim3(kTile, kTileRows), 0, stream>>>(in, out, rows, cols);
    CHECK(cudaGetLastError());
}

}  // namespace ch02
