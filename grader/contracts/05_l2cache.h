// Chapter 05 (L2 cache): the functions the grader calls. Your l2cache.cu implements them; do not
// change this file, or the grader will not build against your code.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>

namespace ch05 {

// ---- Exercise 1: what to ask for --------------------------------------------------------------
struct PersistencePlan {
    size_t set_aside_bytes = 0;  // the smaller of 3/4 of the L2 and persistingL2CacheMaxSize
    size_t window_bytes = 0;     // hot_bytes, at most accessPolicyMaxWindowSize
    float hit_ratio = 0;         // the share of the window that fits the set-aside, at most 1 (0 for no window)
};

// The plan for keeping a hot buffer of `hot_bytes` in the L2 of `device`.
PersistencePlan plan_persistence(int device, size_t hot_bytes);

// ---- The workload (given) ------------------------------------------------------------------------
// Adds up values[i].x + table[hash(i, salt) % table_n] over the n4 int4 of `values`, into *total
// (64-bit, wrapping), one kernel launch: a stream of values read once, and random reads from a
// table that is worth keeping in L2. *total must be zero before the first call.
void gather_sum(const int* table, size_t table_n, const int4* values, size_t n4, unsigned salt,
                unsigned long long* total, cudaStream_t stream);

// ---- Exercise 2: a window on a stream --------------------------------------------------------
// Sets aside plan_persistence(device, hot_bytes).set_aside_bytes of L2 for persisting accesses,
// puts an access policy window over [hot, hot + window_bytes) on `stream` (the plan's hit ratio;
// persisting on a hit, streaming on a miss), calls work(stream) once, waits for it, and then
// leaves the state as it found it: the stream without a window (a window of 0 bytes), the
// persisting lines back to normal (cudaCtxResetPersistingL2Cache), and the set-aside limit at its
// value before the call.
void run_with_stream_window(const void* hot, size_t hot_bytes, const std::function<void(cudaStream_t)>& work,
                            cudaStream_t stream);

// ---- Exercise 3: a window on one launch --------------------------------------------------------
// gather_sum's kernel, launched once with an access policy window over the table as an attribute
// of that launch (cudaLaunchKernelEx), the stream's own attributes untouched. The caller has set
// aside the L2 already: read the limit in force for the hit ratio.
void gather_sum_with_window(const int* table, size_t table_n, const int4* values, size_t n4, unsigned salt,
                            unsigned long long* total, cudaStream_t stream);

// ---- Exercise 4: two streams sharing the set-aside ---------------------------------------------
// Puts a window over each hot buffer on its stream, persisting on a hit, streaming on a miss, so
// that both fit the set-aside in force together: each stream's share of the set-aside is in
// proportion to its buffer's size, and its hit ratio is its share over its window (at most 1).
void share_set_aside(cudaStream_t stream_a, const void* hot_a, size_t bytes_a, cudaStream_t stream_b,
                     const void* hot_b, size_t bytes_b);

}  // namespace ch05
