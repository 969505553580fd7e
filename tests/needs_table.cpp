// common/needs.hpp on its own: how a row of lessons/needs.tsv reads, what it refuses, the line it
// makes, and the table itself (ctest common.needs; no CUDA library).
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "needs.hpp"

#include <stdexcept>
#include <string>

TEST_SUITE("needs") {
  TEST_CASE("a row reads as A..B, B alone as B..B, and '-' as none") {
    const wb::LessonNeeds r = wb::parseNeedsRow("00\t-..7.5\t12.0..12.4\t-..12.4\tsome\tLinux\t0 (2 for step 7)");
    CHECK(r.lesson == 0);
    CHECK(r.cc.any == 0);
    CHECK(r.cc.every == 75);
    CHECK(r.toolkit.any == 12000);
    CHECK(r.toolkit.every == 12040);
    CHECK(r.driver.any == 0);
    const wb::LessonNeeds b = wb::parseNeedsRow("20\t9.0\t12.8\t12.8\t-\tLinux\t1");
    CHECK(b.cc.any == 90);
    CHECK(b.cc.every == 90);
    CHECK(b.driver.any == 12080);
  }
  TEST_CASE("a row it cannot read is refused, naming the column") {
    const auto refused = [](const std::string& row, const std::string& says) {
      try {
        wb::parseNeedsRow(row);
      } catch (const std::invalid_argument& e) {
        return std::string(e.what()).find(says) != std::string::npos;
      }
      return false;
    };
    CHECK(refused("20\t9.0\t12.8\t12.8\t-\tLinux", "6 columns"));
    CHECK(refused("20\t9\t12.8\t12.8\t-\tLinux\t1", "column cc"));
    CHECK(refused("20\t9.0\t12.8..12.0\t12.8\t-\tLinux\t1", "newer than"));
    CHECK(refused("20\t9.0\t12.8\t12.8..-\t-\tLinux\t1", "column driver"));
    CHECK(refused("20\t9.0\t-\t12.8\t-\tLinux\t1", "column toolkit"));
    CHECK(refused("2\t9.0\t12.8\t12.8\t-\tLinux\t1", "column lesson"));
    CHECK(refused("20\t9.0\t12.8\t12.8\t\tLinux\t1", "left_out"));
    CHECK(refused("20\t9.0\t12.8\t12.8\t-\tLinux\tone", "column gpus"));
  }
  TEST_CASE("the one line names the driver apart only where it differs from the toolkit") {
    CHECK(wb::needsText(wb::parseNeedsRow("20\t9.0\t12.0..12.3\t12.0..12.3\t-\tLinux\t1")) ==
          "CC 9.0; CUDA 12.0 (12.3 for all steps); Linux; 1 GPU");
    CHECK(wb::needsText(wb::parseNeedsRow("00\t-..7.5\t12.0..12.4\t-..12.4\t-\tLinux\t0 (2 for step 7)")) ==
          "CC none (7.5 for all steps); CUDA 12.0 (12.4 for all steps), driver none (12.4 for all steps); Linux; "
          "no GPU (2 for step 7)");
  }
  TEST_CASE("a requirement is met from its number on, for every step or for any") {
    const wb::Need cc{75, 90};
    CHECK(wb::meets(90, cc));
    CHECK_FALSE(wb::meets(89, cc));
    CHECK(wb::meets(75, cc, wb::For::AnyStep));
    CHECK_FALSE(wb::meets(70, cc, wb::For::AnyStep));
  }
  TEST_CASE("lessons/needs.tsv reads whole: a row for every lesson, 20 needing compute capability 9.0") {
    const auto rows = wb::readNeedsTable(WORKBOOK_NEEDS_TABLE);
    REQUIRE(rows.size() == 33);
    for (size_t i = 0; i < rows.size(); ++i) CHECK(rows[i].lesson == static_cast<int>(i));
    CHECK(rows[20].cc.any == 90);
    CHECK(rows[21].cc.every == 90);
    CHECK(rows[22].toolkit.any == 12080);
  }
}
