// CHECK(call), for the chapters' code: a CUDA call that fails throws std::runtime_error naming the
// call, the file, the line and the error. The grader reports it against the exercise that made
// the call. (Chapter 01 builds the same thing as an exercise.)
#pragma once
#include <cuda_runtime.h>

#include <stdexcept>
#include <string>

#define CHECK(call)                                                                                   \
    do {                                                                                              \
        cudaError_t check_status_ = (call);                                                           \
        if (check_status_ != cudaSuccess)                                                             \
            throw std::runtime_error(std::string(#call) + " failed at " + __FILE__ + ":" +            \
                                     std::to_string(__LINE__) + ": " + cudaGetErrorName(check_status_)); \
    } while (0)
