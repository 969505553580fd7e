// bandwidth-plot: turns lesson 05's CSV (bytes,direction,host_memory,median_ms,gb_per_s) into an
// SVG line plot of bandwidth over transfer size, one line per direction and kind of host memory.
// The docs target runs it on docs/output/lesson05-bandwidth.csv, so the plot is never drawn by hand;
// the title names the GPU and driver from the header of the recorded output, lesson05.txt.
// Text and axes are drawn in currentColor on a transparent background, so the inlined plot
// follows the site's light and dark themes. Colour tells pinned from pageable; the line style
// tells the direction (solid: to the device, dashed: back), and the markers differ too, so two
// lines that coincide stay readable. A row "0,limit,<link>,0,<GB/s>" draws the link's limit across.
//
//   bandwidth-plot <in.csv> <lesson05.txt> <out.svg>
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
  if (argc != 4) {
    std::fprintf(stderr, "usage: bandwidth-plot <in.csv> <lesson05.txt> <out.svg>\n");
    return 2;
  }
  // "# recorded 2026-11-22 on 2 GPUs (the first: NVIDIA H200), driver 580.159.04, ..." -> the GPU.
  std::string gpu = "the recording GPU", driver;
  {
    std::ifstream rec(argv[2]);
    std::string header;
    while (std::getline(rec, header) && header.rfind("# recorded ", 0) != 0) {
    }
    const auto on = header.find(" on "), comma = header.find(", driver ");
    if (on != std::string::npos && comma != std::string::npos) {
      gpu = header.substr(on + 4, comma - on - 4);
      if (const auto first = gpu.find("(the first: "); first != std::string::npos)
        gpu = gpu.substr(first + 12, gpu.find(')', first) - first - 12);
      driver = header.substr(comma + 9, header.find_first_of(", ", comma + 9) - comma - 9);
    }
  }
  std::ifstream in(argv[1]);
  if (!in) {
    std::fprintf(stderr, "bandwidth-plot: cannot read %s\n", argv[1]);
    return 1;
  }
  std::map<std::string, std::vector<Point>> series;  // "HtoD pinned" -> points
  double limit = 0;
  std::string limitLabel;
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
    if (dir == "limit")  // the link's limit, as NVML reported it: a line across the plot
      limit = std::stod(gbps), limitLabel = host;
    else
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
  const double top = std::ceil(std::max(maxG, limit) / 10.0) * 10.0;
  // Narrow enough to fit a phone's column (about 350 px) with its smallest text still 11 px (the
  // site shrinks a picture no further): the legend goes below the plot, the title on two lines.
  const int left = 56, upper = 58, legendTop = 376;  // a row clear of the axis title (its baseline 348)
  const double plotW = 330, plotH = 250;
  const int W = left + 330 + 30, H = legendTop + 22 * 4 + 50;  // room for the last size label
  const auto x = [&](double b) { return left + plotW * (std::log2(b) - std::log2(minB)) / (std::log2(maxB) - std::log2(minB)); };
  const auto y = [&](double g) { return upper + plotH * (1.0 - g / top); };

  std::ofstream out(argv[3]);
  // Shown 1.3 times its drawing size where there is room: its 13-unit text then reads at about 17 px.
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << std::lround(W * 1.3) << "\" height=\"" << std::lround(H * 1.3) << "\" viewBox=\"0 0 " << W
      << " " << H << "\" font-family=\"sans-serif\" font-size=\"13\">\n";
  out << "<title>Copy bandwidth on " << gpu << "</title>\n";
  out << "<text x=\"8\" y=\"20\" font-size=\"15\" font-weight=\"bold\" fill=\"currentColor\">Copy bandwidth, median of 7</text>\n"
      << "<text x=\"8\" y=\"40\" fill=\"currentColor\">on " << gpu << (driver.empty() ? "" : " (driver " + driver + ")") << "</text>\n";
  for (int i = 0; i <= 5; ++i) {
    const double g = top * i / 5;
    out << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << y(g) << "\" y2=\"" << y(g)
        << "\" stroke=\"currentColor\" stroke-opacity=\"0.15\"/>\n<text x=\"" << left - 8 << "\" y=\"" << y(g) + 4
        << "\" text-anchor=\"end\" fill=\"currentColor\">" << g << "</text>\n";
  }
  double lastTick = -1e9;
  for (double b = minB; b <= maxB * 1.0001; b *= 4) {
    if (x(b) - lastTick < 52) continue;  // labels never overlap
    lastTick = x(b);
    out << "<line x1=\"" << x(b) << "\" x2=\"" << x(b) << "\" y1=\"" << upper << "\" y2=\"" << upper + plotH
        << "\" stroke=\"currentColor\" stroke-opacity=\"0.08\"/>\n<text x=\"" << x(b) << "\" y=\"" << upper + plotH + 18
        << "\" text-anchor=\"middle\" fill=\"currentColor\">" << sizeLabel(b) << "</text>\n";
  }
  out << "<text x=\"" << left + plotW / 2 << "\" y=\"" << upper + plotH + 40 << "\" text-anchor=\"middle\" fill=\"currentColor\">"
      << "transfer size (log scale)</text>\n";
  out << "<text transform=\"translate(20," << upper + plotH / 2 << ") rotate(-90)\" text-anchor=\"middle\" "
      << "fill=\"currentColor\">GB/s</text>\n";
  char limitText[32];
  std::snprintf(limitText, sizeof limitText, "%.1f", limit);
  if (limit > 0)
    out << "<line x1=\"" << left << "\" x2=\"" << left + plotW << "\" y1=\"" << y(limit) << "\" y2=\"" << y(limit)
        << "\" stroke=\"currentColor\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>\n"
        << "<line x1=\"8\" x2=\"42\" y1=\"" << legendTop + 22 * 4 - 4 << "\" y2=\"" << legendTop + 22 * 4 - 4
        << "\" stroke=\"currentColor\" stroke-width=\"1.5\" stroke-dasharray=\"2 3\"/>\n<text x=\"50\" y=\"" << legendTop + 22 * 4
        << "\" fill=\"currentColor\">the link: " << limitLabel << ",</text>\n<text x=\"50\" y=\"" << legendTop + 22 * 4 + 20
        << "\" fill=\"currentColor\">" << limitText << " GB/s per direction</text>\n";
  // Pinned blue, pageable orange; to the device solid with circles, back dashed with squares. The
  // solid lines are drawn wider underneath, so a dashed line on top of one stays visible.
  struct Style { const char* color; bool dashed; };
  const std::map<std::string, Style> styles = {{"HtoD pinned", {"#1f77b4", false}},
                                               {"DtoH pinned", {"#17becf", true}},
                                               {"HtoD pageable", {"#ff7f0e", false}},
                                               {"DtoH pageable", {"#d62728", true}}};
  std::vector<std::string> order;
  for (const auto& [name, points] : series)
    if (!(styles.count(name) && styles.at(name).dashed)) order.push_back(name);
  for (const auto& [name, points] : series)
    if (styles.count(name) && styles.at(name).dashed) order.push_back(name);
  int row = 0;
  for (const auto& name : order) {
    const auto& points = series.at(name);
    const Style st = styles.count(name) ? styles.at(name) : Style{"#888888", false};
    const char* dash = st.dashed ? " stroke-dasharray=\"7 4\"" : "";
    const char* width = st.dashed ? "2" : "4";
    out << "<polyline fill=\"none\" stroke=\"" << st.color << "\" stroke-width=\"" << width << "\"" << dash << " points=\"";
    for (const auto& p : points) out << x(p.bytes) << "," << y(p.gbps) << " ";
    out << "\"/>\n";
    for (const auto& p : points) {
      if (st.dashed)
        out << "<rect x=\"" << x(p.bytes) - 3.5 << "\" y=\"" << y(p.gbps) - 3.5 << "\" width=\"7\" height=\"7\" fill=\"none\" stroke=\""
            << st.color << "\" stroke-width=\"1.5\"/>\n";
      else
        out << "<circle cx=\"" << x(p.bytes) << "\" cy=\"" << y(p.gbps) << "\" r=\"4\" fill=\"" << st.color << "\"/>\n";
    }
    const double ly = legendTop + 22 * row++ - 4;
    out << "<line x1=\"8\" x2=\"42\" y1=\"" << ly << "\" y2=\"" << ly
        << "\" stroke=\"" << st.color << "\" stroke-width=\"" << width << "\"" << dash << "/>\n"
        << "<text x=\"50\" y=\"" << ly + 4 << "\" fill=\"currentColor\">" << name << "</text>\n";
  }
  out << "</svg>\n";
  return out ? 0 : 1;
}
