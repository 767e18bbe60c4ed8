// The house command-line style (common/cli_style.h).
#include "common/cli_style.h"

#include <algorithm>
#include <memory>
#include <sstream>
#include <vector>

namespace xb::cli {

namespace {

/// CLI11's help with a usage line that names every option, wrapped at 100 columns.
class UsageFormatter : public CLI::Formatter {
 public:
  std::string make_usage(const CLI::App* app, std::string name) const override {
    std::vector<std::string> items;
    for (const CLI::Option* opt : app->get_options([](const CLI::Option* o) { return o->get_positional(); })) {
      items.push_back(opt->get_name());
    }
    for (const CLI::Option* opt : app->get_options([](const CLI::Option* o) { return o->nonpositional(); })) {
      std::string item = "[" + opt->get_name(false, true);
      if (!opt->get_type_name().empty()) item += " " + opt->get_type_name();
      items.push_back(item + "]");
    }
    std::ostringstream out;
    std::string line = "Usage: " + name;
    const std::size_t indent = line.size() + 1;
    for (const std::string& item : items) {
      if (line.size() + 1 + item.size() > 100 && line.size() > indent) {
        out << line << "\n";
        line = std::string(indent - 1, ' ');
      }
      line += " " + item;
    }
    out << line << "\n";
    return out.str();
  }
};

std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

/// The header's subject: "crossbench sweep: x" and "bench sweep: x" -> "x".
std::string strip_subject(const std::string& description) {
  for (const char* prefix : {"crossbench", "bench", "validate"}) {
    const std::string p = prefix;
    if (description.rfind(p, 0) != 0) continue;
    const std::size_t colon = description.find(": ");
    if (colon != std::string::npos && colon < 40) return description.substr(colon + 2);
  }
  return description;
}

}  // namespace

std::string house_type_name(const std::string& option_name) {
  // One table for every command (issue 39: LIST/DIR/FILE in one help, TEXT in another).
  static const std::pair<const char*, const char*> kNames[] = {{"size", "LIST"},
                                                               {"op", "LIST"},
                                                               {"dtype", "LIST"},
                                                               {"devices", "LIST|all"},
                                                               {"out", "DIR"},
                                                               {"from-run", "DIR"},
                                                               {"RUN_A", "DIR"},
                                                               {"RUN_B", "DIR"},
                                                               {"suite", "FILE"},
                                                               {"baseline", "FILE"},
                                                               {"ceilings", "FILE"},
                                                               {"replay", "FILE"},
                                                               {"trace", "FILE"},
                                                               {"table", "FILE"},
                                                               {"events", "FILE"},
                                                               {"report", "FILE"},
                                                               {"markdown", "FILE"},
                                                               {"threshold", "PCT"},
                                                               {"max-noise", "PCT"},
                                                               {"overhead-threshold", "PCT"},
                                                               {"min-time", "SECONDS"},
                                                               {"max-time", "SECONDS"},
                                                               {"slow-fixture", "NAME=US"},
                                                               {"mode", "hot|cold"},
                                                               {"aggregate", "FILE|DIR"},
                                                               {"warmup-ms", "MS"},
                                                               {"busy-threshold", "FRACTION"}};
  std::string name = option_name;
  name.erase(0, name.find_first_not_of('-'));
  for (const auto& [option, type] : kNames)
    if (name == option) return type;
  return "";
}

void apply_style(CLI::App& app, const std::string& version, const std::string& exit_codes) {
  std::string what = strip_subject(app.get_description());
  if (!what.empty()) what[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(what[0])));
  app.description(app.get_name() + ": " + what);
  for (CLI::Option* opt : app.get_options()) {
    const std::string type = house_type_name(opt->get_name(false, true));
    if (!type.empty()) opt->type_name(type);
  }
  const std::string footer = app.get_footer();
  if (footer.rfind("exit codes:", 0) != 0)
    app.footer("exit codes: " + exit_codes + (footer.empty() ? "" : "\n" + footer));
  app.formatter(std::make_shared<UsageFormatter>());
  if (app.get_option_no_throw("--version") == nullptr) app.set_version_flag("--version", "crossbench " + version);
}

std::string nearest_option(const CLI::App& app, const std::string& arg) {
  const std::string name = arg.substr(0, arg.find('='));
  std::string best;
  std::size_t best_distance = std::max<std::size_t>(2, name.size() / 3) + 1;
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& lname : opt->get_lnames()) {
      const std::string candidate = "--" + lname;
      const std::size_t d = edit_distance(name, candidate);
      if (d < best_distance) {
        best_distance = d;
        best = candidate;
      }
    }
  }
  return best;
}

std::string parse_error_message(const CLI::App& app, const CLI::ParseError& error, int argc, const char* const* argv) {
  std::string message = error.what();
  std::replace(message.begin(), message.end(), '\n', ' ');
  // CLI11's wording for a value that is not a number ("Could not convert: --threshold = abc") in the
  // house's ("--threshold: 'abc' is not a number"), as the commands' own checks word theirs.
  if (dynamic_cast<const CLI::ConversionError*>(&error) != nullptr) {
    const std::string tag = "Could not convert: ";
    const std::size_t at = message.find(tag), eq = message.find(" = ", at == std::string::npos ? 0 : at);
    if (at != std::string::npos && eq != std::string::npos)
      return message.substr(at + tag.size(), eq - at - tag.size()) + ": '" + message.substr(eq + 3) +
             "' is not a number";
    return message;
  }
  if (dynamic_cast<const CLI::ExtrasError*>(&error) == nullptr) return message;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("-", 0) != 0 || arg == "-" || arg == "--") continue;
    const std::string name = arg.substr(0, arg.find('='));
    bool known = false;
    for (const CLI::Option* opt : app.get_options()) known = known || opt->check_name(name);
    if (known) continue;
    const std::string near = nearest_option(app, name);
    // "unknown option --sise (did you mean --size?)" rather than CLI11's list of every word it
    // did not expect ("The following arguments were not expected: 64 --sise").
    return "unknown option " + name + (near.empty() ? "" : " (did you mean " + near + "?)");
  }
  return message;
}

}  // namespace xb::cli
