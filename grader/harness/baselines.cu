#include "baselines.h"

#include <cublas_v2.h>
#include <cub/device/device_reduce.cuh>

#include <stdexcept>
#include <string>

#include "cuda_check.h"

namespace grade {

CubSum::CubSum(size_t max_n) {
    CUDA_CHECK(cudaMalloc(&total_, sizeof(int)));
    // A first call with no storage only reports how much storage the sum needs.
    CUDA_CHECK(cub::DeviceReduce::Sum(nullptr, temp_bytes_, static_cast<const int*>(nullptr), total_, max_n));
    CUDA_CHECK(cudaMalloc(&temp_, temp_bytes_));
}

CubSum::~CubSum() {
    cudaFree(temp_);
    cudaFree(total_);
}

int CubSum::operator()(const int* in, size_t n, cudaStream_t stream) {
    size_t bytes = temp_bytes_;
    CUDA_CHECK(cub::DeviceReduce::Sum(temp_, bytes, in, total_, n, stream));
    int total = 0;
    CUDA_CHECK(cudaMemcpyAsync(&total, total_, sizeof(int), cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return total;
}

namespace {

void cublas_check(cublasStatus_t status, const char* call, int line) {
    if (status != CUBLAS_STATUS_SUCCESS)
        throw std::runtime_error(std::string(call) + " failed at " + __FILE__ + ":" + std::to_string(line) + ": " +
                                 cublasGetStatusName(status));
}
#define CUBLAS_CHECK(call) cublas_check((call), #call, __LINE__)

}  // namespace

CublasSgemm::CublasSgemm() {
    cublasHandle_t handle = nullptr;
    CUBLAS_CHECK(cublasCreate(&handle));
    handle_ = handle;
    CUBLAS_CHECK(cublasSetMathMode(handle, CUBLAS_PEDANTIC_MATH));  // FP32 throughout, as the exercise
}

CublasSgemm::~CublasSgemm() { cublasDestroy(static_cast<cublasHandle_t>(handle_)); }

void CublasSgemm::operator()(const float* a, const float* b, float* c, int m, int n, int k, cudaStream_t stream) {
    cublasHandle_t handle = static_cast<cublasHandle_t>(handle_);
    CUBLAS_CHECK(cublasSetStream(handle, stream));
    const float one = 1, zero = 0;
    // cuBLAS is column-major: a row-major c = a b is the column-major c^T = b^T a^T.
    CUBLAS_CHECK(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, n, a, k, &zero, c, n));
}

}  // namespace grade
