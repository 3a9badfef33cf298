// Device buffers, pinned host buffers and streams that free themselves.
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
    std::vector<T> download() const {
        std::vector<T> host(count_);
        CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }
    void poison() { fill_bytes(kPoisonByte); }
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
