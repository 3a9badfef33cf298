#include "cuda_check.h"

namespace grade {

std::string cuda_failure_message(cudaError_t code, const char* call, const char* file, int line) {
    return std::string(call) + " failed at " + file + ":" + std::to_string(line) + ": " + cudaGetErrorName(code) +
           " (" + cudaGetErrorString(code) + ")";
}

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
    throw CudaError(code, cuda_failure_message(code, call, file, line));
}

}  // namespace grade
