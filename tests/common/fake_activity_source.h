// A fake ActivitySource for CPU tests (the kineto test seam): a manual clock, and API + kernel
// record pairs injected at chosen times on the calling thread, tagged (as CUPTI would) with the
// innermost external id pushed at launch: the NVTX ranges' and push_external_id's, not the
// profiler's own ranges, which the profiler ties to API records by time.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include <sys/syscall.h>
#include <unistd.h>

#include "profiler/model/profiler.h"

namespace xb::test {

/// Fake source with a manual clock; records API + kernel pairs at chosen times.
class FakeSource : public ActivitySource {
 public:
  std::int64_t clock = 1000;
  std::vector<RawRecord> pending;
  std::vector<std::uint64_t> stack;     // every open range, innermost last
  std::vector<std::uint64_t> external;  // the external ids pushed, innermost last
  std::uint32_t next_corr = 1;
  std::uint32_t thread_id = static_cast<std::uint32_t>(::syscall(SYS_gettid));

  void start() override {}
  std::vector<RawRecord> stop() override { return std::move(pending); }
  std::uint64_t dropped_records() const override { return 0; }
  std::int64_t now_ns() const override { return clock; }
  void push_external_id(std::uint64_t id) override {
    stack.push_back(id);
    external.push_back(id);
  }
  void pop_external_id() override {
    stack.pop_back();
    external.pop_back();
  }
  void enter_range(std::uint64_t id) override { stack.push_back(id); }
  void exit_range() override { stack.pop_back(); }
  void describe(SessionMeta& meta) const override { meta.cupti_version = 42; }

  // NVTX ranges as the CUPTI source records them: ids from kSourceRangeIdBase, pushed as
  // external ids, parent = the innermost open range of either kind.
  std::vector<HostRange> nvtx;
  std::vector<std::size_t> nvtx_open;
  std::vector<HostRange> take_ranges() override { return std::move(nvtx); }
  std::uint64_t innermost_range() const override { return stack.empty() ? 0 : stack.back(); }
  void nvtx_push(const std::string& name) {
    HostRange r;
    r.id = kSourceRangeIdBase + nvtx.size();
    r.parent_id = innermost_range();
    r.name = name;
    r.start_ns = clock;
    nvtx.push_back(r);
    nvtx_open.push_back(nvtx.size() - 1);
    stack.push_back(r.id);
    external.push_back(r.id);
    clock += 5;
  }
  void nvtx_pop() {
    nvtx[nvtx_open.back()].end_ns = clock;
    nvtx_open.pop_back();
    stack.pop_back();
    external.pop_back();
    clock += 5;
  }

  /// A new correlation id, with the ExternalCorrelation record CUPTI emits for it when an
  /// external id is pushed (the innermost one).
  std::uint32_t next_correlation() {
    const std::uint32_t corr = next_corr++;
    if (!external.empty()) {
      RawRecord ext;
      ext.kind = RawKind::ExternalCorrelation;
      ext.correlation_id = corr;
      ext.external_kind = kProfilerExternalKind;
      ext.external_id = external.back();
      pending.push_back(ext);
    }
    return corr;
  }

  /// A runtime API call `name` on this thread at the current time (10 ns long), under a new
  /// correlation id (returned).
  std::uint32_t api_call(const std::string& name) {
    const std::uint32_t corr = next_correlation();
    RawRecord api;
    api.kind = RawKind::Runtime;
    api.name = name;
    api.thread_id = thread_id;
    api.start_ns = clock;
    api.end_ns = clock + 10;
    api.correlation_id = corr;
    pending.push_back(api);
    return corr;
  }

  /// A launch call at the current time (10 ns long) and its kernel 100 ns later.
  void launch(const std::string& kernel) {
    const std::uint32_t corr = api_call("cudaLaunchKernel");
    RawRecord k;
    k.kind = RawKind::Kernel;
    k.name = kernel;
    k.start_ns = clock + 100;
    k.end_ns = clock + 150;
    k.correlation_id = corr;
    pending.push_back(k);
    clock += 20;
  }

  /// A cudaGraphLaunch at the current time (10 ns long) and the graph's `nodes` kernels under its
  /// one correlation id, back to back from 100 ns later (50 ns each, 10 ns apart), with CUPTI's
  /// graph node ids 1..nodes and `graph_id`, as CUPTI reports a graph replay.
  void graph_launch(const std::string& kernel, int nodes, std::uint32_t graph_id = 1) {
    const std::uint32_t corr = api_call("cudaGraphLaunch");
    for (int i = 0; i < nodes; ++i) {
      RawRecord k;
      k.kind = RawKind::Kernel;
      k.name = kernel;
      k.start_ns = clock + 100 + 60 * i;
      k.end_ns = k.start_ns + 50;
      k.correlation_id = corr;
      k.graph_node_id = static_cast<std::uint64_t>(i) + 1;
      k.graph_id = graph_id;
      pending.push_back(k);
    }
    clock += 20 + 60 * nodes;
  }
};

}  // namespace xb::test
