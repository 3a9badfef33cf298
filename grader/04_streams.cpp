// Grader for chapter 04 (streams). One TEST_CASE per exercise, named as in thresholds.json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <sstream>

#include "04_streams.h"
#include "grading.h"

GRADE_CHAPTER("04_streams", 7, 0, "any GPU CUDA 12 supports");

using namespace grade;

namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) { return std::chrono::duration<double, std::milli>(Clock::now() - start).count(); }

std::string fixed(double value, int digits = 2) {
    std::ostringstream s;
    s.precision(digits);
    s << std::fixed << value;
    return s.str();
}

cudaDeviceProp device_properties() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp p{};
    CUDA_CHECK(cudaGetDeviceProperties(&p, device));
    return p;
}

// ---- Exercise 1: the pipeline -----------------------------------------------------------------------
const size_t kPipelineN = (size_t(256) << 20) / sizeof(float);  // 256 MiB each way
const int kStreams = 16;

// f of the compute kernel, in double: the float kernel stays within 1e-5 of it.
double f_on_cpu(float x) {
    double v = x;
    for (int k = 0; k < 40; ++k) v = 0.5 * std::sin(v) + 0.5 * std::cos(v);
    return v;
}

// Events around each operation of a traced run, read back as a timeline.
class Trace {
public:
    explicit Trace(std::string title) : title_(std::move(title)) { CUDA_CHECK(cudaEventCreate(&zero_)); }
    ~Trace() {
        cudaEventDestroy(zero_);
        for (Op& op : ops_) {
            cudaEventDestroy(op.start);
            cudaEventDestroy(op.end);
        }
    }
    Trace(const Trace&) = delete;
    Trace& operator=(const Trace&) = delete;

    void start() { CUDA_CHECK(cudaEventRecord(zero_, cudaStreamLegacy)); }

    template <class Issue>
    void around(const char* kind, cudaStream_t stream, Issue issue) {
        Op op{stream, kind, nullptr, nullptr};
        CUDA_CHECK(cudaEventCreate(&op.start));
        CUDA_CHECK(cudaEventCreate(&op.end));
        CUDA_CHECK(cudaEventRecord(op.start, stream));
        issue();
        CUDA_CHECK(cudaEventRecord(op.end, stream));
        ops_.push_back(op);
    }

    // After the traced run has finished. Streams are numbered in the order they were first used.
    Timeline timeline() const {
        Timeline t{title_, {}};
        std::map<cudaStream_t, int> number;
        for (const Op& op : ops_) {
            if (!number.count(op.stream)) {
                const int next = static_cast<int>(number.size());
                number[op.stream] = next;
            }
            float start = 0, end = 0;
            CUDA_CHECK(cudaEventElapsedTime(&start, zero_, op.start));
            CUDA_CHECK(cudaEventElapsedTime(&end, zero_, op.end));
            t.ops.push_back({number[op.stream], op.kind, start, end});
        }
        return t;
    }

private:
    struct Op {
        cudaStream_t stream;
        std::string kind;
        cudaEvent_t start, end;
    };
    std::string title_;
    cudaEvent_t zero_ = nullptr;
    std::vector<Op> ops_;
};

struct Pipeline {
    PinnedBuffer<float> in, out;
    DeviceBuffer<float> device_in, device_out;
    Trace* trace = nullptr;  // when set, every stage is traced

    Pipeline() : in(kPipelineN), out(kPipelineN), device_in(kPipelineN), device_out(kPipelineN) {
        const std::vector<float> values = random_floats(kPipelineN, seed_for("pipeline"), 0.0f, 1.0f);
        std::copy(values.begin(), values.end(), in.get());
    }

    ch04::Stages stages() {
        ch04::Stages s;
        s.copy_in = [this](size_t offset, size_t count, cudaStream_t stream) {
            traced("copy in", stream, [&] {
                CUDA_CHECK(cudaMemcpyAsync(device_in.get() + offset, in.get() + offset, count * sizeof(float),
                                           cudaMemcpyHostToDevice, stream));
            });
        };
        s.compute = [this](size_t offset, size_t count, cudaStream_t stream) {
            traced("compute", stream,
                   [&] { ch04::launch_compute(device_in.get() + offset, device_out.get() + offset, count, stream); });
        };
        s.copy_out = [this](size_t offset, size_t count, cudaStream_t stream) {
            traced("copy out", stream, [&] {
                CUDA_CHECK(cudaMemcpyAsync(out.get() + offset, device_out.get() + offset, count * sizeof(float),
                                           cudaMemcpyDeviceToHost, stream));
            });
        };
        return s;
    }

