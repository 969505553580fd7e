// The course's search box: finds words in every page's text, the Driver API index and the lesson
// titles (search-data.js, written by generate-pages). Every word typed must occur; titles and API
// names count most. Works from file:// too: the data is a script, not a fetch.
(function () {
  function excerpt(text, word) {
    var at = text.toLowerCase().indexOf(word);
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
      s += here;
    }
    return s;
  }
  function escapeHtml(s) {
    return s.replace(/[&<>"]/g, function (c) { return {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"}[c]; });
  }
  document.addEventListener("DOMContentLoaded", function () {
    var input = document.getElementById("wb-search-input"), box = document.getElementById("wb-search-results");
    if (!input || !box || typeof WB_SEARCH === "undefined") return;
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
        a.innerHTML = "<b>" + escapeHtml(h[1].t) + "</b><span>" + escapeHtml(excerpt(h[1].x, words[0])) + "</span>";
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
