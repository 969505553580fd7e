// Reading the exercise files: the learner's lessons/NN-name/exercises.cpp (each exercise's comment
// and starting body) and the check file tests/exercises/exerciseNN_name.cpp (each EXERCISE's name,
// title and hint). The lint, the proofs and the page generator all read them through this header,
// so the page shows exactly what the learner's file and the check say. Header-only, no CUDA.
#pragma once

#include <cctype>
#include <cstdio>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

namespace wbx {

// One exercise as its comment in exercises.cpp states it:
//   // Exercise 1 of 3 (bounded-upload): An upload that refuses to write past the end of its allocation
//   //
//   // Task: ... (the story: why the task matters, what to call)
//   //
//   //   R1: one requirement, a sentence
//   //       that may go on, indented under its text
//   //   R2 (not checked: why no machine at hand can tell): another requirement
//   //
//   // The check: ...
//   //
//   // Learn it in: lesson 05, step 4 ("...")
//   <the function's signature> {
// The requirements are numbered from 1; each is checked (a case of the check names it, and a wrong
// variant breaks it) or says why it is not.
struct Requirement {
  int number = 0;
  bool checked = true;
  std::string why, text;  // why: what keeps it unchecked
};

struct ExerciseText {
  int number = 0, total = 0, line = 0;
  std::string name, title, task, check, learn, signature;
  std::vector<Requirement> requirements;
};

// A case of a check file (TEST_CASE in an EXERCISE block): the requirements its name begins with
// ("R1 R3: ..."), or a child case (run by another case in a child process: `doctest::skip(!wbt::inChild())`),
// which names none.
struct CheckCase {
  std::string exercise, name;
  std::vector<int> requirements;
  bool child = false;
  int line = 0;
};

struct CheckText {
  std::string name, title, hint;
};

namespace detail {

inline std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::string::size_type from = 0;
  while (from <= text.size()) {
    const auto to = text.find('\n', from);
    out.push_back(text.substr(from, to == std::string::npos ? std::string::npos : to - from));
    if (to == std::string::npos) break;
    from = to + 1;
  }
  return out;
}

inline std::string trim(const std::string& s) {
  std::string::size_type a = 0, b = s.size();
  while (a < b && std::isspace(static_cast<unsigned char>(s[a]))) ++a;
  while (b > a && std::isspace(static_cast<unsigned char>(s[b - 1]))) --b;
  return s.substr(a, b - a);
}

inline bool startsWith(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// {1, 3} as "R1 R3", the form the case names and the variants' first lines use.
inline std::string tagText(const std::vector<int>& tags) {
  std::string out;
  for (int n : tags) out += (out.empty() ? "R" : " R") + std::to_string(n);
  return out;
}

// "R1 R3" (or "R1, R3") at the start of text, followed by ": ": the numbers; empty when text does
// not start so.
inline std::vector<int> requirementTags(const std::string& text) {
  std::vector<int> tags;
  size_t i = 0;
  while (i < text.size() && text[i] == 'R' && i + 1 < text.size() && std::isdigit(static_cast<unsigned char>(text[i + 1]))) {
    int n = 0;
    for (++i; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i) n = n * 10 + (text[i] - '0');
    tags.push_back(n);
    if (i + 1 < text.size() && text[i] == ':' && text[i + 1] == ' ') return tags;
    while (i < text.size() && (text[i] == ' ' || text[i] == ',')) ++i;
  }
  return {};
}

// Appends a comment line to a paragraph; an empty comment line ends the paragraph.
inline void append(std::string& to, const std::string& text) {
  if (!to.empty()) to += ' ';
  to += text;
}

}  // namespace detail

// The exercises of a learner's file, in order; what is malformed goes to problems.
inline std::vector<ExerciseText> parseExercises(const std::string& text, std::vector<std::string>& problems) {
  using namespace detail;
  std::vector<ExerciseText> out;
  const std::vector<std::string> all = lines(text);
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string& l = all[i];
    if (!startsWith(l, "// Exercise ")) continue;
    ExerciseText e;
    e.line = static_cast<int>(i + 1);
    char name[128] = {0};
    int used = 0;
    if (std::sscanf(l.c_str(), "// Exercise %d of %d (%127[a-z0-9-]): %n", &e.number, &e.total, name, &used) < 3 ||
        used == 0) {
      problems.push_back("line " + std::to_string(i + 1) + ": expected \"// Exercise k of n (name): title\"");
      continue;
    }
    e.name = name;
    e.title = trim(l.substr(static_cast<size_t>(used)));
    std::string* into = nullptr;
    size_t j = i + 1;
    for (; j < all.size() && startsWith(all[j], "//"); ++j) {
      const std::string c = trim(all[j].substr(2));
      // "//   R<n>: text" or "//   R<n> (not checked: why): text", then lines indented under the text.
      if (startsWith(all[j], "//   R") && !e.task.empty() && e.check.empty()) {
        Requirement r;
        const std::string head = all[j].substr(5);
        size_t at = 1;
        while (at < head.size() && std::isdigit(static_cast<unsigned char>(head[at]))) r.number = r.number * 10 + (head[at++] - '0');
        const std::string notChecked = " (not checked: ";
        if (head.compare(at, notChecked.size(), notChecked) == 0) {
          const size_t close = head.find("): ", at);
          r.checked = false;
          if (close != std::string::npos) r.why = trim(head.substr(at + notChecked.size(), close - at - notChecked.size()));
          at = close == std::string::npos ? std::string::npos : close + 1;
        }
        if (r.number == 0 || at == std::string::npos || head.compare(at, 2, ": ") != 0 || (!r.checked && r.why.empty()))
          problems.push_back(e.name + ": line " + std::to_string(j + 1) +
                             ": expected \"//   R<n>: <requirement>\" or \"//   R<n> (not checked: <why>): <requirement>\"");
        else
          r.text = trim(head.substr(at + 2));
        e.requirements.push_back(r);
        into = &e.requirements.back().text;
        continue;
      }
      if (startsWith(all[j], "//       ") && !e.requirements.empty() && into == &e.requirements.back().text) {
        append(*into, c);
        continue;
      }
      if (startsWith(c, "Task:")) into = &e.task, append(*into, trim(c.substr(5)));
      else if (startsWith(c, "The check:")) into = &e.check, append(*into, trim(c.substr(10)));
      else if (startsWith(c, "Learn it in:")) into = &e.learn, append(*into, trim(c.substr(12)));
      else if (c.empty()) into = nullptr;
      else if (into) append(*into, c);
      else problems.push_back(e.name + ": a comment line outside Task/The check/Learn it in: " + c);
    }
    // The signature: the lines up to the body's opening brace.
    for (; j < all.size(); ++j) {
      const auto brace = all[j].find('{');
      detail::append(e.signature, trim(all[j].substr(0, brace)));
      if (brace != std::string::npos) break;
    }
    if (e.task.empty()) problems.push_back(e.name + ": no \"Task:\" paragraph");
    if (e.requirements.empty()) problems.push_back(e.name + ": no requirements (\"//   R1: ...\" lines after the Task paragraph)");
    for (size_t k = 0; k < e.requirements.size(); ++k)
      if (e.requirements[k].number != static_cast<int>(k + 1))
        problems.push_back(e.name + ": its requirements are not numbered R1 to R" + std::to_string(e.requirements.size())), k = e.requirements.size();
    if (e.check.empty()) problems.push_back(e.name + ": no \"The check:\" paragraph");
    if (e.learn.empty()) problems.push_back(e.name + ": no \"Learn it in:\" line");
    out.push_back(e);
  }
  for (size_t k = 0; k < out.size(); ++k)
    if (out[k].number != static_cast<int>(k + 1) || out[k].total != static_cast<int>(out.size()))
      problems.push_back(out[k].name + ": numbered " + std::to_string(out[k].number) + " of " +
                         std::to_string(out[k].total) + ", but it is " + std::to_string(k + 1) + " of " +
                         std::to_string(out.size()));
  return out;
}

