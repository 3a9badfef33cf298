// Grader for chapter 06 (clusters). One TEST_CASE per exercise, named as in thresholds.json.
#include <algorithm>
#include <cmath>
#include <memory>
#include <random>

#include "06_clusters.h"          // ch06: the code graded
#define ch06 COURSE_REFERENCE     // ref: the grader's own copy of the reference solution
#include "06_clusters.h"
#undef ch06
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("06_clusters", 9, 0, "thread block clusters: compute capability 9.0 (Hopper) or newer");

using namespace grade;

namespace {

const std::initializer_list<const char*> kLaunchEx = {"cudaLaunchKernelExC", "cudaLaunchKernelEx"};

std::string dims(const unsigned (&d)[3]) {
    return std::to_string(d[0]) + "x" + std::to_string(d[1]) + "x" + std::to_string(d[2]);
}

// ---- Exercise 1 ---------------------------------------------------------------------------------
struct Blocks {
    int x, y;
};

// Five numbers per block, as BlockRecord holds them, for the block array the grid covers.
std::vector<uint32_t> expected_records(Blocks b, int cluster_x, int cluster_y) {
    std::vector<uint32_t> r;
    for (int y = 0; y < b.y; ++y)
        for (int x = 0; x < b.x; ++x) {
            const unsigned ix = x % cluster_x, iy = y % cluster_y;
            r.insert(r.end(), {ix + iy * cluster_x, ix, iy, unsigned(cluster_x), unsigned(cluster_y)});
        }
    return r;
}

std::vector<uint32_t> as_numbers(const std::vector<ch06::BlockRecord>& records) {
    std::vector<uint32_t> r;
    for (const ch06::BlockRecord& b : records) r.insert(r.end(), {b.rank, b.index_x, b.index_y, b.dim_x, b.dim_y});
    return r;
}

unsigned rounded_up(int n, int multiple) { return unsigned((n + multiple - 1) / multiple * multiple); }

// One call: the records, nothing written outside them, and (CUPTI) the kernel's cluster shape and
// grid, and whether cudaLaunchKernelEx chose the shape.
void check_records(const std::string& key, Blocks b, int cluster_x, int cluster_y, bool run_time) {
    const std::string label = std::to_string(b.x) + "x" + std::to_string(b.y) + " blocks in clusters of " +
                              std::to_string(cluster_x) + "x" + std::to_string(cluster_y);
    Stream stream;
    DeviceBuffer<ch06::BlockRecord> records(size_t(b.x) * b.y);
    records.poison();
    std::unique_ptr<Witness> witness = open_witness();
    try {
        if (run_time)
            ch06::record_run_time_clusters(records.get(), b.x, b.y, cluster_x, cluster_y, stream);
        else
            ch06::record_compile_time_clusters(records.get(), b.x, b.y, stream);
    } catch (const std::exception& e) {  // a launch the runtime refused (a grid of partial clusters, say)
        check(key, label, false, e.what());
        return;
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    check(key, label, compare_exact(expected_records(b, cluster_x, cluster_y), as_numbers(records.download())));
    check(key, label + ", bounds", records.guard_intact(), "a block wrote past the end of the records");
    if (!witness) return;
    witness->finish();
    const std::vector<KernelRun>& k = witness->kernels();
    if (!check(key, label + ", one kernel", k.size() == 1, std::to_string(k.size()) + " kernels ran: launch one"))
        return;
    const bool shape = k[0].cluster[0] == unsigned(cluster_x) && k[0].cluster[1] == unsigned(cluster_y) &&
                       k[0].cluster[2] == 1;
    check(key, label + ", technique: the cluster's shape", shape,
          "the kernel ran in clusters of " + dims(k[0].cluster) + ", expected " + std::to_string(cluster_x) + "x" +
              std::to_string(cluster_y) + "x1");
    const bool grid = k[0].grid[0] == rounded_up(b.x, cluster_x) && k[0].grid[1] == rounded_up(b.y, cluster_y) &&
                      k[0].grid[2] == 1;
    check(key, label + ", technique: the grid", grid,
          "the kernel ran with " + k[0].shape() + ": expected the block array rounded up to whole clusters, " +
              std::to_string(rounded_up(b.x, cluster_x)) + "x" + std::to_string(rounded_up(b.y, cluster_y)) + "x1");
    const int ex = witness->calls_to(kLaunchEx);
    if (run_time)
        check(key, label + ", technique: chosen at run time", ex >= 1,
              "no cudaLaunchKernelEx call: the cluster's shape is a launch attribute given at run time");
    else
        check(key, label + ", technique: fixed at compile time", ex == 0,
              "the kernel was launched with cudaLaunchKernelEx: here the shape is the kernel's own, "
              "__cluster_dims__(2, 2, 1), and a plain <<<grid, block>>> launch uses it");
}

// ---- Exercises 2 and 3 ------------------------------------------------------------------------------
// The clusters of a kernel's configuration that fit on the GPU at once, as the grader asks the
// runtime itself (0 and a reason when it cannot).
int clusters_that_fit(const void* kernel, int cluster_size, int threads, std::string& why) {
    const int shared = ch06::kBins / cluster_size * int(sizeof(int));
    cudaLaunchConfig_t config{};
    cudaLaunchAttribute attribute{};
    attribute.id = cudaLaunchAttributeClusterDimension;
    attribute.val.clusterDim.x = cluster_size;
    attribute.val.clusterDim.y = attribute.val.clusterDim.z = 1;
    config.gridDim = cluster_size;
    config.blockDim = threads;
    config.dynamicSmemBytes = shared;
    config.attrs = &attribute;
    config.numAttrs = 1;
    int clusters = 0;
    cudaError_t e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, shared);
    if (e == cudaSuccess) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
    if (e == cudaSuccess) e = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config);
    if (e != cudaSuccess) {
        cudaGetLastError();
        why = std::string("the runtime could not size histogram_clusters_kernel(): ") + cudaGetErrorName(e);
        return 0;
    }
    return clusters;
}

