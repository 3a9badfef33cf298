// Grader for chapter 07 (CUDA graphs). One TEST_CASE per exercise, named as in thresholds.json.
#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <random>

#include "07_graphs.h"           // ch07: the code graded
#define ch07 COURSE_REFERENCE    // ref: the grader's own copy of the reference solution
#include "07_graphs.h"
#undef ch07
namespace ref = COURSE_REFERENCE;

#include "grading.h"

GRADE_CHAPTER("07_graphs", 7, 0, "any GPU CUDA 12 supports");

using namespace grade;

namespace {

std::vector<uint32_t> random_words(size_t n, const std::string& label) {
    const std::vector<int32_t> v = random_ints(n, seed_for(label), INT32_MIN, INT32_MAX);
    return std::vector<uint32_t>(v.begin(), v.end());
}

// The caller's stream must not be left capturing.
bool stream_not_capturing(cudaStream_t stream) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CUDA_CHECK(cudaStreamIsCapturing(stream, &status));
    return status == cudaStreamCaptureStatusNone;
}

// ---- Reading a graph back through the API ---------------------------------------------------------
std::vector<cudaGraphNode_t> nodes_of(cudaGraph_t graph) {
    size_t count = 0;
    CUDA_CHECK(cudaGraphGetNodes(graph, nullptr, &count));
    std::vector<cudaGraphNode_t> nodes(count);
    if (count > 0) CUDA_CHECK(cudaGraphGetNodes(graph, nodes.data(), &count));
    return nodes;
}

std::vector<cudaGraphNode_t> dependencies_of(cudaGraphNode_t node) {
    size_t count = 0;
#if CUDART_VERSION >= 13000
    CUDA_CHECK(cudaGraphNodeGetDependencies(node, nullptr, nullptr, &count));
    std::vector<cudaGraphNode_t> deps(count);
    if (count > 0) CUDA_CHECK(cudaGraphNodeGetDependencies(node, deps.data(), nullptr, &count));
#else
    CUDA_CHECK(cudaGraphNodeGetDependencies(node, nullptr, &count));
    std::vector<cudaGraphNode_t> deps(count);
    if (count > 0) CUDA_CHECK(cudaGraphNodeGetDependencies(node, deps.data(), &count));
#endif
    return deps;
}

cudaGraphNodeType type_of(cudaGraphNode_t node) {
    cudaGraphNodeType type;
    CUDA_CHECK(cudaGraphNodeGetType(node, &type));
    return type;
}

// A graph's nodes named by what they do, and which node depends on which.
struct GraphView {
    std::vector<cudaGraphNode_t> nodes;
    std::map<cudaGraphNode_t, std::string> names;
    std::map<cudaGraphNode_t, std::vector<cudaGraphNode_t>> dependencies;

    // Kernel nodes are named after their kernel when `kernels` knows it.
    GraphView(cudaGraph_t graph, const std::map<const void*, std::string>& kernels) : nodes(nodes_of(graph)) {
        for (cudaGraphNode_t node : nodes) {
            dependencies[node] = dependencies_of(node);
            names[node] = describe(node, kernels);
        }
    }

    static std::string describe(cudaGraphNode_t node, const std::map<const void*, std::string>& kernels) {
        switch (type_of(node)) {
            case cudaGraphNodeTypeKernel: {
                cudaKernelNodeParams p{};
                CUDA_CHECK(cudaGraphKernelNodeGetParams(node, &p));
                const auto k = kernels.find(p.func);
                return k != kernels.end() ? k->second : "another kernel";
            }
            case cudaGraphNodeTypeMemset: return "memset";
            case cudaGraphNodeTypeMemcpy: return "memcpy";
            case cudaGraphNodeTypeEmpty: return "empty node";
            case cudaGraphNodeTypeHost: return "host node";
            case cudaGraphNodeTypeConditional: return "conditional node";
            case cudaGraphNodeTypeGraph: return "child graph";
            default: return "another kind of node";
        }
    }

    std::vector<cudaGraphNode_t> named(const std::string& name) const {
        std::vector<cudaGraphNode_t> found;
        for (cudaGraphNode_t node : nodes)
            if (names.at(node) == name) found.push_back(node);
        return found;
    }

