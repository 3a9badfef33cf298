// Small statistics over timing samples. Host-only: tested without a GPU.
#pragma once
#include <vector>

namespace grade {

double median(std::vector<double> values);

// Median absolute deviation over the median: a spread measure that one outlier cannot move.
double relative_noise(const std::vector<double>& values);

struct Summary {
    double median = 0, min = 0, max = 0;
    double noise = 0;  // relative_noise of the samples
    int samples = 0;
};
Summary summarize(const std::vector<double>& values);

// The rule that ends sampling, in the spirit of nvbench: enough samples and enough time, and then
// either the noise is low or a cap is reached.
struct StoppingRule {
    int min_samples = 10;
    int max_samples = 300;
    double min_seconds = 0.05;
    double max_seconds = 1.0;
    double max_noise = 0.01;
};
bool enough_samples(const StoppingRule& rule, const std::vector<double>& samples, double elapsed_seconds);

}  // namespace grade
