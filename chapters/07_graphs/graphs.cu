// Chapter 07: CUDA graphs. Your exercise: replace every TODO.
//
// Read notes/07_graphs.md first. The exercises, in the order of the notes:
//   1. capture a step of 20 short kernels into a graph, instantiate it once, replay it
//   2. build the diamond A -> {B, C} -> D explicitly, with a memset node and a memcpy node
//   3. capture the same diamond from two streams: fork and join with events
//   4. change one kernel node's argument in the executable graph, without instantiating again
//   5. a conditional while node: the Collatz loop on the GPU, no round trip to the host per step
//   6. an L2 access policy window as a kernel node's attribute
#include "07_graphs.h"
#include "check.h"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>
#include <string>

namespace ch07 {

constexpr int kThreads = 256;
int blocks_for(int n) { return (n + kThreads - 1) / kThreads; }

// ---- Given: adding nodes ---------------------------------------------------------------------------
// A kernel node's parameters: the kernel, its launch shape, and one pointer per kernel argument.
// The argument values are copied into the node, so `args` may point at locals.
cudaKernelNodeParams kernel_node_params(const void* kernel, int blocks, void** args) {
    cudaKernelNodeParams p{};
    p.func = const_cast<void*>(kernel);
    p.gridDim = dim3(blocks);
    p.blockDim = dim3(kThreads);
    p.sharedMemBytes = 0;
    p.kernelParams = args;
    return p;
}

// Adds a kernel node that runs after every node of `dependencies` (none: a root of the graph).
cudaGraphNode_t add_kernel_node(cudaGraph_t graph, std::initializer_list<cudaGraphNode_t> dependencies,
                                const void* kernel, int blocks, void** args) {
    const cudaKernelNodeParams p = kernel_node_params(kernel, blocks, args);
    cudaGraphNode_t node;
    CHECK(cudaGraphAddKernelNode(&node, graph, dependencies.begin(), dependencies.size(), &p));
    return node;
}

// cudaGraphAddNode, the call that adds any kind of node (conditional ones too). CUDA 13 gave it
// an argument for edge data (nullptr: plain edges).
cudaGraphNode_t add_node(cudaGraph_t graph, std::initializer_list<cudaGraphNode_t> dependencies,
                         cudaGraphNodeParams* params) {
    cudaGraphNode_t node;
#if CUDART_VERSION >= 13000
    CHECK(cudaGraphAddNode(&node, graph, dependencies.begin(), nullptr, dependencies.size(), params));
#else
    CHECK(cudaGraphAddNode(&node, graph, dependencies.begin(), dependencies.size(), params));
#endif
    return node;
}

// ---- Exercise 1: the short-kernel loop --------------------------------------------------------------
// About a microsecond of work on the H200 for n = 2^16: far less than it takes the host to launch
// it and wait for it.
__global__ void advance_kernel(unsigned* x, int n, unsigned k) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 3 * x[i] + k;
}

void launch_step(unsigned* data, int n, cudaStream_t stream) {
    for (int k = 0; k < kKernelsPerStep; ++k) {
        advance_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, k);
        CHECK(cudaGetLastError());
    }
}

// Given: every launch waits for the one before to finish. The GPU idles while the host learns
// that a kernel finished and launches the next.
void run_sync_each_kernel(unsigned* data, int n, int steps, cudaStream_t stream) {
    for (int step = 0; step < steps; ++step) {
        for (int k = 0; k < kKernelsPerStep; ++k) {
            advance_kernel<<<blocks_for(n), kThreads, 0, stream>>>(data, n, k);
            CHECK(cudaGetLastError());
            CHECK(cudaStreamSynchronize(stream));
        }
    }
}

// Given: a step's launches queue up behind each other; the host waits once per step. Each kernel
// still costs a launch on the host, a few microseconds, longer than the kernel runs.
void run_sync_each_step(unsigned* data, int n, int steps, cudaStream_t stream) {
    for (int step = 0; step < steps; ++step) {
        launch_step(data, n, stream);
        CHECK(cudaStreamSynchronize(stream));
    }
}

// Exercise 1: the same loop with one launch per step.
void run_with_graph(unsigned* data, int n, int steps, cudaStream_t stream) {
    // TODO: capture one step (launch_step) on `stream` into a graph, instantiate it once, then
    // launch it `steps` times, waiting once per step as run_sync_each_step does. Destroy what you
    // created before returning.
}

// ---- Exercises 2 and 3: the diamond ------------------------------------------------------------------
__global__ void prepare(const unsigned* in, unsigned* mid, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) mid[i] = 2 * in[i] + 1;
}

__global__ void left_branch(const unsigned* mid, unsigned* left, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) left[i] = mid[i] * mid[i];
}

__global__ void right_branch(const unsigned* mid, unsigned* right, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) right[i] = mid[i] ^ (mid[i] >> 3);
}

// out = left + right, and the sum of all out[i] into *checksum: one atomic per warp.
__global__ void combine(const unsigned* left, const unsigned* right, unsigned* out, int n,
                        unsigned long long* checksum) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned long long sum = 0;
    if (i < n) {
        out[i] = left[i] + right[i];
        sum = out[i];
    }
    for (int offset = 16; offset > 0; offset /= 2) sum += __shfl_down_sync(0xffffffff, sum, offset);
    if (threadIdx.x % 32 == 0) atomicAdd(checksum, sum);
}

DiamondKernels diamond_kernels() {
    return {reinterpret_cast<const void*>(prepare), reinterpret_cast<const void*>(left_branch),
            reinterpret_cast<const void*>(right_branch), reinterpret_cast<const void*>(combine)};
}

