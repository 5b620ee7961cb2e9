// Filters of the ecosystem page and the compatibility explorer: no network, no innerHTML from data.
(function () {
  "use strict";
  function $(sel) { return document.querySelector(sel); }

  // The ecosystem's filters read the search index (one script, loaded on the first search), so they find
  // every entry, on this page or another: cards of this page are shown or hidden, the others listed as links.
  var form = $("#filters");
  if (form && $("#q")) {
    var cards = document.querySelectorAll(".card[data-name]"), index = null, asked = false;
    var total = $("#shown").textContent;
    var run = function () {
      var started = performance.now();
      var q = $("#q").value.trim().toLowerCase(), role = $("#role").value, uc = $("#usecase").value,
          facet = $("#facet").value.trim().toLowerCase(), list = $("#elsewhere");
      var hits = {}, elsewhere = [], count = 0, facetHit = null;
      if (facet) {
        facetHit = {};
        index.facetsLower.forEach(function (uri, i) { if (uri.indexOf(facet) >= 0) { facetHit[i] = true; } });
      }
      index.entries.forEach(function (e) {
        var ok = (!q || e.text.indexOf(q) >= 0) && (!role || e.roles.indexOf(role) >= 0) &&
          (!uc || e.useCases.indexOf(uc) >= 0) &&
          (!facetHit || e.facets.some(function (f) { return facetHit[f]; }));
        if (ok) { count += 1; hits[e.name] = true; if (!e.here) { elsewhere.push(e); } }
      });
      cards.forEach(function (card) { card.hidden = !hits[card.getAttribute("data-name")]; });
      list.replaceChildren();
      elsewhere.slice(0, 50).forEach(function (e) {
        var item = document.createElement("li"), link = document.createElement("a");
        link.href = form.getAttribute("data-root") + e.href;
        link.textContent = e.title;
        item.appendChild(link);
        item.appendChild(document.createTextNode(" (" + e.roles.join(", ") + ")"));
        list.appendChild(item);
      });
      if (elsewhere.length > 50) {
        var more = document.createElement("li");
        more.textContent = "and " + (elsewhere.length - 50) + " more: narrow the search";
        list.appendChild(more);
      }
      list.hidden = !elsewhere.length;
      $("#shown").textContent = String(count);
      form.setAttribute("data-search-ms", (performance.now() - started).toFixed(1));
      form.removeAttribute("data-pending");
    };
    var prepare = function (raw) {
      var here = {};
      cards.forEach(function (card) { here[card.getAttribute("data-name")] = true; });
      var words = raw.facets.map(function (uri) { return uri.toLowerCase(); });
      return {
        facetsLower: words,
        entries: raw.entries.map(function (e) {
          return { name: e[0], title: e[1], href: e[2], roles: e[3], useCases: e[4], facets: e[5],
                   text: e[6] + " " + e[5].map(function (f) { return words[f]; }).join(" "), here: !!here[e[0]] };
        })
      };
    };
    var apply = function () {
      var active = $("#q").value.trim() || $("#role").value || $("#usecase").value || $("#facet").value.trim();
      if (!active) {
        cards.forEach(function (card) { card.hidden = false; });
        $("#elsewhere").hidden = true;
        $("#shown").textContent = total;
        return;
      }
      if (index) { run(); return; }
      form.setAttribute("data-pending", "1");
      if (asked) { return; }
      asked = true;
      var script = document.createElement("script");
      script.src = form.getAttribute("data-index");
      script.onload = function () { index = prepare(window.registryIndex); run(); };
      document.head.appendChild(script);
    };
    form.addEventListener("submit", function (e) { e.preventDefault(); });
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
