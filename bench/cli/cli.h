// Command line of `bench` (parsing and checking only; no GPU, no files touched). The options
// themselves (BenchOptions, UsageError, the size limits) are the measuring layer's: bench/core/options.h.
#pragma once

#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/core/options.h"

namespace CLI {
class App;
}  // namespace CLI

namespace xb {

/// Splits "a,b,,c" at `sep` into {"a", "b", "", "c"} (a trailing separator gives a last "").
std::vector<std::string> split_list(const std::string& text, char sep = ',');
/// Joins repeated option values with commas.
std::string join_list(const std::vector<std::string>& values);
/// The program's name for messages and --help: argv0's file name ("bench" when argv0 is null or
/// has none; a user's program built on bench/core/api.h gets its own).
std::string program_name(const char* argv0);
/// `words` as one POSIX shell command line: space-separated, a word single-quoted only when it
/// needs it (empty, or holding a character outside [A-Za-z0-9_@%+=:,./-]); a ' inside becomes
/// '\''. For showing a command a user can paste; hand-written, as Python's shlex.quote, since the
/// standard library has none.
std::string shell_command(const std::vector<std::string>& words);

/// Parses one size: a decimal integer in [1, kMaxSize]. Throws UsageError naming the item.
std::int64_t parse_size(const std::string& item);

/// Parses repeated and/or comma-separated op (dtype) names. Throws UsageError on an unknown,
/// duplicate or empty name.
std::vector<std::string> parse_op_list(const std::vector<std::string>& values);
std::vector<std::string> parse_dtype_list(const std::vector<std::string>& values);

/// Parses a comma-separated size list: each item a decimal integer in [1, kMaxSize], no
/// duplicates. Throws UsageError naming the offending item.
std::vector<std::int64_t> parse_size_list(const std::string& text);

/// Parses sizes given as a comma-separated list whose items are single sizes ("64") or
/// power-of-two ranges "START:END:x2" (START, START*2, ..., END; END must be START times a power
/// of two). Every size in [1, kMaxSize] , no duplicates. Throws UsageError naming the
/// offending item: "64:10:x2" (end below start), "0:64:x2" (start 0), "64:16384:x3" (only x2),
/// "64:1000:x2" (not a power-of-two multiple), "64:128" (wrong field count).
std::vector<std::int64_t> parse_size_spec(const std::string& text);

/// Checks an --out FILE argument before any measurement: not empty, not a folder, and its folder
/// exists (the file itself is written atomically at the end). Throws UsageError naming it.
void check_out_file(const std::string& path);

/// Longest --slow-fixture delay, us (the spin kernel's limit, kernels/spin_delay.h: 1 s).
constexpr double kMaxSlowFixtureUs = 1e6;

/// Parses one --slow-fixture item "op/dtype/size=US": a known op, dtype and size, and a decimal
/// number of microseconds in (0, kMaxSlowFixtureUs]. Returns {"op/dtype/size", US}. Throws
/// UsageError naming the item and what is wrong.
std::pair<std::string, double> parse_slow_fixture(const std::string& item);

/// Parses argv with a command's CLI11 `app`, as `bench` and each of its subcommands do: on --help
/// prints the help on stdout and returns false; on bad input (a CLI11 ParseError) throws
/// UsageError with CLI11's message, first passed through `tidy` when one is given. Returns true
/// when argv was parsed.
bool parse_command_line(CLI::App& app, int argc, const char* const* argv, std::string (*tidy)(std::string) = nullptr);

/// Whether `args` (a command's arguments after its name) hold --devices ("--devices X" or
/// "--devices=X"): the bench executable then runs the command once per device
/// (bench/main/devices.h); a program built on xb::main refuses it.
bool has_devices_option(const std::vector<std::string>& args);

/// Parses argv. Throws UsageError on any bad input (unknown flag, op, dtype, bad size, ...).
/// Returns std::nullopt when --help or --version was printed. `footer` ends the help text (bench:
/// its subcommands). The program's name in the help is argv[0]'s file name. `devices_option`: the
/// help lists --devices (the bench executable, whose main takes --devices before this parser
/// runs); without it --devices is an unknown option here.
std::optional<BenchOptions> parse_bench_args(int argc, const char* const* argv, const std::string& footer = "",
                                             bool devices_option = false);

}  // namespace xb