    template <class Issue>
    void traced(const char* kind, cudaStream_t stream, Issue issue) {
        if (trace)
            trace->around(kind, stream, issue);
        else
            issue();
    }

    // out[0, n) against f, at a sample of indices (every chunk's ends among them); NaN (never
    // written: out is poisoned) anywhere.
    Comparison compare(size_t n, int streams) const {
        std::vector<size_t> at;
        for (size_t i = 0; i < n; i += 1021) at.push_back(i);
        for (int k = 0; k <= streams; ++k) {
            const size_t edge = std::min(n, k * (n / streams));
            if (edge > 0) at.push_back(edge - 1);
            if (edge < n) at.push_back(edge);
        }
        at.push_back(n - 1);
        std::sort(at.begin(), at.end());
        at.erase(std::unique(at.begin(), at.end()), at.end());
        std::vector<double> expected;
        std::vector<float> got;
        for (size_t i : at) {
            expected.push_back(f_on_cpu(in.get()[i]));
            got.push_back(out.get()[i]);
        }
        Comparison c = compare_close(expected, got, {1e-5, 0});
        for (size_t i = 0; i < n && c.problem.empty(); ++i)
            if (std::isnan(out.get()[i])) c.problem = "out[" + std::to_string(i) + "] was never written";
        return c;
    }
};

using PipelineRun = void (*)(const ch04::Stages&, size_t n, int streams);

// The pipeline's ideal time for `chunks` chunks, from the stages' own times: the busiest resource
// (the copy engines, or the SMs) works without a pause, and the other stages of one chunk fill and
// drain the pipe.
struct Ideal {
    double copy_in_ms, compute_ms, copy_out_ms, copies_together_ms;
    int engines;
    double ms(int chunks) const {
        const double sum = copy_in_ms + compute_ms + copy_out_ms;
        if (engines == 0) return sum;  // copies cannot overlap kernels at all
        const double copies = engines == 1 ? copy_in_ms + copy_out_ms : copies_together_ms;
        const double busiest = std::max(copies, compute_ms);
        return busiest + (sum - busiest) / chunks;
    }
};

Ideal measure_stages(Pipeline& p, int engines) {
    const ch04::Stages s = p.stages();
    Stream a, b;
    TimingOptions options;
    options.stop.max_seconds = 0.5;
    // The fastest of many runs: a bound should not carry one run's bad luck (the two copies at once
    // ranged from 5.3 to 6.5 ms in medians taken minutes apart on one H200).
    auto time = [&](const std::function<void()>& work) { return time_device_wide(work, options).min; };
    Ideal ideal{};
    ideal.engines = engines;
    ideal.copy_in_ms = time([&] { s.copy_in(0, kPipelineN, a); });
    ideal.compute_ms = time([&] { s.compute(0, kPipelineN, a); });
    ideal.copy_out_ms = time([&] { s.copy_out(0, kPipelineN, a); });
    ideal.copies_together_ms = time([&] {
        s.copy_in(0, kPipelineN, a);
        s.copy_out(0, kPipelineN, b);
    });
    return ideal;
}