// Values in [-100, kBins + 100): uniform, or skewed towards low bins as real data is (half of
// them fall in the first 256 bins), a few out of range either way.
std::vector<int> histogram_values(size_t n, bool skewed, const std::string& label) {
    if (!skewed) return random_ints(n, seed_for("uniform " + label), -100, ch06::kBins + 99);
    std::mt19937_64 rng(seed_for("skewed " + label));
    std::uniform_real_distribution<double> u(0, 1);
    std::vector<int> v(n);
    for (int& x : v) {
        const uint64_t r = rng();
        x = r % 100 == 0 ? int(r % 300) - 150 + (r % 2 ? ch06::kBins : 0) : int(ch06::kBins * std::pow(u(rng), 8));
    }
    return v;
}

std::vector<int> histogram_on_cpu(const std::vector<int>& values) {
    std::vector<int> bins(ch06::kBins, 0);
    for (int v : values) ++bins[std::min(std::max(v, 0), ch06::kBins - 1)];
    return bins;
}

// ---- Exercise 4 ---------------------------------------------------------------------------------------
std::vector<double> diffuse_on_cpu(const std::vector<float>& in, int rods, int steps, double alpha) {
    std::vector<double> u(in.begin(), in.end()), next(u.size());
    const int L = ch06::kRodCells;
    for (int s = 0; s < steps; ++s) {
        for (int r = 0; r < rods; ++r) {
            const double* a = &u[size_t(r) * L];
            double* b = &next[size_t(r) * L];
            for (int i = 0; i < L; ++i) {
                const double l = a[i > 0 ? i - 1 : 0], c = a[i], rr = a[i < L - 1 ? i + 1 : L - 1];
                b[i] = c + alpha * (l - 2 * c + rr);
            }
        }
        std::swap(u, next);
    }
    return u;
}

