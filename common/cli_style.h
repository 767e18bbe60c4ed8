// One command-line style for every crossbench command (bench, its subcommands, validate), on top
// of CLI11: the same --help and --version, a usage line listing every flag, a help header
// "NAME: what it does", and "did you mean --X?" for a mistyped flag. Plain C++ and CLI11; the
// commands' option sets stay their own.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace xb::cli {

/// Gives `app` the house style: its help header becomes "<app name>: <what>" (a leading
/// "crossbench X:" or "bench X:" in the description is replaced), its usage line lists every
/// option ("Usage: bench sweep [--size TEXT] [--warmup] ..."), and it answers --version with
/// "crossbench <version>" where it has no --version of its own. Call after the options are added.
void apply_style(CLI::App& app, const std::string& version);

/// The option of `app` nearest to the mistyped `arg` ("--sizes" -> "--size"), by edit distance
/// on the long names, within max(2, a third of its length); empty when none is that near.
std::string nearest_option(const CLI::App& app, const std::string& arg);

/// CLI11's message for a parse error of `app` on argv, on one line, with "did you mean --X?" when
/// the error is an unknown flag and one of the app's options is near it.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error, int argc, const char* const* argv);

}  // namespace xb::cli
