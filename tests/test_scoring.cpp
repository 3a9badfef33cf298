#include <doctest/doctest.h>

#include "scoring.h"
#include "spec.h"

using namespace grade;

namespace {

const char* kData = R"({
  "scoring": {"reference_margin": 1.25, "partial_credit_from": 0.5, "self_timing_tolerance": 0.1},
  "chapters": {"01_x": {"exercises": {"add": {
    "title": "Add", "read": "notes/01_x.md#add",
    "checks": {
      "correct": {"points": 6},
      "speed": {"points": 4, "kind": "speed", "threshold": 0.8, "unit": "x", "threshold_by_cc": {"8.0": 0.6}},
      "noisy": {"points": 0, "kind": "speed", "threshold": 0.5, "self_timing_tolerance": 0.25}
    }}}}}
})";

CheckRecord record(const std::string& key, CheckStatus status, double value = 0) {
    CheckRecord r;
    r.key = key;
    r.status = status;
    if (key == "speed") r.value = value;
    return r;
}

double total(const std::vector<CheckScore>& scores) {
    double t = 0;
    for (const auto& s : scores) t += s.points;
    return t;
}

}  // namespace

TEST_CASE("grading data parses, with per-architecture thresholds") {
    const CourseSpec spec = CourseSpec::parse(nlohmann::json::parse(kData), "9.0");
    const ExerciseSpec& e = spec.exercise("01_x", "add");
    CHECK(e.title == "Add");
    CHECK(e.read == "notes/01_x.md#add");
    CHECK(e.check("speed").threshold == 0.8);
    CHECK(e.check("speed").self_timing_tolerance == 0.1);  // the rules' own
    CHECK(e.check("noisy").self_timing_tolerance == 0.25);
    CHECK(e.check("speed").kind == CheckKind::speed);
    CHECK(e.check("correct").kind == CheckKind::correctness);
    CHECK(CourseSpec::parse(nlohmann::json::parse(kData), "8.0").exercise("01_x", "add").check("speed").threshold == 0.6);
    CHECK_THROWS_WITH_AS(e.check("nope"), doctest::Contains("no check 'nope'"), std::runtime_error);
    CHECK_THROWS(spec.exercise("01_x", "missing"));
    CHECK_THROWS(CourseSpec::parse(nlohmann::json::parse(R"({"chapters": {}})"), "9.0"));
}

TEST_CASE("a threshold that leaves the reference less than its margin is refused") {
    nlohmann::json data = nlohmann::json::parse(kData);
    data["chapters"]["01_x"]["exercises"]["add"]["checks"]["speed"]["threshold"] = 0.81;  // x 1.25 > 1
    CHECK_THROWS_WITH_AS(CourseSpec::parse(data, "9.0"), doctest::Contains("margin"), std::runtime_error);
    data["chapters"]["01_x"]["exercises"]["add"]["checks"]["speed"]["threshold"] = 0.8;
    data["chapters"]["01_x"]["exercises"]["add"]["checks"]["speed"]["threshold_by_cc"]["9.0"] = 0.9;
    CHECK_THROWS_WITH_AS(CourseSpec::parse(data, "9.0"), doctest::Contains("margin"), std::runtime_error);
    CHECK_NOTHROW(CourseSpec::parse(data, "8.0"));
}

TEST_CASE("speed points: full at the threshold, a line below it, none at half") {
    CHECK(speed_points(2.0, 2.0, 4, 0.5) == 4);
    CHECK(speed_points(3.0, 2.0, 4, 0.5) == 4);
    CHECK(speed_points(1.5, 2.0, 4, 0.5) == doctest::Approx(2));
    CHECK(speed_points(1.0, 2.0, 4, 0.5) == 0);
    CHECK(speed_points(0.1, 2.0, 4, 0.5) == 0);
    CHECK(speed_points(std::nan(""), 2.0, 4, 0.5) == 0);
}

TEST_CASE("exercise scores") {
    const CourseSpec spec = CourseSpec::parse(nlohmann::json::parse(kData), "9.0");
    const ExerciseSpec& e = spec.exercise("01_x", "add");
    const ScoringRules& rules = spec.rules();

    SUBCASE("all passed") {
        CHECK(total(score_exercise(e, rules, {record("correct", CheckStatus::passed), record("correct", CheckStatus::passed),
                                              record("speed", CheckStatus::passed, 1.0)})) == 10);
    }
    SUBCASE("slow: partial speed points") {
        CHECK(total(score_exercise(e, rules, {record("correct", CheckStatus::passed),
                                              record("speed", CheckStatus::failed, 0.6)})) == doctest::Approx(8));
    }
    SUBCASE("one wrong case: no correctness points, and no speed points either") {
        CHECK(total(score_exercise(e, rules, {record("correct", CheckStatus::passed), record("correct", CheckStatus::failed),
                                              record("speed", CheckStatus::passed, 1.2)})) == 0);
    }
    SUBCASE("nothing recorded (a crash): nothing earned, maximum still known") {
        const auto scores = score_exercise(e, rules, {});
        CHECK(total(scores) == 0);
        double max_points = 0;
        for (const auto& s : scores) max_points += s.max_points;
        CHECK(max_points == 10);
    }
    SUBCASE("a speed check recorded twice is a grader's bug: no points") {
        CHECK(total(score_exercise(e, rules, {record("correct", CheckStatus::passed), record("speed", CheckStatus::passed, 1.0),
                                              record("speed", CheckStatus::passed, 1.0)})) == 6);
    }
    SUBCASE("speed skipped under the sanitizer earns nothing") {
        CHECK(total(score_exercise(e, rules, {record("correct", CheckStatus::passed),
                                              record("speed", CheckStatus::skipped, 5)})) == 6);
    }
}

TEST_CASE("a sanitizer check: parsed with its tool, scored from its record, no hold on the speed points") {
    nlohmann::json data = nlohmann::json::parse(kData);
    auto& checks = data["chapters"]["01_x"]["exercises"]["add"]["checks"];
    checks["race_free"] = {{"points", 3}, {"kind", "sanitizer"}, {"tool", "racecheck"}};
    const CourseSpec spec = CourseSpec::parse(data, "9.0");
    const ExerciseSpec& e = spec.exercise("01_x", "add");
    CHECK(e.check("race_free").kind == CheckKind::sanitizer);
    CHECK(e.check("race_free").tool == "racecheck");
    const CheckRecord correct = record("correct", CheckStatus::passed), fast = record("speed", CheckStatus::passed, 1.0);
    // The grader itself records nothing for it: the runner adds the record afterwards.
    CHECK(total(score_exercise(e, spec.rules(), {correct, fast})) == 10);
    CHECK(total(score_exercise(e, spec.rules(), {correct, fast, record("race_free", CheckStatus::passed)})) == 13);
    CHECK(total(score_exercise(e, spec.rules(), {correct, fast, record("race_free", CheckStatus::failed)})) == 10);

    checks["race_free"]["tool"] = "leakcheck";
    CHECK_THROWS_WITH_AS(CourseSpec::parse(data, "9.0"), doctest::Contains("tool must be"), std::runtime_error);
    checks["race_free"]["kind"] = "vibes";
    CHECK_THROWS_WITH_AS(CourseSpec::parse(data, "9.0"), doctest::Contains("kind must be"), std::runtime_error);
}
