// One results file per exercise run, written when the exercise starts (status "running": if the
// process dies, the file says so) and again when it ends. Host-only: tested without a GPU.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "scoring.h"

namespace grade {

// GPU operations laid out in time, for the report to draw (chapter 04's pipelines): a row per
// stream, a bar per operation. Times in milliseconds from the first operation's start.
struct TimelineOp {
    int stream = 0;
    std::string kind;  // "copy in", "compute", "copy out"...
    double start_ms = 0, end_ms = 0;
};
struct Timeline {
    std::string title;
    std::vector<TimelineOp> ops;
};

struct ExerciseResult {
    std::string chapter, exercise, title, read;
    std::string mode;    // "grade" (the student's code), "reference" or "skeleton" (self-check)
    std::string status;  // running, passed, failed, error, timeout, skipped
    std::string message; // why it failed, errored or was skipped
    std::vector<CheckRecord> checks;
    std::vector<CheckScore> scores;
    std::vector<Timeline> timelines;
    nlohmann::json device;  // the GPU's fingerprint
    unsigned long long seed = 0;
    double seconds = 0;
    std::string token;  // from grader/run_exercise.py: proves the grader wrote the file
};

nlohmann::json to_json(const ExerciseResult& result);

// <dir>/<chapter>/<exercise>.json, replaced atomically (write, then rename).
std::string write_result(const std::string& dir, const ExerciseResult& result);

}  // namespace grade
