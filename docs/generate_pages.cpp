// generate-pages: writes every page Doxygen reads, so nothing on the site is a hand-kept copy.
//
//   generate-pages <repo> <out dir> <images dir> <manifest.tsv>
//
// The manifest has one lesson a line: folder, title, what its assertions prove, the lessons it
// needs (comma-separated numbers), whether it has multi-device suites, its program's name, its
// short title (empty: made from the folder's name), and which ctest entry runs each of its doctest
// suites (comma-separated suite=entry: the suites share a few processes, lessonNN.claims and so on).
//
// For each lesson, lessons/NN-name/lesson.md becomes lessonNN.md:
//   - the title line becomes "Lesson NN · <Name>" (short, for the sidebar), with the manifest's
//     title under it, and previous / next links top and bottom
//   - "## You will learn" and generated facts (what you need first, reading time, how to run it,
//     where the whole source is) open the page
//   - "## N. Title" steps get an anchor, and must match the step marks the program printed
//   - @OUTPUT N@    what the program printed in step N (docs/output/lessonNN.txt, split on the
//                   "=== N. Title" lines wb::step prints)
//   - @OUTPUT@      the whole recorded run, folded
//   - @STACKS N@    the context stacks the program printed in step N, drawn bottom to top
//   - @DIAGRAM f@   the SVG the build drew from a .dot file, inlined so it follows the theme
//   - @FIGURE f@    a measured figure that may not be recorded yet (lesson 18's needs two GPUs):
//                   as @DIAGRAM f@ when docs/output/f.csv exists (the build draws f.svg from it),
//                   otherwise one line saying that it has not been recorded yet
//   - @ASSERTIONS@  the suites and cases of tests/lessonNN_name.cpp, each with an anchor
// and lessonNN_source.md holds the whole program and test file. Beside them: mainpage.md (with the
// course map), api.md (every Driver API call the course makes, where, and which assertions use
// it), the pages of docs/pages, and search-data.js for the site's search box.
//
// It fails, naming the file, when a page and the program's output disagree: a step the page has
// and the output lacks or the other way round, a title that differs, an absolute path of the
// recording machine in an output, a placeholder it does not know.
#include "exercise_file.hpp"  // tests/exercises/: the exercises as the learner's file and the checks state them

#include <algorithm>
#include <cctype>
#include <cmath>
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

std::vector<std::string> problems;

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write(const fs::path& p, const std::string& text) { std::ofstream(p, std::ios::binary) << text; }

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  for (std::string l; std::getline(ss, l);) out.push_back(l);
  return out;
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, sep);) out.push_back(item);
  return out;
}

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r\n");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t\r\n") - b + 1);
}

std::string replaceAll(std::string s, const std::string& from, const std::string& to) {
  for (size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

std::string html(const std::string& s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

// "Push, pop, set" -> "push_pop_set": the anchors of headings and test cases.
std::string slugOf(const std::string& text, size_t limit = 60) {
  std::string slug;
  for (char c : text) {
    const char l = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    if (std::isalnum(static_cast<unsigned char>(l)))
      slug += l;
    else if (!slug.empty() && slug.back() != '_')
      slug += '_';
  }
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  slug = slug.substr(0, limit);
  while (!slug.empty() && slug.back() == '_') slug.pop_back();
  return slug;
}

// Markdown would read __managed__ as bold: such names go in code spans.
std::string codeSpans(const std::string& text) { return std::regex_replace(text, std::regex("(__[a-z]+__)"), "`$1`"); }

struct Lesson {
  std::string folder, nn, slug, title, proves, program, shortName;
  std::vector<std::string> needs;
  bool multi = false;
  std::map<std::string, std::string> suiteTests;  // doctest suite -> the ctest entry that runs it
  std::string name() const {  // the manifest's SHORT, else "context-stack" -> "Context stack"
    if (!shortName.empty()) return shortName;
    std::string n = replaceAll(slug, "-", " ");
    n[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(n[0])));
    return n;
  }
  std::string testFile() const { return "tests/lesson" + nn + "_" + replaceAll(slug, "-", "_") + ".cpp"; }
  std::string testBinary() const { return "build/lessons/lesson" + nn + "_" + replaceAll(slug, "-", "_") + "_tests"; }
  std::string page() const { return "lesson" + nn; }
};

// ---------------------------------------------------------------- recorded output

struct Recorded {
  bool exists = false;
  std::string header;                                   // "recorded <date> on <gpus>, ..."
  std::vector<std::string> all;                         // every line after the two header lines
  std::map<int, std::string> titles;                    // step -> title
  std::map<int, std::vector<std::string>> steps;        // step -> its lines
  std::vector<std::string> before;                      // lines before the first step mark
};

Recorded readRecorded(const fs::path& file) {
  Recorded r;
  if (!fs::exists(file)) return r;
  r.exists = true;
  const auto ls = lines(read(file));
  static const std::regex mark(R"(^=== ([0-9]+)\. (.*)$)");
  int current = 0;
  for (size_t i = 0; i < ls.size(); ++i) {
    if (i == 0 && ls[i].rfind("$ ", 0) == 0) continue;
    if (i == 1 && ls[i].rfind("# ", 0) == 0) {
      r.header = ls[i].substr(2);
      continue;
    }
    r.all.push_back(ls[i]);
    std::smatch m;
    if (std::regex_match(ls[i], m, mark)) {
      current = std::stoi(m[1]);
      r.titles[current] = m[2];
      r.steps[current];
      continue;
    }
    (current ? r.steps[current] : r.before).push_back(ls[i]);
  }
  for (auto& [n, body] : r.steps) {  // blank lines around a step's output say nothing
    while (!body.empty() && trim(body.front()).empty()) body.erase(body.begin());
    while (!body.empty() && trim(body.back()).empty()) body.pop_back();
  }
  static const std::regex absolute(R"re((^|[\s(='"])/(work|home|tmp|root|build|usr/src)/)re");
  for (const auto& l : r.all)
    if (std::regex_search(l, absolute))
      problems.push_back(file.string() + ": an absolute path of the recording machine: '" + l +
                         "' (record-outputs writes paths relative to the build folder)");
  return r;
}

