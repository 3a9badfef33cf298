// The course's grading data (grader/thresholds.json): per chapter and exercise, the graded checks,
// their points and, for speed checks, the threshold. Host-only: tested without a GPU.
#pragma once
#include <map>
#include <string>

#include <nlohmann/json.hpp>

namespace grade {

// correctness: right or wrong; speed: a ratio against the reference; sanitizer: the exercise runs
// again under a compute-sanitizer tool (grader/run_exercise.py runs it and records the check).
enum class CheckKind { correctness, speed, sanitizer };

struct CheckSpec {
    std::string key;
    CheckKind kind = CheckKind::correctness;
    double points = 0;
    // Speed checks: the measured value (the reference's time over the graded code's, higher is
    // better) earns full points at the threshold.
    double threshold = 0;
    std::string unit;
    // How far from 1 the reference timed against itself may measure (the self-check); the rules'
    // value unless the check sets its own.
    double self_timing_tolerance = 0;
    // Sanitizer checks: the compute-sanitizer tool, e.g. "racecheck".
    std::string tool;
};

struct ExerciseSpec {
    std::string chapter, id, title;
    std::string read;  // where in the notes to read when this exercise fails
    std::map<std::string, CheckSpec> checks;
    const CheckSpec& check(const std::string& key) const;  // throws if the data file lacks it
};

struct ScoringRules {
    double reference_margin = 1.25;   // every threshold x this must be at most 1 (the reference's margin)
    double partial_credit_from = 0.5; // speed points start at this fraction of the threshold
    double self_timing_tolerance = 0.1;
};

class CourseSpec {
public:
    // Reads the data file; `compute_capability` ("9.0") picks per-architecture thresholds.
    static CourseSpec load(const std::string& path, const std::string& compute_capability);
    static CourseSpec parse(const nlohmann::json& data, const std::string& compute_capability);

    const ExerciseSpec& exercise(const std::string& chapter, const std::string& id) const;
    const ScoringRules& rules() const { return rules_; }

private:
    ScoringRules rules_;
    std::map<std::string, ExerciseSpec> exercises_;  // by "chapter/id"
};

}  // namespace grade
