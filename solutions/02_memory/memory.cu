// Chapter 02: memory spaces. Reference solution.
//
// Read notes/02_memory.md first. The exercises, in the order of the notes:
//   1. pitched 2D memory: a kernel that walks rows by the pitch, and the round trip through it
//   2. constant memory and symbols: a filter whose coefficients live in __constant__ memory
//   3. coalescing and bank conflicts: a matrix transpose, naive, tiled, and tiled with padding
//   4. a tiled matrix multiply
//   5. register pressure: __launch_bounds__
//   6. page-locked and mapped (zero-copy) memory
//   7. unified memory, prefetched
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

// ---- Exercise 4: a tiled matrix multiply ----------------------------------------------------------
__global__ void matmul_naive_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= m || col >= n) return;
    float sum = 0;
    for (int q = 0; q < k; ++q) sum += a[size_t(row) * k + q] * b[size_t(q) * n + col];
    c[size_t(row) * n + col] = sum;
}

void matmul_naive(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
    const dim3 block(16, 16);
    const dim3 grid((n + block.x - 1) / block.x, (m + block.y - 1) / block.y);
    matmul_naive_kernel<<<grid, block, 0, stream>>>(a, b, c, m, n, k);
    CHECK(cudaGetLastError());
}

// A block computes a 32 x 32 tile of c with 32 x 8 threads, 4 elements each (rows ty, ty + 8, ty + 16,
// ty + 24 of the tile): every value of b's tile read from shared memory serves 4 products.
constexpr int kMmTile = 32;
constexpr int kMmRows = 8;

__global__ void matmul_tiled_kernel(const float* a, const float* b, float* c, int m, int n, int k) {
    __shared__ float a_tile[kMmTile][kMmTile];
    __shared__ float b_tile[kMmTile][kMmTile];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int col = blockIdx.x * kMmTile + tx;
    const int row0 = blockIdx.y * kMmTile + ty;
    float sum[kMmTile / kMmRows] = {};
    for (int t = 0; t < k; t += kMmTile) {
        // Outside the matrices a tile holds zeros, which add nothing.
        for (int j = 0; j < kMmTile; j += kMmRows) {
            const int a_row = row0 + j, a_col = t + tx, b_row = t + ty + j;
            a_tile[ty + j][tx] = a_row < m && a_col < k ? a[size_t(a_row) * k + a_col] : 0.0f;
            b_tile[ty + j][tx] = b_row < k && col < n ? b[size_t(b_row) * n + col] : 0.0f;
        }
        __syncthreads();
        for (int q = 0; q < kMmTile; ++q) {
            const float b_value = b_tile[q][tx];  // a warp reads a row of the tile: 32 banks
#pragma unroll
            for (int j = 0; j < kMmTile / kMmRows; ++j) sum[j] += a_tile[ty + j * kMmRows][q] * b_value;  // a broadcast
        }
        __syncthreads();  // before the next tiles overwrite these
    }
#pragma unroll
    for (int j = 0; j < kMmTile / kMmRows; ++j) {
        const int row = row0 + j * kMmRows;
        if (row < m && col < n) c[size_t(row) * n + col] = sum[j];
    }
}

void matmul_tiled(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
    const dim3 grid((n + kMmTile - 1) / kMmTile, (m + kMmTile - 1) / kMmTile);
    matmul_tiled_kernel<<<grid, dim3(kMmTile, kMmRows), 0, stream>>>(a, b, c, m, n, k);
    CHECK(cudaGetLastError());
}

// ---- Exercise 5: register pressure ------------------------------------------------------------------
// Bounded by (256, 1), the compiler spends registers freely to keep many loads in flight: 134 a
// thread, one block of 256 per SM. The second bound asks for 4 blocks per SM: at most 64 registers,
// which the compiler meets without spilling (nvcc -Xptxas -v shows both).
__global__ void __launch_bounds__(kHeavyThreads, 4) heavy_kernel_impl(const float4* in, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 values[kHeavyValues];
#pragma unroll
    for (int v = 0; v < kHeavyValues; ++v) values[v] = in[size_t(v) * n + i];
    float sum = 0;
#pragma unroll
    for (int v = 0; v < kHeavyValues; ++v) {
        const float4 x = values[v];
        sum += ((x.x * 0.5f + x.y) * x.z + x.w) * float(v + 1);
    }
    out[i] = sum;
}

void launch_heavy(const float4* in, float* out, int n, cudaStream_t stream) {
    heavy_kernel_impl<<<(n + kHeavyThreads - 1) / kHeavyThreads, kHeavyThreads, 0, stream>>>(in, out, n);
    CHECK(cudaGetLastError());
}

const void* heavy_kernel() { return reinterpret_cast<const void*>(heavy_kernel_impl); }

// ---- Exercise 6: page-locked and mapped memory ----------------------------------------------------
void* allocate_pinned(size_t bytes) {
    void* host = nullptr;
    CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped));
    return host;
}

void free_pinned(void* host) { CHECK(cudaFreeHost(host)); }

// Each read crosses PCIe: read 16 bytes at a time, each byte once, and keep many reads in flight.
__global__ void sum_mapped_kernel(const int* values, size_t n, unsigned long long* total) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    const size_t first = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    const int4* quads = reinterpret_cast<const int4*>(values);
    unsigned long long sum = 0;
    for (size_t i = first; i < n / 4; i += stride) {
        const int4 q = quads[i];
        sum += static_cast<unsigned long long>(static_cast<long long>(q.x) + q.y + q.z + q.w);
    }
    for (size_t i = n / 4 * 4 + first; i < n; i += stride) sum += static_cast<unsigned long long>(static_cast<long long>(values[i]));
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x % 32 == 0) atomicAdd(total, sum);
}

void sum_mapped(const int* host, size_t n, unsigned long long* total, cudaStream_t stream) {
    int* device_view = nullptr;  // the same memory, as the GPU addresses it
    CHECK(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device_view), const_cast<int*>(host), 0));
    int device = 0, sms = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    sum_mapped_kernel<<<sms * 4, 256, 0, stream>>>(device_view, n, total);
    CHECK(cudaGetLastError());
}

// ---- Exercise 7: unified memory ---------------------------------------------------------------------
__global__ void scale_kernel(float* data, size_t n, float factor) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += stride) data[i] *= factor;
}

void scale_managed(float* data, size_t n, float factor, cudaStream_t stream) {
    int device = 0, sms = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    // Without it, the kernel's first touch of each page faults, and the pages move one fault at a time.
    cudaMemLocation gpu{};
    gpu.type = cudaMemLocationTypeDevice;
    gpu.id = device;
#if CUDART_VERSION >= 13000
    CHECK(cudaMemPrefetchAsync(data, n * sizeof(float), gpu, 0, stream));
#else
    CHECK(cudaMemPrefetchAsync_v2(data, n * sizeof(float), gpu, 0, stream));  // its name in CUDA 12.2-12.9
#endif
    scale_kernel<<<sms * 8, 256, 0, stream>>>(data, n, factor);
    CHECK(cudaGetLastError());
}

}  // namespace ch02