void grade_pipeline(PipelineRun run, const std::string& name, bool with_sequential_timeline) {
    Pipeline p;
    const ch04::Stages stages = p.stages();
    Stream stream;
    p.out.fill_bytes(kPoisonByte);
    ch04::run_sequential(stages, kPipelineN, stream);
    if (!p.compare(kPipelineN, 1).ok())
        throw std::runtime_error("run_sequential (given) or launch_compute (given) computes wrong values: restore them");

    bool correct = true;
    for (const auto& [n, streams] : {std::pair{kPipelineN, kStreams}, {size_t(1000), kStreams}, {size_t(100003), 3}}) {
        if (!options().sanitizer.empty() && n == kPipelineN) {
            skip("correct", "n=" + std::to_string(n), "too large to run under compute-sanitizer in reasonable time");
            continue;
        }
        p.out.fill_bytes(kPoisonByte);
        run(stages, n, streams);
        const Comparison c = p.compare(n, streams);
        correct &= check("correct", "n=" + std::to_string(n) + ", " + std::to_string(streams) + " streams", c.ok(),
                         c.message() + "\n(does " + name + " wait for every stream before it returns?)");
    }
    if (!correct || !options().sanitizer.empty()) return;

    // Timelines of one traced run each, for the report.
    auto traced = [&](const std::string& title, const std::function<void()>& work) {
        Trace trace(title);
        p.trace = &trace;
        trace.start();
        work();
        CUDA_CHECK(cudaDeviceSynchronize());
        p.trace = nullptr;
        record_timeline(trace.timeline());
    };
    if (with_sequential_timeline) traced("run_sequential", [&] { ch04::run_sequential(stages, kPipelineN, stream); });
    traced(name + ", " + std::to_string(kStreams) + " streams", [&] { run(stages, kPipelineN, kStreams); });

    const cudaDeviceProp props = device_properties();
    const Ideal ideal = measure_stages(p, props.asyncEngineCount);
    check_speed("speedup", [&] {
        const std::vector<Summary> t = time_rotating_device_wide(
            {[&] { ch04::run_sequential(stages, kPipelineN, stream); }, [&] { run(stages, kPipelineN, kStreams); }});
        const double ideal_ms = ideal.ms(kStreams);
        const double speedup = t[0].median / t[1].median;
        return Ratio{speedup, t[0].noise + t[1].noise,
                     fixed(t[1].median) + " ms against " + fixed(t[0].median) + " ms sequential; " +
                         fixed(100 * ideal_ms / t[1].median, 0) + "% of the ideal " + fixed(ideal_ms) + " ms (" +
                         std::to_string(props.asyncEngineCount) + " copy engines; stages alone: copy in " +
                         fixed(ideal.copy_in_ms) + ", compute " + fixed(ideal.compute_ms) + ", copy out " +
                         fixed(ideal.copy_out_ms) + ", both copies at once " + fixed(ideal.copies_together_ms) + " ms)",
                     {{"speedup over sequential", speedup},
                      {"% of ideal", 100 * ideal_ms / t[1].median},
                      {"ideal speedup", t[0].median / ideal_ms},
                      {"ms", t[1].median},
                      {"sequential ms", t[0].median},
                      {"copy engines", double(props.asyncEngineCount)}}};
    });
}

// ---- Exercise 2: the legacy default stream ----------------------------------------------------------------
void grade_default_stream() {
    DeviceBuffer<int> counters(3);
    counters.fill_bytes(0);
    ch04::run_around_default_stream(counters.get());
    const std::vector<int> got = counters.download();
    if (!check("correct", "each kernel once", got == std::vector<int>{1, 1, 1},
               "counters " + std::to_string(got[0]) + ", " + std::to_string(got[1]) + ", " + std::to_string(got[2]) +
                   ", expected 1, 1, 1: each kernel runs once, and the function returns when all three are done"))
        return;
    check_speed("overlap", [&] {
        const std::vector<Summary> t = time_rotating_device_wide(
            {[&] { ch04::run_around_default_stream_blocking(counters.get()); },
             [&] { ch04::run_around_default_stream(counters.get()); }});
        return Ratio{t[0].median / t[1].median, t[0].noise + t[1].noise,
                     fixed(t[1].median) + " ms against " + fixed(t[0].median) + " ms with blocking streams (each long kernel takes about 5 ms)",
                     {{"ms", t[1].median}, {"ms with blocking streams", t[0].median}}};
    });
}

// ---- Exercise 3: events for dependencies ------------------------------------------------------------------
void grade_event_dependency() {
    const int n = 1 << 20;
    const std::vector<int32_t> values = random_ints(n, seed_for("event input"), -1000, 1000);
    DeviceBuffer<int32_t> in(values), mid(n), out(n);
    Stream producer, consumer;
    ch04::launch_consume(mid.get(), out.get(), 1, consumer);  // loads the kernels' code before the timed call
    ch04::launch_produce(in.get(), mid.get(), 1, producer);
    CUDA_CHECK(cudaDeviceSynchronize());
    mid.poison();
    out.poison();
    const auto start = Clock::now();
    ch04::produce_then_consume(in.get(), mid.get(), out.get(), n, producer, consumer);
    const double call_ms = ms_since(start);
    CUDA_CHECK(cudaStreamSynchronize(consumer));  // only the consumer: it must have waited itself
    std::vector<int32_t> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = 2 * values[i] + 1;
    const Comparison c = compare_exact(expected, out.download());
    const bool data_ok = check("data", "out after the consumer's stream", c.ok(),
                               c.message() + "\n(did the consumer read mid before the producer wrote it?)");
    // The producer takes 20 ms on the GPU; a call that waited for it took at least that long. (A
    // call that does nothing returns at once too: this counts only with the right data.)
    if (!data_ok)
        skip("host_free", "returns at once", "graded once the consumer's output is right");
    else if (!options().sanitizer.empty())
        skip("host_free", "returns at once", "calls are slower under compute-sanitizer");
    else
        check("host_free", "returns at once", call_ms < 5,
              "produce_then_consume took " + fixed(call_ms) + " ms: the host waited for the producer (the GPU should "
              "do the waiting: cudaStreamWaitEvent)");
    CUDA_CHECK(cudaDeviceSynchronize());
}

