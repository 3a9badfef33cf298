// The grader's main program: options, the GPU checks that decide SKIP, the doctest run, and a
// listener that writes one results file per exercise as it starts and ends.
#define DOCTEST_CONFIG_IMPLEMENT
#include "grading.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <random>
#include <sstream>
#include <thread>

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <unistd.h>

#include "device.h"
#include "results.h"

#ifndef COURSE_THRESHOLDS
#define COURSE_THRESHOLDS "grader/thresholds.json"
#endif

namespace grade {

namespace {

constexpr int kSkipExitCode = 77;  // Meson's SKIP

// grader/run_exercise.py hands this process two pipes by their numbers in the environment: one
// that holds a one-time token, and the write end of the results channel. Both are taken before the
// code graded can run (constructors of priority 101 run before every ordinary static initializer):
// the token is read and its pipe closed, and both numbers leave the environment. Every version of an
// exercise's results goes down the channel as one line of JSON with the token in it; the runner, a
// separate process, writes the results file. So the token is in no file the code graded could
// read, and a results file that code rewrites is not the one that counts. Without a channel (the
// grader run by hand), the results go to files under --results-dir.
std::string& results_token() {
    static std::string token;
    return token;
}

int& results_channel() {
    static int fd = -1;
    return fd;
}

int inherited_fd(const char* variable) {
    const char* value = std::getenv(variable);
    const int fd = value ? std::atoi(value) : -1;
    unsetenv(variable);
    return fd > 2 && fcntl(fd, F_GETFD) != -1 ? fd : -1;
}

__attribute__((constructor(101))) void take_results_channel() {
    if (const int fd = inherited_fd("COURSE_TOKEN_FD"); fd >= 0) {
        char buffer[128];
        ssize_t n;
        while ((n = ::read(fd, buffer, sizeof(buffer))) > 0 || (n < 0 && errno == EINTR))
            if (n > 0) results_token().append(buffer, static_cast<size_t>(n));
        ::close(fd);
    }
    if (const int fd = inherited_fd("COURSE_RESULTS_FD"); fd >= 0) {
        fcntl(fd, F_SETFD, FD_CLOEXEC);  // not inherited by programs the code graded starts
        results_channel() = fd;
    }
}

// One version of an exercise's results: down the channel when there is one, else to its file.
void publish(const ExerciseResult& r) {
    if (results_channel() < 0) {
        write_result(options().results_dir, r);
        return;
    }
    const std::string line = to_json(r).dump() + "\n";
    size_t sent = 0;
    while (sent < line.size()) {
        const ssize_t n = ::write(results_channel(), line.data() + sent, line.size() - sent);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) throw std::runtime_error(std::string("the results channel is closed: ") + std::strerror(errno));
        sent += static_cast<size_t>(n);
    }
}

struct ChapterInfo {
    std::string name;
    int min_major = 0, min_minor = 0;
    std::string needs;
};

ChapterInfo& chapter() {
    static ChapterInfo info;
    return info;
}

Options& mutable_options() {
    static Options o;
    return o;
}

CourseSpec& course() {
    static CourseSpec spec;
    return spec;
}

// Read once at start: later, a sticky CUDA error of an exercise would make it fail.
nlohmann::json& fingerprint() {
    static nlohmann::json device;
    return device;
}

const char* mode_name(Mode m) {
    switch (m) {
        case Mode::grade: return "grade";
        case Mode::reference: return "reference";
        case Mode::skeleton: return "skeleton";
    }
    return "?";
}

std::string format_number(double v) {
    std::ostringstream s;
    s.precision(3);
    s << v;
    return s.str();
}

// The exercise being graded: its result, and a watchdog that ends the process if it hangs.
class CurrentExercise {
public:
    void begin(const std::string& id) {
        std::lock_guard<std::mutex> lock(mutex_);
        spec_ = &course().exercise(chapter().name, id);
        result_ = ExerciseResult{};
        result_.chapter = chapter().name;
        result_.exercise = id;
        result_.title = spec_->title;
        result_.read = spec_->read;
        result_.mode = mode_name(options().mode);
        result_.status = "running";
        result_.message = "the exercise did not finish: the process crashed or was killed";
        result_.device = fingerprint();
        result_.seed = options().seed;
        result_.token = results_token();
        error_.clear();
        started_ = std::chrono::steady_clock::now();
        write_locked();
        start_watchdog();
    }

