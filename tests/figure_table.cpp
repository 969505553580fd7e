// wb::FigureTable, the CSV a measuring lesson writes for its page's figure: what it writes, that a
// run which measured nothing leaves no older table behind, and that a file it cannot write is an
// error with the lesson's usage code, never a silent success. And wb::parseFigureArgs, the command
// line that names the table. Needs no GPU.
#include <doctest/doctest.h>

#include "figure.hpp"
#include "scratch.hpp"
#include "workbook.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

std::string contents(const std::string& path) {
  std::ifstream in(path);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

// parseFigureArgs on a command line (the program's name first), and what it printed on stderr.
struct Parsed {
  bool ok;
  wb::FigurePaths paths;
  std::string err;
};

Parsed parse(std::vector<std::string> words, const char* csvExample, const char* pytorchExample = nullptr) {
  std::vector<char*> argv;
  for (std::string& w : words) argv.push_back(w.data());
  argv.push_back(nullptr);  // as a real argv ends
  wb::ScratchDir dir;
  const std::string errPath = dir.path() + "/stderr";
  const int file = open(errPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  REQUIRE(file >= 0);
  const int saved = dup(STDERR_FILENO);
  dup2(file, STDERR_FILENO);  // stderr is unbuffered: what the parser prints is in the file at once
  Parsed p{};
  p.ok = wb::parseFigureArgs(static_cast<int>(words.size()), argv.data(), p.paths, csvExample, pytorchExample);
  dup2(saved, STDERR_FILENO);
  close(saved);
  close(file);
  p.err = contents(errPath);
  return p;
}

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

  TEST_CASE("parseFigureArgs reads --csv, and --pytorch where the lesson takes it; the last of each counts") {
    const Parsed none = parse({"prog"}, "lesson13-figure.csv");
    CHECK(none.ok);
    CHECK(none.paths.csv.empty());
    const Parsed csv = parse({"prog", "--csv", "a.csv", "--csv", "b.csv"}, "lesson13-figure.csv");
    CHECK(csv.ok);
    CHECK(csv.paths.csv == "b.csv");
    const Parsed both = parse({"prog", "--pytorch", "t.csv", "--csv", "f.csv"}, "f.csv", "t.csv");
    CHECK(both.ok);
    CHECK(both.paths.csv == "f.csv");
    CHECK(both.paths.pytorch == "t.csv");
    CHECK(none.err + csv.err + both.err == "");
  }

  TEST_CASE("anything else is refused with the lesson's usage line, its example names included") {
    const std::string csvOnly = "usage: prog [--csv lesson13-figure.csv]\n";
    for (const std::vector<std::string>& words :
         {std::vector<std::string>{"prog", "--bogus"}, {"prog", "--csv"}, {"prog", "--csv", "a.csv", "extra"},
          {"prog", "--pytorch", "t.csv"}, {"prog", "--csv=a.csv"}}) {
      CAPTURE(words[1]);
      const Parsed p = parse(words, "lesson13-figure.csv");
      CHECK_FALSE(p.ok);
      CHECK(p.err == csvOnly);
    }
    const Parsed p = parse({"prog", "--csv", "f.csv", "--pytorch"}, "lesson30-figure.csv", "lesson30-pytorch.csv");
    CHECK_FALSE(p.ok);
    CHECK(p.err == "usage: prog [--csv lesson30-figure.csv] [--pytorch lesson30-pytorch.csv]\n");
  }
}