// Given: the diamond issued into one stream, every operation after the one before.
void run_diamond_in_one_stream(const DiamondBuffers& b, cudaStream_t stream) {
    const int blocks = blocks_for(b.n);
    CHECK(cudaMemsetAsync(b.checksum, 0, sizeof(*b.checksum), stream));
    prepare<<<blocks, kThreads, 0, stream>>>(b.in, b.mid, b.n);
    left_branch<<<blocks, kThreads, 0, stream>>>(b.mid, b.left, b.n);
    right_branch<<<blocks, kThreads, 0, stream>>>(b.mid, b.right, b.n);
    combine<<<blocks, kThreads, 0, stream>>>(b.left, b.right, b.out, b.n, b.checksum);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(b.out_host, b.out, b.n * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
}

// Exercise 2: the diamond as a graph you build node by node.
cudaGraph_t build_diamond(const DiamondBuffers& b) {
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    // TODO: add the nodes, each with exactly the dependencies its data needs:
    //   - a memset node that clears *b.checksum (cudaGraphAddMemsetNode; an element is 1, 2 or
    //     4 bytes wide),
    //   - the four kernel nodes (add_kernel_node, with diamond_kernels() and blocks_for(b.n)),
    //   - a memcpy node that copies b.out to b.out_host (cudaGraphAddMemcpyNode1D).
    // A kernel node's arguments are pointers to values of the kernel's parameter types.
    return graph;
}

// Exercise 3: the same operations captured from streams.
cudaGraph_t capture_diamond(const DiamondBuffers& b, cudaStream_t stream) {
    // TODO: this captures the diamond from one stream, so right_branch waits for left_branch.
    // Fork a second stream after prepare and run one branch there, then join it back before
    // combine, with events (cudaEventRecord, cudaStreamWaitEvent). Destroy the stream and events.
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    run_diamond_in_one_stream(b, stream);
    CHECK(cudaStreamEndCapture(stream, &graph));
    return graph;
}

// ---- Exercise 4: updating an executable graph -------------------------------------------------------
// Given: one step as a chain of kernel nodes, kernel k adding k.
StepGraph make_step_graph(unsigned* data, int n) {
    StepGraph g;
    g.data = data;
    g.n = n;
    CHECK(cudaGraphCreate(&g.graph, 0));
    for (int k = 0; k < kKernelsPerStep; ++k) {
        unsigned increment = k;
        void* args[] = {&data, &n, &increment};
        const void* kernel = reinterpret_cast<const void*>(advance_kernel);
        g.kernels[k] = k == 0 ? add_kernel_node(g.graph, {}, kernel, blocks_for(n), args)
                              : add_kernel_node(g.graph, {g.kernels[k - 1]}, kernel, blocks_for(n), args);
    }
    CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));
    return g;
}

void destroy_step_graph(StepGraph& g) {
    if (g.exec) CHECK(cudaGraphExecDestroy(g.exec));
    if (g.graph) CHECK(cudaGraphDestroy(g.graph));
    g = StepGraph{};
}

// Exercise 4.
void set_increment(StepGraph& g, int kernel, unsigned increment) {
    // TODO: give kernel node g.kernels[kernel] of g.exec the arguments (g.data, g.n, increment)
    // without instantiating again (kernel_node_params builds a kernel node's parameters).
}

// ---- Exercise 5: a conditional while node -----------------------------------------------------------
// One Collatz step for every value not yet at 1. Any thread whose value is still not 1 afterwards
// sets *any_left (they all write the same 1, so the race is harmless).
__global__ void collatz_step(unsigned long long* values, unsigned* steps, int n, int* any_left) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned long long x = values[i];
    if (x == 1) return;
    x = x % 2 == 0 ? x / 2 : 3 * x + 1;
    values[i] = x;
    steps[i] += 1;
    if (x != 1) *any_left = 1;
}

// Given: the loop driven from the host. Every step costs a launch, a copy back and a wait.
int collatz_host_loop(const CollatzBuffers& b, cudaStream_t stream) {
    int steps_run = 0;
    do {
        CHECK(cudaMemsetAsync(b.any_left, 0, sizeof(int), stream));
        collatz_step<<<blocks_for(b.n), kThreads, 0, stream>>>(b.values, b.steps, b.n, b.any_left);
        CHECK(cudaGetLastError());
        CHECK(cudaMemcpyAsync(b.any_left_host, b.any_left, sizeof(int), cudaMemcpyDeviceToHost, stream));
        CHECK(cudaStreamSynchronize(stream));
        ++steps_run;
    } while (*b.any_left_host != 0);
    return steps_run;
}

// TODO: a kernel that ends each round of the loop: it sets the while node's condition
// (cudaGraphSetConditional, from one thread) from *any_left, and clears *any_left for the next round.

// Exercise 5.
cudaGraph_t build_collatz_graph(const CollatzBuffers& b) {
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    // TODO: a conditional handle (cudaGraphConditionalHandleCreate), a memset node that clears
    // *b.any_left, then a while node (add_node with a cudaGraphNodeParams of type
    // cudaGraphNodeTypeConditional). Its body graph, which the node creates, runs collatz_step and
    // then your kernel above.
    return graph;
}

// ---- Exercise 6: an access policy window on a kernel node ----------------------------------------------
void add_persisting_window(cudaGraphNode_t kernel_node, void* base, size_t bytes) {
    // TODO: the device's largest window (cudaDevAttrMaxAccessPolicyWindowSize), the L2 set aside
    // for persisting accesses (cudaDeviceGetLimit), then the attribute
    // cudaLaunchAttributeAccessPolicyWindow on the node (cudaGraphKernelNodeSetAttribute), as the
    // contract says.
}

}  // namespace ch07
