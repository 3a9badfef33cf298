// Checking CUDA calls: every failure becomes an exception that names the call, the file and the
// line. The graders catch it per exercise, so one failing call costs one exercise.
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

namespace grade {

class CudaError : public std::runtime_error {
public:
    CudaError(cudaError_t code, const std::string& what) : std::runtime_error(what), code_(code) {}
    cudaError_t code() const { return code_; }

private:
    cudaError_t code_;
};

// "cudaMalloc(&p, bytes) failed at grader/x.cpp:42: cudaErrorMemoryAllocation (out of memory)"
std::string cuda_failure_message(cudaError_t code, const char* call, const char* file, int line);

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);

}  // namespace grade

#define CUDA_CHECK(call)                                                        \
    do {                                                                        \
        cudaError_t cuda_check_status_ = (call);                                \
        if (cuda_check_status_ != cudaSuccess)                                  \
            ::grade::throw_cuda_error(cuda_check_status_, #call, __FILE__, __LINE__); \
    } while (0)

