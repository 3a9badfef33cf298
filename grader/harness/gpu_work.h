// Kernels the graders use as known work, and GPU-side helpers for checking results.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace grade {

// Threads that spin on the GPU's global timer for `microseconds`, then add 1 per block to *counter
// (when given): work of a known length, whatever the clocks. One thread unless told otherwise; many
// blocks make a backlog that occupies every SM for a known time.
void launch_busy_wait(double microseconds, cudaStream_t stream, int* counter = nullptr, int blocks = 1,
                      int threads = 1);

// Launches an empty kernel with this configuration and returns the launch's error: what the
// runtime says about a configuration, to compare a student's answer with.
cudaError_t launch_error_for(int blocks, int threads_per_block);

// Launches an empty kernel and waits: tells whether this build carries code the GPU can run.
cudaError_t launch_probe_kernel();

// How many bytes of the device buffers a and b (`bytes` each) differ, counted on the GPU in
// `stream`; finished when it returns. Checks a timed call's output against the expected one
// without copying either to the host.
unsigned long long count_differences(const void* a, const void* b, size_t bytes, cudaStream_t stream);

// data[i] *= factor for i in [0, n), on `stream`, with no prefetch or advice: chapter 02's baseline
// for managed memory that faults its pages in as the kernel touches them.
void scale_on_device(float* data, size_t n, float factor, cudaStream_t stream);

// Holds the legacy default stream shut while a student's function runs. Work that the function
// puts on the legacy stream, or on a blocking stream (which waits for it), cannot start until the
// gate opens; results read through the stream the contract names therefore show whether the work
// went there. A function that waits on the legacy stream meanwhile (cudaMemcpy,
// cudaDeviceSynchronize) would wait for the gate: the gate gives up after `limit_ms`, and open()
// says so. While it is shut, the grader itself must not use the legacy stream either, nor call
// what synchronizes the device (cudaFree, cudaFreeHost). Needs
// eager module loading (the graders' main sets it): a kernel whose module loads lazily at its first
// launch waits for the kernels already running, the gate's among them.
class LegacyStreamGate {
public:
    // A limit of 0 makes no gate: under compute-sanitizer, which runs one kernel at a time, the
    // gate's kernel would stop everything else.
    explicit LegacyStreamGate(double limit_ms);
    ~LegacyStreamGate();
    LegacyStreamGate(const LegacyStreamGate&) = delete;
    LegacyStreamGate& operator=(const LegacyStreamGate&) = delete;

    // Opens the gate and waits for the device. Returns false when the gate had given up first:
    // something waited on the legacy stream while it was shut.
    bool open();

private:
    volatile int* state_ = nullptr;  // mapped host memory: [0] open, [1] gave up
    bool opened_ = false;
};

}  // namespace grade