    bool reaches(cudaGraphNode_t from, cudaGraphNode_t to) const {  // `to` waits for `from`
        std::vector<cudaGraphNode_t> todo{to};
        std::map<cudaGraphNode_t, bool> seen;
        while (!todo.empty()) {
            const cudaGraphNode_t n = todo.back();
            todo.pop_back();
            for (cudaGraphNode_t d : dependencies.at(n)) {
                if (d == from) return true;
                if (!seen[d]) {
                    seen[d] = true;
                    todo.push_back(d);
                }
            }
        }
        return false;
    }

    std::string summary() const {
        std::map<std::string, int> count;
        for (cudaGraphNode_t node : nodes) ++count[names.at(node)];
        std::string s = std::to_string(nodes.size()) + " nodes:";
        for (const auto& [name, c] : count) s += " " + std::to_string(c) + " x " + name + ",";
        s.pop_back();
        return s;
    }
};

// ---- Exercise 1: the short-kernel loop ------------------------------------------------------------
using Loop = void (*)(unsigned* data, int n, int steps, cudaStream_t stream);

// The calls that begin a stream capture.
const std::initializer_list<const char*> kBeginCapture = {"cudaStreamBeginCapture", "cudaStreamBeginCaptureToGraph"};

std::vector<uint32_t> advance_on_cpu(std::vector<uint32_t> x, int steps) {
    for (int s = 0; s < steps; ++s)
        for (int k = 0; k < ch07::kKernelsPerStep; ++k)
            for (uint32_t& v : x) v = 3 * v + k;
    return x;
}

// Runs `loop` under a LegacyStreamGate and reads data through `stream`: a loop that returns before
// its last step has finished, or puts its work elsewhere, shows here.
Comparison run_loop(Loop loop, int n, int steps, Stream& stream, bool& stayed_on_stream) {
    const std::vector<uint32_t> start = random_words(n, "loop n=" + std::to_string(n));
    DeviceBuffer<uint32_t> data(start);
    PinnedBuffer<uint32_t> data_host(n);
    LegacyStreamGate gate(gate_limit_ms());
    loop(data.get(), n, steps, stream);
    const std::vector<uint32_t> got = data.download_on(stream, data_host);
    stayed_on_stream = gate.open();
    Comparison c = compare_exact(advance_on_cpu(start, steps), got);
    if (c.ok() && !data.guard_intact()) c.problem = "wrote past the end of data[0, n)";
    return c;
}

const int kLoopN = 1 << 16;  // a kernel of about a microsecond: launch overhead dominates
const int kLoopSteps = 50;   // 1000 kernels per timed call

