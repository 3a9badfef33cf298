// Device and pinned host buffers that free themselves.
//
// Every device buffer carries a guard zone after its last element, filled with a known pattern:
// guard_intact() tells whether a kernel wrote past the end.
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
    }
    std::vector<T> download() const {
        std::vector<T> host(count_);
        CUDA_CHECK(cudaMemcpy(host.data(), data_, bytes(), cudaMemcpyDeviceToHost));
        return host;
    }
    void poison() { fill_bytes(kPoisonByte); }
    void fill_bytes(unsigned char byte) { CUDA_CHECK(cudaMemset(data_, byte, bytes())); }

    bool guard_intact() const {
        std::vector<unsigned char> guard(kGuardBytes);
        CUDA_CHECK(cudaMemcpy(guard.data(), reinterpret_cast<const char*>(data_) + bytes(), kGuardBytes,
                              cudaMemcpyDeviceToHost));
        for (unsigned char b : guard)
            if (b != kGuardByte) return false;
        return true;
    }

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
