// Grader for chapter 02 (memory spaces). One TEST_CASE per exercise, named as in thresholds.json.
#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <memory>
#include <random>

#include "02_memory.h"          // ch02: the code graded
#define ch02 COURSE_REFERENCE   // ref: the grader's own copy of the reference solution
#include "02_memory.h"
#undef ch02
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("02_memory", 7, 5, "the course's oldest target, compute capability 7.5");

using namespace grade;

namespace {

struct Size2D {
    int width, height;  // for a transpose: cols, rows
};

std::string shape(Size2D s) { return std::to_string(s.width) + " x " + std::to_string(s.height); }

// Widths that are not multiples of 32 (nor of anything else), a row of one, a column of one, and one
// drawn from the seed.
std::vector<Size2D> image_sizes(const std::string& label) {
    std::mt19937_64 rng(seed_for(label));
    return {{1, 1}, {33, 5}, {1000, 37}, {4097, 3}, {1, 300}, {1 + int(rng() % 3000), 1 + int(rng() % 200)}};
}

// The kernels CUPTI saw, for a message.
std::string kernel_list(const std::vector<KernelRun>& kernels) {
    if (kernels.empty()) return "no kernel ran";
    std::string names;
    for (const KernelRun& k : kernels) names += (names.empty() ? "" : ", ") + k.short_name();
    return std::to_string(kernels.size()) + " kernel(s) ran: " + names;
}

}  // namespace

