// Chapter 03 (reduction): the functions the grader calls. Your reduction.cu implements them; do not
// change this file, or the grader will not build against your code.
//
// Every step computes the same thing, the sum of in[0, n), and returns it once it is known:
// - `in` is device memory from cudaMalloc (so 256-byte aligned), 1 <= n < 2^31. It is read-only:
//   the grader checks that it is unchanged afterwards.
// - `scratch` is device memory from cudaMalloc of scratch_ints(n) ints, for partial sums. Its
//   contents on entry are unspecified (the grader fills it with -1 before each checked call).
// - All GPU work goes on `stream`; the function returns the complete sum, so it waits for it.
// The grader keeps every partial sum within int's range: the answer is exact.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>

namespace ch03 {

constexpr size_t scratch_ints(size_t n) { return n / 16 + 1024; }

using ReduceFunction = int (*)(const int* in, size_t n, int* scratch, cudaStream_t stream);

int reduce_neighbored_modulo(const int* in, size_t n, int* scratch, cudaStream_t stream);    // step 0, given
int reduce_neighbored_remapped(const int* in, size_t n, int* scratch, cudaStream_t stream);  // step 1
int reduce_interleaved(const int* in, size_t n, int* scratch, cudaStream_t stream);         // step 2
int reduce_unrolled4(const int* in, size_t n, int* scratch, cudaStream_t stream);           // step 3
int reduce_last_warp_unrolled(const int* in, size_t n, int* scratch, cudaStream_t stream);  // step 4
int reduce_complete_unroll(const int* in, size_t n, int* scratch, cudaStream_t stream);     // step 5
int reduce_shuffle(const int* in, size_t n, int* scratch, cudaStream_t stream);             // step 6

}  // namespace ch03
