// The JUnit document of a run with every verdict (and hostile text in its messages) is valid
// against docs/junit.xsd (xmllint), counts what it should, and escapes what XML must not contain.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "cli/commands.hpp"

namespace pecheck::cli {
namespace {

VerifyRun sample_run() {
  VerifyRun run;
  run.seed = 42;
  run.cases = 100;
  run.results = {
      {.property = "rope.relative",
       .encoder = "avx2",
       .dtype = DType::f32,
       .verdict = Verdict::pass,
       .cases = 100,
       .max_error_u = 1.25,
       .bound_u = 4,
       .seed = 7,
       .seconds = 0.5},
      {.property = "rope.inverse",
       .encoder = "avx2",
       .dtype = DType::bf16,
       .verdict = Verdict::fail,
       .cases = 3,
       .max_error_u = 1e9,
       .bound_u = 2,
       .seed = 8,
       .message = "pair 3: |y - y_ref| = 9 > 2u & <more> \"quoted\"",
       .counterexample = "rope(layout=half,d=4) pos=[1, 2] <x>\x01",
       .seconds = 0.25},
      {.property = "attention.nan_parity",
       .encoder = "scalar",
       .dtype = DType::f16,
       .verdict = Verdict::crash,
       .message = "killed by signal 11 (SIGSEGV)",
       .seconds = 0.125},
      {.property = "rope.relative",
       .encoder = "cuda",
       .dtype = DType::f32,
       .verdict = Verdict::skip,
       .message = "no CUDA device"},
  };
  return run;
}

std::string write_temp(const std::string& text) {
  const auto path = std::filesystem::temp_directory_path() / ("pecheck_junit_" + std::to_string(::getpid()) + ".xml");
  std::ofstream(path) << text;
  return path.string();
}

TEST(Junit, ValidAgainstTheSchemaWithEveryVerdict) {
  const VerifyRun run = sample_run();
  const std::string doc = junit_document(run, VerifyOptions{}, "verify");
  const std::string path = write_temp(doc);
  const std::string cmd = "xmllint --noout --schema " PECHECK_SOURCE_DIR "/docs/junit.xsd " + path + " 2>&1";
  const int rc = std::system(cmd.c_str());
  std::remove(path.c_str());
  ASSERT_EQ(rc, 0) << "xmllint rejected:\n" << doc;
}

TEST(Junit, CountsEachVerdictAndGroupsByEncoder) {
  const std::string doc = junit_document(sample_run(), VerifyOptions{}, "verify");
  EXPECT_NE(doc.find(R"(<testsuites name="pecheck verify" tests="4" failures="1" errors="1" skipped="1")"),
            std::string::npos)
      << doc;
  EXPECT_NE(doc.find(R"(<testsuite name="pecheck.avx2" id="0" tests="2" failures="1" errors="0" skipped="0")"),
            std::string::npos);
  EXPECT_NE(doc.find(R"(<testcase name="rope.inverse [bf16]" classname="pecheck.avx2.rope.inverse")"),
            std::string::npos);
  EXPECT_NE(doc.find(R"(<skipped message="no CUDA device"/>)"), std::string::npos);
  EXPECT_NE(doc.find(R"x(<error message="killed by signal 11 (SIGSEGV)" type="crash">)x"), std::string::npos);
  EXPECT_NE(doc.find("replay: build/pecheck verify --backend avx2 --property rope.inverse --dtype bf16 --seed 42"),
            std::string::npos);
  EXPECT_NE(doc.find(R"(<property name="seed" value="42"/>)"), std::string::npos);
}

TEST(Junit, EscapesMarkupAndDropsControlCharacters) {
  const std::string doc = junit_document(sample_run(), VerifyOptions{}, "verify");
  EXPECT_NE(doc.find("&amp; &lt;more&gt; &quot;quoted&quot;"), std::string::npos);
  EXPECT_EQ(doc.find("<more>"), std::string::npos);
  EXPECT_EQ(doc.find('\x01'), std::string::npos);
  EXPECT_NE(doc.find("pos=[1, 2] &lt;x&gt;"), std::string::npos);
}

}  // namespace
}  // namespace pecheck::cli