void grade_capture_loop() {
    Stream stream;
    std::mt19937_64 rng(seed_for("loop sizes"));
    const int drawn = 2 + static_cast<int>(rng() % 200000);
    bool correct = true;
    for (const auto& [n, steps] : {std::pair{1, 1}, {1000, 3}, {kLoopN + 3, 2}, {drawn, 1}}) {
        const std::string label = "n=" + std::to_string(n) + ", " + std::to_string(steps) + " steps";
        bool stayed_on_stream = true;
        const Comparison c = run_loop(ch07::run_with_graph, n, steps, stream, stayed_on_stream);
        correct &= check("correct", label, c.ok(),
                         c.message() + "\n(each step launches advance_kernel with k = 0, 1, ..., 19 in order; does "
                                       "run_with_graph launch on `stream` and wait for the last step before it returns?)");
        correct &= check("correct", label + ", only its stream", stayed_on_stream,
                         "run_with_graph waited on the legacy default stream (cudaDeviceSynchronize, cudaMemcpy...): "
                         "capture, launch and wait on `stream`");
        correct &= check("correct", label + ", stream usable", stream_not_capturing(stream),
                         "the stream is still capturing when run_with_graph returns: end the capture");
        if (!stayed_on_stream) break;
    }
    if (!correct) return;

    // The race: every call starts from `start`, whose words change before each round, and must
    // end where the reference's graph ends.
    DeviceBuffer<uint32_t> start(random_words(kLoopN, "loop timing")), data(kLoopN), expected(kLoopN);
    auto contender = [&](const std::string& name, Loop loop) {
        Contender c;
        c.name = name;
        c.before = [&](cudaStream_t s, int) {
            CUDA_CHECK(cudaMemcpyAsync(data.get(), start.get(), start.bytes(), cudaMemcpyDeviceToDevice, s));
        };
        c.run = [&, loop](cudaStream_t s, int) { loop(data.get(), kLoopN, kLoopSteps, s); };
        c.verify = [&](int) {
            const unsigned long long wrong = count_differences(data.get(), expected.get(), data.bytes(), stream);
            return wrong == 0 ? std::string() : std::to_string(wrong) + " bytes of data are wrong after the loop";
        };
        return c;
    };
    SpeedTrial trial;
    trial.clock = Clock::device_wide;
    trial.yours = contender("your code", ch07::run_with_graph);
    trial.reference = contender("the reference", ref::run_with_graph);
    trial.baselines = {contender("sync each kernel", ref::run_sync_each_kernel),
                       contender("sync each step", ref::run_sync_each_step)};
    trial.vary = [&](int) {
        for (int k = 0; k < 3; ++k) start.set(rng() % kLoopN, static_cast<uint32_t>(rng()));
        CUDA_CHECK(cudaMemcpyAsync(expected.get(), start.get(), start.bytes(), cudaMemcpyDeviceToDevice, stream));
        ref::run_with_graph(expected.get(), kLoopN, kLoopSteps, stream);
    };
    trial.time_unit = "us per kernel";
    trial.time_scale = 1e3 / (kLoopSteps * ch07::kKernelsPerStep);
    check_speed("speed", trial);

    // Last (CUPTI, once attached, slows launches down a little even when detached again), how it
    // was done, as CUPTI saw it.
    const std::unique_ptr<Witness> witness = open_witness();
    if (!witness) return;
    bool stayed_on_stream = true;
    run_loop(ch07::run_with_graph, 1000, 3, stream, stayed_on_stream);
    witness->finish();
    const bool captured = witness->calls_to(kBeginCapture) > 0;
    const bool launched = witness->calls_to({"cudaGraphLaunch"}) > 0;
    int outside = 0;
    for (const KernelRun& k : witness->kernels()) outside += !k.in_graph;
    check("correct", "technique: captured and launched as a graph", captured && launched && outside == 0,
          std::string(captured ? "" : "no stream capture began; ") + (launched ? "" : "no graph was launched; ") +
              std::to_string(outside) + " kernels ran outside a graph: capture the step's launches (cudaStreamBeginCapture "
              "... cudaStreamEndCapture), instantiate, and launch the graph");
}

// ---- Exercises 2 and 3: the diamond ------------------------------------------------------------------
struct Diamond {
    int n;
    DeviceBuffer<uint32_t> in, mid, left, right, out;
    DeviceBuffer<unsigned long long> checksum;
    PinnedBuffer<uint32_t> out_host;

    explicit Diamond(int n) : n(n), in(n), mid(n), left(n), right(n), out(n), checksum(1), out_host(n) {}

    ch07::DiamondBuffers buffers() {
        return {n, in.get(), mid.get(), left.get(), right.get(), out.get(), checksum.get(), out_host.get()};
    }
};

struct DiamondExpected {
    std::vector<uint32_t> out;
    unsigned long long checksum = 0;
};

DiamondExpected diamond_on_cpu(const std::vector<uint32_t>& in) {
    DiamondExpected e;
    e.out.resize(in.size());
    for (size_t i = 0; i < in.size(); ++i) {
        const uint32_t mid = 2 * in[i] + 1;
        e.out[i] = mid * mid + (mid ^ (mid >> 3));
        e.checksum += e.out[i];
    }
    return e;
}

std::map<const void*, std::string> diamond_kernel_names() {
    const ch07::DiamondKernels k = ch07::diamond_kernels();
    return {{k.prepare, "prepare"}, {k.left_branch, "left_branch"}, {k.right_branch, "right_branch"},
            {k.combine, "combine"}};
}

