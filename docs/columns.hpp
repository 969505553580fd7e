// How wide a line of text is on the page: one column per UTF-8 code point ("µs", "→", "↪"). The
// generator wraps program output with it and docs.lint measures the rendered boxes with it, so the
// two cannot disagree about what fits.
#pragma once

#include <algorithm>
#include <cstddef>
#include <string>

inline size_t columnsOf(const std::string& s) {
  return static_cast<size_t>(
      std::count_if(s.begin(), s.end(), [](char c) { return (static_cast<unsigned char>(c) & 0xC0) != 0x80; }));
}
