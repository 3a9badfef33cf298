// Grader for chapter 05 (L2 cache). One TEST_CASE per exercise, named as in thresholds.json.
//
// Every test leaves the L2 as it found it (no set-aside, no persisting lines), whatever the code
// graded did: a set-aside left behind slows every later kernel that streams writes (notes, section 6).
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "05_l2cache.h"          // ch05: the code graded
#define ch05 COURSE_REFERENCE    // ref: the grader's own copy of the reference solution
#include "05_l2cache.h"
#undef ch05
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("05_l2cache", 8, 0, "L2 access policy windows: compute capability 8.0 (Ampere) or newer");

using namespace grade;

namespace {

int attribute(cudaDeviceAttr attr) {
    int device = 0, value = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaDeviceGetAttribute(&value, attr, device));
    return value;
}

size_t persisting_limit() {
    size_t limit = 0;
    CUDA_CHECK(cudaDeviceGetLimit(&limit, cudaLimitPersistingL2CacheSize));
    return limit;
}

// What the driver grants when asked for `bytes` of set-aside (it may round).
size_t granted(size_t bytes) {
    const size_t before = persisting_limit();
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, bytes));
    const size_t got = persisting_limit();
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, before));
    return got;
}

// No set-aside and no persisting lines, now and when the test ends.
struct CleanL2 {
    CleanL2() { reset(); }
    ~CleanL2() { reset(); }
    // Best effort, and so unchecked: it runs in a destructor too, where an exercise's sticky error
    // would make every call fail and a throw would end the process.
    static void reset() {
        (void)cudaDeviceSynchronize();
        (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
        (void)cudaCtxResetPersistingL2Cache();
    }
};

// The grader's own plan, from the device's attributes (exercise 1's rule).
ch05::PersistencePlan expected_plan(size_t hot_bytes) {
    ch05::PersistencePlan p;
    p.set_aside_bytes = std::min(size_t(attribute(cudaDevAttrL2CacheSize)) / 4 * 3,
                                 size_t(attribute(cudaDevAttrMaxPersistingL2CacheSize)));
    p.window_bytes = std::min(hot_bytes, size_t(attribute(cudaDevAttrMaxAccessPolicyWindowSize)));
    p.hit_ratio = p.window_bytes == 0 ? 0.0f : float(std::min(1.0, double(p.set_aside_bytes) / p.window_bytes));
    return p;
}

bool can_set_aside() {
    if (attribute(cudaDevAttrMaxPersistingL2CacheSize) > 0) return true;
    skip("this GPU", "persisting L2", "this GPU cannot set aside L2 for persisting accesses (persistingL2CacheMaxSize is 0)");
    return false;
}

cudaAccessPolicyWindow stream_window(cudaStream_t stream) {
    cudaStreamAttrValue value{};
    CUDA_CHECK(cudaStreamGetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &value));
    return value.accessPolicyWindow;
}

std::string mib(size_t bytes) { return std::to_string(double(bytes) / (1 << 20)).substr(0, 7) + " MiB"; }

std::string describe(const cudaAccessPolicyWindow& w, const void* hot) {
    auto prop = [](cudaAccessProperty p) {
        return p == cudaAccessPropertyPersisting ? "persisting" : p == cudaAccessPropertyStreaming ? "streaming" : "normal";
    };
    return std::string(w.base_ptr == hot ? "over the hot buffer" : "not at the hot buffer") + ", " + mib(w.num_bytes) +
           ", hitRatio " + std::to_string(w.hitRatio) + ", on a hit " + prop(w.hitProp) + ", on a miss " + prop(w.missProp);
}

bool ratio_close(float got, float expected) { return std::fabs(got - expected) <= 1e-4f * std::max(1.0f, expected); }

