// One pool of threads for every native kernel, sized by mlxir's CPU thread setting
// (MLXIR_CPU_STREAMS, set from Python through `set_threads`).
//
// Built for a shared VM whose cores may be taken away at any moment: work is handed
// out in chunks that whoever is free takes next (a descheduled worker delays only the
// chunk it holds), the calling thread works too, and a worker that has not joined a
// job by the time the caller has taken its last chunk is shut out of it rather than
// waited for. A job's results never depend on the thread count: callers cut work by
// shape, and each chunk computes the same values whichever thread runs it.
#pragma once

#include <cstddef>
#include <functional>

namespace mlxir::native {

void set_threads(int count);
int threads();

// Runs body(i) for every i in [0, chunks), on the pool and the calling thread.
// body must not throw. Re-entrant: a call made while another is running (a second MLX stream, or a body
// that calls parallel_for) runs its chunks on the calling thread alone.
void parallel_for(std::size_t chunks, const std::function<void(std::size_t)>& body);

} // namespace mlxir::native