// The diamond's shape: one node of each kind, every ordering the data needs, the two branches
// free to run side by side, and (explicit_edges) the checksum's clearing free to run alongside
// prepare.
bool check_diamond_shape(cudaGraph_t graph, bool explicit_edges) {
    if (!check("shape", "a graph", graph != nullptr, "no graph was returned")) return false;
    const GraphView view(graph, diamond_kernel_names());
    const std::vector<std::string> parts = {"prepare", "left_branch", "right_branch", "combine", "memset", "memcpy"};
    bool one_each = view.nodes.size() == parts.size();
    for (const std::string& p : parts) one_each &= view.named(p).size() == 1;
    if (!check("shape", "nodes", one_each,
               "the graph has " + view.summary() + "; expected 6: one each of prepare, left_branch, right_branch, "
               "combine (kernel nodes), memset (clears the checksum) and memcpy (out to out_host)"))
        return false;
    std::map<std::string, cudaGraphNode_t> node;
    for (const std::string& p : parts) node[p] = view.named(p)[0];

    bool ok = true;
    const std::pair<const char*, const char*> needed[] = {{"prepare", "left_branch"}, {"prepare", "right_branch"},
                                                          {"left_branch", "combine"}, {"right_branch", "combine"},
                                                          {"memset", "combine"},      {"combine", "memcpy"}};
    for (const auto& [before, after] : needed)
        ok &= check("shape", std::string(before) + " before " + after, view.reaches(node[before], node[after]),
                    std::string(after) + " reads what " + before + " writes, but nothing makes it wait for " + before);
    auto independent = [&](const std::string& a, const std::string& b) {
        return !view.reaches(node[a], node[b]) && !view.reaches(node[b], node[a]);
    };
    ok &= check("shape", "branches in parallel", independent("left_branch", "right_branch"),
                "left_branch and right_branch are ordered one after the other: they only read mid, so nothing "
                "should order them, and the GPU could run them side by side");
    if (explicit_edges)
        ok &= check("shape", "memset in parallel with prepare", independent("memset", "prepare"),
                    "the checksum's memset and prepare are ordered: they touch different data, so the memset "
                    "should depend on nothing, and combine on it");
    return ok;
}

// Launches the diamond twice, on different inputs: the second launch shows whether everything
// the results need (the memset, the copy back) is in the graph, not done once beside it.
void check_diamond_launches(cudaGraph_t graph, Diamond& d, cudaStream_t stream, const std::string& label) {
    GraphExec exec(graph);
    for (int launch = 1; launch <= 2; ++launch) {
        const std::vector<uint32_t> in = random_words(d.n, label + " launch " + std::to_string(launch));
        d.in.upload(in);
        for (DeviceBuffer<uint32_t>* b : {&d.mid, &d.left, &d.right, &d.out}) b->poison();
        d.checksum.poison();
        d.out_host.fill_bytes(kPoisonByte);
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const DiamondExpected expected = diamond_on_cpu(in);
        const std::string hint = launch == 1 ? "" : "\n(right at the first launch, wrong at the second: is a part of the "
                                                    "work done once outside the graph instead of in it?)";
        const std::string at = label + ", launch " + std::to_string(launch);
        const Comparison out = compare_exact(expected.out, d.out_host.to_vector());
        check("results", at + ", out_host", out.ok(), out.message() + hint);
        const unsigned long long checksum = d.checksum.download()[0];
        check("results", at + ", checksum", checksum == expected.checksum,
                    "checksum " + std::to_string(checksum) + ", expected " + std::to_string(expected.checksum) + hint);
    }
}

using MakeDiamond = std::function<cudaGraph_t(const ch07::DiamondBuffers&, cudaStream_t)>;

