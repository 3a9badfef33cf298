// Grader for chapter 01 (runtime). One TEST_CASE per exercise, named as in thresholds.json.
#include <cfloat>
#include <cmath>
#include <random>

#include "01_runtime.h"          // ch01: the code graded
#define ch01 COURSE_REFERENCE    // ref: the grader's own copy of the reference solution
#include "01_runtime.h"
#undef ch01
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("01_runtime", 7, 0, "any GPU CUDA 12 supports");

using namespace grade;

namespace {

std::string report_field(const std::string& name, long long got, long long expected) {
    return name + ": expected " + std::to_string(expected) + ", got " + std::to_string(got);
}

int attribute(cudaDeviceAttr attr, int device) {
    int value = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
    return value;
}

std::string error_name(cudaError_t e) { return cudaGetErrorName(e); }

// The one kernel visit_2d ran, as CUPTI saw it: 2D blocks, and a 2D grid of just enough of them.
void check_launch_2d(Witness& witness, int width, int height, const std::string& label) {
    witness.finish();
    const std::vector<KernelRun>& k = witness.kernels();
    if (!check("grid_2d", label + ", one kernel", k.size() == 1,
               std::to_string(k.size()) + " kernels ran: launch one kernel over the whole array"))
        return;
    const unsigned bx = k[0].block[0], by = k[0].block[1];
    const bool blocks_2d = bx > 1 && by > 1 && k[0].block[2] == 1;
    const bool grid_fits = blocks_2d && k[0].grid[0] == (width + bx - 1) / bx && k[0].grid[1] == (height + by - 1) / by &&
                           k[0].grid[2] == 1;
    check("grid_2d", label + ", launch shape", grid_fits,
          "the kernel ran with " + k[0].shape() + ": expected blocks of more than one thread in x and in y, and a "
          "grid of ceil(width / block.x) x ceil(height / block.y) blocks");
}

}  // namespace

TEST_CASE("device_report") {
    const int device = 0;
    const ch01::DeviceReport r = ch01::init_and_describe(device);

    cudaDeviceProp props{};
    CUDA_CHECK(cudaGetDeviceProperties(&props, device));
    size_t free_bytes = 0, total_bytes = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes));

    auto field = [](const std::string& name, long long got, long long expected) {
        check("report", name, got == expected, report_field(name, got, expected));
    };
    field("device", r.device, device);
    check("report", "name", r.name == props.name, "name: expected \"" + std::string(props.name) + "\", got \"" + r.name + "\"");
    field("compute_major", r.compute_major, attribute(cudaDevAttrComputeCapabilityMajor, device));
    field("compute_minor", r.compute_minor, attribute(cudaDevAttrComputeCapabilityMinor, device));
    field("sm_count", r.sm_count, attribute(cudaDevAttrMultiProcessorCount, device));
    field("global_memory_bytes", static_cast<long long>(r.global_memory_bytes), static_cast<long long>(total_bytes));
    field("l2_cache_bytes", r.l2_cache_bytes, attribute(cudaDevAttrL2CacheSize, device));
    field("persisting_l2_max_bytes", r.persisting_l2_max_bytes, attribute(cudaDevAttrMaxPersistingL2CacheSize, device));
    field("async_engine_count", r.async_engine_count, attribute(cudaDevAttrAsyncEngineCount, device));
    field("shared_memory_per_block_optin", static_cast<long long>(r.shared_memory_per_block_optin),
          attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
    field("cluster_launch", r.cluster_launch, attribute(cudaDevAttrClusterLaunch, device) != 0);
}