// ---- Exercise 4: host functions --------------------------------------------------------------------------
void grade_host_callback() {
    const int n = 1 << 16, rounds = 8;
    DeviceBuffer<int> device(n);
    PinnedBuffer<int> host(n);
    Stream stream;
    std::vector<ch04::RoundReport> reports;
    ch04::report_rounds(device.get(), host.get(), n, rounds, stream, &reports);
    if (!check("order", "one report per round", reports.size() == size_t(rounds),
               std::to_string(reports.size()) + " reports, expected " + std::to_string(rounds)))
        return;
    for (int r = 0; r < rounds; ++r) {
        long long expected = 0;
        for (int i = 0; i < n; ++i) expected += (static_cast<long long>(i) * (r + 1)) % 1000;
        const ch04::RoundReport& got = reports[r];
        const std::string label = "round " + std::to_string(r);
        check("order", label + " in order", got.round == r,
                    "report " + std::to_string(r) + " is round " + std::to_string(got.round));
        check("data", label + " sum", got.sum == expected,
                    "sum " + std::to_string(got.sum) + ", expected " + std::to_string(expected) +
                        ": the host function read the pinned buffer before its round's copy, or after the next one");
        check("order", label + " from the stream", got.thread != std::this_thread::get_id(),
                    "report_sum ran on the calling thread: enqueue it with cudaLaunchHostFunc instead of calling it");
    }
}

// ---- Exercise 5: stream priorities ----------------------------------------------------------------------------
// How long a short kernel in `urgent` takes from its launch to its end when `background` has just
// filled the GPU with 2 ms of blocks.
double urgent_latency_ms(cudaStream_t background, cudaStream_t urgent, int sms) {
    cudaEvent_t start, end;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&end));
    launch_busy_wait(50, background, nullptr, sms * 16 * 40, 128);  // 40 waves of 50 us
    const auto t0 = Clock::now();
    while (ms_since(t0) < 0.2) {  // let the backlog start
    }
    CUDA_CHECK(cudaEventRecord(start, urgent));
    launch_busy_wait(10, urgent, nullptr, 4, 128);
    CUDA_CHECK(cudaEventRecord(end, urgent));
    CUDA_CHECK(cudaDeviceSynchronize());
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, end));
    cudaEventDestroy(start);
    cudaEventDestroy(end);
    return ms;
}

void grade_priorities() {
    cudaStream_t background = nullptr, urgent = nullptr;
    ch04::create_priority_streams(&background, &urgent);
    bool ok = check("streams", "two streams", background != nullptr && urgent != nullptr && background != urgent,
                    "create_priority_streams must create two streams");
    if (!ok) return;
    int background_priority = 0, urgent_priority = 0;
    unsigned background_flags = 0, urgent_flags = 0;
    CUDA_CHECK(cudaStreamGetPriority(background, &background_priority));
    CUDA_CHECK(cudaStreamGetPriority(urgent, &urgent_priority));
    CUDA_CHECK(cudaStreamGetFlags(background, &background_flags));
    CUDA_CHECK(cudaStreamGetFlags(urgent, &urgent_flags));
    ok &= check("streams", "urgent first", urgent_priority < background_priority,
                "urgent has priority " + std::to_string(urgent_priority) + ", background " +
                    std::to_string(background_priority) + ": a lower number is a higher priority");
    ok &= check("streams", "non-blocking", (background_flags & cudaStreamNonBlocking) && (urgent_flags & cudaStreamNonBlocking),
                "both streams should be non-blocking (cudaStreamNonBlocking)");
    if (ok) {
        Stream equal_background, equal_urgent;
        const int sms = device_properties().multiProcessorCount;
        check_speed("latency", [&] {
            std::vector<double> equal, prioritized;
            for (int i = 0; i < 9; ++i) {
                equal.push_back(urgent_latency_ms(equal_background, equal_urgent, sms));
                prioritized.push_back(urgent_latency_ms(background, urgent, sms));
            }
            const Summary e = summarize(equal), p = summarize(prioritized);
            return Ratio{e.median / p.median, e.noise + p.noise,
                         "the urgent kernel took " + fixed(p.median, 3) + " ms behind a 2 ms backlog, " +
                             fixed(e.median, 3) + " ms at equal priority",
                         {{"ms at high priority", p.median}, {"ms at equal priority", e.median}}};
        });
    }
    cudaStreamDestroy(background);
    cudaStreamDestroy(urgent);
}

