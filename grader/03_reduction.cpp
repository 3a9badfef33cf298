// Grader for chapter 03 (reduction). One TEST_CASE per step 1-6, named as in thresholds.json. Each
// step races the reference's own version of that step; step 0 and CUB run beside them, so that
// the report shows the ladder.
#include <algorithm>
#include <climits>
#include <memory>
#include <random>

#include "03_reduction.h"          // ch03: the code graded
#define ch03 COURSE_REFERENCE      // ref: the grader's own copy of the reference solution
#include "03_reduction.h"
#undef ch03
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("03_reduction", 7, 0, "any GPU CUDA 12 supports");

using namespace grade;

namespace {

using Step = ch03::ReduceFunction;

const size_t kLarge = (size_t(1) << 27) + 5;  // 512 MiB of ints: far past L2 and launch overhead
const size_t kSanitizerLimit = (size_t(1) << 20) + 3;

// Values small enough that no partial sum, in any order of additions, leaves int's range.
int value_bound(size_t n) { return static_cast<int>(std::min<size_t>(1000, INT_MAX / n)); }

// Random ints; never summing to 0, which a function that returns 0 would "compute".
struct Input {
    std::vector<int> host;
    long long sum = 0;
    DeviceBuffer<int> device;

    explicit Input(size_t n)
        : host(random_ints(n, seed_for("values n=" + std::to_string(n)), -value_bound(n), value_bound(n))), device(n) {
        for (int v : host) sum += v;
        if (sum == 0) {  // nudge one value towards 0: it stays within the bound
            const int delta = host[0] > 0 ? -1 : 1;
            host[0] += delta;
            sum += delta;
        }
        device.upload(host);
    }