    void record(CheckRecord record) {
        std::lock_guard<std::mutex> lock(mutex_);
        result_.checks.push_back(std::move(record));
    }

    void add_timeline(Timeline timeline) {
        std::lock_guard<std::mutex> lock(mutex_);
        result_.timelines.push_back(std::move(timeline));
    }

    void exception(const std::string& what, bool crash) {
        std::lock_guard<std::mutex> lock(mutex_);
        error_ = (crash ? "crashed: " : "stopped by an error: ") + what;
        if (crash) {  // the process ends after this: write what we know now
            finish_locked(false);
        }
    }

    // Returns whether the exercise passed.
    bool end(bool doctest_success) {
        stop_watchdog();
        std::lock_guard<std::mutex> lock(mutex_);
        return finish_locked(doctest_success);
    }

    const ExerciseSpec& spec() const { return *spec_; }
    const ExerciseResult& result() const { return result_; }

private:
    bool finish_locked(bool doctest_success) {
        result_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
        result_.scores = score_exercise(*spec_, course().rules(), result_.checks);
        bool checks_ok = true;
        std::string failed;
        for (const CheckRecord& c : result_.checks)
            if (c.status == CheckStatus::failed) {
                checks_ok = false;
                if (failed.find(c.key) == std::string::npos) failed += (failed.empty() ? "" : ", ") + c.key;
            }
        // Every check skipped (a deliberate fault under compute-sanitizer, say): neither passed nor
        // failed, and no proof that the exercise's checks can fail.
        const bool all_skipped = !result_.checks.empty() &&
                                 std::all_of(result_.checks.begin(), result_.checks.end(),
                                             [](const CheckRecord& c) { return c.status == CheckStatus::skipped; });
        const bool passed = doctest_success && checks_ok && error_.empty() && !all_skipped;
        if (!error_.empty()) {
            result_.status = "error";
            result_.message = error_;
        } else if (doctest_success && checks_ok && all_skipped) {
            result_.status = "skipped";
            result_.message = "every check was skipped: " + result_.checks.front().message;
        } else if (!passed) {
            result_.status = "failed";
            result_.message = failed.empty() ? "a check of the grader failed" : "failed: " + failed;
            if (options().mode == Mode::reference)  // its points mean nothing: say what failed
                result_.message = "self-check failed: the reference solution " +
                                  (failed.empty() ? std::string("stopped a check") : "failed " + failed);
        } else {
            result_.status = "passed";
            result_.message.clear();
        }
        write_locked();
        double points = 0, max_points = 0;
        for (const CheckScore& s : result_.scores) {
            points += s.points;
            max_points += s.max_points;
        }
        const bool show_read = !passed && result_.status != "skipped" && !spec_->read.empty();
        const char* verdict = passed ? "PASSED" : result_.status == "error" ? "ERROR"
                              : result_.status == "skipped" ? "SKIPPED"
                              : options().mode == Mode::reference ? "SELF-CHECK FAILED" : "FAILED";
        std::printf("[%s/%s] %s  %s/%s points%s%s\n", result_.chapter.c_str(), result_.exercise.c_str(), verdict,
                    format_number(points).c_str(), format_number(max_points).c_str(), show_read ? "  read: " : "",
                    show_read ? spec_->read.c_str() : "");
        std::fflush(stdout);
        return passed;
    }

    void write_locked() {
        try {
            publish(result_);
        } catch (const std::exception& e) {
            std::fprintf(stderr, "cannot write the results file: %s\n", e.what());
        }
    }

