// Atomic file output (common/atomic_file.h): temporary file beside the target, then rename(2).
#include "common/atomic_file.h"

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace xb {
namespace {

/// "<dir>/<name>.tmp.<pid>.<n>": unique per process and call, in the target's folder (so rename
/// stays on one file system). `*.tmp.*` is git-ignored.
std::filesystem::path temp_path_for(const std::filesystem::path& path) {
  static std::atomic<unsigned long> counter{0};
  std::filesystem::path tmp = path;
  tmp += ".tmp." + std::to_string(static_cast<long>(::getpid())) + "." + std::to_string(counter.fetch_add(1));
  return tmp;
}

void remove_quietly(const std::filesystem::path& path) {
  std::error_code ignored;
  std::filesystem::remove(path, ignored);
}

}  // namespace

void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer) {
  const std::filesystem::path tmp = temp_path_for(path);
  std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
  if (!out) {
    const int err = errno;
    throw std::runtime_error("cannot write " + path.string() + ": cannot create temporary file " + tmp.string() + ": " +
                             std::strerror(err));
  }
  try {
    writer(out);
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + path.string() + ": write failed");
    out.close();
    if (out.fail()) throw std::runtime_error("cannot write " + path.string() + ": close failed");
  } catch (...) {
    // The writer's own exception (or ours) propagates unchanged; the old file stays untouched.
    if (out.is_open()) out.close();
    remove_quietly(tmp);
    throw;
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) {
    remove_quietly(tmp);
    throw std::runtime_error("cannot write " + path.string() + ": rename from " + tmp.string() +
                             " failed: " + ec.message());
  }
}

void probe_file_destination(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    throw std::runtime_error("cannot write " + path.string() + ": it is a folder");
  }
  const std::filesystem::path tmp = temp_path_for(path);
  {
    std::ofstream probe(tmp, std::ios::binary | std::ios::trunc);
    if (!probe) {
      const int err = errno;
      throw std::runtime_error("cannot write " + path.string() +
                               ": cannot create a file in its folder: " + std::strerror(err));
    }
  }
  remove_quietly(tmp);
}

}  // namespace xb