// The window a stream should carry for a hot buffer, with the hit ratio given.
std::string window_problem(const cudaAccessPolicyWindow& w, const void* hot, size_t bytes, float hit_ratio) {
    const bool ok = w.base_ptr == hot && w.num_bytes == bytes && ratio_close(w.hitRatio, hit_ratio) &&
                    w.hitProp == cudaAccessPropertyPersisting && w.missProp == cudaAccessPropertyStreaming;
    if (ok) return "";
    return "the window was " + describe(w, hot) + "; expected over the hot buffer, " + mib(bytes) + ", hitRatio " +
           std::to_string(hit_ratio) + ", on a hit persisting, on a miss streaming";
}

// The given workload: a hot table gathered at random while a stream of values is read once.
struct Workload {
    size_t table_n, n4;
    DeviceBuffer<int> table;
    DeviceBuffer<int4> values;
    DeviceBuffer<unsigned long long> total, expected;

    Workload(size_t table_bytes, size_t values_bytes, const std::string& label)
        : table_n(table_bytes / sizeof(int)), n4(values_bytes / sizeof(int4)),
          table(random_ints(table_n, seed_for("table " + label), -1000, 1000)), values(n4), total(1), expected(1) {
        const std::vector<int> v = random_ints(n4 * 4, seed_for("values " + label), -1000, 1000);
        CUDA_CHECK(cudaMemcpy(values.get(), v.data(), n4 * sizeof(int4), cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    // One call's work: `launches` gathers, each with its own salt, into *total.
    void run(cudaStream_t s, int launches, unsigned long long* into = nullptr) const {
        into = into ? into : const_cast<unsigned long long*>(total.get());
        CUDA_CHECK(cudaMemsetAsync(into, 0, sizeof(unsigned long long), s));
        for (int k = 0; k < launches; ++k) ref::gather_sum(table.get(), table_n, values.get(), n4, 77u * k, into, s);
    }
    // The right total, from the grader's own plain launches.
    unsigned long long right_total(cudaStream_t s, int launches) {
        run(s, launches, expected.get());
        CUDA_CHECK(cudaStreamSynchronize(s));
        return expected.download()[0];
    }
};

}  // namespace

TEST_CASE("plan") {
    const size_t aside = expected_plan(0).set_aside_bytes;
    const size_t window_max = size_t(attribute(cudaDevAttrMaxAccessPolicyWindowSize));
    for (const size_t hot : {size_t(0), size_t(1) << 20, aside / 2 + 4096, 2 * aside + 12345, window_max + 4096}) {
        const std::string label = "a hot buffer of " + std::to_string(hot) + " bytes";
        int device = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        const ch05::PersistencePlan got = ch05::plan_persistence(device, hot), want = expected_plan(hot);
        check("plan", label + ", set-aside", got.set_aside_bytes == want.set_aside_bytes,
              "set_aside_bytes " + std::to_string(got.set_aside_bytes) + ", expected " + std::to_string(want.set_aside_bytes) +
                  ": the smaller of 3/4 of the L2 and persistingL2CacheMaxSize");
        check("plan", label + ", window", got.window_bytes == want.window_bytes,
              "window_bytes " + std::to_string(got.window_bytes) + ", expected " + std::to_string(want.window_bytes) +
                  ": the hot buffer, at most accessPolicyMaxWindowSize");
        check("plan", label + ", hit ratio", ratio_close(got.hit_ratio, want.hit_ratio),
              "hit_ratio " + std::to_string(got.hit_ratio) + ", expected " + std::to_string(want.hit_ratio) +
                  ": the share of the window that fits the set-aside, at most 1");
    }
}

TEST_CASE("stream_window") {
    const CleanL2 clean;
    if (!can_set_aside()) return;
    const size_t aside = expected_plan(0).set_aside_bytes;
    Stream stream;
    bool all_correct = true;
    for (const double share : {0.5, 1.5}) {
        const size_t hot = size_t(aside * share) / 16 * 16;
        const std::string label = "a hot table of " + mib(hot);
        Workload load(hot, size_t(64) << 20, label);
        const unsigned long long right = load.right_total(stream, 2);
        const ch05::PersistencePlan plan = expected_plan(hot);
        // A limit other than 0 before the call: it must be restored, not merely cleared.
        const size_t before = granted(size_t(2) << 20);
        CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, before));
        int calls = 0;
        cudaAccessPolicyWindow during{};
        size_t limit_during = 0;
        auto work = [&](cudaStream_t s) {
            ++calls;
            during = stream_window(s);
            limit_during = persisting_limit();
            load.run(s, 2);
        };
        std::unique_ptr<Witness> witness = open_witness();
        ch05::run_with_stream_window(load.table.get(), hot, work, stream);
        const bool finished = cudaStreamQuery(stream) == cudaSuccess;
        if (witness) witness->stop_calls();
        const cudaAccessPolicyWindow after = stream_window(stream);
        const size_t limit_after = persisting_limit();
        bool ok = check("correct", label + ", work ran once", calls == 1,
                        "work(stream) was called " + std::to_string(calls) + " times: call it once");
        ok &= check("correct", label + ", finished on return", finished, "the work was still running on return: wait for it");
        ok &= check("correct", label + ", total", load.total.download()[0] == right, "the workload's total is wrong");
        const std::string problem = window_problem(during, load.table.get(), plan.window_bytes, plan.hit_ratio);
        ok &= check("correct", label + ", the window during the work", problem.empty(), problem);
        ok &= check("correct", label + ", the set-aside during the work", limit_during == granted(plan.set_aside_bytes),
                    "the set-aside was " + mib(limit_during) + " while the work ran; the plan's is " + mib(plan.set_aside_bytes));
        ok &= check("correct", label + ", no window after", after.num_bytes == 0,
                    "the stream still carried a window of " + mib(after.num_bytes) + " on return: set one of 0 bytes");
        ok &= check("correct", label + ", the limit restored", limit_after == before,
                    "the set-aside was " + mib(limit_after) + " on return; it was " + mib(before) +
                        " before the call: restore it (a set-aside left behind slows other kernels)");
        if (witness) {
            witness->finish();
            const std::vector<std::string>& calls_made = witness->api_calls();
            const auto last = [&](const char* name) {
                const auto it = std::find(calls_made.rbegin(), calls_made.rend(), name);
                return it == calls_made.rend() ? -1 : int(calls_made.rend() - it) - 1;
            };
            ok &= check("correct", label + ", persisting lines reset after the work",
                        last("cudaCtxResetPersistingL2Cache") > last("cudaLaunchKernel"),
                        "no cudaCtxResetPersistingL2Cache after the work: lines it made persisting keep their L2 share "
                        "until reset");
        }
        all_correct &= ok;
    }
    if (!all_correct) return;

