#include "timing.h"

#include <chrono>
#include <vector>

#include "buffers.h"
#include "cuda_check.h"

namespace grade {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
}

class Event {
public:
    Event() { CUDA_CHECK(cudaEventCreate(&e_)); }
    ~Event() { cudaEventDestroy(e_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    operator cudaEvent_t() const { return e_; }

private:
    cudaEvent_t e_ = nullptr;
};

float elapsed_ms(const Event& start, const Event& stop) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

bool every_variant_has_enough(const StoppingRule& rule, const std::vector<std::vector<double>>& samples,
                              Clock::time_point began) {
    for (const std::vector<double>& s : samples)
        if (!enough_samples(rule, s, seconds_since(began))) return false;
    return true;
}

std::vector<Summary> summarize_each(const std::vector<std::vector<double>>& samples) {
    std::vector<Summary> result;
    for (const std::vector<double>& s : samples) result.push_back(summarize(s));
    return result;
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
    const auto began = Clock::now();
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
    return time_rotating_device_wide({work}, options)[0];
}

Interleaved time_interleaved(const StreamWork& baseline, const StreamWork& candidate, cudaStream_t stream,
                             const TimingOptions& options) {
    const std::vector<Summary> t = time_rotating({baseline, candidate}, stream, options);
    return {t[0], t[1]};
}

std::vector<Summary> time_rotating(const std::vector<StreamWork>& variants, cudaStream_t stream,
                                   const TimingOptions& options) {
    for (int i = 0; i < options.warmup; ++i)
        for (const StreamWork& work : variants) work(stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<Event> starts(variants.size()), stops(variants.size());
    std::vector<std::vector<double>> samples(variants.size());
    const auto began = Clock::now();
    do {
        for (size_t v = 0; v < variants.size(); ++v) {
            if (options.flush_l2) flush_l2(stream);
            CUDA_CHECK(cudaEventRecord(starts[v], stream));
            variants[v](stream);
            CUDA_CHECK(cudaEventRecord(stops[v], stream));
        }
        CUDA_CHECK(cudaEventSynchronize(stops.back()));
        for (size_t v = 0; v < variants.size(); ++v) samples[v].push_back(elapsed_ms(starts[v], stops[v]));
    } while (!every_variant_has_enough(options.stop, samples, began));
    return summarize_each(samples);
}

std::vector<Summary> time_rotating_device_wide(const std::vector<std::function<void()>>& variants,
                                               const TimingOptions& options) {
    for (int i = 0; i < options.warmup; ++i)
        for (const auto& work : variants) work();
    CUDA_CHECK(cudaDeviceSynchronize());
    std::vector<std::vector<double>> samples(variants.size());
    const auto began = Clock::now();
    do {
        for (size_t v = 0; v < variants.size(); ++v) {
            if (options.flush_l2) {
                flush_l2(nullptr);
                CUDA_CHECK(cudaDeviceSynchronize());
            }
            const auto t0 = Clock::now();
            variants[v]();
            CUDA_CHECK(cudaDeviceSynchronize());
            samples[v].push_back(seconds_since(t0) * 1e3);
        }
    } while (!every_variant_has_enough(options.stop, samples, began));
    return summarize_each(samples);
}

}  // namespace grade
