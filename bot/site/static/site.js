// Filters of the ecosystem page and the compatibility explorer: no network, no innerHTML from data.
(function () {
  "use strict";
  function $(sel) { return document.querySelector(sel); }
  function lines(el, name) { var v = el.getAttribute(name); return v ? v.split("\n") : []; }

  var cards = document.querySelectorAll(".card[data-name]");
  if (cards.length && $("#q")) {
    var apply = function () {
      var q = $("#q").value.trim().toLowerCase(), role = $("#role").value,
          uc = $("#usecase").value, facet = $("#facet").value, shown = 0;
      cards.forEach(function (card) {
        var ok = (!q || card.textContent.toLowerCase().indexOf(q) >= 0) &&
          (!role || lines(card, "data-roles").indexOf(role) >= 0) &&
          (!uc || lines(card, "data-usecases").indexOf(uc) >= 0) &&
          (!facet || lines(card, "data-facets").indexOf(facet) >= 0);
        card.hidden = !ok;
        if (ok) { shown += 1; }
      });
      $("#shown").textContent = String(shown);
    };
    $("#filters").addEventListener("submit", function (e) { e.preventDefault(); });
    ["#q", "#role", "#usecase", "#facet"].forEach(function (id) {
      $(id).addEventListener("input", apply);
      $(id).addEventListener("change", apply);
    });
    apply();
  }

  var data = $("#compat-data");
  if (data) {
    var model = JSON.parse(data.textContent);
    // What the declared versions of one facet say for a pair (bot.site.markdown.version_match says the same).
    var match = function (emitted, read) {
      if (!emitted.length || !read.length) { return { ok: true, text: "versions not declared by both" }; }
      var both = emitted.filter(function (v) { return read.indexOf(v) >= 0; });
      if (both.length) { return { ok: true, text: "match: " + both.join(", ") }; }
      return { ok: false, text: "no common version: emits " + emitted.join(", ") + ", reads " + read.join(", ") };
    };
    var declared = function (role, name, uri) {
      var mine = (model.versions[role] || {})[name] || {};
      return Object.prototype.hasOwnProperty.call(mine, uri) ? mine[uri] : [];
    };
    var render = function (side) {
      var pick = $("#pick-" + side).value, body = $("#out-" + side);
      var otherSide = side === "producer" ? "consumer" : "producer";
      body.replaceChildren();
      if (!pick) { return; }
      var mine = side === "producer" ? model.produced[pick] : model.consumed[pick];
      var others = side === "producer" ? model.consumed : model.produced;
      Object.keys(others).sort().forEach(function (other) {
        var shared = mine.filter(function (uri) { return others[other].indexOf(uri) >= 0; });
        var row = document.createElement("tr");
        var name = document.createElement("td");
        name.textContent = model.titles[other] || other;
        var count = document.createElement("td");
        var list = document.createElement("td");
        var good = 0, bad = 0;
        if (!shared.length) { list.textContent = "none"; list.className = "none"; }
        shared.forEach(function (uri, i) {
          var producer = side === "producer" ? pick : other, consumer = side === "producer" ? other : pick;
          var verdict = match(declared("producer", producer, uri), declared("consumer", consumer, uri));
          if (verdict.ok) { good += 1; } else { bad += 1; }
          var a = document.createElement("a");
          a.textContent = uri;
          if (model.pages[uri]) { a.href = model.pages[uri]; }
          var note = document.createElement("span");
          note.className = "match " + (!verdict.ok ? "bad" : verdict.text.indexOf("match") === 0 ? "ok" : "unknown");
          note.textContent = " (" + verdict.text + ")";
          if (i) { list.appendChild(document.createTextNode(", ")); }
          list.append(a, note);
        });
        count.textContent = good + " of " + mine.length + (bad ? ", " + bad + " with no common version" : "");
        row.setAttribute("data-name", other);
        row.setAttribute("data-shared", String(good));
        row.setAttribute("data-mismatch", String(bad));
        row.append(name, count, list);
        body.appendChild(row);
      });
      var rows = Array.prototype.slice.call(body.children);
      rows.sort(function (a, b) { return b.getAttribute("data-shared") - a.getAttribute("data-shared"); });
      rows.forEach(function (r) { body.appendChild(r); });
    };
    ["producer", "consumer"].forEach(function (side) {
      var sel = $("#pick-" + side);
      if (sel) { sel.addEventListener("change", function () { render(side); }); render(side); }
    });
  }
}());
