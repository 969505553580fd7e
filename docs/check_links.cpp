// check-links: walks every page of the generated site and fails on a broken internal link: a
// href or src to a file that is not there, or to an anchor (#id) the target page does not have.
// Links that leave the site (http:, https:, mailto:, javascript:) are not followed. Given the folder
// of pictures the build drew, it also fails on a picture no page shows (by src, href, or the
// data-source attribute of an SVG the page generator inlined).
//
//   check-links <site/html> [<pictures folder>]
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

// Every id="..." and name="..." on a page: the anchors a #fragment may point to.
std::set<std::string> anchorsOf(const std::string& html) {
  static const std::regex anchor(R"re(\s(?:id|name)\s*=\s*"([^"]+)")re");
  std::set<std::string> ids;
  for (std::sregex_iterator it(html.begin(), html.end(), anchor), end; it != end; ++it) ids.insert((*it)[1]);
  return ids;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: check-links <site/html> [<pictures folder>]\n");
    return 2;
  }
  const fs::path root = fs::weakly_canonical(argv[1]);
  if (!fs::is_directory(root)) {
    std::fprintf(stderr, "check-links: %s is not a folder: build the docs target first\n", argv[1]);
    return 1;
  }
  std::map<fs::path, std::set<std::string>> anchors;
  std::vector<fs::path> pages;
  for (const auto& e : fs::recursive_directory_iterator(root))
    if (e.is_regular_file() && e.path().extension() == ".html") pages.push_back(e.path());
  const auto anchorsIn = [&](const fs::path& p) -> const std::set<std::string>& {
    auto it = anchors.find(p);
    if (it == anchors.end()) it = anchors.emplace(p, anchorsOf(read(p))).first;
    return it->second;
  };

  static const std::regex link(R"re(\s(href|src)\s*=\s*"([^"]*)")re");
  size_t checked = 0, broken = 0;
  for (const auto& page : pages) {
    const std::string html = read(page);
    for (std::sregex_iterator it(html.begin(), html.end(), link), end; it != end; ++it) {
      std::string target = (*it)[2];
      if (target.empty() || target.rfind("http:", 0) == 0 || target.rfind("https:", 0) == 0 ||
          target.rfind("mailto:", 0) == 0 || target.rfind("javascript:", 0) == 0 || target.find("$") != std::string::npos)
        continue;
      std::string fragment;
      if (const auto hash = target.find('#'); hash != std::string::npos) {
        fragment = target.substr(hash + 1);
        target = target.substr(0, hash);
      }
      if (const auto query = target.find('?'); query != std::string::npos) target = target.substr(0, query);
      const fs::path file = target.empty() ? page : fs::weakly_canonical(page.parent_path() / target);
      ++checked;
      const std::string where = fs::relative(page, root).string();
      if (!fs::exists(file)) {
        std::printf("%s: %s \"%s\": no such file\n", where.c_str(), (*it)[1].str().c_str(), (*it)[2].str().c_str());
        ++broken;
      } else if (!fragment.empty() && file.extension() == ".html" && !anchorsIn(file).count(fragment)) {
        std::printf("%s: href \"%s\": %s has no anchor '%s'\n", where.c_str(), (*it)[2].str().c_str(),
                    fs::relative(file, root).c_str(), fragment.c_str());
        ++broken;
      }
    }
  }
  std::printf("%zu pages, %zu internal links and images checked, %zu broken\n", pages.size(), checked, broken);

  size_t unused = 0, pictures = 0;
  if (argc == 3) {
    std::string all;
    for (const auto& page : pages) all += read(page);
    for (const auto& e : fs::directory_iterator(argv[2])) {
      if (!e.is_regular_file()) continue;
      ++pictures;
      const std::string name = e.path().filename().string();
      if (all.find("\"" + name + "\"") == std::string::npos && all.find("/" + name + "\"") == std::string::npos) {
        std::printf("%s: drawn by the build but shown on no page\n", name.c_str());
        ++unused;
      }
    }
    std::printf("%zu pictures drawn by the build, %zu shown on no page\n", pictures, unused);
  }
  return broken == 0 && unused == 0 && checked > 0 ? 0 : 1;
}