// The EXERCISE("name", "title", "hint") blocks of a check file (each argument may be several
// adjacent string literals, as a long hint is).
inline std::vector<CheckText> parseChecks(const std::string& text, std::vector<std::string>& problems) {
  std::vector<CheckText> out;
  std::string::size_type at = 0;
  while ((at = text.find("\nEXERCISE(", at)) != std::string::npos) {
    at += 10;
    std::string args[3];
    for (int a = 0; a < 3; ++a) {
      bool any = false;
      for (;;) {
        while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
        if (at >= text.size() || text[at] != '"') break;
        for (++at; at < text.size() && text[at] != '"'; ++at) {
          if (text[at] == '\\' && at + 1 < text.size()) ++at;
          args[a] += text[at];
        }
        ++at, any = true;
      }
      if (!any) problems.push_back("an EXERCISE( whose argument " + std::to_string(a + 1) + " is not a string literal");
      while (at < text.size() && std::isspace(static_cast<unsigned char>(text[at]))) ++at;
      if (at < text.size() && (text[at] == ',' || text[at] == ')')) ++at;
    }
    out.push_back({args[0], args[1], args[2]});
  }
  return out;
}

// The cases of a check file, each under the EXERCISE block it follows.
inline std::vector<CheckCase> parseCheckCases(const std::string& text) {
  std::vector<CheckCase> out;
  std::string exercise;
  const std::vector<std::string> all = detail::lines(text);
  for (size_t i = 0; i < all.size(); ++i) {
    const std::string l = detail::trim(all[i]);
    if (detail::startsWith(all[i], "EXERCISE(\"")) {
      const auto end = all[i].find('"', 10);
      exercise = all[i].substr(10, end == std::string::npos ? 0 : end - 10);
      continue;
    }
    if (!detail::startsWith(l, "TEST_CASE(")) continue;
    // The arguments up to the line that closes them (a name may be adjacent literals on several lines).
    std::string args = l.substr(10);
    for (size_t k = i + 1; k < all.size() && args.find(") {") == std::string::npos && args.find(")) {") == std::string::npos &&
                           !(args.size() && args.back() == '{');
         ++k)
      args += " " + detail::trim(all[k]);
    CheckCase c;
    c.exercise = exercise, c.line = static_cast<int>(i + 1);
    c.child = args.find("inChild()") != std::string::npos;
    for (size_t at = 0; at < args.size() && args[at] == '"';) {
      size_t end = at + 1;
      for (; end < args.size() && args[end] != '"'; ++end)
        if (args[end] == '\\') c.name += args[++end];
        else c.name += args[end];
      at = end + 1;
      while (at < args.size() && args[at] == ' ') ++at;
    }
    c.requirements = detail::requirementTags(c.name);
    out.push_back(c);
  }
  return out;
}

