#include <doctest/doctest.h>

#include "random.h"
#include "stats.h"

using namespace grade;

TEST_CASE("median of odd and even counts") {
    CHECK(median({3, 1, 2}) == 2);
    CHECK(median({4, 1, 3, 2}) == doctest::Approx(2.5));
    CHECK_THROWS(median({}));
}

TEST_CASE("relative noise ignores one outlier") {
    CHECK(relative_noise({1.0, 1.0, 1.0, 1.0, 100.0}) == 0);
    CHECK(relative_noise({1.0, 1.1, 0.9, 1.0}) == doctest::Approx(0.05));
}

TEST_CASE("relative noise is relative to the median, whatever the unit") {
    CHECK(relative_noise({100.0, 110.0, 90.0, 100.0}) == doctest::Approx(0.05));
    CHECK(relative_noise({0.001, 0.0011, 0.0009, 0.001}) == doctest::Approx(0.05));
}

TEST_CASE("summary") {
    const Summary s = summarize({2, 1, 4, 3, 5});
    CHECK(s.median == 3);
    CHECK(s.min == 1);
    CHECK(s.max == 5);
    CHECK(s.samples == 5);
}

TEST_CASE("stopping rule") {
    StoppingRule rule;
    rule.min_samples = 3;
    rule.max_samples = 10;
    rule.min_seconds = 0.01;
    rule.max_seconds = 1;
    rule.max_noise = 0.01;
    CHECK_FALSE(enough_samples(rule, {1, 1}, 0.5));           // too few samples
    CHECK_FALSE(enough_samples(rule, {1, 1, 1}, 0.001));      // too little time
    CHECK(enough_samples(rule, {1, 1, 1}, 0.5));              // quiet
    CHECK_FALSE(enough_samples(rule, {1, 2, 1, 2}, 0.5));     // noisy: go on
    CHECK(enough_samples(rule, std::vector<double>(10, 1), 0)); // sample cap
    CHECK(enough_samples(rule, {1}, 2));                      // time cap
}

TEST_CASE("random inputs are reproducible and in range") {
    const auto a = random_floats(1000, 7, -1, 1), b = random_floats(1000, 7, -1, 1);
    CHECK(a == b);
    CHECK(random_floats(1000, 8, -1, 1) != a);
    for (float v : a) CHECK((v >= -1 && v < 1));
    const auto ints = random_ints(10000, 3, -5, 5);
    int lowest = 0, highest = 0;
    for (int v : ints) {
        lowest = std::min(lowest, v);
        highest = std::max(highest, v);
    }
    CHECK(lowest == -5);
    CHECK(highest == 5);
    CHECK(mix_seed(1, "a") != mix_seed(1, "b"));
    CHECK(mix_seed(1, "a") == mix_seed(1, "a"));
}
