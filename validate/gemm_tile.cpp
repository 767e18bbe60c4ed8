// Tile quantization of a GEMM kernel: the CTA tile from the kernel name, the executed FLOPs
// (validate/gemm_tile.h).
#include "validate/gemm_tile.h"

#include <regex>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace xb {

std::string CtaTile::text() const { return fmt::format("{}x{}x{}", m, n, k); }

namespace {

std::optional<CtaTile> tile_of(const std::smatch& s) {
  try {
    CtaTile t{std::stoll(s[1].str()), std::stoll(s[2].str()), std::stoll(s[3].str())};
    if (t.m < 1 || t.n < 1 || t.k < 1) return std::nullopt;
    return t;
  } catch (const std::out_of_range&) {
    return std::nullopt;
  }
}

}  // namespace

std::optional<CtaTile> cta_tile_from_kernel_name(std::string_view name) {
  // nvjet: the tile follows "tst_" (after "nvjet_" and any further prefix words such as
  // "sm90_"): <M>x<N> of the output, then <K>x<pipeline stages>.
  static const std::regex nvjet(R"(nvjet_(?:[A-Za-z0-9]+_)*?tst_(\d{1,6})x(\d{1,6})_(\d{1,6})x\d{1,3}(?:_|$))");
  // CUTLASS / xmma: "tilesize<M>x<N>x<K>" (cuBLAS's sm90_xmma_gemm_* and CUTLASS 3 kernels).
  static const std::regex tilesize(R"(tilesize(\d{1,6})x(\d{1,6})x(\d{1,6}))");
  const std::string s(name);
  std::smatch m;
  if (s.find("nvjet_") != std::string::npos && std::regex_search(s, m, nvjet)) return tile_of(m);
  if (s.find("gemm") != std::string::npos && std::regex_search(s, m, tilesize)) return tile_of(m);
  return std::nullopt;
}

std::int64_t pad_to_tile(std::int64_t x, std::int64_t tile) {
  if (x < 0 || tile < 1)
    throw std::invalid_argument(fmt::format("pad_to_tile({}, {}): needs x >= 0 and tile >= 1", x, tile));
  return (x + tile - 1) / tile * tile;
}

double tile_padded_gemm_flops(std::int64_t m, std::int64_t n, std::int64_t k, const CtaTile& tile) {
  // Doubles: exact for these integers up to 2^53 (n = 16384 padded gives about 9e12).
  return 2.0 * static_cast<double>(pad_to_tile(m, tile.m)) * static_cast<double>(pad_to_tile(n, tile.n)) *
         static_cast<double>(pad_to_tile(k, tile.k));
}

}  // namespace xb
