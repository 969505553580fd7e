// bandwidth-plot: turns lesson 05's CSV (bytes,direction,host_memory,median_ms,gb_per_s) into an
// SVG line plot of bandwidth over transfer size, one line per direction and kind of host memory.
// The docs target runs it on docs/output/lesson05-bandwidth.csv, so the plot is never drawn by hand.
//
//   bandwidth-plot <in.csv> <out.svg>
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
  double bytes, gbps;
};

std::string sizeLabel(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB"};
  int u = 0;
  while (bytes >= 1024 && u < 3) {
    bytes /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g %s", bytes, units[u]);
  return buf;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: bandwidth-plot <in.csv> <out.svg>\n");
    return 2;
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "bandwidth-plot: cannot read %s\n", argv[1]);
    return 1;
  }
  std::map<std::string, std::vector<Point>> series;  // "HtoD pinned" -> points
  std::string line;
  std::getline(in, line);  // header
  if (line.rfind("bytes,direction,host_memory", 0) != 0) {
    std::fprintf(stderr, "bandwidth-plot: %s does not start with lesson 05's header\n", argv[1]);
    return 1;
  }
  while (std::getline(in, line)) {
    std::stringstream ss(line);
    std::string bytes, dir, host, ms, gbps;
    if (!std::getline(ss, bytes, ',') || !std::getline(ss, dir, ',') || !std::getline(ss, host, ',') ||
        !std::getline(ss, ms, ',') || !std::getline(ss, gbps, ','))
      continue;
    series[dir + " " + host].push_back({std::stod(bytes), std::stod(gbps)});
  }
  if (series.empty()) {
    std::fprintf(stderr, "bandwidth-plot: no rows in %s\n", argv[1]);
    return 1;
  }

  double minB = 1e300, maxB = 0, maxG = 0;
  for (auto& [name, points] : series) {
    std::sort(points.begin(), points.end(), [](const Point& a, const Point& b) { return a.bytes < b.bytes; });
    for (const auto& p : points) {
      minB = std::min(minB, p.bytes);
      maxB = std::max(maxB, p.bytes);
      maxG = std::max(maxG, p.gbps);
    }
  }
  const double top = std::ceil(maxG / 10.0) * 10.0;
  const int W = 760, H = 440, left = 70, right = 190, upper = 40, lower = 60;
  const double plotW = W - left - right, plotH = H - upper - lower;
  const auto x = [&](double b) { return left + plotW * (std::log2(b) - std::log2(minB)) / (std::log2(maxB) - std::log2(minB)); };
  const auto y = [&](double g) { return upper + plotH * (1.0 - g / top); };

  std::ofstream out(argv[2]);
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << W << "\" height=\"" << H << "\" viewBox=\"0 0 " << W
      << " " << H << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  // A light card of its own, so the plot reads the same in the site's light and dark themes.
  out << "<rect width=\"100%\" height=\"100%\" rx=\"8\" fill=\"#fafafa\" stroke=\"#d0d0d0\"/>\n";
  out << "<text x=\"" << left << "\" y=\"24\" font-size=\"14\" font-weight=\"bold\" fill=\"#222\">Copy bandwidth, "
         "pinned against pageable host memory (median of 7)</text>\n";
  for (int i = 0; i <= 5; ++i) {
    const double g = top * i / 5;
    out << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << y(g) << "\" y2=\"" << y(g)
        << "\" stroke=\"#e0e0e0\"/>\n<text x=\"" << left - 8 << "\" y=\"" << y(g) + 4
        << "\" text-anchor=\"end\" fill=\"#444\">" << g << "</text>\n";
  }
  for (double b = minB; b <= maxB * 1.0001; b *= 4) {
    out << "<line x1=\"" << x(b) << "\" x2=\"" << x(b) << "\" y1=\"" << upper << "\" y2=\"" << upper + plotH
        << "\" stroke=\"#eeeeee\"/>\n<text x=\"" << x(b) << "\" y=\"" << upper + plotH + 18
        << "\" text-anchor=\"middle\" fill=\"#444\">" << sizeLabel(b) << "</text>\n";
  }
  out << "<text x=\"" << left + plotW / 2 << "\" y=\"" << H - 14 << "\" text-anchor=\"middle\" fill=\"#222\">"
      << "transfer size (log scale)</text>\n";
  out << "<text transform=\"translate(20," << upper + plotH / 2 << ") rotate(-90)\" text-anchor=\"middle\" "
      << "fill=\"#222\">GB/s</text>\n";
  const std::map<std::string, std::string> colors = {{"HtoD pinned", "#1f77b4"},
                                                     {"DtoH pinned", "#2ca02c"},
                                                     {"HtoD pageable", "#ff7f0e"},
                                                     {"DtoH pageable", "#d62728"}};
  int row = 0;
  for (const auto& [name, points] : series) {
    const auto c = colors.count(name) ? colors.at(name) : std::string("#555");
    const bool dashed = name.find("pageable") != std::string::npos;
    out << "<polyline fill=\"none\" stroke=\"" << c << "\" stroke-width=\"2\"" << (dashed ? " stroke-dasharray=\"6 4\"" : "")
        << " points=\"";
    for (const auto& p : points) out << x(p.bytes) << "," << y(p.gbps) << " ";
    out << "\"/>\n";
    for (const auto& p : points) out << "<circle cx=\"" << x(p.bytes) << "\" cy=\"" << y(p.gbps) << "\" r=\"3\" fill=\"" << c << "\"/>\n";
    const double ly = upper + 20 + 22 * row++;
    out << "<line x1=\"" << W - right + 20 << "\" x2=\"" << W - right + 50 << "\" y1=\"" << ly << "\" y2=\"" << ly
        << "\" stroke=\"" << c << "\" stroke-width=\"2\"" << (dashed ? " stroke-dasharray=\"6 4\"" : "") << "/>\n"
        << "<text x=\"" << W - right + 58 << "\" y=\"" << ly + 4 << "\" fill=\"#222\">" << name << "</text>\n";
  }
  out << "</svg>\n";
  return out ? 0 : 1;
}
