// figure-plot: draws a lesson's comparison figure (two or more ways measured in the same run) from
// the CSV the lesson wrote with --csv, so no figure on the site is drawn by hand.
//
//   figure-plot <in.csv> <lessonNN.txt> <out.svg>
//
// The CSV: a header line naming three columns, then one row per measurement, for example
//   bytes,way,microseconds
//   4096,cuMemAlloc+cuMemFree,12.5
//   4096,pool (warm),0.9
// The first column is the x axis (a size in bytes when its name is "bytes", else a count), the
// second names the line, the third is the y axis. Both axes are logarithmic: the ways compared
// differ by orders of magnitude. A row whose x is 0 and whose name begins "limit: " is no
// measurement but a limit the ways are held to (a link's rate, as lesson 18 reads it from NVML): it
// is drawn as a dashed line across the plot, labelled with the rest of its name. The title names the GPU and driver from the recorded output's
// header. Text is drawn in currentColor, so the inlined figure follows the site's light and dark
// themes; colour, dash and marker all differ between lines, so coinciding lines stay readable.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct Point {
  double x, y;
};

std::string label(double v, bool bytes) {
  if (!bytes) {  // whole numbers in full (1000000, never 1e+06 beside 100000)
    char buf[32];
    std::snprintf(buf, sizeof buf, v >= 1 && v == std::floor(v) && v < 1e15 ? "%.0f" : "%g", v);
    return buf;
  }
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (v >= 1024 && u < 3) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %s", v, units[u]);
  return buf;
}

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::stringstream ss(line);
  for (std::string cell; std::getline(ss, cell, ',');) out.push_back(cell);
  return out;
}

