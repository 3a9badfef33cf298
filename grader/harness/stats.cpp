#include "stats.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace grade {

double median(std::vector<double> values) {
    if (values.empty()) throw std::invalid_argument("median of no values");
    const size_t mid = values.size() / 2;
    std::nth_element(values.begin(), values.begin() + mid, values.end());
    const double upper = values[mid];
    if (values.size() % 2 == 1) return upper;
    const double lower = *std::max_element(values.begin(), values.begin() + mid);
    return (lower + upper) / 2;
}

double relative_noise(const std::vector<double>& values) {
    if (values.size() < 2) return 0;
    const double m = median(values);
    if (m == 0) return 0;
    std::vector<double> deviations;
    deviations.reserve(values.size());
    for (double v : values) deviations.push_back(std::fabs(v - m));
    return median(deviations) / std::fabs(m);
}

Summary summarize(const std::vector<double>& values) {
    Summary s;
    s.samples = static_cast<int>(values.size());
    if (values.empty()) return s;
    s.median = median(values);
    s.min = *std::min_element(values.begin(), values.end());
    s.max = *std::max_element(values.begin(), values.end());
    s.noise = relative_noise(values);
    return s;
}

bool enough_samples(const StoppingRule& rule, const std::vector<double>& samples, double elapsed_seconds) {
    const int n = static_cast<int>(samples.size());
    if (n >= rule.max_samples || elapsed_seconds >= rule.max_seconds) return true;
    if (n < rule.min_samples || elapsed_seconds < rule.min_seconds) return false;
    return relative_noise(samples) <= rule.max_noise;
}

}  // namespace grade
