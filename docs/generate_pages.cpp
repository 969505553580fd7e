// generate-pages: writes every page Doxygen reads, so nothing on the site is a hand-kept copy.
//
//   generate-pages <repo> <out dir> <images dir> <manifest.tsv> <needs.tsv> <output columns>
//
// The manifest has one lesson a line: folder, title, what its assertions prove, the lessons it
// needs (comma-separated numbers), its multi-device suites (comma-separated), its program's name, its
// short title (empty: made from the folder's name), and which ctest entry runs each of its doctest
// suites (comma-separated suite=entry: the suites share a few processes, lessonNN.claims and so on).
//
// For each lesson, lessons/NN-name/lesson.md becomes lessonNN.md:
//   - the title line becomes "Lesson NN · <Name>" (short, for the sidebar), with the manifest's
//     title under it, and previous / next links top and bottom
//   - "## You will learn" and generated facts (the list of steps with their anchors, what you need
//     first, reading time, how to run it, where the whole source is) open the page
//   - "## N. Title" steps get an anchor, and must match the step marks the program printed; each
//     step ends with a folded "same step elsewhere" box: its calls in the runtime, cuda.core and
//     cuda.bindings (docs/api-map.tsv)
//   - @OUTPUT N@    what the program printed in step N (docs/output/lessonNN.txt, split on the
//                   "=== N. Title" lines wb::step prints)
//   - @OUTPUT@      the whole recorded run, folded
//   - @STACKS N@    the context stacks the program printed in step N, drawn bottom to top
//   - @DIAGRAM f@   the SVG the build drew from a .dot file, inlined so it follows the theme, with
//                   a size rule made from its own width and text (never stretched or shrunk
//                   below readable; it scrolls instead, with a link to it at full size)
//   - @FIGURE f@    a measured figure that may not be recorded yet (lesson 18's needs two GPUs):
//                   as @DIAGRAM f@ when docs/output/f.csv exists (the build draws f.svg from it),
//                   otherwise one line saying that it has not been recorded yet
//   - @ASSERTIONS@  the suites and cases of tests/lessonNN_name.cpp, each with an anchor
//   - "## What you now know", the last section, holds 3 to 6 "- " lines: a summary box at the end
// and lessonNN_source.md holds the whole program and test file. Beside them: mainpage.md (with the
// course map), api.md (every Driver API call the course makes, by area: what it does, where, and
// which assertions use it), cheatsheet.md (each call beside the runtime's and the Python packages'
// spellings, from docs/api-map.tsv), errors.md (the error atlas: every CUresult the course
// provokes, with cuda.h's text, docs/errors.tsv's cause and remedy, and the steps and assertions
// that show it), the pages of docs/pages, and search-data.js for the site's search box. Straight
// quotes in prose become typographic ones: Doxygen leaves markdown inside "..." unconverted.
// lint-findings.txt lists for docs.lint what the data files and the course disagree on.
//
// lessons/NN-name/deeper.md, where a lesson has one, becomes its optional "Going deeper" page
// (lessonNN_deeper): the same syntax, placeholders and checks (a step's @OUTPUT n@ may be on either
// page), linked from the lesson's facts and from a box before its summary, its reading time shown
// apart from the lesson's. docs.lint fails a lesson page over 25 minutes, and the lesson pages
// together over 520. Program output is wrapped to <output columns>, the characters an output box
// shows at 1280 px: a longer line continues on the next row after a "↪", so no line hides its end.
//
// It fails, naming the file, when a page and the program's output disagree: a step the page has
// and the output lacks or the other way round, a title that differs, an absolute path of the
// recording machine in an output, a placeholder it does not know, a lesson whose "What you now
// know" is missing or not 3 to 6 lines.
#include "exercise_file.hpp"  // tests/exercises/: the exercises as the learner's file and the checks state them
#include "columns.hpp"        // docs/: how wide a line of text is on the page
#include "needs.hpp"          // common/: lessons/needs.tsv, what each lesson needs

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
#include <tuple>
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

// Markdown would read __managed__ as bold: such names go in code spans, unless they are in one
// already (wrapping `__managed__` again would leave stray backticks on the page).
std::string codeSpans(const std::string& text) {
  static const std::regex name("(__[a-z]+__)");
  std::string out;
  size_t from = 0;
  while (from < text.size()) {
    const size_t open = text.find('`', from);
    out += std::regex_replace(text.substr(from, open == std::string::npos ? std::string::npos : open - from), name, "`$1`");
    if (open == std::string::npos) break;
    const size_t close = text.find('`', open + 1);
    out += text.substr(open, close == std::string::npos ? std::string::npos : close + 1 - open);
    from = close == std::string::npos ? text.size() : close + 1;
  }
  return out;
}

// C++ source with its comments removed and its string and character literals emptied, so that a
// call named in a comment ("cuCtxCreate_v4 (12050)") or a message is not taken for a call made.
// A ' between digits is a digit separator (10'000), not a character literal.
std::string codeOnly(const std::string& t) {
  std::string out;
  for (size_t i = 0; i < t.size();) {
    if (t.compare(i, 2, "//") == 0) {
      i = t.find('\n', i);
      if (i == std::string::npos) break;
    } else if (t.compare(i, 2, "/*") == 0) {
      const size_t end = t.find("*/", i + 2);
      i = end == std::string::npos ? t.size() : end + 2;
      out += ' ';
    } else if (t[i] == '"' || (t[i] == '\'' && !(i && std::isalnum(static_cast<unsigned char>(t[i - 1]))))) {
      const char q = t[i];
      size_t j = i + 1;
      while (j < t.size() && t[j] != q && t[j] != '\n') j += t[j] == '\\' ? 2 : 1;
      out += std::string(2, q);
      i = j + 1;
    } else {
      out += t[i++];
    }
  }
  return out;
}