    void start_watchdog() {
        stop_ = false;
        const double limit = options().timeout_seconds * (options().sanitizer.empty() ? 1 : 20);
        watchdog_ = std::thread([this, limit] {
            std::unique_lock<std::mutex> lock(watch_mutex_);
            if (watch_cv_.wait_for(lock, std::chrono::duration<double>(limit), [this] { return stop_; })) return;
            std::lock_guard<std::mutex> result_lock(mutex_);
            result_.status = "timeout";
            result_.message = "still running after " + format_number(limit) +
                              " s and stopped: a kernel that never ends, or a wait for work that never comes?";
            result_.scores = score_exercise(*spec_, course().rules(), {});
            write_locked();
            std::printf("[%s/%s] TIMEOUT  %s\n", result_.chapter.c_str(), result_.exercise.c_str(),
                        result_.message.c_str());
            std::fflush(stdout);
            std::_Exit(1);
        });
    }

    void stop_watchdog() {
        {
            std::lock_guard<std::mutex> lock(watch_mutex_);
            stop_ = true;
        }
        watch_cv_.notify_all();
        if (watchdog_.joinable()) watchdog_.join();
    }

    std::mutex mutex_;
    const ExerciseSpec* spec_ = nullptr;
    ExerciseResult result_;
    std::string error_;
    std::chrono::steady_clock::time_point started_;

    std::mutex watch_mutex_;
    std::condition_variable watch_cv_;
    bool stop_ = false;
    std::thread watchdog_;
};

CurrentExercise& current() {
    static CurrentExercise c;
    return c;
}

struct RunTally {
    int ran = 0, passed = 0, skipped = 0;
    std::vector<std::string> full_marks;  // checks that earned all their points (skeleton mode: none may)
} tally;

// Sees each test case start and end, and writes its results file.
struct ResultsListener : doctest::IReporter {
    explicit ResultsListener(const doctest::ContextOptions&) {}
    void report_query(const doctest::QueryData&) override {}
    void test_run_start() override {}
    void test_run_end(const doctest::TestRunStats&) override {}
    void test_case_start(const doctest::TestCaseData& tc) override {
        ++tally.ran;
        current().begin(tc.m_name);
    }
    void test_case_reenter(const doctest::TestCaseData&) override {}
    void test_case_end(const doctest::CurrentTestCaseStats& stats) override {
        if (current().end(stats.testCaseSuccess)) ++tally.passed;
        const ExerciseResult& r = current().result();
        if (r.status == "skipped") ++tally.skipped;
        for (const CheckScore& score : r.scores)
            if (score.max_points > 0 && score.points >= score.max_points)
                tally.full_marks.push_back(r.exercise + "/" + score.key);
    }
    void test_case_exception(const doctest::TestCaseException& e) override {
        current().exception(e.error_string.c_str(), e.is_crash);
    }
    void subcase_start(const doctest::SubcaseSignature&) override {}
    void subcase_end() override {}
    void log_assert(const doctest::AssertData&) override {}
    void log_message(const doctest::MessageData&) override {}
    void test_case_skipped(const doctest::TestCaseData&) override {}
};
REGISTER_LISTENER("course-results", 1, ResultsListener);

void write_skipped(const std::string& exercise, const std::string& why) {
    const ExerciseSpec& spec = course().exercise(chapter().name, exercise);
    ExerciseResult r;
    r.chapter = chapter().name;
    r.exercise = exercise;
    r.title = spec.title;
    r.read = spec.read;
    r.mode = mode_name(options().mode);
    r.status = "skipped";
    r.message = why;
    r.seed = options().seed;
    r.token = results_token();
    r.device = fingerprint();
    r.scores = score_exercise(spec, course().rules(), {});
    publish(r);
}

}  // namespace

Chapter::Chapter(const char* name, int min_major, int min_minor, const char* needs) {
    chapter() = {name, min_major, min_minor, needs};
}

const Options& options() { return mutable_options(); }
const ScoringRules& rules() { return course().rules(); }
const ExerciseSpec& current_exercise() { return current().spec(); }

uint64_t seed_for(const std::string& label) { return mix_seed(options().seed, label); }

bool check(const std::string& key, const std::string& label, bool ok, const std::string& message) {
    const CheckSpec& spec = current_exercise().check(key);  // a typo in a grader fails loudly
    CheckRecord r;
    r.key = spec.key;
    r.label = label;
    r.status = ok ? CheckStatus::passed : CheckStatus::failed;
    r.message = ok ? "" : message;
    current().record(r);
    if (!ok) FAIL_CHECK(doctest::String((key + " [" + label + "]: " + message).c_str()));
    return ok;
}

