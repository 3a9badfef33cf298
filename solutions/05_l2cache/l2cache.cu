// Chapter 05: L2 cache access management. Reference solution.
//
// Read notes/05_l2cache.md first. The exercises, in the order of the notes:
//   1. ask the device what it has, and plan a set-aside and a window
//   2. a window on a stream, and leaving the L2 as it was found
//   3. a window on a single launch
//   4. two streams sharing one set-aside
#include <algorithm>

#include "05_l2cache.h"
#include "check.h"

namespace ch05 {

// ---- Exercise 1: what to ask for --------------------------------------------------------------
PersistencePlan plan_persistence(int device, size_t hot_bytes) {
    int l2 = 0, persisting_max = 0, window_max = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    CHECK(cudaDeviceGetAttribute(&persisting_max, cudaDevAttrMaxPersistingL2CacheSize, device));
    CHECK(cudaDeviceGetAttribute(&window_max, cudaDevAttrMaxAccessPolicyWindowSize, device));
    PersistencePlan plan;
    plan.set_aside_bytes = std::min(size_t(l2) / 4 * 3, size_t(persisting_max));
    plan.window_bytes = std::min(hot_bytes, size_t(window_max));
    plan.hit_ratio = plan.window_bytes == 0 ? 0.0f
                                            : float(std::min(1.0, double(plan.set_aside_bytes) / double(plan.window_bytes)));
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
cudaAccessPolicyWindow persisting_window(const void* base, size_t bytes, float hit_ratio) {
    cudaAccessPolicyWindow window{};
    window.base_ptr = const_cast<void*>(base);
    window.num_bytes = bytes;
    window.hitRatio = hit_ratio;
    window.hitProp = cudaAccessPropertyPersisting;  // the hit ratio's share of the window stays in L2
    window.missProp = cudaAccessPropertyStreaming;  // the rest must not push it out
    return window;
}

void set_stream_window(cudaStream_t stream, const cudaAccessPolicyWindow& window) {
    cudaStreamAttrValue value{};
    value.accessPolicyWindow = window;
    CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
}

void run_with_stream_window(const void* hot, size_t hot_bytes, const std::function<void(cudaStream_t)>& work,
                            cudaStream_t stream) {
    int device = 0;
    CHECK(cudaGetDevice(&device));
    const PersistencePlan plan = plan_persistence(device, hot_bytes);
    size_t limit_before = 0;
    CHECK(cudaDeviceGetLimit(&limit_before, cudaLimitPersistingL2CacheSize));

    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, plan.set_aside_bytes));
    set_stream_window(stream, persisting_window(hot, plan.window_bytes, plan.hit_ratio));
    work(stream);
    CHECK(cudaStreamSynchronize(stream));

    // As found: no window (a window of 0 bytes), no persisting lines left behind (they would keep
    // their L2 share from everyone else), the limit as it was.
    set_stream_window(stream, persisting_window(nullptr, 0, 0.0f));
    CHECK(cudaCtxResetPersistingL2Cache());
    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit_before));
}

// ---- Exercise 3: a window on one launch --------------------------------------------------------
void gather_sum_with_window(const int* table, size_t table_n, const int4* values, size_t n4, unsigned salt,
                            unsigned long long* total, cudaStream_t stream) {
    size_t set_aside = 0;
    CHECK(cudaDeviceGetLimit(&set_aside, cudaLimitPersistingL2CacheSize));
    int device = 0;
    CHECK(cudaGetDevice(&device));
    const PersistencePlan plan = plan_persistence(device, table_n * sizeof(int));
    const float hit_ratio = plan.window_bytes == 0 ? 0.0f : float(std::min(1.0, double(set_aside) / plan.window_bytes));

    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeAccessPolicyWindow;
    attribute.val.accessPolicyWindow = persisting_window(table, plan.window_bytes, hit_ratio);
    cudaLaunchConfig_t config{};
    config.gridDim = gather_blocks();
    config.blockDim = kGatherThreads;
    config.stream = stream;
    config.attrs = &attribute;
    config.numAttrs = 1;
    CHECK(cudaLaunchKernelEx(&config, gather_sum_kernel, table, table_n, values, n4, salt, total));
}

// ---- Exercise 4: two streams sharing the set-aside ---------------------------------------------
void share_set_aside(cudaStream_t stream_a, const void* hot_a, size_t bytes_a, cudaStream_t stream_b,
                     const void* hot_b, size_t bytes_b) {
    size_t set_aside = 0;
    CHECK(cudaDeviceGetLimit(&set_aside, cudaLimitPersistingL2CacheSize));
    int device = 0, window_max = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&window_max, cudaDevAttrMaxAccessPolicyWindowSize, device));
    const double total = double(bytes_a) + double(bytes_b);
    auto window_for = [&](const void* hot, size_t bytes) {
        const size_t window = std::min(bytes, size_t(window_max));
        const double share = total == 0 ? 0 : set_aside * (double(bytes) / total);
        return persisting_window(hot, window, window == 0 ? 0.0f : float(std::min(1.0, share / window)));
    };
    set_stream_window(stream_a, window_for(hot_a, bytes_a));
    set_stream_window(stream_b, window_for(hot_b, bytes_b));
}

}  // namespace ch05
