// Reading a whole file as text (common/text_file.h).
#include "common/text_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <system_error>

#include "common/errors.h"

namespace xb {

std::string read_text_file(const std::filesystem::path& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) throw InputError(path.string() + ": cannot open (a directory)");
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) throw InputError(path.string() + ": cannot open: " + std::strerror(errno));
  const std::streamoff size = in.tellg();
  std::string text;
  if (size > 0) {
    text.resize(static_cast<std::size_t>(size));
    in.seekg(0);
    in.read(text.data(), size);
    if (in.gcount() != size) throw InputError(path.string() + ": read failed");
  }
  return text;
}

}  // namespace xb