bool check(const std::string& key, const std::string& label, const Comparison& comparison) {
    return check(key, label, comparison.ok(), comparison.message());
}

void skip(const std::string& key, const std::string& label, const std::string& why) {
    CheckRecord r;
    r.key = current_exercise().check(key).key;
    r.label = label;
    r.status = CheckStatus::skipped;
    r.message = why;
    current().record(r);
    std::printf("  %s [%s]: skipped: %s\n", key.c_str(), label.c_str(), why.c_str());
}

void record_timeline(const Timeline& timeline) { current().add_timeline(timeline); }

double gate_limit_ms() { return options().sanitizer.empty() ? 1000 : 0; }

std::unique_ptr<Witness> open_witness() {
    return options().sanitizer.empty() ? std::make_unique<Witness>() : nullptr;
}

void require_reference(bool ok, const std::string& what) {
    if (!ok) throw std::runtime_error("the grader's own " + what + ": the grader or the GPU is broken, not your code");
}

namespace {

// The race behind one speed check, and what it shows: a time per contender, GB/s where the
// trial says how many bytes a call moves, the share of the reference, the speedups over the
// baselines.
struct SpeedMeasurement {
    double ratio = 0, noise = 0;
    std::string wrong;  // a timed call of the graded code that returned a wrong result
    std::string detail;
    std::vector<std::pair<std::string, double>> figures;
};

SpeedMeasurement measure_speed(const SpeedTrial& trial) {
    // Yours first and the reference last, the baselines between: as the order reverses each round,
    // the two graded contenders follow mirror-image neighbours, and neither gains from its place.
    std::vector<Contender> order{trial.yours};
    order.insert(order.end(), trial.baselines.begin(), trial.baselines.end());
    order.push_back(trial.reference);
    Stream stream;
    RaceResult r = race(order, trial.vary, stream, trial.clock, trial.timing);
    SpeedMeasurement m;
    if (r.wrong_contender == 0) {
        m.wrong = r.wrong;
        return m;
    }
    require_reference(r.wrong_contender < 0, r.wrong);
    // From here on in the trial's order: yours, the reference, the baselines.
    std::rotate(r.times.begin() + 1, r.times.end() - 1, r.times.end());
    std::vector<Contender> contenders{trial.yours, trial.reference};
    contenders.insert(contenders.end(), trial.baselines.begin(), trial.baselines.end());
    const double yours = r.times[0].median, reference = r.times[1].median;
    m.ratio = reference / yours;
    m.noise = r.times[0].noise + r.times[1].noise;

    // What each contender's time means: GB/s where the bytes a call moves are known, else its time.
    auto shown = [&](size_t i) {
        const double bytes = contenders[i].bytes > 0 ? contenders[i].bytes : trial.bytes;
        const double ms = r.times[i].median;
        return bytes > 0 ? std::make_pair(std::string("GB/s"), bytes / ms / 1e6)
                         : std::make_pair(trial.time_unit, ms * trial.time_scale);
    };
    auto prefixed = [](const std::string& who, const std::string& what) { return who.empty() ? what : who + " " + what; };
    std::ostringstream d;
    for (size_t i = 0; i < contenders.size(); ++i) {
        const auto [unit, value] = shown(i);
        const std::string who = i == 0 ? "" : i == 1 ? "reference" : contenders[i].name;
        m.figures.push_back({prefixed(who, unit), value});
        d << (i == 0 ? "yours " : i == 1 ? ", the reference " : "; " + contenders[i].name + " ") << format_number(value)
          << " " << unit;
    }
    m.figures.push_back({"% of the reference", 100 * m.ratio});
    for (size_t b = 0; b < trial.baselines.size(); ++b) {
        const Contender& baseline = trial.baselines[b];
        const double base = r.times[2 + b].median;
        if (baseline.bytes > 0) {  // other work than yours, at the memory's pace: compare bandwidths
            const double share = shown(0).second / shown(2 + b).second;
            d << "; yours reaches " << format_number(100 * share) << "% of the " << baseline.name << "'s bandwidth";
            m.figures.push_back({"% of " + baseline.name + " bandwidth", 100 * share});
            continue;
        }
        d << "; " << baseline.name << " takes " << format_number(base / yours) << "x your time, "
          << format_number(base / reference) << "x the reference's";
        m.figures.push_back({"speedup over " + baseline.name, base / yours});
        m.figures.push_back({"reference speedup over " + baseline.name, base / reference});
    }
    if (trial.more_figures) {
        std::vector<double> medians;
        for (const Summary& t : r.times) medians.push_back(t.median);
        for (const auto& f : trial.more_figures(medians)) m.figures.push_back(f);
    }
    d << " (" << r.rounds << " rounds)";
    m.detail = d.str();
    return m;
}

}  // namespace

