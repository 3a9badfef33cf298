// Timing GPU work: warm-up, then samples until the noise is low (or a cap is reached), reported as
// median and spread. docs/maintainers.md explains the method.
//
// - time_on_stream: CUDA events around work that runs on one stream.
// - time_device_wide: the host clock around a device-wide synchronize, for work that spans
//   streams (an event on the legacy default stream does not wait for non-blocking streams).
// - race: several ways of doing the same work (the student's code, the reference, baselines),
//   timed in turn on the same inputs, inputs changed between rounds, every timed call verified.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <string>
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

// How a race reads the time of a call.
enum class Clock {
    stream_events,  // events on the race's stream around the call: work that stays on that stream
    device_wide,    // the host clock from an idle device to a device-wide synchronize after the call
    reported,       // the contender's `timed` function measures itself and returns milliseconds
};

// One way of doing the work being timed.
struct Contender {
    std::string name;  // "your code", "the reference", "step 0"...
    // A baseline doing other work than the graded code at the memory's pace (a copy, say): the
    // bytes its call moves. The report then compares bandwidths, not times.
    double bytes = 0;
    // The timed call number `call` (every contender gets the same numbers, round by round).
    std::function<void(cudaStream_t stream, int call)> run;
    // Clock::reported only: runs call `call` and returns its milliseconds.
    std::function<double(cudaStream_t stream, int call)> timed;
    // Untimed, before each call: poison outputs, reset state.
    std::function<void(cudaStream_t stream, int call)> before;
    // Untimed, right after each call: what is wrong with its output ("" when right). Baselines
    // whose output nobody reads may leave it empty.
    std::function<std::string(int call)> verify;
};

struct RaceResult {
    std::vector<Summary> times;  // milliseconds, one per contender, in their order
    int rounds = 0;
    // The first wrong output of a timed call, if any: the race stops there.
    int wrong_contender = -1;
    std::string wrong;
};

// Rounds of one call per contender, in an order that alternates (A B C, then C B A) so that none
// always follows the same one. Before each round, `vary(call)` changes the inputs, untimed: no
// call can reuse an earlier call's answer. The first `options.warmup` rounds are not counted.
RaceResult race(const std::vector<Contender>& contenders, const std::function<void(int call)>& vary,
                cudaStream_t stream, Clock clock, const TimingOptions& options = {});

// Evicts the L2 cache by writing a buffer twice its size.
void flush_l2(cudaStream_t stream);

}  // namespace grade