// A function (or class) body at namespace level: where its head starts, the head, and the body
// without whitespace.
struct Body {
  int line = 0;  // of the opening brace
  std::string head, code;
};

// The bodies at namespace level of a source file, comments, string literals and preprocessor lines
// left out; false with why when its braces do not balance.
inline bool namespaceBodies(const std::string& text, std::vector<Body>& bodies, std::string& why) {
  // Drop comments, string literals and preprocessor lines, keeping braces, code and line breaks.
  std::string code;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.compare(i, 2, "//") == 0 || (text[i] == '#' && (i == 0 || text[i - 1] == '\n'))) {
      while (i < text.size() && text[i] != '\n') ++i;
      code += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      const auto end = text.find("*/", i + 2);
      for (size_t k = i; k < (end == std::string::npos ? text.size() : end); ++k)
        if (text[k] == '\n') code += '\n';
      i = end == std::string::npos ? text.size() : end + 1;
    } else if (text[i] == '"') {
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\') ++i;
      code += "\"\"";
    } else {
      code += text[i];
    }
  }
  int depth = 0, namespaces = 0, line = 1;
  std::vector<bool> isNamespace;
  size_t statementStart = 0;
  for (size_t i = 0; i < code.size(); ++i) {
    const char c = code[i];
    line += c == '\n';
    if (c == ';' && depth == namespaces) statementStart = i + 1;
    if (c == '}') {
      if (isNamespace.empty()) return why = "unbalanced braces", false;
      if (isNamespace.back()) --namespaces;
      isNamespace.pop_back(), --depth, statementStart = i + 1;
    }
    if (c != '{') continue;
    const std::string head = detail::trim(code.substr(statementStart, i - statementStart));
    if (depth == namespaces && detail::startsWith(head, "namespace")) {
      isNamespace.push_back(true), ++depth, ++namespaces, statementStart = i + 1;
      continue;
    }
    // A block at namespace level that is not a namespace: a function body (or a class).
    int level = 1;
    size_t end = i + 1;
    for (; end < code.size() && level; ++end) level += code[end] == '{' ? 1 : code[end] == '}' ? -1 : 0;
    Body b;
    b.line = line, b.head = head;
    for (size_t k = i + 1; k + 1 < end; ++k) {
      if (!std::isspace(static_cast<unsigned char>(code[k]))) b.code += code[k];
      line += code[k] == '\n';
    }
    bodies.push_back(b);
    i = end - 1, statementStart = end;
  }
  return true;
}

