// Chapter 04 (streams): the functions the grader calls. Your streams.cu implements them; do not
// change this file, or the grader will not build against your code.
//
// Host pointers named *_pinned are page-locked (cudaMallocHost); device pointers come from
// cudaMalloc.
//
// No include guard: the grader includes this file twice, once for the code it grades and once,
// under another namespace, for its own copy of the reference solution.
#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>
#include <thread>
#include <vector>

namespace ch04 {

// ---- Exercise 1: overlap copies and compute -----------------------------------------------------
// A pipeline's three stages for the elements [offset, offset + count), each issued into `stream`:
// copy the input to the device, compute, copy the output back. The grader provides them (so
// that it can time and trace each one).
struct Stages {
    std::function<void(size_t offset, size_t count, cudaStream_t stream)> copy_in, compute, copy_out;
};
// The kernel behind Stages::compute: out[i] = f(in[i]) for i < count, f a few dozen sines and
// cosines. Given.
void launch_compute(const float* in, float* out, size_t count, cudaStream_t stream);

// Each runs the three stages over [0, n) and returns when everything is done.
void run_sequential(const Stages& stages, size_t n, cudaStream_t stream);  // given: one stream, whole
void run_depth_first(const Stages& stages, size_t n, int streams);          // exercise 1a
void run_breadth_first(const Stages& stages, size_t n, int streams);        // exercise 1b
// In 1a and 1b, chunk k of `streams` equal chunks (the last one takes the remainder) goes to
// stream k. Depth first: one loop that issues copy in, compute and copy out of each chunk.
// Breadth first: a loop of every copy in, then one of every compute, then one of every copy out.

// ---- Exercise 2: the legacy default stream ------------------------------------------------------
// Launches a long kernel (adds 1 to counters[0]) in one stream, a short one (counters[1]) in a
// default stream, a long one (counters[2]) in another stream, and returns when all three are done.
void launch_long(int* counter, cudaStream_t stream);   // given: about 5 ms of work
void launch_short(int* counter, cudaStream_t stream);  // given
void run_around_default_stream_blocking(int* counters);  // given: the long kernels run one after the other
void run_around_default_stream(int* counters);           // exercise 2: the long kernels overlap

// ---- Exercise 3: events for dependencies --------------------------------------------------------
// mid = 2 * in on `producer` (given launch, which takes about 20 ms), then out = mid + 1 on
// `consumer` (given launch), which must see the whole of mid. Returns at once: the host waits for
// nothing.
void launch_produce(const int* in, int* mid, int n, cudaStream_t stream);  // given
void launch_consume(const int* mid, int* out, int n, cudaStream_t stream);  // given
void produce_then_consume(const int* in, int* mid, int* out, int n, cudaStream_t producer,
                          cudaStream_t consumer);  // exercise 3

// ---- Exercise 4: host functions in a stream ----------------------------------------------------
// Round r: fill device[0, n) with round r's values (given), copy them to host_pinned, then report
// their sum from the host through report_sum (given), in stream order. All rounds are issued
// before the host waits, once, at the end.
struct RoundReport {
    int round = -1;
    long long sum = 0;
    std::thread::id thread;  // the thread the report ran on
};
struct ReportContext {  // what report_sum reads: round r's copy of the values
    const int* host_pinned = nullptr;
    int n = 0;
    int round = 0;
    std::vector<RoundReport>* reports = nullptr;
};
void launch_fill(int* device, int n, int round, cudaStream_t stream);  // given: device[i] = i * (round + 1) % 1000
void report_sum(void* context);  // given: a host function; `context` is a ReportContext*
void report_rounds(int* device, int* host_pinned, int n, int rounds, cudaStream_t stream,
                   std::vector<RoundReport>* reports);  // exercise 4

// ---- Exercise 5: stream priorities ----------------------------------------------------------------
// Creates two non-blocking streams: `background` for a backlog of long work, `urgent` for short
// work that should start as soon as the GPU has room, ahead of the backlog.
void create_priority_streams(cudaStream_t* background, cudaStream_t* urgent);  // exercise 5

// ---- Exercise 6: programmatic dependent launch -----------------------------------------------------
// `pairs` pairs of kernels on `stream`, n = 128 * blocks threads: the primary writes mid from in
// (pair p adds p), the secondary computes a value of its own, then out[p * n + i] = mid[i] + that
// value. The secondary's own value does not depend on the primary.
void run_pairs(const float* in, float* mid, float* out, int n, int pairs, cudaStream_t stream);      // given
void run_pairs_pdl(const float* in, float* mid, float* out, int n, int pairs, cudaStream_t stream);  // exercise 6
constexpr int kChainLength = 4000;  // the dependent multiply-adds in each kernel's work

// ---- Exercise 7: asynchronous errors -------------------------------------------------------------
// Launches scale (given), then a kernel that writes through a null pointer (given), on `stream`;
// then waits for the stream with CHECK, catching what it throws.
struct AsyncErrorReport {
    cudaError_t at_launch = cudaErrorUnknown;  // cudaGetLastError right after the faulting launch
    std::string caught;                        // the message of the CHECK that caught the fault
};
void launch_scale(float* data, int n, cudaStream_t stream);  // given
void launch_faulty(cudaStream_t stream);                     // given
AsyncErrorReport run_with_fault(float* data, int n, cudaStream_t stream);  // exercise 7

// ---- Exercise 8: polling instead of waiting ----------------------------------------------------------
// Launches launch_long(counter, stream), then calls host_step() again and again until the kernel
// has finished, asking the GPU between steps without blocking (cudaEventQuery or cudaStreamQuery);
// returns the number of host steps made. Returns once the kernel has finished.
int work_while_waiting(int* counter, cudaStream_t stream, const std::function<void()>& host_step);  // exercise 8

// ---- Exercise 9: the per-thread default stream ------------------------------------------------------
// Starts `threads` host threads; thread t launches launch_long(&counters[t], ...) into its own
// per-thread default stream, so that the kernels run side by side. Returns once every kernel has
// finished and every thread has been joined.
void run_from_threads(int* counters, int threads);  // exercise 9

}  // namespace ch04
