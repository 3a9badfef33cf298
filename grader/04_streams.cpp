// Grader for chapter 04 (streams). One TEST_CASE per exercise, named as in thresholds.json.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>

#include "04_streams.h"          // ch04: the code graded
#define ch04 COURSE_REFERENCE    // ref: the grader's own copy of the reference solution
#include "04_streams.h"
#undef ch04
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("04_streams", 7, 0, "any GPU CUDA 12 supports");

using namespace grade;

namespace {

using HostClock = std::chrono::steady_clock;
double ms_since(HostClock::time_point start) { return std::chrono::duration<double, std::milli>(HostClock::now() - start).count(); }

std::string fixed(double value, int digits = 2) {
    std::ostringstream s;
    s.precision(digits);
    s << std::fixed << value;
    return s.str();
}

// The calls with which the host blocks until GPU work is done.
const std::initializer_list<const char*> kBlockingWaits = {"cudaStreamSynchronize", "cudaDeviceSynchronize",
                                                           "cudaEventSynchronize"};

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
    explicit Trace(std::string title) : title_(std::move(title)) {}

    void start() { CUDA_CHECK(cudaEventRecord(zero_, cudaStreamLegacy)); }

    template <class Issue>
    void around(const char* kind, cudaStream_t stream, Issue issue) {
        ops_.push_back(std::make_unique<Op>(stream, kind));
        CUDA_CHECK(cudaEventRecord(ops_.back()->start, stream));
        issue();
        CUDA_CHECK(cudaEventRecord(ops_.back()->end, stream));
    }

    // After the traced run has finished. Streams are numbered in the order they were first used.
    Timeline timeline() const {
        Timeline t{title_, {}};
        std::map<cudaStream_t, int> number;
        for (const auto& op : ops_) {
            if (!number.count(op->stream)) {
                const int next = static_cast<int>(number.size());
                number[op->stream] = next;
            }
            t.ops.push_back({number[op->stream], op->kind, elapsed_ms(zero_, op->start), elapsed_ms(zero_, op->end)});
        }
        return t;
    }

private:
    struct Op {
        Op(cudaStream_t s, std::string k) : stream(s), kind(std::move(k)) {}
        cudaStream_t stream;
        std::string kind;
        Event start, end;
    };
    std::string title_;
    Event zero_;
    std::vector<std::unique_ptr<Op>> ops_;
};

// A stage as the code graded issued it.
struct Issued {
    std::string kind;
    size_t offset;
    cudaStream_t stream;
};

struct Pipeline {
    PinnedBuffer<float> in, out;
    DeviceBuffer<float> device_in, device_out;
    Trace* trace = nullptr;                // when set, every stage is traced
    std::vector<Issued>* issued = nullptr;  // when set, every stage is logged as it is issued

    Pipeline() : in(kPipelineN), out(kPipelineN), device_in(kPipelineN), device_out(kPipelineN) {
        const std::vector<float> values = random_floats(kPipelineN, seed_for("pipeline"), 0.0f, 1.0f);
        std::copy(values.begin(), values.end(), in.get());
    }

    // The three stages, for the code graded (ch04::Stages) or the reference (ref::Stages). The
    // kernel is the grader's own copy of launch_compute.
    template <class StagesOf = ch04::Stages>
    StagesOf stages() {
        StagesOf s;
        s.copy_in = [this](size_t offset, size_t count, cudaStream_t stream) {
            traced("copy in", offset, stream, [&] {
                CUDA_CHECK(cudaMemcpyAsync(device_in.get() + offset, in.get() + offset, count * sizeof(float),
                                           cudaMemcpyHostToDevice, stream));
            });
        };
        s.compute = [this](size_t offset, size_t count, cudaStream_t stream) {
            traced("compute", offset, stream,
                   [&] { ref::launch_compute(device_in.get() + offset, device_out.get() + offset, count, stream); });
        };
        s.copy_out = [this](size_t offset, size_t count, cudaStream_t stream) {
            traced("copy out", offset, stream, [&] {
                CUDA_CHECK(cudaMemcpyAsync(out.get() + offset, device_out.get() + offset, count * sizeof(float),
                                           cudaMemcpyDeviceToHost, stream));
            });
        };
        return s;
    }

