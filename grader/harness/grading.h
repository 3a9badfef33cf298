// What a chapter's grader uses: its options, the grading data, and the recording of checks.
//
// A grader is a doctest program with one TEST_CASE per exercise, named as in thresholds.json.
// Each check it makes goes through check() or check_speed(), which record it for the results
// file and report a failure to doctest.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <doctest/doctest.h>

#include "baselines.h"
#include "buffers.h"
#include "compare.h"
#include "cuda_check.h"
#include "gpu_work.h"
#include "random.h"
#include "results.h"
#include "spec.h"
#include "timing.h"

namespace grade {

enum class Mode { grade, reference, skeleton };

struct Options {
    uint64_t seed = 0;
    std::string results_dir = "results";
    std::string thresholds;
    Mode mode = Mode::grade;
    double timeout_seconds = 60;
    std::string sanitizer;  // the compute-sanitizer tool we run under, from COURSE_SANITIZER
};

const Options& options();
const ScoringRules& rules();
const ExerciseSpec& current_exercise();
uint64_t seed_for(const std::string& label);  // reproducible with --seed

// A graded correctness check: recorded, and reported to doctest when it fails.
bool check(const std::string& key, const std::string& label, bool ok, const std::string& message);
bool check(const std::string& key, const std::string& label, const Comparison& comparison);

// A check that cannot run here (under compute-sanitizer, say): recorded as skipped, no points.
void skip(const std::string& key, const std::string& label, const std::string& why);

// A graded speed check: `measure` returns a ratio (higher is better) and its relative noise. It
// is measured again once when it lands within noise of the threshold. In reference mode the
// ratio must clear the threshold by the rules' margin. Skipped under compute-sanitizer.
struct Ratio {
    double value = 0;
    double noise = 0;
    std::string detail;  // the measured times or bandwidths behind the ratio
    std::vector<std::pair<std::string, double>> figures;  // named figures for the report's table
};
bool check_speed(const std::string& key, const std::function<Ratio()>& measure);

// A timeline of GPU operations for the report (see results.h).
void record_timeline(const Timeline& timeline);

// Registers the chapter a grader belongs to, and the compute capability it needs.
struct Chapter {
    Chapter(const char* name, int min_major, int min_minor, const char* needs);
};

}  // namespace grade

#define GRADE_CHAPTER(name, min_major, min_minor, needs) \
    static ::grade::Chapter grade_chapter_registration_(name, min_major, min_minor, needs)
