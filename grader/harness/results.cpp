#include "results.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace grade {

nlohmann::json to_json(const ExerciseResult& r) {
    nlohmann::json checks = nlohmann::json::array(), scores = nlohmann::json::array();
    double points = 0, max_points = 0;
    for (const CheckRecord& c : r.checks) checks.push_back(to_json(c));
    for (const CheckScore& s : r.scores) {
        scores.push_back({{"key", s.key}, {"points", s.points}, {"max_points", s.max_points}});
        points += s.points;
        max_points += s.max_points;
    }
    nlohmann::json timelines = nlohmann::json::array();
    for (const Timeline& t : r.timelines) {
        nlohmann::json ops = nlohmann::json::array();
        for (const TimelineOp& op : t.ops)
            ops.push_back({{"stream", op.stream}, {"kind", op.kind}, {"start_ms", op.start_ms}, {"end_ms", op.end_ms}});
        timelines.push_back({{"title", t.title}, {"ops", ops}});
    }
    return {{"chapter", r.chapter}, {"exercise", r.exercise}, {"title", r.title}, {"read", r.read},
            {"mode", r.mode},       {"status", r.status},     {"message", r.message},
            {"checks", checks},     {"scores", scores},       {"points", points},
            {"max_points", max_points}, {"timelines", timelines}, {"device", r.device}, {"seed", r.seed},
            {"seconds", r.seconds}, {"token", r.token}};
}

std::string write_result(const std::string& dir, const ExerciseResult& r) {
    namespace fs = std::filesystem;
    const fs::path folder = fs::path(dir) / r.chapter;
    fs::create_directories(folder);
    const fs::path path = folder / (r.exercise + ".json");
    const fs::path tmp = folder / (r.exercise + ".json.tmp");
    {
        std::ofstream out(tmp);
        if (!out) throw std::runtime_error("cannot write " + tmp.string());
        out << to_json(r).dump(2) << "\n";
    }
    fs::rename(tmp, path);
    return path.string();
}

}  // namespace grade