    template <class Issue>
    void traced(const char* kind, size_t offset, cudaStream_t stream, Issue issue) {
        if (issued) issued->push_back({kind, offset, stream});
        if (trace)
            trace->around(kind, stream, issue);
        else
            issue();
    }

    // Where out[0, n) is compared: every `step`th element from `first`, and every chunk's ends.
    static std::vector<size_t> sample(size_t n, int streams, size_t first, size_t step = 1021) {
        std::vector<size_t> at;
        for (size_t i = first % step; i < n; i += step) at.push_back(i);
        for (int k = 0; k <= streams; ++k) {
            const size_t edge = std::min(n, k * (n / streams));
            if (edge > 0) at.push_back(edge - 1);
            if (edge < n) at.push_back(edge);
        }
        at.push_back(n - 1);
        std::sort(at.begin(), at.end());
        at.erase(std::unique(at.begin(), at.end()), at.end());
        return at;
    }

    Comparison compare_at(const std::vector<size_t>& at) const {
        std::vector<double> expected;
        std::vector<float> got;
        for (size_t i : at) {
            expected.push_back(f_on_cpu(in.get()[i]));
            got.push_back(out.get()[i]);
        }
        return compare_close(expected, got, {1e-5, 0});
    }

    // out[0, n) against f at a sample of indices; NaN (never written: out is poisoned) anywhere.
    Comparison compare(size_t n, int streams) const {
        Comparison c = compare_at(sample(n, streams, 0));
        for (size_t i = 0; i < n && c.problem.empty(); ++i)
            if (std::isnan(out.get()[i])) c.problem = "out[" + std::to_string(i) + "] was never written";
        return c;
    }
};

// What is wrong with the order in which the stages were issued, or "": chunk k of `streams` equal
// chunks on a stream of its own; depth first, each chunk's three stages in turn; breadth first,
// every copy in, then every compute, then every copy out.
std::string issue_order_problem(const std::vector<Issued>& log, size_t n, int streams, bool depth_first) {
    const char* const kinds[] = {"copy in", "compute", "copy out"};
    std::vector<std::pair<std::string, int>> expected;  // kind, chunk
    for (int outer = 0; outer < (depth_first ? streams : 3); ++outer)
        for (int inner = 0; inner < (depth_first ? 3 : streams); ++inner)
            expected.emplace_back(depth_first ? kinds[inner] : kinds[outer], depth_first ? outer : inner);
    const std::string rule = depth_first ? "depth first: copy in, compute and copy out of chunk 0, then of chunk 1, ..."
                                         : "breadth first: every chunk's copy in, then every compute, then every copy out";
    if (log.size() != expected.size())
        return std::to_string(log.size()) + " stages were issued; expected " + std::to_string(expected.size()) +
               " (three per chunk, " + std::to_string(streams) + " chunks)";
    const size_t chunk_size = n / streams;
    std::map<int, cudaStream_t> stream_of;
    for (size_t i = 0; i < log.size(); ++i) {
        const int chunk = static_cast<int>(std::min<size_t>(log[i].offset / chunk_size, streams - 1));
        if (log[i].kind != expected[i].first || chunk != expected[i].second)
            return "stage " + std::to_string(i + 1) + " issued was the " + log[i].kind + " of chunk " +
                   std::to_string(chunk) + "; expected the " + expected[i].first + " of chunk " +
                   std::to_string(expected[i].second) + " (" + rule + ")";
        if (stream_of.count(chunk) && stream_of[chunk] != log[i].stream)
            return "the stages of chunk " + std::to_string(chunk) + " went to different streams: a chunk's stages "
                   "depend on each other, so they share one stream";
        stream_of[chunk] = log[i].stream;
    }
    std::set<cudaStream_t> distinct;
    for (const auto& [chunk, stream] : stream_of) distinct.insert(stream);
    if (int(distinct.size()) != streams)
        return std::to_string(streams) + " chunks went to " + std::to_string(distinct.size()) +
               " streams: chunk k goes to a stream of its own";
    return "";
}

