// Timing GPU work, as DESIGN.md describes: warm-up, then samples until the noise is low (or a
// cap is reached), reported as median and spread.
//
// - time_on_stream: CUDA events around work that runs on one stream.
// - time_device_wide: the host clock around a device-wide synchronize, for work that spans
//   streams (an event on the legacy default stream does not wait for non-blocking streams).
// - time_interleaved: baseline and candidate alternate (A B A B ...) in the same process, so a
//   drift in clocks or temperature hits both; their ratio is the speedup.
// - time_rotating: the same for any number of variants (A B C A B C ...).
// - time_rotating_device_wide: a rotation timed like time_device_wide, for variants that wait for
//   their own work, span streams, or make host-side calls only (updating a graph, say).
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <vector>

#include "stats.h"

namespace grade {

using StreamWork = std::function<void(cudaStream_t)>;

struct TimingOptions {
    int warmup = 3;
    StoppingRule stop;
    bool flush_l2 = false;  // write a buffer larger than L2 before each sample (cold caches)
};

Summary time_on_stream(const StreamWork& work, cudaStream_t stream, const TimingOptions& options = {});
Summary time_device_wide(const std::function<void()>& work, const TimingOptions& options = {});

struct Interleaved {
    Summary baseline, candidate;  // milliseconds
    double speedup() const { return baseline.median / candidate.median; }
    double noise() const { return baseline.noise + candidate.noise; }  // relative, of the ratio
};
Interleaved time_interleaved(const StreamWork& baseline, const StreamWork& candidate, cudaStream_t stream,
                             const TimingOptions& options = {});
std::vector<Summary> time_rotating(const std::vector<StreamWork>& variants, cudaStream_t stream,
                                   const TimingOptions& options = {});
std::vector<Summary> time_rotating_device_wide(const std::vector<std::function<void()>>& variants,
                                               const TimingOptions& options = {});

// Evicts the L2 cache by writing a buffer twice its size.
void flush_l2(cudaStream_t stream);

}  // namespace grade
