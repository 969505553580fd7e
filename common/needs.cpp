#include "needs.hpp"

#include <fstream>
#include <sstream>
#include <stdexcept>

namespace wb {
namespace {

std::vector<std::string> fields(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream in(line);
  for (std::string f; std::getline(in, f, '\t');) out.push_back(f);
  return out;
}

// "9.0" -> 9 and 0; "-" -> none. Anything else is a typo in the table, not a version.
bool majorMinor(const std::string& text, int& major, int& minor) {
  if (text == "-") return major = minor = 0, true;
  const size_t dot = text.find('.');
  if (dot == 0 || dot == std::string::npos || dot + 2 != text.size()) return false;
  for (size_t i = 0; i < text.size(); ++i)
    if (i != dot && (text[i] < '0' || text[i] > '9')) return false;
  major = std::stoi(text.substr(0, dot));
  minor = text[dot + 1] - '0';
  return true;
}

// "A..B" or "B" (A = B); scale turns major and minor into the column's number.
Need need(const std::string& text, const char* column, int (*scale)(int, int)) {
  const size_t dots = text.find("..");
  const std::string a = dots == std::string::npos ? text : text.substr(0, dots);
  const std::string b = dots == std::string::npos ? text : text.substr(dots + 2);
  int ma = 0, na = 0, mb = 0, nb = 0;
  if (!majorMinor(a, ma, na) || !majorMinor(b, mb, nb) || b == "-")
    throw std::invalid_argument(std::string("column ") + column + ": '" + text +
                                "' is not A..B or B (e.g. 12.0..12.8, 9.0)");
  Need n{a == "-" ? 0 : scale(ma, na), scale(mb, nb)};
  if (n.any > n.every) throw std::invalid_argument(std::string("column ") + column + ": " + a + " is newer than " + b);
  return n;
}

int capability(int major, int minor) { return major * 10 + minor; }
int cudaVersion(int major, int minor) { return major * 1000 + minor * 10; }

// "7.5 (9.0 for all steps)", "9.0", "none (7.5 for all steps)".
std::string range(const Need& n, std::string (*text)(int)) {
  return n.any == n.every ? text(n.every) : text(n.any) + " (" + text(n.every) + " for all steps)";
}

}  // namespace

bool meets(int have, const Need& need, For scope) { return have >= (scope == For::EveryStep ? need.every : need.any); }

std::string capabilityText(int cc) {
  return cc == 0 ? "none" : std::to_string(cc / 10) + "." + std::to_string(cc % 10);
}

std::string toolkitText(int version) {
  return version == 0 ? "none" : std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

LessonNeeds parseNeedsRow(const std::string& line) {
  const std::vector<std::string> f = fields(line);
  if (f.size() != 7)
    throw std::invalid_argument(std::to_string(f.size()) +
                                " columns, not 7 (lesson cc toolkit driver left_out os gpus)");
  LessonNeeds row;
  if (f[0].size() != 2 || f[0].find_first_not_of("0123456789") != std::string::npos)
    throw std::invalid_argument("column lesson: '" + f[0] + "' is not a two-digit number");
  row.lesson = std::stoi(f[0]);
  row.cc = need(f[1], "cc", capability);
  row.toolkit = need(f[2], "toolkit", cudaVersion);
  row.driver = need(f[3], "driver", cudaVersion);
  if (row.toolkit.any == 0) throw std::invalid_argument("column toolkit: every lesson is built with some toolkit");
  row.leftOut = f[4], row.os = f[5], row.gpus = f[6];
  for (const auto& [text, column] : {std::pair{&row.leftOut, "left_out"}, {&row.os, "os"}, {&row.gpus, "gpus"}})
    if (text->empty()) throw std::invalid_argument(std::string("column ") + column + " is empty");
  if (row.gpus.find_first_not_of("0123456789") == 0)
    throw std::invalid_argument("column gpus: '" + row.gpus + "' does not start with a number");
  return row;
}

std::vector<LessonNeeds> readNeedsTable(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot be read");
  std::vector<LessonNeeds> rows;
  int number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (line.empty() || line[0] == '#' || line.rfind("lesson\t", 0) == 0) continue;
    try {
      rows.push_back(parseNeedsRow(line));
    } catch (const std::invalid_argument& e) {
      throw std::runtime_error(path + ":" + std::to_string(number) + ": " + e.what());
    }
  }
  return rows;
}

std::string needsText(const LessonNeeds& row) {
  std::string text = "CC " + range(row.cc, capabilityText) + "; CUDA " + range(row.toolkit, toolkitText);
  if (row.driver.any != row.toolkit.any || row.driver.every != row.toolkit.every)
    text += ", driver " + range(row.driver, toolkitText);
  // "1" -> "1 GPU", "0 (2 for ...)" -> "no GPU (2 for ...)".
  const size_t digits = row.gpus.find_first_not_of("0123456789");
  const std::string count = row.gpus.substr(0, digits);
  const std::string rest = digits == std::string::npos ? "" : row.gpus.substr(digits);
  const std::string gpus = count == "0" ? "no GPU" : count + (count == "1" ? " GPU" : " GPUs");
  return text + "; " + row.os + "; " + gpus + rest;
}

}  // namespace wb
