// Chapter 06 (clusters): the functions the grader calls. Your clusters.cu implements them; do not
// change this file, or the grader will not build against your code.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>

namespace ch06 {

// ---- Exercise 1: launching with clusters, two ways ------------------------------------------
// What one block saw of its cluster.
struct BlockRecord {
    unsigned rank;              // cluster.block_rank()
    unsigned index_x, index_y;  // cluster.block_index(): where the block sits in its cluster
    unsigned dim_x, dim_y;      // cluster.dim_blocks(): the cluster's shape, in blocks
};

// One block per record of a blocks_x x blocks_y array (records[by * blocks_x + bx] belongs to block
// (bx, by)), in clusters of 2 x 2 blocks fixed at compile time with __cluster_dims__. blocks_x and
// blocks_y need not be multiples of 2; no block writes outside the array. Enqueued on `stream`.
void record_compile_time_clusters(BlockRecord* records, int blocks_x, int blocks_y, cudaStream_t stream);

// The same, in clusters of cluster_x x cluster_y blocks chosen at run time (cudaLaunchKernelEx).
void record_run_time_clusters(BlockRecord* records, int blocks_x, int blocks_y, int cluster_x, int cluster_y,
                              cudaStream_t stream);

// ---- Exercises 2 and 3: a histogram in distributed shared memory -------------------------------
inline constexpr int kBins = 65536;  // 256 KiB of int counters: more than one block's shared memory

// bins[b] = how many values equal b, for b in [0, kBins): values below 0 count in bin 0, values of
// kBins or more in bin kBins - 1. Writes all kBins bins; enqueued on `stream`, returns at once.
//
// Given (the baseline): one global atomicAdd per value.
void histogram_global_atomics(const int* values, size_t n, int* bins, cudaStream_t stream);
// Yours: clusters of `cluster_size` blocks (2, 4, 8 or 16) share the kBins counters, kBins /
// cluster_size in each block's shared memory; a grid of exactly as many clusters as can be resident
// at once (clusters_that_fit), each looping over the values.
void histogram_clusters(const int* values, size_t n, int* bins, int cluster_size, cudaStream_t stream);

// The kernel histogram_clusters launches, so that the grader can ask the runtime about it.
const void* histogram_clusters_kernel();
// How many clusters of `cluster_size` blocks of `threads` threads, each block holding
// kBins / cluster_size counters in dynamic shared memory, histogram_clusters_kernel() can have
// resident on this GPU at once (cudaOccupancyMaxActiveClusters).
int clusters_that_fit(int cluster_size, int threads);

// ---- Exercise 4: halo exchange through distributed shared memory --------------------------------
inline constexpr int kRodCells = 65536;  // 256 KiB of floats: more than one SM holds, in registers or shared memory

// Heat diffusion along `rods` independent rods of kRodCells cells each (rod r is
// in[r * kRodCells, (r + 1) * kRodCells)). One step: for every cell i,
//   next[i] = u[i] + alpha * (u[i - 1] - 2 u[i] + u[i + 1]),
// where the ends are insulated (u[-1] = u[0], u[kRodCells] = u[kRodCells - 1]). After `steps` steps
// (at least 1), the temperatures go to `out`; `in` is unchanged; `scratch` (as large as `in`) may be
// used. Enqueued on `stream`, returns at once.
//
// Given (the baseline): one kernel launch per step, through global memory.
void diffuse_step_by_step(const float* in, float* out, float* scratch, int rods, int steps, float alpha,
                          cudaStream_t stream);
// Yours: one kernel for all the steps; each rod is held on chip by one cluster, its cells spread
// over the cluster's blocks, and a block reads its neighbours' edge cells from their shared memory.
void diffuse_in_clusters(const float* in, float* out, float* scratch, int rods, int steps, float alpha,
                         cudaStream_t stream);

// ---- Exercise 5: publishing data from one block to another --------------------------------------
// The value the producer writes at position i of message m.
__host__ __device__ inline int message_value(int m, int i, int key) { return (m * 40503 + i) ^ key; }

// One kernel, one cluster of 2 blocks of `threads` threads. Block 0 sends `messages` messages of n
// ints (n <= 4 * threads) through `mailbox` (n ints, global memory); block 1 copies message m into
// received[m * n, (m + 1) * n). Block 0 writes message m + 1 only once block 1 has read message m.
// `flags` points at 2 zeroed unsigned ints for the handshake: flags[0] counts the messages sent,
// flags[1] the messages read (both equal `messages` at the end). Enqueued on `stream`.
void send_messages(int* mailbox, int n, int messages, int key, int* received, unsigned* flags, int threads,
                   cudaStream_t stream);

}  // namespace ch06
