#include "random.h"

namespace grade {

namespace {
uint64_t splitmix64(uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
}  // namespace

uint64_t mix_seed(uint64_t seed, std::string_view label) {
    uint64_t h = 1469598103934665603ull;  // FNV-1a over the label
    for (char c : label) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
    return splitmix64(seed ^ h);
}

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi) {
    std::vector<float> v(n);
    for (size_t i = 0; i < n; ++i) {
        const double unit = (splitmix64(seed + i) >> 11) * 0x1.0p-53;  // [0, 1)
        v[i] = static_cast<float>(lo + (hi - lo) * unit);
    }
    return v;
}

std::vector<int32_t> random_ints(size_t n, uint64_t seed, int32_t lo, int32_t hi) {
    std::vector<int32_t> v(n);
    const uint64_t span = static_cast<uint64_t>(int64_t(hi) - int64_t(lo)) + 1;
    for (size_t i = 0; i < n; ++i) v[i] = static_cast<int32_t>(lo + int64_t(splitmix64(seed + i) % span));
    return v;
}

}  // namespace grade
