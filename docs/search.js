// The course's search box: finds words in every page's text, the Driver API index, the cheat sheet,
// the error atlas and the lesson titles (search-data.js, written by generate-pages). Every word typed
// must occur; titles and API names count most, and an error name (CUDA_ERROR_...) leads to its entry
// in the error atlas first. Works from file:// too: the data is a script, not a fetch.
// It also names the cells of the pages' markdown tables by their column (data-label), so that on a
// narrow screen, where course.css stacks a table's cells, each still says what it is.
(function () {
  function excerpt(text, words) {
    var lower = text.toLowerCase(), at = -1;
    for (var i = 0; i < words.length && at < 0; i++) at = lower.indexOf(words[i]);  // the first word the text has
    if (at < 0) return text.slice(0, 140);
    var from = Math.max(0, at - 60);
    return (from ? "…" : "") + text.slice(from, from + 160) + "…";
  }
  function score(entry, words) {
    var title = entry.t.toLowerCase(), keys = entry.k.toLowerCase(), text = entry.x.toLowerCase(), s = 0;
    for (var i = 0; i < words.length; i++) {
      var w = words[i], here = 0;
      if (title === w || keys === w) here += 100;
      if (title.indexOf(w) >= 0) here += 20;
      if (keys.indexOf(w) >= 0) here += 10;
      if (text.indexOf(w) >= 0) here += 1 + Math.min(5, text.split(w).length - 1);
      if (!here) return 0;
      if (w.indexOf("cuda_error") === 0 && entry.u.indexOf("errors.html") === 0) here += 200;
      s += here;
    }
    return s;
  }
  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; });
  }
  function labelTableCells() {
    var tables = document.querySelectorAll(".contents table.markdownTable");
    for (var t = 0; t < tables.length; t++) {
      var heads = tables[t].querySelectorAll("tr:first-child th"), rows = tables[t].querySelectorAll("tr");
      for (var r = 0; r < rows.length; r++) {
        var cells = rows[r].querySelectorAll("td");
        for (var c = 0; c < cells.length && c < heads.length; c++)
          if (!cells[c].hasAttribute("data-label")) cells[c].setAttribute("data-label", heads[c].textContent.trim());
      }
    }
  }
  document.addEventListener("DOMContentLoaded", labelTableCells);
  document.addEventListener("DOMContentLoaded", function () {
    var input = document.getElementById("wb-search-input"), box = document.getElementById("wb-search-results");
    if (!input || !box || typeof WB_SEARCH === "undefined") return;
    if (window.innerWidth < 700) input.placeholder = "Search";  // the long hint would be cut
    var base = (document.querySelector('script[src$="search.js"]').getAttribute("src") || "").replace(/search\.js$/, "");
    function show() {
      var words = input.value.toLowerCase().split(/\s+/).filter(function (w) { return w.length > 0; });
      box.innerHTML = "";
      if (!words.length) { box.style.display = "none"; return; }
      var hits = [], best = {};
      for (var i = 0; i < WB_SEARCH.length; i++) {
        var s = score(WB_SEARCH[i], words), u = WB_SEARCH[i].u;
        if (s && !(u in best && best[u][0] >= s)) best[u] = [s, WB_SEARCH[i]];  // one result a place
      }
      for (var u in best) hits.push(best[u]);
      hits.sort(function (a, b) { return b[0] - a[0]; });
      if (!hits.length) box.innerHTML = '<div class="wb-none">Nothing on the site matches.</div>';
      hits.slice(0, 12).forEach(function (h) {
        var a = document.createElement("a");
        a.href = base + h[1].u;
        a.innerHTML = "<b>" + escapeHtml(h[1].t) + "</b><span>" + escapeHtml(excerpt(h[1].x, words)) + "</span>";
        box.appendChild(a);
      });
      box.style.display = "block";
    }
    input.addEventListener("input", show);
    input.addEventListener("keydown", function (e) {
      var first = box.querySelector("a");
      if (e.key === "Enter" && first) window.location.href = first.href;
      if (e.key === "Escape") { input.value = ""; show(); }
    });
    document.addEventListener("click", function (e) { if (!box.contains(e.target) && e.target !== input) box.style.display = "none"; });
  });
})();