std::string outputBlock(const std::vector<std::string>& body) {
  std::string out = "<div class=\"output-label\">What the program printed</div>\n\\verbatim\n";
  for (const auto& l : body) out += l + "\n";
  return out + "\\endverbatim\n";
}

// Lines "  <operation>   stack (bottom .. top): [A B]" become a row of stacks, bottom to top,
// with each operation on the arrow that leads to the stack it made.
std::string stackDiagram(const std::vector<std::string>& body, const std::string& where) {
  static const std::regex state(R"(^\s*(.*?):?\s+stack \(bottom \.\. top\): \[(.*)\]\s*$)");
  std::string out = "\\htmlonly\n<div class=\"stack-steps\" role=\"img\" aria-label=\"the context stack after each call\">\n";
  int drawn = 0;
  for (const auto& l : body) {
    std::smatch m;
    if (!std::regex_match(l, m, state)) continue;
    const std::string op = trim(m[1]);
    std::vector<std::string> contexts;
    for (const auto& c : split(m[2], ' '))
      if (!c.empty()) contexts.push_back(c);
    const bool first = drawn++ == 0;
    if (!first) out += "<div class=\"stack-arrow\"><span>" + html(op) + "</span></div>\n";
    out += "<div class=\"stack-state\">";
    if (first) out += "<div class=\"stack-caption\">" + html(op) + "</div>";
    out += "<div class=\"stack-column\">";
    if (contexts.empty()) out += "<div class=\"stack-empty\">empty</div>";
    for (auto it = contexts.rbegin(); it != contexts.rend(); ++it)
      out += "<div class=\"stack-ctx" + std::string(it == contexts.rbegin() ? " stack-top" : "") + "\">" + html(*it) +
             "</div>";
    out += "</div></div>\n";
  }
  if (drawn < 2) problems.push_back(where + ": @STACKS@ found fewer than two stacks in that step's output");
  return out + "</div>\n\\endhtmlonly\n";
}

// An SVG drawn by the build, inlined: black strokes and text become currentColor and the white
// background goes, so the picture follows the site's light and dark themes and scales with the page.
std::string inlineSvg(const fs::path& file, const std::string& where) {
  if (!fs::exists(file)) {
    problems.push_back(where + ": no picture " + file.string());
    return "";
  }
  std::string svg = read(file);
  const auto start = svg.find("<svg");
  if (start == std::string::npos) {
    problems.push_back(file.string() + ": not an SVG");
    return "";
  }
  svg = svg.substr(start);
  svg = std::regex_replace(svg, std::regex(R"(<!--[\s\S]*?-->)"), "");
  svg = std::regex_replace(svg, std::regex(R"re(<polygon fill="white" stroke="(transparent|none)"[^>]*/>)re"), "");
  for (const char* c : {"black", "#000000"}) {
    svg = replaceAll(svg, std::string("stroke=\"") + c + "\"", "stroke=\"currentColor\"");
    svg = replaceAll(svg, std::string("fill=\"") + c + "\"", "fill=\"currentColor\"");
  }
  // Graphviz writes a size in points; the viewBox alone lets CSS scale it to the column.
  svg = std::regex_replace(svg, std::regex(R"re(<svg width="[^"]*" height="[^"]*")re"), "<svg");
  svg.insert(4, " class=\"diagram\" data-source=\"" + file.filename().string() + "\"");
  return "\\htmlonly\n<div class=\"diagram-box\">" + svg + "</div>\n\\endhtmlonly\n";
}

