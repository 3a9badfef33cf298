// Grader for chapter 03 (reduction). One TEST_CASE per step 1-6, named as in thresholds.json;
// step 0 is given, and is the baseline every step's speed is measured against.
#include <algorithm>
#include <climits>
#include <memory>
#include <optional>

#include "03_reduction.h"
#include "grading.h"

GRADE_CHAPTER("03_reduction", 7, 0, "any GPU CUDA 12 supports");

using namespace grade;

namespace {

using Step = ch03::ReduceFunction;
const Step kStep0 = ch03::reduce_neighbored_modulo;  // given: the baseline

const size_t kLarge = (size_t(1) << 27) + 5;  // 512 MiB of ints: far past L2 and launch overhead
const size_t kSanitizerLimit = (size_t(1) << 20) + 3;

// Random ints small enough that no partial sum, in any order of additions, leaves int's range;
// never summing to 0, which a function that returns 0 would "compute".
struct Input {
    std::vector<int> host;
    long long sum = 0;
    DeviceBuffer<int> device;

    explicit Input(size_t n) : host(make_values(n)), device(n) {
        for (int v : host) sum += v;
        if (sum == 0) {  // nudge one value towards 0: it stays within the bound
            const int delta = host[0] > 0 ? -1 : 1;
            host[0] += delta;
            sum += delta;
        }
        device.upload(host);
    }

    static std::vector<int> make_values(size_t n) {
        const int bound = static_cast<int>(std::min<size_t>(1000, INT_MAX / n));
        return random_ints(n, seed_for("values n=" + std::to_string(n)), -bound, bound);
    }
};

std::string size_label(size_t n) { return "n=" + std::to_string(n); }

// Correct on every size, its input unchanged, nothing written past scratch, and the same answer
// from a second call that finds the first call's leftovers in scratch.
bool check_sums(Step step, Input& large) {
    Stream stream;
    bool all_correct = true;
    for (const size_t n : {size_t(1), size_t(31), size_t(1000), kSanitizerLimit, kLarge}) {
        const std::string label = size_label(n);
        if (!options().sanitizer.empty() && n > kSanitizerLimit) {
            skip("correct", label, "too large to run under compute-sanitizer in reasonable time");
            continue;
        }
        std::unique_ptr<Input> small;  // the large input is shared with the speed checks
        if (n != kLarge) small = std::make_unique<Input>(n);
        Input& input = small ? *small : large;
        DeviceBuffer<int> scratch(ch03::scratch_ints(n));
        scratch.poison();
        const long long expected = input.sum;
        const int first = step(input.device.get(), n, scratch.get(), stream);
        const int second = step(input.device.get(), n, scratch.get(), stream);
        bool ok = check("correct", label, first == expected,
                        "returned " + std::to_string(first) + ", expected " + std::to_string(expected));
        ok &= check("correct", label + ", second call", second == expected,
                    "a second call returned " + std::to_string(second) + ", expected " + std::to_string(expected) +
                        " (the first returned " + std::to_string(first) + "): does the result depend on what "
                        "scratch held before the call?");
        ok &= check("correct", label + ", input unchanged", input.device.download() == input.host,
                    "the input changed: it is const, and partial sums belong in scratch");
        ok &= check("correct", label + ", scratch bounds", scratch.guard_intact(),
                    "wrote past the end of scratch (it holds scratch_ints(n) ints)");
        all_correct &= ok;
    }
    return all_correct;
}

double gigabytes_per_second(size_t n, double ms) { return double(n) * sizeof(int) / ms / 1e6; }

// Step 0, the step graded, and CUB, in rotation on the same input. Step 0 and CUB must be right
// for the ratios to mean anything.
struct Ladder {
    Summary step0, step, cub;
};

Ladder measure_ladder(Step step, Input& large) {
    Stream stream;
    DeviceBuffer<int> scratch(ch03::scratch_ints(kLarge));
    static CubSum cub(kLarge);
    const int* in = large.device.get();
    if (kStep0(in, kLarge, scratch.get(), stream) != large.sum)
        throw std::runtime_error("step 0 (reduce_neighbored_modulo, given) returns a wrong sum: restore it");
    if (cub(in, kLarge, stream) != large.sum) throw std::runtime_error("the CUB baseline returned a wrong sum");
    const std::vector<Summary> t = time_rotating(
        {[&](cudaStream_t s) { kStep0(in, kLarge, scratch.get(), s); },
         [&](cudaStream_t s) { step(in, kLarge, scratch.get(), s); },
         [&](cudaStream_t s) { cub(in, kLarge, s); }},
        stream);
    return {t[0], t[1], t[2]};
}

void grade_step(Step step, bool against_cub) {
    Input large(kLarge);
    if (!check_sums(step, large)) return;  // speed counts only for a correct step

    // The speedup's measurement also serves the comparison with CUB; a re-measurement (of a ratio
    // too close to its threshold) takes a fresh one.
    std::optional<Ladder> speedup_ladder;
    check_speed("speedup", [&] {
        const Ladder l = measure_ladder(step, large);
        speedup_ladder = l;
        const double gbs = gigabytes_per_second(kLarge, l.step.median);
        const double gbs0 = gigabytes_per_second(kLarge, l.step0.median);
        const double gbs_cub = gigabytes_per_second(kLarge, l.cub.median);
        const double speedup = l.step0.median / l.step.median;
        return Ratio{speedup, l.step0.noise + l.step.noise,
                     std::to_string(int(gbs)) + " GB/s; step 0 " + std::to_string(int(gbs0)) + " GB/s; CUB " +
                         std::to_string(int(gbs_cub)) + " GB/s",
                     {{"GB/s", gbs},
                      {"speedup over step 0", speedup},
                      {"% of CUB", 100 * l.cub.median / l.step.median},
                      {"step 0 GB/s", gbs0},
                      {"CUB GB/s", gbs_cub}}};
    });
    if (!against_cub) return;
    check_speed("vs_cub", [&] {
        const Ladder l = speedup_ladder ? *speedup_ladder : measure_ladder(step, large);
        speedup_ladder.reset();
        return Ratio{l.cub.median / l.step.median, l.cub.noise + l.step.noise,
                     std::to_string(int(gigabytes_per_second(kLarge, l.step.median))) + " GB/s; CUB " +
                         std::to_string(int(gigabytes_per_second(kLarge, l.cub.median))) + " GB/s"};
    });
}

}  // namespace

TEST_CASE("neighbored_remapped") { grade_step(ch03::reduce_neighbored_remapped, false); }
TEST_CASE("interleaved") { grade_step(ch03::reduce_interleaved, false); }
TEST_CASE("unrolled4") { grade_step(ch03::reduce_unrolled4, false); }
TEST_CASE("last_warp") { grade_step(ch03::reduce_last_warp_unrolled, false); }
TEST_CASE("complete_unroll") { grade_step(ch03::reduce_complete_unroll, false); }
TEST_CASE("shuffle") { grade_step(ch03::reduce_shuffle, true); }
