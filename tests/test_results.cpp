#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "results.h"

using namespace grade;

TEST_CASE("results file round trip") {
    namespace fs = std::filesystem;
    const fs::path dir = fs::temp_directory_path() / "course-results-test";
    fs::remove_all(dir);

    ExerciseResult r;
    r.chapter = "01_x";
    r.exercise = "add";
    r.mode = "grade";
    r.status = "failed";
    CheckRecord c;
    c.key = "speed";
    c.label = "n=4";
    c.status = CheckStatus::failed;
    c.value = 1.5;
    c.threshold = 2.0;
    c.unit = "x";
    c.figures = {{"GB/s", 2500}, {"% of CUB", 65}};
    r.checks.push_back(c);
    r.scores.push_back({"speed", 2, 4});
    r.scores.push_back({"correct", 6, 6});
    r.timelines.push_back({"4 streams", {{0, "copy in", 0.0, 1.5}, {1, "compute", 1.5, 2.25}}});

    const std::string path = write_result(dir.string(), r);
    CHECK(path == (dir / "01_x" / "add.json").string());
    std::ifstream in(path);
    const nlohmann::json j = nlohmann::json::parse(in);
    CHECK(j["status"] == "failed");
    CHECK(j["points"] == 8);
    CHECK(j["max_points"] == 10);
    CHECK(j["checks"][0]["value"] == 1.5);
    CHECK(j["checks"][0]["threshold"] == 2.0);
    CHECK(j["checks"][0]["status"] == "failed");
    CHECK(j["checks"][0]["figures"][1]["name"] == "% of CUB");  // in the order given
    CHECK(j["checks"][0]["figures"][1]["value"] == 65);
    CHECK(j["timelines"][0]["title"] == "4 streams");
    CHECK(j["timelines"][0]["ops"][1]["stream"] == 1);
    CHECK(j["timelines"][0]["ops"][1]["kind"] == "compute");
    CHECK(j["timelines"][0]["ops"][1]["end_ms"] == 2.25);
    CHECK_FALSE(fs::exists(dir / "01_x" / "add.json.tmp"));
    fs::remove_all(dir);
}