    // A new value at a random place: the same buffer, another sum.
    void change_one(std::mt19937_64& rng) {
        const size_t i = rng() % host.size();
        const int bound = value_bound(host.size());
        const int v = static_cast<int>(rng() % (2 * bound + 1)) - bound;
        sum += v - host[i];
        host[i] = v;
        device.set(i, v);
    }
};

std::string size_label(size_t n) { return "n=" + std::to_string(n); }

// The fixed sizes, and two drawn from the seed that leave partly filled blocks and passes.
std::vector<size_t> sizes_to_check() {
    std::mt19937_64 rng(seed_for("sizes"));
    std::vector<size_t> sizes{1, 31, 1000, kSanitizerLimit};
    for (int i = 0; i < 2; ++i) sizes.push_back(2 + rng() % (size_t(1) << 22));
    sizes.push_back(kLarge);
    return sizes;
}

// Correct on every size, its input unchanged, nothing written past scratch, all of its GPU work
// on the stream it was given, and the same answer from a second call that finds the first call's
// leftovers in scratch.
bool check_sums(Step step, Input& large) {
    Stream stream;
    bool all_correct = true;
    for (const size_t n : sizes_to_check()) {
        const std::string label = size_label(n);
        if (!options().sanitizer.empty() && n > kSanitizerLimit) {
            skip("correct", label, "too large to run under compute-sanitizer in reasonable time");
            continue;
        }
        std::unique_ptr<Input> small;  // the large input is shared with the speed check
        if (n != kLarge) small = std::make_unique<Input>(n);
        Input& input = small ? *small : large;
        DeviceBuffer<int> scratch(ch03::scratch_ints(n));
        scratch.poison();
        const long long expected = input.sum;
        LegacyStreamGate gate(gate_limit_ms());
        const int first = step(input.device.get(), n, scratch.get(), stream);
        const int second = step(input.device.get(), n, scratch.get(), stream);
        const bool stayed_on_stream = gate.open();
        bool ok = check("correct", label, first == expected,
                        "returned " + std::to_string(first) + ", expected " + std::to_string(expected) +
                            "\n(is every kernel and copy on `stream`? Work on the default stream is not "
                            "ordered with it)");
        ok &= check("correct", label + ", second call", second == expected,
                    "a second call returned " + std::to_string(second) + ", expected " + std::to_string(expected) +
                        " (the first returned " + std::to_string(first) + "): does the result depend on what "
                        "scratch held before the call?");
        ok &= check("correct", label + ", only its stream", stayed_on_stream,
                    "the function waited on the legacy default stream (cudaMemcpy, cudaDeviceSynchronize or "
                    "cudaStreamSynchronize(0)): all its GPU work goes on `stream`, and it waits for that stream");
        if (!stayed_on_stream) return false;  // every further size would wait for the gate again
        ok &= check("correct", label + ", input unchanged", input.device.download() == input.host,
                    "the input changed: it is const, and partial sums belong in scratch");
        ok &= check("correct", label + ", scratch bounds", scratch.guard_intact(),
                    "wrote past the end of scratch (it holds scratch_ints(n) ints)");
        all_correct &= ok;
    }
    return all_correct;
}

// The kernel each step launches first, as the skeleton names it (step 6 names its own).
const char* const kStepKernels[] = {"neighbored_modulo", "neighbored_remapped", "interleaved", "unrolled4",
                                    "last_warp_unrolled", "complete_unroll", nullptr};
const char* const kStepFunctions[] = {"reduce_neighbored_modulo", "reduce_neighbored_remapped", "reduce_interleaved",
                                      "reduce_unrolled4", "reduce_last_warp_unrolled", "reduce_complete_unroll",
                                      "reduce_shuffle"};

// "ch03::(anonymous namespace)::complete_unroll<1024u>" -> "complete_unroll"
std::string base_name(std::string name) {
    name = name.substr(0, name.find('<'));
    const size_t colons = name.rfind("::");
    return colons == std::string::npos ? name : name.substr(colons + 2);
}

// How the sum was computed, not only that it is right: the step's work is its own kernel (not a
// library's, not another step's), launched with the grid its technique implies.
void check_technique(int graded, Step step) {
    if (!options().sanitizer.empty()) {
        skip("correct", "technique", "CUPTI does not record under compute-sanitizer");
        return;
    }
    const size_t n = kSanitizerLimit;
    const Input input(n);
    Stream stream;
    DeviceBuffer<int> scratch(ch03::scratch_ints(n));
    scratch.poison();
    std::unique_ptr<Witness> witness = open_witness();
    step(input.device.get(), n, scratch.get(), stream);
    witness->finish();
    const std::vector<KernelRun>& mine = witness->kernels();
    const std::string name = kStepFunctions[graded];
    if (!check("correct", "technique: kernels", !mine.empty(), name + " ran no kernel on the GPU")) return;

    std::string library;
    for (const KernelRun& k : mine)
        for (const char* part : {"cub::", "thrust::", "cublas", "CUB_"})
            if (k.name.find(part) != std::string::npos) library = k.short_name();
    check("correct", "technique: no library kernel", library.empty(),
          name + " ran " + library + ", a library's kernel: the step's reduction is yours to write");

    const std::string first = base_name(mine.front().short_name());
    if (kStepKernels[graded]) {
        check("correct", "technique: the step's kernel", first == kStepKernels[graded],
              name + " launched " + mine.front().short_name() + " first; its pass is the kernel " +
                  kStepKernels[graded] + ", written with this step's technique (not another step's kernel)");
    } else {
        std::string other;
        for (const char* k : kStepKernels)
            if (k && first == k) other = k;
        check("correct", "technique: the step's kernel", other.empty(),
              name + " launched " + other + ", another step's kernel: write this step's own");
    }

    // Steps 1-2: a block reduces blockDim.x values; steps 3-5 four times as many; step 6 a grid
    // sized to the GPU, each thread looping over many values.
    const KernelRun& k = mine.front();
    const size_t threads = k.block[0];
    std::string expected;
    bool shape_ok = k.grid[1] == 1 && k.grid[2] == 1 && k.block[1] == 1 && k.block[2] == 1;
    if (graded <= 5) {
        const size_t per_block = threads * (graded <= 2 ? 1 : 4);
        const size_t blocks = (n + per_block - 1) / per_block;
        shape_ok &= k.grid[0] == blocks;
        expected = "one block per " + std::string(graded <= 2 ? "" : "4 x ") + "blockDim.x values: " +
                   std::to_string(blocks) + " blocks of " + std::to_string(threads) + " threads for n=" + std::to_string(n);
    }
    if (graded == 6) {
        int device = 0, sms = 0, threads_per_sm = 0;
        CUDA_CHECK(cudaGetDevice(&device));
        CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
        CUDA_CHECK(cudaDeviceGetAttribute(&threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, device));
        const size_t most = size_t(sms) * (threads_per_sm / std::max<size_t>(threads, 1));
        shape_ok &= k.grid[0] >= unsigned(sms) && k.grid[0] <= most;
        expected = "a grid sized to the GPU: between " + std::to_string(sms) + " blocks (one per SM) and " +
                   std::to_string(most) + " (as many as fit at once)";
    }
    check("correct", "technique: launch shape", shape_ok,
          name + "'s first kernel ran with " + k.shape() + "; expected " + expected);
}

void grade_step(int step_index, Step yours, Step reference) {
    Input large(kLarge);
    if (!check_sums(yours, large)) return;

    DeviceBuffer<int> scratch(ch03::scratch_ints(kLarge));
    static CubSum cub(kLarge);
    std::mt19937_64 rng(seed_for("timed inputs"));
    const int* in = large.device.get();
    auto contender = [&](const std::string& name, const std::function<int(cudaStream_t)>& sum) {
        auto result = std::make_shared<long long>(0);
        Contender c;
        c.name = name;
        c.run = [=](cudaStream_t s, int) { *result = sum(s); };
        c.verify = [=, &large](int) {
            return *result == large.sum ? std::string()
                                        : "returned " + std::to_string(*result) + ", expected " + std::to_string(large.sum);
        };
        return c;
    };
    auto step_contender = [&](const std::string& name, Step step) {
        return contender(name, [=, &scratch](cudaStream_t s) { return step(in, kLarge, scratch.get(), s); });
    };
    SpeedTrial trial;
    trial.yours = step_contender("your code", yours);
    trial.reference = step_contender("the reference", reference);
    trial.baselines = {step_contender("step 0", ref::reduce_neighbored_modulo),
                       contender("CUB", [&](cudaStream_t s) { return cub(in, kLarge, s); })};
    trial.vary = [&](int) { large.change_one(rng); };
    trial.bytes = double(kLarge) * sizeof(int);
    check_speed("speed", trial);
    // Last: CUPTI, once attached, slows launches down a little even when detached again.
    check_technique(step_index, yours);
}

}  // namespace

TEST_CASE("neighbored_remapped") { grade_step(1, ch03::reduce_neighbored_remapped, ref::reduce_neighbored_remapped); }
TEST_CASE("interleaved") { grade_step(2, ch03::reduce_interleaved, ref::reduce_interleaved); }
TEST_CASE("unrolled4") { grade_step(3, ch03::reduce_unrolled4, ref::reduce_unrolled4); }
TEST_CASE("last_warp") { grade_step(4, ch03::reduce_last_warp_unrolled, ref::reduce_last_warp_unrolled); }
TEST_CASE("complete_unroll") { grade_step(5, ch03::reduce_complete_unroll, ref::reduce_complete_unroll); }
TEST_CASE("shuffle") { grade_step(6, ch03::reduce_shuffle, ref::reduce_shuffle); }
