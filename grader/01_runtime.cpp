// Grader for chapter 01 (runtime). One TEST_CASE per exercise, named as in thresholds.json.
#include <cfloat>
#include <cmath>

#include "01_runtime.h"
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
        ch01::visit_2d(visits.get(), coords.get(), s.width, s.height);
        CUDA_CHECK(cudaDeviceSynchronize());
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
        ch01::visit_grid_stride(visits.get(), l.n, l.blocks, l.threads);
        CUDA_CHECK(cudaDeviceSynchronize());
        check("grid_stride", label, compare_exact(std::vector<int>(l.n, 1), visits.download()));
        check("grid_stride", label + " bounds", visits.guard_intact(), "a thread wrote past the end of the array");
    }
}

TEST_CASE("vector_add") {
    Stream stream;
    const size_t big = size_t(64) << 20;  // 256 MiB per array: far past L2 and launch overhead
    for (const size_t n : {size_t(1), size_t(3), size_t(1000), size_t(1000003), big}) {
        const std::string label = "n=" + std::to_string(n);
        const std::vector<float> a = random_floats(n, seed_for("a" + label), -1, 1);
        const std::vector<float> b = random_floats(n, seed_for("b" + label), -1, 1);
        DeviceBuffer<float> da(a), db(b), dc(n);
        dc.poison();
        ch01::vector_add(da.get(), db.get(), dc.get(), n, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<double> expected(n);
        for (size_t i = 0; i < n; ++i) expected[i] = double(a[i]) + double(b[i]);
        // One float addition: within half an ulp of the exact sum.
        const bool correct = check("correct", label, compare_close(expected, dc.download(), {0, FLT_EPSILON / 2}));
        check("correct", label + " inputs unchanged", da.download() == a && db.download() == b,
              "vector_add changed its inputs a or b");
        check("correct", label + " bounds", dc.guard_intact(), "a thread wrote past the end of c");
        if (n != big || !correct) continue;

        check_speed("bandwidth", [&] {
            const double bytes = double(n) * sizeof(float);
            const Interleaved t = time_interleaved(
                [&](cudaStream_t s) { CUDA_CHECK(cudaMemcpyAsync(dc.get(), da.get(), bytes, cudaMemcpyDeviceToDevice, s)); },
                [&](cudaStream_t s) { ch01::vector_add(da.get(), db.get(), dc.get(), n, s); }, stream);
            const double copy_gbs = 2 * bytes / t.baseline.median / 1e6;   // read + write
            const double add_gbs = 3 * bytes / t.candidate.median / 1e6;   // two reads + one write
            return Ratio{add_gbs / copy_gbs, t.noise(),
                         "vector_add " + std::to_string(int(add_gbs)) + " GB/s, device-to-device copy " +
                             std::to_string(int(copy_gbs)) + " GB/s"};
        });
    }
}

TEST_CASE("event_timing") {
    Stream stream;  // non-blocking: events recorded on the legacy default stream would not bracket its work
    DeviceBuffer<int> done(1);
    done.fill_bytes(0);
    const double microseconds = 2000;
    const StreamWork work = [&](cudaStream_t s) { launch_busy_wait(microseconds, s, done.get()); };

    const double harness_ms = time_on_stream(work, stream).median;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    done.fill_bytes(0);

    const int calls = 5;
    std::vector<double> student;
    int unfinished = 0;
    for (int i = 0; i < calls; ++i) {
        student.push_back(ch01::time_with_events_ms(work, stream));
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
        skip("agrees", "2 ms of work", "timings under compute-sanitizer are not the program's own");
        return;
    }
    const double got = median(student);
    const double tolerance = 0.05 * harness_ms + 0.02;
    const bool close = std::fabs(got - harness_ms) <= tolerance;
    check("agrees", "2 ms of work", close,
          "measured " + std::to_string(got) + " ms; the harness measured " + std::to_string(harness_ms) +
              " ms (tolerance " + std::to_string(tolerance) + " ms)");
}
