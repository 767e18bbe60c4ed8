// crossbench's own ops registered through the public measuring API (bench/core/api.h).
#include "bench/run/builtin_ops.h"

#include <memory>

#include "bench/cli/cli.h"
#include "bench/core/api.h"
#include "kernels/workload.h"

namespace xb {

void register_builtin_ops() {
  static const bool registered = [] {
    std::vector<std::string> dtypes;
    for (DType d : kAllDTypes) dtypes.emplace_back(to_string(d));
    for (Op op : kAllOps) {
      register_benchmark(to_string(op),
                         [op](const Point& p, cudaStream_t stream) {
                           std::shared_ptr<Workload> w = make_workload(op, parse_dtype(p.dtype), p.size, stream);
                           Instance i;
                           // The workload enqueues on the stream it was made with: the harness's.
                           i.launch = [w](cudaStream_t) { w->enqueue(); };
                           i.verify = [w](cudaStream_t) {
                             const Verification v = w->verify();
                             return Check{v.passed, v.rel_error, v.tolerance, v.detail};
                           };
                           return i;
                         })
          .dtypes(dtypes)
          .max_size(kMaxSquareSize)
          .flops([op](const Point& p) { return op_flops(op, p.size); })
          .bytes([op](const Point& p) { return op_bytes(op, parse_dtype(p.dtype), p.size); })
          .device_bytes([op](const Point& p) {
            return static_cast<double>(workload_device_bytes(op, parse_dtype(p.dtype), p.size));
          });
    }
    return true;
  }();
  (void)registered;
}

}  // namespace xb
