// Tile quantization of a GEMM kernel (internal to validate/, not installed): the CTA tile read from
// the kernel's name and the work that tile executes. A GEMM kernel covers its M x N output with
// CTA tiles of tm x tn and walks K in steps of tk, so when a dimension is not a whole multiple of
// its tile extent the last tile row, column or K step still runs in full on the tensor cores, on
// padding: "tile quantization" (NVIDIA's "Matrix Multiplication Background" user guide, Deep
// Learning Performance docs; Nsight Compute uses the same term). The model_vs_counters check
// (validate/checks_counters.cpp) compares the tensor-pipe counters with this executed work when
// they differ from the useful 2 M N K.
//
// Units: FLOPs (a multiply and an add count 2), elements for the shapes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace xb {

/// A GEMM kernel's CTA (thread-block) tile, in elements: `m` x `n` of the output, `k` per main
/// loop step. `m` is the extent along the first dimension the kernel name gives (cuBLASLt's m:
/// rows of its column-major D), `n` along the second.
struct CtaTile {
  std::int64_t m = 0;
  std::int64_t n = 0;
  std::int64_t k = 0;
  /// "320x128x64".
  std::string text() const;
};

/// The CTA tile a cuBLAS / cuBLASLt kernel's name encodes, or none when the name has no tile this
/// parser knows (it never guesses):
///   nvjet (cuBLASLt's Hopper kernels): `..._tst_<M>x<N>_<K>x<stages>_...`, e.g.
///     `nvjet_sm90_tst_320x128_64x3_1x2_h_bz_coopB_NNT` -> 320 x 128 x 64;
///   CUTLASS / xmma GEMMs: `..._tilesize<M>x<N>x<K>...` in a name containing "gemm", e.g.
///     `sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_...` -> 128 x 256 x 64.
/// Zero extents are refused.
std::optional<CtaTile> cta_tile_from_kernel_name(std::string_view name);

/// `x` rounded up to a whole multiple of `tile` (tile quantization of one dimension). Throws
/// std::invalid_argument for x < 0 or tile < 1.
std::int64_t pad_to_tile(std::int64_t x, std::int64_t tile);

/// FLOPs a GEMM of m x n x k executes with `tile`: 2 * pad(m, tile.m) * pad(n, tile.n) *
/// pad(k, tile.k) (every CTA tile runs whole; source: the tile quantization section of NVIDIA's
/// "Matrix Multiplication Background" guide). The useful FLOPs are 2 m n k. Throws
/// std::invalid_argument for a negative dimension or a tile extent < 1.
double tile_padded_gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k, const CtaTile& tile);

}  // namespace xb
