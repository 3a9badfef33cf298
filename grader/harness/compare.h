// Comparing a result with the expected one. Host-only: tested without a GPU.
//
// A failed comparison says how many elements differ, where the first ones are, and what was
// expected there. NaN never passes, and neither does a constant output where the expected one
// varies (a kernel that wrote one value everywhere, or nothing at all over a zeroed buffer).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace grade {

struct Mismatch {
    size_t index;
    double expected;
    double got;
};

struct Comparison {
    size_t count = 0;       // elements compared
    size_t mismatches = 0;  // elements that differ
    std::vector<Mismatch> first;  // the first few of them
    std::string problem;    // a whole-array problem (sizes, constant output), if any
    bool ok() const { return mismatches == 0 && problem.empty(); }
    std::string message() const;  // empty when ok()
};

// Per element: |got - expected| <= absolute + relative * |expected|.
struct Tolerance {
    double absolute = 0;
    double relative = 0;
};

Comparison compare_exact(const std::vector<int32_t>& expected, const std::vector<int32_t>& got);
Comparison compare_exact(const std::vector<int64_t>& expected, const std::vector<int64_t>& got);
Comparison compare_exact(const std::vector<uint32_t>& expected, const std::vector<uint32_t>& got);
Comparison compare_close(const std::vector<double>& expected, const std::vector<float>& got, Tolerance tolerance);

}  // namespace grade
