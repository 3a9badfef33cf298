#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "compare.h"

using namespace grade;

TEST_CASE("exact comparison names the first mismatches") {
    const Comparison c = compare_exact(std::vector<int32_t>{1, 2, 3, 4}, std::vector<int32_t>{1, 5, 3, 6});
    CHECK_FALSE(c.ok());
    CHECK(c.mismatches == 2);
    REQUIRE(c.first.size() == 2);
    CHECK(c.first[0].index == 1);
    CHECK(c.first[0].expected == 2);
    CHECK(c.first[0].got == 5);
    CHECK(c.message().find("2 of 4 elements differ") != std::string::npos);
    CHECK(c.message().find("[1] expected 2, got 5") != std::string::npos);
}

TEST_CASE("unsigned 32-bit values are shown in full") {
    const Comparison c = compare_exact(std::vector<uint32_t>{4294967295u, 7}, std::vector<uint32_t>{4294967294u, 7});
    CHECK(c.mismatches == 1);
    CHECK(c.message().find("[0] expected 4294967295, got 4294967294") != std::string::npos);
}

TEST_CASE("equal arrays pass with an empty message") {
    const Comparison c = compare_exact(std::vector<int64_t>{1, 2}, std::vector<int64_t>{1, 2});
    CHECK(c.ok());
    CHECK(c.message().empty());
}

TEST_CASE("size mismatch fails") {
    CHECK_FALSE(compare_exact(std::vector<int32_t>{1, 2}, std::vector<int32_t>{1}).ok());
}

TEST_CASE("tolerance is absolute plus relative") {
    const Tolerance tol{0.1, 0.01};
    CHECK(compare_close({10.0}, {10.2f}, tol).ok());   // bound 0.1 + 0.1
    CHECK_FALSE(compare_close({10.0}, {10.25f}, tol).ok());
    CHECK(compare_close({0.0}, {0.0f}, {0, 0}).ok());
}

TEST_CASE("NaN never passes") {
    const float nan = std::numeric_limits<float>::quiet_NaN();
    const Comparison c = compare_close({1.0}, {nan}, {1e30, 1e30});
    CHECK_FALSE(c.ok());
    CHECK(c.message().find("NaN") != std::string::npos);
}

TEST_CASE("constant output where the expected one varies is named") {
    std::vector<double> expected(32);
    std::vector<float> got(32, 0.0f);
    for (int i = 0; i < 32; ++i) expected[i] = i;
    const Comparison c = compare_close(expected, got, {1e-6, 0});
    CHECK_FALSE(c.ok());
    CHECK(c.message().find("same value everywhere") != std::string::npos);
}
