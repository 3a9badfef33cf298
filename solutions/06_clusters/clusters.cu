// Chapter 06: thread block clusters and distributed shared memory. Reference solution.
//
// Read notes/06_clusters.md first. The exercises, in the order of the notes:
//   1. launch with clusters: fixed at compile time, chosen at run time
//   2. how many clusters fit on the GPU at once
//   3. a histogram whose counters are spread over a cluster's shared memory
//   4. heat diffusion along rods, each rod held by one cluster, halos read from the neighbours
//   5. publishing data from one block to another: release and acquire
#include <cooperative_groups.h>
#include <cuda/atomic>

#include <algorithm>

#include "06_clusters.h"
#include "check.h"

namespace cg = cooperative_groups;

namespace ch06 {

// A launch configuration for cudaLaunchKernelEx with one attribute: the cluster's shape.
struct ClusterLaunch {
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute[1]{};

    ClusterLaunch(dim3 grid, dim3 block, size_t dynamic_shared_bytes, dim3 cluster, cudaStream_t stream) {
        config.gridDim = grid;
        config.blockDim = block;
        config.dynamicSmemBytes = dynamic_shared_bytes;
        config.stream = stream;
        attribute[0].id = cudaLaunchAttributeClusterDimension;
        attribute[0].val.clusterDim.x = cluster.x;
        attribute[0].val.clusterDim.y = cluster.y;
        attribute[0].val.clusterDim.z = cluster.z;
        config.attrs = attribute;
        config.numAttrs = 1;
    }
};

int round_up(int n, int multiple) { return (n + multiple - 1) / multiple * multiple; }

// ---- Exercise 1: launching with clusters, two ways -------------------------------------------
__device__ void record_my_block(BlockRecord* records, int blocks_x, int blocks_y) {
    // The grid was rounded up to whole clusters: the extra blocks have no record.
    if (blockIdx.x >= blocks_x || blockIdx.y >= blocks_y || threadIdx.x != 0) return;
    const cg::cluster_group cluster = cg::this_cluster();
    const dim3 index = cluster.block_index(), shape = cluster.dim_blocks();
    records[blockIdx.y * blocks_x + blockIdx.x] = {cluster.block_rank(), index.x, index.y, shape.x, shape.y};
}

__global__ void __cluster_dims__(2, 2, 1) record_fixed_clusters(BlockRecord* records, int blocks_x, int blocks_y) {
    record_my_block(records, blocks_x, blocks_y);
}

__global__ void record_clusters(BlockRecord* records, int blocks_x, int blocks_y) {
    record_my_block(records, blocks_x, blocks_y);
}

void record_compile_time_clusters(BlockRecord* records, int blocks_x, int blocks_y, cudaStream_t stream) {
    // A grid must be a whole number of clusters in every dimension.
    const dim3 grid(round_up(blocks_x, 2), round_up(blocks_y, 2));
    record_fixed_clusters<<<grid, 32, 0, stream>>>(records, blocks_x, blocks_y);
    CHECK(cudaGetLastError());
}

void record_run_time_clusters(BlockRecord* records, int blocks_x, int blocks_y, int cluster_x, int cluster_y,
                              cudaStream_t stream) {
    const dim3 grid(round_up(blocks_x, cluster_x), round_up(blocks_y, cluster_y));
    ClusterLaunch launch(grid, 32, 0, dim3(cluster_x, cluster_y, 1), stream);
    CHECK(cudaLaunchKernelEx(&launch.config, record_clusters, records, blocks_x, blocks_y));
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
// b % slice. Any thread adds to any block's slice through map_shared_rank.
__global__ void histogram_in_clusters(const int* values, size_t n, int* bins) {
    extern __shared__ int counters[];
    const cg::cluster_group cluster = cg::this_cluster();
    const int slice = kBins / static_cast<int>(cluster.num_blocks());
    for (int i = threadIdx.x; i < slice; i += blockDim.x) counters[i] = 0;
    // 1st cluster.sync: every block of the cluster has started and zeroed its slice before anyone
    // adds to it.
    cluster.sync();

    auto count = [&](int value) {
        const int bin = min(max(value, 0), kBins - 1);
        atomicAdd(cluster.map_shared_rank(counters, bin / slice) + bin % slice, 1);
    };
    const size_t thread = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    // Four values per load where the array is 16-byte aligned (cudaMalloc's is), then the rest.
    const bool aligned = reinterpret_cast<uintptr_t>(values) % sizeof(int4) == 0;
    const size_t quads = aligned ? n / 4 : 0;
    const int4* values4 = reinterpret_cast<const int4*>(values);
    for (size_t i = thread; i < quads; i += stride) {
        const int4 v = values4[i];
        count(v.x);
        count(v.y);
        count(v.z);
        count(v.w);
    }
    for (size_t i = 4 * quads + thread; i < n; i += stride) count(values[i]);

    // 2nd cluster.sync: every add into my slice has landed before I read it, and no block exits
    // (its shared memory gone) while another may still add to it.
    cluster.sync();
    int* my_bins = bins + cluster.block_rank() * slice;
    for (int i = threadIdx.x; i < slice; i += blockDim.x)
        if (counters[i] != 0) atomicAdd(&my_bins[i], counters[i]);
}

const void* histogram_clusters_kernel() { return reinterpret_cast<const void*>(histogram_in_clusters); }

size_t slice_bytes(int cluster_size) { return kBins / cluster_size * sizeof(int); }

// Above 48 KiB of dynamic shared memory, and above 8 blocks per cluster, a kernel must opt in.
void allow_cluster_shape(int cluster_size) {
    CHECK(cudaFuncSetAttribute(histogram_in_clusters, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               static_cast<int>(slice_bytes(cluster_size))));
    CHECK(cudaFuncSetAttribute(histogram_in_clusters, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
}

int clusters_that_fit(int cluster_size, int threads) {
    allow_cluster_shape(cluster_size);
    ClusterLaunch launch(cluster_size, threads, slice_bytes(cluster_size), dim3(cluster_size, 1, 1), nullptr);
    int clusters = 0;
    CHECK(cudaOccupancyMaxActiveClusters(&clusters, histogram_in_clusters, &launch.config));
    return clusters;
}

// 1024 threads: with 2 blocks per cluster each block holds 128 KiB of counters, so one block per
// SM; the most threads hide the latency of its remote atomics best (notes, section 5).
void histogram_clusters(const int* values, size_t n, int* bins, int cluster_size, cudaStream_t stream) {
    const int threads = 1024;
    CHECK(cudaMemsetAsync(bins, 0, kBins * sizeof(int), stream));
    // One wave of clusters: each zeroes and flushes its counters once, whatever n.
    const int clusters = clusters_that_fit(cluster_size, threads);
    ClusterLaunch launch(clusters * cluster_size, threads, slice_bytes(cluster_size), dim3(cluster_size, 1, 1), stream);
    CHECK(cudaLaunchKernelEx(&launch.config, histogram_in_clusters, values, n, bins));
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

constexpr int kRodBlocks = 4;                        // blocks per cluster, one cluster per rod
constexpr int kSliceCells = kRodCells / kRodBlocks;  // cells per block
constexpr int kDiffusionThreads = 1024;
constexpr int kCellsPerThread = kSliceCells / kDiffusionThreads;

// Block `rank` of a rod's cluster holds cells [rank * kSliceCells, (rank + 1) * kSliceCells); each
// of its threads keeps kCellsPerThread consecutive cells in registers for all the steps. A thread
// needs one cell from each side of its run: its neighbours publish their runs' two edge cells in
// shared memory, and at a block's edge the neighbour is in the next block: read from that block's
// shared memory, not from global memory.
__global__ void __cluster_dims__(kRodBlocks, 1, 1) __launch_bounds__(kDiffusionThreads)
    diffuse_rods(const float* in, float* out, int steps, float alpha) {
    // edges[s % 2][2 t] and [2 t + 1]: the first and last cell of thread t's run at step s. Two
    // buffers, so that a step's writes never meet the step before's reads.
    __shared__ float edges[2][2 * kDiffusionThreads];
    const cg::cluster_group cluster = cg::this_cluster();
    const int rank = static_cast<int>(cluster.block_rank());
    const int t = threadIdx.x;
    const size_t first = size_t(blockIdx.x / kRodBlocks) * kRodCells + size_t(rank) * kSliceCells +
                         size_t(t) * kCellsPerThread;

    float u[kCellsPerThread];
#pragma unroll
    for (int k = 0; k < kCellsPerThread; ++k) u[k] = in[first + k];

    for (int s = 0; s < steps; ++s) {
        float* now = edges[s % 2];
        now[2 * t] = u[0];
        now[2 * t + 1] = u[kCellsPerThread - 1];
        // Every edge of this step is published, in my block and in my neighbours'.
        cluster.sync();
        float left, right;
        if (t > 0) left = now[2 * t - 1];
        else left = rank > 0 ? cluster.map_shared_rank(now, rank - 1)[2 * kDiffusionThreads - 1] : u[0];
        if (t < kDiffusionThreads - 1) right = now[2 * t + 2];
        else right = rank < kRodBlocks - 1 ? cluster.map_shared_rank(now, rank + 1)[0] : u[kCellsPerThread - 1];
        float next[kCellsPerThread];
#pragma unroll
        for (int k = 0; k < kCellsPerThread; ++k) {
            const float l = k > 0 ? u[k - 1] : left;
            const float r = k < kCellsPerThread - 1 ? u[k + 1] : right;
            next[k] = u[k] + alpha * (l - 2.0f * u[k] + r);
        }
#pragma unroll
        for (int k = 0; k < kCellsPerThread; ++k) u[k] = next[k];
    }
    // No block may exit while a neighbour may still read its shared memory.
    cluster.sync();
#pragma unroll
    for (int k = 0; k < kCellsPerThread; ++k) out[first + k] = u[k];
}

// `scratch` is not needed: the rods stay on chip from the first step to the last.
void diffuse_in_clusters(const float* in, float* out, float* scratch, int rods, int steps, float alpha,
                         cudaStream_t stream) {
    (void)scratch;
    if (rods == 0) return;
    diffuse_rods<<<rods * kRodBlocks, kDiffusionThreads, 0, stream>>>(in, out, steps, alpha);
    CHECK(cudaGetLastError());
}

// ---- Exercise 5: publishing data from one block to another --------------------------------------
// flags[0]: messages sent; flags[1]: messages read. Thread 0 of each block speaks for its block:
// the barrier orders its block's plain accesses before its release and after its acquire.
__global__ void __cluster_dims__(2, 1, 1)
    messenger(int* mailbox, int n, int messages, int key, int* received, unsigned* flags) {
    cuda::atomic_ref<unsigned, cuda::thread_scope_device> sent(flags[0]), read(flags[1]);
    const bool producer = blockIdx.x == 0;
    for (int m = 0; m < messages; ++m) {
        if (threadIdx.x == 0) {
            // The producer waits until message m - 1 was read; the consumer until message m was sent.
            cuda::atomic_ref<unsigned, cuda::thread_scope_device>& flag = producer ? read : sent;
            const unsigned wanted = producer ? m : m + 1;
            while (flag.load(cuda::memory_order_acquire) < wanted) {
            }
        }
        __syncthreads();
        for (int i = threadIdx.x; i < n; i += blockDim.x) {
            if (producer) mailbox[i] = message_value(m, i, key);
            else received[size_t(m) * n + i] = mailbox[i];
        }
        __syncthreads();
        if (threadIdx.x == 0) (producer ? sent : read).store(m + 1, cuda::memory_order_release);
    }
}

void send_messages(int* mailbox, int n, int messages, int key, int* received, unsigned* flags, int threads,
                   cudaStream_t stream) {
    // A cluster's blocks are resident at the same time: neither can wait forever for the other to
    // be scheduled.
    messenger<<<2, threads, 0, stream>>>(mailbox, n, messages, key, received, flags);
    CHECK(cudaGetLastError());
}

}  // namespace ch06
