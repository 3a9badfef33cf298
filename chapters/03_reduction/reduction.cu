// Chapter 03: reduction, from the neighbored sum to the hardware's limit. Your exercise: replace
// every TODO.
//
// Read notes/03_reduction.md first, and README.md beside this file for the tasks. Every step
// sums the same ints; they differ in how a block adds up its share:
//   0. neighbored pairs, picked with tid % (2 * stride)     (given: the baseline)
//   1. neighbored pairs, the thread index remapped           (no divergent modulo)
//   2. interleaved pairs                                     (the stride halves each level)
//   3. four loads per thread before the tree                 (unrolling the data)
//   4. the last warp unrolled, with __syncwarp               (unrolling the tree's tail)
//   5. the whole tree unrolled, the block size a template parameter
//   6. warp shuffles, 16-byte loads, a grid sized to the GPU (beyond the textbook steps)
//
// Grade it with:  ./grade 03_reduction
#include "03_reduction.h"
#include "check.h"

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
    // TODO: step 0's kernel, except that at each level thread t adds the pair that starts at
    //       index 2 * stride * t (when that index is inside the block), so no modulo is needed
    //       and the active threads are the first ones.
}

int reduce_neighbored_remapped(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<neighbored_remapped>(in, n, scratch, kThreads, stream);
}

// ---- Step 2: interleaved pairs ---------------------------------------------------------------------
// The first half of the active threads adds the second half: consecutive threads touch consecutive
// words, so a warp's accesses fall in 32 different banks.
__global__ void interleaved(const int* in, int* partials, unsigned n) {
    // TODO: load as in step 0; then the stride starts at half the block and halves each level,
    //       and thread t < stride adds values[t + stride] to values[t].
}

int reduce_interleaved(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<interleaved>(in, n, scratch, kThreads, stream);
}

// ---- Step 3: four blocks' worth of data per block --------------------------------------------------
// Each thread first adds four values, a block apart, in a register: four independent loads in
// flight instead of one, and a quarter as many trees for the same data.
constexpr unsigned kUnroll = 4;

// TODO: the sum of the kUnroll values this thread loads: block b covers the kUnroll * blockDim.x
//       values from b * blockDim.x * kUnroll on; thread t takes t, t + blockDim.x, ... Skip an
//       index past n. Steps 4 and 5 use this too.
__device__ int load_unrolled(const int* in, unsigned n) {
    return 0;
}

__global__ void unrolled4(const int* in, int* partials, unsigned n) {
    // TODO: step 2's kernel, with load_unrolled in place of the single load.
}

int reduce_unrolled4(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<unrolled4>(in, n, scratch, kThreads * kUnroll, stream);
}

// ---- Step 4: the last warp unrolled -----------------------------------------------------------------
// Once 64 values are left, one warp finishes alone, without __syncthreads. Since Volta the lanes of
// a warp are not guaranteed to run in lockstep, so the classic `volatile` trick is a data race: each
// level reads, then __syncwarp (everyone has read), writes, then __syncwarp (everyone has written).
// TODO: the tree's last six levels, 64 values down to 1, by the 32 threads of warp 0 alone: no
//       __syncthreads (the other warps do not call this). Keep your running sum in a register;
//       at each level add values[tid + stride], then __syncwarp, store, __syncwarp (why both: the
//       notes, section 8). Return lane 0's total.
__device__ int warp_finish(int* values, unsigned tid) {
    return 0;
}

__global__ void last_warp_unrolled(const int* in, int* partials, unsigned n) {
    // TODO: step 3's kernel, whose loop stops at stride 64; then warp 0 calls warp_finish and
    //       lane 0 writes the block's partial sum.
}

int reduce_last_warp_unrolled(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<last_warp_unrolled>(in, n, scratch, kThreads * kUnroll, stream);
}

// ---- Step 5: complete unrolling ---------------------------------------------------------------------
// With the block size known to the compiler, every level is a constant: the loop disappears and
// the tests on kBlock are decided at compile time.
template <unsigned kBlock>
__global__ void __launch_bounds__(kBlock) complete_unroll(const int* in, int* partials, unsigned n) {
    // TODO: step 4's kernel with the loop written out: one line per level from 1024 down to 64
    //       values, each guarded by a test on kBlock that the compiler decides. values[] can be
    //       a static __shared__ array of kBlock ints.
}

int reduce_complete_unroll(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    return reduce_in_passes<complete_unroll<kThreads>>(in, n, scratch, kThreads * kUnroll, stream);
}

// ---- Step 6: warp shuffles, wide loads, one grid sized to the GPU ----------------------------------
// TODO: a kernel in which each thread sums its share in a register, reading int4s (16 bytes) in a
//       grid-stride loop, with several loads in flight per iteration; warps add their lanes with
//       __shfl_down_sync, then one warp adds the warps' sums; one partial per block. The n % 4
//       ints after the last whole int4 need care.
//
// TODO: reduce_shuffle: launch it once with a grid sized to the GPU (the SM count times the blocks
//       per SM that cudaOccupancyMaxActiveBlocksPerMultiprocessor reports), and finish on the
//       device: a second pass over the partials, or atomics (scratch is not zeroed for you).
//       Then copy the total to the host.
int reduce_shuffle(const int* in, size_t n, int* scratch, cudaStream_t stream) {
    (void)in, (void)n, (void)scratch, (void)stream;
    return 0;
}

}  // namespace ch03
