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

TEST_CASE("outputs of different sizes: named, not compared element by element") {
    for (const auto& [expected, got] : {std::pair{std::vector<int32_t>{1, 2}, std::vector<int32_t>{1}},
                                        std::pair{std::vector<int32_t>{1}, std::vector<int32_t>{1, 2}}}) {
        const Comparison c = compare_exact(expected, got);
        CHECK_FALSE(c.ok());
        CHECK(c.mismatches == 0);
        CHECK(c.message().find("size differs: expected " + std::to_string(expected.size()) + " elements, got " +
                               std::to_string(got.size())) != std::string::npos);
    }
}

TEST_CASE("NaN everywhere is a constant output too") {
    std::vector<double> expected(32);
    for (int i = 0; i < 32; ++i) expected[i] = i;
    const Comparison c = compare_close(expected, std::vector<float>(32, std::nanf("")), {1e-6, 0});
    CHECK(c.message().find("same value everywhere") != std::string::npos);
}

TEST_CASE("a short output is compared element by element, never called constant") {
    const Comparison c = compare_exact(std::vector<int32_t>{1, 2, 3, 4}, std::vector<int32_t>(4, 0));
    CHECK(c.mismatches == 4);
    CHECK(c.message().find("same value everywhere") == std::string::npos);
}

TEST_CASE("only the first mismatches are shown; the rest are elided") {
    std::vector<int32_t> expected(12), got(12, -1);
    for (int i = 0; i < 12; ++i) expected[i] = i;
    const std::string m = compare_exact(expected, got).message();
    CHECK(m.find("12 of 12 elements differ") != std::string::npos);
    CHECK(m.find("[4] expected 4") != std::string::npos);
    CHECK(m.find("[5] expected 5") == std::string::npos);
    CHECK(m.find("\n  ...") != std::string::npos);
}