TEST_CASE("pitched") {
    Stream stream;
    constexpr unsigned char kPadding = 0x5a;
    for (const Size2D size : image_sizes("pitched sizes")) {
        const int width = size.width, height = size.height;
        const std::string label = shape(size);
        const float delta = 0.25f + float(width % 7);
        const size_t row_bytes = size_t(width) * sizeof(float);
        const std::vector<float> pixels = random_floats(size_t(width) * height, seed_for("pixels " + label), -100, 100);

        // brighten_pitched on the grader's own layout: a pitch larger than cudaMallocPitch's, the
        // padding filled with a pattern that must survive.
        const size_t pitch = (row_bytes + 511) / 512 * 512 + 512;
        std::vector<unsigned char> layout(pitch * height, kPadding);
        for (int y = 0; y < height; ++y) std::memcpy(&layout[y * pitch], &pixels[size_t(y) * width], row_bytes);
        DeviceBuffer<unsigned char> image(layout);
        ch02::brighten_pitched(reinterpret_cast<float*>(image.get()), pitch, width, height, delta, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<unsigned char> after = image.download();
        size_t wrong_pixels = 0, padding_changed = 0;
        for (int y = 0; y < height; ++y) {
            for (int x = 0; x < width; ++x) {
                float got;
                std::memcpy(&got, &after[y * pitch + x * sizeof(float)], sizeof(float));
                wrong_pixels += got != pixels[size_t(y) * width + x] + delta;
            }
            for (size_t b = row_bytes; b < pitch; ++b) padding_changed += after[y * pitch + b] != kPadding;
        }
        check("kernel", label + ", pixels", wrong_pixels == 0,
              std::to_string(wrong_pixels) + " of " + std::to_string(size_t(width) * height) +
                  " pixels are not pixel + delta (the grader's pitch was " + std::to_string(pitch) +
                  " bytes: row y starts y * pitch bytes after the image)");
        check("kernel", label + ", padding", padding_changed == 0,
              std::to_string(padding_changed) + " bytes of padding between the rows changed");
        check("kernel", label + ", bounds", image.guard_intact(), "a thread wrote past the image's last row");

        // The round trip, watched by CUPTI.
        void* probe = nullptr;
        size_t expected_pitch = 0;
        CUDA_CHECK(cudaMallocPitch(&probe, &expected_pitch, row_bytes, height));
        CUDA_CHECK(cudaFree(probe));
        std::vector<float> out(size_t(width) * height, std::nanf(""));
        std::unique_ptr<Witness> witness = open_witness();
        const size_t got_pitch = ch02::brighten_round_trip(pixels.data(), out.data(), width, height, delta);
        if (witness) witness->stop_calls();
        size_t wrong = 0;
        for (size_t i = 0; i < out.size(); ++i) wrong += out[i] != pixels[i] + delta;
        check("round_trip", label + ", pixels", wrong == 0,
              std::to_string(wrong) + " of " + std::to_string(out.size()) + " pixels came back other than pixel + delta");
        check("round_trip", label + ", pitch", got_pitch == expected_pitch,
              "returned a pitch of " + std::to_string(got_pitch) + " bytes; cudaMallocPitch gives " +
                  std::to_string(expected_pitch) + " for rows of " + std::to_string(row_bytes) + " bytes");
        if (!witness) continue;
        witness->finish();
        const int pitched = witness->calls_to({"cudaMallocPitch"});
        const int copies_2d = witness->calls_to({"cudaMemcpy2D", "cudaMemcpy2DAsync"});
        check("round_trip", label + ", technique", pitched >= 1 && copies_2d >= 2 && !witness->kernels().empty(),
              "CUPTI saw " + std::to_string(pitched) + " cudaMallocPitch, " + std::to_string(copies_2d) +
                  " cudaMemcpy2D and " + kernel_list(witness->kernels()) +
                  ": allocate with cudaMallocPitch, copy each way with cudaMemcpy2D, brighten on the GPU");
        check("round_trip", label + ", freed", witness->calls_to({"cudaFree", "cudaFreeAsync"}) >= 1,
              "the pitched image was not freed (cudaFree)");
    }
}

TEST_CASE("constant_symbols") {
    Stream stream;
    const float threshold = 0.1f;
    std::mt19937_64 rng(seed_for("filter sizes"));
    for (const int n : {1, 100, 4097, 1 << 20, 1 + int(rng() % 100000)}) {
        const std::string label = "n=" + std::to_string(n);
        // New coefficients for every size: a filter that kept the first ones fails the next.
        const std::vector<float> taps = random_floats(ch02::kTaps, seed_for("taps " + label), -1, 1);
        const std::vector<float> in = random_floats(n, seed_for("signal " + label), -1, 1);
        DeviceBuffer<float> din(in), dout(n);
        dout.poison();

        std::unique_ptr<Witness> witness = open_witness();
        ch02::set_filter(taps.data());
        ch02::reset_count();
        ch02::filter(din.get(), dout.get(), n, threshold, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const unsigned count = ch02::read_count();
        if (witness) witness->stop_calls();

        std::vector<double> expected(n);
        for (int i = 0; i < n; ++i)
            for (int k = 0; k < ch02::kTaps; ++k) {
                const int j = i + k - ch02::kTaps / 2;
                if (j >= 0 && j < n) expected[i] += double(taps[k]) * in[j];
            }
        const std::vector<float> out = dout.download();
        // kTaps products and sums of values of at most 1, each rounded once in float.
        const Comparison sums = compare_close(expected, out, {2.0 * ch02::kTaps * FLT_EPSILON, 0});
        check("correct", label + ", outputs", sums);
        check("correct", label + ", bounds", dout.guard_intact(), "a thread wrote past out[n - 1]");
        const unsigned above = unsigned(std::count_if(out.begin(), out.end(), [&](float v) { return v > threshold; }));
        check("correct", label + ", count", count == above,
              "read_count() gave " + std::to_string(count) + "; " + std::to_string(above) +
                  " of the outputs written are above the threshold");

        cudaFuncAttributes attributes{};
        CUDA_CHECK(cudaFuncGetAttributes(&attributes, ch02::filter_kernel()));
        check("technique", label + ", constant memory", attributes.constSizeBytes >= ch02::kTaps * sizeof(float),
              "filter_kernel() uses " + std::to_string(attributes.constSizeBytes) +
                  " bytes of __constant__ memory: its coefficients belong in a __constant__ array");
        if (!witness) continue;
        witness->finish();
        // set_filter and reset_count copy to a symbol each, read_count from one.
        const int to_symbol = witness->calls_to({"cudaMemcpyToSymbol", "cudaMemcpyToSymbolAsync"});
        const int from_symbol = witness->calls_to({"cudaMemcpyFromSymbol", "cudaMemcpyFromSymbolAsync"});
        check("technique", label + ", symbols", to_symbol >= 2 && from_symbol >= 1,
              "CUPTI saw " + std::to_string(to_symbol) + " cudaMemcpyToSymbol and " + std::to_string(from_symbol) +
                  " cudaMemcpyFromSymbol; expected one to in set_filter, one to in reset_count and one from in "
                  "read_count: reach the __constant__ and __device__ variables through their symbols");
    }
}

namespace {

using Transpose = decltype(&ch02::transpose_naive);

// One transpose version on every size: exact results, nothing written outside out. Returns whether
// every size was right.
bool check_transpose(const std::string& key, Transpose transpose, Stream& stream) {
    bool all_right = true;
    std::mt19937_64 rng(seed_for("transpose sizes"));
    const std::vector<Size2D> sizes = {{1, 1}, {31, 33}, {1000, 37}, {37, 1000}, {4097, 2049},
                                       {1 + int(rng() % 3000), 1 + int(rng() % 3000)}};
    for (const Size2D size : sizes) {
        const int cols = size.width, rows = size.height;
        const std::string label = "rows x cols = " + std::to_string(rows) + " x " + std::to_string(cols);
        const size_t n = size_t(rows) * cols;
        const std::vector<float> in = random_floats(n, seed_for("matrix " + label), -1, 1);
        DeviceBuffer<float> din(in), dout(n);
        dout.poison();
        transpose(din.get(), dout.get(), rows, cols, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<float> out = dout.download();
        size_t wrong = 0;
        for (int r = 0; r < rows; ++r)
            for (int c = 0; c < cols; ++c) wrong += std::memcmp(&out[size_t(c) * rows + r], &in[size_t(r) * cols + c], 4) != 0;
        bool ok = check(key, label, wrong == 0,
                        std::to_string(wrong) + " of " + std::to_string(n) + " elements are not out[c * rows + r] = in[r * cols + c]");
        ok &= check(key, label + ", bounds", dout.guard_intact(), "a thread wrote past the end of out");
        all_right &= ok;
    }
    return all_right;
}

// The shared memory a version's kernel gives a block, as CUPTI saw it run.
bool check_tile(const std::string& key, Transpose transpose, size_t at_least, const std::string& why, Stream& stream) {
    DeviceBuffer<float> in(64 * 64), out(64 * 64);
    in.fill_bytes(0);
    std::unique_ptr<Witness> witness = open_witness();
    if (!witness) return true;
    transpose(in.get(), out.get(), 64, 64, stream);
    witness->finish();
    const std::vector<KernelRun>& k = witness->kernels();
    const size_t shared = k.size() == 1 ? size_t(k[0].static_shared_bytes + k[0].dynamic_shared_bytes) : 0;
    return check(key, "technique: a tile in shared memory", k.size() == 1 && shared >= at_least,
                 k.size() == 1 ? "a block had " + std::to_string(shared) + " bytes of shared memory; " + why
                               : kernel_list(k) + "; expected one kernel");
}

}  // namespace

TEST_CASE("transpose") {
    Stream stream;
    check_transpose("naive", ch02::transpose_naive, stream);
    const bool tiled_right = check_transpose("tiled", ch02::transpose_tiled, stream) &&
                             check_tile("tiled", ch02::transpose_tiled, 32 * 32 * sizeof(float),
                                        "a 32 x 32 tile of floats takes 4096", stream);
    const bool padded_right = check_transpose("padded", ch02::transpose_padded, stream) &&
                              check_tile("padded", ch02::transpose_padded, 32 * 33 * sizeof(float),
                                         "a 32 x 32 tile padded to 33 columns takes 4224", stream);

    // The races: 8192 x 8192 floats (256 MiB each way), one element changed before each round.
    const int side = 8192;
    const size_t n = size_t(side) * side, bytes = n * sizeof(float);
    DeviceBuffer<float> in(random_floats(n, seed_for("race matrix"), -1, 1)), out(n), expected(n);
    std::mt19937_64 rng(seed_for("timed inputs"));
    auto version = [&](const std::string& name, Transpose transpose) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t s, int) { out.poison_on(s); };
        c.run = [&, transpose](cudaStream_t s, int) { transpose(in.get(), out.get(), side, side, s); };
        c.verify = [&](int) {
            const unsigned long long wrong = count_differences(out.get(), expected.get(), bytes, stream);
            return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes of out differ from the transpose";
        };
        return c;
    };
    Contender copy;
    copy.name = "device-to-device copy";
    copy.bytes = 2.0 * bytes;
    copy.run = [&](cudaStream_t s, int) { CUDA_CHECK(cudaMemcpyAsync(out.get(), in.get(), bytes, cudaMemcpyDeviceToDevice, s)); };
    auto race = [&](const std::string& key, Transpose yours, Transpose reference, std::vector<Contender> baselines) {
        SpeedTrial trial;
        trial.yours = version("your code", yours);
        trial.reference = version("the reference", reference);
        trial.baselines = std::move(baselines);
        trial.vary = [&](int) {
            in.set(rng() % n, random_floats(1, rng(), -1, 1)[0]);
            ref::transpose_padded(in.get(), expected.get(), side, side, stream);
            CUDA_CHECK(cudaStreamSynchronize(stream));
        };
        trial.bytes = 2.0 * bytes;  // one read and one write of the matrix
        check_speed(key, trial);
    };
    if (tiled_right) race("tiled_speed", ch02::transpose_tiled, ref::transpose_tiled, {version("naive (reference)", ref::transpose_naive), copy});
    if (padded_right)
        race("padded_speed", ch02::transpose_padded, ref::transpose_padded,
             {version("tiled, no padding (reference)", ref::transpose_tiled), version("naive (reference)", ref::transpose_naive), copy});
}
