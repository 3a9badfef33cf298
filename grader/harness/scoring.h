// Points from check records. Host-only: tested without a GPU.
//
// A correctness or sanitizer check earns its points when every record of it passed (a sanitizer
// check's one record is added by grader/run_exercise.py, after the grader). A speed check earns
// nothing unless every correctness check of the exercise earned its points; then full points at
// or above the threshold, and below it a straight line from zero at `partial_credit_from` of the
// threshold up to full points at the threshold.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "spec.h"

namespace grade {

enum class CheckStatus { passed, failed, skipped };

struct CheckRecord {
    std::string key;    // the check in thresholds.json
    std::string label;  // which case: "n=1000003", "2048 threads per block"
    CheckStatus status = CheckStatus::failed;
    std::string message;
    std::optional<double> value, threshold, noise;  // speed and tolerance checks
    std::string unit;
    // What a speed check measured along the way, in the order to show them: the report's table
    // of a chapter's figures ("GB/s", "% of CUB") has a row per exercise.
    std::vector<std::pair<std::string, double>> figures;
};

struct CheckScore {
    std::string key;
    double points = 0, max_points = 0;
};

double speed_points(double value, double threshold, double points, double partial_credit_from);

std::vector<CheckScore> score_exercise(const ExerciseSpec& spec, const ScoringRules& rules,
                                       const std::vector<CheckRecord>& records);

const char* to_string(CheckStatus status);
nlohmann::json to_json(const CheckRecord& record);

}  // namespace grade