TEST_CASE("error_handling") {
    // The message helper, on two made-up failures.
    struct Case {
        cudaError_t error;
        const char* call;
        const char* file;
        int line;
    };
    for (const Case& c : {Case{cudaErrorMemoryAllocation, "cudaMalloc(&p, bytes)", "runtime.cu", 42},
                          Case{cudaErrorInvalidValue, "cudaMemcpy(d, h, n, kind)", "other.cu", 7}}) {
        const std::string message = ch01::describe_cuda_error(c.error, c.call, c.file, c.line);
        const std::string where = std::string(c.file) + ":" + std::to_string(c.line);
        for (const std::string& part : {std::string(c.call), where, error_name(c.error), std::string(cudaGetErrorString(c.error))})
            check("message", error_name(c.error) + " names \"" + part + "\"", message.find(part) != std::string::npos,
                  "the message \"" + message + "\" should contain \"" + part + "\"");
    }

    // A valid launch, then invalid configurations: the launch's error, and none left pending.
    const int n = 100003;
    DeviceBuffer<int> out(n);
    std::vector<int> expected(n);
    for (int i = 0; i < n; ++i) expected[i] = i;
    for (int threads : {256, 2048, 0}) {
        const std::string label = std::to_string(threads) + " threads per block";
        // The code the runtime gives this configuration (it has changed between CUDA versions).
        const cudaError_t want = launch_error_for(1, threads);
        out.poison();
        const cudaError_t got = ch01::launch_fill(out.get(), n, threads);
        const cudaError_t pending = cudaGetLastError();
        CUDA_CHECK(cudaDeviceSynchronize());
        check("launch_error", label, got == want,
              "launch_fill returned " + error_name(got) + ", expected " + error_name(want));
        check("launch_error", label + ", pending afterwards", pending == cudaSuccess,
              "after launch_fill returned, cudaGetLastError still reported " + error_name(pending) +
                  ": the error was peeked at, not consumed");
        if (threads == 256) check("launch_error", label + ", output", compare_exact(expected, out.download()));
    }

    // Last: the fault leaves the context unusable for the rest of this process.
    if (!options().sanitizer.empty()) {
        skip("async_fault", "null write", "the deliberate fault would be reported by compute-sanitizer");
        return;
    }
    const ch01::AsyncFaultReport r = ch01::run_faulting_kernel();
    check("async_fault", "at launch", r.at_launch == cudaSuccess,
          "the launch reported " + error_name(r.at_launch) + "; a launch with a valid configuration succeeds, the fault comes later");
    check("async_fault", "at sync", r.at_sync == cudaErrorIllegalAddress,
          "cudaDeviceSynchronize reported " + error_name(r.at_sync) + ", expected cudaErrorIllegalAddress");
    check("async_fault", "afterwards", r.afterwards == cudaErrorIllegalAddress,
          "the later cudaMalloc reported " + error_name(r.afterwards) +
              ", expected cudaErrorIllegalAddress: the error is sticky");
    // The codes above are only words: the fault itself must have happened.
    const cudaError_t now = cudaDeviceSynchronize();
    check("async_fault", "the fault happened", now == cudaErrorIllegalAddress,
          "after run_faulting_kernel the device reports " + error_name(now) +
              ": write_one<<<1, 1>>>(nullptr) was not run, or not on this device");
}

TEST_CASE("thread_indexing") {
    struct Size {
        int width, height;
    };
    for (const Size s : {Size{1, 1}, Size{17, 3}, Size{1000, 777}, Size{4099, 1531}, Size{3, 5000}}) {
        const std::string label = std::to_string(s.width) + "x" + std::to_string(s.height);
        const size_t n = static_cast<size_t>(s.width) * s.height;
        DeviceBuffer<int> visits(n), coords(n);
        visits.fill_bytes(0);
        coords.poison();
        const std::unique_ptr<Witness> witness = open_witness();
        ch01::visit_2d(visits.get(), coords.get(), s.width, s.height);
        CUDA_CHECK(cudaDeviceSynchronize());
        if (witness) check_launch_2d(*witness, s.width, s.height, label);
        std::vector<int> ones(n, 1), expected(n);
        for (int y = 0; y < s.height; ++y)
            for (int x = 0; x < s.width; ++x) expected[static_cast<size_t>(y) * s.width + x] = (y << 16) | x;
        check("grid_2d", label + " visits", compare_exact(ones, visits.download()));
        check("grid_2d", label + " coords", compare_exact(expected, coords.download()));
        check("grid_2d", label + " bounds", visits.guard_intact() && coords.guard_intact(),
              "a thread wrote past the end of the array: check the bounds test");
    }
    struct Launch {
        size_t n;
        int blocks, threads;
    };
    for (const Launch l : {Launch{(1u << 20) + 3, 7, 96}, Launch{5, 7, 96}, Launch{100000, 1, 32}}) {
        const std::string label = "n=" + std::to_string(l.n) + ", " + std::to_string(l.blocks) + "x" + std::to_string(l.threads);
        DeviceBuffer<int> visits(l.n);
        visits.fill_bytes(0);
        const std::unique_ptr<Witness> witness = open_witness();
        ch01::visit_grid_stride(visits.get(), l.n, l.blocks, l.threads);
        CUDA_CHECK(cudaDeviceSynchronize());
        if (witness) {
            witness->finish();
            const std::vector<KernelRun>& k = witness->kernels();
            const bool one = k.size() == 1;
            const bool given = one && k[0].grid[0] == unsigned(l.blocks) && k[0].grid[1] == 1 && k[0].grid[2] == 1 &&
                               k[0].block[0] == unsigned(l.threads) && k[0].block[1] == 1 && k[0].block[2] == 1;
            check("grid_stride", label + ", the grid given", given,
                  one ? "the kernel ran with " + k[0].shape() + "; the grid given is " + std::to_string(l.blocks) +
                            " blocks of " + std::to_string(l.threads) + " threads: the loop, not the grid, covers n"
                      : std::to_string(k.size()) + " kernels ran: launch one, with the grid given");
        }
        check("grid_stride", label, compare_exact(std::vector<int>(l.n, 1), visits.download()));
        check("grid_stride", label + " bounds", visits.guard_intact(), "a thread wrote past the end of the array");
    }
}