bool check_speed(const std::string& key, const SpeedTrial& trial) {
    const CheckSpec& spec = current_exercise().check(key);
    CheckRecord r;
    r.key = key;
    r.threshold = spec.threshold;
    r.unit = spec.unit;
    if (!options().sanitizer.empty()) {
        r.status = CheckStatus::skipped;
        r.message = "not timed under compute-sanitizer";
        current().record(r);
        return true;
    }
    // The self-check: the reference raced against itself must come out even.
    const bool self_race = options().mode == Mode::reference;
    const double tolerance = spec.self_timing_tolerance;
    auto passes = [&](double v) { return self_race ? std::fabs(v - 1) <= tolerance : v >= spec.threshold; };
    auto close_call = [&](const SpeedMeasurement& m) {
        const double edge = self_race ? (m.ratio < 1 ? 1 - tolerance : 1 + tolerance) : spec.threshold;
        return std::fabs(m.ratio - edge) <= 2 * m.noise * m.ratio;
    };

    SpeedMeasurement m = measure_speed(trial);
    bool remeasured = false;
    if (m.wrong.empty() && !passes(m.ratio) && close_call(m)) {  // too close to call: once more
        m = measure_speed(trial);
        remeasured = true;
    }
    std::ostringstream msg;
    bool ok = false;
    if (!m.wrong.empty()) {
        msg << "a timed call returned a wrong result (" << m.wrong << "). Every timed call is checked, on inputs that "
            "change from one call to the next: the answer must be computed each time";
    } else {
        ok = passes(m.ratio);
        if (self_race)
            msg << "the reference raced against itself: " << format_number(m.ratio) << " (must be 1 within "
                << format_number(tolerance) << ")";
        else
            msg << format_number(m.ratio) << " " << spec.unit << " (full points from " << format_number(spec.threshold)
                << ")";
        msg << "; noise " << format_number(100 * m.noise) << "%" << (remeasured ? ", measured twice" : "") << ": "
            << m.detail;
        r.value = m.ratio;
        r.noise = m.noise;
        r.figures = m.figures;
    }
    r.status = ok ? CheckStatus::passed : CheckStatus::failed;
    r.message = msg.str();
    current().record(r);
    std::printf("  %s: %s %s\n", key.c_str(), ok ? "ok" : self_race ? "UNEVEN" : m.wrong.empty() ? "TOO SLOW" : "WRONG",
                msg.str().c_str());
    if (!ok) FAIL_CHECK(doctest::String((key + ": " + msg.str()).c_str()));
    return ok;
}

}  // namespace grade