using PipelineRun = void (*)(const ch04::Stages&, size_t n, int streams);
using ReferenceRun = void (*)(const ref::Stages&, size_t n, int streams);

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
    const ref::Stages s = p.stages<ref::Stages>();
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

void grade_pipeline(PipelineRun run, ReferenceRun reference, const std::string& name, bool depth_first) {
    Pipeline p;
    const ch04::Stages stages = p.stages();
    std::mt19937_64 rng(seed_for("pipeline runs"));

    bool correct = true;
    const size_t drawn = 2 + rng() % 3000000;
    const int drawn_streams = 2 + static_cast<int>(rng() % 15);
    for (const auto& [n, streams] : {std::pair{kPipelineN, kStreams}, {size_t(1000), kStreams}, {size_t(100003), 3},
                                     {drawn, drawn_streams}}) {
        if (!options().sanitizer.empty() && n == kPipelineN) {
            skip("correct", "n=" + std::to_string(n), "too large to run under compute-sanitizer in reasonable time");
            continue;
        }
        p.out.fill_bytes(kPoisonByte);
        std::vector<Issued> log;
        p.issued = &log;
        run(stages, n, streams);
        p.issued = nullptr;
        const Comparison c = p.compare(n, streams);
        const std::string label = "n=" + std::to_string(n) + ", " + std::to_string(streams) + " streams";
        correct &= check("correct", label, c.ok(), c.message() + "\n(does " + name + " wait for every stream before it returns?)");
        const std::string order = issue_order_problem(log, n, streams, depth_first);
        correct &= check("correct", label + ", issue order", order.empty(), order);
    }
    if (!correct || !options().sanitizer.empty()) return;

    // Timelines of one traced run each, for the report.
    Stream stream;
    auto traced = [&](const std::string& title, const std::function<void()>& work) {
        Trace trace(title);
        p.trace = &trace;
        trace.start();
        work();
        CUDA_CHECK(cudaDeviceSynchronize());
        p.trace = nullptr;
        record_timeline(trace.timeline());
    };
    const ref::Stages reference_stages = p.stages<ref::Stages>();
    if (depth_first)
        traced("run_sequential", [&] { ref::run_sequential(reference_stages, kPipelineN, stream); });
    traced(name + ", " + std::to_string(kStreams) + " streams", [&] { run(stages, kPipelineN, kStreams); });

    // The race: before each round a few inputs change and another sample of out is compared.
    const cudaDeviceProp props = device_properties();
    const Ideal ideal = measure_stages(p, props.asyncEngineCount);
    std::vector<size_t> at;
    auto contender = [&](const std::string& contender_name, const std::function<void(cudaStream_t)>& go) {
        Contender c;
        c.name = contender_name;
        c.before = [&](cudaStream_t, int) {
            for (size_t i : at) p.out[i] = std::nanf("");
        };
        c.run = [go](cudaStream_t s, int) { go(s); };
        c.verify = [&](int) { return p.compare_at(at).message(); };
        return c;
    };
    SpeedTrial trial;
    trial.clock = Clock::device_wide;
    trial.yours = contender("your code", [&](cudaStream_t) { run(stages, kPipelineN, kStreams); });
    trial.reference = contender("the reference", [&](cudaStream_t) { reference(reference_stages, kPipelineN, kStreams); });
    trial.baselines = {contender("sequential", [&](cudaStream_t s) { ref::run_sequential(reference_stages, kPipelineN, s); })};
    trial.vary = [&](int) {
        for (int k = 0; k < 4; ++k) p.in[rng() % kPipelineN] = static_cast<float>(rng() % 1000) / 1000;
        at = Pipeline::sample(kPipelineN, kStreams, rng(), 16381);  // some 4000 places: a few ms to check
    };
    // A round takes some 30 ms of GPU time: enough of them for a steady median.
    trial.timing.stop.min_samples = 15;
    trial.timing.stop.max_seconds = 2.5;
    trial.more_figures = [&](const std::vector<double>& ms) -> std::vector<std::pair<std::string, double>> {
        const double ideal_ms = ideal.ms(kStreams);
        return {{"% of the ideal overlap", 100 * ideal_ms / ms[0]},
                {"reference % of the ideal overlap", 100 * ideal_ms / ms[1]},
                {"ideal ms", ideal_ms},
                {"copy engines", double(props.asyncEngineCount)}};
    };
    check_speed("speed", trial);
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
    SpeedTrial trial;
    trial.clock = Clock::device_wide;
    auto contender = [&](const std::string& name, void (*run)(int*)) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t, int) { counters.fill_bytes(0); };
        c.run = [&, run](cudaStream_t, int) { run(counters.get()); };
        c.verify = [&](int) {
            const std::vector<int> got = counters.download();
            return got == std::vector<int>{1, 1, 1} ? std::string() : "the kernels did not each run once";
        };
        return c;
    };
    trial.yours = contender("your code", ch04::run_around_default_stream);
    trial.reference = contender("the reference", ref::run_around_default_stream);
    trial.baselines = {contender("blocking streams", ref::run_around_default_stream_blocking)};
    check_speed("speed", trial);
}

