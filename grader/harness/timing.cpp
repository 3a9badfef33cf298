#include "timing.h"

#include <algorithm>
#include <chrono>
#include <numeric>
#include <vector>

#include "buffers.h"
#include "cuda_check.h"

namespace grade {

namespace {

using HostClock = std::chrono::steady_clock;

double seconds_since(HostClock::time_point start) {
    return std::chrono::duration<double>(HostClock::now() - start).count();
}

bool every_contender_has_enough(const StoppingRule& rule, const std::vector<std::vector<double>>& samples,
                                HostClock::time_point began) {
    for (const std::vector<double>& s : samples)
        if (!enough_samples(rule, s, seconds_since(began))) return false;
    return true;
}

// One timed call, by the race's clock.
double time_call(const Contender& c, cudaStream_t stream, int call, Clock clock, const Event& start,
                 const Event& stop) {
    switch (clock) {
        case Clock::stream_events:
            CUDA_CHECK(cudaEventRecord(start, stream));
            c.run(stream, call);
            CUDA_CHECK(cudaEventRecord(stop, stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            return elapsed_ms(start, stop);
        case Clock::device_wide: {
            CUDA_CHECK(cudaDeviceSynchronize());
            const auto t0 = HostClock::now();
            c.run(stream, call);
            CUDA_CHECK(cudaDeviceSynchronize());
            return seconds_since(t0) * 1e3;
        }
        case Clock::reported: return c.timed(stream, call);
    }
    return 0;
}

}  // namespace

void flush_l2(cudaStream_t stream) {
    static DeviceBuffer<char>* scratch = [] {
        int device = 0, l2 = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
        return new DeviceBuffer<char>(2 * static_cast<size_t>(l2));  // lives as long as the process
    }();
    CUDA_CHECK(cudaMemsetAsync(scratch->get(), 0, scratch->bytes(), stream));
}

Summary time_on_stream(const StreamWork& work, cudaStream_t stream, const TimingOptions& options) {
    for (int i = 0; i < options.warmup; ++i) work(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    Event start, stop;
    std::vector<double> samples;
    const auto began = HostClock::now();
    do {
        if (options.flush_l2) flush_l2(stream);
        CUDA_CHECK(cudaEventRecord(start, stream));
        work(stream);
        CUDA_CHECK(cudaEventRecord(stop, stream));
        CUDA_CHECK(cudaEventSynchronize(stop));
        samples.push_back(elapsed_ms(start, stop));
    } while (!enough_samples(options.stop, samples, seconds_since(began)));
    return summarize(samples);
}

Summary time_device_wide(const std::function<void()>& work, const TimingOptions& options) {
    for (int i = 0; i < options.warmup; ++i) work();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<double> samples;
    const auto began = HostClock::now();
    do {
        if (options.flush_l2) {
            flush_l2(nullptr);
            CUDA_CHECK(cudaDeviceSynchronize());
        }
        const auto t0 = HostClock::now();
        work();
        CUDA_CHECK(cudaDeviceSynchronize());
        samples.push_back(seconds_since(t0) * 1e3);
    } while (!enough_samples(options.stop, samples, seconds_since(began)));
    return summarize(samples);
}

RaceResult race(const std::vector<Contender>& contenders, const std::function<void(int call)>& vary,
                cudaStream_t stream, Clock clock, const TimingOptions& options) {
    RaceResult result;
    std::vector<std::vector<double>> samples(contenders.size());
    std::vector<size_t> order(contenders.size());
    std::iota(order.begin(), order.end(), 0);
    Event start, stop;
    auto began = HostClock::now();
    for (int round = 0;; ++round) {
        const bool warmup = round < options.warmup;
        if (round == options.warmup) began = HostClock::now();
        if (vary) vary(round);
        for (size_t i : order) {
            const Contender& c = contenders[i];
            if (c.before) c.before(stream, round);
            if (options.flush_l2) flush_l2(stream);
            const double ms = time_call(c, stream, round, clock, start, stop);
            CUDA_CHECK(cudaDeviceSynchronize());  // whatever the call left running is over before it is read
            if (c.verify) {
                const std::string wrong = c.verify(round);
                if (!wrong.empty()) {
                    result.wrong_contender = static_cast<int>(i);
                    result.wrong = c.name + ", timed call " + std::to_string(round + 1) + ": " + wrong;
                    return result;
                }
            }
            if (!warmup) samples[i].push_back(ms);
        }
        std::reverse(order.begin(), order.end());
        if (!warmup) {
            result.rounds = round + 1 - options.warmup;
            if (every_contender_has_enough(options.stop, samples, began)) break;
        }
    }
    for (const std::vector<double>& s : samples) result.times.push_back(summarize(s));
    return result;
}

}  // namespace grade