// The fixed sizes, and two drawn from the seed (partly filled blocks, a remainder of float4s).
std::vector<size_t> vector_sizes(size_t big) {
    std::mt19937_64 rng(seed_for("sizes"));
    return {1, 3, 1000, 1000003, 2 + rng() % 5000000, 2 + rng() % 5000000, big};
}

TEST_CASE("vector_add") {
    Stream stream;
    const size_t big = size_t(64) << 20;  // 256 MiB per array: far past L2 and launch overhead
    bool all_correct = true;
    for (const size_t n : vector_sizes(big)) {
        const std::string label = "n=" + std::to_string(n);
        const std::vector<float> a = random_floats(n, seed_for("a" + label), -1, 1);
        const std::vector<float> b = random_floats(n, seed_for("b" + label), -1, 1);
        DeviceBuffer<float> da(a), db(b), dc(n);
        PinnedBuffer<float> c_host(n);
        dc.poison();
        LegacyStreamGate gate(gate_limit_ms());
        ch01::vector_add(da.get(), db.get(), dc.get(), n, stream);
        // Only the big size is 0.2 ms of work: long enough to be running still when the call returns.
        const bool still_running = cudaStreamQuery(stream) == cudaErrorNotReady;
        const std::vector<float> c = dc.download_on(stream, c_host);
        const bool stayed_on_stream = gate.open();
        std::vector<double> expected(n);
        for (size_t i = 0; i < n; ++i) expected[i] = double(a[i]) + double(b[i]);
        // One float addition: within half an ulp of the exact sum.
        Comparison sums = compare_close(expected, c, {0, FLT_EPSILON / 2});
        bool ok = check("correct", label, sums.ok(),
                        sums.message() + "\n(the kernel's work belongs on `stream`: the grader reads c through it)");
        ok &= check("correct", label + ", only its stream", stayed_on_stream,
                    "vector_add waited on the legacy default stream (cudaMemcpy, cudaDeviceSynchronize...): it "
                    "enqueues its kernel on `stream` and returns without waiting");
        // (Under compute-sanitizer a kernel may finish before its launch returns.)
        if (n == big && options().sanitizer.empty())
            ok &= check("correct", label + ", returns at once", still_running,
                        "the kernel had finished when vector_add returned: enqueue it on `stream` and return "
                        "without waiting (the caller decides when to wait)");
        ok &= check("correct", label + " inputs unchanged", da.download() == a && db.download() == b,
                    "vector_add changed its inputs a or b");
        ok &= check("correct", label + " bounds", dc.guard_intact(), "a thread wrote past the end of c");
        all_correct &= ok;
        if (!stayed_on_stream) break;
    }
    if (!all_correct) return;

    // The race: on a big input whose a and b change in one place before each round; every call's
    // c, poisoned before it, must equal the reference's c for that round.
    const std::vector<float> a = random_floats(big, seed_for("race a"), -1, 1);
    const std::vector<float> b = random_floats(big, seed_for("race b"), -1, 1);
    DeviceBuffer<float> da(a), db(b), dc(big), expected(big);
    std::mt19937_64 rng(seed_for("timed inputs"));
    const size_t bytes = big * sizeof(float);
    auto adder = [&](const std::string& name, decltype(&ch01::vector_add) add) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t s, int) { dc.poison_on(s); };
        c.run = [&, add](cudaStream_t s, int) { add(da.get(), db.get(), dc.get(), big, s); };
        c.verify = [&](int) {
            const unsigned long long wrong = count_differences(dc.get(), expected.get(), bytes, stream);
            return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes of c differ from a + b";
        };
        return c;
    };
    Contender copy;
    copy.name = "device-to-device copy";
    copy.bytes = 2.0 * bytes;  // read + write
    copy.run = [&](cudaStream_t s, int) {
        CUDA_CHECK(cudaMemcpyAsync(dc.get(), da.get(), bytes, cudaMemcpyDeviceToDevice, s));
    };
    SpeedTrial trial;
    trial.yours = adder("your code", ch01::vector_add);
    trial.reference = adder("the reference", ref::vector_add);
    trial.baselines = {copy};
    trial.vary = [&](int) {
        const size_t i = rng() % big, j = rng() % big;
        da.set(i, random_floats(1, rng(), -1, 1)[0]);
        db.set(j, random_floats(1, rng(), -1, 1)[0]);
        ref::vector_add(da.get(), db.get(), expected.get(), big, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    trial.bytes = 3.0 * bytes;  // two reads + one write
    check_speed("speed", trial);
}

TEST_CASE("event_timing") {
    Stream stream;  // non-blocking: events recorded on the legacy default stream would not bracket its work
    DeviceBuffer<int> done(1);
    done.fill_bytes(0);
    // Work of a different length for every call, drawn from the seed: a function that returns a
    // number it did not measure cannot agree with all of them.
    const int calls = 5;
    std::mt19937_64 rng(seed_for("durations"));
    // Each timing, the harness's and the student's, starts behind a 1 ms kernel already on the
    // stream: the start event runs only once the work behind it has been queued, so a host thread
    // descheduled between the two calls (a busy machine) does not lengthen what is measured.
    const auto behind_a_gate = [&stream] { launch_busy_wait(1000, stream); };
    std::vector<StreamWork> works;
    std::vector<double> harness_ms;
    for (int i = 0; i < calls; ++i) {
        const double microseconds = 1000 + double(rng() % 3000);
        works.push_back([&done, microseconds](cudaStream_t s) { launch_busy_wait(microseconds, s, done.get()); });
        std::vector<double> samples;
        for (int repeat = 0; repeat < 5; ++repeat) {
            Event start, stop;
            behind_a_gate();
            CUDA_CHECK(cudaEventRecord(start, stream));
            works.back()(stream);
            CUDA_CHECK(cudaEventRecord(stop, stream));
            CUDA_CHECK(cudaEventSynchronize(stop));
            samples.push_back(elapsed_ms(start, stop));
        }
        harness_ms.push_back(summarize(samples).median);
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    done.fill_bytes(0);

    std::vector<double> student;
    int unfinished = 0;
    for (int i = 0; i < calls; ++i) {
        behind_a_gate();
        student.push_back(ch01::time_with_events_ms(works[i], stream));
        if (cudaStreamQuery(stream) != cudaSuccess) ++unfinished;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const int ran = done.download()[0];
    check("waits", "work ran", ran == calls,
          "the work ran " + std::to_string(ran) + " times in " + std::to_string(calls) + " calls: call work(stream) once per call");
    check("waits", "finished on return", unfinished == 0,
          std::to_string(unfinished) + " of " + std::to_string(calls) +
              " calls returned before the work had finished: wait for the stop event");

    if (!options().sanitizer.empty()) {
        skip("agrees", "1-4 ms of work", "timings under compute-sanitizer are not the program's own");
        return;
    }
    for (int i = 0; i < calls; ++i) {
        const double tolerance = 0.05 * harness_ms[i] + 0.02;
        check("agrees", "call " + std::to_string(i + 1), std::fabs(student[i] - harness_ms[i]) <= tolerance,
              "measured " + std::to_string(student[i]) + " ms; the harness measured " + std::to_string(harness_ms[i]) +
                  " ms for the same work (tolerance " + std::to_string(tolerance) + " ms)");
    }
}