// Doxygen copies text between straight double quotes without its markdown: a code span in a quote
// of the reference came out as a literal <tt> tag or stray backticks. Quotes in prose become
// typographic ones, which Doxygen leaves alone. Untouched: code (fenced, indented, spans), program
// output, raw HTML and its attributes, and the quoted labels of @ref, \ref and \subpage. In a code
// span, a % before a word becomes %%: Doxygen reads "%word" as "do not link word" and drops the %
// (`%smid` came out as smid).
std::string typographicQuotes(const std::string& md) {
  std::string out;
  bool raw = false, fenced = false, inSpan = false, previousBlank = true, previousCode = false;
  static const std::regex labelled(R"re(^(?:@ref|\\ref|\\subpage)\s+\S+\s+"[^"]*")re");
  for (const auto& line : lines(md)) {
    const std::string t = trim(line);
    if (t.rfind("\\htmlonly", 0) == 0 || t.rfind("\\verbatim", 0) == 0) raw = true;
    const bool closes = t.find("\\endhtmlonly") != std::string::npos || t.find("\\endverbatim") != std::string::npos;
    if (t.rfind("```", 0) == 0) fenced = !fenced;
    const bool indented = line.rfind("    ", 0) == 0 && (previousBlank || previousCode);
    const bool command = t.rfind("\\snippet", 0) == 0 || t.rfind("\\include", 0) == 0 || t.rfind("\\verbinclude", 0) == 0;
    if (raw || fenced || t.rfind("```", 0) == 0 || indented || command) {
      out += line + "\n";
      if (closes) raw = false;
      previousCode = indented;
      previousBlank = t.empty();
      continue;
    }
    previousCode = false;
    previousBlank = t.empty();
    if (t.empty()) inSpan = false;  // a code span never crosses a paragraph
    std::string l;
    for (size_t i = 0; i < line.size(); ++i) {
      const char c = line[i];
      if (c == '`') {
        inSpan = !inSpan;
      } else if (inSpan && c == '%' && i + 1 < line.size() &&
                 (std::isalnum(static_cast<unsigned char>(line[i + 1])) || line[i + 1] == '_')) {
        l += "%%";
        continue;
      } else if (!inSpan && c == '<') {  // an HTML tag: its attributes keep their quotes
        const size_t end = line.find('>', i);
        if (end != std::string::npos) {
          l += line.substr(i, end + 1 - i);
          i = end;
          continue;
        }
      } else if (!inSpan && (c == '@' || c == '\\')) {
        std::smatch m;
        const std::string rest = line.substr(i);
        if (std::regex_search(rest, m, labelled)) {
          l += m[0];
          i += m.length(0) - 1;
          continue;
        }
      } else if (!inSpan && c == '"') {
        const char before = i ? line[i - 1] : ' ';
        const bool opens = std::isspace(static_cast<unsigned char>(before)) || std::string("([{/-").find(before) != std::string::npos;
        l += opens ? "\u201c" : "\u201d";
        continue;
      }
      l += c;
    }
    out += l + "\n";
  }
  return out;
}

struct Lesson {
  std::string folder, nn, slug, title, proves, program, shortName;
  std::vector<std::string> needs;
  std::vector<std::string> multiSuites;  // MULTI_DEVICE_SUITES: the suites that need two GPUs
  wb::LessonNeeds toRun;                 // its row of lessons/needs.tsv: what it needs to run
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

// ---------------------------------------------------------------- the course's data

// What docs.lint reports: "FAIL ..." lines fail it, "NOTE ..." lines are shown. The generator
// writes them to lint-findings.txt beside the pages instead of failing, so that docs.build says
// whether the site builds and docs.lint whether its content is whole.
std::vector<std::string> lintFindings;

// docs/api-map.tsv: each call the course teaches, its area, purpose, and its runtime, cuda.core and
// cuda.bindings spellings.
struct ApiRow {
  std::string call, area, purpose, runtime, core, bindings;
};
struct ApiMap {
  std::vector<ApiRow> rows;
  std::vector<std::string> areas;  // in the order they first appear
  std::map<std::string, size_t> byCall;
  const ApiRow* find(const std::string& call) const {
    const auto it = byCall.find(call);
    return it == byCall.end() ? nullptr : &rows[it->second];
  }
};

// Rows of a tab-separated data file after its header line; '#' lines are comments.
std::vector<std::vector<std::string>> tsvRows(const fs::path& file, size_t columns) {
  std::vector<std::vector<std::string>> out;
  bool header = true;
  size_t number = 0;
  for (const auto& l : lines(read(file))) {
    ++number;
    if (l.empty() || l[0] == '#') continue;
    if (header) {
      header = false;
      continue;
    }
    auto f = split(l, '\t');
    if (f.size() != columns) {
      problems.push_back(file.string() + ":" + std::to_string(number) + ": " + std::to_string(f.size()) + " fields, not " +
                         std::to_string(columns));
      continue;
    }
    out.push_back(f);
  }
  return out;
}

ApiMap readApiMap(const fs::path& file) {
  ApiMap map;
  for (const auto& f : tsvRows(file, 6)) {
    if (map.byCall.count(f[0])) problems.push_back(file.string() + ": " + f[0] + " is listed twice");
    map.byCall[f[0]] = map.rows.size();
    map.rows.push_back({f[0], f[1], f[2], f[3], f[4], f[5]});
    if (std::find(map.areas.begin(), map.areas.end(), f[1]) == map.areas.end()) map.areas.push_back(f[1]);
  }
  if (map.rows.empty()) problems.push_back(file.string() + ": no calls");
  return map;
}

// The CUresult table the build generates from cuda.h (cmake/WorkbookErrorTable.cmake).
struct ErrorEntry {
  int code;
  const char* name;
  const char* text;
};
const ErrorEntry kErrorTable[] = {
#include "cuda_error_table.inc"
};

// docs/errors.tsv: the usual cause and what to do, per error name.
struct ErrorNote {
  std::string cause, todo;
};

// ---------------------------------------------------------------- recorded output

struct Recorded {
  bool exists = false;
  std::string header;                                   // "recorded <date> on <gpus>, ..."
  std::vector<std::string> all;                         // every line after the two header lines
  std::map<int, std::string> titles;                    // step -> title
  std::map<int, std::vector<std::string>> steps;        // step -> its lines
  std::vector<std::string> before;                      // lines before the first step mark
  std::vector<std::string> file;                        // the file as it is, for the whole run
};

Recorded readRecorded(const fs::path& file) {
  Recorded r;
  if (!fs::exists(file)) return r;
  r.exists = true;
  const auto ls = lines(read(file));
  r.file = ls;
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

// How many characters of program output an output box shows at 1280 px without scrolling: set by
// docs/CMakeLists.txt (WORKBOOK_OUTPUT_COLUMNS), which says how it was measured. docs.lint holds
// the pages to the same number.
size_t outputColumns = 110;

// A recorded line wider than the box, as rows that fit: broken at the last space that fits (at a
// column only where a word is longer than a row). Every row after the first is shown under the
// line's indentation after a "↪ " (the columns that mark takes are left for it), so the end of the
// line (often its verdict) is in view and the break is visible.
struct Wrapped {
  size_t indent = 0;              // the spaces before a continuation's mark
  std::vector<std::string> rows;  // the first row, then the continuations without their mark
};
constexpr size_t kMarkColumns = 2;  // "↪ "

Wrapped wrapLine(const std::string& line, size_t width) {
  Wrapped w;
  const size_t first = line.find_first_not_of(' ');
  w.indent = std::min(first == std::string::npos ? 0 : first, width / 3);
  std::string rest = line;
  while (columnsOf(rest) > width - (w.rows.empty() ? 0 : w.indent + kMarkColumns)) {
    const size_t room = width - (w.rows.empty() ? 0 : w.indent + kMarkColumns);
    size_t cut = 0;  // the byte offset just past `room` code points
    for (size_t cols = 0; cut < rest.size() && cols < room; ++cols)
      for (++cut; cut < rest.size() && (static_cast<unsigned char>(rest[cut]) & 0xC0) == 0x80;) ++cut;
    const size_t space = rest.rfind(' ', cut);
    const bool atSpace = space != std::string::npos && space > rest.find_first_not_of(' ') && space > cut / 3;
    w.rows.push_back(rest.substr(0, atSpace ? space : cut));
    rest = rest.substr(atSpace ? space + 1 : cut);
  }
  w.rows.push_back(rest);
  return w;
}

// Program output as a box of whole lines (class "output": docs.lint measures these boxes).
std::string outputBox(const std::vector<std::string>& body) {
  std::string out = "\\htmlonly\n<pre class=\"fragment output\">";
  for (const auto& l : body) {
    const Wrapped w = wrapLine(l, outputColumns);
    for (size_t i = 0; i < w.rows.size(); ++i)
      out += (i ? std::string(w.indent, ' ') + "<span class=\"wrap-mark\">\u21aa </span>" : "") + html(w.rows[i]) + "\n";
  }
  return out + "</pre>\n\\endhtmlonly\n";
}

std::string outputBlock(const std::vector<std::string>& body) {
  return "<div class=\"output-label\">What the program printed</div>\n" + outputBox(body);
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
  // The size rule, from the picture itself: its natural width (Graphviz writes points, 4/3 px
  // each), never stretched; narrower only down to where its smallest text is still 11 px; below
  // that the box scrolls, and a link opens the picture alone at full size. On a narrow screen
  // (course.css) the picture is scaled to the column instead, so that no label is out of view.
  std::smatch m;
  const size_t tagEnd = svg.find('>');
  const std::string tag = svg.substr(0, tagEnd);
  double naturalPx = 0, viewWidth = 0;
  if (std::regex_search(tag, m, std::regex(R"re(\swidth="([0-9.]+)(pt|px)?")re")))
    naturalPx = std::stod(m[1]) * (m[2] == "pt" ? 4.0 / 3.0 : 1.0);
  if (std::regex_search(tag, m, std::regex(R"re(viewBox="[-0-9.]+ [-0-9.]+ ([0-9.]+) [0-9.]+")re"))) viewWidth = std::stod(m[1]);
  if (naturalPx <= 0 || viewWidth <= 0) {
    problems.push_back(file.string() + ": no width and viewBox on the <svg> element, so no size rule can be made");
    return "";
  }
  double smallestFont = 0;
  static const std::regex fontSize(R"re(font-size="([0-9.]+)")re");
  for (std::sregex_iterator it(svg.begin(), svg.end(), fontSize), end; it != end; ++it) {
    const double size = std::stod((*it)[1]);
    if (size > 0 && (smallestFont == 0 || size < smallestFont)) smallestFont = size;
  }
  if (smallestFont == 0) smallestFont = 14;  // Graphviz's default
  const long natural = std::lround(naturalPx);
  const long minimum = std::min<long>(natural, std::lround(std::ceil(viewWidth * 11.0 / smallestFont)));
  svg = std::regex_replace(tag, std::regex(R"re(\s(width|height)="[^"]*")re"), "") + svg.substr(tagEnd);
  svg.insert(4, " class=\"diagram\" data-source=\"" + file.filename().string() + "\" data-natural-width=\"" +
                    std::to_string(natural) + "\" style=\"width:" + std::to_string(natural) + "px;min-width:" +
                    std::to_string(minimum) + "px\"");
  const std::string name = file.stem().string();
  std::string box = "\\htmlonly\n<div class=\"diagram-box\" id=\"picture_" + name + "\">" + svg + "</div>\n";
  const std::string full = "<a href=\"" + file.filename().string() + "\">open it alone at full size</a>";
  if (minimum > 990)  // wider than the text column even at 1280 px (998 px, measured in Chromium)
    box += "<p class=\"diagram-full\">Wider than the page: scroll it sideways, or " + full + ".</p>\n";
  else if (minimum > 350)  // wider than a phone's column: said only where the screen is narrow (course.css)
    box += "<p class=\"diagram-full narrow-only\">Scaled to fit this screen: " + full + " to zoom in.</p>\n";
  return box + "\\endhtmlonly\n";
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

// The multi-device suites that have passed on two GPUs, as "NN/suite": none yet, as no machine with
// two was lent to the course. Until a suite is listed here its page says it has not run on two.
const std::set<std::string> kRanOnTwoGpus = {};

bool notYetOnTwo(const Lesson& l, const std::string& suite) {
  const auto& m = l.multiSuites;
  return std::find(m.begin(), m.end(), suite) != m.end() && !kRanOnTwoGpus.count(l.nn + "/" + suite);
}

std::string assertionList(const std::vector<TestCase>& cases, const Lesson& l) {
  const bool waiting = std::any_of(l.multiSuites.begin(), l.multiSuites.end(),
                                   [&](const std::string& s) { return notYetOnTwo(l, s); });
  std::string md = "Generated from `" + l.testFile() + "`; every line is a doctest case that ran on a GPU" +
                   (waiting ? ", except in the suites marked as needing two GPUs, which have not yet run on two "
                              "(none was lent to the course).\n"
                            : ".\n");
  std::string suite = "\x01";
  for (const auto& c : cases) {
    if (c.suite != suite) {
      suite = c.suite;
      const auto entry = l.suiteTests.find(suite);
      const std::string test = entry != l.suiteTests.end() ? entry->second : "lesson" + l.nn + ".claims";
      md += "\n- **Suite `" + suite + "`** (ctest runs it in `" + test + "`" +
            (notYetOnTwo(l, suite) ? "; it needs two GPUs and has not yet run on two" : "") + "):\n";
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

std::set<std::string> callsIn(const std::string& source) {
  static const std::regex call(R"(\b(cu[A-Z][A-Za-z0-9_]*)\s*\()");
  const std::string code = codeOnly(source);
  std::set<std::string> out;
  for (std::sregex_iterator it(code.begin(), code.end(), call), end; it != end; ++it) out.insert((*it)[1]);
  return out;
}

// "lesson 05, step 1 (...), and step 4 (...)" with each step a link to its section (lessonNN_stepN):
// a bare "step N" belongs to the lesson named last before it, or to this page's.
std::string learnLinks(const std::string& learn, const std::string& ownLesson) {
  static const std::regex step(R"((lesson (\d\d), )?step (\d+))");
  std::string out, lesson = ownLesson;
  std::string::const_iterator from = learn.begin();
  for (std::sregex_iterator it(learn.begin(), learn.end(), step), end; it != end; ++it) {
    const std::smatch& m = *it;
    out.append(from, m[0].first);
    if (m[2].matched) lesson = m[2];
    out += "@ref lesson" + lesson + "_step" + std::string(m[3]) + " \"" + std::string(m[0]) + "\"";
    from = m[0].second;
  }
  out.append(from, learn.end());
  return out;
}

// An exercise's signature as a code block, one parameter a line under the first when it is wider
// than a box shows at 1280 px.
std::string signatureBlock(const std::string& signature) {
  const size_t open = signature.find('(');
  if (columnsOf(signature) <= outputColumns || open == std::string::npos) return "    " + signature + "\n";
  std::string out = "    " + signature.substr(0, open + 1);
  size_t depth = 0, from = open + 1;
  for (size_t i = from; i < signature.size(); ++i) {  // break after each top-level comma
    depth += signature[i] == '(' || signature[i] == '<';
    depth -= depth && (signature[i] == ')' || signature[i] == '>');
    if (signature[i] == ',' && depth == 0) {
      out += trim(signature.substr(from, i + 1 - from)) + "\n    " + std::string(open + 1, ' ');
      from = i + 1;
    }
  }
  return out + trim(signature.substr(from)) + "\n";
}

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
      "there, then check it on the GPU:\n\n"
      "    cmake --build build --target exercises-" + l.nn + "\n\n"
      "Each check says `done`, `not done` (with its hint), `FAILED` (the assertion, and the requirements its case "
      "verifies) or `skipped` (and why), then your progress table. The solutions are in `tests/exercises/" + l.folder +
      "/solution/`, and the mistakes each check is proven to catch in `wrong/`: look once yours passes.\n\n";
  for (const auto& t : tasks) {
    const auto c = checks.find(t.name);
    md += "### " + std::to_string(t.number) + ". " + t.title + " {#" + l.page() + "_exercise_" + slugOf(t.name) + "}\n\n";
    md += signatureBlock(t.signature) + "\n";
    md += "**Task.** " + t.task + "\n\n";
    // The requirements, numbered as the file numbers them: each checked one is verified by a case of
    // the check and broken by one of the wrong variants (the proofs hold both); the rest say why not
    // (in <em>: Doxygen's markdown takes no "*(" for emphasis, and showed the stars).
    size_t checkedCount = 0;
    for (const auto& r : t.requirements) checkedCount += r.checked;
    md += "**Requirements** (" + std::to_string(checkedCount) + " of " + std::to_string(t.requirements.size()) +
          " checked):\n\n";
    for (const auto& r : t.requirements)
      md += "- **R" + std::to_string(r.number) + "** " + (r.checked ? "" : "<em>(not checked: " + r.why + ")</em> ") + r.text +
            "\n";
    md += "\n";
    // "exercise05.bounded-upload uploads ..." reads on as "It uploads ..." under the summary that names it.
    const std::string id = "exercise" + l.nn + "." + t.name;
    const bool named = t.check.rfind(id + " ", 0) == 0;
    // Folded: what the check runs is there for the reader who wants it, after the requirements that
    // say what it verifies.
    md += "\\htmlonly<details class=\"check\"><summary>The check (<code>" + id +
          "</code>): what it runs</summary>\\endhtmlonly\n\n";
    md += (named ? "It" + t.check.substr(id.size()) : t.check) + "\n\n";
    md += "\\htmlonly</details>\\endhtmlonly\n\n";
    md += "**Learn it in:** " + learnLinks(t.learn, l.nn) + "\n\n";
    if (c != checks.end())
      md += "\\htmlonly<details class=\"hint\"><summary>Hint</summary>\\endhtmlonly\n\n" + c->second.hint +
            "\n\n\\htmlonly</details>\\endhtmlonly\n\n";
    else
      problems.push_back(l.folder + ": exercise " + t.name + " has no check in " + checkFile);
  }
  return md;
}

// The section of NVIDIA's Driver API reference that documents a call, by its prefix.
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
  md = std::regex_replace(md, std::regex(R"(\{#[^}]*\}|<[^>]+>|[`*#|]|\[|\]\([^)]*\)|:?-{3,}:?)"), " ");
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
    // A table's header row ("Claim Verdict Settled by") makes a poor excerpt: the search leaves it out.
    static const std::regex tableHead(R"((^|\n)\|[^\n]*\n\|[ :|-]+\|[^\n]*)");
    if (!trim(body).empty())
      searchEntries.push_back({title == pageTitle ? pageTitle : pageTitle + " › " + title,
                               url + (anchor.empty() ? "" : "#" + anchor), "", plainText(std::regex_replace(body, tableHead, "\n"))});
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

// What a first reading reads: the page without its folded blocks (an exercise's hint and its check's
// description, the whole recorded run), which stay closed until the reader opens them.
std::string unfolded(const std::string& text) {
  static const std::regex folded(R"(\\htmlonly<details[\s\S]*?</details>\\endhtmlonly)");
  return std::regex_replace(text, folded, " ");
}

size_t words(const std::string& text) {
  std::stringstream ss(plainText(unfolded(text)));
  return static_cast<size_t>(std::distance(std::istream_iterator<std::string>(ss), std::istream_iterator<std::string>()));
}

// What the lesson pages find, for the API index and the error atlas.
ApiMap api;
std::map<std::string, std::string> snippetPlaces;  // snippet anchor -> "Lesson 05, step 1: Allocating device memory"
struct Shown {
  std::string nn, href, label, line;  // the lesson, its step's link and title, the output line that shows it
};
std::map<std::string, std::vector<Shown>> errorsShown;  // CUDA_ERROR_... -> the steps whose output shows it

// A long identifier in a narrow table cell breaks where a reader would: after a dot or an
// underscore, and between the words of a camel-case name (cuDevice<wbr>Primary<wbr>Ctx...).
std::string breakable(const std::string& name) {
  std::string out;
  for (size_t i = 0; i < name.size(); ++i) {
    if (i && std::isupper(static_cast<unsigned char>(name[i])) && std::islower(static_cast<unsigned char>(name[i - 1])))
      out += "<wbr>";
    out += html(std::string(1, name[i]));
    if ((name[i] == '.' || name[i] == '_') && i + 1 < name.size()) out += "<wbr>";
  }
  return out;
}

// A cell of the cheat sheet: names as code, a note in parentheses as text, "none" muted.
std::string spellingHtml(const std::string& cell) {
  if (cell == "none") return "<span class=\"none\">none</span>";
  std::string names = cell, note;
  if (const size_t paren = cell.find(" ("); paren != std::string::npos) {
    names = cell.substr(0, paren);
    note = cell.substr(paren);
  }
  std::string out;
  if (names.rfind("none", 0) == 0) {
    out = "<span class=\"none\">" + html(names) + "</span>";
  } else {
    for (const auto& n : split(names, ','))
      if (!trim(n).empty()) out += std::string(out.empty() ? "" : ", ") + "<code>" + breakable(trim(n)) + "</code>";
  }
  return out + (note.empty() ? "" : "<span class=\"note\">" + html(note) + "</span>");
}

// "The same step elsewhere": the step's Driver API calls in the runtime and in NVIDIA's Python
// packages, from docs/api-map.tsv; folded, one line until opened.
std::string elsewhereBox(const std::set<std::string>& calls) {
  std::vector<const ApiRow*> rows;
  for (const auto& c : calls)
    if (const ApiRow* r = api.find(c)) rows.push_back(r);
  if (rows.empty()) return "";
  std::string box = "\\htmlonly\n<details class=\"elsewhere\"><summary>The same step elsewhere: the runtime, cuda.core, "
                    "cuda.bindings</summary>\n<table class=\"elsewhere-table stack\"><thead><tr><th>Driver API</th><th>"
                    "Runtime</th><th>cuda.core</th><th>cuda.bindings</th></tr></thead><tbody>\n";
  for (const ApiRow* r : rows)
    box += "<tr><td data-label=\"Driver API\"><a href=\"cheatsheet.html#map_" + r->call + "\"><code>" + breakable(r->call) +
           "</code></a></td><td data-label=\"Runtime\">" + spellingHtml(r->runtime) + "</td><td data-label=\"cuda.core\">" +
           spellingHtml(r->core) + "</td><td data-label=\"cuda.bindings\">" + spellingHtml(r->bindings) + "</td></tr>\n";
  return box + "</tbody></table>\n<p class=\"elsewhere-more\">Every call side by side: <a href=\"cheatsheet.html\">the "
               "cheat sheet</a>.</p></details>\n\\endhtmlonly\n";
}

// Which page each anchor is on: a step, a quoted snippet or the assertions may sit on a lesson's
// optional "Going deeper" page (lessonNN_deeper), and the API index and the error atlas link there.
std::map<std::string, std::string> pageOf;
std::string hrefTo(const std::string& anchor, const std::string& fallbackPage) {
  const auto it = pageOf.find(anchor);
  return (it != pageOf.end() ? it->second : fallbackPage) + ".html#" + anchor;
}

// The site's reading estimate, the same for every page: prose words / 200 + quoted code lines / 40.
size_t readingMinutes(size_t proseWords, size_t codeLines) {
  return std::max<size_t>(1, static_cast<size_t>(std::ceil(proseWords / 200.0 + codeLines / 40.0)));
}
constexpr size_t kLessonMinutes = 25;   // a lesson page is read in one sitting (issue 36)
constexpr size_t kCourseMinutes = 520;  // every lesson page together
size_t courseMinutes = 0, deeperMinutes = 0;
std::map<std::string, std::string> readingTime;  // lesson number -> "19 min", "21 min + 16 optional", for the course map

// "## What you now know" closes every lesson.md: 3 to 6 "- " lines, shown as a box at the page's end.
std::string nowKnowBox(const std::vector<std::string>& section, const Lesson& l, const std::vector<Lesson>& all,
                       const std::string& where) {
  std::string items;
  size_t count = 0;
  for (const auto& line : section) {
    if (line.rfind("- ", 0) == 0) {
      ++count;
    } else if (!trim(line).empty() && line.rfind("  ", 0) != 0) {
      problems.push_back(where + ": \"## What you now know\" holds only \"- \" lines, not: " + line);
    }
    items += line + "\n";
  }
  if (count < 3 || count > 6)
    problems.push_back(where + ": \"## What you now know\" has " + std::to_string(count) + " lines; it needs 3 to 6");
  return "## What you now know {#" + l.page() + "_what_you_now_know}\n\n\\htmlonly\n<div class=\"now-know\">\n" +
         blockHtml(items, all) + "</div>\n\\endhtmlonly\n";
}

// The list of a page's steps (each with its anchor) and its other sections, as the facts box shows it.
using Sections = std::vector<std::tuple<std::string, std::string, int>>;  // (anchor, title, step number or 0)
std::string stepListHtml(const Sections& sections, const std::vector<Lesson>& all, const std::string& more) {
  std::string stepItems, otherItems;
  for (const auto& [anchor, title, n] : sections) {
    if (n)
      stepItems += "<li value=\"" + std::to_string(n) + "\"><a href=\"#" + anchor + "\">" + inlineHtml(title, all) + "</a></li>\n";
    else
      otherItems += std::string(otherItems.empty() ? "" : " · ") + "<a href=\"#" + anchor + "\">" + inlineHtml(title, all) + "</a>";
  }
  std::string out = "<nav class=\"step-list\" aria-label=\"The steps of this page\">";
  if (!stepItems.empty()) out += "<p><b>Steps</b></p>\n<ol>\n" + stepItems + "</ol>\n";
  if (!otherItems.empty()) out += "<p class=\"step-more\">Also on this page: " + otherItems + "</p>\n";
  return out + more + "</nav>\n";
}

// A lesson's program, as paths from the repository: main.cpp; deeper.cpp where the optional page has
// a program of its own; and the headers of the lesson's folder (exercises.hpp belongs to the
// exercises), sorted. The source page shows them all; the API index and the error atlas read them.
std::vector<std::string> programsOf(const fs::path& repo, const Lesson& l) {
  const std::string folder = "lessons/" + l.folder + "/";
  std::vector<std::string> files{folder + "main.cpp"}, headers;
  if (fs::exists(repo / folder / "deeper.cpp")) files.push_back(folder + "deeper.cpp");
  for (const auto& e : fs::directory_iterator(repo / folder))
    if (e.path().extension() == ".hpp" && e.path().filename() != "exercises.hpp")
      headers.push_back(folder + e.path().filename().string());
  std::sort(headers.begin(), headers.end());
  files.insert(files.end(), headers.begin(), headers.end());
  return files;
}

void lessonPage(const fs::path& repo, const fs::path& out, const fs::path& images, const std::vector<Lesson>& all,
                size_t index, std::map<std::string, std::set<std::string>>& quotedSnippets) {
  const Lesson& l = all[index];
  const fs::path src = repo / "lessons" / l.folder / "lesson.md";
  const fs::path deeperSrc = repo / "lessons" / l.folder / "deeper.md";  // optional: the "Going deeper" page
  const std::string deeperPage = l.page() + "_deeper";
  Recorded rec = readRecorded(repo / "docs" / "output" / (l.page() + ".txt"));
  // The optional page's program (deeper.cpp) continues the steps: its recording joins the lesson's,
  // so that either page shows any step with @OUTPUT n@; a number both print is a problem.
  const std::string deeperCpp = "lessons/" + l.folder + "/deeper.cpp";
  const auto programs = programsOf(repo, l);
  const bool deeperProgram = std::find(programs.begin(), programs.end(), deeperCpp) != programs.end();
  const fs::path deeperRun = repo / "docs" / "output" / (l.page() + "-deeper.txt");
  if (deeperProgram != fs::exists(deeperRun))
    problems.push_back(deeperRun.string() + (fs::exists(deeperRun) ? " exists, but lessons/" + l.folder + "/deeper.cpp does not"
                                                                   : " is missing: record lessons/" + l.folder + "/deeper.cpp's run"));
  if (rec.exists && fs::exists(deeperRun)) {
    const Recorded more = readRecorded(deeperRun);
    for (const auto& [n, title] : more.titles) {
      if (rec.titles.count(n))
        problems.push_back(deeperRun.string() + ": step " + std::to_string(n) + " is also in " + l.page() +
                           ".txt: deeper.cpp's steps continue main.cpp's numbering");
      rec.titles[n] = title;
      rec.steps[n] = more.steps.at(n);
    }
  }
  const auto cases = readTests(repo / l.testFile(), l.nn);

  std::vector<std::string> ls = lines(read(src));
  if (ls.empty() || ls[0].find("{#" + l.page() + "}") == std::string::npos)
    problems.push_back(src.string() + ": the first line must be the title with {#" + l.page() + "}");

  // "## You will learn" goes into the facts at the top, "## What you now know" (the last section)
  // into a box at the end.
  std::string learn;
  std::vector<std::string> body, nowKnow;
  bool nowKnowFound = false;
  for (size_t i = 1; i < ls.size(); ++i) {
    if (trim(ls[i]) == "## You will learn") {
      for (++i; i < ls.size() && ls[i].rfind("## ", 0) != 0; ++i) learn += ls[i] + "\n";
      --i;
      body.push_back("@@FACTS@@");
      continue;
    }
    if (trim(ls[i]) == "## What you now know") {
      nowKnowFound = true;
      for (++i; i < ls.size() && ls[i].rfind("## ", 0) != 0; ++i) nowKnow.push_back(ls[i]);
      if (i < ls.size()) problems.push_back(src.string() + ": \"## What you now know\" must be the last section, not before \"" + ls[i] + "\"");
      --i;
      continue;
    }
    body.push_back(ls[i]);
  }
  if (trim(learn).empty()) problems.push_back(src.string() + ": no \"## You will learn\" list");
  if (!nowKnowFound) problems.push_back(src.string() + ": no \"## What you now know\" section (3 to 6 \"- \" lines) at its end");

  static const std::regex step(R"(^## ([0-9]+)\. (.*?)\s*$)");
  static const std::regex other(R"(^## (.*?)\s*$)");
  static const std::regex placeholder(R"(@([A-Z]+)(?: ([A-Za-z0-9_.-]+))?@)");
  static const std::regex snippetLine(R"(^\\snippet (\S+) (\S+)\s*$)");
  static const std::regex anchored(R"(^## (.*?)\s*\{#([A-Za-z0-9_]+)\}\s*$)");
  std::set<int> stepsPlaced;  // the steps whose @OUTPUT n@ (or @STACKS n@) is on either page
  struct Rendered {
    std::string text;
    size_t codeLines = 0;
    Sections sections;  // for the step list at the top
  };
  // One page's markdown, lesson.md or deeper.md, with the same placeholders and the same checks.
  const auto render = [&](const std::vector<std::string>& source, const std::string& where, const std::string& pageId) {
    Rendered r;
    int currentStep = 0;
    std::string currentTitle;
    std::set<std::string> stepCalls;  // the Driver API calls the current step's snippets make
    std::map<std::string, std::map<std::string, Snippet>> otherSnippets;
    const auto endOfSection = [&] {
      if (currentStep) r.text += elsewhereBox(stepCalls);
      stepCalls.clear();
    };
    const auto section = [&](const std::string& anchor, const std::string& title, int n) {
      if (!pageOf.emplace(anchor, pageId).second)
        problems.push_back(where + ": the section \"" + title + "\" has the anchor " + anchor + ", which " +
                           pageOf.at(anchor) + " already has");
      r.sections.emplace_back(anchor, title, n);
    };
    for (const auto& line : source) {
      std::smatch m;
      if (line.rfind("## ", 0) == 0) endOfSection();
      if (std::regex_match(line, m, step)) {
        const int n = std::stoi(m[1]);
        currentStep = n;
        currentTitle = m[2];
        section(l.page() + "_step" + std::to_string(n), std::string(m[2]), n);
        if (rec.exists && !rec.titles.count(n))
          problems.push_back(where + ": step " + std::to_string(n) + " is on the page but the program printed no such step");
        if (rec.exists && rec.titles.count(n) && rec.titles.at(n) != std::string(m[2]))
          problems.push_back(where + ": step " + std::to_string(n) + " is \"" + std::string(m[2]) +
                             "\" on the page but \"" + rec.titles.at(n) + "\" in what the program printed");
        r.text += "## " + std::to_string(n) + ". " + std::string(m[2]) + " {#" + l.page() + "_step" + std::to_string(n) +
                  "}\n";
        continue;
      }
      if (std::regex_match(line, m, other) && line.find("{#") == std::string::npos) {
        r.text += line + " {#" + l.page() + "_" + slugOf(m[1], 40) + "}\n";
        section(l.page() + "_" + slugOf(m[1], 40), std::string(m[1]), 0);
        currentStep = 0;
        continue;
      }
      if (std::regex_match(line, m, anchored)) {
        section(std::string(m[2]), std::string(m[1]), 0);
        currentStep = 0;
      }
      if (std::regex_match(line, m, snippetLine)) {
        const std::string file = m[1], name = m[2];
        const std::string anchor = l.page() + "_snippet_" + slugOf(name);
        r.text += "\\anchor " + anchor + "\n" + line + "\n";
        pageOf[anchor] = pageId;
        quotedSnippets[file].insert(name);
        // Quoted code counts toward the reading time wherever it lives: the program, a kernel, common/.
        if (!otherSnippets.count(file)) otherSnippets[file] = readSnippets(repo / file);
        if (otherSnippets[file].count(name)) {
          r.codeLines += lines(otherSnippets[file].at(name).body).size();
          for (const auto& c : callsIn(otherSnippets[file].at(name).body)) stepCalls.insert(c);
        }
        snippetPlaces[anchor] = "Lesson " + l.nn + (currentStep ? ", step " + std::to_string(currentStep) + ": " + currentTitle : "");
        continue;
      }
      if (line == "@@FACTS@@") {
        r.text += line + "\n";
        continue;
      }
      std::string rest = line, expanded;
      for (std::smatch p; std::regex_search(rest, p, placeholder); rest = p.suffix()) {
        expanded += p.prefix();
        const std::string kind = p[1], arg = p[2];
        if (kind == "OUTPUT" && arg.empty()) {
          expanded += rec.exists ? "\\htmlonly<details class=\"whole-run\"><summary>The whole run, as recorded</summary>"
                                   "\\endhtmlonly\n" + outputBox(rec.file) + "\\htmlonly</details>\\endhtmlonly\n"
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
            static const std::regex error(R"(\bCUDA_ERROR_[A-Z0-9_]+)");
            std::set<std::string> seen;
            for (const auto& o : rec.steps.at(n))
              for (std::sregex_iterator e(o.begin(), o.end(), error), end; e != end; ++e)
                if (seen.insert(e->str()).second)
                  errorsShown[e->str()].push_back({l.nn, pageId + ".html#" + l.page() + "_step" + std::to_string(n),
                                                   "Lesson " + l.nn + ", step " + std::to_string(n) + ": " + rec.titles.at(n),
                                                   trim(o)});
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
          for (const auto& c : cases) pageOf[c.anchor] = pageId;
        } else if (kind == "EXERCISES") {
          expanded += exercisesSection(repo, l, problems);
        } else {
          problems.push_back(where + ": unknown placeholder " + std::string(p[0]));
        }
      }
      r.text += expanded + rest + "\n";
    }
    endOfSection();
    return r;
  };

  Rendered lesson = render(body, src.string(), l.page());
  // The optional "Going deeper" page: what a first reading can skip, in lesson.md's syntax.
  Rendered deeper;
  const bool hasDeeper = fs::exists(deeperSrc);
  if (hasDeeper) {
    const auto dl = lines(read(deeperSrc));
    if (dl.empty() || dl[0].find("{#" + deeperPage + "}") == std::string::npos)
      problems.push_back(deeperSrc.string() + ": the first line must be the title with {#" + deeperPage + "}");
    deeper = render(std::vector<std::string>(dl.empty() ? dl.end() : dl.begin() + 1, dl.end()), deeperSrc.string(), deeperPage);
    if (deeper.text.find("@@FACTS@@") != std::string::npos)
      problems.push_back(deeperSrc.string() + ": \"## You will learn\" belongs on lesson.md");
  }
  if (rec.exists)
    for (const auto& [n, title] : rec.titles)
      if (!stepsPlaced.count(n))
        problems.push_back(src.string() + ": the program printed step " + std::to_string(n) + " (" + title +
                           ") but neither lesson.md nor deeper.md places an @OUTPUT " + std::to_string(n) + "@");
  if ((lesson.text + deeper.text).find("Generated from `tests/") == std::string::npos)
    problems.push_back(src.string() + ": @ASSERTIONS@ is missing (the list of assertions goes there)");

  const size_t deeperWords = words(deeper.text);
  const size_t deeperTime = hasDeeper ? readingMinutes(deeperWords, deeper.codeLines) : 0;
  const std::string deeperTitle = "Lesson " + l.nn + " · Going deeper (optional): " + l.name();
  std::string deeperLinks;  // its sections, linked
  for (const auto& [anchor, title, n] : deeper.sections)
    deeperLinks += std::string(deeperLinks.empty() ? "" : " · ") + "<a href=\"" + deeperPage + ".html#" + anchor + "\">" +
                   (n ? std::to_string(n) + ". " : "") + inlineHtml(title, all) + "</a>";
  std::string text = lesson.text;
  if (hasDeeper)  // near the end, before the summary: clearly marked as optional
    text += "\n\\htmlonly\n<div class=\"deeper-box\"><p class=\"deeper-title\">Going deeper (optional)</p>\n\\endhtmlonly\n\n"
            "A first reading can stop here. \\subpage " + deeperPage + " \"" + deeperTitle + "\" goes further, in about " +
            std::to_string(deeperTime) + " minutes that this page's time leaves out.\n\n\\htmlonly\n<p>" + deeperLinks +
            "</p>\n</div>\n\\endhtmlonly\n\n";
  if (nowKnowFound) text += "\n" + nowKnowBox(nowKnow, l, all, src.string());

  // The facts every lesson opens with, after its introduction: one box of plain HTML (Doxygen
  // would split a markdown <div> at every paragraph).
  const size_t proseWords = words(text);
  const size_t minutes = readingMinutes(proseWords, lesson.codeLines);
  courseMinutes += minutes;
  deeperMinutes += deeperTime;
  readingTime[l.nn] = std::to_string(minutes) + " min" + (hasDeeper ? " + " + std::to_string(deeperTime) + " optional" : "");
  if (minutes > kLessonMinutes)
    lintFindings.push_back("FAIL " + src.string().substr(repo.string().size() + 1) + ": about " + std::to_string(minutes) +
                           " minutes to read, more than " + std::to_string(kLessonMinutes) +
                           " (trim it, or move what a first reading can skip to deeper.md)");
  std::string facts = "\\htmlonly\n<div class=\"lesson-facts\">\n<p class=\"lesson-title\">" + inlineHtml(l.title, all) + "</p>\n";
  facts += stepListHtml(lesson.sections, all,
                        hasDeeper ? "<p class=\"step-more\">Optional, not in the time below: <a href=\"" + deeperPage +
                                        ".html\"><b>Going deeper</b></a> (about " + std::to_string(deeperTime) +
                                        " minutes): " + deeperLinks + "</p>\n"
                                  : "");
  facts += "<p><b>You will learn</b></p>\n" + blockHtml(learn, all);
  facts += "<p><b>You need</b> ";
  if (l.needs.empty()) {
    facts += index == 0 ? "nothing from earlier lessons: this is where the course starts. " : "nothing from earlier lessons. ";
  } else {
    for (size_t i = 0; i < l.needs.size(); ++i)
      facts += (i ? (i + 1 == l.needs.size() ? " and " : ", ") : "") + inlineHtml("@ref lesson" + l.needs[i], all);
    facts += ". ";
  }
  // What it needs to run, from lessons/needs.tsv (README's Needs column is the same line).
  facts += "To run it: " + html(wb::needsText(l.toRun)) + ".";
  if (l.toRun.leftOut != "-")
    facts += " Where the machine has less it leaves out what it cannot run, and says so: " + html(l.toRun.leftOut) + ".";
  if (!l.multiSuites.empty())
    facts += std::string(" With one GPU, its multi-device suite") + (l.multiSuites.size() > 1 ? "s report themselves" : " reports itself") +
             " skipped.";
  facts += " (" + inlineHtml("`lessons/needs.tsv`", all) + ")</p>\n";
  facts += "<p><b>Time</b> about " + std::to_string(minutes) + " minute" + (minutes == 1 ? "" : "s") + " to read (" +
           std::to_string(proseWords) + " words and " + std::to_string(lesson.codeLines) +
           " lines of quoted code; what is folded, such as a check's description, is left out)" +
           (hasDeeper ? ", and about " + std::to_string(deeperTime) + " more for the optional page" : "") + ".</p>\n";
  facts += "<p><b>Run it</b> " + inlineHtml("`ctest --test-dir build -R lesson" + l.nn + " -V`, or `build/lessons/" + l.program + "`.", all);
  if (rec.exists)
    facts += " The output on this page was " + html(rec.header) + " (" +
             inlineHtml("`cmake --build build --target record-outputs`", all) + ").";
  facts += "</p>\n</div>\n\\endhtmlonly\n\n**The whole source:** \\subpage " + l.page() + "_source \"lessons/" + l.folder +
           "/main.cpp and " + l.testFile() + "\"; the helpers it calls are on @ref shared_code.\n";
  text = replaceAll(text, "@@FACTS@@\n", facts);

  const std::string heading = "# Lesson " + l.nn + " · " + l.name() + " {#" + l.page() + "}";
  const std::string page = heading + "\n\n" + nav(all, index) + "\n\n" + text + "\n" + nav(all, index) + "\n";
  write(out / (l.page() + ".md"), typographicQuotes(page));
  indexSections(text, "Lesson " + l.nn + " · " + l.name(), l.page() + ".html");
  searchEntries.push_back({"Lesson " + l.nn + " · " + l.name(), l.page() + ".html", l.title, plainText(learn + l.proves)});

  if (hasDeeper) {
    const std::string back = "<div class=\"lesson-nav\"><span>Back to @ref " + l.page() + "</span>" +
                             (index + 1 < all.size() ? "<span>Next: @ref " + all[index + 1].page() + "</span>" : "") + "</div>";
    const std::string intro = "\\htmlonly\n<div class=\"lesson-facts deeper-facts\">\n<p class=\"lesson-title\">Optional: this page "
                              "goes further than " + inlineHtml("@ref " + l.page(), all) + ", and a first reading can skip it.</p>\n" +
                              stepListHtml(deeper.sections, all, "") + "<p><b>Time</b> about " + std::to_string(deeperTime) +
                              " minutes to read (" + std::to_string(deeperWords) + " words and " +
                              std::to_string(deeper.codeLines) + " lines of quoted code), not counted in the lesson's " +
                              std::to_string(minutes) + ".</p>\n</div>\n\\endhtmlonly\n\n";
    const std::string d = "# " + deeperTitle + " {#" + deeperPage + "}\n\n" + back + "\n\n" + intro + deeper.text + "\n" + back + "\n";
    write(out / (deeperPage + ".md"), typographicQuotes(d));
    indexSections(deeper.text, deeperTitle, deeperPage + ".html");
  }

  std::string source = "# Lesson " + l.nn + " source {#" + l.page() + "_source}\n\n";
  source += "The whole program, `lessons/" + l.folder + "/main.cpp`, as the build compiles it (the `//! [name]` lines "
            "mark what @ref " + l.page() + " quotes):\n\n\\include lessons/" + l.folder + "/main.cpp\n\n";
  for (const auto& file : programs) {
    if (file == "lessons/" + l.folder + "/main.cpp") continue;  // above
    source += (file == deeperCpp ? "The program of the optional page (@ref " + deeperPage + "), `" + file + "`"
                                 : "The header `" + file + "`, from the lesson's folder") +
              ":\n\n\\include " + file + "\n\n";
  }
  source += "Its assertions, `" + l.testFile() + "` (ctest runs its suites in a few processes: `lesson" + l.nn +
            ".claims`, and `lesson" + l.nn + ".measured` for those that measure free memory or time; one suite "
            "alone: `" + l.testBinary() + " -ts=<suite>`):\n\n\\include " + l.testFile() + "\n";
  write(out / (l.page() + "_source.md"), source);
}

// ---------------------------------------------------------------- the API index and the cheat sheet

std::string areaAnchor(const std::string& prefix, const std::string& area) { return prefix + slugOf(area, 40); }

// Where a test case is, and what to call it: its anchor on its lesson's page, "lesson05.bandwidth"
// (the suite as the README writes it) and its name.
struct TestRef {
  std::string href, suite, name;
};

TestRef testRef(const Lesson& l, const TestCase& t) {
  return {hrefTo(t.anchor, l.page()), "lesson" + l.nn + "." + t.suite, t.name};
}

std::string testItem(const TestRef& t, const std::vector<Lesson>& all) {
  return "<li><a href=\"" + t.href + "\">" + html(t.suite) + "</a>: " + inlineHtml(t.name, all) + "</li>\n";
}

// The calls each lesson's program and the shared helpers make: what the cheat sheet may list.
struct CourseCalls {
  std::map<std::string, std::set<std::string>> byCall;  // call -> lesson numbers
  std::set<std::string> helpers;                        // calls in common/
};

CourseCalls courseCalls(const fs::path& repo, const std::vector<Lesson>& all) {
  CourseCalls c;
  for (const auto& l : all)
    for (const auto& program : programsOf(repo, l))
      for (const auto& call : callsIn(read(repo / program))) c.byCall[call].insert(l.nn);
  for (const auto& e : fs::directory_iterator(repo / "common"))
    if (e.path().extension() == ".cpp" || e.path().extension() == ".hpp")
      for (const auto& call : callsIn(read(e.path()))) c.helpers.insert(call);
  return c;
}

void apiPage(const fs::path& repo, const fs::path& out, const std::vector<Lesson>& all,
             const std::map<std::string, std::set<std::string>>& quoted) {
  struct Use {
    std::set<std::string> lessons;                          // lesson numbers
    std::vector<std::pair<std::string, std::string>> snippets;  // (anchor, where)
    std::vector<TestRef> tests;
    bool helper = false;
  };
  const CourseCalls calls = courseCalls(repo, all);
  std::map<std::string, Use> uses;
  for (const auto& [call, lessons] : calls.byCall) uses[call].lessons = lessons;
  for (const auto& call : calls.helpers) uses[call].helper = true;
  for (const auto& l : all) {
    for (const auto& file : programsOf(repo, l))
      for (const auto& [name, s] : readSnippets(repo / file))
        if (quoted.count(file) && quoted.at(file).count(name)) {
          const std::string anchor = l.page() + "_snippet_" + slugOf(name);
          const auto place = snippetPlaces.find(anchor);
          for (const auto& c : callsIn(s.body))
            uses[c].snippets.push_back({anchor, place != snippetPlaces.end() ? place->second : "Lesson " + l.nn});
        }
    for (const auto& t : readTests(repo / l.testFile(), l.nn))
      for (const auto& c : callsIn(t.body)) uses[c].tests.push_back(testRef(l, t));
  }

  // Each call under its area (api-map.tsv's order), the calls the map lacks last.
  std::map<std::string, std::vector<std::string>> byArea;
  const std::string otherArea = "Other calls (tests and helpers only)";
  for (const auto& [call, u] : uses) {
    const ApiRow* row = api.find(call);
    byArea[row ? row->area : otherArea].push_back(call);
  }
  std::vector<std::string> areas = api.areas;
  if (byArea.count(otherArea)) areas.push_back(otherArea);

  std::string md = "# Driver API index {#api}\n\n"
                   "Every Driver API call the course makes, by area, each with what it does, the lessons whose "
                   "programs call it, the steps that quote it, the assertions that exercise it (named by suite and "
                   "case) and NVIDIA's reference. Its runtime and Python spellings are on @ref cheatsheet; the "
                   "errors the course provokes are on @ref errors. The search box finds every name here.\n\n"
                   "\\htmlonly\n<p class=\"area-links\">";
  for (size_t i = 0; i < areas.size(); ++i)
    if (byArea.count(areas[i]))
      md += std::string(i ? " · " : "") + "<a href=\"#" + areaAnchor("api_", areas[i]) + "\">" + html(areas[i]) + "</a>";
  md += "</p>\n\\endhtmlonly\n\n";
  size_t count = 0;
  for (const auto& area : areas) {
    if (!byArea.count(area)) continue;
    md += "## " + area + " {#" + areaAnchor("api_", area) + "}\n\n";
    for (const auto& call : byArea.at(area)) {
      const Use& u = uses.at(call);
      const ApiRow* row = api.find(call);
      ++count;
      std::string where;
      if (!u.lessons.empty()) {
        where = "Lesson" + std::string(u.lessons.size() > 1 ? "s " : " ");
        size_t i = 0;
        for (const auto& nn : u.lessons)
          where += std::string(i++ ? ", " : "") + "<a href=\"lesson" + nn + ".html\">" + nn + "</a>";
      }
      if (u.helper) where += std::string(where.empty() ? "" : " · ") + "the <a href=\"shared_code.html\">shared code</a>";
      if (where.empty()) where = "tests only";
      where += " · <a href=\"" + referenceFor(call) + "\">NVIDIA's reference</a>";
      if (row) where += " · <a href=\"cheatsheet.html#map_" + call + "\">runtime and Python</a>";
      std::string entry = "\\anchor api_" + call + "\n\\htmlonly\n<div class=\"api-entry\">\n<p class=\"api-head\"><code>" + call +
                          "</code> <span class=\"api-purpose\">" + (row ? html(row->purpose) : "") + "</span></p>\n" +
                          "<p class=\"api-where\">" + where + "</p>\n";
      std::set<std::string> seen;
      std::string quotedIn;
      for (const auto& [anchor, place] : u.snippets)  // one link a step, however many of its snippets call it
        if (seen.insert(place).second)
          quotedIn += std::string(quotedIn.empty() ? "" : "; ") + "<a href=\"" + hrefTo(anchor, anchor.substr(0, 8)) + "\">" +
                      html(place) + "</a>";
      if (!quotedIn.empty()) entry += "<p class=\"api-quoted\">Quoted in " + quotedIn + "</p>\n";
      seen.clear();
      std::string tests;
      size_t n = 0;
      for (const auto& t : u.tests)
        if (seen.insert(t.href).second) {
          tests += testItem(t, all);
          ++n;
        }
      if (n)
        entry += "<details class=\"api-tests\"><summary>" + std::to_string(n) + " assertion" + (n == 1 ? "" : "s") +
                 " exercise it</summary>\n<ul>\n" + tests + "</ul>\n</details>\n";
      md += entry + "</div>\n\\endhtmlonly\n\n";
      std::string described = (row ? row->purpose + " " : "") + "Driver API call used in lessons ";
      for (const auto& nn : u.lessons) described += nn + " ";
      for (const auto& t : u.tests) described += t.name + ". ";
      searchEntries.push_back({call, "api.html#api_" + call, call, described});
    }
  }
  md += std::to_string(count) + " calls.\n";
  write(out / "api.md", typographicQuotes(md));
}

// The cheat sheet: every call the course teaches, its runtime equivalent and its spellings in
// NVIDIA's Python packages, from docs/api-map.tsv. docs.lint holds the map to the course: a call
// no lesson makes fails it, a call the lessons make and the map lacks is reported.
void cheatsheetPage(const fs::path& repo, const fs::path& out, const std::vector<Lesson>& all) {
  const CourseCalls calls = courseCalls(repo, all);
  for (const auto& r : api.rows)
    if (!calls.byCall.count(r.call) && !calls.helpers.count(r.call))
      lintFindings.push_back("FAIL docs/api-map.tsv: " + r.call +
                             " is in the cheat sheet but no lesson program or shared helper calls it");
  for (const auto& [call, lessons] : calls.byCall)
    if (!api.find(call))
      lintFindings.push_back("NOTE docs/api-map.tsv lacks " + call + ", which lesson " + *lessons.begin() + " calls");

  std::string md = "# Driver, runtime, cuda.core {#cheatsheet}\n\n"
                   "Every Driver API call the course teaches, beside the CUDA runtime's call for the same job and its "
                   "spelling in NVIDIA's Python packages: `cuda.core` (the Pythonic layer; names relative to the "
                   "package, as in `cuda.core.Device`) and `cuda.bindings` (one Python function per C call). "
                   "Runtime names are those of CUDA 13.0's `cuda_runtime_api.h`; *none* means the other layer "
                   "has no call for that job, and a note in parentheses says what stands in for it. Generated "
                   "from `docs/api-map.tsv`, which also gives each lesson step its \"same step elsewhere\" box; "
                   "on a GPU machine, ctest `docs.python-names` checks that every Python name here exists in "
                   "the installed packages.\n\n\\htmlonly\n<p class=\"area-links\">";
  for (size_t i = 0; i < api.areas.size(); ++i)
    md += std::string(i ? " · " : "") + "<a href=\"#" + areaAnchor("cheatsheet_", api.areas[i]) + "\">" + html(api.areas[i]) + "</a>";
  md += "</p>\n\\endhtmlonly\n\n";
  for (const auto& area : api.areas) {
    md += "## " + area + " {#" + areaAnchor("cheatsheet_", area) + "}\n\n\\htmlonly\n<table class=\"cheatsheet stack\">"
          "<thead><tr><th>Driver API</th><th>What it does</th><th>Runtime</th><th>cuda.core</th><th>cuda.bindings</th>"
          "</tr></thead><tbody>\n";
    for (const auto& r : api.rows) {
      if (r.area != area) continue;
      md += "<tr id=\"map_" + r.call + "\"><td data-label=\"Driver API\"><a href=\"api.html#api_" + r.call + "\"><code>" +
            breakable(r.call) + "</code></a></td><td data-label=\"What it does\">" + html(r.purpose) + "</td><td data-label=\"Runtime\">" +
            spellingHtml(r.runtime) + "</td><td data-label=\"cuda.core\">" + spellingHtml(r.core) +
            "</td><td data-label=\"cuda.bindings\">" + spellingHtml(r.bindings) + "</td></tr>\n";
      searchEntries.push_back({r.call + " elsewhere", "cheatsheet.html#map_" + r.call, r.call + " " + r.runtime + " " + r.core,
                               r.purpose + " Runtime: " + r.runtime + ". cuda.core: " + r.core + ". cuda.bindings: " + r.bindings + "."});
    }
    md += "</tbody></table>\n\\endhtmlonly\n\n";
  }
  md += std::to_string(api.rows.size()) + " calls.\n";
  write(out / "cheatsheet.md", typographicQuotes(md));
}

// ---------------------------------------------------------------- the error atlas

// Every CUresult the course provokes: shown in a recorded output, or compared against in a lesson's
// program or a test (==, !=, case) or named by a test case. For each: its code and cuda.h's text,
// the usual cause and what to do (docs/errors.tsv, which docs.lint requires for each), the steps
// whose output shows it and the assertions that check it.
void errorsPage(const fs::path& repo, const fs::path& out, const std::vector<Lesson>& all) {
  std::map<std::string, ErrorNote> notes;
  for (const auto& f : tsvRows(repo / "docs" / "errors.tsv", 3)) notes[f[0]] = {f[1], f[2]};
  std::map<std::string, const ErrorEntry*> table;
  for (const auto& e : kErrorTable) table[e.name] = &e;

  static const std::regex compared(R"((?:==|!=|case)\s*(CUDA_ERROR_[A-Z0-9_]+)|(CUDA_ERROR_[A-Z0-9_]+)\s*(?:==|!=))");
  static const std::regex named(R"(\bCUDA_ERROR_[A-Z0-9_]+)");
  const auto comparedIn = [](const std::string& source) {
    std::set<std::string> out;
    const std::string code = codeOnly(source);
    for (std::sregex_iterator it(code.begin(), code.end(), compared), end; it != end; ++it)
      out.insert((*it)[1].matched ? (*it)[1].str() : (*it)[2].str());
    return out;
  };
  std::map<std::string, std::vector<TestRef>> checkedBy;
  std::map<std::string, std::vector<std::pair<std::string, std::string>>> inPrograms;  // name -> (href, where)
  std::set<std::string> provoked;
  for (const auto& [name, shown] : errorsShown) provoked.insert(name);
  for (const auto& l : all) {
    for (const auto& t : readTests(repo / l.testFile(), l.nn)) {
      std::set<std::string> here = comparedIn(t.body);
      for (std::sregex_iterator it(t.name.begin(), t.name.end(), named), end; it != end; ++it) here.insert(it->str());
      for (const auto& name : here) {
        checkedBy[name].push_back(testRef(l, t));
        provoked.insert(name);
      }
    }
    for (const auto& program : programsOf(repo, l)) {
      const auto snippets = readSnippets(repo / program);  // read once, searched for every code
      for (const auto& name : comparedIn(read(repo / program))) {
        provoked.insert(name);
        bool quotedHere = false;
        for (const auto& [snippet, s] : snippets) {
          const std::string anchor = l.page() + "_snippet_" + slugOf(snippet);
          if (!comparedIn(s.body).count(name) || !snippetPlaces.count(anchor)) continue;
          inPrograms[name].push_back({hrefTo(anchor, l.page()), snippetPlaces.at(anchor)});
          quotedHere = true;
        }
        if (!quotedHere) inPrograms[name].push_back({l.page() + "_source.html", "Lesson " + l.nn + "'s program"});
      }
    }
  }
  for (const auto& name : provoked) {
    if (!table.count(name)) lintFindings.push_back("FAIL " + name + " is provoked by the course but is not in cuda.h's CUresult");
    if (!notes.count(name))
      lintFindings.push_back("FAIL docs/errors.tsv has no cause and remedy for " + name + ", which the course provokes");
  }
  for (const auto& [name, note] : notes)
    if (!provoked.count(name)) lintFindings.push_back("NOTE docs/errors.tsv: " + name + " is no longer provoked by the course");

  std::string md = "# Error atlas {#errors}\n\n"
                   "Every `CUresult` the course provokes, with its code and the text `cuda.h` gives it, its usual "
                   "cause and what to do, the lesson steps whose recorded output shows it and the assertions that "
                   "check it. Generated from the lessons' programs, their tests and their recorded outputs, so a "
                   "new error in any of them appears here (and docs.lint asks for its notes in "
                   "`docs/errors.tsv`). The sticky ones, after which the context is unusable, say so. The names "
                   "and texts of every other code are in NVIDIA's reference, `CUresult`.\n\n\\htmlonly\n<p class=\"area-links\">";
  size_t i = 0;
  for (const auto& name : provoked)
    md += std::string(i++ ? " · " : "") + "<a href=\"#error_" + name + "\"><code>" + name.substr(11) + "</code></a>";
  md += "</p>\n\\endhtmlonly\n\n";
  for (const auto& name : provoked) {
    const ErrorEntry* e = table.count(name) ? table.at(name) : nullptr;
    const auto note = notes.find(name);
    md += "## " + name + " {#error_" + name + "}\n\n\\htmlonly\n<div class=\"error-entry\">\n<p class=\"error-code\"><code>" + name +
          "</code> = " + (e ? std::to_string(e->code) : "?") + ". <span class=\"error-text\">" + (e ? html(e->text) : "") +
          "</span> <span class=\"error-source\">(cuda.h)</span></p>\n";
    if (note != notes.end())
      md += "<p><b>Usual cause.</b> " + inlineHtml(note->second.cause, all) + "</p>\n<p><b>What to do.</b> " +
            inlineHtml(note->second.todo, all) + "</p>\n";
    if (errorsShown.count(name)) {
      md += "<p><b>Seen in</b></p>\n<ul class=\"error-places\">\n";
      for (const auto& s : errorsShown.at(name)) {
        // The output line, cut to about 150 characters around the error's name.
        const size_t at = s.line.find(name), from = at > 70 && s.line.size() > 150 ? at - 70 : 0;
        std::string line = s.line.substr(from, 150);
        if (from) line = "..." + line;
        if (from + 150 < s.line.size()) line += "...";
        md += "<li><a href=\"" + s.href + "\">" + html(s.label) + "</a><br/><code class=\"output-line\">" + html(line) + "</code></li>\n";
      }
      md += "</ul>\n";
    }
    if (inPrograms.count(name)) {
      md += "<p><b>Compared in</b> ";
      std::set<std::string> seen;
      size_t k = 0;
      for (const auto& [href, where] : inPrograms.at(name))
        if (seen.insert(href).second) md += std::string(k++ ? "; " : "") + "<a href=\"" + href + "\">" + html(where) + "</a>";
      md += "</p>\n";
    }
    if (checkedBy.count(name)) {
      md += "<p><b>Checked by</b></p>\n<ul class=\"error-tests\">\n";
      std::set<std::string> seen;
      for (const auto& t : checkedBy.at(name))
        if (seen.insert(t.href).second) md += testItem(t, all);
      md += "</ul>\n";
    }
    md += "</div>\n\\endhtmlonly\n\n";
    std::string words = replaceAll(name.substr(11), "_", " ");
    std::transform(words.begin(), words.end(), words.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    searchEntries.push_back({name, "errors.html#error_" + name,
                             name + " " + words + " " + (e ? std::to_string(e->code) : ""),
                             (e ? std::string(e->text) + " " : "") +
                                 (note != notes.end() ? note->second.cause + " " + note->second.todo : "")});
  }
  md += std::to_string(provoked.size()) + " errors.\n";
  write(out / "errors.md", typographicQuotes(md));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 7) {
    std::fprintf(stderr, "usage: generate-pages <repo> <out dir> <images dir> <manifest.tsv> <needs.tsv> <output columns>\n");
    return 2;
  }
  const fs::path repo = argv[1], out = argv[2], images = argv[3];
  outputColumns = std::stoul(argv[6]);
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
    for (const auto& suite : split(f[4], ','))
      if (!suite.empty()) l.multiSuites.push_back(suite);
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
  try {
    std::map<int, wb::LessonNeeds> needs;
    for (const auto& row : wb::readNeedsTable(argv[5])) needs[row.lesson] = row;
    for (auto& l : all) {
      const auto row = needs.find(std::stoi(l.nn));
      if (row == needs.end()) problems.push_back(std::string(argv[5]) + ": no row for lesson " + l.nn);
      else l.toRun = row->second;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "generate-pages: %s\n", e.what());
    return 1;
  }
  fs::remove_all(out);
  fs::create_directories(out);

  api = readApiMap(repo / "docs" / "api-map.tsv");
  std::map<std::string, std::set<std::string>> quoted;
  for (size_t i = 0; i < all.size(); ++i) lessonPage(repo, out, images, all, i, quoted);
  if (courseMinutes > kCourseMinutes)
    lintFindings.push_back("FAIL the lesson pages together take about " + std::to_string(courseMinutes) + " minutes to read, more than " +
                           std::to_string(kCourseMinutes));
  lintFindings.push_back("NOTE the lesson pages take about " + std::to_string(courseMinutes) + " minutes to read, their optional "
                         "pages " + std::to_string(deeperMinutes) + " more");

  std::string map = "| Lesson | Reading time | What you learn | What its assertions prove |\n|---|---|---|---|\n";
  for (const auto& l : all)
    map += "| @ref " + l.page() + " \"" + l.nn + " " + l.name() + "\" | " + readingTime[l.nn] + " | " + codeSpans(l.title) + " | " +
           codeSpans(l.proves) + " |\n";
  std::string main = read(repo / "docs" / "mainpage.md");
  if (main.find("@COURSE_MAP@") == std::string::npos) problems.push_back("docs/mainpage.md: @COURSE_MAP@ is missing");
  main = replaceAll(main, "@COURSE_MAP@", map);
  write(out / "mainpage.md", typographicQuotes(main));
  searchEntries.push_back({"The CUDA Driver API workbook", "index.html", "course start", plainText(main)});

  for (const auto& e : fs::directory_iterator(repo / "docs" / "pages")) {
    if (e.path().extension() != ".md") continue;
    const std::string md = read(e.path());
    write(out / e.path().filename(), typographicQuotes(md));
    std::smatch m;
    static const std::regex title(R"(^# (.*?)\s*\{#([A-Za-z0-9_]+)\})");
    if (std::regex_search(md, m, title)) indexSections(md, m[1], std::string(m[2]) + ".html");
  }
  apiPage(repo, out, all, quoted);
  cheatsheetPage(repo, out, all);
  errorsPage(repo, out, all);
  std::string findings;
  for (const auto& f : lintFindings) findings += f + "\n";
  write(out / "lint-findings.txt", findings);

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