// Temperatures stay in [0, 1], and a step's weights are non-negative and sum to 1 (alpha <= 1/2):
// float rounding adds at most a few ulps of 1 per step, and no step amplifies what came before.
Tolerance diffusion_tolerance(int steps) { return {1e-6 + 2.5e-7 * steps, 0}; }

}  // namespace

TEST_CASE("cluster_launch") {
    std::mt19937_64 rng(seed_for("shapes"));
    const Blocks drawn{int(3 + rng() % 60), int(3 + rng() % 20)};
    for (const Blocks b : {Blocks{2, 2}, Blocks{5, 3}, Blocks{64, 7}, drawn})
        check_records("compile_time", b, 2, 2, false);
    struct Case {
        Blocks b;
        int cx, cy;
    };
    for (const Case c : {Case{{8, 3}, 2, 1}, Case{{13, 5}, 4, 1}, Case{{6, 7}, 1, 2}, Case{{9, 9}, 2, 4},
                         Case{{17, 2}, 8, 1}, Case{drawn, 2, 2}})
        check_records("run_time", c.b, c.cx, c.cy, true);
}

TEST_CASE("cluster_occupancy") {
    const void* kernel = ch06::histogram_clusters_kernel();
    struct Case {
        int cluster_size, threads;
    };
    for (const Case c : {Case{2, 1024}, Case{2, 256}, Case{4, 512}, Case{8, 256}, Case{8, 1024}, Case{16, 256}}) {
        const std::string label = "clusters of " + std::to_string(c.cluster_size) + " blocks of " +
                                  std::to_string(c.threads) + " threads";
        std::unique_ptr<Witness> witness = open_witness();
        const int got = ch06::clusters_that_fit(c.cluster_size, c.threads);
        if (witness) witness->finish();
        std::string why;
        const int expected = clusters_that_fit(kernel, c.cluster_size, c.threads, why);
        check("fits", label, expected > 0 && got == expected,
              expected > 0 ? "returned " + std::to_string(got) + "; the runtime says " + std::to_string(expected) +
                                 " clusters of this kernel fit at once"
                           : why);
        if (witness)
            check("fits", label + ", technique: asked the runtime",
                  witness->calls_to({"cudaOccupancyMaxActiveClusters"}) >= 1,
                  "clusters_that_fit did not call cudaOccupancyMaxActiveClusters: the answer depends on the kernel, "
                  "the GPU and the launch, so ask the runtime");
    }
}

