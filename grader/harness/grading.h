// What a chapter's grader uses: its options, the grading data, and the recording of checks.
//
// A grader is a doctest program with one TEST_CASE per exercise, named as in thresholds.json.
// Each check it makes goes through check() or check_speed(), which record it for the results
// file and report a failure to doctest.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
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
#include "witness.h"

namespace grade {

enum class Mode { grade, reference, skeleton };

struct Options {
    uint64_t seed = 0;
    std::string results_dir = "results";
    std::string thresholds;
    Mode mode = Mode::grade;
    double timeout_seconds = 60;
    std::string sanitizer;  // the compute-sanitizer tool this runs under (--sanitizer)
};

const Options& options();
const ScoringRules& rules();
const ExerciseSpec& current_exercise();
uint64_t seed_for(const std::string& label);  // reproducible with --seed

// A graded correctness check: recorded, and reported to doctest when it fails.
bool check(const std::string& key, const std::string& label, bool ok, const std::string& message);
bool check(const std::string& key, const std::string& label, const Comparison& comparison);

// How long a LegacyStreamGate stays shut at most: longer than any graded call takes. 0 (no gate)
// under compute-sanitizer.
double gate_limit_ms();

// A Witness of what the code graded runs (see witness.h), opened now; none under compute-sanitizer,
// which instruments the same calls. Open it before a LegacyStreamGate: opening waits for the device.
std::unique_ptr<Witness> open_witness();

// A check that cannot run here (under compute-sanitizer, say): recorded as skipped, no points.
void skip(const std::string& key, const std::string& label, const std::string& why);

// A graded speed check: the code being graded against the grader's own copy of the reference
// solution of the same exercise, raced on the same inputs (see race() in timing.h), with the
// baselines the chapter teaches beside them. The ratio graded is the reference's time over yours:
// 1 means as fast as the reference on this GPU; thresholds.json gives the ratio that earns full
// points. A timed call that returns a wrong result fails the check. In reference mode the code
// graded is the reference itself, and the ratio must come out at 1 within the data file's
// tolerance: a check that the race is fair. Skipped under compute-sanitizer.
struct SpeedTrial {
    Contender yours, reference;
    std::vector<Contender> baselines;     // timed in the same race, shown beside, not graded
    std::function<void(int call)> vary;   // changes the inputs before each round
    Clock clock = Clock::stream_events;
    TimingOptions timing;
    std::string time_unit = "ms";  // how the report shows a call's time, e.g. "us per kernel"
    double time_scale = 1;         // milliseconds per call -> that unit
    double bytes = 0;              // bytes a call must move, where GB/s means something
    // More figures for the report, from the contenders' median milliseconds (in race order).
    std::function<std::vector<std::pair<std::string, double>>(const std::vector<double>& ms)> more_figures;
};
bool check_speed(const std::string& key, const SpeedTrial& trial);

// Throws when the grader's own reference or baseline computes a wrong result (the grader is
// broken, not the student's code).
void require_reference(bool ok, const std::string& what);

// A timeline of GPU operations for the report (see results.h).
void record_timeline(const Timeline& timeline);

// Registers the chapter a grader belongs to, and the compute capability it needs.
struct Chapter {
    Chapter(const char* name, int min_major, int min_minor, const char* needs);
};

}  // namespace grade

#define GRADE_CHAPTER(name, min_major, min_minor, needs) \
    static ::grade::Chapter grade_chapter_registration_(name, min_major, min_minor, needs)
