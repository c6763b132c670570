"use strict";
(function () {
  var query = "";
  var mark = function (root) {
    root.querySelectorAll(".entry").forEach(function (node) {
      node.classList.toggle("hit", query !== "" && node.textContent.toLowerCase().indexOf(query) >= 0);
    });
  };
  var entryHome = function (i) { return document.getElementById("e" + i); };
  var indices = function (details) {
    var out = [];
    (details.dataset.ranges || "").split(",").forEach(function (run) {
      if (!run) { return; }
      var ends = run.split("-").map(Number);
      for (var i = ends[0]; i <= ends[1]; i++) { out.push(i); }
    });
    return out;
  };
  var newSet = function (details) {
    var set = {};
    (details.dataset["new"] || "").split(",").forEach(function (i) { if (i) { set[i] = true; } });
    return set;
  };
  var strip = function (node) {
    node.removeAttribute("id");
    node.querySelectorAll("[id]").forEach(function (child) { child.removeAttribute("id"); });
    return node;
  };
  // The whole array a request sent, built from the entries embedded once, when it is first opened.
  var fill = function (details) {
    var array = details.querySelector(".array");
    if (!array || array.dataset.filled) { return; }
    var fresh = newSet(details);
    indices(details).forEach(function (i) {
      var home = entryHome(i);
      if (!home) { return; }
      var copy = strip(home.cloneNode(true));
      if (fresh[i]) { copy.classList.add("new"); }
      array.appendChild(copy);
    });
    array.dataset.filled = "1";
    array.hidden = false;
    var homes = details.querySelector(".homes");
    if (homes) { homes.hidden = true; }
    mark(array);
  };
  document.querySelectorAll("details.request").forEach(function (details) {
    details.addEventListener("toggle", function () { if (details.open) { fill(details); } });
    if (details.open) { fill(details); }
  });
  var openTarget = function () {
    var target = location.hash && document.getElementById(location.hash.slice(1));
    if (!target) { return; }
    var details = target.closest("details");
    if (details && !details.open) { details.open = true; }
    target.scrollIntoView();
  };
  window.addEventListener("hashchange", openTarget);
  openTarget();
  // A tool_use and its tool_result: hovering one highlights the other (and itself).
  var linkOf = function (node) {
    var block = node.closest && node.closest("[data-call],[data-answers]");
    return block ? (block.dataset.call || block.dataset.answers) : null;
  };
  var lit = [];
  document.addEventListener("mouseover", function (event) {
    var id = linkOf(event.target);
    lit.forEach(function (node) { node.classList.remove("linked"); });
    lit = [];
    if (!id) { return; }
    var selector = '[data-call="' + CSS.escape(id) + '"],[data-answers="' + CSS.escape(id) + '"]';
    document.querySelectorAll(selector).forEach(function (node) { node.classList.add("linked"); lit.push(node); });
  });
  // Find in every array: is the text in the array each request sent?
  var spans = function (numbers) {
    var out = [];
    numbers.forEach(function (n) {
      var last = out[out.length - 1];
      if (last && last[1] === n - 1) { last[1] = n; } else { out.push([n, n]); }
    });
    return out.map(function (r) { return r[0] === r[1] ? String(r[0]) : r[0] + "-" + r[1]; }).join(", ");
  };
  var form = document.getElementById("search");
  var input = document.getElementById("q");
  var found = document.getElementById("found");
  var texts = null; // each entry's text, lower-cased, read once: entries never change
  var lowered = function () {
    if (texts === null) {
      texts = [];
      document.querySelectorAll(".entry[id]").forEach(function (node) {
        texts[Number(node.dataset.e)] = node.textContent.toLowerCase();
      });
    }
    return texts;
  };
  var search = function () {
    query = input.value.trim().toLowerCase();
    var present = [], missing = [];
    var all = lowered();
    var before = [0]; // before[i]: how many entries below i hold the text, so a run is checked at once
    for (var i = 0; i < all.length; i++) {
      before.push(before[i] + (query !== "" && all[i] !== undefined && all[i].indexOf(query) >= 0 ? 1 : 0));
    }
    document.body.classList.toggle("searching", query !== "");
    document.querySelectorAll("details.request").forEach(function (details) {
      var number = Number(details.dataset.request);
      var row = document.getElementById("t" + number);
      var inArray = false;
      if (query !== "") {
        inArray = (details.dataset.ranges || "").split(",").some(function (run) {
          if (!run) { return false; }
          var ends = run.split("-").map(Number);
          return before[Math.min(ends[1] + 1, all.length)] - before[Math.min(ends[0], all.length)] > 0;
        });
        (inArray ? present : missing).push(number);
      }
      [row, details].forEach(function (node) {
        if (!node) { return; }
        node.classList.toggle("present", query !== "" && inArray);
        node.classList.toggle("missing", query !== "" && !inArray);
        var cell = node.querySelector(node === row ? ".found-col" : ".found-mark");
        if (cell) { cell.textContent = query === "" ? "" : (inArray ? "\u2713 present" : "\u2717 missing"); }
      });
    });
    mark(document);
    found.textContent = query === "" ? "" :
      "in requests " + (spans(present) || "none") + "; missing from " + (spans(missing) || "none");
    found.dataset.query = query; // done: what the marks are for
  };
  var pending = null;
  var later = function () { // while a person types, search once they pause
    if (pending !== null) { clearTimeout(pending); }
    delete found.dataset.query; // the marks are stale until the search runs
    pending = setTimeout(function () { pending = null; search(); }, 120);
  };
  if (form && input) {
    form.hidden = false;
    form.addEventListener("submit", function (event) { event.preventDefault(); });
    input.addEventListener("input", later);
  }
})();