void grade_diamond(const MakeDiamond& make, bool captured) {
    Stream stream;
    for (const int n : {(1 << 20) + 7, 1000}) {
        const std::string label = "n=" + std::to_string(n);
        Diamond d(n);
        const std::unique_ptr<Witness> witness = open_witness();
        Graph own(make(d.buffers(), stream));
        if (witness) {  // how the graph was made, as CUPTI saw it
            witness->finish();
            const bool captured_it = witness->calls_to(kBeginCapture) > 0;
            int nodes_added = 0;
            for (const std::string& call : witness->api_calls())
                nodes_added += call.rfind("cudaGraphAdd", 0) == 0 && call != "cudaGraphAddDependencies";
            if (captured)
                check("shape", label + ", technique: captured", captured_it && nodes_added == 0,
                      captured_it ? std::to_string(nodes_added) + " nodes were added by hand: the exercise is to capture "
                                                                 "the streams' work, not to build the graph node by node"
                                  : "no stream capture began: capture_diamond records the diamond's launches from "
                                    "streams (cudaStreamBeginCapture)");
            else
                check("shape", label + ", technique: built node by node", !captured_it && nodes_added > 0,
                      captured_it ? "a stream capture began: build_diamond adds the nodes and edges itself "
                                    "(cudaGraphAddKernelNode, ...), without capture"
                                  : "no node was added with cudaGraphAdd*Node");
        }
        if (captured)
            check("results", label + ", stream usable", stream_not_capturing(stream),
                  "the stream is still capturing when capture_diamond returns: end the capture");
        if (n != 1000 && !check_diamond_shape(own.get(), !captured)) {
            // The given one-stream capture computes the right results: they count with the shape only.
            skip("results", "launches", "graded once the graph has the diamond's shape");
            return;
        }
        if (!check("results", label + ", a graph", own.get() != nullptr, "no graph was returned")) return;
        check_diamond_launches(own.get(), d, stream, label);
    }
}

// ---- Exercise 4: updating an executable graph -----------------------------------------------------------
// A step graph (ch07::StepGraph or ref::StepGraph), destroyed by its own code.
template <class G>
struct StepGraphOwner {
    G g;
    void (*destroy)(G&);
    StepGraphOwner(G graph, void (*destroy_graph)(G&)) : g(graph), destroy(destroy_graph) {}
    ~StepGraphOwner() {
        try {
            destroy(g);
        } catch (...) {  // after a sticky error: nothing left to free
        }
    }
    StepGraphOwner(const StepGraphOwner&) = delete;
    StepGraphOwner& operator=(const StepGraphOwner&) = delete;
};

std::vector<uint32_t> step_on_cpu(std::vector<uint32_t> x, const std::vector<uint32_t>& increments) {
    for (uint32_t k : increments)
        for (uint32_t& v : x) v = 3 * v + k;
    return x;
}

std::vector<uint32_t> first_increments() {
    std::vector<uint32_t> increments(ch07::kKernelsPerStep);
    for (int k = 0; k < ch07::kKernelsPerStep; ++k) increments[k] = k;
    return increments;
}

// Launches a step graph on data from `start` and compares with the step the increments make.
Comparison launch_and_compare(cudaGraphExec_t exec, DeviceBuffer<uint32_t>& data, const std::vector<uint32_t>& start,
                              const std::vector<uint32_t>& increments, cudaStream_t stream) {
    data.upload(start);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    return compare_exact(step_on_cpu(start, increments), data.download());
}