    // The race: a hot table as large as the set-aside, gathered at random while 256 MiB of values
    // stream by, four launches a call; one table entry changed before each round.
    const size_t hot = aside / 16 * 16;
    Workload load(hot, size_t(256) << 20, "race");
    std::mt19937_64 rng(seed_for("timed inputs"));
    unsigned long long right = 0;
    auto work = [&](cudaStream_t s) { load.run(s, 4); };
    auto verify = [&](int) {
        const unsigned long long got = load.total.download()[0];
        return got == right ? std::string() : "the workload's total is wrong";
    };
    auto contender = [&](const std::string& name, decltype(&ch05::run_with_stream_window) run) {
        Contender c;
        c.name = name;
        c.run = [&, run](cudaStream_t s, int) { run(load.table.get(), hot, work, s); };
        c.verify = verify;
        return c;
    };
    Contender none;
    none.name = "no window, no set-aside";
    none.run = [&](cudaStream_t s, int) {
        work(s);
        CUDA_CHECK(cudaStreamSynchronize(s));
    };
    none.verify = verify;
    SpeedTrial trial;
    trial.yours = contender("your code", ch05::run_with_stream_window);
    trial.reference = contender("the reference", ref::run_with_stream_window);
    trial.baselines = {none};
    trial.vary = [&](int) {
        load.table.set(rng() % load.table_n, int(rng() % 2001) - 1000);
        right = load.right_total(stream, 4);
        CleanL2::reset();
    };
    trial.clock = Clock::device_wide;
    check_speed("speed", trial);
}

