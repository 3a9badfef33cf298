// Seeded random inputs. Element i depends only on (seed, i), so inputs are reproducible with
// --seed and cheap to make for hundreds of millions of elements. Host-only.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

namespace grade {

uint64_t mix_seed(uint64_t seed, std::string_view label);  // one stream of numbers per label

std::vector<float> random_floats(size_t n, uint64_t seed, float lo, float hi);
std::vector<int32_t> random_ints(size_t n, uint64_t seed, int32_t lo, int32_t hi);  // [lo, hi]

}  // namespace grade
