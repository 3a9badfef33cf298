// Chapter 07: CUDA graphs. Reference solution.
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

// One step captured into a graph, instantiated once, launched once per step: one launch call
// for 20 kernels, which the GPU runs back to back.
void run_with_graph(unsigned* data, int n, int steps, cudaStream_t stream) {
    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    launch_step(data, n, stream);  // recorded, not run
    CHECK(cudaStreamEndCapture(stream, &graph));
    cudaGraphExec_t exec;
    CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CHECK(cudaGraphDestroy(graph));  // the executable graph does not need it
    for (int step = 0; step < steps; ++step) {
        CHECK(cudaGraphLaunch(exec, stream));
        CHECK(cudaStreamSynchronize(stream));
    }
    CHECK(cudaGraphExecDestroy(exec));
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

// Exercise 2: every node added with exactly the dependencies its data needs. The checksum's
// clearing needs nothing, so it is a root and runs alongside prepare.
cudaGraph_t build_diamond(const DiamondBuffers& b) {
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    // The kernels' arguments, as lvalues of the kernels' parameter types.
    int n = b.n;
    const unsigned* in = b.in;
    const unsigned* mid_in = b.mid;
    const unsigned* left_in = b.left;
    const unsigned* right_in = b.right;
    unsigned *mid = b.mid, *left = b.left, *right = b.right, *out = b.out;
    unsigned long long* checksum = b.checksum;
    void* prepare_args[] = {&in, &mid, &n};
    void* left_args[] = {&mid_in, &left, &n};
    void* right_args[] = {&mid_in, &right, &n};
    void* combine_args[] = {&left_in, &right_in, &out, &n, &checksum};
    const DiamondKernels k = diamond_kernels();
    const int blocks = blocks_for(n);

    cudaMemsetParams clear{};
    clear.dst = b.checksum;
    clear.value = 0;
    clear.elementSize = 4;  // 1, 2 or 4 bytes: the 8-byte checksum is two 4-byte elements
    clear.width = sizeof(*b.checksum) / 4;
    clear.height = 1;
    cudaGraphNode_t clear_checksum;
    CHECK(cudaGraphAddMemsetNode(&clear_checksum, graph, nullptr, 0, &clear));

    const cudaGraphNode_t a = add_kernel_node(graph, {}, k.prepare, blocks, prepare_args);
    const cudaGraphNode_t b_node = add_kernel_node(graph, {a}, k.left_branch, blocks, left_args);
    const cudaGraphNode_t c_node = add_kernel_node(graph, {a}, k.right_branch, blocks, right_args);
    const cudaGraphNode_t d = add_kernel_node(graph, {b_node, c_node, clear_checksum}, k.combine, blocks, combine_args);

    cudaGraphNode_t copy_out;
    CHECK(cudaGraphAddMemcpyNode1D(&copy_out, graph, &d, 1, b.out_host, b.out, n * sizeof(unsigned),
                                   cudaMemcpyDeviceToHost));
    return graph;
}

// Exercise 3: the same operations captured from two streams. Recording an event in the capturing
// stream and waiting for it in a second stream forks the capture; the second stream's work then
// depends only on what came before the event. Waiting in the first stream for an event recorded
// in the second joins it back, which the capture requires before it ends.
cudaGraph_t capture_diamond(const DiamondBuffers& b, cudaStream_t stream) {
    cudaStream_t side;
    CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
    cudaEvent_t forked, joined;
    CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
    CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
    const int blocks = blocks_for(b.n);

    cudaGraph_t graph;
    CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    CHECK(cudaMemsetAsync(b.checksum, 0, sizeof(*b.checksum), stream));
    prepare<<<blocks, kThreads, 0, stream>>>(b.in, b.mid, b.n);
    CHECK(cudaEventRecord(forked, stream));
    CHECK(cudaStreamWaitEvent(side, forked, 0));  // fork: `side` joins the capture after prepare
    right_branch<<<blocks, kThreads, 0, side>>>(b.mid, b.right, b.n);
    CHECK(cudaEventRecord(joined, side));
    left_branch<<<blocks, kThreads, 0, stream>>>(b.mid, b.left, b.n);
    CHECK(cudaStreamWaitEvent(stream, joined, 0));  // join: combine waits for both branches
    combine<<<blocks, kThreads, 0, stream>>>(b.left, b.right, b.out, b.n, b.checksum);
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpyAsync(b.out_host, b.out, b.n * sizeof(unsigned), cudaMemcpyDeviceToHost, stream));
    CHECK(cudaStreamEndCapture(stream, &graph));

    CHECK(cudaEventDestroy(forked));
    CHECK(cudaEventDestroy(joined));
    CHECK(cudaStreamDestroy(side));
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

// The executable graph's node takes the new argument at once (under a microsecond on the H200,
// against some 20 for instantiating the graph again). The graph's own node gets it too, so that
// a later instantiation of g.graph agrees with g.exec.
void set_increment(StepGraph& g, int kernel, unsigned increment) {
    if (kernel < 0 || kernel >= kKernelsPerStep) throw std::out_of_range("set_increment: no kernel " + std::to_string(kernel));
    void* args[] = {&g.data, &g.n, &increment};
    const cudaKernelNodeParams p =
        kernel_node_params(reinterpret_cast<const void*>(advance_kernel), blocks_for(g.n), args);
    CHECK(cudaGraphExecKernelNodeSetParams(g.exec, g.kernels[kernel], &p));
    CHECK(cudaGraphKernelNodeSetParams(g.kernels[kernel], &p));
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

// Collatz steps per check of the condition. A step on values that are all 1 changes nothing, so
// running a few too many is harmless, and each round of the while node costs some 4 us on the
// H200 (section 9 of the notes): 8 steps per round make that cost small.
constexpr int kStepsPerCheck = 8;

// The last node of the loop's body: repeat while some value is not 1, and clear the flag for
// the next round. One thread: concurrent cudaGraphSetConditional calls are undefined.
__global__ void decide_whether_to_repeat(cudaGraphConditionalHandle repeat, int* any_left) {
    cudaGraphSetConditional(repeat, *any_left != 0);
    *any_left = 0;
}

cudaGraph_t build_collatz_graph(const CollatzBuffers& b) {
    cudaGraph_t graph;
    CHECK(cudaGraphCreate(&graph, 0));
    // The handle's value is set to 1 at every launch of the graph, so the body runs at least once.
    cudaGraphConditionalHandle repeat;
    CHECK(cudaGraphConditionalHandleCreate(&repeat, graph, 1, cudaGraphCondAssignDefault));

    cudaMemsetParams clear{};
    clear.dst = b.any_left;
    clear.value = 0;
    clear.elementSize = sizeof(int);
    clear.width = 1;
    clear.height = 1;
    cudaGraphNode_t clear_flag;
    CHECK(cudaGraphAddMemsetNode(&clear_flag, graph, nullptr, 0, &clear));

    cudaGraphNodeParams loop{};
    loop.type = cudaGraphNodeTypeConditional;
    loop.conditional.handle = repeat;
    loop.conditional.type = cudaGraphCondTypeWhile;
    loop.conditional.size = 1;  // a while node has one body graph
    add_node(graph, {clear_flag}, &loop);
    cudaGraph_t body = loop.conditional.phGraph_out[0];  // created with the node, owned by it

    unsigned long long* values = b.values;
    unsigned* steps = b.steps;
    int n = b.n;
    int* any_left = b.any_left;
    void* step_args[] = {&values, &steps, &n, &any_left};
    const void* step = reinterpret_cast<const void*>(collatz_step);
    cudaGraphNode_t last = add_kernel_node(body, {}, step, blocks_for(n), step_args);
    for (int s = 1; s < kStepsPerCheck; ++s) last = add_kernel_node(body, {last}, step, blocks_for(n), step_args);

    void* decide_args[] = {&repeat, &any_left};
    cudaKernelNodeParams decide = kernel_node_params(reinterpret_cast<const void*>(decide_whether_to_repeat), 1, decide_args);
    decide.blockDim = dim3(1);
    cudaGraphNode_t decide_node;
    CHECK(cudaGraphAddKernelNode(&decide_node, body, &last, 1, &decide));
    return graph;
}

// ---- Exercise 6: an access policy window on a kernel node ----------------------------------------------
void add_persisting_window(cudaGraphNode_t kernel_node, void* base, size_t bytes) {
    int device = 0, max_window = 0;
    CHECK(cudaGetDevice(&device));
    CHECK(cudaDeviceGetAttribute(&max_window, cudaDevAttrMaxAccessPolicyWindowSize, device));
    size_t set_aside = 0;
    CHECK(cudaDeviceGetLimit(&set_aside, cudaLimitPersistingL2CacheSize));
    const size_t window = std::min(bytes, static_cast<size_t>(max_window));

    cudaLaunchAttributeValue value{};
    value.accessPolicyWindow.base_ptr = base;
    value.accessPolicyWindow.num_bytes = window;
    // Asking more of the window to persist than the set-aside holds makes persisting lines evict
    // each other: the hit ratio scales the window down to what fits.
    value.accessPolicyWindow.hitRatio = window == 0 ? 0.0f : std::min(1.0f, static_cast<float>(double(set_aside) / window));
    value.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    value.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    CHECK(cudaGraphKernelNodeSetAttribute(kernel_node, cudaLaunchAttributeAccessPolicyWindow, &value));
}

}  // namespace ch07
