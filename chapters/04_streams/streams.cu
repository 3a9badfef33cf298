// Chapter 04: streams, events and asynchronous execution. Your exercise: replace every TODO.
//
// Read notes/04_streams.md first. The exercises, in the order of the notes:
//   1. overlap copies and compute over many streams, in two loop orders
//   2. keep the legacy default stream from serializing two other streams
//   3. make one stream wait for another with an event, without the host waiting
//   4. host functions in stream order (cudaLaunchHostFunc)
//   5. stream priorities
//   6. programmatic dependent launch
//   7. an asynchronous error, caught where it surfaces
#include "04_streams.h"
#include "check.h"

namespace ch04 {

constexpr int kThreads = 256;
int blocks_for(size_t n) { return static_cast<int>((n + kThreads - 1) / kThreads); }

// Spins on the GPU's global timer: work of a known length, whatever the clocks.
__device__ void spin_for(unsigned long long nanoseconds) {
    unsigned long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < nanoseconds);
}

// ---- Exercise 1: overlap copies and compute ------------------------------------------------------
__global__ void compute_kernel(const float* in, float* out, size_t count) {
    const size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
    if (i >= count) return;
    float x = in[i];
    for (int k = 0; k < 40; ++k) x = 0.5f * sinf(x) + 0.5f * cosf(x);
    out[i] = x;
}

void launch_compute(const float* in, float* out, size_t count, cudaStream_t stream) {
    if (count == 0) return;
    compute_kernel<<<blocks_for(count), kThreads, 0, stream>>>(in, out, count);
    CHECK(cudaGetLastError());
}

// Given: the whole input in, all of it computed, the whole output back: each stage waits for the
// one before, and the copy engines and the SMs take turns.
void run_sequential(const Stages& stages, size_t n, cudaStream_t stream) {
    stages.copy_in(0, n, stream);
    stages.compute(0, n, stream);
    stages.copy_out(0, n, stream);
    CHECK(cudaStreamSynchronize(stream));
}

// Exercise 1a.
void run_depth_first(const Stages& stages, size_t n, int streams) {
    // TODO: create `streams` non-blocking streams; split [0, n) into `streams` chunks (the last one
    // takes the remainder); in one loop, issue chunk k's copy_in, compute and copy_out into stream
    // k. Then wait for every stream and destroy them.
}

// Exercise 1b.
void run_breadth_first(const Stages& stages, size_t n, int streams) {
    // TODO: as run_depth_first, but in three loops: every chunk's copy_in, then every compute, then
    // every copy_out.
}

// ---- Exercise 2: the legacy default stream -------------------------------------------------------------
__global__ void spin_and_count(int* counter, unsigned long long nanoseconds) {
    spin_for(nanoseconds);
    atomicAdd(counter, 1);
}

void launch_long(int* counter, cudaStream_t stream) {
    spin_and_count<<<1, 1, 0, stream>>>(counter, 5'000'000);
    CHECK(cudaGetLastError());
}

void launch_short(int* counter, cudaStream_t stream) {
    spin_and_count<<<1, 1, 0, stream>>>(counter, 10'000);
    CHECK(cudaGetLastError());
}

// Given: the three launches of exercise 2, then a wait for all of them.
void launch_long_short_long(int* counters, cudaStream_t first, cudaStream_t default_stream, cudaStream_t second) {
    launch_long(&counters[0], first);
    launch_short(&counters[1], default_stream);
    launch_long(&counters[2], second);
    CHECK(cudaDeviceSynchronize());
}

// Given: streams from cudaStreamCreate are blocking. The kernel in the legacy default stream waits
// for the first long kernel, and the second long kernel waits for it: the long kernels take turns.
void run_around_default_stream_blocking(int* counters) {
    cudaStream_t first, second;
    CHECK(cudaStreamCreate(&first));
    CHECK(cudaStreamCreate(&second));
    launch_long_short_long(counters, first, cudaStreamLegacy, second);
    CHECK(cudaStreamDestroy(first));
    CHECK(cudaStreamDestroy(second));
}

// Exercise 2.
void run_around_default_stream(int* counters) {
    // TODO: launch_long_short_long with streams chosen so that the two long kernels can run at the
    // same time; destroy the streams you create.
}

// ---- Exercise 3: events for dependencies ----------------------------------------------------------------
// Takes its time, then writes all of mid: a consumer that does not wait reads what was there.
__global__ void produce(const int* in, int* mid, int n) {
    if (threadIdx.x == 0) spin_for(20'000'000);
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) mid[i] = 2 * in[i];
}

__global__ void consume(const int* mid, int* out, int n) {
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) out[i] = mid[i] + 1;
}

void launch_produce(const int* in, int* mid, int n, cudaStream_t stream) {
    produce<<<32, kThreads, 0, stream>>>(in, mid, n);
    CHECK(cudaGetLastError());
}

void launch_consume(const int* mid, int* out, int n, cudaStream_t stream) {
    consume<<<blocks_for(n), kThreads, 0, stream>>>(mid, out, n);
    CHECK(cudaGetLastError());
}

// Exercise 3.
void produce_then_consume(const int* in, int* mid, int* out, int n, cudaStream_t producer, cudaStream_t consumer) {
    // TODO: launch_produce on `producer`, then launch_consume on `consumer`, which must not start
    // before the producer is done. The host must not wait: no synchronize of any kind.
}