void grade_update_exec() {
    Stream stream;
    const int n = kLoopN + 3;
    DeviceBuffer<uint32_t> data(n);
    StepGraphOwner<ch07::StepGraph> owner(ch07::make_step_graph(data.get(), n), ch07::destroy_step_graph);
    ch07::StepGraph& g = owner.g;
    const cudaGraphExec_t original = g.exec;

    std::vector<uint32_t> increments = first_increments();
    // Changes applied one after the other, each checked by a launch.
    const std::vector<std::vector<std::pair<int, uint32_t>>> rounds = {
        {}, {{7, 1000}, {19, 5}}, {{7, 7}, {0, 123456789}}, {{13, 0xFFFFFFFFu}}};
    bool correct = true;
    for (size_t r = 0; r < rounds.size(); ++r) {
        std::string label = "launch " + std::to_string(r + 1);
        for (const auto& [kernel, increment] : rounds[r]) {
            ch07::set_increment(g, kernel, increment);
            increments[kernel] = increment;
            label += ", kernel " + std::to_string(kernel) + " adds " + std::to_string(increment);
        }
        const Comparison c = launch_and_compare(g.exec, data, random_words(n, "update " + label), increments, stream);
        correct &= check("results", label, c.ok(), c.message());
    }
    correct &= check("results", "the same executable graph", g.exec == original,
                     "set_increment replaced g.exec: update the executable graph in place instead of instantiating a "
                     "new one");
    if (!correct) return;

    // The race: a timed call is 20 updates (one is about a microsecond), of kernels and increments
    // drawn before each round; then the graph is launched and must add what was set.
    const int kCalls = 20;
    DeviceBuffer<uint32_t> reference_data(n);
    StepGraphOwner<ref::StepGraph> reference(ref::make_step_graph(reference_data.get(), n), ref::destroy_step_graph);
    std::vector<uint32_t> reference_increments = first_increments();
    const std::vector<uint32_t> start = random_words(n, "update race");
    std::mt19937_64 rng(seed_for("timed updates"));
    std::vector<std::pair<int, uint32_t>> changes(kCalls);
    auto updater = [&](const std::string& name, auto& graph, auto set, std::vector<uint32_t>& incs,
                       DeviceBuffer<uint32_t>& buffer) {
        Contender c;
        c.name = name;
        c.run = [&graph, set, &changes](cudaStream_t, int) {
            for (const auto& [kernel, increment] : changes) set(graph, kernel, increment);
        };
        c.verify = [&, set](int) {
            for (const auto& [kernel, increment] : changes) incs[kernel] = increment;
            return launch_and_compare(graph.exec, buffer, start, incs, stream).message();
        };
        return c;
    };
    Contender instantiate;
    instantiate.name = "instantiating again";
    instantiate.run = [&](cudaStream_t, int) {
        for (int i = 0; i < kCalls; ++i) {
            cudaGraphExec_t fresh;
            CUDA_CHECK(cudaGraphInstantiate(&fresh, reference.g.graph, 0));
            CUDA_CHECK(cudaGraphExecDestroy(fresh));
        }
    };
    SpeedTrial trial;
    trial.clock = Clock::device_wide;
    trial.yours = updater("your code", g, ch07::set_increment, increments, data);
    trial.reference = updater("the reference", reference.g, ref::set_increment, reference_increments, reference_data);
    trial.baselines = {instantiate};
    trial.vary = [&](int) {
        for (auto& [kernel, increment] : changes) {
            kernel = static_cast<int>(rng() % ch07::kKernelsPerStep);
            increment = static_cast<uint32_t>(rng());
        }
    };
    trial.time_unit = "us per update";
    trial.time_scale = 1e3 / kCalls;
    check_speed("speed", trial);
}

// ---- Exercise 5: a conditional while node -----------------------------------------------------------------
// Start values in [1, 2^20]: their paths stay below 2^64 and take up to a few hundred steps.
struct CollatzStart {
    std::vector<unsigned long long> values;
    std::vector<uint32_t> steps;  // expected
    DeviceBuffer<unsigned long long> device;

    CollatzStart(int n, const std::string& label) : values(make(n, label)), steps(steps_on_cpu(values)), device(values) {}

    static std::vector<unsigned long long> make(int n, const std::string& label) {
        const std::vector<int32_t> v = random_ints(n, seed_for(label), 1, 1 << 20);
        return std::vector<unsigned long long>(v.begin(), v.end());
    }
    static std::vector<uint32_t> steps_on_cpu(const std::vector<unsigned long long>& start) {
        std::vector<uint32_t> steps(start.size());
        for (size_t i = 0; i < start.size(); ++i)
            for (unsigned long long x = start[i]; x != 1; x = x % 2 == 0 ? x / 2 : 3 * x + 1) ++steps[i];
        return steps;
    }
    int most_steps() const { return static_cast<int>(*std::max_element(steps.begin(), steps.end())); }
};

// The buffers a Collatz loop works on.
struct Collatz {
    int n;
    DeviceBuffer<unsigned long long> values;
    DeviceBuffer<uint32_t> steps;
    DeviceBuffer<int> any_left;
    PinnedBuffer<int> any_left_host;

    explicit Collatz(int n) : n(n), values(n), steps(n), any_left(1), any_left_host(1) {}

    template <class BuffersOf = ch07::CollatzBuffers>
    BuffersOf buffers() {
        BuffersOf b;
        b.n = n;
        b.values = values.get();
        b.steps = steps.get();
        b.any_left = any_left.get();
        b.any_left_host = any_left_host.get();
        return b;
    }

    // Back to a start: its values, zero steps, garbage in the flag.
    void reset(const CollatzStart& start, cudaStream_t stream) {
        CUDA_CHECK(cudaMemcpyAsync(values.get(), start.device.get(), n * sizeof(unsigned long long),
                                   cudaMemcpyDeviceToDevice, stream));
        CUDA_CHECK(cudaMemsetAsync(steps.get(), 0, n * sizeof(uint32_t), stream));
        CUDA_CHECK(cudaMemsetAsync(any_left.get(), kPoisonByte, sizeof(int), stream));
    }

