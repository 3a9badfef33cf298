"""Wrong submissions of our own: each is a reference solution with a plausible mistake or a casual
cheat written in, graded as a student's file would be, and it must fail the named check. Built and
run by the self-check (suite `wrong`); tests/wrong/make_wrong.py writes the file.

Each entry: the chapter, the exercise graded, the check that must fail, why, and the edits: pairs
of (text in the solution, what replaces it). A text that is no longer in the solution stops the
build, so that the suite never grades an unmutated copy.
"""

SUBMISSIONS = {
    # ---- 01_runtime ---------------------------------------------------------------------------
    "01_vector_add_on_the_default_stream": {
        "chapter": "01_runtime", "exercise": "vector_add", "check": "correct",
        "why": "launches on the legacy default stream instead of the stream it is given",
        "edits": [("vector_add_float4<<<(work + threads - 1) / threads, threads, 0, stream>>>(",
                   "vector_add_float4<<<(work + threads - 1) / threads, threads>>>(")],
    },
    "01_vector_add_waits": {
        "chapter": "01_runtime", "exercise": "vector_add", "check": "correct",
        "why": "waits for its kernel before it returns",
        "edits": [("        vector_add_scalar<<<(n + threads - 1) / threads, threads, 0, stream>>>(a, b, c, n);\n    }\n"
                   "    CHECK(cudaGetLastError());",
                   "        vector_add_scalar<<<(n + threads - 1) / threads, threads, 0, stream>>>(a, b, c, n);\n    }\n"
                   "    CHECK(cudaGetLastError());\n    CHECK(cudaStreamSynchronize(stream));")],
    },
    "01_fault_only_reported": {
        "chapter": "01_runtime", "exercise": "error_handling", "check": "async_fault",
        "why": "writes the expected codes without running the faulting kernel",
        "edits": [("    write_one<<<1, 1>>>(nullptr);\n", ""),
                  ("r.at_sync = cudaDeviceSynchronize();", "r.at_sync = cudaErrorIllegalAddress;"),
                  ("r.afterwards = cudaMalloc(&p, sizeof(int));", "r.afterwards = cudaErrorIllegalAddress; (void)p;")],
    },
    "01_bounds_off_by_one": {
        "chapter": "01_runtime", "exercise": "thread_indexing", "check": "grid_2d",
        "why": "lets the column one past the edge through",
        "edits": [("if (x >= width || y >= height) return;", "if (x > width || y >= height) return;")],
    },
    "01_grid_stride_sized_to_n": {
        "chapter": "01_runtime", "exercise": "thread_indexing", "check": "grid_stride",
        "why": "launches enough blocks to cover n instead of the grid it is given (the loop then runs once)",
        "edits": [("visit_grid_stride_kernel<<<blocks, threads>>>(visits, n);",
                   "visit_grid_stride_kernel<<<(n + threads - 1) / threads, threads>>>(visits, n);")],
    },
    "01_one_dimensional_blocks": {
        "chapter": "01_runtime", "exercise": "thread_indexing", "check": "grid_2d",
        "why": "covers the array with a 2D grid of 1D blocks (256 x 1)",
        "edits": [("const dim3 block(32, 8);", "const dim3 block(256, 1);")],
    },
    "01_timing_made_up": {
        "chapter": "01_runtime", "exercise": "event_timing", "check": "agrees",
        "why": "waits for the work, then returns 2 ms whatever it measured",
        "edits": [("    CHECK(cudaEventDestroy(stop));\n    return ms;", "    CHECK(cudaEventDestroy(stop));\n    return 2.0f + 0 * ms;")],
    },
    # Casual cheats: none may change the grade.
    "01_exits_early": {
        "chapter": "01_runtime", "exercise": "vector_add", "check": "correct",
        "why": "ends the process with exit code 0 at its first call",
        "edits": [("void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream) {\n",
                   "void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream) {\n"
                   "    std::exit(0);\n")],
    },
    "01_forges_its_results": {
        "chapter": "01_runtime", "exercise": "vector_add", "check": "correct",
        "why": "writes a 'passed' results file where the command line says results go, then ends the process",
        "edits": [('#include "01_runtime.h"\n',
                   '#include "01_runtime.h"\n#include <fstream>\n#include <iterator>\n#include <unistd.h>\n'),
                  ("void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream) {\n",
                   "void vector_add(const float* a, const float* b, float* c, size_t n, cudaStream_t stream) {\n"
                   "    std::ifstream cmdline(\"/proc/self/cmdline\");\n"
                   "    const std::string all((std::istreambuf_iterator<char>(cmdline)), std::istreambuf_iterator<char>());\n"
                   "    const size_t at = all.find(\"--results-dir\");\n"
                   "    const std::string dir = all.substr(at + 14, all.find('\\0', at + 14) - at - 14);\n"
                   "    std::ofstream(dir + \"/01_runtime/vector_add.json\") << R\"({\"chapter\": \"01_runtime\", "
                   "\"exercise\": \"vector_add\", \"status\": \"passed\", \"points\": 25, \"max_points\": 25, "
                   "\"checks\": [], \"scores\": [{\"key\": \"correct\", \"points\": 12, \"max_points\": 12}, "
                   "{\"key\": \"speed\", \"points\": 13, \"max_points\": 13}]})\";\n"
                   "    _exit(0);\n")],
    },
    "01_sets_the_sanitizer_mode": {
        "chapter": "01_runtime", "exercise": "vector_add", "check": "speed",
        "why": "runs its kernel three times (too slow) and, before main, sets the environment variable that "
               "once made the grader skip its speed checks",
        "edits": [('#include "01_runtime.h"\n',
                   '#include "01_runtime.h"\n#include <cstdlib>\n'
                   'namespace {\nstruct SanitizerMode {\n    SanitizerMode() { setenv("COURSE_SANITIZER", "memcheck", 1); }\n'
                   '} sanitizer_mode;\n}  // namespace\n'),
                  ("        const size_t work = n / 4 + n % 4;\n",
                   "        const size_t work = n / 4 + n % 4;\n        for (int again = 0; again < 2; ++again)\n"
                   "            vector_add_float4<<<(work + threads - 1) / threads, threads, 0, stream>>>(\n"
                   "                reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), "
                   "reinterpret_cast<float4*>(c), n);\n")],
    },
    "01_lowers_its_threshold": {
        "chapter": "01_runtime", "exercise": "vector_add", "check": "speed",
        "why": "runs its kernel three times (too slow) and lowers its speed threshold in the grader's memory, "
               "through a copy of the harness's declarations",
        "edits": [('#include "01_runtime.h"\n',
                   '#include "01_runtime.h"\n#include <map>\n'
                   'namespace grade {  // copied from grader/harness/spec.h\n'
                   'enum class CheckKind { correctness, speed, sanitizer };\n'
                   'struct CheckSpec { std::string key; CheckKind kind; double points; double threshold; '
                   'std::string unit; double self_timing_tolerance; std::string tool; };\n'
                   'struct ExerciseSpec { std::string chapter, id, title; std::string read; '
                   'std::map<std::string, CheckSpec> checks; };\n'
                   'const ExerciseSpec& current_exercise();\n}  // namespace grade\n'),
                  ("        const size_t work = n / 4 + n % 4;\n",
                   "        const size_t work = n / 4 + n % 4;\n"
                   "        for (auto& [key, check] : const_cast<grade::ExerciseSpec&>(grade::current_exercise()).checks)\n"
                   "            check.threshold = 0.01;\n"
                   "        for (int again = 0; again < 2; ++again)\n"
                   "            vector_add_float4<<<(work + threads - 1) / threads, threads, 0, stream>>>(\n"
                   "                reinterpret_cast<const float4*>(a), reinterpret_cast<const float4*>(b), "
                   "reinterpret_cast<float4*>(c), n);\n")],
    },
    # ---- 02_memory -----------------------------------------------------------------------------
    "02_rows_by_width_not_pitch": {
        "chapter": "02_memory", "exercise": "pitched", "check": "kernel",
        "why": "steps from row to row by the width instead of the pitch",
        "edits": [("reinterpret_cast<char*>(image) + y * pitch);", "reinterpret_cast<char*>(image) + y * (width * sizeof(float)));")],
    },
    "02_round_trip_without_pitch": {
        "chapter": "02_memory", "exercise": "pitched", "check": "round_trip",
        "why": "allocates packed rows with cudaMalloc and copies them with cudaMemcpy",
        "edits": [("    CHECK(cudaMallocPitch(reinterpret_cast<void**>(&image), &pitch, row_bytes, height));\n"
                   "    CHECK(cudaMemcpy2D(image, pitch, host_in, row_bytes, row_bytes, height, cudaMemcpyHostToDevice));",
                   "    CHECK(cudaMalloc(&image, row_bytes * height));\n    pitch = row_bytes;\n"
                   "    CHECK(cudaMemcpy(image, host_in, row_bytes * height, cudaMemcpyHostToDevice));"),
                  ("    CHECK(cudaMemcpy2D(host_out, row_bytes, image, pitch, row_bytes, height, cudaMemcpyDeviceToHost));",
                   "    CHECK(cudaMemcpy(host_out, image, row_bytes * height, cudaMemcpyDeviceToHost));")],
    },
    "02_coefficients_in_global_memory": {
        "chapter": "02_memory", "exercise": "constant_symbols", "check": "technique",
        "why": "keeps the coefficients in a __device__ array instead of __constant__ memory",
        "edits": [("__constant__ float filter_coefficients[kTaps];", "__device__ float filter_coefficients[kTaps];")],
    },
    "02_count_per_output": {
        "chapter": "02_memory", "exercise": "constant_symbols", "check": "correct",
        "why": "counts every output, not those above the threshold",
        "edits": [("        above = sum > threshold;", "        above = true;")],
    },
    "02_tiled_is_naive": {
        "chapter": "02_memory", "exercise": "transpose", "check": "tiled",
        "why": "launches the naive kernel as the tiled version",
        "edits": [("    transpose_tile_kernel<0><<<transpose_grid(rows, cols), dim3(kTile, kTileRows), 0, stream>>>(in, out, rows, cols);",
                   "    transpose_naive_kernel<<<transpose_grid(rows, cols), dim3(kTile, kTileRows), 0, stream>>>(in, out, rows, cols);")],
    },
    "02_padded_is_unpadded": {
        "chapter": "02_memory", "exercise": "transpose", "check": "padded",
        "why": "forgets the padding column",
        "edits": [("    transpose_tile_kernel<1><<<", "    transpose_tile_kernel<0><<<")],
    },
    "02_tile_without_barrier": {
        "chapter": "02_memory", "exercise": "transpose", "check": "tiled",
        "why": "reads the tile before every warp has written its part",
        "edits": [("    __syncthreads();\n    // The block now writes", "    // The block now writes")],
    },
    "02_matmul_tiled_is_naive": {
        "chapter": "02_memory", "exercise": "tiled_matmul", "check": "tiled",
        "why": "launches the naive kernel as the tiled version",
        "edits": [("    matmul_tiled_kernel<<<grid, dim3(kMmTile, kMmRows), 0, stream>>>(a, b, c, m, n, k);",
                   "    matmul_naive(a, b, c, m, n, k, stream);")],
    },
    "02_matmul_without_second_barrier": {
        "chapter": "02_memory", "exercise": "tiled_matmul", "check": "tiled",
        "why": "loads the next tiles while other warps still read the current ones",
        "edits": [("        __syncthreads();  // before the next tiles overwrite these\n", "")],
    },
    "02_heavy_bounds_unchanged": {
        "chapter": "02_memory", "exercise": "register_pressure", "check": "occupancy",
        "why": "leaves the launch bounds at one block per SM",
        "edits": [("__launch_bounds__(kHeavyThreads, 4)", "__launch_bounds__(kHeavyThreads, 1)")],
    },
    "02_pinned_is_pageable": {
        "chapter": "02_memory", "exercise": "pinned_mapped", "check": "pinned",
        "why": "returns pageable memory from malloc",
        "edits": [("    CHECK(cudaHostAlloc(&host, bytes, cudaHostAllocMapped));", "    host = malloc(bytes);"),
                  ("void free_pinned(void* host) { CHECK(cudaFreeHost(host)); }", "void free_pinned(void* host) { free(host); }")],
    },
    "02_mapped_copied_first": {
        "chapter": "02_memory", "exercise": "pinned_mapped", "check": "mapped",
        "why": "copies the mapped memory to the device before adding it up",
        "edits": [("    sum_mapped_kernel<<<sms * 4, 256, 0, stream>>>(device_view, n, total);",
                   "    int* staged = nullptr;\n    CHECK(cudaMallocAsync(&staged, n * sizeof(int), stream));\n"
                   "    CHECK(cudaMemcpyAsync(staged, host, n * sizeof(int), cudaMemcpyHostToDevice, stream));\n"
                   "    sum_mapped_kernel<<<sms * 4, 256, 0, stream>>>(staged, n, total);\n"
                   "    CHECK(cudaFreeAsync(staged, stream));")],
    },
    "02_managed_not_prefetched": {
        "chapter": "02_memory", "exercise": "unified", "check": "unified",
        "why": "lets the kernel fault the pages in",
        "edits": [("    CHECK(cudaMemPrefetchAsync(data, n * sizeof(float), gpu, 0, stream));\n", ""),
                  ("    CHECK(cudaMemPrefetchAsync_v2(data, n * sizeof(float), gpu, 0, stream));  // its name in CUDA 12.2-12.9\n", "")],
    },
    # ---- 03_reduction -------------------------------------------------------------------------
    "03_partial_tile_dropped": {
        "chapter": "03_reduction", "exercise": "unrolled4", "check": "correct",
        "why": "loads a block's four values only when all four exist: the last, partial tile is lost",
        "edits": [("        if (i < n) sum += in[i];", "        if (first + (kUnroll - 1) * blockDim.x < n) sum += in[i];")],
    },
    "03_passes_on_the_default_stream": {
        "chapter": "03_reduction", "exercise": "neighbored_remapped", "check": "correct",
        "why": "launches its kernels on the legacy default stream",
        "edits": [("kKernel<<<blocks, kThreads, kThreads * sizeof(int), stream>>>",
                   "kKernel<<<blocks, kThreads, kThreads * sizeof(int)>>>")],
    },
    "03_sum_cached_by_pointer": {
        "chapter": "03_reduction", "exercise": "shuffle", "check": "speed",
        "why": "returns the sum it computed last time for the same input pointer",
        "edits": [("    static const unsigned gpu_blocks = blocks_filling_the_gpu();",
                   "    static const int* cached_in = nullptr;\n    static int cached_sum = 0;\n"
                   "    if (in == cached_in && n > 1000000) return cached_sum;\n"
                   "    cached_in = in;\n    cached_sum = reduce_complete_unroll(in, n, scratch, stream);\n"
                   "    return cached_sum;\n    static const unsigned gpu_blocks = blocks_filling_the_gpu();")],
    },
    "03_last_warp_without_syncwarp": {
        "chapter": "03_reduction", "exercise": "last_warp", "check": "race_free",
        "why": "the pre-Volta last warp: volatile shared memory and no __syncwarp. Right sums while the warp runs "
               "converged, and a race all the same",
        "edits": [("    int sum = values[tid];\n#pragma unroll\n    for (unsigned stride = 32; stride > 1; stride /= 2) {\n"
                   "        sum += values[tid + stride];\n        __syncwarp();\n        values[tid] = sum;\n"
                   "        __syncwarp();\n    }\n    return sum + values[tid + 1];",
                   "    volatile int* v = values;\n    v[tid] += v[tid + 32];\n    v[tid] += v[tid + 16];\n"
                   "    v[tid] += v[tid + 8];\n    v[tid] += v[tid + 4];\n    v[tid] += v[tid + 2];\n"
                   "    v[tid] += v[tid + 1];\n    return v[tid];")],
    },
    "03_last_warp_is_step_3": {
        "chapter": "03_reduction", "exercise": "last_warp", "check": "correct",
        "why": "runs step 3's kernel for step 4",
        "edits": [("    return reduce_in_passes<last_warp_unrolled>(in, n, scratch, kThreads * kUnroll, stream);",
                   "    return reduce_unrolled4(in, n, scratch, stream);")],
    },
    "03_shuffle_by_cub": {
        "chapter": "03_reduction", "exercise": "shuffle", "check": "correct",
        "why": "lets cub::DeviceReduce::Sum do step 6",
        "edits": [('#include "check.h"\n', '#include "check.h"\n#include <cub/cub.cuh>\n'),
                  ("int reduce_shuffle(const int* in, size_t n, int* scratch, cudaStream_t stream) {\n",
                   "int reduce_shuffle(const int* in, size_t n, int* scratch, cudaStream_t stream) {\n"
                   "    {\n        size_t bytes = 0;\n"
                   "        CHECK(cub::DeviceReduce::Sum(nullptr, bytes, in, scratch, static_cast<int>(n), stream));\n"
                   "        CHECK(cub::DeviceReduce::Sum(scratch + 64, bytes, in, scratch, static_cast<int>(n), stream));\n"
                   "        int sum = 0;\n"
                   "        CHECK(cudaMemcpyAsync(&sum, scratch, sizeof(int), cudaMemcpyDeviceToHost, stream));\n"
                   "        CHECK(cudaStreamSynchronize(stream));\n        return sum;\n    }\n")],
    },
    # ---- 04_streams ---------------------------------------------------------------------------
    "04_one_stream_for_every_chunk": {
        "chapter": "04_streams", "exercise": "overlap_depth_first", "check": "speed",
        "why": "issues every chunk into the same stream: right, but nothing overlaps",
        "edits": [("        stages.copy_in(c.offset, c.count, s[k]);\n        stages.compute(c.offset, c.count, s[k]);\n"
                   "        stages.copy_out(c.offset, c.count, s[k]);",
                   "        stages.copy_in(c.offset, c.count, s[0]);\n        stages.compute(c.offset, c.count, s[0]);\n"
                   "        stages.copy_out(c.offset, c.count, s[0]);")],
    },
    "04_host_waits_for_the_producer": {
        "chapter": "04_streams", "exercise": "event_dependency", "check": "host_free",
        "why": "synchronizes the producer's stream on the host instead of making the consumer wait",
        "edits": [("    CHECK(cudaStreamWaitEvent(consumer, produced, 0));", "    CHECK(cudaStreamSynchronize(producer));")],
    },
    "04_dependency_on_one_stream": {
        "chapter": "04_streams", "exercise": "event_dependency", "check": "data",
        "why": "runs the producer on the consumer's stream: right data, but no dependency between two streams",
        "edits": [("    launch_produce(in, mid, n, producer);", "    launch_produce(in, mid, n, consumer);")],
    },
    "04_breadth_first_issued_depth_first": {
        "chapter": "04_streams", "exercise": "overlap_breadth_first", "check": "correct",
        "why": "issues the breadth-first pipeline in depth-first order",
        "edits": [("    for (int k = 0; k < streams; ++k) stages.copy_in(c[k].offset, c[k].count, s[k]);\n"
                   "    for (int k = 0; k < streams; ++k) stages.compute(c[k].offset, c[k].count, s[k]);\n"
                   "    for (int k = 0; k < streams; ++k) stages.copy_out(c[k].offset, c[k].count, s[k]);\n",
                   "    for (int k = 0; k < streams; ++k) {\n        stages.copy_in(c[k].offset, c[k].count, s[k]);\n"
                   "        stages.compute(c[k].offset, c[k].count, s[k]);\n"
                   "        stages.copy_out(c[k].offset, c[k].count, s[k]);\n    }\n")],
    },
    "04_host_waits_every_round": {
        "chapter": "04_streams", "exercise": "host_callback", "check": "order",
        "why": "waits for the stream after every round",
        "edits": [("        CHECK(cudaLaunchHostFunc(stream, report_sum, &contexts[r]));\n",
                   "        CHECK(cudaLaunchHostFunc(stream, report_sum, &contexts[r]));\n        CHECK(cudaStreamSynchronize(stream));\n")],
    },
    "04_pdl_without_the_attribute": {
        "chapter": "04_streams", "exercise": "pdl", "check": "speed",
        "why": "launches the pairs plainly: right, but no overlap",
        "edits": [("    overlap.val.programmaticStreamSerializationAllowed = 1;",
                   "    overlap.val.programmaticStreamSerializationAllowed = 0;")],
    },
    "04_fault_message_made_up": {
        "chapter": "04_streams", "exercise": "async_error", "check": "caught",
        "why": "writes the message it should have caught without running the faulting kernel",
        "edits": [("    launch_faulty(stream);\n", ""),
                  ("        CHECK(cudaStreamSynchronize(stream));\n    } catch",
                   "        throw std::runtime_error(\"cudaStreamSynchronize(stream) failed at streams.cu:1: "
                   "cudaErrorIllegalAddress\");\n    } catch")],
    },
    "04_polling_by_synchronizing": {
        "chapter": "04_streams", "exercise": "polling", "check": "correct",
        "why": "waits with cudaEventSynchronize, then makes one host step",
        "edits": [("    while ((state = cudaEventQuery(done)) == cudaErrorNotReady) {\n        host_step();\n        ++steps;\n    }\n",
                   "    CHECK(cudaEventSynchronize(done));\n    state = cudaEventQuery(done);\n    host_step();\n    ++steps;\n")],
    },
    "04_threads_on_the_legacy_stream": {
        "chapter": "04_streams", "exercise": "per_thread_stream", "check": "correct",
        "why": "launches every thread's kernel into the legacy default stream, which runs them one after another",
        "edits": [("            launch_long(&counters[t], cudaStreamPerThread);\n            errors[t] = cudaStreamSynchronize(cudaStreamPerThread);",
                   "            launch_long(&counters[t], cudaStreamLegacy);\n            errors[t] = cudaStreamSynchronize(cudaStreamLegacy);")],
    },
    # ---- 05_l2cache ----------------------------------------------------------------------------
    "05_hit_ratio_always_one": {
        "chapter": "05_l2cache", "exercise": "plan", "check": "plan",
        "why": "asks for a hit ratio of 1 whatever the window's size",
        "edits": [("    plan.hit_ratio = plan.window_bytes == 0 ? 0.0f\n", "    plan.hit_ratio = plan.window_bytes == 0 ? 1.0f\n"),
                  (": float(std::min(1.0, double(plan.set_aside_bytes) / double(plan.window_bytes)));", ": 1.0f;")],
    },
    "05_limit_cleared_not_restored": {
        "chapter": "05_l2cache", "exercise": "stream_window", "check": "correct",
        "why": "sets the limit to 0 afterwards instead of the value it found",
        "edits": [("    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit_before));",
                   "    CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0));")],
    },
    "05_persisting_lines_left": {
        "chapter": "05_l2cache", "exercise": "stream_window", "check": "correct",
        "why": "removes the window but leaves the lines it made persisting",
        "edits": [("    CHECK(cudaCtxResetPersistingL2Cache());\n", "")],
    },
    "05_window_on_the_stream": {
        "chapter": "05_l2cache", "exercise": "launch_window", "check": "correct",
        "why": "puts the window on the stream and launches plainly",
        "edits": [("    CHECK(cudaLaunchKernelEx(&config, gather_sum_kernel, table, table_n, values, n4, salt, total));",
                   "    set_stream_window(stream, attribute.val.accessPolicyWindow);\n"
                   "    gather_sum(table, table_n, values, n4, salt, total, stream);")],
    },
    "05_shares_of_the_largest_set_aside": {
        "chapter": "05_l2cache", "exercise": "shared_windows", "check": "shares",
        "why": "shares the largest possible set-aside instead of the one in force",
        "edits": [("    size_t set_aside = 0;\n    CHECK(cudaDeviceGetLimit(&set_aside, cudaLimitPersistingL2CacheSize));\n    int device = 0, window_max = 0;",
                   "    int device = 0, window_max = 0, largest = 0;\n    CHECK(cudaGetDevice(&device));\n"
                   "    CHECK(cudaDeviceGetAttribute(&largest, cudaDevAttrMaxPersistingL2CacheSize, device));\n"
                   "    const size_t set_aside = size_t(largest);")],
    },
    # ---- 06_clusters ---------------------------------------------------------------------------
    "06_grid_not_rounded_to_clusters": {
        "chapter": "06_clusters", "exercise": "cluster_launch", "check": "compile_time",
        "why": "launches one block per record, a grid that is not a whole number of clusters",
        "edits": [("const dim3 grid(round_up(blocks_x, 2), round_up(blocks_y, 2));", "const dim3 grid(blocks_x, blocks_y);")],
    },
    "06_run_time_shape_fixed": {
        "chapter": "06_clusters", "exercise": "cluster_launch", "check": "run_time",
        "why": "launches the kernel fixed at 2 x 2 blocks whatever shape it is asked for",
        "edits": [("CHECK(cudaLaunchKernelEx(&launch.config, record_clusters, records, blocks_x, blocks_y));",
                   "record_compile_time_clusters(records, blocks_x, blocks_y, stream);")],
    },
    "06_occupancy_guessed": {
        "chapter": "06_clusters", "exercise": "cluster_occupancy", "check": "fits",
        "why": "divides the SMs by the cluster size instead of asking the runtime",
        "edits": [("    CHECK(cudaOccupancyMaxActiveClusters(&clusters, histogram_in_clusters, &launch.config));",
                   "    int device = 0, sms = 0;\n    CHECK(cudaGetDevice(&device));\n"
                   "    CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));\n"
                   "    clusters = sms / cluster_size;")],
    },
    "06_histogram_in_global_memory": {
        "chapter": "06_clusters", "exercise": "histogram", "check": "speed",
        "why": "counts with global atomics behind a cluster-shaped launch of the right size",
        "edits": [("        atomicAdd(cluster.map_shared_rank(counters, bin / slice) + bin % slice, 1);",
                   "        atomicAdd(bins + bin, 1);"),
                  ("        if (counters[i] != 0) atomicAdd(&my_bins[i], counters[i]);", "        (void)my_bins;")],
    },
    "06_histogram_fixed_grid": {
        "chapter": "06_clusters", "exercise": "histogram", "check": "correct",
        "why": "launches a fixed number of clusters instead of as many as fit",
        "edits": [("    const int clusters = clusters_that_fit(cluster_size, threads);",
                   "    allow_cluster_shape(cluster_size);\n    const int clusters = 32;")],
    },
    "06_diffusion_step_by_step": {
        "chapter": "06_clusters", "exercise": "halo_exchange", "check": "correct",
        "why": "runs the given step-by-step version: one launch per step through global memory",
        "edits": [("    diffuse_rods<<<rods * kRodBlocks, kDiffusionThreads, 0, stream>>>(in, out, steps, alpha);",
                   "    diffuse_step_by_step(in, out, scratch, rods, steps, alpha, stream);\n    return;")],
    },
    "06_diffusion_one_edge_buffer": {
        "chapter": "06_clusters", "exercise": "halo_exchange", "check": "race_free",
        "why": "publishes every step's edges in the same buffer: a step's writes race the step before's reads",
        "edits": [("        float* now = edges[s % 2];", "        float* now = edges[0];")],
    },
    "06_publish_relaxed": {
        "chapter": "06_clusters", "exercise": "publish", "check": "received",
        "why": "announces and waits with relaxed atomics: no release, no acquire",
        "edits": [("while (flag.load(cuda::memory_order_acquire) < wanted)", "while (flag.load(cuda::memory_order_relaxed) < wanted)"),
                  ("(producer ? sent : read).store(m + 1, cuda::memory_order_release);",
                   "(producer ? sent : read).store(m + 1, cuda::memory_order_relaxed);")],
    },
    "06_publish_without_waiting": {
        "chapter": "06_clusters", "exercise": "publish", "check": "received",
        "why": "the producer writes the next message without waiting for the last one to be read",
        "edits": [("            const unsigned wanted = producer ? m : m + 1;", "            const unsigned wanted = producer ? 0 : m + 1;")],
    },
    # ---- 07_graphs ----------------------------------------------------------------------------
    "07_loop_without_a_graph": {
        "chapter": "07_graphs", "exercise": "capture_loop", "check": "speed",
        "why": "runs the loop with plain launches, synchronizing once per step",
        "edits": [("void run_with_graph(unsigned* data, int n, int steps, cudaStream_t stream) {\n",
                   "void run_with_graph(unsigned* data, int n, int steps, cudaStream_t stream) {\n"
                   "    run_sync_each_step(data, n, steps, stream);\n    return;\n")],
    },
    "07_diamond_captured_not_built": {
        "chapter": "07_graphs", "exercise": "explicit_diamond", "check": "shape",
        "why": "captures the diamond from streams where it must be built node by node",
        "edits": [("cudaGraph_t build_diamond(const DiamondBuffers& b) {\n",
                   "cudaGraph_t build_diamond(const DiamondBuffers& b) {\n    {\n        cudaStream_t s;\n"
                   "        CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));\n"
                   "        cudaGraph_t captured = capture_diamond(b, s);\n        CHECK(cudaStreamDestroy(s));\n"
                   "        return captured;\n    }\n")],
    },
    "07_capture_built_by_hand": {
        "chapter": "07_graphs", "exercise": "cross_stream_capture", "check": "shape",
        "why": "builds the diamond node by node where it must be captured",
        "edits": [("cudaGraph_t capture_diamond(const DiamondBuffers& b, cudaStream_t stream) {\n",
                   "cudaGraph_t capture_diamond(const DiamondBuffers& b, cudaStream_t stream) {\n"
                   "    if (stream != nullptr) return build_diamond(b);\n")],
    },
    "07_window_assumes_the_largest_set_aside": {
        "chapter": "07_graphs", "exercise": "access_policy_window", "check": "window",
        "why": "takes the set-aside to be its maximum instead of reading the limit in force",
        "edits": [("    CHECK(cudaDeviceGetLimit(&set_aside, cudaLimitPersistingL2CacheSize));",
                   "    int largest = 0;\n"
                   "    CHECK(cudaDeviceGetAttribute(&largest, cudaDevAttrMaxPersistingL2CacheSize, device));\n"
                   "    set_aside = static_cast<size_t>(largest);")],
    },
    "07_update_by_instantiating_again": {
        "chapter": "07_graphs", "exercise": "update_exec", "check": "results",
        "why": "replaces the executable graph instead of updating it",
        "edits": [("    CHECK(cudaGraphExecKernelNodeSetParams(g.exec, g.kernels[kernel], &p));\n"
                   "    CHECK(cudaGraphKernelNodeSetParams(g.kernels[kernel], &p));",
                   "    CHECK(cudaGraphKernelNodeSetParams(g.kernels[kernel], &p));\n"
                   "    CHECK(cudaGraphExecDestroy(g.exec));\n    CHECK(cudaGraphInstantiate(&g.exec, g.graph, 0));")],
    },
    "07_one_step_per_round": {
        "chapter": "07_graphs", "exercise": "conditional_while", "check": "speed",
        "why": "decides after every step whether to go round again",
        "edits": [("constexpr int kStepsPerCheck = 8;", "constexpr int kStepsPerCheck = 1;")],
    },
}
