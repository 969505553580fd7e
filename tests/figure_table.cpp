// wb::FigureTable, the CSV a measuring lesson writes for its page's figure: what it writes, that a
// run which measured nothing leaves no older table behind, and that a file it cannot write is an
// error with the lesson's usage code, never a silent success. Needs no GPU.
#include <doctest/doctest.h>

#include "figure.hpp"
#include "scratch.hpp"
#include "workbook.hpp"

#include <fstream>
#include <iterator>
#include <string>

namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

}  // namespace

TEST_SUITE("figure-table") {
  TEST_CASE("save writes the header, then one line per row, formatted as printf formats it") {
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/figure.csv";
    wb::FigureTable table("bytes,way,microseconds");
    table.row("%zu,pool (warm),%.3f", size_t{4096}, 1.5);
    table.row("%zu,%s,%.3f", size_t{1} << 20, "cuMemAlloc+cuMemFree", 12.25);
    CHECK(table.save(path, 9) == wb::kExitOk);
    CHECK(contents(path) == "bytes,way,microseconds\n4096,pool (warm),1.500\n1048576,cuMemAlloc+cuMemFree,12.250\n");
  }

  TEST_CASE("a table with no rows writes nothing and removes an older run's file at that path") {
    wb::ScratchDir dir;
    const std::string path = dir.path() + "/figure.csv";
    std::ofstream(path) << "an older run's table\n";
    REQUIRE(exists(path));
    CHECK(wb::FigureTable("kernels,way,milliseconds").save(path, 6) == wb::kExitOk);
    CHECK_FALSE(exists(path));
  }

  TEST_CASE("no path: nothing is written and the lesson goes on") {
    wb::FigureTable table("a,b");
    table.row("%d,%d", 1, 2);
    CHECK(table.save("", 1) == wb::kExitOk);
  }

  TEST_CASE("a path that cannot be written is the usage error, not success") {
    wb::ScratchDir dir;
    wb::FigureTable table("a,b");
    table.row("%d,%d", 1, 2);
    CHECK(table.save(dir.path() + "/no-such-folder/figure.csv", 5) == wb::kExitUsage);
    CHECK(table.save(dir.path(), 5) == wb::kExitUsage);  // a folder, not a file
  }

  TEST_CASE("a row longer than the table allows is refused, not cut") {
    wb::FigureTable table("a");
    const std::string longWord(600, 'x');
    CHECK_THROWS_AS(table.row("%s", longWord.c_str()), std::logic_error);
  }
}
