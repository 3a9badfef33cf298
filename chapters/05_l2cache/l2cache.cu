// Chapter 05: L2 cache access management.
//
// Read notes/05_l2cache.md first. The exercises, in the order of the notes:
//   1. ask the device what it has, and plan a set-aside and a window
//   2. a window on a stream, and leaving the L2 as it was found
//   3. a window on a single launch
//   4. two streams sharing one set-aside
// Replace every TODO; the grader's contract is grader/contracts/05_l2cache.h.
#include <algorithm>

#include "05_l2cache.h"
#include "check.h"

namespace ch05 {

// ---- Exercise 1: what to ask for --------------------------------------------------------------
PersistencePlan plan_persistence(int device, size_t hot_bytes) {
    // TODO: read the L2's size, the most it can set aside for persisting accesses and the largest
    // window (cudaDeviceGetAttribute), and fill in the plan as the contract says.
    PersistencePlan plan;
    return plan;
}

// ---- The workload (given) ------------------------------------------------------------------------
__global__ void gather_sum_kernel(const int* table, size_t table_n, const int4* values, size_t n4, unsigned salt,
                                  unsigned long long* total) {
    unsigned long long sum = 0;
    const size_t stride = size_t(gridDim.x) * blockDim.x;
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n4; i += stride) {
        const unsigned h = static_cast<unsigned>(i) * 2654435761u ^ salt;
        sum += static_cast<unsigned>(values[i].x + table[h % table_n]);
    }
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffffu, sum, offset);
    if (threadIdx.x % 32 == 0) atomicAdd(total, sum);
}

int gather_blocks() {
    int device = 0, sms = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
    return sms * 8;
}
constexpr int kGatherThreads = 256;

void gather_sum(const int* table, size_t table_n, const int4* values, size_t n4, unsigned salt,
                unsigned long long* total, cudaStream_t stream) {
    gather_sum_kernel<<<gather_blocks(), kGatherThreads, 0, stream>>>(table, table_n, values, n4, salt, total);
    CHECK(cudaGetLastError());
}

// ---- Exercise 2: a window on a stream --------------------------------------------------------
void run_with_stream_window(const void* hot, size_t hot_bytes, const std::function<void(cudaStream_t)>& work,
                            cudaStream_t stream) {
    // TODO:
    // - note the set-aside limit in force (cudaDeviceGetLimit), then set the plan's
    //   (cudaDeviceSetLimit with cudaLimitPersistingL2CacheSize);
    // - put the window on the stream: a cudaStreamAttrValue whose accessPolicyWindow has base_ptr,
    //   num_bytes, hitRatio, hitProp and missProp (cudaStreamSetAttribute);
    // - call work(stream) once and wait for it;
    // - leave everything as found: a window of 0 bytes on the stream, the persisting lines reset
    //   (cudaCtxResetPersistingL2Cache), the limit you noted.
}

// ---- Exercise 3: a window on one launch --------------------------------------------------------
void gather_sum_with_window(const int* table, size_t table_n, const int4* values, size_t n4, unsigned salt,
                            unsigned long long* total, cudaStream_t stream) {
    // TODO: launch gather_sum_kernel as gather_sum does, but with cudaLaunchKernelEx and one
    // cudaLaunchAttribute (cudaLaunchAttributeAccessPolicyWindow) over the table. The hit ratio
    // follows from the set-aside in force (cudaDeviceGetLimit), not from the largest possible one.
}

// ---- Exercise 4: two streams sharing the set-aside ---------------------------------------------
void share_set_aside(cudaStream_t stream_a, const void* hot_a, size_t bytes_a, cudaStream_t stream_b,
                     const void* hot_b, size_t bytes_b) {
    // TODO: read the set-aside in force; give each stream a window over its buffer (at most the
    // largest window), and a hit ratio so that the two windows' persisting shares add up to the
    // set-aside at most, each share in proportion to its buffer's size.
}

}  // namespace ch05