// ---- Exercise 3: events for dependencies ------------------------------------------------------------------
void grade_event_dependency() {
    const int n = 1 << 20;
    const std::vector<int32_t> values = random_ints(n, seed_for("event input"), -1000, 1000);
    DeviceBuffer<int32_t> in(values), mid(n), out(n);
    Stream producer, consumer;
    // A first launch of each kernel before the timed call (produce first: consume reads what it wrote).
    ch04::launch_produce(in.get(), mid.get(), 1, producer);
    CUDA_CHECK(cudaDeviceSynchronize());
    ch04::launch_consume(mid.get(), out.get(), 1, consumer);
    CUDA_CHECK(cudaDeviceSynchronize());
    mid.poison();
    out.poison();
    const auto start = HostClock::now();
    ch04::produce_then_consume(in.get(), mid.get(), out.get(), n, producer, consumer);
    const double call_ms = ms_since(start);
    CUDA_CHECK(cudaStreamSynchronize(consumer));  // only the consumer: it must have waited itself
    std::vector<int32_t> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = 2 * values[i] + 1;
    const Comparison c = compare_exact(expected, out.download());
    const bool data_ok = check("data", "out after the consumer's stream", c.ok(),
                               c.message() + "\n(did the consumer read mid before the producer wrote it?)");
    // How it was done, as CUPTI saw it, in a second call (recording slows the host's calls down):
    // the producer's kernel on the producer's stream, the consumer's on the consumer's, and the
    // consumer started after the producer had ended.
    const std::unique_ptr<Witness> witness = data_ok ? open_witness() : nullptr;
    if (witness) {
        ch04::produce_then_consume(in.get(), mid.get(), out.get(), n, producer, consumer);
        witness->finish();
        const uint32_t producer_id = Witness::stream_id(producer), consumer_id = Witness::stream_id(consumer);
        int on_producer = 0, on_consumer = 0, elsewhere = 0;
        uint64_t produced = 0, first_consumed = UINT64_MAX;
        for (const KernelRun& k : witness->kernels()) {
            if (k.stream_id == producer_id) {
                ++on_producer;
                produced = std::max(produced, k.end_ns);
            } else if (k.stream_id == consumer_id) {
                ++on_consumer;
                first_consumed = std::min(first_consumed, k.start_ns);
            } else {
                ++elsewhere;
            }
        }
        const bool two_streams = check("data", "technique: each kernel on its stream",
                                       on_producer == 1 && on_consumer == 1 && elsewhere == 0,
                                       std::to_string(on_producer) + " kernels ran on `producer`, " +
                                           std::to_string(on_consumer) + " on `consumer`, " + std::to_string(elsewhere) +
                                           " elsewhere: launch_produce goes on `producer`, launch_consume on "
                                           "`consumer`, and an event makes one stream wait for the other");
        if (two_streams)
            check("data", "technique: the consumer waited", first_consumed >= produced,
                  "the consumer's kernel started before the producer's had ended");
    }
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
    device.poison();
    std::fill(host.get(), host.get() + n, -1);
    std::vector<ch04::RoundReport> reports;
    const std::unique_ptr<Witness> witness = open_witness();
    ch04::report_rounds(device.get(), host.get(), n, rounds, stream, &reports);
    if (witness) {
        witness->finish();
        const int host_functions = witness->calls_to({"cudaLaunchHostFunc"});
        const int waits = witness->calls_to(kBlockingWaits);
        check("order", "technique: host functions in the stream", host_functions == rounds,
              std::to_string(host_functions) + " calls to cudaLaunchHostFunc for " + std::to_string(rounds) +
                  " rounds: each round's report goes into the stream");
        check("order", "technique: one wait", waits == 1,
              "the host waited " + std::to_string(waits) + " times (cudaStreamSynchronize, cudaDeviceSynchronize, "
              "cudaEventSynchronize): issue every round, then wait once at the end");
    }
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
    Event start, end;
    launch_busy_wait(50, background, nullptr, sms * 16 * 40, 128);  // 40 waves of 50 us
    const auto t0 = HostClock::now();
    while (ms_since(t0) < 0.2) {  // let the backlog start
    }
    CUDA_CHECK(cudaEventRecord(start, urgent));
    launch_busy_wait(10, urgent, nullptr, 4, 128);
    CUDA_CHECK(cudaEventRecord(end, urgent));
    CUDA_CHECK(cudaDeviceSynchronize());
    return elapsed_ms(start, end);
}