// ---- Exercise 4: host functions in a stream -----------------------------------------------------------------
__global__ void fill(int* device, int n, int round) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) device[i] = static_cast<int>((static_cast<long long>(i) * (round + 1)) % 1000);
}

void launch_fill(int* device, int n, int round, cudaStream_t stream) {
    fill<<<blocks_for(n), kThreads, 0, stream>>>(device, n, round);
    CHECK(cudaGetLastError());
}

// Runs on a thread of the CUDA runtime, in stream order: after the copy before it, and before
// anything issued after it starts. It must not call CUDA.
void report_sum(void* context) {
    const ReportContext& c = *static_cast<const ReportContext*>(context);
    long long sum = 0;
    for (int i = 0; i < c.n; ++i) sum += c.host_pinned[i];
    c.reports->push_back({c.round, sum, std::this_thread::get_id()});
}

// Exercise 4.
void report_rounds(int* device, int* host_pinned, int n, int rounds, cudaStream_t stream,
                   std::vector<RoundReport>* reports) {
    // TODO: for each round r: launch_fill, copy device to host_pinned, then enqueue report_sum
    // with a ReportContext for round r (cudaLaunchHostFunc). Wait once, at the end. The contexts
    // must live until their host functions have run.
}

// ---- Exercise 5: stream priorities ----------------------------------------------------------------------------
void create_priority_streams(cudaStream_t* background, cudaStream_t* urgent) {
    // TODO: the device's priority range (cudaDeviceGetStreamPriorityRange), then two non-blocking
    // streams (cudaStreamCreateWithPriority): background at the lowest priority, urgent at the
    // highest.
}

// ---- Exercise 6: programmatic dependent launch -------------------------------------------------------------------
// A chain of dependent multiply-adds: latency-bound work that leaves most of an SM's issue slots
// free, so that a second kernel's blocks on the same SM can run alongside.
__device__ float chain(float x) {
    for (int i = 0; i < kChainLength; ++i) x = fmaf(x, 0.999f, 0.001f);
    return x;
}

__global__ void primary(const float* in, float* mid, int pair) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    mid[i] = chain(in[i]) + pair;
}

__global__ void secondary(const float* mid, float* out, int n, int pair) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const float own = chain(static_cast<float>(i % 1024));
    out[pair * n + i] = mid[i] + own;
}

// Given: each secondary starts once its primary has finished and its memory is visible.
void run_pairs(const float* in, float* mid, float* out, int n, int pairs, cudaStream_t stream) {
    for (int p = 0; p < pairs; ++p) {
        primary<<<n / 128, 128, 0, stream>>>(in, mid, p);
        secondary<<<n / 128, 128, 0, stream>>>(mid, out, n, p);
        CHECK(cudaGetLastError());
    }
}

// TODO: primary_pdl, which lets its secondary launch at once
// (cudaTriggerProgrammaticLaunchCompletion), and secondary_pdl, which computes its own value and
// only then waits for the primary (cudaGridDependencySynchronize) before it reads mid. Both calls
// exist from compute capability 9.0: to build for older GPUs too, put them inside
// #if __CUDA_ARCH__ >= 900 ... #endif.

// Exercise 6.
void run_pairs_pdl(const float* in, float* mid, float* out, int n, int pairs, cudaStream_t stream) {
    // TODO: as run_pairs, with your two kernels; launch each secondary with cudaLaunchKernelEx and
    // the attribute cudaLaunchAttributeProgrammaticStreamSerialization set to 1.
}

// ---- Exercise 7: asynchronous errors ---------------------------------------------------------------------------------
__global__ void scale(float* data, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) data[i] *= 2;
}

__global__ void write_through_null(float* p) { *p = 1; }

void launch_scale(float* data, int n, cudaStream_t stream) {
    scale<<<blocks_for(n), kThreads, 0, stream>>>(data, n);
    CHECK(cudaGetLastError());
}

void launch_faulty(cudaStream_t stream) {
    write_through_null<<<1, 1, 0, stream>>>(nullptr);
    CHECK(cudaGetLastError());
}

// Exercise 7.
AsyncErrorReport run_with_fault(float* data, int n, cudaStream_t stream) {
    AsyncErrorReport report;
    // TODO: launch_scale, then launch_faulty; record cudaGetLastError in report.at_launch; then
    // CHECK(cudaStreamSynchronize(stream)) inside a try block, and keep what the catch receives in
    // report.caught.
    return report;
}

// ---- Exercise 8: polling instead of waiting ----------------------------------------------------------
int work_while_waiting(int* counter, cudaStream_t stream, const std::function<void()>& host_step) {
    // TODO: launch_long(counter, stream) and record an event after it; then, while cudaEventQuery
    //       says cudaErrorNotReady, call host_step() and count the steps. CHECK what the last query
    //       returned (cudaSuccess, or a real error). Return the count.
    (void)counter, (void)stream, (void)host_step;
    return 0;
}

// ---- Exercise 9: the per-thread default stream ------------------------------------------------------
void run_from_threads(int* counters, int threads) {
    // TODO: start `threads` std::threads; thread t launches launch_long(&counters[t], ...) into its
    //       own per-thread default stream (cudaStreamPerThread) and waits for that stream. Join
    //       them all; CHECK each thread's error in the calling thread (an exception must not
    //       escape a std::thread).
    (void)counters, (void)threads;
}

}  // namespace ch04