    std::string wrong(const CollatzStart& start) const {
        const Comparison c = compare_exact(start.steps, steps.download());
        if (!c.ok()) return c.message();
        const std::vector<unsigned long long> v = values.download();
        const bool all_ones = std::all_of(v.begin(), v.end(), [](unsigned long long x) { return x == 1; });
        return all_ones ? "" : "some values are not 1 at the end";
    }
};

const int kCollatzN = (1 << 14) + 5;

void grade_conditional_while() {
    Stream stream;
    std::vector<std::unique_ptr<CollatzStart>> starts;
    for (int k = 0; k < 3; ++k) starts.push_back(std::make_unique<CollatzStart>(kCollatzN, "collatz " + std::to_string(k)));
    Collatz c(kCollatzN);

    Graph own(ch07::build_collatz_graph(c.buffers()));
    if (!check("results", "a graph", own.get() != nullptr, "no graph was returned")) return;
    const GraphView view(own.get(), {});
    bool correct = check("results", "a conditional node", !view.named("conditional node").empty(),
                         "the graph has " + view.summary() + ": the loop belongs in a conditional (while) node, "
                         "so that the GPU decides whether to go round again");
    const size_t outer_kernels = view.nodes.size() - view.named("conditional node").size() - view.named("memset").size() -
                                 view.named("memcpy").size() - view.named("empty node").size();
    correct &= check("results", "the steps inside the node", outer_kernels <= 2,
                     "the graph has " + view.summary() + " outside the conditional node: the steps belong in its "
                     "body, which runs as often as the data needs, not unrolled on the host");
    GraphExec exec(own.get());
    for (int launch = 0; launch < 2; ++launch) {
        c.reset(*starts[launch], stream);
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        const std::string wrong = c.wrong(*starts[launch]);
        correct &= check("results", "launch " + std::to_string(launch + 1), wrong.empty(), wrong);
    }
    if (!correct) return;

    // The race: each round starts every contender from one of the starts.
    Collatz reference_buffers(kCollatzN);
    Graph reference_graph(ref::build_collatz_graph(reference_buffers.buffers<ref::CollatzBuffers>()));
    GraphExec reference_exec(reference_graph.get());
    int current = 0;
    auto contender = [&](const std::string& name, Collatz& buffers, const std::function<void(cudaStream_t)>& run) {
        Contender ct;
        ct.name = name;
        ct.before = [&](cudaStream_t s, int) { buffers.reset(*starts[current], s); };
        ct.run = [run](cudaStream_t s, int) { run(s); };
        ct.verify = [&](int) { return buffers.wrong(*starts[current]); };
        return ct;
    };
    SpeedTrial trial;
    trial.clock = Clock::device_wide;
    trial.yours = contender("your code", c, [&](cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(exec, s)); });
    trial.reference = contender("the reference", reference_buffers,
                                [&](cudaStream_t s) { CUDA_CHECK(cudaGraphLaunch(reference_exec, s)); });
    trial.baselines = {contender("host loop", reference_buffers, [&](cudaStream_t s) {
        ref::collatz_host_loop(reference_buffers.buffers<ref::CollatzBuffers>(), s);
    })};
    trial.vary = [&](int call) { current = call % static_cast<int>(starts.size()); };
    trial.time_unit = "us per Collatz step";
    double mean_steps = 0;  // per round, the whole loop runs as many steps as its start's longest path
    for (const auto& start : starts) mean_steps += double(start->most_steps()) / starts.size();
    trial.time_scale = 1e3 / mean_steps;
    check_speed("speed", trial);
}

// ---- Exercise 6: an access policy window on a kernel node ---------------------------------------------------
// Sets aside the most L2 the device allows for persisting accesses, and gives it back at the end.
struct PersistingL2 {
    size_t bytes = 0;
    explicit PersistingL2(size_t wanted) {
        CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, wanted));
        CUDA_CHECK(cudaDeviceGetLimit(&bytes, cudaLimitPersistingL2CacheSize));
    }
    ~PersistingL2() {  // best effort, unchecked: a destructor must not throw
        (void)cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, 0);
        (void)cudaCtxResetPersistingL2Cache();
    }
};

