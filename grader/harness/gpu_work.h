// Kernels the graders use as known work.
#pragma once
#include <cuda_runtime.h>

namespace grade {

// One thread that spins on the GPU's global timer for `microseconds`, then adds 1 to *counter
// (when given): work of a known length, whatever the clocks.
void launch_busy_wait(double microseconds, cudaStream_t stream, int* counter = nullptr);

// Launches an empty kernel with this configuration and returns the launch's error: what the
// runtime says about a configuration, to compare a student's answer with.
cudaError_t launch_error_for(int blocks, int threads_per_block);

// Launches an empty kernel and waits: tells whether this build carries code the GPU can run.
cudaError_t launch_probe_kernel();

}  // namespace grade
