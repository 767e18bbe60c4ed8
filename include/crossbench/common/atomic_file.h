// Atomic file output: write to a temporary file in the target's folder, flush, then rename(2), so
// readers see either the old file or the complete new one, never half of it.
#pragma once

#include <filesystem>
#include <functional>
#include <ostream>

namespace xb {

/// Writes `path` atomically with `writer`. Throws std::runtime_error naming the path when the
/// temporary file cannot be created, written or renamed; the temporary is removed on failure.
/// An exception thrown by `writer` itself propagates unchanged (temporary removed, old file intact).
/// The temporary is "<path>.tmp.<pid>.<n>" in the same folder; no fsync is done.
void write_file_atomic(const std::filesystem::path& path, const std::function<void(std::ostream&)>& writer);

/// Checks, before any output is written, that write_file_atomic(`path`, ...) can succeed: `path`
/// is not a folder, and a temporary file can be created (then removed) beside it. A command with
/// several outputs probes them all first, so that a bad second destination does not leave the
/// first one rewritten. Throws std::runtime_error "cannot write <path>: <why>".
void probe_file_destination(const std::filesystem::path& path);

}  // namespace xb