// ---------------------------------------------------------------- test files

struct TestCase {
  std::string suite, name, anchor, body;
};

std::vector<TestCase> readTests(const fs::path& file, const std::string& nn) {
  const std::string text = read(file);
  static const std::regex item(R"re((TEST_SUITE|TEST_CASE)\(((?:"[^"]*"\s*)+))re");
  std::vector<TestCase> cases;
  std::string suite;
  std::vector<size_t> starts;
  for (std::sregex_iterator it(text.begin(), text.end(), item), end; it != end; ++it) {
    std::string name;
    const std::string pieces = (*it)[2];
    static const std::regex piece(R"re("([^"]*)")re");
    for (std::sregex_iterator p(pieces.begin(), pieces.end(), piece), e; p != e; ++p) name += (*p)[1];
    if ((*it)[1] == "TEST_SUITE") {
      suite = name;
      continue;
    }
    if (name.rfind("child: ", 0) == 0) continue;  // runs only inside a child that a listed case starts
    TestCase c{suite, name, "lesson" + nn + "_" + slugOf(name), ""};
    const size_t from = static_cast<size_t>(it->position());
    const size_t to = text.find("TEST_CASE(", from + 10);
    c.body = text.substr(from, to == std::string::npos ? std::string::npos : to - from);
    cases.push_back(c);
  }
  return cases;
}

std::string assertionList(const std::vector<TestCase>& cases, const Lesson& l) {
  std::string md = "Generated from `" + l.testFile() + "`; every line is a doctest case that ran on a GPU.\n";
  std::string suite = "\x01";
  for (const auto& c : cases) {
    if (c.suite != suite) {
      suite = c.suite;
      const auto entry = l.suiteTests.find(suite);
      const std::string test = entry != l.suiteTests.end() ? entry->second : "lesson" + l.nn + ".claims";
      md += "\n- **Suite `" + suite + "`** (ctest runs it in `" + test + "`):\n";
    }
    md += "  - \\anchor " + c.anchor + " " + codeSpans(c.name) + "\n";
  }
  return md;
}

// ---------------------------------------------------------------- snippets and API calls

struct Snippet {
  std::string name, body;
};

std::map<std::string, Snippet> readSnippets(const fs::path& file) {
  std::map<std::string, Snippet> out;
  static const std::regex mark(R"(^\s*//! \[([A-Za-z0-9_-]+)\]\s*$)");
  std::string open;
  for (const auto& l : lines(read(file))) {
    std::smatch m;
    if (std::regex_match(l, m, mark)) {
      open = open.empty() ? std::string(m[1]) : "";
      if (!open.empty()) out[open].name = open;
      continue;
    }
    if (!open.empty()) out[open].body += l + "\n";
  }
  return out;
}

std::set<std::string> callsIn(const std::string& code) {
  static const std::regex call(R"(\b(cu[A-Z][A-Za-z0-9_]*)\s*\()");
  std::set<std::string> out;
  for (std::sregex_iterator it(code.begin(), code.end(), call), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

// The section of NVIDIA's Driver API reference that documents a call, by its prefix.
// The page's Exercises section, from the learner's file (task, check, where it is taught, the
// signature) and the check file (the hint), so the page says exactly what the files say.
std::string exercisesSection(const fs::path& repo, const Lesson& l, std::vector<std::string>& problems) {
  const std::string learnerFile = "lessons/" + l.folder + "/exercises.cpp";
  const std::string checkFile = "tests/exercises/exercise" + l.nn + "_" + replaceAll(l.slug, "-", "_") + ".cpp";
  if (!fs::exists(repo / learnerFile) || !fs::exists(repo / checkFile)) {
    problems.push_back(l.folder + ": @EXERCISES@ needs " + learnerFile + " and " + checkFile);
    return "";
  }
  std::vector<std::string> found;
  const auto tasks = wbx::parseExercises(read(repo / learnerFile), found);
  std::map<std::string, wbx::CheckText> checks;
  for (const auto& c : wbx::parseChecks(read(repo / checkFile), found)) checks[c.name] = c;
  for (const auto& f : found) problems.push_back(l.folder + ": " + f);
  std::string md =
      "Each exercise is one function in `" + learnerFile + "`, whose body starts as `wb::notDone();`. Write it "
      "there (nothing else needs to change), build, and check it on the GPU:\n\n"
      "    cmake --build build && ctest --test-dir build -R exercise" + l.nn + " --output-on-failure\n\n"
      "A check that passes says `done`; one not started says `not done` and prints its hint; a wrong answer says "
      "`FAILED` with the assertion that failed. `cmake --workflow --preset exercises` checks every lesson's and "
      "ends with the progress table. The reference solutions are in `tests/exercises/" + l.folder +
      "/solution/`, one file per exercise, and beside them, in `wrong/`, the mistakes each check is proven to "
      "catch: look only once yours passes.\n\n";
  for (const auto& t : tasks) {
    const auto c = checks.find(t.name);
    md += "### " + std::to_string(t.number) + ". " + t.title + " {#" + l.page() + "_exercise_" + slugOf(t.name) + "}\n\n";
    md += "    " + t.signature + "\n\n";
    md += "**Task.** " + t.task + "\n\n";
    // "exercise05.bounded-upload uploads ..." reads on as "The check (`exercise05.bounded-upload`) uploads ...".
    const std::string id = "exercise" + l.nn + "." + t.name;
    const bool named = t.check.rfind(id + " ", 0) == 0;
    md += "**The check** (`" + id + "`)" + (named ? t.check.substr(id.size()) : ": " + t.check) + "\n\n";
    md += "**Learn it in:** " + t.learn + "\n\n";
    if (c != checks.end())
      md += "\\htmlonly<details class=\"hint\"><summary>Hint</summary>\\endhtmlonly\n\n" + c->second.hint +
            "\n\n\\htmlonly</details>\\endhtmlonly\n\n";
    else
      problems.push_back(l.folder + ": exercise " + t.name + " has no check in " + checkFile);
  }
  return md;
}

std::string referenceFor(const std::string& call) {
  static const std::vector<std::pair<std::string, std::string>> groups = {
      {"cuDeviceCanAccessPeer", "PEER__ACCESS"}, {"cuDeviceGetP2P", "PEER__ACCESS"},
      {"cuCtxEnablePeerAccess", "PEER__ACCESS"}, {"cuCtxDisablePeerAccess", "PEER__ACCESS"},
      {"cuDeviceGetPCIBusId", "MEM"},         {"cuDeviceGetByPCIBusId", "MEM"},
      {"cuDevicePrimaryCtx", "PRIMARY__CTX"}, {"cuDriverGetVersion", "VERSION"}, {"cuInit", "INITIALIZE"},
      {"cuGetError", "ERROR"},                {"cuGetProcAddress", "DRIVER__ENTRY__POINT"},
      {"cuDevice", "DEVICE"},                 {"cuCtx", "CTX"},                  {"cuModule", "MODULE"},
      {"cuLibrary", "LIBRARY"},               {"cuKernel", "LIBRARY"},           {"cuPointer", "UNIFIED"},
      {"cuMemAdvise", "UNIFIED"},             {"cuMemPrefetch", "UNIFIED"},      {"cuMem", "MEM"},
      {"cuStream", "STREAM"},                 {"cuEvent", "EVENT"},              {"cuLaunch", "EXEC"},
      {"cuFunc", "EXEC"},                     {"cuLink", "MODULE"},
  };
  for (const auto& [prefix, group] : groups)
    if (call.rfind(prefix, 0) == 0)
      return "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__" + group + ".html";
  return "https://docs.nvidia.com/cuda/cuda-driver-api/index.html";
}

// ---------------------------------------------------------------- search data

struct SearchEntry {
  std::string title, url, keywords, text;
};
std::vector<SearchEntry> searchEntries;

std::string plainText(std::string md) {
  md = std::regex_replace(md, std::regex(R"(\\htmlonly[\s\S]*?\\endhtmlonly)"), " ");
  md = std::regex_replace(md, std::regex(R"(\\verbatim[\s\S]*?\\endverbatim)"), " ");
  md = std::regex_replace(md, std::regex(R"(\\(snippet|anchor|ref|subpage|image)\s+\S+)"), " ");
  md = std::regex_replace(md, std::regex(R"(@ref\s+\S+)"), " ");
  md = std::regex_replace(md, std::regex(R"(\{#[^}]*\}|<[^>]+>|[`*#|]|\[|\]\([^)]*\))"), " ");
  md = std::regex_replace(md, std::regex(R"(\s+)"), " ");
  return trim(md);
}

std::string js(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// Each "## " section of a page becomes one search entry, linked to its anchor.
void indexSections(const std::string& md, const std::string& pageTitle, const std::string& url) {
  static const std::regex heading(R"(^##\s+(.*?)\s*\{#([A-Za-z0-9_]+)\}\s*$)");
  std::string title = pageTitle, anchor, body;
  const auto flush = [&] {
    if (!trim(body).empty())
      searchEntries.push_back({title == pageTitle ? pageTitle : pageTitle + " › " + title,
                               url + (anchor.empty() ? "" : "#" + anchor), "", plainText(body)});
    body.clear();
  };
  for (const auto& l : lines(md)) {
    std::smatch m;
    if (std::regex_match(l, m, heading)) {
      flush();
      title = m[1];
      anchor = m[2];
      continue;
    }
    body += l + "\n";
  }
  flush();
}

// ---------------------------------------------------------------- lesson pages

// The little markdown the facts box uses, as HTML: code spans, bold, links, @ref lessonNN.
std::string inlineHtml(const std::string& md, const std::vector<Lesson>& all) {
  std::string out = html(codeSpans(md));
  out = std::regex_replace(out, std::regex(R"re(`([^`]+)`)re"), "<code>$1</code>");
  out = std::regex_replace(out, std::regex(R"re(\*\*([^*]+)\*\*)re"), "<b>$1</b>");
  out = std::regex_replace(out, std::regex(R"re(\[([^\]]+)\]\(([^)]+)\))re"), "<a href=\"$2\">$1</a>");
  for (const auto& l : all)
    out = replaceAll(out, "@ref " + l.page(), "<a class=\"el\" href=\"" + l.page() + ".html\">Lesson " + l.nn + " · " + l.name() + "</a>");
  return out;
}

// Paragraphs and "- " lists (with indented continuation lines).
std::string blockHtml(const std::string& md, const std::vector<Lesson>& all) {
  std::string out, para;
  std::vector<std::string> items;
  const auto flush = [&] {
    if (!items.empty()) {
      out += "<ul>\n";
      for (const auto& i : items) out += "<li>" + inlineHtml(i, all) + "</li>\n";
      out += "</ul>\n";
      items.clear();
    }
    if (!trim(para).empty()) out += "<p>" + inlineHtml(trim(para), all) + "</p>\n";
    para.clear();
  };
  for (const auto& l : lines(md)) {
    if (trim(l).empty()) {
      flush();
    } else if (l.rfind("- ", 0) == 0) {
      if (!trim(para).empty()) flush();
      items.push_back(l.substr(2));
    } else if (!items.empty() && l.rfind("  ", 0) == 0) {
      items.back() += " " + trim(l);
    } else {
      para += " " + l;
    }
  }
  flush();
  return out;
}

std::string nav(const std::vector<Lesson>& all, size_t i) {
  std::string n = "<div class=\"lesson-nav\">";
  n += i ? "<span>Previous: @ref " + all[i - 1].page() + "</span>" : "<span>Start: @ref index</span>";
  n += i + 1 < all.size() ? "<span>Next: @ref " + all[i + 1].page() + "</span>"
                          : "<span>Last lesson. Back to @ref index</span>";
  return n + "</div>";
}

size_t words(const std::string& text) {
  std::stringstream ss(plainText(text));
  return static_cast<size_t>(std::distance(std::istream_iterator<std::string>(ss), std::istream_iterator<std::string>()));
}

void lessonPage(const fs::path& repo, const fs::path& out, const fs::path& images, const std::vector<Lesson>& all,
                size_t index, std::map<std::string, std::set<std::string>>& quotedSnippets) {
  const Lesson& l = all[index];
  const fs::path src = repo / "lessons" / l.folder / "lesson.md";
  const std::string where = src.string();
  const Recorded rec = readRecorded(repo / "docs" / "output" / (l.page() + ".txt"));
  const auto cases = readTests(repo / l.testFile(), l.nn);
  const auto snippets = readSnippets(repo / "lessons" / l.folder / "main.cpp");

  std::vector<std::string> ls = lines(read(src));
  if (ls.empty() || ls[0].find("{#" + l.page() + "}") == std::string::npos)
    problems.push_back(where + ": the first line must be the title with {#" + l.page() + "}");

  // "## You will learn" goes into the facts at the top.
  std::string learn;
  std::vector<std::string> body;
  for (size_t i = 1; i < ls.size(); ++i) {
    if (trim(ls[i]) == "## You will learn") {
      for (++i; i < ls.size() && ls[i].rfind("## ", 0) != 0; ++i) learn += ls[i] + "\n";
      --i;
      body.push_back("@@FACTS@@");
      continue;
    }
    body.push_back(ls[i]);
  }
  if (trim(learn).empty()) problems.push_back(where + ": no \"## You will learn\" list");

  static const std::regex step(R"(^## ([0-9]+)\. (.*?)\s*$)");
  static const std::regex other(R"(^## (.*?)\s*$)");
  static const std::regex placeholder(R"(@([A-Z]+)(?: ([A-Za-z0-9_.-]+))?@)");
  static const std::regex snippetLine(R"(^\\snippet (\S+) (\S+)\s*$)");
  std::set<int> stepsOnPage, stepsPlaced;
  std::string text;
  size_t codeLines = 0;
  for (const auto& line : body) {
    std::smatch m;
    if (std::regex_match(line, m, step)) {
      const int n = std::stoi(m[1]);
      stepsOnPage.insert(n);
      if (rec.exists && rec.titles.count(n) && rec.titles.at(n) != std::string(m[2]))
        problems.push_back(where + ": step " + std::to_string(n) + " is \"" + std::string(m[2]) +
                           "\" on the page but \"" + rec.titles.at(n) + "\" in what the program printed");
      text += "## " + std::to_string(n) + ". " + std::string(m[2]) + " {#" + l.page() + "_step" + std::to_string(n) +
              "}\n";
      continue;
    }
    if (std::regex_match(line, m, other) && line.find("{#") == std::string::npos) {
      text += line + " {#" + l.page() + "_" + slugOf(m[1], 40) + "}\n";
      continue;
    }
    if (std::regex_match(line, m, snippetLine)) {
      const std::string file = m[1], name = m[2];
      text += "\\anchor " + l.page() + "_snippet_" + slugOf(name) + "\n" + line + "\n";
      quotedSnippets[file].insert(name);
      if (file == "lessons/" + l.folder + "/main.cpp" && snippets.count(name))
        codeLines += lines(snippets.at(name).body).size();
      continue;
    }
    if (line == "@@FACTS@@") {
      text += line + "\n";
      continue;
    }
    std::string rest = line, expanded;
    for (std::smatch p; std::regex_search(rest, p, placeholder); rest = p.suffix()) {
      expanded += p.prefix();
      const std::string kind = p[1], arg = p[2];
      if (kind == "OUTPUT" && arg.empty()) {
        expanded += rec.exists ? "\\htmlonly<details class=\"whole-run\"><summary>The whole run, as recorded</summary>"
                                 "\\endhtmlonly\n\\verbinclude " + l.page() + ".txt\n\\htmlonly</details>\\endhtmlonly\n"
                               : "No recorded output yet: run `cmake --build build --target record-outputs` on a GPU "
                                 "machine and commit docs/output/.\n";
      } else if (kind == "OUTPUT" || kind == "STACKS") {
        const int n = std::stoi(arg);
        stepsPlaced.insert(n);
        if (!rec.exists) {
          expanded += "(No recorded output yet.)\n";
        } else if (!rec.steps.count(n)) {
          problems.push_back(where + ": @" + kind + " " + arg + "@ but the program printed no step " + arg);
        } else {
          expanded += kind == "OUTPUT" ? outputBlock(rec.steps.at(n)) : stackDiagram(rec.steps.at(n), where);
        }
      } else if (kind == "DIAGRAM") {
        expanded += inlineSvg(images / (arg + ".svg"), where);
      } else if (kind == "FIGURE") {
        if (fs::exists(repo / "docs" / "output" / (arg + ".csv")))
          expanded += inlineSvg(images / (arg + ".svg"), where);
        else
          expanded += "*The figure has not been recorded yet:* there is no `docs/output/" + arg +
                      ".csv`. The run that writes it needs what this step needs (see above); "
                      "`cmake --build build --target record-outputs` on such a machine records it.\n";
      } else if (kind == "ASSERTIONS") {
        expanded += assertionList(cases, l);
      } else if (kind == "EXERCISES") {
        expanded += exercisesSection(repo, l, problems);
      } else {
        problems.push_back(where + ": unknown placeholder " + std::string(p[0]));
      }
    }
    text += expanded + rest + "\n";
  }
  if (rec.exists)
    for (const auto& [n, title] : rec.titles)
      if (!stepsPlaced.count(n))
        problems.push_back(where + ": the program printed step " + std::to_string(n) + " (" + title +
                           ") but the page places no @OUTPUT " + std::to_string(n) + "@");
  for (int n : stepsOnPage)
    if (rec.exists && !rec.titles.count(n))
      problems.push_back(where + ": step " + std::to_string(n) + " is on the page but the program printed no such step");
  if (text.find("@ASSERTIONS@") != std::string::npos || text.find("Generated from `tests/") == std::string::npos)
    problems.push_back(where + ": @ASSERTIONS@ is missing (the list of assertions goes there)");

  // The facts every lesson opens with, after its introduction: one box of plain HTML (Doxygen
  // would split a markdown <div> at every paragraph).
  const size_t proseWords = words(text);
  const size_t minutes = std::max<size_t>(1, static_cast<size_t>(std::ceil(proseWords / 200.0 + codeLines / 40.0)));
  std::string facts = "\\htmlonly\n<div class=\"lesson-facts\">\n<p class=\"lesson-title\">" + inlineHtml(l.title, all) +
                      "</p>\n<p><b>You will learn</b></p>\n" + blockHtml(learn, all);
  facts += "<p><b>You need</b> ";
  if (l.needs.empty()) {
    facts += "nothing from earlier lessons: this is where the course starts. ";
  } else {
    for (size_t i = 0; i < l.needs.size(); ++i)
      facts += (i ? (i + 1 == l.needs.size() ? " and " : ", ") : "") + inlineHtml("@ref lesson" + l.needs[i], all);
    facts += ". ";
  }
  facts += "To run it, a CUDA device of compute capability 7.5 or newer";
  facts += l.multi ? " (two for its multi-device suite; with one, that suite reports itself skipped).</p>\n" : ".</p>\n";
  facts += "<p><b>Time</b> about " + std::to_string(minutes) + " minute" + (minutes == 1 ? "" : "s") + " to read (" +
           std::to_string(proseWords) + " words and " + std::to_string(codeLines) + " lines of quoted code).</p>\n";
  facts += "<p><b>Run it</b> " + inlineHtml("`ctest --test-dir build -R lesson" + l.nn + " -V`, or `build/lessons/" + l.program + "`.", all);
  if (rec.exists)
    facts += " The output on this page was " + html(rec.header) + " (" +
             inlineHtml("`cmake --build build --target record-outputs`", all) + ").";
  facts += "</p>\n</div>\n\\endhtmlonly\n\n**The whole source:** \\subpage " + l.page() + "_source \"lessons/" + l.folder +
           "/main.cpp and " + l.testFile() + "\"; the helpers it calls are on @ref shared_code.\n";
  text = replaceAll(text, "@@FACTS@@\n", facts);

  const std::string heading = "# Lesson " + l.nn + " · " + l.name() + " {#" + l.page() + "}";
  const std::string page = heading + "\n\n" + nav(all, index) + "\n\n" + text + "\n" + nav(all, index) + "\n";
  write(out / (l.page() + ".md"), page);
  indexSections(text, "Lesson " + l.nn + " · " + l.name(), l.page() + ".html");
  searchEntries.push_back({"Lesson " + l.nn + " · " + l.name(), l.page() + ".html", l.title, plainText(learn + l.proves)});

  std::string source = "# Lesson " + l.nn + " source {#" + l.page() + "_source}\n\n";
  source += "The whole program, `lessons/" + l.folder + "/main.cpp`, as the build compiles it (the `//! [name]` lines "
            "mark what @ref " + l.page() + " quotes):\n\n\\include lessons/" + l.folder + "/main.cpp\n\n";
  source += "Its assertions, `" + l.testFile() + "` (ctest runs its suites in a few processes: `lesson" + l.nn +
            ".claims`, and `lesson" + l.nn + ".measured` for those that measure free memory or time; one suite "
            "alone: `" + l.testBinary() + " -ts=<suite>`):\n\n\\include " + l.testFile() + "\n";
  write(out / (l.page() + "_source.md"), source);
}

// ---------------------------------------------------------------- the API index

void apiPage(const fs::path& repo, const fs::path& out, const std::vector<Lesson>& all,
             const std::map<std::string, std::set<std::string>>& quoted) {
  struct Use {
    std::set<std::string> lessons;                          // lesson numbers
    std::vector<std::pair<std::string, std::string>> snippets;  // (anchor, label)
    std::vector<std::pair<std::string, std::string>> tests;     // (anchor, case name)
    bool helper = false;
  };
  std::map<std::string, Use> uses;
  for (const auto& l : all) {
    const fs::path program = repo / "lessons" / l.folder / "main.cpp";
    for (const auto& c : callsIn(read(program))) uses[c].lessons.insert(l.nn);
    const std::string file = "lessons/" + l.folder + "/main.cpp";
    for (const auto& [name, s] : readSnippets(program))
      if (quoted.count(file) && quoted.at(file).count(name))
        for (const auto& c : callsIn(s.body)) uses[c].snippets.push_back({l.page() + "_snippet_" + slugOf(name), l.nn + " " + name});
    for (const auto& t : readTests(repo / l.testFile(), l.nn))
      for (const auto& c : callsIn(t.body)) uses[c].tests.push_back({t.anchor, t.name});
  }
  for (const auto& e : fs::directory_iterator(repo / "common"))
    if (e.path().extension() == ".cpp" || e.path().extension() == ".hpp")
      for (const auto& c : callsIn(read(e.path()))) uses[c].helper = true;

  std::string md = "# Driver API index {#api}\n\n"
                   "Every Driver API call the course makes, generated from the lessons, the shared helpers and the "
                   "tests. For each: the lessons whose programs call it, the quoted code that shows it, the "
                   "assertions that exercise it, and the section of NVIDIA's Driver API reference that documents "
                   "it. The search box finds every name here.\n\n"
                   "| Call | Lessons | Quoted in | Assertions | Reference |\n|---|---|---|---|---|\n";
  size_t count = 0;
  for (const auto& [call, u] : uses) {
    if (u.lessons.empty() && u.tests.empty() && !u.helper) continue;
    ++count;
    std::string lessonsCell, quotedCell, testsCell;
    for (const auto& nn : u.lessons) lessonsCell += (lessonsCell.empty() ? "" : ", ") + std::string("@ref lesson") + nn + " \"" + nn + "\"";
    if (u.helper) lessonsCell += std::string(lessonsCell.empty() ? "" : ", ") + "@ref shared_code \"helpers\"";
    std::set<std::string> seen;
    for (const auto& [anchor, label] : u.snippets)
      if (seen.insert(anchor).second) quotedCell += (quotedCell.empty() ? "" : ", ") + std::string("@ref ") + anchor + " \"" + label + "\"";
    size_t n = 0;
    seen.clear();
    for (const auto& [anchor, name] : u.tests)
      if (seen.insert(anchor).second) {
        ++n;
        testsCell += (n > 1 ? " " : "") + std::string("@ref ") + anchor + " \"" + std::to_string(n) + "\"";
      }
    md += "| \\anchor api_" + call + " `" + call + "` | " + (lessonsCell.empty() ? "tests only" : lessonsCell) + " | " +
          (quotedCell.empty() ? "-" : quotedCell) + " | " + (testsCell.empty() ? "-" : testsCell) + " | [reference](" +
          referenceFor(call) + ") |\n";
    std::string described = "Driver API call used in lessons ";
    for (const auto& nn : u.lessons) described += nn + " ";
    for (const auto& [anchor, name] : u.tests) described += name + ". ";
    searchEntries.push_back({call, "api.html#api_" + call, call, described});
  }
  md += "\n" + std::to_string(count) + " calls. The numbers under Assertions link to the test cases, in the order of "
        "the lessons' test files; each lesson's page lists them by name.\n";
  write(out / "api.md", md);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: generate-pages <repo> <out dir> <images dir> <manifest.tsv>\n");
    return 2;
  }
  const fs::path repo = argv[1], out = argv[2], images = argv[3];
  std::vector<Lesson> all;
  for (const auto& row : lines(read(argv[4]))) {
    const auto f = split(row, '\t');
    if (f.size() < 6) continue;
    Lesson l;
    l.folder = f[0];
    l.nn = l.folder.substr(0, 2);
    l.slug = l.folder.substr(3);
    l.title = f[1];
    l.proves = f[2];
    for (const auto& n : split(f[3], ','))
      if (!n.empty()) l.needs.push_back(n.size() == 1 ? "0" + n : n);
    l.multi = f[4] == "1";
    l.program = f[5];
    if (f.size() > 6) l.shortName = f[6];
    if (f.size() > 7)
      for (const auto& pair : split(f[7], ',')) {
        const size_t eq = pair.find('=');
        if (eq != std::string::npos) l.suiteTests[pair.substr(0, eq)] = pair.substr(eq + 1);
      }
    all.push_back(l);
  }
  if (all.empty()) {
    std::fprintf(stderr, "generate-pages: no lessons in %s\n", argv[4]);
    return 1;
  }
  fs::remove_all(out);
  fs::create_directories(out);

  std::map<std::string, std::set<std::string>> quoted;
  for (size_t i = 0; i < all.size(); ++i) lessonPage(repo, out, images, all, i, quoted);

  std::string map = "| Lesson | What you learn | What its assertions prove |\n|---|---|---|\n";
  for (const auto& l : all)
    map += "| @ref " + l.page() + " \"" + l.nn + " " + l.name() + "\" | " + codeSpans(l.title) + " | " + codeSpans(l.proves) + " |\n";
  std::string main = read(repo / "docs" / "mainpage.md");
  if (main.find("@COURSE_MAP@") == std::string::npos) problems.push_back("docs/mainpage.md: @COURSE_MAP@ is missing");
  main = replaceAll(main, "@COURSE_MAP@", map);
  write(out / "mainpage.md", main);
  searchEntries.push_back({"The CUDA Driver API workbook", "index.html", "course start", plainText(main)});

  for (const auto& e : fs::directory_iterator(repo / "docs" / "pages")) {
    if (e.path().extension() != ".md") continue;
    const std::string md = read(e.path());
    fs::copy_file(e.path(), out / e.path().filename(), fs::copy_options::overwrite_existing);
    std::smatch m;
    static const std::regex title(R"(^# (.*?)\s*\{#([A-Za-z0-9_]+)\})");
    if (std::regex_search(md, m, title)) indexSections(md, m[1], std::string(m[2]) + ".html");
  }
  apiPage(repo, out, all, quoted);

  std::string data = "// Generated by generate-pages: what the search box searches. Do not edit.\nvar WB_SEARCH = [\n";
  for (const auto& e : searchEntries)
    data += "{t:" + js(e.title) + ",u:" + js(e.url) + ",k:" + js(e.keywords) + ",x:" + js(e.text.substr(0, 6000)) + "},\n";
  write(out / "search-data.js", data + "];\n");

  if (!problems.empty()) {
    for (const auto& p : problems) std::fprintf(stderr, "generate-pages: %s\n", p.c_str());
    return 1;
  }
  std::printf("generate-pages: %zu lessons, %zu search entries\n", all.size(), searchEntries.size());
  return 0;
}