TEST_CASE("launch_window") {
    const CleanL2 clean;
    if (!can_set_aside()) return;
    const size_t aside = expected_plan(0).set_aside_bytes;
    Stream stream;
    const size_t hot = aside / 16 * 16;
    Workload load(hot, size_t(64) << 20, "launch");
    const unsigned long long right = load.right_total(stream, 1);
    // A set-aside below the largest: the code must read the one in force.
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, aside / 2));
    load.total.fill_bytes(0);
    std::unique_ptr<Witness> witness = open_witness();
    ch05::gather_sum_with_window(load.table.get(), load.table_n, load.values.get(), load.n4, 0, load.total.get(), stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (witness) witness->stop_calls();
    check("correct", "total", load.total.download()[0] == right, "the total is wrong: launch gather_sum_kernel once");
    check("correct", "the stream untouched", stream_window(stream).num_bytes == 0,
          "the stream carries a window: the window belongs to the launch, not to the stream");
    if (!witness) return;
    witness->finish();
    const std::vector<KernelRun>& k = witness->kernels();
    const bool one = k.size() == 1 && k[0].name.find("gather_sum_kernel") != std::string::npos;
    check("correct", "technique: one launch of the kernel", one,
          std::to_string(k.size()) + " kernels ran" + (k.empty() ? "" : ", the first " + k[0].short_name()) +
              ": launch gather_sum_kernel once");
    check("correct", "technique: a launch attribute", witness->calls_to({"cudaLaunchKernelExC", "cudaLaunchKernelEx"}) == 1,
          "gather_sum_with_window did not launch with cudaLaunchKernelEx: the window is an attribute of the launch");
}

TEST_CASE("shared_windows") {
    const CleanL2 clean;
    if (!can_set_aside()) return;
    const size_t window_max = size_t(attribute(cudaDevAttrMaxAccessPolicyWindowSize));
    // A set-aside below the largest: the code must read the one in force.
    CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, expected_plan(0).set_aside_bytes / 3 * 2));
    const size_t aside = persisting_limit();
    struct Case {
        size_t a, b;
    };
    for (const Case c : {Case{size_t(8) << 20, size_t(24) << 20}, Case{aside, aside}, Case{size_t(1) << 20, window_max + (size_t(8) << 20)}}) {
        const std::string label = mib(c.a) + " and " + mib(c.b);
        DeviceBuffer<char> a(c.a), b(c.b);
        Stream sa, sb;
        ch05::share_set_aside(sa, a.get(), c.a, sb, b.get(), c.b);
        const cudaAccessPolicyWindow wa = stream_window(sa), wb = stream_window(sb);
        const double total = double(c.a) + double(c.b);
        auto expected_ratio = [&](size_t bytes) {
            const size_t window = std::min(bytes, window_max);
            return float(std::min(1.0, aside * (double(bytes) / total) / window));
        };
        const std::string pa = window_problem(wa, a.get(), std::min(c.a, window_max), expected_ratio(c.a));
        const std::string pb = window_problem(wb, b.get(), std::min(c.b, window_max), expected_ratio(c.b));
        check("shares", label + ", stream a", pa.empty(), pa);
        check("shares", label + ", stream b", pb.empty(), pb);
        const double persisting = wa.num_bytes * double(wa.hitRatio) + wb.num_bytes * double(wb.hitRatio);
        check("shares", label + ", both fit", persisting <= aside * (1 + 1e-5),
              "the windows' persisting shares add up to " + mib(size_t(persisting)) + ", more than the set-aside in force, " +
                  mib(aside));
    }
}
