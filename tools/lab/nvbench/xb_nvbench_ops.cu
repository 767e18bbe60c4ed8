// crossbench's built-in ops (kernels/workload.h) timed by NVIDIA nvbench, for the side-by-side
// with `bench` (issue 40, docs/vs-nvbench.md; run by tools/lab/h200_vs_nvbench.sh).
//
// One nvbench benchmark, `xb_ops`, with the axes Op (add, matmul, addmm, addmm_bias1d), DType
// (bf16) and N (64, 4096; every axis can be set from nvbench's command line, `-a N=[64,256]`).
// Each state builds the workload on the state's own stream (nvbench::state::get_cuda_stream, the
// stream every nvbench::launch of the state carries), checks one call's result against the host
// fp64 reference (Workload::verify; a failed check skips the state and says why) and hands nvbench
// one call per launch (Workload::enqueue). nvbench then runs its cold measurement (L2 flushed
// before each sample, one call per sample behind its blocking kernel, its SM clock read per
// sample) and its batch measurement (calls back to back, two of them queued behind the blocking
// kernel); `--json FILE` writes what tools/lab/nvbench/side_by_side.py reads. Every nvbench option
// works (`--help`).
//
// This is nvbench's own harness on purpose: the comparison is of the two harnesses on the same
// kernels, so the kernels are crossbench's and the timing is entirely nvbench's.
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

#include <nvbench/nvbench.cuh>

#include "kernels/workload.h"

namespace {

/// One state of `xb_ops`: the workload on the state's stream, verified once, then timed by
/// nvbench. Element count n^2 (the output's elements); global memory reads and writes from
/// xb::op_bytes (each input read once, the output written once), so nvbench's bandwidth column
/// uses crossbench's byte model.
void xb_ops(nvbench::state& state) {
  const xb::Op op = xb::parse_op(state.get_string("Op"));
  const xb::DType dtype = xb::parse_dtype(state.get_string("DType"));
  const std::int64_t n = state.get_int64("N");
  const cudaStream_t stream = state.get_cuda_stream().get_stream();
  const std::unique_ptr<xb::Workload> workload = xb::make_workload(op, dtype, n, stream);

  const xb::Verification check = workload->verify();
  if (!check.passed) {
    state.skip("result differs from the host fp64 reference: rel_error " + std::to_string(check.rel_error) +
               " > tolerance " + std::to_string(check.tolerance) + " (" + check.detail + ")");
    return;
  }
  const auto out_bytes = static_cast<std::size_t>(n * n) * xb::dtype_bytes(dtype);
  const auto all_bytes = static_cast<std::size_t>(xb::op_bytes(op, dtype, n));
  state.add_element_count(static_cast<std::size_t>(n * n), "Elements");
  state.add_global_memory_reads(all_bytes - out_bytes, "ReadBytes");
  state.add_global_memory_writes(out_bytes, "WriteBytes");

  state.exec(nvbench::exec_tag::gpu, [&workload, stream](nvbench::launch& launch) {
    // The workload enqueues on the stream it was built with; nvbench times launch's stream.
    if (launch.get_stream().get_stream() != stream) {
      throw std::logic_error("xb_ops: nvbench's launch stream is not the state's stream the workload uses");
    }
    workload->enqueue();
  });
}

}  // namespace

NVBENCH_BENCH(xb_ops)
    .add_string_axis("Op", {"add", "matmul", "addmm", "addmm_bias1d"})
    .add_string_axis("DType", {"bf16"})
    .add_int64_axis("N", {64, 4096});
