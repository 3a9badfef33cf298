#include "compare.h"

#include <cmath>
#include <sstream>

namespace grade {

namespace {

constexpr size_t kShown = 5;

template <class Expected, class Got, class Equal>
Comparison compare(const std::vector<Expected>& expected, const std::vector<Got>& got, Equal equal) {
    Comparison c;
    c.count = expected.size();
    if (expected.size() != got.size()) {
        c.problem = "size differs: expected " + std::to_string(expected.size()) + " elements, got " +
                    std::to_string(got.size());
        return c;
    }
    bool expected_constant = true, got_constant = true;
    for (size_t i = 0; i < expected.size(); ++i) {
        if (!equal(expected[i], got[i])) {
            if (c.first.size() < kShown)
                c.first.push_back({i, static_cast<double>(expected[i]), static_cast<double>(got[i])});
            ++c.mismatches;
        }
        if (i > 0) {
            expected_constant = expected_constant && expected[i] == expected[0];
            got_constant = got_constant && (got[i] == got[0] || (std::isnan(double(got[i])) && std::isnan(double(got[0]))));
        }
    }
    // Elementwise checks already catch this; naming it tells the student what happened.
    if (c.mismatches > 0 && expected.size() >= 16 && got_constant && !expected_constant) {
        std::ostringstream s;
        s << "the output is the same value everywhere (" << double(got[0])
          << "): was the kernel launched, and did it write its output?";
        c.problem = s.str();
    }
    return c;
}

}  // namespace

std::string Comparison::message() const {
    if (ok()) return "";
    std::ostringstream s;
    s.precision(10);  // every 32-bit integer in full
    if (mismatches > 0) {
        s << mismatches << " of " << count << " elements differ";
        for (const Mismatch& m : first) {
            s << "\n  [" << m.index << "] expected " << m.expected << ", got " << m.got;
            if (std::isnan(m.got)) s << " (NaN: never written, or computed from garbage)";
        }
        if (mismatches > first.size()) s << "\n  ...";
    }
    if (!problem.empty()) s << (mismatches > 0 ? "\n" : "") << problem;
    return s.str();
}

Comparison compare_exact(const std::vector<int32_t>& expected, const std::vector<int32_t>& got) {
    return compare(expected, got, [](int32_t e, int32_t g) { return e == g; });
}

Comparison compare_exact(const std::vector<int64_t>& expected, const std::vector<int64_t>& got) {
    return compare(expected, got, [](int64_t e, int64_t g) { return e == g; });
}

Comparison compare_exact(const std::vector<uint32_t>& expected, const std::vector<uint32_t>& got) {
    return compare(expected, got, [](uint32_t e, uint32_t g) { return e == g; });
}

Comparison compare_close(const std::vector<double>& expected, const std::vector<float>& got, Tolerance tol) {
    return compare(expected, got, [tol](double e, float g) {
        // Written so that NaN (any comparison false) fails.
        return std::fabs(double(g) - e) <= tol.absolute + tol.relative * std::fabs(e);
    });
}

}  // namespace grade
