// ctest course.needs: lessons/needs.tsv, the one table of what each lesson needs, agrees with what
// shows it and with the code it describes.
//
//   workbook-needs-check <repo> <NN-name,...> <NN,... with multi-device suites> [--update-readme]
//
// It fails (exit 1, one line per problem) when
//   - the table has no row, or more than one, for a lesson of the manifest, or a row it cannot read;
//   - README.md's lesson table has no Needs cell for a lesson, or one that is not wb::needsText(row)
//     (--update-readme writes them: the column is generated, never typed);
//   - a row's toolkit B is not the newest `#if CUDA_VERSION >=` (or CUDART_VERSION) guard in the
//     lesson's main.cpp (12.0, the course's floor, where it has none): a guard added or removed
//     without the table;
//   - a lesson with multi-device suites (MULTI_DEVICE_SUITES in lessons/CMakeLists.txt) whose gpus
//     column does not name them, or one without that names them.
#include "needs.hpp"

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace {

std::string read(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> split(const std::string& text, char by) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string part; std::getline(in, part, by);) out.push_back(part);
  return out;
}

std::string trim(const std::string& s) {
  const size_t from = s.find_first_not_of(' ');
  return from == std::string::npos ? "" : s.substr(from, s.find_last_not_of(' ') - from + 1);
}

// The newest CUDA version main.cpp guards a part with; 12000 (the course's floor) without a guard.
int newestGuard(const std::string& source) {
  static const std::regex guard(R"(#\s*if\s+CUDA(RT)?_VERSION\s*>=\s*([0-9]+))");
  int newest = 12000;
  for (std::sregex_iterator it(source.begin(), source.end(), guard), end; it != end; ++it)
    newest = std::max(newest, std::stoi((*it)[2]));
  return newest;
}

// README's lesson table: "| [NN-name](lessons/NN-name/main.cpp) | learn | needs | calls |".
constexpr size_t kNeedsCell = 2;

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4 && !(argc == 5 && std::string(argv[4]) == "--update-readme")) {
    std::fprintf(stderr, "usage: workbook-needs-check <repo> <NN-name,...> <NN,...> [--update-readme]\n");
    return 2;
  }
  const std::string repo = argv[1];
  const std::vector<std::string> lessons = split(argv[2], ',');
  const std::vector<std::string> multiList = split(argv[3], ',');
  const std::set<std::string> multi(multiList.begin(), multiList.end());
  const bool update = argc == 5;
  std::vector<std::string> problems;

  std::map<int, wb::LessonNeeds> rows;
  try {
    for (const wb::LessonNeeds& r : wb::readNeedsTable(repo + "/lessons/needs.tsv"))
      if (!rows.emplace(r.lesson, r).second)
        problems.push_back("lessons/needs.tsv: two rows for lesson " + std::to_string(r.lesson));
  } catch (const std::exception& e) {
    std::printf("FAIL %s\n", e.what());
    return 1;
  }

  std::vector<std::string> readme = split(read(repo + "/README.md"), '\n');
  for (const std::string& folder : lessons) {
    const std::string nn = folder.substr(0, 2);
    const auto row = rows.find(std::stoi(nn));
    if (row == rows.end()) {
      problems.push_back("lessons/needs.tsv has no row for lesson " + nn);
      continue;
    }
    const wb::LessonNeeds r = row->second;  // a copy: the row is erased, to find rows left over
    rows.erase(row);

    const int guard = newestGuard(read(repo + "/lessons/" + folder + "/main.cpp"));
    if (r.toolkit.every != guard)
      problems.push_back("lessons/needs.tsv: lesson " + nn + "'s toolkit is " + wb::toolkitText(r.toolkit.every) +
                         " for all steps, but the newest CUDA_VERSION guard in lessons/" + folder + "/main.cpp is " +
                         wb::toolkitText(guard));
    const bool names = r.gpus.find("multi-device suite") != std::string::npos;
    if (names != (multi.count(nn) > 0))
      problems.push_back("lessons/needs.tsv: lesson " + nn + "'s gpus column (" + r.gpus + ") " +
                         (names ? "names multi-device suites, which lessons/CMakeLists.txt does not give it"
                                : "does not say that its multi-device suites need 2"));

    const std::string link = "| [" + folder + "](lessons/" + folder + "/main.cpp) |";
    const auto line =
        std::find_if(readme.begin(), readme.end(), [&](const std::string& l) { return l.rfind(link, 0) == 0; });
    if (line == readme.end()) {
      problems.push_back("README.md: no row of the lesson table starts '" + link + "'");
      continue;
    }
    // The cells between the outer bars; none of them holds a '|'.
    std::vector<std::string> cells = split(line->substr(2, line->size() - 4), '|');
    for (std::string& c : cells) c = trim(c);
    const std::string want = wb::needsText(r);
    if (cells.size() != 4 || cells[kNeedsCell] != want) {
      if (update && cells.size() == 4) {
        cells[kNeedsCell] = want;
      } else if (update && cells.size() == 3) {
        cells.insert(cells.begin() + kNeedsCell, want);
      } else {
        problems.push_back("README.md: lesson " + nn + "'s Needs cell (the third of four) should read: " + want);
        continue;
      }
      *line = "| " + cells[0] + " | " + cells[1] + " | " + cells[2] + " | " + cells[3] + " |";
    }
  }
  for (const auto& [n, r] : rows)
    problems.push_back("lessons/needs.tsv: a row for lesson " + std::string(n < 10 ? "0" : "") + std::to_string(n) +
                       ", which the manifest does not have");

  if (update) {
    std::ofstream out(repo + "/README.md");
    for (const std::string& l : readme) out << l << "\n";
  }
  for (const std::string& p : problems) std::printf("FAIL %s\n", p.c_str());
  if (!problems.empty()) {
    std::printf("(README's Needs column is generated: workbook-needs-check %s ... --update-readme rewrites it)\n", repo.c_str());
    return 1;
  }
  std::printf("lessons/needs.tsv: %zu lessons, README's Needs column and every main.cpp's newest guard agree\n", lessons.size());
  return 0;
}
