#include "spec.h"

#include <fstream>
#include <stdexcept>

namespace grade {

using nlohmann::json;

const CheckSpec& ExerciseSpec::check(const std::string& key) const {
    auto it = checks.find(key);
    if (it == checks.end())
        throw std::runtime_error("grader/thresholds.json has no check '" + key + "' for exercise " +
                                 chapter + "/" + id);
    return it->second;
}

CourseSpec CourseSpec::load(const std::string& path, const std::string& compute_capability) {
    std::ifstream in(path);
    if (!in) throw std::runtime_error("cannot open the grading data file " + path);
    json data;
    try {
        data = json::parse(in);
    } catch (const json::exception& e) {
        throw std::runtime_error("cannot parse " + path + ": " + e.what());
    }
    return parse(data, compute_capability);
}

CourseSpec CourseSpec::parse(const json& data, const std::string& cc) {
    CourseSpec spec;
    try {
        const json& scoring = data.at("scoring");
        spec.rules_.reference_margin = scoring.at("reference_margin").get<double>();
        spec.rules_.partial_credit_from = scoring.at("partial_credit_from").get<double>();
        spec.rules_.self_timing_tolerance = scoring.at("self_timing_tolerance").get<double>();
        for (const auto& [chapter, chapter_data] : data.at("chapters").items()) {
            for (const auto& [id, ex] : chapter_data.at("exercises").items()) {
                ExerciseSpec e;
                e.chapter = chapter;
                e.id = id;
                e.title = ex.at("title").get<std::string>();
                e.read = ex.value("read", "");
                for (const auto& [key, c] : ex.at("checks").items()) {
                    CheckSpec check;
                    check.key = key;
                    check.points = c.at("points").get<double>();
                    const std::string kind = c.value("kind", "correctness");
                    if (kind == "speed") {
                        check.kind = CheckKind::speed;
                        check.threshold = c.at("threshold").get<double>();
                        check.unit = c.value("unit", "");
                        check.self_timing_tolerance =
                            c.value("self_timing_tolerance", spec.rules_.self_timing_tolerance);
                        if (c.contains("threshold_by_cc") && c["threshold_by_cc"].contains(cc))
                            check.threshold = c["threshold_by_cc"][cc].get<double>();
                        if (check.threshold * spec.rules_.reference_margin > 1 + 1e-9)
                            throw std::runtime_error("check " + chapter + "/" + id + "/" + key + ": threshold " +
                                                     std::to_string(check.threshold) + " leaves the reference less "
                                                     "than its margin (threshold x reference_margin must be <= 1)");
                    } else if (kind == "sanitizer") {
                        check.kind = CheckKind::sanitizer;
                        check.tool = c.at("tool").get<std::string>();
                        if (check.tool != "memcheck" && check.tool != "racecheck" && check.tool != "synccheck" &&
                            check.tool != "initcheck")
                            throw std::runtime_error("check " + chapter + "/" + id + "/" + key +
                                                     ": tool must be memcheck, racecheck, synccheck or initcheck, not " +
                                                     check.tool);
                    } else if (kind != "correctness") {
                        throw std::runtime_error("check " + chapter + "/" + id + "/" + key +
                                                 ": kind must be correctness, speed or sanitizer, not " + kind);
                    }
                    e.checks[key] = check;
                }
                spec.exercises_[chapter + "/" + id] = e;
            }
        }
    } catch (const json::exception& err) {
        throw std::runtime_error(std::string("grading data file: ") + err.what());
    }
    return spec;
}

const ExerciseSpec& CourseSpec::exercise(const std::string& chapter, const std::string& id) const {
    auto it = exercises_.find(chapter + "/" + id);
    if (it == exercises_.end())
        throw std::runtime_error("grader/thresholds.json has no exercise " + chapter + "/" + id);
    return it->second;
}

}  // namespace grade
