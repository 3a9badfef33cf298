// What the GPU ran, and which runtime calls were made, while a student's function ran: the honest
// witness of how a result was computed, not only of what came out. Recorded by CUPTI's activity
// API (it ships with the CUDA toolkit), only while a Witness is open, so that timed code runs
// without it.
#pragma once
#include <cuda_runtime.h>

#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

namespace grade {

// A kernel as CUPTI saw it run.
struct KernelRun {
    std::string name;  // demangled, e.g. "void ch03::unrolled4(int const*, int*, unsigned int)"
    unsigned grid[3] = {}, block[3] = {}, cluster[3] = {};
    int static_shared_bytes = 0, dynamic_shared_bytes = 0;  // shared memory per block
    uint32_t stream_id = 0;             // see Witness::stream_id
    uint64_t start_ns = 0, end_ns = 0;  // on the GPU's clock
    bool in_graph = false;              // ran as a node of a graph

    std::string shape() const;  // "grid 4x1x1, block 256x1x1"
    std::string short_name() const;  // the name without its return type and parameters
};

// A copy as CUPTI saw it.
struct CopyRun {
    std::string kind;  // "host to device", "device to host", "device to device", ...
    bool pageable = false;  // a host side in pageable memory
    uint64_t bytes = 0;
    uint32_t stream_id = 0;
    uint64_t start_ns = 0, end_ns = 0;
};

// Records from construction to finish(). One at a time; not under compute-sanitizer, which
// instruments the same calls.
class Witness {
public:
    Witness();
    ~Witness();
    Witness(const Witness&) = delete;
    Witness& operator=(const Witness&) = delete;

    // Stops recording runtime API calls (kernels and copies go on being recorded): the grader's
    // own calls that follow are not the student's.
    void stop_calls();

    // Waits for the device, stops recording and collects what was recorded.
    void finish();

    // The kernels that ran, in the order they started, the harness's own left out.
    const std::vector<KernelRun>& kernels() const { return kernels_; }
    const std::vector<CopyRun>& copies() const { return copies_; }  // for chapter 02 (pinned or pageable)
    // Runtime API functions called, in order, without their version suffix ("cudaGraphLaunch").
    const std::vector<std::string>& api_calls() const { return api_calls_; }
    // How many calls were made to any of `functions`.
    int calls_to(std::initializer_list<const char*> functions) const;

    // CUPTI's id for a stream, as KernelRun::stream_id and CopyRun::stream_id give it.
    static uint32_t stream_id(cudaStream_t stream);

private:
    bool open_ = false;
    bool recording_calls_ = false;
    std::vector<KernelRun> kernels_;
    std::vector<CopyRun> copies_;
    std::vector<std::string> api_calls_;
};

}  // namespace grade
