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

GRADE_CHAPTER("02_memory", 7, 0, "compute capability 7.0, as the rest of the course");

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

namespace {

using Matmul = decltype(&ch02::matmul_naive);

struct MatmulSize {
    int m, n, k;
};

std::string label_of(MatmulSize s) {
    return "m x n x k = " + std::to_string(s.m) + " x " + std::to_string(s.n) + " x " + std::to_string(s.k);
}

// Integers in [-8, 8] as floats: products and sums of 2048 of them stay integers below 2^24, exact
// in float whatever the order of summation.
std::vector<float> small_ints(size_t count, const std::string& seed_label) {
    const std::vector<int32_t> ints = random_ints(count, seed_for(seed_label), -8, 8);
    return std::vector<float>(ints.begin(), ints.end());
}

// One matrix multiply version on sizes that are and are not multiples of a tile. Each element is
// compared with the exact product within the rounding that k float products and sums allow:
// 2 k u times the sum of |a||b| over the row and column (u = 2^-24).
bool check_matmul(const std::string& key, Matmul matmul, Stream& stream) {
    std::mt19937_64 rng(seed_for("matmul sizes"));
    const std::vector<MatmulSize> sizes = {{1, 1, 1}, {33, 17, 65}, {128, 128, 128}, {500, 300, 200},
                                           {1 + int(rng() % 700), 1 + int(rng() % 700), 1 + int(rng() % 700)}};
    bool all_right = true;
    for (const MatmulSize s : sizes) {
        const std::string label = label_of(s);
        const std::vector<float> a = random_floats(size_t(s.m) * s.k, seed_for("a " + label), -1, 1);
        const std::vector<float> b = random_floats(size_t(s.k) * s.n, seed_for("b " + label), -1, 1);
        DeviceBuffer<float> da(a), db(b), dc(size_t(s.m) * s.n);
        dc.poison();
        matmul(da.get(), db.get(), dc.get(), s.m, s.n, s.k, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::vector<float> c = dc.download();
        size_t wrong = 0;
        std::string first;
        for (int r = 0; r < s.m; ++r)
            for (int col = 0; col < s.n; ++col) {
                double exact = 0, magnitude = 0;
                for (int q = 0; q < s.k; ++q) {
                    exact += double(a[size_t(r) * s.k + q]) * b[size_t(q) * s.n + col];
                    magnitude += std::fabs(double(a[size_t(r) * s.k + q]) * b[size_t(q) * s.n + col]);
                }
                const float got = c[size_t(r) * s.n + col];
                const double bound = 2.0 * s.k * std::ldexp(1.0, -24) * magnitude;
                if (!(std::fabs(got - exact) <= bound)) {
                    if (++wrong == 1)
                        first = "c[" + std::to_string(r) + "][" + std::to_string(col) + "] = " + std::to_string(got) +
                                ", expected " + std::to_string(exact) + " within " + std::to_string(bound);
                }
            }
        bool ok = check(key, label, wrong == 0, std::to_string(wrong) + " elements of c are wrong; the first: " + first);
        ok &= check(key, label + ", bounds", dc.guard_intact(), "a thread wrote past the end of c");
        all_right &= ok;
    }
    // A large product, where blocks race each other long enough for a missing barrier to show. Small
    // integers as floats: exact in any order, so c must equal the reference's bit for bit. (Not
    // under compute-sanitizer: racecheck finds a missing barrier on the small sizes, and would take
    // minutes over this one.)
    if (!options().sanitizer.empty()) return all_right;
    const MatmulSize big{1536, 1024, 2048};
    const std::string label = label_of(big) + " (small integers)";
    DeviceBuffer<float> da(small_ints(size_t(big.m) * big.k, "big a")), db(small_ints(size_t(big.k) * big.n, "big b"));
    DeviceBuffer<float> dc(size_t(big.m) * big.n), expected(size_t(big.m) * big.n);
    ref::matmul_tiled(da.get(), db.get(), expected.get(), big.m, big.n, big.k, stream);
    dc.poison();
    matmul(da.get(), db.get(), dc.get(), big.m, big.n, big.k, stream);
    const unsigned long long differ = count_differences(dc.get(), expected.get(), dc.bytes(), stream);
    all_right &= check(key, label, differ == 0, std::to_string(differ) + " bytes of c differ from the exact product");
    return all_right;
}

}  // namespace

TEST_CASE("tiled_matmul") {
    Stream stream;
    check_matmul("naive", ch02::matmul_naive, stream);
    bool tiled_right = check_matmul("tiled", ch02::matmul_tiled, stream);
    if (tiled_right) {
        // Two 16 x 16 tiles of floats at least, as CUPTI saw the kernel run.
        DeviceBuffer<float> a(64 * 64), b(64 * 64), c(64 * 64);
        a.fill_bytes(0);
        b.fill_bytes(0);
        std::unique_ptr<Witness> witness = open_witness();
        if (witness) {
            ch02::matmul_tiled(a.get(), b.get(), c.get(), 64, 64, 64, stream);
            witness->finish();
            const std::vector<KernelRun>& k = witness->kernels();
            const size_t shared = k.size() == 1 ? size_t(k[0].static_shared_bytes + k[0].dynamic_shared_bytes) : 0;
            tiled_right = check("tiled", "technique: tiles in shared memory", k.size() == 1 && shared >= 2 * 16 * 16 * sizeof(float),
                                k.size() == 1 ? "a block had " + std::to_string(shared) +
                                                    " bytes of shared memory; two 16 x 16 tiles of floats take 2048"
                                              : kernel_list(k) + "; expected one kernel");
        }
    }
    if (!tiled_right) return;

    // The race: 2048 x 2048 x 2048. Small integers as floats: every product and partial sum is an
    // integer below 2^24, exact in any order, so each timed call's c must equal the reference's.
    const int side = 2048;
    const size_t n = size_t(side) * side;
    DeviceBuffer<float> a(small_ints(n, "race a")), b(small_ints(n, "race b")), c(n), expected(n);
    std::mt19937_64 rng(seed_for("timed inputs"));
    CublasSgemm cublas;
    auto version = [&](const std::string& name, std::function<void(cudaStream_t)> run, bool verified) {
        Contender v;
        v.name = name;
        v.before = [&](cudaStream_t s, int) { c.poison_on(s); };
        v.run = [run](cudaStream_t s, int) { run(s); };
        if (verified)
            v.verify = [&](int) {
                const unsigned long long wrong = count_differences(c.get(), expected.get(), n * sizeof(float), stream);
                return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes of c differ from a b";
            };
        return v;
    };
    auto with = [&](Matmul matmul) { return [&, matmul](cudaStream_t s) { matmul(a.get(), b.get(), c.get(), side, side, side, s); }; };
    SpeedTrial trial;
    trial.yours = version("your code", with(ch02::matmul_tiled), true);
    trial.reference = version("the reference", with(ref::matmul_tiled), true);
    trial.baselines = {version("naive (reference)", with(ref::matmul_naive), true),
                       version("cuBLAS SGEMM", [&](cudaStream_t s) { cublas(a.get(), b.get(), c.get(), side, side, side, s); }, true)};
    trial.vary = [&](int) {
        a.set(rng() % n, float(int(rng() % 17) - 8));
        ref::matmul_tiled(a.get(), b.get(), expected.get(), side, side, side, stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
    };
    const double flops = 2.0 * side * side * side;
    trial.more_figures = [flops](const std::vector<double>& ms) {
        // In race order: yours, the reference, naive, cuBLAS.
        return std::vector<std::pair<std::string, double>>{{"your GFLOP/s", flops / ms[0] / 1e6},
                                                           {"reference GFLOP/s", flops / ms[1] / 1e6},
                                                           {"cuBLAS SGEMM GFLOP/s", flops / ms[3] / 1e6},
                                                           {"% of cuBLAS SGEMM", 100 * ms[3] / ms[0]}};
    };
    check_speed("speed", trial);
}

TEST_CASE("register_pressure") {
    Stream stream;
    const int n = 1 << 20;
    const std::vector<float> values = random_floats(size_t(n) * 4 * ch02::kHeavyValues, seed_for("heavy"), -1, 1);
    DeviceBuffer<float> in(values), out(n);
    out.poison();
    ch02::launch_heavy(reinterpret_cast<const float4*>(in.get()), out.get(), n, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    const std::vector<float> got = out.download();
    size_t wrong = 0;
    for (int i = 0; i < n; ++i) {
        double exact = 0, magnitude = 0;
        for (int v = 0; v < ch02::kHeavyValues; ++v) {
            const float* x = &values[(size_t(v) * n + i) * 4];
            exact += ((x[0] * 0.5 + x[1]) * x[2] + x[3]) * (v + 1);
            magnitude += ((std::fabs(x[0] * 0.5) + std::fabs(x[1])) * std::fabs(x[2]) + std::fabs(x[3])) * (v + 1);
        }
        // Four roundings per value, then the running sum.
        wrong += !(std::fabs(got[i] - exact) <= (ch02::kHeavyValues + 4) * 2 * std::ldexp(1.0, -24) * magnitude);
    }
    check("occupancy", "outputs", wrong == 0, std::to_string(wrong) + " of " + std::to_string(n) + " outputs are wrong");
    check("occupancy", "bounds", out.guard_intact(), "a thread wrote past out[n - 1]");

    cudaFuncAttributes attributes{};
    CUDA_CHECK(cudaFuncGetAttributes(&attributes, ch02::heavy_kernel()));
    int blocks = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, ch02::heavy_kernel(), ch02::kHeavyThreads, 0));
    check("occupancy", "blocks per SM", blocks >= 4,
          "heavy_kernel uses " + std::to_string(attributes.numRegs) + " registers a thread, so " + std::to_string(blocks) +
              " block(s) of " + std::to_string(ch02::kHeavyThreads) +
              " threads fit on an SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor); at least 4 must");
    check("occupancy", "no spills", attributes.localSizeBytes == 0,
          "heavy_kernel uses " + std::to_string(attributes.localSizeBytes) +
              " bytes of local memory a thread: registers spilled (nvcc -Xptxas -v shows it)");
}

TEST_CASE("pinned_mapped") {
    Stream stream;
    // allocate_pinned: page-locked, mapped, and as fast to copy to and from as the reference's.
    const size_t bytes = size_t(64) << 20;
    void* yours = ch02::allocate_pinned(bytes);
    void* reference = ref::allocate_pinned(bytes);
    cudaPointerAttributes where{};
    CUDA_CHECK(cudaPointerGetAttributes(&where, yours));
    unsigned flags = 0;
    const bool pinned = where.type == cudaMemoryTypeHost;
    const bool mapped = pinned && cudaHostGetFlags(&flags, yours) == cudaSuccess && (flags & cudaHostAllocMapped);
    cudaGetLastError();  // cudaHostGetFlags fails on pageable memory; that is the answer, not an error
    bool allocation_ok = check("pinned", "page-locked", pinned,
                               "allocate_pinned returned memory the runtime does not know as page-locked host memory "
                               "(cudaPointerGetAttributes): allocate it with cudaHostAlloc");
    allocation_ok &= check("pinned", "mapped", mapped, "the memory is not mapped into the device's address space (cudaHostAllocMapped)");
    if (allocation_ok) {
        std::memset(yours, 1, bytes);
        std::memset(reference, 1, bytes);
        std::vector<unsigned char> pageable(bytes, 1);
        DeviceBuffer<unsigned char> device(bytes), expected(bytes);
        expected.fill_bytes(1);
        auto copy_from = [&](const std::string& name, const void* host) {
            Contender c;
            c.name = name;
            c.bytes = 2.0 * bytes;
            c.before = [&](cudaStream_t s, int) { device.poison_on(s); };
            // Both ways: to the device, and back into the same host memory.
            c.run = [&, host](cudaStream_t s, int) {
                CUDA_CHECK(cudaMemcpyAsync(device.get(), host, bytes, cudaMemcpyHostToDevice, s));
                CUDA_CHECK(cudaMemcpyAsync(const_cast<void*>(host), device.get(), bytes, cudaMemcpyDeviceToHost, s));
            };
            c.verify = [&](int) {
                const unsigned long long wrong = count_differences(device.get(), expected.get(), bytes, stream);
                return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes arrived other than they were on the host";
            };
            return c;
        };
        SpeedTrial trial;
        trial.yours = copy_from("from your memory", yours);
        trial.reference = copy_from("from the reference's", reference);
        trial.baselines = {copy_from("from pageable memory", pageable.data())};
        std::mt19937_64 bytes_rng(seed_for("pinned bytes"));
        trial.vary = [&](int) {  // one byte changed, the same in every source
            const size_t i = bytes_rng() % bytes;
            const unsigned char value = static_cast<unsigned char>(bytes_rng() % 200 + 2);
            static_cast<unsigned char*>(yours)[i] = static_cast<unsigned char*>(reference)[i] = pageable[i] = value;
            expected.set(i, value);
        };
        trial.bytes = 2.0 * bytes;
        check_speed("pinned_speed", trial);
    }
    ch02::free_pinned(yours);
    ref::free_pinned(reference);

    // sum_mapped, on the reference's mapped memory: right totals, no copy.
    std::mt19937_64 rng(seed_for("mapped sizes"));
    DeviceBuffer<unsigned long long> total(1);
    bool sums_right = true;
    for (const size_t n : {size_t(1), size_t(1003), (size_t(1) << 20) + 3, size_t(1 + rng() % 3000000)}) {
        const std::string label = "n=" + std::to_string(n);
        int* host = static_cast<int*>(ref::allocate_pinned(n * sizeof(int)));
        const std::vector<int32_t> values = random_ints(n, seed_for("mapped " + label), -1000000, 1000000);
        std::memcpy(host, values.data(), n * sizeof(int));
        unsigned long long expected = 0;
        for (const int v : values) expected += static_cast<unsigned long long>(static_cast<long long>(v));
        total.fill_bytes(0);
        std::unique_ptr<Witness> witness = open_witness();
        ch02::sum_mapped(host, n, total.get(), stream);
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (witness) witness->finish();
        const unsigned long long got = total.download()[0];
        bool ok = check("mapped", label + ", total", got == expected,
                        "the total was " + std::to_string(static_cast<long long>(got)) + ", expected " +
                            std::to_string(static_cast<long long>(expected)));
        if (witness)
            ok &= check("mapped", label + ", technique: no copy", witness->copies().empty() && witness->kernels().size() == 1,
                        std::to_string(witness->copies().size()) + " copies ran and " + kernel_list(witness->kernels()) +
                            ": one kernel reads the mapped memory itself");
        sums_right &= ok;
        ref::free_pinned(host);
    }
    if (!sums_right) return;

    // The race: 64 MiB of ints read once, across the bus; one value changed before each round.
    const size_t n = bytes / sizeof(int);
    int* host = static_cast<int*>(ref::allocate_pinned(bytes));
    std::vector<int32_t> values = random_ints(n, seed_for("mapped race"), -1000000, 1000000);
    std::memcpy(host, values.data(), bytes);
    unsigned long long expected = 0;
    for (const int v : values) expected += static_cast<unsigned long long>(static_cast<long long>(v));
    DeviceBuffer<int> staged(n);
    CubSum cub_sum(n);
    auto summer = [&](const std::string& name, decltype(&ch02::sum_mapped) sum) {
        Contender c;
        c.name = name;
        c.bytes = double(bytes);
        c.before = [&](cudaStream_t s, int) { CUDA_CHECK(cudaMemsetAsync(total.get(), 0, sizeof(unsigned long long), s)); };
        c.run = [&, sum](cudaStream_t s, int) { sum(host, n, total.get(), s); };
        c.verify = [&](int) {
            const unsigned long long got = total.download()[0];
            return got == expected ? std::string() : "the total is wrong";
        };
        return c;
    };
    Contender copy_then_sum;
    copy_then_sum.name = "copy, then cub::DeviceReduce::Sum";
    copy_then_sum.bytes = double(bytes);
    copy_then_sum.run = [&](cudaStream_t s, int) {
        CUDA_CHECK(cudaMemcpyAsync(staged.get(), host, bytes, cudaMemcpyHostToDevice, s));
        cub_sum(staged.get(), n, s);
    };
    SpeedTrial trial;
    trial.yours = summer("your code", ch02::sum_mapped);
    trial.reference = summer("the reference", ref::sum_mapped);
    trial.baselines = {copy_then_sum};
    trial.vary = [&](int) {
        const size_t i = rng() % n;
        const int value = int(rng() % 2000001) - 1000000;
        expected += static_cast<unsigned long long>(static_cast<long long>(value)) -
                    static_cast<unsigned long long>(static_cast<long long>(host[i]));
        host[i] = value;
    };
    trial.bytes = double(bytes);
    check_speed("mapped_speed", trial);
    ref::free_pinned(host);
}

TEST_CASE("unified") {
    Stream stream;
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    int concurrent_managed = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&concurrent_managed, cudaDevAttrConcurrentManagedAccess, device));
    if (concurrent_managed == 0) {
        skip("unified", "this GPU", "no concurrent managed access on this GPU or platform: prefetching has nothing to do");
        return;
    }
    const float factor = 1.5f;
    // 64 MiB of managed floats, written by the host before every call.
    const size_t n = size_t(16) << 20;
    float* data = nullptr;
    CUDA_CHECK(cudaMallocManaged(&data, n * sizeof(float)));
    const std::vector<float> start = random_floats(n, seed_for("managed"), -1, 1);
    auto host_writes = [&]() { std::memcpy(data, start.data(), n * sizeof(float)); };
    auto wrong_values = [&]() {
        size_t wrong = 0;
        for (size_t i = 0; i < n; ++i) wrong += data[i] != start[i] * factor;
        return wrong;
    };

    host_writes();
    std::unique_ptr<Witness> witness = open_witness();
    ch02::scale_managed(data, n, factor, stream);
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (witness) witness->stop_calls();
    const size_t wrong = wrong_values();
    bool ok = check("unified", "values", wrong == 0, std::to_string(wrong) + " of " + std::to_string(n) + " values are not data * factor");
    if (witness) {
        witness->finish();
        int prefetches = 0;
        for (const std::string& call : witness->api_calls()) prefetches += call.rfind("cudaMemPrefetchAsync", 0) == 0;
        ok &= check("unified", "technique: prefetched", prefetches >= 1 && !witness->kernels().empty(),
                    "CUPTI saw " + std::to_string(prefetches) + " cudaMemPrefetchAsync and " + kernel_list(witness->kernels()) +
                        ": move the pages to the GPU ahead of the kernel");
    }
    if (ok) {
        // The race: the host writes the data before every call (untimed), so that each call finds
        // its pages on the host.
        auto scaler = [&](const std::string& name, std::function<void(cudaStream_t)> run) {
            Contender c;
            c.name = name;
            c.before = [&](cudaStream_t, int) { host_writes(); };
            c.run = [run](cudaStream_t s, int) { run(s); };
            c.verify = [&](int) { return wrong_values() == 0 ? std::string() : "the values are not data * factor"; };
            return c;
        };
        // A second array, advised once that this GPU accesses it: the GPU maps its pages where they
        // are (on the host) instead of faulting them in, and reads and writes them across the bus.
        float* advised = nullptr;
        CUDA_CHECK(cudaMallocManaged(&advised, n * sizeof(float)));
        cudaMemLocation gpu{};
        gpu.type = cudaMemLocationTypeDevice;
        gpu.id = device;
#if CUDART_VERSION >= 13000
        CUDA_CHECK(cudaMemAdvise(advised, n * sizeof(float), cudaMemAdviseSetAccessedBy, gpu));
#else
        CUDA_CHECK(cudaMemAdvise_v2(advised, n * sizeof(float), cudaMemAdviseSetAccessedBy, gpu));
#endif
        Contender accessed_by;
        accessed_by.name = "advice: accessed by the GPU, no prefetch";
        accessed_by.before = [&](cudaStream_t, int) { std::memcpy(advised, start.data(), n * sizeof(float)); };
        accessed_by.run = [&](cudaStream_t s, int) { scale_on_device(advised, n, factor, s); };
        accessed_by.verify = [&](int) {
            for (size_t i = 0; i < n; ++i)
                if (advised[i] != start[i] * factor) return std::string("the advised array's values are wrong");
            return std::string();
        };
        SpeedTrial trial;
        trial.yours = scaler("your code", [&](cudaStream_t s) { ch02::scale_managed(data, n, factor, s); });
        trial.reference = scaler("the reference", [&](cudaStream_t s) { ref::scale_managed(data, n, factor, s); });
        trial.baselines = {scaler("no prefetch: pages fault in", [&](cudaStream_t s) { scale_on_device(data, n, factor, s); }),
                           accessed_by};
        trial.vary = [](int) {};
        trial.bytes = double(n * sizeof(float));
        check_speed("speed", trial);
        CUDA_CHECK(cudaFree(advised));
    }
    CUDA_CHECK(cudaFree(data));
}
