// The docs cannot drift from the code: every registered property has a page that states, proves
// and bounds it and names its test; every page names a registered property; every source file
// points at its page.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "harness/property.hpp"
#include "properties/registry.hpp"

namespace pecheck {
namespace {

namespace fs = std::filesystem;
const fs::path kRoot = PECHECK_SOURCE_DIR;

std::string read(const fs::path& p) {
  std::ifstream f(p);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

TEST(RegistryDocs, IdsAreDottedUniqueAndStable) {
  std::set<std::string> seen;
  for (const Property& p : property_registry()) {
    EXPECT_TRUE(seen.insert(p.id).second) << "duplicate id " << p.id;
    EXPECT_NE(p.id.find('.'), std::string::npos) << p.id;
    EXPECT_EQ(p.id.find_first_of(" /*?"), std::string::npos) << p.id;
    EXPECT_FALSE(p.statement.empty()) << p.id;
    EXPECT_FALSE(p.dtypes.empty()) << p.id;
  }
  EXPECT_GE(seen.size(), 14u);
}

/// The catalogue and the opt-in properties: each has its page and its source like any other.
std::vector<Property> every_property() {
  std::vector<Property> all = property_registry();
  all.insert(all.end(), opt_in_registry().begin(), opt_in_registry().end());
  return all;
}

TEST(RegistryDocs, EveryPropertyHasAPageWithStatementProofToleranceAndTest) {
  for (const Property& p : every_property()) {
    EXPECT_EQ(p.doc, "docs/properties/" + p.id + ".md");
    const fs::path page = kRoot / p.doc;
    ASSERT_TRUE(fs::exists(page)) << p.id << " has no page " << page;
    const std::string text = read(page);
    EXPECT_NE(text.find("# " + p.id), std::string::npos) << page << " does not title itself " << p.id;
    for (const char* section : {"## Statement", "## Proof", "## Tolerance", "## Checked by"})
      EXPECT_NE(text.find(section), std::string::npos) << page << " lacks " << section;
    EXPECT_NE(text.find(p.source), std::string::npos) << page << " does not link " << p.source;
    // The flag that lets the property check an opaque plugin is stated on the page, and only there.
    EXPECT_EQ(text.find("Convention-free: yes") != std::string::npos, p.convention_free)
        << page << " and the property disagree on convention_free";
  }
}

TEST(RegistryDocs, EveryPageNamesARegisteredProperty) {
  std::set<std::string> ids;
  for (const Property& p : every_property()) ids.insert(p.id);
  std::size_t pages = 0;
  for (const auto& entry : fs::directory_iterator(kRoot / "docs/properties")) {
    if (entry.path().extension() != ".md") continue;
    ++pages;
    EXPECT_TRUE(ids.count(entry.path().stem().string())) << entry.path() << " names no registered property";
  }
  EXPECT_EQ(pages, ids.size());
}

TEST(RegistryDocs, EverySourceFileStatesItsTheoremAndLinksItsPage) {
  for (const Property& p : every_property()) {
    const fs::path src = kRoot / p.source;
    ASSERT_TRUE(fs::exists(src)) << src;
    const std::string text = read(src);
    EXPECT_EQ(text.rfind("// Theorem: ", 0), 0u) << src << " must open with its one-sentence theorem";
    EXPECT_NE(text.find("// Doc: " + p.doc), std::string::npos) << src << " does not link " << p.doc;
  }
}

}  // namespace
}  // namespace pecheck
