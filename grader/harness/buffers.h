// Device buffers, pinned host buffers, streams, events and graphs that free themselves.
//
// Every device buffer carries a guard zone after its last element, filled with a known pattern:
// guard_intact() tells whether a kernel wrote past the end.
//
// Uploads and fills are finished when they return. cudaMemcpy from pageable memory may return
// before its last bytes reach the device, and cudaMemset before it has run; both go to the legacy
// default stream, which work on a non-blocking stream does not wait for.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "cuda_check.h"

namespace grade {

inline constexpr unsigned char kGuardByte = 0xA5;
inline constexpr size_t kGuardBytes = 4096;
inline constexpr unsigned char kPoisonByte = 0xFF;  // floats read back as NaN, ints as -1

// Page-locked host memory: what asynchronous copies and graph memcpy nodes to the host need.
template <class T>
class PinnedBuffer {
public:
    explicit PinnedBuffer(size_t count) : count_(count) {
        CUDA_CHECK(cudaMallocHost(&data_, std::max<size_t>(count, 1) * sizeof(T)));
    }
    ~PinnedBuffer() { cudaFreeHost(data_); }
    PinnedBuffer(const PinnedBuffer&) = delete;
    PinnedBuffer& operator=(const PinnedBuffer&) = delete;

    T* get() { return data_; }
    const T* get() const { return data_; }
    T& operator[](size_t i) { return data_[i]; }
    size_t size() const { return count_; }
    std::vector<T> to_vector() const { return std::vector<T>(data_, data_ + count_); }
    void fill_bytes(unsigned char byte) { std::fill_n(reinterpret_cast<unsigned char*>(data_), count_ * sizeof(T), byte); }

private:
    T* data_ = nullptr;
    size_t count_;
};

template <class T>
class DeviceBuffer {
public:
    explicit DeviceBuffer(size_t count) : count_(count) {
        CUDA_CHECK(cudaMalloc(&data_, bytes() + kGuardBytes));
        CUDA_CHECK(cudaMemset(reinterpret_cast<char*>(data_) + bytes(), kGuardByte, kGuardBytes));
        finish();
    }
    explicit DeviceBuffer(const std::vector<T>& host) : DeviceBuffer(host.size()) { upload(host); }
    ~DeviceBuffer() { cudaFree(data_); }  // no check: after a sticky error it fails, harmlessly
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;

    T* get() { return data_; }
    const T* get() const { return data_; }
    size_t size() const { return count_; }
    size_t bytes() const { return count_ * sizeof(T); }

    void upload(const std::vector<T>& host) {
        CUDA_CHECK(cudaMemcpy(data_, host.data(), std::min(bytes(), host.size() * sizeof(T)), cudaMemcpyHostToDevice));
        finish();
    }
    // One element, finished when it returns: how a timed race changes its inputs between rounds.
    void set(size_t i, const T& value) {
        CUDA_CHECK(cudaMemcpy(data_ + i, &value, sizeof(T), cudaMemcpyHostToDevice));
        finish();
    }
    std::vector<T> download() const {
        std::vector<T> host(count_);
        CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }
    // A copy through `stream` alone: it does not wait for work elsewhere (the legacy default
    // stream, say), so it shows only what the work the contract put on `stream` has written.
    // `host` is allocated beforehand: freeing page-locked memory synchronizes the whole device.
    std::vector<T> download_on(cudaStream_t stream, PinnedBuffer<T>& host) const {
        CUDA_CHECK(cudaMemcpyAsync(host.get(), data_, bytes(), cudaMemcpyDeviceToHost, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        return std::vector<T>(host.get(), host.get() + count_);
    }
    void poison() { fill_bytes(kPoisonByte); }
    void poison_on(cudaStream_t stream) { CUDA_CHECK(cudaMemsetAsync(data_, kPoisonByte, bytes(), stream)); }
    void fill_bytes(unsigned char byte) {
        CUDA_CHECK(cudaMemset(data_, byte, bytes()));
        finish();
    }

    bool guard_intact() const {
        std::vector<unsigned char> guard(kGuardBytes);
        CUDA_CHECK(cudaMemcpy(guard.data(), reinterpret_cast<const char*>(data_) + bytes(), kGuardBytes,
                              cudaMemcpyDeviceToHost));
        for (unsigned char b : guard)
            if (b != kGuardByte) return false;
        return true;
    }

private:
    static void finish() { CUDA_CHECK(cudaStreamSynchronize(cudaStreamLegacy)); }

    T* data_ = nullptr;
    size_t count_;
};

class Event {
public:
    explicit Event(unsigned flags = cudaEventDefault) { CUDA_CHECK(cudaEventCreateWithFlags(&e_, flags)); }
    ~Event() { cudaEventDestroy(e_); }
    Event(const Event&) = delete;
    Event& operator=(const Event&) = delete;
    operator cudaEvent_t() const { return e_; }

private:
    cudaEvent_t e_ = nullptr;
};

// Milliseconds between two recorded events that have completed.
inline float elapsed_ms(cudaEvent_t start, cudaEvent_t stop) {
    float ms = 0;
    CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
    return ms;
}

// A graph, owned: the graph a student's function returned, destroyed when the check is done.
class Graph {
public:
    explicit Graph(cudaGraph_t graph = nullptr) : g_(graph) {}
    ~Graph() {
        if (g_) cudaGraphDestroy(g_);
    }
    Graph(const Graph&) = delete;
    Graph& operator=(const Graph&) = delete;
    cudaGraph_t get() const { return g_; }

private:
    cudaGraph_t g_ = nullptr;
};

class GraphExec {
public:
    explicit GraphExec(cudaGraph_t graph) { CUDA_CHECK(cudaGraphInstantiate(&exec_, graph, 0)); }
    ~GraphExec() { cudaGraphExecDestroy(exec_); }
    GraphExec(const GraphExec&) = delete;
    GraphExec& operator=(const GraphExec&) = delete;
    operator cudaGraphExec_t() const { return exec_; }

private:
    cudaGraphExec_t exec_ = nullptr;
};

class Stream {
public:
    explicit Stream(unsigned flags = cudaStreamNonBlocking) { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, flags)); }
    ~Stream() { cudaStreamDestroy(s_); }
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;
    operator cudaStream_t() const { return s_; }

private:
    cudaStream_t s_ = nullptr;
};

}  // namespace grade
