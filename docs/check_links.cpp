// check-links: walks every page of the generated site and fails on a broken internal link: a
// href or src to a file that is not there, or to an anchor (#id) the target page does not have.
// Links that leave the site (http:, https:, mailto:, javascript:) are not followed. Given the folder
// of pictures the build drew, it also fails on a picture no page shows (by src, href, or the
// data-source attribute of an SVG the page generator inlined).
//
//   check-links <site/html> [<pictures folder>]
//
// With --lint it checks what the pages say rather than where they point (ctest docs.lint): no
// literal HTML tag (&lt;tt&gt;, the mark of a code span Doxygen did not convert) and no stray
// backtick in a page's text outside code; every picture the build drew and a page inlined
// (<svg class="diagram">) carries its size rule (its natural width, and the width below which it
// scrolls instead of shrinking); no line of program output (<pre class="fragment output">) wider
// than <columns>, what a box shows at 1280 px, so none hides its end behind a sideways scroll; and
// every "FAIL" line generate-pages wrote to its findings file (the cheat sheet naming a call the
// course does not make, an error without notes, a page over its reading time). "NOTE" lines are
// shown without failing.
//
//   check-links --lint <site/html> <lint-findings.txt> <columns>
#include "columns.hpp"  // how wide a line of text is on the page, as generate-pages wraps it

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <regex>
#include <set>
#include <sstream>
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

// The text a reader sees: the page without scripts, styles, code and program output (where
// backticks and angle brackets are content), inlined pictures and tags.
// A short piece of text around a position, on one line.
std::string around(const std::string& text, size_t at) {
  const std::string piece = text.substr(at >= 60 ? at - 60 : 0, 130);
  return std::regex_replace(piece, std::regex(R"(\s+)"), " ");
}

std::string readableText(const std::string& html) {
  static const std::vector<std::pair<std::string, std::string>> hidden = {
      {"<script", "</script>"}, {"<style", "</style>"}, {"<pre", "</pre>"},
      {"<code", "</code>"},     {"<svg", "</svg>"},     {"<div class=\"fragment\">", "</div><!-- fragment -->"}};
  std::string out;
  for (size_t at = 0; at < html.size();) {
    bool skipped = false;
    for (const auto& [open, close] : hidden)
      if (html.compare(at, open.size(), open) == 0) {
        const size_t end = html.find(close, at + open.size());
        at = end == std::string::npos ? html.size() : end + close.size();
        out += ' ';
        skipped = true;
        break;
      }
    if (skipped) continue;
    if (html[at] == '<') {  // a tag: nothing of it is text
      const size_t end = html.find('>', at);
      at = end == std::string::npos ? html.size() : end + 1;
      out += ' ';
      continue;
    }
    out += html[at++];
  }
  return out;
}

// The lines of a page's program-output boxes wider than `columns`, as a reader sees them: tags
// dropped, an entity one character, one column per UTF-8 code point.
std::vector<std::string> tooWideOutput(const std::string& html, size_t columns) {
  static const std::regex box(R"re(<pre class="fragment output">([\s\S]*?)</pre>)re");
  static const std::regex tag(R"(<[^>]*>)"), entity(R"(&[#A-Za-z0-9]+;)");
  std::vector<std::string> out;
  for (std::sregex_iterator it(html.begin(), html.end(), box), end; it != end; ++it) {
    std::stringstream text(std::regex_replace(std::regex_replace((*it)[1].str(), tag, ""), entity, "&"));
    for (std::string line; std::getline(text, line);) {
      const size_t width = columnsOf(line);
      if (width > columns) out.push_back(std::to_string(width) + " characters: " + line.substr(0, 80) + "...");
    }
  }
  return out;
}

int lint(const fs::path& root, const fs::path& findings, size_t columns) {
  size_t pages = 0, failures = 0, diagrams = 0, outputs = 0;
  static const std::regex literalTag(R"(&lt;/?(tt|code|b|i|em|strong|a|br|p|span|div|sup|sub|ul|li)(\s|&gt;|/))");
  static const std::regex diagram(R"re(<svg class="diagram"[^>]*>)re");
  static const std::regex sizeRule(R"re(data-natural-width="[0-9]+" style="width:[0-9]+px;min-width:[0-9]+px")re");
  for (const auto& e : fs::recursive_directory_iterator(root)) {
    if (!e.is_regular_file() || e.path().extension() != ".html") continue;
    ++pages;
    const std::string html = read(e.path());
    const std::string where = fs::relative(e.path(), root).string();
    const std::string text = readableText(html);
    std::smatch m;
    for (auto from = text.cbegin(); std::regex_search(from, text.cend(), m, literalTag); from = m.suffix().first) {
      const size_t at = static_cast<size_t>(m.position(0) + (from - text.cbegin()));
      std::printf("%s: a literal tag in the text: ...%s...\n", where.c_str(), around(text, at).c_str());
      ++failures;
    }
    for (size_t at = text.find('`'); at != std::string::npos; at = text.find('`', at + 1)) {
      std::printf("%s: a stray backtick in the text: ...%s...\n", where.c_str(), around(text, at).c_str());
      ++failures;
    }
    for (const auto& wide : tooWideOutput(html, columns)) {
      std::printf("%s: an output line wider than its box (%zu characters at 1280 px), its end hidden: %s\n", where.c_str(),
                  columns, wide.c_str());
      ++failures;
    }
    for (size_t at = html.find("<pre class=\"fragment output\">"); at != std::string::npos; at = html.find("<pre class=\"fragment output\">", at + 1))
      ++outputs;
    for (std::sregex_iterator it(html.begin(), html.end(), diagram), end; it != end; ++it) {
      ++diagrams;
      if (!std::regex_search(it->str(), sizeRule)) {
        std::printf("%s: a picture without its size rule: %s\n", where.c_str(), it->str().substr(0, 160).c_str());
        ++failures;
      }
    }
  }
  std::ifstream in(findings);
  if (!in) {
    std::printf("%s: not found: build the docs target first\n", findings.c_str());
    ++failures;
  }
  size_t notes = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("FAIL ", 0) == 0) {
      std::printf("%s\n", line.substr(5).c_str());
      ++failures;
    } else if (line.rfind("NOTE ", 0) == 0) {
      std::printf("note: %s\n", line.substr(5).c_str());
      ++notes;
    }
  }
  std::printf("%zu pages, %zu output boxes and %zu inlined pictures read, %zu problems, %zu notes\n", pages, outputs, diagrams,
              failures, notes);
  return failures == 0 && pages > 0 && outputs > 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--lint") return lint(fs::weakly_canonical(argv[2]), argv[3], std::stoul(argv[4]));
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: check-links <site/html> [<pictures folder>]\n       check-links --lint <site/html> <lint-findings.txt> <columns>\n");
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
