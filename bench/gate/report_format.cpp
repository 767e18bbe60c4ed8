// Shared report formats (see report_format.h).
#include "bench/gate/report_format.h"

#include <fmt/format.h>

namespace xb {

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

std::string xml_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char ch : text) {
    const auto c = static_cast<unsigned char>(ch);
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        // XML 1.0 allows no control characters other than tab, LF and CR, not even as references.
        if (c < 0x20 && ch != '\t' && ch != '\n' && ch != '\r') break;
        out += ch;
    }
  }
  return out;
}

void write_junit_suite(std::ostream& out, const JUnitSuite& suite) {
  const std::vector<JUnitCase>& cases = suite.cases;
  std::size_t failures = 0, errors = 0, skipped = 0;
  double time = 0;
  for (const JUnitCase& c : cases) {
    failures += c.kind == JUnitCase::Kind::Failure ? 1 : 0;
    errors += c.kind == JUnitCase::Kind::Error ? 1 : 0;
    skipped += c.kind == JUnitCase::Kind::Skipped ? 1 : 0;
    time += c.time_s;
  }
  out << fmt::format(
      "  <testsuite name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
      xml_escape(suite.name), cases.size(), failures, errors, skipped, time);
  if (!suite.properties.empty()) {
    out << "    <properties>\n";
    for (const auto& [k, v] : suite.properties) {
      out << fmt::format("      <property name=\"{}\" value=\"{}\"/>\n", xml_escape(k), xml_escape(v));
    }
    out << "    </properties>\n";
  }
  for (const JUnitCase& c : cases) {
    out << fmt::format("    <testcase classname=\"{}\" name=\"{}\" time=\"{:.3f}\"", xml_escape(c.classname),
                       xml_escape(c.name), c.time_s);
    if (c.kind == JUnitCase::Kind::Pass && c.out.empty()) {
      out << "/>\n";
      continue;
    }
    out << ">\n";
    switch (c.kind) {
      case JUnitCase::Kind::Failure:
        out << fmt::format("      <failure type=\"{}\" message=\"{}\">{}</failure>\n", xml_escape(c.type),
                           xml_escape(c.message), xml_escape(c.body.empty() ? c.message : c.body));
        break;
      case JUnitCase::Kind::Error:
        out << fmt::format("      <error type=\"{}\" message=\"{}\">{}</error>\n", xml_escape(c.type),
                           xml_escape(c.message), xml_escape(c.message));
        break;
      case JUnitCase::Kind::Skipped:
        out << fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(c.message));
        break;
      case JUnitCase::Kind::Pass:
        break;
    }
    if (!c.out.empty()) out << "      <system-out>" << xml_escape(c.out) << "</system-out>\n";
    out << "    </testcase>\n";
  }
  if (!suite.system_err.empty()) out << "    <system-err>" << xml_escape(suite.system_err) << "</system-err>\n";
  out << "  </testsuite>\n";
}

void write_junit(std::ostream& out, const std::string& title, const std::vector<JUnitSuite>& suites) {
  std::size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double time = 0;
  for (const JUnitSuite& suite : suites) {
    for (const JUnitCase& c : suite.cases) {
      ++tests;
      failures += c.kind == JUnitCase::Kind::Failure ? 1 : 0;
      errors += c.kind == JUnitCase::Kind::Error ? 1 : 0;
      skipped += c.kind == JUnitCase::Kind::Skipped ? 1 : 0;
      time += c.time_s;
    }
  }
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  out << fmt::format(
      "<testsuites name=\"{}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" time=\"{:.3f}\">\n",
      xml_escape(title), tests, failures, errors, skipped, time);
  for (const JUnitSuite& suite : suites) write_junit_suite(out, suite);
  out << "</testsuites>\n";
}

}  // namespace xb
