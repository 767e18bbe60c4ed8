// The add kernel's tuning space (add_tuning.h): this file instantiates every template of
// kernels/add_kernels.cuh for every configuration (AddInstances::TuningSpace). The proof that
// moving it here from kernels/add.cu changed no kernel: tools/lab/README.md, "add_tuning".
#include "tools/lab/add_tuning/add_tuning.h"

#include "kernels/add_kernels.cuh"
#include "kernels/launch_grid.h"

namespace xb {

std::vector<AddLaunchConfig> add_tuning_space() {
  const int max_blocks = device_max_grid_x("add_tuning_space");
  std::vector<AddLaunchConfig> space;
  for (int v : kVectorChoices) {
    for (int t : kThreadChoices) {
      for (AddCachePolicy p : kPolicyChoices) space.push_back(AddLaunchConfig{max_blocks, t, v, p});
    }
  }
  for (bool cap : {false, true}) {
    for (int t : kLeanThreadChoices) {
      for (AddCachePolicy p : kLeanPolicyChoices) {
        space.push_back(AddLaunchConfig{max_blocks, t, 1, p, AddKernelVariant::Lean, cap ? lean_residency_cap(t) : 0});
      }
    }
  }
  return space;
}

void launch_add_tuning(DType dtype, const void* a, const void* b, void* out, std::int64_t count, cudaStream_t stream,
                       const AddLaunchConfig& config) {
  check_add_config("launch_add_tuning", count, config);
  launch_add_checked<AddInstances::TuningSpace>(dtype, a, b, out, count, stream, config);
}

}  // namespace xb
