// Text formats the qualification reports share (qualify.md/.xml, the fleet aggregate, devices.md):
// a markdown table cell, XML escaping, and JUnit XML test cases and suites. Plain C++; writers take
// a std::ostream so tests parse their output back.
//
// JUnit XML has no formal standard; the shape written is the one Jenkins, GitLab and GitHub's
// test-report actions read (the Ant JUnit task's): <testsuites> holding <testsuite>s of <testcase>s
// with <failure>, <error> or <skipped>, counts on every suite and on the root.
#pragma once

#include <ostream>
#include <string>
#include <utility>
#include <vector>

namespace xb {

/// `text` as one markdown table cell: pipes escaped, line breaks as spaces.
std::string markdown_cell(const std::string& text);

/// `text` escaped for XML 1.0 character data and attribute values (& < > " ' as entities; control
/// characters other than tab, LF and CR, which XML 1.0 cannot carry even as references, dropped).
std::string xml_escape(const std::string& text);

/// One JUnit test case.
struct JUnitCase {
  std::string classname, name;
  double time_s = 0;
  enum class Kind { Pass, Failure, Error, Skipped } kind = Kind::Pass;
  std::string type;     ///< failure/error type
  std::string message;  ///< one line
  std::string body;     ///< details (a failure's text; its message when empty)
  std::string out;      ///< system-out
};

/// One <testsuite>: its cases, <properties> and <system-err> ("" = none).
struct JUnitSuite {
  std::string name;
  std::vector<JUnitCase> cases;
  std::vector<std::pair<std::string, std::string>> properties;
  std::string system_err;
};

/// Writes one <testsuite> with its counts (tests, failures, errors, skipped, time).
void write_junit_suite(std::ostream& out, const JUnitSuite& suite);

/// Writes the whole document: the XML declaration, <testsuites name="title"> with the counts over
/// every suite, each suite.
void write_junit(std::ostream& out, const std::string& title, const std::vector<JUnitSuite>& suites);

}  // namespace xb
