// Chapter 06: thread block clusters and distributed shared memory.
//
// Read notes/06_clusters.md first. The exercises, in the order of the notes:
//   1. launch with clusters: fixed at compile time, chosen at run time
//   2. how many clusters fit on the GPU at once
//   3. a histogram whose counters are spread over a cluster's shared memory
//   4. heat diffusion along rods, each rod held by one cluster, halos read from the neighbours
//   5. publishing data from one block to another: release and acquire
// Replace every TODO; the grader's contract is grader/contracts/06_clusters.h.
#include <cooperative_groups.h>
#include <cuda/atomic>

#include <algorithm>

#include "06_clusters.h"
#include "check.h"

namespace cg = cooperative_groups;

namespace ch06 {

int round_up(int n, int multiple) { return (n + multiple - 1) / multiple * multiple; }

// ---- Exercise 1: launching with clusters, two ways -------------------------------------------
__device__ void record_my_block(BlockRecord* records, int blocks_x, int blocks_y) {
    // TODO: thread 0 of each block inside the blocks_x x blocks_y array writes its record:
    // cg::this_cluster() gives block_rank(), block_index() and dim_blocks().
}

// TODO: fix this kernel's clusters at 2 x 2 blocks with __cluster_dims__.
__global__ void record_fixed_clusters(BlockRecord* records, int blocks_x, int blocks_y) {
    record_my_block(records, blocks_x, blocks_y);
}

__global__ void record_clusters(BlockRecord* records, int blocks_x, int blocks_y) {
    record_my_block(records, blocks_x, blocks_y);
}

void record_compile_time_clusters(BlockRecord* records, int blocks_x, int blocks_y, cudaStream_t stream) {
    // TODO: a grid must be a whole number of clusters in every dimension.
    const dim3 grid(blocks_x, blocks_y);
    record_fixed_clusters<<<grid, 32, 0, stream>>>(records, blocks_x, blocks_y);
    CHECK(cudaGetLastError());
}

void record_run_time_clusters(BlockRecord* records, int blocks_x, int blocks_y, int cluster_x, int cluster_y,
                              cudaStream_t stream) {
    // TODO: launch record_clusters with cudaLaunchKernelEx: a cudaLaunchConfig_t (grid, block,
    // dynamic shared memory, stream) carrying one cudaLaunchAttribute, the cluster's dimension.
    // Write it as a small helper: exercises 2 and 3 launch with clusters too.
}

// ---- Exercises 2 and 3: a histogram in distributed shared memory --------------------------------
// Given: the baseline. Every value is an atomic on a global counter; a popular bin serializes.
__global__ void histogram_global_kernel(const int* values, size_t n, int* bins) {
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n; i += stride)
        atomicAdd(&bins[min(max(values[i], 0), kBins - 1)], 1);
}

void histogram_global_atomics(const int* values, size_t n, int* bins, cudaStream_t stream) {
    CHECK(cudaMemsetAsync(bins, 0, kBins * sizeof(int), stream));
    int device = 0, sms = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    if (n == 0) return;
    histogram_global_kernel<<<sms * 8, 256, 0, stream>>>(values, n, bins);
    CHECK(cudaGetLastError());
}

// Each block of a cluster holds one slice of the counters: bin b lives in block b / slice, at
// b % slice.
__global__ void histogram_in_clusters(const int* values, size_t n, int* bins) {
    extern __shared__ int counters[];
    // TODO:
    // - zero this block's slice; cluster.sync() before anyone adds to another block's slice;
    // - loop over the values (grid-stride), clamp each to a bin, atomicAdd 1 to that bin in the
    //   block that holds it (cluster.map_shared_rank);
    // - cluster.sync() again, then add this block's slice into its part of `bins`.
}

const void* histogram_clusters_kernel() { return reinterpret_cast<const void*>(histogram_in_clusters); }

int clusters_that_fit(int cluster_size, int threads) {
    // TODO: the kernel must first allow the dynamic shared memory a block asks for (over 48 KiB)
    // and, for 16 blocks, a non-portable cluster size (cudaFuncSetAttribute). Then ask
    // cudaOccupancyMaxActiveClusters with the launch configuration histogram_clusters will use.
    return 0;
}

void histogram_clusters(const int* values, size_t n, int* bins, int cluster_size, cudaStream_t stream) {
    // TODO: zero bins on `stream`; launch clusters_that_fit(cluster_size, threads) clusters of
    // cluster_size blocks, each block with kBins / cluster_size ints of dynamic shared memory.
}

// ---- Exercise 4: halo exchange through distributed shared memory --------------------------------
// Given: the baseline. One launch per step; every step reads and writes all rods in global memory.
__global__ void diffusion_step(const float* u, float* next, size_t cells, float alpha) {
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (i >= cells) return;
    const int cell = static_cast<int>(i % kRodCells);
    const float here = u[i];
    const float left = cell > 0 ? u[i - 1] : here;
    const float right = cell < kRodCells - 1 ? u[i + 1] : here;
    next[i] = here + alpha * (left - 2.0f * here + right);
}

void diffuse_step_by_step(const float* in, float* out, float* scratch, int rods, int steps, float alpha,
                          cudaStream_t stream) {
    const size_t cells = size_t(rods) * kRodCells;
    const int threads = 256;
    const unsigned blocks = static_cast<unsigned>((cells + threads - 1) / threads);
    const float* u = in;
    for (int s = 0; s < steps; ++s) {
        // Alternate between out and scratch so that the last step writes to out.
        float* next = (steps - s) % 2 == 1 ? out : scratch;
        diffusion_step<<<blocks, threads, 0, stream>>>(u, next, cells, alpha);
        CHECK(cudaGetLastError());
        u = next;
    }
}

void diffuse_in_clusters(const float* in, float* out, float* scratch, int rods, int steps, float alpha,
                         cudaStream_t stream) {
    // TODO: one kernel, one cluster per rod. Each block keeps its share of the rod's cells on chip
    // (registers or shared memory) for all the steps and publishes the cells its neighbours need in
    // shared memory; a block reads the cell beyond its edge from the neighbouring block's shared
    // memory (cluster.map_shared_rank). One cluster.sync() per step, with two buffers of edges,
    // keeps writes and reads apart; one more before exiting.
}

// ---- Exercise 5: publishing data from one block to another --------------------------------------
__global__ void messenger(int* mailbox, int n, int messages, int key, int* received, unsigned* flags) {
    // TODO: block 0 writes message m into mailbox (message_value(m, i, key)) and then announces it;
    // block 1 waits for the announcement, copies the mailbox into received, and then says it has
    // read it; block 0 waits for that before writing message m + 1. One thread per block speaks
    // for it: cuda::atomic_ref<unsigned, cuda::thread_scope_device> on flags[0] and flags[1],
    // store with memory_order_release, load with memory_order_acquire, __syncthreads() around.
}

void send_messages(int* mailbox, int n, int messages, int key, int* received, unsigned* flags, int threads,
                   cudaStream_t stream) {
    // TODO: one cluster of 2 blocks, so that both are resident at once.
}

}  // namespace ch06