// A body as shipped: wb::notDone(); (a destructor's may be empty).
inline bool isStartingBody(const Body& b) {
  return b.code == "wb::notDone();" || (b.head.find('~') != std::string::npos && b.code.empty());
}

// Whether a learner's file is as shipped: every function body at namespace level is exactly
// `wb::notDone();` (a destructor's may be empty). The proof that every check reports "not done"
// only means something for such a file; why not, in why.
inline bool isStartingFile(const std::string& text, std::string& why) {
  std::vector<Body> bodies;
  if (!namespaceBodies(text, bodies, why)) return false;
  for (const Body& b : bodies)
    if (!isStartingBody(b)) return why = "\"" + b.head + "\" does not have the starting body wb::notDone();", false;
  if (bodies.empty()) return why = "no exercise function found", false;
  return true;
}

// The exercises of a learner's file that the learner has started: one of the bodies below its
// comment (up to the next exercise's) is no longer the starting body.
inline std::vector<std::string> startedExercises(const std::string& text) {
  std::vector<std::string> started, problems;
  const std::vector<ExerciseText> exercises = parseExercises(text, problems);
  std::vector<Body> bodies;
  std::string why;
  if (!namespaceBodies(text, bodies, why)) {  // braces that do not balance: everything is in the works
    for (const auto& e : exercises) started.push_back(e.name);
    return started;
  }
  for (size_t k = 0; k < exercises.size(); ++k) {
    const int from = exercises[k].line, to = k + 1 < exercises.size() ? exercises[k + 1].line : 1 << 30;
    bool edited = false;
    for (const Body& b : bodies) edited = edited || (b.line > from && b.line < to && !isStartingBody(b));
    if (edited) started.push_back(exercises[k].name);
  }
  return started;
}

// What one run of an exercise's check recorded (check_main.cpp writes it to
// $WORKBOOK_EXERCISE_RESULTS/NN.name.txt): its status, title, first failure and that failure's
// messages, and each case's status.
struct Recorded {
  std::string status, title, detail;
  std::string partlySkipped;  // a done exercise: the case this machine could not run, and why
  std::vector<std::string> context;
  std::vector<std::pair<std::string, std::string>> cases;  // status, name
};

inline bool readResult(const std::string& file, Recorded& r) {
  std::ifstream in(file);
  if (!in) return false;
  for (std::string line; std::getline(in, line);) {
    const auto space = line.find(' ');
    const std::string key = line.substr(0, space), value = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "status") r.status = value;
    else if (key == "title") r.title = value;
    else if (key == "detail") r.detail = value;
    else if (key == "context") r.context.push_back(value);
    else if (key == "partly-skipped") r.partlySkipped = value;
    else if (key == "case") {
      const auto s = value.find(' ');
      r.cases.push_back({value.substr(0, s), value.substr(s + 1)});
    }
  }
  return !r.status.empty();
}

}  // namespace wbx