std::string recordedOn(const char* path) {
  std::ifstream rec(path);
  std::string header;
  while (std::getline(rec, header) && header.rfind("# recorded ", 0) != 0) {
  }
  const auto on = header.find(" on "), comma = header.find(", driver ");
  if (on == std::string::npos || comma == std::string::npos) return "";
  std::string gpu = header.substr(on + 4, comma - on - 4);
  if (const auto first = gpu.find("(the first: "); first != std::string::npos)
    gpu = gpu.substr(first + 12, gpu.find(')', first) - first - 12);
  return gpu + ", driver " + header.substr(comma + 9, header.find_first_of(", ", comma + 9) - comma - 9);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: figure-plot <in.csv> <lessonNN.txt> <out.svg>\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  std::string line;
  if (!in || !std::getline(in, line)) {
    std::fprintf(stderr, "figure-plot: cannot read %s\n", argv[1]);
    return 1;
  }
  const std::vector<std::string> columns = split(line);
  if (columns.size() != 3) {
    std::fprintf(stderr, "figure-plot: %s: the header must name three columns (x,series,y)\n", argv[1]);
    return 1;
  }
  const bool bytes = columns[0] == "bytes";
  std::map<std::string, std::vector<Point>> series;
  std::vector<std::string> order;  // lines in the order the CSV first names them
  std::vector<std::pair<std::string, double>> limits;  // "limit: <label>" rows: label, y
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    auto cells = split(line);
    if (cells.size() < 3) {
      std::fprintf(stderr, "figure-plot: %s: a row of fewer than three cells: %s\n", argv[1], line.c_str());
      return 1;
    }
    // The first cell is x and the last y: a series' name may itself hold commas.
    for (size_t extra = cells.size() - 3; extra > 0; --extra) {
      cells[1] += "," + cells[2];
      cells.erase(cells.begin() + 2);
    }
    char* end = nullptr;
    const double x = std::strtod(cells[0].c_str(), &end), y = std::strtod(cells[2].c_str(), nullptr);
    if (cells[0] == "0" && cells[1].rfind("limit: ", 0) == 0 && y > 0) {
      limits.emplace_back(cells[1].substr(7), y);
      continue;
    }
    if (end == cells[0].c_str() || x <= 0 || y <= 0) {
      std::fprintf(stderr, "figure-plot: %s: a row that is not two positive numbers around a name: %s\n", argv[1],
                   line.c_str());
      return 1;
    }
    if (!series.count(cells[1])) order.push_back(cells[1]);
    series[cells[1]].push_back({x, y});
  }
  if (series.empty()) {
    std::fprintf(stderr, "figure-plot: no rows in %s\n", argv[1]);
    return 1;
  }
  double minX = 1e300, maxX = 0, minY = 1e300, maxY = 0;
  for (auto& [name, points] : series) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.x < b.x; });
    for (const auto& p : points) {
      minX = std::min(minX, p.x), maxX = std::max(maxX, p.x);
      minY = std::min(minY, p.y), maxY = std::max(maxY, p.y);
    }
  }
  for (const auto& limit : limits) minY = std::min(minY, limit.second), maxY = std::max(maxY, limit.second);
  if (maxX == minX) maxX = minX * 2;
  const double lo = std::pow(10.0, std::floor(std::log10(minY))), hi = std::pow(10.0, std::ceil(std::log10(maxY)));
  const double top = hi > lo ? hi : lo * 10;
  // Narrow enough to fit a phone's column (about 350 px) with its smallest text still 11 px (the
  // site shrinks a picture no further), so the legend goes below the plot, one entry a row, long
  // names on two; the limits are entries there too. The title is two lines: what, and where.
  // The y labels' column is as wide as the widest label (a digit is about 8.3 units at this size in
  // DejaVu Sans, so 8.5 a character), beside the rotated axis title; the plot gives up that width,
  // so the picture's width stays.
  size_t widest = 0;
  for (double v = lo; v <= top * 1.0001; v *= 10) widest = std::max(widest, label(v, false).size());
  const int left = 36 + 17 * static_cast<int>(std::max<size_t>(widest, 4)) / 2, plotW = 386 - left, upper = 58, plotH = 260,
            below = 52;
  const int W = left + plotW + 30;  // room for the last x label
  const auto wrapped = [](const std::string& text) {  // rows of at most 46 characters, broken at a space
    std::vector<std::string> rows;
    std::string rest = text;
    while (rest.size() > 46) {
      size_t cut = rest.rfind(' ', 46);
      if (cut == std::string::npos || cut == 0) cut = 46;
      rows.push_back(rest.substr(0, cut));
      rest = rest.substr(cut + (rest[cut] == ' '));
    }
    rows.push_back(rest);
    return rows;
  };
  std::vector<std::pair<std::string, std::vector<std::string>>> legend;  // (stroke attributes, rows)
  const char* colors[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"};
  const char* dashes[] = {"", " stroke-dasharray=\"7 4\"", " stroke-dasharray=\"2 3\""};
  // Line i's style: past six lines the colours repeat, and the dash and marker shift.
  const auto dashOf = [&](size_t i) { return dashes[(i + i / 6) % 3]; };
  const auto squareMarks = [](size_t i) { return (i + i / 6) % 2 == 1; };
  for (size_t i = 0; i < order.size(); ++i)
    legend.push_back({std::string("stroke=\"") + colors[i % 6] + "\" stroke-width=\"2.5\"" + dashOf(i), wrapped(order[i])});
  for (const auto& [name, y] : limits) {
    char value[32];
    std::snprintf(value, sizeof value, "%g", y);
    legend.push_back({"stroke=\"currentColor\" stroke-width=\"1.5\" stroke-dasharray=\"10 5\"",
                      wrapped("the limit: " + name + ", " + value + " " + columns[2])});
  }
  int legendRows = 0;
  for (const auto& entry : legend) legendRows += static_cast<int>(entry.second.size());
  const int H = upper + plotH + below + 20 * legendRows + 6 * static_cast<int>(legend.size()) + 8;
  const std::string where = recordedOn(argv[2]);
  const std::string title = columns[2] + " by " + columns[0];
  const auto px = [&](double v) { return left + plotW * (std::log(v) - std::log(minX)) / (std::log(maxX) - std::log(minX)); };
  const auto py = [&](double v) { return upper + plotH * (1.0 - (std::log10(v) - std::log10(lo)) / (std::log10(top) - std::log10(lo))); };

  std::ofstream out(argv[3]);
  // Shown 1.3 times its drawing size where there is room: its 13-unit text then reads at about 17 px.
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << std::lround(W * 1.3) << "\" height=\"" << std::lround(H * 1.3) << "\" viewBox=\"0 0 " << W
      << " " << H << "\" font-family=\"sans-serif\" font-size=\"13\">\n";
  out << "<title>" << columns[2] << " by " << columns[0] << (where.empty() ? "" : " on " + where) << "</title>\n";
  out << "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"currentColor\">" << title << "</text>\n";
  if (!where.empty()) out << "<text x=\"8\" y=\"40\" fill=\"currentColor\">" << where << "</text>\n";
  for (double v = lo; v <= top * 1.0001; v *= 10) {
    out << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << py(v) << "\" y2=\"" << py(v)
        << "\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>\n<text x=\"" << left - 8 << "\" y=\"" << py(v) + 4
        << "\" text-anchor=\"end\" fill=\"currentColor\">" << label(v, false) << "</text>\n";
  }
  std::vector<double> ticks;
  for (const auto& [name, points] : series)
    for (const auto& p : points) ticks.push_back(p.x);
  std::sort(ticks.begin(), ticks.end());
  ticks.erase(std::unique(ticks.begin(), ticks.end()), ticks.end());
  double lastTick = -1e9;
  for (double t : ticks) {
    if (px(t) - lastTick < 48) continue;  // labels never overlap
    lastTick = px(t);
    out << "<line x1=\"" << px(t) << "\" x2=\"" << px(t) << "\" y1=\"" << upper << "\" y2=\"" << upper + plotH
        << "\" stroke=\"currentColor\" stroke-opacity=\"0.08\"/>\n<text x=\"" << px(t) << "\" y=\"" << upper + plotH + 18
        << "\" text-anchor=\"middle\" fill=\"currentColor\">" << label(t, bytes) << "</text>\n";
  }
  out << "<text x=\"" << left + plotW / 2 << "\" y=\"" << upper + plotH + 40 << "\" text-anchor=\"middle\" fill=\"currentColor\">"
      << columns[0] << " (log scale)</text>\n";
  out << "<text transform=\"translate(20," << upper + plotH / 2 << ") rotate(-90)\" text-anchor=\"middle\" "
      << "fill=\"currentColor\">" << columns[2] << " (log scale)</text>\n";
  for (const auto& limit : limits)
    out << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << py(limit.second) << "\" y2=\"" << py(limit.second)
        << "\" stroke=\"currentColor\" stroke-width=\"1.5\" stroke-dasharray=\"10 5\"/>\n";
  for (size_t i = 0; i < order.size(); ++i) {
    const auto& points = series.at(order[i]);
    const char* color = colors[i % 6];
    const char* dash = dashOf(i);
    out << "<polyline fill=\"none\" stroke=\"" << color << "\" stroke-width=\"2.5\"" << dash << " points=\"";
    for (const auto& p : points) out << px(p.x) << "," << py(p.y) << " ";
    out << "\"/>\n";
    for (const auto& p : points) {
      if (squareMarks(i))
        out << "<rect x=\"" << px(p.x) - 3.5 << "\" y=\"" << py(p.y) - 3.5 << "\" width=\"7\" height=\"7\" fill=\"none\" "
            << "stroke=\"" << color << "\" stroke-width=\"1.5\"/>\n";
      else
        out << "<circle cx=\"" << px(p.x) << "\" cy=\"" << py(p.y) << "\" r=\"4\" fill=\"" << color << "\"/>\n";
    }
  }
  double ly = upper + plotH + below + 14;
  for (const auto& [stroke, rows] : legend) {
    out << "<line x1=\"8\" x2=\"42\" y1=\"" << ly - 4 << "\" y2=\"" << ly - 4 << "\" " << stroke << "/>\n";
    for (const auto& row : rows) {
      out << "<text x=\"50\" y=\"" << ly << "\" fill=\"currentColor\">" << row << "</text>\n";
      ly += 20;
    }
    ly += 6;
  }
  out << "</svg>\n";
  return out ? 0 : 1;
}