struct StreamPair {
    cudaStream_t background = nullptr, urgent = nullptr;
};

StreamPair create_reference_streams() {
    StreamPair pair;
    ref::create_priority_streams(&pair.background, &pair.urgent);
    return pair;
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
        StreamPair reference_streams = create_reference_streams();
        const int sms = device_properties().multiProcessorCount;
        auto contender = [&](const std::string& name, cudaStream_t back, cudaStream_t front) {
            Contender c;
            c.name = name;
            c.timed = [=](cudaStream_t, int) { return urgent_latency_ms(back, front, sms); };
            return c;
        };
        SpeedTrial trial;
        trial.clock = Clock::reported;
        trial.time_unit = "ms of the urgent kernel";
        trial.yours = contender("your streams", background, urgent);
        trial.reference = contender("the reference's streams", reference_streams.background, reference_streams.urgent);
        trial.baselines = {contender("equal priorities", equal_background, equal_urgent)};
        check_speed("speed", trial);
        cudaStreamDestroy(reference_streams.background);
        cudaStreamDestroy(reference_streams.urgent);
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
    PinnedBuffer<float> out_host(out.size());
    mid.poison();
    out.poison();
    LegacyStreamGate gate(gate_limit_ms());
    ch04::run_pairs_pdl(in.get(), mid.get(), out.get(), n, pairs, stream);
    const std::vector<float> got = out.download_on(stream, out_host);
    const bool stayed_on_stream = gate.open();
    const Comparison c = compare_close(expected, got, {0, 0});  // the same float operations: exact
    bool ok = check("correct", std::to_string(pairs) + " pairs", c.ok(),
                    c.message() + "\n(does the secondary read mid before cudaGridDependencySynchronize? Is every "
                                  "launch on `stream`?)");
    ok &= check("correct", "only its stream", stayed_on_stream,
                "run_pairs_pdl waited on the legacy default stream (cudaMemcpy, cudaDeviceSynchronize...): every "
                "launch goes on `stream`");
    if (!ok) return;

    // The race: one input changes before each round; every call's out must equal run_pairs's.
    DeviceBuffer<float> expected_out(out.size());
    std::mt19937_64 rng(seed_for("timed inputs"));
    auto contender = [&](const std::string& name, PairsRun run) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t s, int) { out.poison_on(s); };
        c.run = [&, run](cudaStream_t s, int) { run(in.get(), mid.get(), out.get(), n, pairs, s); };
        c.verify = [&](int) {
            const unsigned long long wrong = count_differences(out.get(), expected_out.get(), out.bytes(), stream);
            return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes of out differ from run_pairs's";
        };
        return c;
    };
    SpeedTrial trial;
    trial.yours = contender("your code", ch04::run_pairs_pdl);
    trial.reference = contender("the reference", ref::run_pairs_pdl);
    trial.baselines = {contender("plain launches", ref::run_pairs)};
    trial.vary = [&](int) {
        in.set(rng() % n, static_cast<float>(rng() % 1000) / 1000);
        ref::run_pairs(in.get(), mid.get(), expected_out.get(), n, pairs, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    trial.time_unit = "us per pair";
    trial.time_scale = 1e3 / pairs;
    check_speed("speed", trial);
    // Last (CUPTI, once attached, slows launches down a little even when detached again), how it
    // was done, as CUPTI saw it: two kernels per pair, and secondaries that started before their
    // primary had ended, which stream order forbids without a programmatic dependent launch. How
    // many do varies from run to run: up to three runs, and one early start is proof enough.
    if (!options().sanitizer.empty()) return;
    int early = 0;
    size_t kernel_count = 0;
    for (int attempt = 0; attempt < 3 && early == 0; ++attempt) {
        const std::unique_ptr<Witness> witness = open_witness();
        ch04::run_pairs_pdl(in.get(), mid.get(), out.get(), n, pairs, stream);
        witness->finish();
        std::vector<KernelRun> kernels = witness->kernels();
        const uint32_t id = Witness::stream_id(stream);
        kernels.erase(std::remove_if(kernels.begin(), kernels.end(), [&](const KernelRun& k) { return k.stream_id != id; }),
                      kernels.end());
        kernel_count = kernels.size();
        if (kernel_count != size_t(2 * pairs)) break;
        for (int p = 0; p < pairs; ++p) early += kernels[2 * p + 1].start_ns < kernels[2 * p].end_ns;
    }
    if (!check("correct", "technique: two kernels per pair", kernel_count == size_t(2 * pairs),
               std::to_string(kernel_count) + " kernels ran on `stream` for " + std::to_string(pairs) +
                   " pairs: a primary and a secondary each, not one kernel doing both"))
        return;
    check("correct", "technique: secondaries start early", early > 0,
          "no secondary started before its primary had ended, in three runs: launch each secondary with "
          "programmaticStreamSerializationAllowed, and let the primary trigger it "
          "(cudaTriggerProgrammaticLaunchCompletion)");
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
    const cudaError_t now = cudaDeviceSynchronize();
    check("caught", "the fault happened", now == cudaErrorIllegalAddress,
          std::string("after run_with_fault the device reports ") + cudaGetErrorName(now) +
              ": launch_faulty was not run on `stream`");
    check("caught", "the message", names_call && names_error && names_place,
          "caught \"" + r.caught + "\"; expected the message of CHECK(cudaStreamSynchronize(stream)): it names the "
          "call, the file and line (streams.cu:N) and cudaErrorIllegalAddress");
}

// ---- Exercise 8: polling ------------------------------------------------------------------------------------------
void grade_polling() {
    DeviceBuffer<int> counter(1);
    counter.fill_bytes(0);
    Stream stream;
    int steps_made = 0;
    const auto host_step = [&] {  // 50 us of the host's own work
        ++steps_made;
        const auto t0 = HostClock::now();
        while (ms_since(t0) < 0.05) {
        }
    };
    const std::unique_ptr<Witness> witness = open_witness();
    const int returned = ch04::work_while_waiting(counter.get(), stream, host_step);
    if (witness) witness->stop_calls();
    const bool finished = cudaStreamQuery(stream) == cudaSuccess;
    if (witness) witness->finish();
    CUDA_CHECK(cudaDeviceSynchronize());
    const int ran = counter.download()[0];
    check("correct", "the kernel ran once", ran == 1,
          "the counter is " + std::to_string(ran) + ", expected 1: launch launch_long(counter, stream) once");
    check("correct", "finished on return", finished,
          "the kernel was still running when work_while_waiting returned: poll until the query says it is done");
    check("correct", "steps counted", returned == steps_made,
          "returned " + std::to_string(returned) + ", but host_step was called " + std::to_string(steps_made) + " times");
    // The kernel runs 5 ms; a step takes 50 us: a loop that polls makes dozens of steps.
    check("correct", "host work while the kernel runs", steps_made >= 10,
          std::to_string(steps_made) + " host steps while a 5 ms kernel ran: call host_step between queries, "
          "while the kernel runs, not once it has finished");
    if (witness) {  // how it waited, as CUPTI saw it
        const int waits = witness->calls_to(kBlockingWaits);
        const int queries = witness->calls_to({"cudaEventQuery", "cudaStreamQuery"});
        check("correct", "technique: polled, never blocked", waits == 0 && queries > 0,
              std::to_string(queries) + " queries and " + std::to_string(waits) + " blocking waits (cudaStreamSynchronize, "
              "cudaDeviceSynchronize, cudaEventSynchronize): ask with cudaEventQuery or cudaStreamQuery, never block");
    }
}

// ---- Exercise 9: the per-thread default stream --------------------------------------------------------------------
void grade_per_thread_stream() {
    const int threads = 4;
    DeviceBuffer<int> counters(threads);
    counters.fill_bytes(0);
    const std::unique_ptr<Witness> witness = open_witness();
    ch04::run_from_threads(counters.get(), threads);
    if (witness) witness->finish();
    CUDA_CHECK(cudaDeviceSynchronize());
    const std::vector<int> got = counters.download();
    std::string counts;
    for (int c : got) counts += (counts.empty() ? "" : ", ") + std::to_string(c);
    if (!check("correct", "each thread's kernel once", got == std::vector<int>(threads, 1),
               "counters " + counts + ": each of the " + std::to_string(threads) + " threads launches its kernel once"))
        return;
    if (!witness) {
        skip("correct", "technique", "CUPTI does not record under compute-sanitizer, which runs one kernel at a time");
        return;
    }
    // As CUPTI saw it: one stream per thread, and the kernels running at the same time.
    std::set<uint32_t> streams;
    uint64_t last_start = 0, first_end = UINT64_MAX;
    for (const KernelRun& k : witness->kernels()) {
        streams.insert(k.stream_id);
        last_start = std::max(last_start, k.start_ns);
        first_end = std::min(first_end, k.end_ns);
    }
    const size_t kernels = witness->kernels().size();
    if (!check("correct", "technique: a stream per thread", kernels == size_t(threads) && streams.size() == size_t(threads),
               std::to_string(kernels) + " kernels ran in " + std::to_string(streams.size()) + " streams: each thread "
               "launches into its own per-thread default stream (cudaStreamPerThread)"))
        return;
    check("correct", "technique: side by side", last_start < first_end,
          "the kernels did not all run at the same time: something orders them (the legacy default stream, or a "
          "wait between the launches)");
}

}  // namespace

TEST_CASE("overlap_depth_first") {
    grade_pipeline(ch04::run_depth_first, ref::run_depth_first, "run_depth_first", true);
}
TEST_CASE("overlap_breadth_first") {
    grade_pipeline(ch04::run_breadth_first, ref::run_breadth_first, "run_breadth_first", false);
}
TEST_CASE("default_stream") { grade_default_stream(); }
TEST_CASE("event_dependency") { grade_event_dependency(); }
TEST_CASE("host_callback") { grade_host_callback(); }
TEST_CASE("priorities") { grade_priorities(); }
TEST_CASE("pdl") { grade_pdl(); }
TEST_CASE("async_error") { grade_async_error(); }
TEST_CASE("polling") { grade_polling(); }
TEST_CASE("per_thread_stream") { grade_per_thread_stream(); }
