// Chapter 07 (CUDA graphs): the functions the grader calls. Your graphs.cu implements them; do not
// change this file, or the grader will not build against your code.
//
// Device pointers come from cudaMalloc; host pointers named *_host are pinned (cudaMallocHost).
// Every graph a function returns belongs to the caller, who instantiates, launches and destroys it.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>

namespace ch07 {

// ---- Exercise 1: capture the short-kernel loop ---------------------------------------------
// A step is kKernelsPerStep launches of advance_kernel, the k-th adding k: x[i] = 3 * x[i] + k
// (mod 2^32). Each function runs `steps` steps over data[0, n) on `stream` and returns when the
// last one has finished.
constexpr int kKernelsPerStep = 20;
void run_sync_each_kernel(unsigned* data, int n, int steps, cudaStream_t stream);  // given
void run_sync_each_step(unsigned* data, int n, int steps, cudaStream_t stream);    // given
void run_with_graph(unsigned* data, int n, int steps, cudaStream_t stream);        // exercise 1

// ---- Exercises 2 and 3: the diamond -----------------------------------------------------------
//   prepare:       mid   = 2 * in + 1          (A)
//   left_branch:   left  = mid * mid           (B, after A)
//   right_branch:  right = mid ^ (mid >> 3)    (C, after A)
//   combine:       out   = left + right, and *checksum += every out[i]  (D, after B and C, and
//                  after the checksum is cleared)
//   then out is copied to out_host.
struct DiamondBuffers {
    int n = 0;
    const unsigned* in = nullptr;
    unsigned* mid = nullptr;
    unsigned* left = nullptr;
    unsigned* right = nullptr;
    unsigned* out = nullptr;
    unsigned long long* checksum = nullptr;  // one value, garbage on entry: the graph clears it
    unsigned* out_host = nullptr;            // pinned host memory, n values
};
// The addresses of the four given kernels, as a kernel node's parameters name them.
struct DiamondKernels {
    const void* prepare;
    const void* left_branch;
    const void* right_branch;
    const void* combine;
};
DiamondKernels diamond_kernels();                                                // given
void run_diamond_in_one_stream(const DiamondBuffers& b, cudaStream_t stream);     // given
cudaGraph_t build_diamond(const DiamondBuffers& b);                              // exercise 2
cudaGraph_t capture_diamond(const DiamondBuffers& b, cudaStream_t stream);       // exercise 3

// ---- Exercise 4: update an executable graph -----------------------------------------------------
// One step of exercise 1 as a graph with a kernel node per launch, instantiated.
struct StepGraph {
    cudaGraph_t graph = nullptr;
    cudaGraphExec_t exec = nullptr;
    cudaGraphNode_t kernels[kKernelsPerStep] = {};  // kernels[k] adds increment k to start with
    unsigned* data = nullptr;
    int n = 0;
};
StepGraph make_step_graph(unsigned* data, int n);  // given
void destroy_step_graph(StepGraph& g);             // given
// Makes kernel node `kernel` of g.exec add `increment` from its next launch on, without
// instantiating again: g.exec stays the same executable graph.
void set_increment(StepGraph& g, int kernel, unsigned increment);  // exercise 4

// ---- Exercise 5: a conditional while node ------------------------------------------------------
// Collatz steps: every value x != 1 becomes x / 2 when even, 3x + 1 when odd, and its count in
// steps[] goes up by one; values at 1 stay. Repeated until every value is 1.
struct CollatzBuffers {
    int n = 0;
    unsigned long long* values = nullptr;  // 1 <= values[i]; all 1 at the end
    unsigned* steps = nullptr;             // zero on entry; the number of steps each value took
    int* any_left = nullptr;               // one int for your flag, garbage on entry
    int* any_left_host = nullptr;          // pinned host memory, one int (the host loop's copy)
};
int collatz_host_loop(const CollatzBuffers& b, cudaStream_t stream);  // given; returns the steps run
// A graph that runs the whole loop on the GPU, with a conditional while node.
cudaGraph_t build_collatz_graph(const CollatzBuffers& b);  // exercise 5

// ---- Exercise 6: an L2 access policy window on a kernel node -------------------------------------
// Gives kernel_node the attribute cudaLaunchAttributeAccessPolicyWindow: accesses to
// [base, base + bytes) persist in L2 on a hit and stream on a miss. The window is clamped to the
// device's largest (accessPolicyMaxWindowSize) and its hit ratio is the share of the window that
// fits in the L2 set aside for persisting accesses (cudaLimitPersistingL2CacheSize), at most 1.
void add_persisting_window(cudaGraphNode_t kernel_node, void* base, size_t bytes);  // exercise 6

}  // namespace ch07