void grade_access_policy_window() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    cudaDeviceProp props{};
    CUDA_CHECK(cudaGetDeviceProperties(&props, device));
    if (props.accessPolicyMaxWindowSize <= 0 || props.persistingL2CacheMaxSize <= 0) {
        skip("window", "this GPU", std::string(props.name) + " has no persisting L2 (compute capability 8.0 or newer has)");
        return;
    }
    const size_t max_window = props.accessPolicyMaxWindowSize;
    DeviceBuffer<char> hot(2 * max_window);

    Stream stream;
    const int n = 1000;
    DeviceBuffer<uint32_t> data(n);
    StepGraphOwner<ch07::StepGraph> owner(ch07::make_step_graph(data.get(), n), ch07::destroy_step_graph);
    const cudaGraphNode_t node = owner.g.kernels[0];

    // The set-aside at its maximum, then at a size drawn from the seed below 8 MiB: the hit ratio
    // comes from the limit in force, which the code must read.
    std::mt19937_64 rng(seed_for("set-aside"));
    const size_t drawn = std::min<size_t>(props.persistingL2CacheMaxSize / 2, (1 + rng() % 6) << 20);
    for (const size_t limit : {size_t(props.persistingL2CacheMaxSize), drawn}) {
        const PersistingL2 set_aside(limit);
        for (const size_t bytes : {size_t(8) << 20, 2 * max_window}) {
            ch07::add_persisting_window(node, hot.get(), bytes);
            cudaLaunchAttributeValue got{};
            CUDA_CHECK(cudaGraphKernelNodeGetAttribute(node, cudaLaunchAttributeAccessPolicyWindow, &got));
            const cudaAccessPolicyWindow& w = got.accessPolicyWindow;
            const size_t window = std::min(bytes, max_window);
            const double ratio = std::min(1.0, double(set_aside.bytes) / window);
            const std::string label = std::to_string(bytes >> 20) + " MiB, " + std::to_string(set_aside.bytes >> 10) +
                                      " KiB set aside";
            check("window", label + ", base", w.base_ptr == hot.get(), "base_ptr is not the start of the buffer");
            check("window", label + ", size", w.num_bytes == window,
                  "num_bytes is " + std::to_string(w.num_bytes) + ", expected " + std::to_string(window) +
                      " (the buffer, at most accessPolicyMaxWindowSize = " + std::to_string(max_window) + ")");
            check("window", label + ", hit ratio", std::fabs(w.hitRatio - ratio) <= 1e-3,
                  "hitRatio is " + std::to_string(w.hitRatio) + ", expected " + std::to_string(ratio) +
                      " (the persisting set-aside in force, " + std::to_string(set_aside.bytes) +
                      " bytes (cudaDeviceGetLimit), over the window)");
            check("window", label + ", properties",
                  w.hitProp == cudaAccessPropertyPersisting && w.missProp == cudaAccessPropertyStreaming,
                  "hits should persist (cudaAccessPropertyPersisting), misses stream (cudaAccessPropertyStreaming)");
        }
    }
    // The node still runs its kernel as before.
    const std::vector<uint32_t> start = random_words(n, "window data");
    data.upload(start);
    GraphExec exec(owner.g.graph);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    std::vector<uint32_t> increments(ch07::kKernelsPerStep);
    for (int k = 0; k < ch07::kKernelsPerStep; ++k) increments[k] = k;
    const Comparison c = compare_exact(step_on_cpu(start, increments), data.download());
    check("window", "the graph still computes the step", c.ok(), c.message());
}

}  // namespace

TEST_CASE("capture_loop") { grade_capture_loop(); }
TEST_CASE("explicit_diamond") {
    grade_diamond([](const ch07::DiamondBuffers& b, cudaStream_t) { return ch07::build_diamond(b); }, false);
}
TEST_CASE("cross_stream_capture") { grade_diamond(ch07::capture_diamond, true); }
TEST_CASE("update_exec") { grade_update_exec(); }
TEST_CASE("conditional_while") { grade_conditional_while(); }
TEST_CASE("access_policy_window") { grade_access_policy_window(); }