TEST_CASE("histogram") {
    const bool sanitized = !options().sanitizer.empty();
    const void* kernel = ch06::histogram_clusters_kernel();
    std::mt19937_64 rng(seed_for("sizes"));
    const size_t drawn = 2 + rng() % (size_t(4) << 20);
    struct Case {
        int cluster_size;
        size_t n;
        bool skewed;
    };
    std::vector<Case> cases = {{2, 0, false}, {2, 1, false}, {2, 1003, true}, {2, drawn, false}, {2, drawn, true}};
    for (int cs : {4, 8, 16}) cases.insert(cases.end(), {{cs, 4099, false}, {cs, drawn, true}});
    Stream stream;
    bool all_correct = true;
    for (const Case& c : cases) {
        const std::string label = "clusters of " + std::to_string(c.cluster_size) + ", n=" + std::to_string(c.n) +
                                  (c.skewed ? " skewed" : " uniform");
        if (sanitized && c.n > 5000) {
            skip("correct", label, "too large to run under compute-sanitizer in reasonable time");
            continue;
        }
        const std::vector<int> values = histogram_values(c.n, c.skewed, label);
        DeviceBuffer<int> d_values(values), bins(ch06::kBins);
        bins.poison();
        // The technique, once per cluster size: as CUPTI records the call.
        const bool witnessed = c.n == (c.cluster_size == 2 ? drawn : 4099) && !c.skewed;
        std::unique_ptr<Witness> witness = witnessed ? open_witness() : nullptr;
        LegacyStreamGate gate(gate_limit_ms());
        ch06::histogram_clusters(d_values.get(), c.n, bins.get(), c.cluster_size, stream);
        const bool stayed_on_stream = gate.open();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        bool ok = check("correct", label, compare_exact(histogram_on_cpu(values), bins.download()));
        ok &= check("correct", label + ", only its stream", stayed_on_stream,
                    "histogram_clusters waited on the legacy default stream (cudaMemset, cudaDeviceSynchronize...): "
                    "its work goes on `stream`");
        ok &= check("correct", label + ", values unchanged", d_values.download() == values, "the values changed");
        ok &= check("correct", label + ", bounds", bins.guard_intact(), "wrote past the end of bins");
        if (witness) {
            witness->finish();
            const std::vector<KernelRun>& k = witness->kernels();
            ok &= check("correct", label + ", technique: one kernel", k.size() == 1,
                        std::to_string(k.size()) + " kernels ran: one kernel counts, zero the bins with cudaMemsetAsync");
            if (k.size() == 1) {
                const unsigned cs = c.cluster_size;
                ok &= check("correct", label + ", technique: clusters", k[0].cluster[0] * k[0].cluster[1] * k[0].cluster[2] == cs,
                            "the kernel ran in clusters of " + dims(k[0].cluster) + ", expected " + std::to_string(cs) +
                                " blocks");
                const int slice = ch06::kBins / c.cluster_size * int(sizeof(int));
                ok &= check("correct", label + ", technique: counters in shared memory",
                            k[0].dynamic_shared_bytes + k[0].static_shared_bytes >= slice,
                            "a block had " + std::to_string(k[0].dynamic_shared_bytes + k[0].static_shared_bytes) +
                                " bytes of shared memory: it holds kBins / cluster_size counters, " + std::to_string(slice) +
                                " bytes");
                std::string why;
                const int fit = clusters_that_fit(kernel, c.cluster_size, int(k[0].block[0] * k[0].block[1] * k[0].block[2]), why);
                ok &= check("correct", label + ", technique: one wave of clusters",
                            fit > 0 && k[0].grid[0] * k[0].grid[1] * k[0].grid[2] == unsigned(fit) * cs,
                            "the kernel ran with " + k[0].shape() + "; " + std::to_string(fit) +
                                " clusters of this kernel fit on the GPU at once: launch that many (clusters_that_fit), "
                                "each looping over the values");
            }
        }
        all_correct &= ok;
        if (!stayed_on_stream) break;
    }
    if (!all_correct) return;

    // The race: 64 Mi uniform values, one changed before each round; each call's bins, poisoned
    // before it, must equal the reference's for that round.
    const size_t big = size_t(64) << 20;
    std::vector<int> values = random_ints(big, seed_for("race values"), -100, ch06::kBins + 99);
    DeviceBuffer<int> d_values(values), bins(ch06::kBins), expected(ch06::kBins);
    values = {};
    std::mt19937_64 vary_rng(seed_for("timed inputs"));
    auto contender = [&](const std::string& name, decltype(&ch06::histogram_clusters) histogram, int cluster_size) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t s, int) { bins.poison_on(s); };
        c.run = [&, histogram, cluster_size](cudaStream_t s, int) {
            histogram(d_values.get(), big, bins.get(), cluster_size, s);
        };
        c.verify = [&](int) {
            const unsigned long long wrong = count_differences(bins.get(), expected.get(), ch06::kBins * sizeof(int), stream);
            return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes of bins differ from the histogram";
        };
        return c;
    };
    SpeedTrial trial;
    trial.yours = contender("your code", ch06::histogram_clusters, 2);
    trial.reference = contender("the reference", ref::histogram_clusters, 2);
    Contender global = contender("global atomics", nullptr, 0);
    global.run = [&](cudaStream_t s, int) { ref::histogram_global_atomics(d_values.get(), big, bins.get(), s); };
    trial.baselines = {global};
    for (int cs : {4, 8, 16})
        trial.baselines.push_back(contender("clusters of " + std::to_string(cs), ref::histogram_clusters, cs));
    trial.vary = [&](int) {
        d_values.set(vary_rng() % big, int(vary_rng() % ch06::kBins));
        ref::histogram_clusters(d_values.get(), big, expected.get(), 2, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    trial.time_unit = "ms";
    check_speed("speed", trial);
}

TEST_CASE("halo_exchange") {
    const bool sanitized = !options().sanitizer.empty();
    std::mt19937_64 rng(seed_for("sizes"));
    const int drawn_steps = int(3 + rng() % 38), drawn_rods = int(2 + rng() % 12);
    const float alpha = float(0.1 + 0.4 * double(rng() % 1000) / 1000);
    struct Case {
        int rods, steps;
    };
    Stream stream;
    bool all_correct = true;
    for (const Case c : {Case{1, 1}, Case{1, 2}, Case{3, drawn_steps}, Case{drawn_rods, 17}}) {
        const std::string label = std::to_string(c.rods) + " rods, " + std::to_string(c.steps) + " steps";
        if (sanitized && c.rods * c.steps > 40) {
            skip("correct", label, "too large to run under compute-sanitizer in reasonable time");
            continue;
        }
        const size_t cells = size_t(c.rods) * ch06::kRodCells;
        const std::vector<float> in = random_floats(cells, seed_for("rods " + label), 0, 1);
        DeviceBuffer<float> d_in(in), out(cells), scratch(cells);
        out.poison();
        scratch.poison();
        std::unique_ptr<Witness> witness = c.rods == 3 ? open_witness() : nullptr;
        LegacyStreamGate gate(gate_limit_ms());
        ch06::diffuse_in_clusters(d_in.get(), out.get(), scratch.get(), c.rods, c.steps, alpha, stream);
        const bool stayed_on_stream = gate.open();
        CUDA_CHECK(cudaStreamSynchronize(stream));
        bool ok = check("correct", label,
                        compare_close(diffuse_on_cpu(in, c.rods, c.steps, alpha), out.download(), diffusion_tolerance(c.steps)));
        ok &= check("correct", label + ", only its stream", stayed_on_stream,
                    "diffuse_in_clusters waited on the legacy default stream: its work goes on `stream`");
        ok &= check("correct", label + ", input unchanged", d_in.download() == in, "`in` changed");
        ok &= check("correct", label + ", bounds", out.guard_intact() && scratch.guard_intact(),
                    "wrote past the end of out or scratch");
        if (witness) {
            witness->finish();
            const std::vector<KernelRun>& k = witness->kernels();
            ok &= check("correct", label + ", technique: one kernel", k.size() == 1,
                        std::to_string(k.size()) + " kernels ran for " + std::to_string(c.steps) +
                            " steps: one kernel runs them all, the rods staying on chip");
            if (k.size() == 1) {
                const unsigned cluster = k[0].cluster[0] * k[0].cluster[1] * k[0].cluster[2];
                const unsigned blocks = k[0].grid[0] * k[0].grid[1] * k[0].grid[2];
                ok &= check("correct", label + ", technique: a cluster per rod", cluster > 1 && blocks == cluster * c.rods,
                            "the kernel ran with " + k[0].shape() + " in clusters of " + dims(k[0].cluster) +
                                ": expected clusters of 2 or more blocks, one cluster per rod");
            }
        }
        all_correct &= ok;
        if (!stayed_on_stream) break;
    }
    if (!all_correct) return;

    // The race: 66 rods (16.5 MiB: the step-by-step baseline works from L2), 100 steps; one cell
    // changed before each round; each call's output checked against the reference's.
    const int rods = 66, steps = 100;
    const size_t cells = size_t(rods) * ch06::kRodCells;
    DeviceBuffer<float> d_in(random_floats(cells, seed_for("race rods"), 0, 1)), out(cells), scratch(cells),
        expected(cells);
    std::vector<float> expected_host;
    std::mt19937_64 vary_rng(seed_for("timed inputs"));
    auto contender = [&](const std::string& name, decltype(&ch06::diffuse_in_clusters) diffuse) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t s, int) { out.poison_on(s); };
        c.run = [&, diffuse](cudaStream_t s, int) { diffuse(d_in.get(), out.get(), scratch.get(), rods, steps, alpha, s); };
        c.verify = [&](int) {
            const Comparison result = compare_close(std::vector<double>(expected_host.begin(), expected_host.end()),
                                                    out.download(), diffusion_tolerance(2 * steps));
            return result.ok() ? std::string() : result.message();
        };
        return c;
    };
    SpeedTrial trial;
    trial.yours = contender("your code", ch06::diffuse_in_clusters);
    trial.reference = contender("the reference", ref::diffuse_in_clusters);
    trial.baselines = {contender("step by step", ref::diffuse_step_by_step)};
    trial.vary = [&](int) {
        d_in.set(vary_rng() % cells, float(vary_rng() % 1000) / 1000);
        ref::diffuse_in_clusters(d_in.get(), expected.get(), scratch.get(), rods, steps, alpha, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        expected_host = expected.download();
    };
    check_speed("speed", trial);
}

