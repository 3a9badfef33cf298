// Reference baselines from the CUDA toolkit's own libraries: what "as fast as the hardware allows"
// means for a chapter, measured in the same run as the student's code.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

namespace grade {

// cub::DeviceReduce::Sum over ints, shaped like the reduction chapter's functions: it enqueues
// the sum on `stream`, copies the total to the host and returns it.
class CubSum {
public:
    explicit CubSum(size_t max_n);  // temporary storage for sums of up to max_n ints
    ~CubSum();
    CubSum(const CubSum&) = delete;
    CubSum& operator=(const CubSum&) = delete;

    int operator()(const int* in, size_t n, cudaStream_t stream);

private:
    void* temp_ = nullptr;
    size_t temp_bytes_ = 0;
    int* total_ = nullptr;
};

// cuBLAS's SGEMM, shaped like the memory chapter's matrix multiply: c (m x n) = a (m x k) times
// b (k x n), row-major floats, enqueued on `stream`. Plain FP32 (no TF32 tensor cores).
class CublasSgemm {
public:
    CublasSgemm();
    ~CublasSgemm();
    CublasSgemm(const CublasSgemm&) = delete;
    CublasSgemm& operator=(const CublasSgemm&) = delete;

    void operator()(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream);

private:
    void* handle_ = nullptr;  // a cublasHandle_t, kept out of this header
};

}  // namespace grade
