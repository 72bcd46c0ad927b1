// The CPU launchers' threads: OpenVINO's thread pool inside the extension (std::thread workers in the ctypes
// library), contiguous chunks, per-thread scratch.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace rb {
namespace cpu {

#if defined(RB_OPENVINO_THREADS)
// Inside the OpenVINO extension (ops.cpp includes openvino/core/parallel.hpp first): the plugin's own TBB pool,
// no threads started per call.
inline int pool_threads() { return parallel_get_max_threads(); }
template <class F>
void run_chunks(int64_t chunks, F&& run) {
    ov::parallel_for(chunks, [&](int64_t c) { run(c); });
}
#else
inline int pool_threads() {
    const int hw = static_cast<int>(std::thread::hardware_concurrency());
    return hw > 0 ? hw : 1;
}
template <class F>
void run_chunks(int64_t chunks, F&& run) {
    std::vector<std::thread> pool;
    pool.reserve(static_cast<size_t>(chunks - 1));
    for (int64_t c = 1; c < chunks; ++c) pool.emplace_back(run, c);
    run(0);
    for (auto& t : pool) t.join();
}
#endif

inline int thread_count(int requested) {
    const int hw = pool_threads();
    return requested > 0 ? std::min(requested, hw) : hw;
}

// f(begin, end) over [0, n) in contiguous chunks of at least ``grain`` items; the first exception wins.
// Up to 4 chunks per worker, taken from a shared counter: the pool splits statically, so on a shared machine a
// worker that is scheduled late would otherwise hold back its whole share; here the others take its chunks.
// Chunk boundaries depend only on n, grain and the thread count, never on which worker runs what.
template <class F>
void parallel_for(int64_t n, int threads, int64_t grain, F&& f) {
    if (n <= 0) return;
    const int64_t workers = std::max<int64_t>(1, std::min<int64_t>(thread_count(threads), (n + grain - 1) / grain));
    if (workers == 1) {
        f(int64_t(0), n);
        return;
    }
    const int64_t chunks = std::min<int64_t>(4 * workers, std::max<int64_t>(workers, n / std::max<int64_t>(1, grain)));
    std::atomic<int64_t> next{0};
    std::exception_ptr err;
    std::mutex mu;
    auto run = [&](int64_t) {
        for (int64_t c = next++; c < chunks; c = next++) {
            const int64_t b = n * c / chunks, e = n * (c + 1) / chunks;
            try {
                f(b, e);
            } catch (...) {
                std::lock_guard<std::mutex> lock(mu);
                if (!err) err = std::current_exception();
            }
        }
    };
    run_chunks(workers, run);
    if (err) std::rethrow_exception(err);
}

inline int64_t product(const std::vector<int64_t>& v, size_t b, size_t e) {
    int64_t p = 1;
    for (size_t i = b; i < e; ++i) p *= v[i];
    return p;
}

// Scratch reused across calls by each worker thread (no allocation in the hot path once warm); ``Tag``: another
// buffer of the same type, for a pass that holds one while calling another that takes its own.
template <class Acc = double, int Tag = 0>
inline Acc* scratch(size_t n) {
    thread_local std::vector<Acc> buf;
    if (buf.size() < n) buf.resize(n);
    return buf.data();
}

}  // namespace cpu
}  // namespace rb
