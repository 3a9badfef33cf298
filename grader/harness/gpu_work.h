// Kernels the graders use as known work.
#pragma once
#include <cuda_runtime.h>

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

}  // namespace grade
