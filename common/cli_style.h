// One command-line style for every crossbench command (bench, its subcommands, validate), on top
// of CLI11: the same --help and --version, a usage line listing every flag, a help header
// "NAME: what it does", and "did you mean --X?" for a mistyped flag. Plain C++ and CLI11; the
// commands' option sets stay their own.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace xb::cli {

/// The exit codes every bench command shares; a command whose codes differ (qualify, compare,
/// validate) passes its own to apply_style.
inline constexpr const char* kBenchExitCodes =
    "0 success, 1 a check or validation failed or a result was wrong, 2 usage or input error (one line, "
    "nothing written), 130/143 interrupted (completed results are written whole)";

/// Gives `app` the house style: its help header becomes "<app name>: <what>" (a leading
/// "crossbench X:" or "bench X:" in the description is replaced), its usage line lists every
/// option ("Usage: bench sweep [--size LIST] [--warmup] ..."), each option's value is named by
/// what it is (house_type_name: LIST, DIR, FILE, PCT, ...) instead of CLI11's TEXT or FLOAT, the
/// help ends with "exit codes: <exit_codes>" (then any footer the command set), and it answers
/// --version with "crossbench <version>" where it has no --version of its own. Call after the
/// options are added.
void apply_style(CLI::App& app, const std::string& version, const std::string& exit_codes = kBenchExitCodes);

/// The house name of an option's value, by the option's name, for every command alike:
/// "LIST" (comma-separated: --size, --op, --dtype), "LIST|all" (--devices), "DIR" (--out, --from-run, the run
/// folders RUN_A and RUN_B), "FILE" (--suite, --baseline, --ceilings, --replay, --trace, --table, --events,
/// --report, --markdown), "PCT" (--threshold, --overhead-threshold, --max-noise), "SECONDS"
/// (--min-time, --max-time), "NAME=US" (--slow-fixture), "hot|cold" (--mode), "FILE|DIR" (--aggregate), "MS"
/// (--warmup-ms), "FRACTION" (--busy-threshold); "" for any other (CLI11's own name stays).
std::string house_type_name(const std::string& option_name);

/// The option of `app` nearest to the mistyped `arg` ("--sizes" -> "--size"), by edit distance
/// on the long names, within max(2, a third of its length); empty when none is that near.
std::string nearest_option(const CLI::App& app, const std::string& arg);

/// CLI11's message for a parse error of `app` on argv, on one line, with "did you mean --X?" when
/// the error is an unknown flag and one of the app's options is near it.
std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error, int argc, const char* const* argv);

}  // namespace xb::cli