// ---- Exercise 6: programmatic dependent launch ------------------------------------------------------------------
using PairsRun = void (*)(const float*, float*, float*, int, int, cudaStream_t);

float chain_on_cpu(float x) {
    for (int i = 0; i < ch04::kChainLength; ++i) x = std::fmaf(x, 0.999f, 0.001f);
    return x;
}

void grade_pdl() {
    const cudaDeviceProp props = device_properties();
    if (props.major < 9) {
        skip("correct", "this GPU", std::string(props.name) + ": programmatic dependent launch needs compute capability 9.0");
        return;
    }
    const int n = props.multiProcessorCount * 128, pairs = 50;
    const std::vector<float> values = random_floats(n, seed_for("pdl input"), 0.0f, 1.0f);
    std::vector<double> expected(size_t(n) * pairs);
    for (int i = 0; i < n; ++i) {
        const float mid = chain_on_cpu(values[i]), own = chain_on_cpu(static_cast<float>(i % 1024));
        for (int p = 0; p < pairs; ++p) expected[size_t(p) * n + i] = (mid + p) + own;
    }
    DeviceBuffer<float> in(values), mid(n), out(size_t(n) * pairs);
    Stream stream;
    auto run_and_compare = [&](PairsRun run) {
        out.poison();
        run(in.get(), mid.get(), out.get(), n, pairs, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return compare_close(expected, out.download(), {0, 0});  // the same float operations: exact
    };
    if (!run_and_compare(ch04::run_pairs).ok()) throw std::runtime_error("run_pairs (given) computes wrong values: restore it");
    const Comparison c = run_and_compare(ch04::run_pairs_pdl);
    if (!check("correct", std::to_string(pairs) + " pairs", c.ok(),
               c.message() + "\n(does the secondary read mid before cudaGridDependencySynchronize?)"))
        return;
    check_speed("speedup", [&] {
        const std::vector<Summary> t = time_rotating(
            {[&](cudaStream_t s) { ch04::run_pairs(in.get(), mid.get(), out.get(), n, pairs, s); },
             [&](cudaStream_t s) { ch04::run_pairs_pdl(in.get(), mid.get(), out.get(), n, pairs, s); }},
            stream);
        return Ratio{t[0].median / t[1].median, t[0].noise + t[1].noise,
                     fixed(t[1].median * 1e3 / pairs, 1) + " us per pair against " + fixed(t[0].median * 1e3 / pairs, 1) +
                         " us launched plainly",
                     {{"us per pair", t[1].median * 1e3 / pairs}, {"us per pair, plain launches", t[0].median * 1e3 / pairs}}};
    });
}

// ---- Exercise 7: asynchronous errors -------------------------------------------------------------------------------
void grade_async_error() {
    if (!options().sanitizer.empty()) {
        skip("caught", "null write", "the deliberate fault would be reported by compute-sanitizer");
        return;
    }
    DeviceBuffer<float> data(1000);
    Stream stream;
    const ch04::AsyncErrorReport r = ch04::run_with_fault(data.get(), 1000, stream);
    check("launch", "at the launch", r.at_launch == cudaSuccess,
          std::string("cudaGetLastError after the faulting launch returned ") + cudaGetErrorName(r.at_launch) +
              ", expected cudaSuccess: the launch itself is valid, the fault happens later on the GPU");
    const bool names_call = r.caught.find("cudaStreamSynchronize") != std::string::npos;
    const bool names_error = r.caught.find("cudaErrorIllegalAddress") != std::string::npos;
    const bool names_place = r.caught.find("streams.cu:") != std::string::npos;
    check("caught", "the message", names_call && names_error && names_place,
          "caught \"" + r.caught + "\"; expected the message of CHECK(cudaStreamSynchronize(stream)): it names the "
          "call, the file and line (streams.cu:N) and cudaErrorIllegalAddress");
}

}  // namespace

TEST_CASE("overlap_depth_first") { grade_pipeline(ch04::run_depth_first, "run_depth_first", true); }
TEST_CASE("overlap_breadth_first") { grade_pipeline(ch04::run_breadth_first, "run_breadth_first", false); }
TEST_CASE("default_stream") { grade_default_stream(); }
TEST_CASE("event_dependency") { grade_event_dependency(); }
TEST_CASE("host_callback") { grade_host_callback(); }
TEST_CASE("priorities") { grade_priorities(); }
TEST_CASE("pdl") { grade_pdl(); }
TEST_CASE("async_error") { grade_async_error(); }
