#include "scoring.h"

#include <algorithm>

namespace grade {

double speed_points(double value, double threshold, double points, double from) {
    if (!(value >= 0) || threshold <= 0) return 0;  // NaN earns nothing
    if (value >= threshold) return points;
    const double fraction = (value / threshold - from) / (1 - from);
    return points * std::clamp(fraction, 0.0, 1.0);
}

std::vector<CheckScore> score_exercise(const ExerciseSpec& spec, const ScoringRules& rules,
                                       const std::vector<CheckRecord>& records) {
    auto records_of = [&](const std::string& key) {
        std::vector<const CheckRecord*> found;
        for (const CheckRecord& r : records)
            if (r.key == key) found.push_back(&r);
        return found;
    };
    auto all_passed = [](const std::vector<const CheckRecord*>& rs) {
        return !rs.empty() && std::all_of(rs.begin(), rs.end(),
                                          [](const CheckRecord* r) { return r->status == CheckStatus::passed; });
    };

    bool correct = true;
    for (const auto& [key, check] : spec.checks)
        if (check.kind == CheckKind::correctness) correct = correct && all_passed(records_of(key));

    std::vector<CheckScore> scores;
    for (const auto& [key, check] : spec.checks) {
        CheckScore s{key, 0, check.points};
        const auto rs = records_of(key);
        if (check.kind != CheckKind::speed) {  // the sanitizer's record comes from grader/run_exercise.py
            if (all_passed(rs)) s.points = check.points;
        } else if (correct && rs.size() == 1 && rs[0]->value && rs[0]->status != CheckStatus::skipped) {
            s.points = speed_points(*rs[0]->value, check.threshold, check.points, rules.partial_credit_from);
        }
        scores.push_back(s);
    }
    return scores;
}

const char* to_string(CheckStatus status) {
    switch (status) {
        case CheckStatus::passed: return "passed";
        case CheckStatus::failed: return "failed";
        case CheckStatus::skipped: return "skipped";
    }
    return "unknown";
}

nlohmann::json to_json(const CheckRecord& r) {
    nlohmann::json j = {{"key", r.key}, {"label", r.label}, {"status", to_string(r.status)}, {"message", r.message}};
    if (r.value) j["value"] = *r.value;
    if (r.threshold) j["threshold"] = *r.threshold;
    if (r.noise) j["noise"] = *r.noise;
    if (!r.unit.empty()) j["unit"] = r.unit;
    if (!r.figures.empty()) {
        j["figures"] = nlohmann::json::array();
        for (const auto& [name, value] : r.figures) j["figures"].push_back({{"name", name}, {"value", value}});
    }
    return j;
}

}  // namespace grade
