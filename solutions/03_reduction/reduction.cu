// Chapter 03: reduction, from the neighbored sum to the hardware's limit. Reference solution.
//
// Read notes/03_reduction.md first. Every step sums the same ints; they differ in how a block
// adds up its share:
//   0. neighbored pairs, picked with tid % (2 * stride)     (given: the baseline)
//   1. neighbored pairs, the thread index remapped           (no divergent modulo)
//   2. interleaved pairs                                     (the stride halves each level)
//   3. four loads per thread before the tree                 (unrolling the data)
//   4. the last warp unrolled, with __syncwarp               (unrolling the tree's tail)
//   5. the whole tree unrolled, the block size a template parameter
//   6. warp shuffles, 16-byte loads, a grid sized to the GPU (beyond the textbook steps)
#include "03_reduction.h"
#include "check.h"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace ch03 {

// Threads per block of steps 0-5. Each block reduces its share to one partial sum.
constexpr unsigned kThreads = 1024;

// ---- Given: the passes ---------------------------------------------------------------------------
// A step's kernel turns n values into one partial sum per block of kThreads threads. Run on the
// partials, and again, it leaves one value: the sum. Each level's partials go into scratch after
// the previous level's. The launch offers every kernel kThreads ints of dynamic shared memory.
template <void (*kKernel)(const int* in, int* partials, unsigned n)>
int reduce_in_passes(const int* in, size_t n, int* scratch, unsigned elements_per_block, cudaStream_t stream) {
    const int* level_in = in;
    int* level_out = scratch;
    unsigned count = static_cast<unsigned>(n);
    do {
        const unsigned blocks = (count + elements_per_block - 1) / elements_per_block;
        kKernel<<<blocks, kThreads, kThreads * sizeof(int), stream>>>(level_in, level_out, count);
        CHECK(cudaGetLastError());
        level_in = level_out;
        level_out += blocks;
        count = blocks;
    } while (count > 1);
    int sum = 0;
    CHECK(cudaMemcpyAsync(&sum, level_in, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    return sum;
}

// ---- Step 0 (given): neighbored pairs, tid % (2 * stride) -----------------------------------------
// Each thread loads one value into shared memory. At each level, the threads whose index is a
// multiple of 2 * stride add their neighbour `stride` to the right. The active threads are spread
// across every warp, so every warp runs every level with most of its lanes idle.
__global__ void neighbored_modulo(const int* in, int* partials, unsigned n) {
    extern __shared__ int values[];  // blockDim.x ints, sized at launch
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + tid;
    values[tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        if (tid % (2 * stride) == 0) values[tid] += values[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = values[0];
}

int reduce_neighbored_modulo(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<neighbored_modulo>(in, n, scratch, kThreads, stream);
}

// ---- Step 1: neighbored pairs, thread index remapped ---------------------------------------------
// Thread t works on element 2 * stride * t, so the active threads are the first ones, packed into
// the fewest warps. The pairs are the same as in step 0.
__global__ void neighbored_remapped(const int* in, int* partials, unsigned n) {
    extern __shared__ int values[];
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + tid;
    values[tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = 1; stride < blockDim.x; stride *= 2) {
        const unsigned index = 2 * stride * tid;
        if (index < blockDim.x) values[index] += values[index + stride];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = values[0];
}

int reduce_neighbored_remapped(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<neighbored_remapped>(in, n, scratch, kThreads, stream);
}

// ---- Step 2: interleaved pairs ---------------------------------------------------------------------
// The first half of the active threads adds the second half: consecutive threads touch consecutive
// words, so a warp's accesses fall in 32 different banks.
__global__ void interleaved(const int* in, int* partials, unsigned n) {
    extern __shared__ int values[];
    const unsigned tid = threadIdx.x;
    const unsigned i = blockIdx.x * blockDim.x + tid;
    values[tid] = i < n ? in[i] : 0;
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) values[tid] += values[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = values[0];
}

int reduce_interleaved(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<interleaved>(in, n, scratch, kThreads, stream);
}

// ---- Step 3: four blocks' worth of data per block --------------------------------------------------
// Each thread first adds four values, a block apart, in a register: four independent loads in
// flight instead of one, and a quarter as many trees for the same data.
constexpr unsigned kUnroll = 4;

__device__ int load_unrolled(const int* in, unsigned n) {
    const unsigned first = blockIdx.x * blockDim.x * kUnroll + threadIdx.x;
    int sum = 0;
#pragma unroll
    for (unsigned k = 0; k < kUnroll; ++k) {
        const unsigned i = first + k * blockDim.x;
        if (i < n) sum += in[i];
    }
    return sum;
}

__global__ void unrolled4(const int* in, int* partials, unsigned n) {
    extern __shared__ int values[];
    const unsigned tid = threadIdx.x;
    values[tid] = load_unrolled(in, n);
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 0; stride /= 2) {
        if (tid < stride) values[tid] += values[tid + stride];
        __syncthreads();
    }
    if (tid == 0) partials[blockIdx.x] = values[0];
}

int reduce_unrolled4(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<unrolled4>(in, n, scratch, kThreads * kUnroll, stream);
}

// ---- Step 4: the last warp unrolled -----------------------------------------------------------------
// Once 64 values are left, one warp finishes alone, without __syncthreads. Since Volta the lanes of
// a warp are not guaranteed to run in lockstep, so the classic `volatile` trick is a data race: each
// level reads, then __syncwarp (everyone has read), writes, then __syncwarp (everyone has written).
__device__ int warp_finish(int* values, unsigned tid) {
    int sum = values[tid];
#pragma unroll
    for (unsigned stride = 32; stride > 1; stride /= 2) {
        sum += values[tid + stride];
        __syncwarp();
        values[tid] = sum;
        __syncwarp();
    }
    return sum + values[tid + 1];  // lane 0's total; nobody reads this level
}

__global__ void last_warp_unrolled(const int* in, int* partials, unsigned n) {
    extern __shared__ int values[];
    const unsigned tid = threadIdx.x;
    values[tid] = load_unrolled(in, n);
    __syncthreads();
    for (unsigned stride = blockDim.x / 2; stride > 32; stride /= 2) {
        if (tid < stride) values[tid] += values[tid + stride];
        __syncthreads();
    }
    if (tid < 32) {
        const int sum = warp_finish(values, tid);
        if (tid == 0) partials[blockIdx.x] = sum;
    }
}

int reduce_last_warp_unrolled(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<last_warp_unrolled>(in, n, scratch, kThreads * kUnroll, stream);
}

// ---- Step 5: complete unrolling ---------------------------------------------------------------------
// With the block size known to the compiler, every level is a constant: the loop disappears and
// the tests on kBlock are decided at compile time.
template <unsigned kBlock>
__global__ void __launch_bounds__(kBlock) complete_unroll(const int* in, int* partials, unsigned n) {
    __shared__ int values[kBlock];
    const unsigned tid = threadIdx.x;
    values[tid] = load_unrolled(in, n);
    __syncthreads();
    if (kBlock >= 1024) { if (tid < 512) values[tid] += values[tid + 512]; __syncthreads(); }
    if (kBlock >= 512) { if (tid < 256) values[tid] += values[tid + 256]; __syncthreads(); }
    if (kBlock >= 256) { if (tid < 128) values[tid] += values[tid + 128]; __syncthreads(); }
    if (kBlock >= 128) { if (tid < 64) values[tid] += values[tid + 64]; __syncthreads(); }
    if (tid < 32) {
        const int sum = warp_finish(values, tid);
        if (tid == 0) partials[blockIdx.x] = sum;
    }
}

int reduce_complete_unroll(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<complete_unroll<kThreads>>(in, n, scratch, kThreads * kUnroll, stream);
}

// ---- Step 6: warp shuffles, wide loads, one grid sized to the GPU ----------------------------------
constexpr unsigned kShuffleThreads = 512;

// A warp adds its 32 values through registers: after the loop, lane 0 holds the warp's sum.
__device__ int warp_sum(int value) {
    for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
    return value;
}

// The block's sum, in thread 0: each warp sums its lanes, then the first warp sums the warps.
__device__ int block_sum(int value) {
    __shared__ int warp_sums[32];
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    value = warp_sum(value);
    if (lane == 0) warp_sums[warp] = value;
    __syncthreads();
    if (warp == 0) value = warp_sum(lane < blockDim.x / 32 ? warp_sums[lane] : 0);
    return value;
}

// Each thread strides over the data in int4s (16 bytes per load), four loads in flight at a time;
// the n % 4 ints after the last whole int4 go to the first threads of block 0.
__global__ void __launch_bounds__(kShuffleThreads) sum_grid_stride(const int* __restrict__ in, int* partials, size_t n) {
    const int4* in4 = reinterpret_cast<const int4*>(in);
    const size_t n4 = n / 4;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x;
    int sum = 0;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        const int4 a = in4[i], b = in4[i + stride], c = in4[i + 2 * stride], d = in4[i + 3 * stride];
        sum += (a.x + a.y + a.z + a.w) + (b.x + b.y + b.z + b.w) + (c.x + c.y + c.z + c.w) + (d.x + d.y + d.z + d.w);
    }
    for (; i < n4; i += stride) {
        const int4 a = in4[i];
        sum += a.x + a.y + a.z + a.w;
    }
    if (blockIdx.x == 0 && threadIdx.x < n % 4) sum += in[4 * n4 + threadIdx.x];
    sum = block_sum(sum);
    if (threadIdx.x == 0) partials[blockIdx.x] = sum;
}

// As many blocks as the GPU holds at once: each SM gets its full share, and no block waits for a
// second wave.
unsigned blocks_filling_the_gpu() {
    int device = 0, sms = 0, blocks_per_sm = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks_per_sm, sum_grid_stride, kShuffleThreads, 0));
    return static_cast<unsigned>(sms * blocks_per_sm);
}

int reduce_shuffle(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    static const unsigned gpu_blocks = blocks_filling_the_gpu();
    const size_t blocks_with_work = (n / 4 + kShuffleThreads - 1) / kShuffleThreads;
    const unsigned blocks = static_cast<unsigned>(std::clamp<size_t>(blocks_with_work, 1, gpu_blocks));
    // First pass: one partial per block. Second pass: the same kernel, one block, over the
    // partials (scratch is 256-byte aligned, as int4 loads need). The total lands after them.
    int* total = scratch + blocks;
    sum_grid_stride<<<blocks, kShuffleThreads, 0, stream>>>(in, scratch, n);
    CHECK(cudaGetLastError());
    sum_grid_stride<<<1, kShuffleThreads, 0, stream>>>(scratch, total, blocks);
    CHECK(cudaGetLastError());
    int sum = 0;
    CHECK(cudaMemcpyAsync(&sum, total, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamSynchronize(stream));
    return sum;
}

}  // namespace ch03