TEST_CASE("publish") {
    const bool sanitized = !options().sanitizer.empty();
    std::mt19937_64 rng(seed_for("sizes"));
    const int drawn_threads = 32 * int(1 + rng() % 32);
    const int drawn_n = int(1 + rng() % (4 * drawn_threads));
    struct Case {
        int n, threads, messages;
    };
    Stream stream;
    for (const Case c : {Case{1, 32, 200}, Case{1000, 256, 2000}, Case{4096, 1024, 2000}, Case{drawn_n, drawn_threads, 1500}}) {
        const int messages = sanitized ? 20 : c.messages;
        const std::string label = std::to_string(messages) + " messages of " + std::to_string(c.n) + " ints, " +
                                  std::to_string(c.threads) + " threads";
        const int key = int(rng() & 0x7fffffff);
        DeviceBuffer<int> mailbox(c.n), received(size_t(c.n) * messages);
        DeviceBuffer<unsigned> flags(2);
        mailbox.poison();
        received.poison();
        flags.fill_bytes(0);
        std::unique_ptr<Witness> witness = open_witness();
        ch06::send_messages(mailbox.get(), c.n, messages, key, received.get(), flags.get(), c.threads, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        std::vector<int> expected(received.size()), last(c.n);
        for (int m = 0; m < messages; ++m)
            for (int i = 0; i < c.n; ++i) expected[size_t(m) * c.n + i] = ch06::message_value(m, i, key);
        for (int i = 0; i < c.n; ++i) last[i] = ch06::message_value(messages - 1, i, key);
        check("received", label, compare_exact(expected, received.download()));
        check("received", label + ", the mailbox", compare_exact(last, mailbox.download()));
        const std::vector<unsigned> f = flags.download();
        check("received", label + ", the flags", f[0] == unsigned(messages) && f[1] == unsigned(messages),
              "flags end at " + std::to_string(f[0]) + " sent, " + std::to_string(f[1]) + " read; expected " +
                  std::to_string(messages) + " each");
        check("received", label + ", bounds", mailbox.guard_intact() && received.guard_intact() && flags.guard_intact(),
              "wrote past the end of mailbox, received or flags");
        if (!witness) continue;
        witness->finish();
        const std::vector<KernelRun>& k = witness->kernels();
        const bool pair = k.size() == 1 && k[0].grid[0] * k[0].grid[1] * k[0].grid[2] == 2 &&
                          k[0].cluster[0] * k[0].cluster[1] * k[0].cluster[2] == 2 &&
                          k[0].block[0] * k[0].block[1] * k[0].block[2] == unsigned(c.threads);
        check("received", label + ", technique: one cluster of two blocks", pair,
              k.size() == 1 ? "the kernel ran with " + k[0].shape() + " in clusters of " + dims(k[0].cluster) +
                                  ": expected one cluster of 2 blocks of " + std::to_string(c.threads) + " threads"
                            : std::to_string(k.size()) + " kernels ran: one kernel, two blocks");
    }
}
