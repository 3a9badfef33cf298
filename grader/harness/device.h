// The GPU the grader runs on: is there one, can this build run on it, and its fingerprint.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace grade {

// Empty when a CUDA GPU is usable; otherwise the reason, in one line (the grader then skips).
std::string why_no_gpu();

// "9.0"
std::string compute_capability(int device = 0);

// Name, compute capability, SMs, memory, L2, clocks, driver and runtime versions.
nlohmann::json device_fingerprint(int device = 0);

// Throws with advice when this build carries no code the GPU can run (a wrong -Dcuda_arch).
void check_build_runs_on_gpu();

}  // namespace grade
