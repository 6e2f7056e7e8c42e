// `--junit FILE`: the run as JUnit XML, the format Jenkins, GitLab and GitHub test reporters read
// (schema: docs/junit.xsd). One <testsuite> per encoder, one <testcase> per property x dtype:
// a failure carries the counterexample and the replay line, a crash is an <error>, an unavailable
// backend a <skipped> with its reason.
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <map>

#include "cli/commands.hpp"

namespace pecheck::cli {

namespace {

/// Escapes the five XML specials; drops control characters XML 1.0 forbids (keeps tab, LF, CR).
std::string xml(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (const char ch : s) {
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
        if (c >= 0x20 || ch == '\t' || ch == '\n' || ch == '\r') out += ch;
    }
  }
  return out;
}

std::string junit_number(double x) { return std::isfinite(x) ? fmt::format("{:.6g}", x) : (x > 0 ? "inf" : "-inf"); }

struct Counts {
  int tests = 0, failures = 0, errors = 0, skipped = 0;
  double seconds = 0;
  void add(const PropertyResult& r) {
    ++tests;
    failures += r.verdict == Verdict::fail;
    errors += r.verdict == Verdict::crash;
    skipped += r.verdict == Verdict::skip;
    seconds += r.seconds;
  }
  std::string attributes() const {
    return fmt::format(R"(tests="{}" failures="{}" errors="{}" skipped="{}" time="{:.3f}")", tests, failures, errors,
                       skipped, seconds);
  }
};

std::string testcase(const PropertyResult& r, const VerifyRun& run, const VerifyOptions& o) {
  std::string x = fmt::format(R"(    <testcase name="{} [{}]" classname="pecheck.{}.{}" time="{:.3f}")",
                              xml(r.property), dtype_name(r.dtype), xml(r.encoder), xml(r.property), r.seconds);
  const std::string measured = fmt::format("max error {} u, bound {} u, {} cases, property seed {}",
                                           junit_number(r.max_error_u), junit_number(r.bound_u), r.cases, r.seed);
  const std::string detail = fmt::format(
      "{}{}\nreplay: {}", r.counterexample.empty() ? "" : "counterexample (shrunk): " + r.counterexample + "\n",
      r.message, replay_command(r, run, o));
  switch (r.verdict) {
    case Verdict::pass:
      return x + fmt::format(">\n      <system-out>{}</system-out>\n    </testcase>\n", xml(measured));
    case Verdict::skip:
      return x + fmt::format(">\n      <skipped message=\"{}\"/>\n    </testcase>\n", xml(r.message));
    case Verdict::fail:
      return x + fmt::format(
                     ">\n      <failure message=\"{}\" type=\"property\">{}</failure>\n"
                     "      <system-out>{}</system-out>\n    </testcase>\n",
                     xml(r.message), xml(detail), xml(measured));
    case Verdict::crash:
      return x + fmt::format(">\n      <error message=\"{}\" type=\"crash\">{}</error>\n    </testcase>\n",
                             xml(r.message), xml(detail));
  }
  return x + "/>\n";
}

}  // namespace

std::string junit_document(const VerifyRun& run, const VerifyOptions& o, std::string_view command) {
  std::map<std::string, std::vector<const PropertyResult*>> by_encoder;  // suites in name order
  Counts all;
  for (const auto& r : run.results) {
    by_encoder[r.encoder].push_back(&r);
    all.add(r);
  }
  char host[256] = "localhost";
  gethostname(host, sizeof host - 1);
  const std::string timestamp =
      fmt::format("{:%Y-%m-%dT%H:%M:%S}", fmt::gmtime(std::chrono::system_clock::to_time_t(run.started)));
  std::string doc = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  doc += fmt::format("<testsuites name=\"pecheck {}\" {}>\n", xml(command), all.attributes());
  int id = 0;
  for (const auto& [encoder, results] : by_encoder) {
    Counts c;
    for (const PropertyResult* r : results) c.add(*r);
    doc += fmt::format(R"(  <testsuite name="pecheck.{}" id="{}" {} timestamp="{}" hostname="{}">)", xml(encoder), id++,
                       c.attributes(), timestamp, xml(host));
    doc += fmt::format(
        "\n    <properties>\n      <property name=\"seed\" value=\"{}\"/>\n"
        "      <property name=\"cases\" value=\"{}\"/>\n    </properties>\n",
        run.seed, run.cases);
    for (const PropertyResult* r : results) doc += testcase(*r, run, o);
    doc += "  </testsuite>\n";
  }
  return doc + "</testsuites>\n";
}

void write_junit(const VerifyRun& run, const VerifyOptions& o, std::string_view command) {
  write_file_atomically(o.junit, junit_document(run, o, command), "--junit");
}

}  // namespace pecheck::cli