int main(int argc, char** argv) {
    using namespace grade;
    // Every kernel's module loaded when the context is made, not at its first launch: a module
    // loaded lazily waits for the kernels already running, which a LegacyStreamGate's kernel is.
    setenv("CUDA_MODULE_LOADING", "EAGER", 1);
    Options& opt = mutable_options();
    opt.seed = std::random_device{}();
    opt.thresholds = COURSE_THRESHOLDS;
    std::string exercise, mode = "grade";

    CLI::App app{"Grades chapter " + chapter().name + " of the CUDA course. Other options go to doctest."};
    app.allow_extras();
    app.add_option("--exercise", exercise, "grade this exercise only");
    app.add_option("--seed", opt.seed, "seed of the random inputs (printed by every run)");
    app.add_option("--results-dir", opt.results_dir, "where results files go")->capture_default_str();
    app.add_option("--thresholds", opt.thresholds, "the grading data file")->capture_default_str();
    app.add_option("--mode", mode, "grade: the student's code; reference: a solution (must clear thresholds by "
                                   "the margin); skeleton: an untouched skeleton (every exercise must fail)")
        ->check(CLI::IsMember({"grade", "reference", "skeleton"}))
        ->capture_default_str();
    app.add_option("--timeout", opt.timeout_seconds, "seconds before a running exercise is stopped")
        ->capture_default_str();
    app.add_option("--sanitizer", opt.sanitizer, "the compute-sanitizer tool this runs under (grader/run_exercise.py "
                                                 "passes it): timed checks and the largest sizes are skipped")
        ->check(CLI::IsMember({"memcheck", "racecheck", "synccheck", "initcheck"}));
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    opt.mode = mode == "reference" ? Mode::reference : mode == "skeleton" ? Mode::skeleton : Mode::grade;
    if (!opt.sanitizer.empty()) opt.results_dir += "-" + opt.sanitizer;  // keep the timed results apart

    std::vector<std::string> rest = app.remaining();
    std::vector<const char*> doctest_args{argv[0]};
    for (const std::string& a : rest) doctest_args.push_back(a.c_str());
    const bool listing = std::any_of(rest.begin(), rest.end(), [](const std::string& a) {
        return a.rfind("--list", 0) == 0 || a.rfind("-ltc", 0) == 0 || a == "--help" || a == "-h";
    });

    try {
        std::printf("chapter %s, mode %s, seed %llu (rerun with --seed %llu)\n", chapter().name.c_str(), mode.c_str(),
                    static_cast<unsigned long long>(opt.seed), static_cast<unsigned long long>(opt.seed));
        const std::string no_gpu = listing ? "" : why_no_gpu();
        std::string skip = no_gpu;
        if (skip.empty() && !listing) {
            int major = 0, minor = 0;
            CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
            CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
            if (major * 10 + minor < chapter().min_major * 10 + chapter().min_minor)
                skip = "chapter " + chapter().name + " needs compute capability " + std::to_string(chapter().min_major) +
                       "." + std::to_string(chapter().min_minor) + " (" + chapter().needs + "); this GPU has " +
                       std::to_string(major) + "." + std::to_string(minor);
        }
        course() = CourseSpec::load(opt.thresholds, no_gpu.empty() && !listing ? compute_capability() : "");
        if (!skip.empty()) {
            std::printf("SKIP: %s\n", skip.c_str());
            if (!exercise.empty()) write_skipped(exercise, skip);
            return kSkipExitCode;
        }
        if (!listing) {
            check_build_runs_on_gpu();
            fingerprint() = device_fingerprint();
            std::printf("GPU: %s\n", fingerprint().dump().c_str());
        }
    } catch (const std::exception& e) {
        std::printf("ERROR: %s\n", e.what());
        return 1;
    }

    doctest::Context context;
    context.applyCommandLine(static_cast<int>(doctest_args.size()), doctest_args.data());
    if (!exercise.empty()) context.addFilter("test-case", exercise.c_str());
    context.setOption("no-version", true);
    const int failures = context.run();
    if (context.shouldExit() || listing) return failures;

    if (tally.ran == 0) {
        std::printf("ERROR: no exercise named '%s' in this grader\n", exercise.c_str());
        return 1;
    }
    if (opt.mode == Mode::skeleton) {
        // The self-check's other half: on an untouched skeleton every graded check must fail.
        if (tally.skipped == tally.ran) {
            std::printf("SKIP: every check was skipped, so this run proves nothing about the skeleton\n");
            return kSkipExitCode;
        }
        if (tally.passed == 0 && tally.full_marks.empty()) {
            std::printf("self-check: the untouched skeleton failed every check it ran, as it should\n");
            return 0;
        }
        std::string toothless;
        for (const std::string& key : tally.full_marks) toothless += " " + key;
        std::printf("self-check FAILED: on the untouched skeleton %d exercise(s) passed and these checks earned "
                    "their points:%s. A check that cannot fail needs teeth\n",
                    tally.passed, toothless.c_str());
        return 1;
    }
    return failures == 0 ? 0 : 1;
}
