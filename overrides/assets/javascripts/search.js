/* The site's search, in the dialog of overrides/partials/search.html, over the index that
   scripts/gpu_glossary/site/search_index.py writes (each page's names, summary and text by
   section). Nothing is fetched until the reader starts to search: focus on the search box,
   the search button, "/", "s" or "f", a paste, or a page opened with ?q=.

   Ranking, in order of weight:
   - a query that is one of a term's names (title, abbreviation, alias) puts that term first;
   - a run of three or more of the query's words found verbatim in a page (a pasted error
     message, with or without the text around it) counts by its length, and the result
     links to the section that holds it;
   - each word counts by how rare it is across pages (BM25), in the names most, then the
     summary, the headings and the text; words like "is" and "for" count only when the
     query has nothing else, and a page missing some of the words is pushed down, not out;
   - the last word, and any word no page has, also matches as the start of longer words
     ("coalesc" finds "coalescing").
   One tokenizer serves pages and queries: Latin words, and pairs of adjacent characters for
   Chinese, so no segmentation dictionary has to agree between the build and the browser.
   Searching starts on `input` events, which typing, pasting (keyboard, mouse or touch) and
   input-method commits all fire. */
(function () {
  "use strict";
  var TOKEN = /\p{sc=Han}+|[0-9a-z_\u00c0-\u024f\u0370-\u03ff]+/gu;
  var HAN = /\p{sc=Han}/u;
  var NOT_WORD = /[^0-9a-z_\u00c0-\u024f\u0370-\u03ff\p{sc=Han}]+/gu;
  var STOP = new Set(("a an and are as at be but by can do does for from has have how if in into is it its " +
    "of on or so such that the their then there these they this to was what when where which who why will with").split(" "));
  var QUESTION = /^\s*(?:what|who|how|why|when|where)(?:'s|\s+(?:is|are|does|do))?\s+(?:an?|the)?\s*|\?+\s*$|什么是|是什么|什么叫|为什么|怎么|如何|吗|呢|？/giu;
  var FIELDS = { n: 6, s: 2, h: 1.5, b: 1 };  // names, summary, headings, body
  var K1 = 1.2, B = 0.5;

  markSearchedWords();  // a page opened from a search result; it needs no search form

  var form = document.querySelector("form[data-gg-search]");
  var toggle = document.getElementById("__search");
  if (!form || !toggle) return;
  var input = form.querySelector("input[type=search], input[type=text]");
  var meta = document.querySelector("[data-gg-search-meta]");
  var list = document.querySelector("[data-gg-search-list]");
  var label = document.querySelector("label.md-header__button[for=__search]");
  var strings = form.dataset;
  var indexUrl = new URL(form.getAttribute("data-gg-index"), location.href);
  var root = new URL("..", indexUrl);

  function fold(text) {
    return String(text || "").normalize("NFKC").toLowerCase();
  }

  function norm(text) {
    return fold(text).replace(NOT_WORD, " ").trim();
  }

  /* Words of a text: Latin words as they are (and without leading underscores), Chinese
     as overlapping character pairs (a lone character stays one). */
  function tokens(text) {
    var out = [];
    var found = fold(text).match(TOKEN) || [];
    for (var i = 0; i < found.length; i++) {
      var word = found[i];
      if (HAN.test(word)) {
        var chars = Array.from(word);
        if (chars.length === 1) out.push(word);
        for (var j = 0; j + 1 < chars.length; j++) out.push(chars[j] + chars[j + 1]);
      } else {
        out.push(word);
        if (word[0] === "_" && word.replace(/^_+/, "")) out.push(word.replace(/^_+/, ""));
      }
    }
    return out;
  }

  function counts(text) {
    var map = new Map();
    var words = tokens(text);
    for (var i = 0; i < words.length; i++) map.set(words[i], (map.get(words[i]) || 0) + 1);
    map.size_ = words.length;
    return map;
  }

  var index = null;  // {docs, df, vocab, avg}
  var loading = null;

  function prepare(data) {
    var df = new Map();
    var total = 0;
    var docs = data.pages.map(function (page) {
      var sections = page.x.map(function (s) {
        return { id: s[0], heading: s[1], text: s[2], norm: " " + norm(s[1] + " " + s[2]) + " ", headingNorm: " " + norm(s[1]) + " " };
      });
      var fields = {
        n: counts(page.n.join(" ")),
        s: counts(page.s),
        h: counts(page.x.map(function (s) { return s[1]; }).join(" ")),
        b: counts(page.x.map(function (s) { return s[2]; }).join(" ")),
      };
      var seen = new Set();
      Object.keys(fields).forEach(function (f) { fields[f].forEach(function (_, w) { seen.add(w); }); });
      seen.forEach(function (w) { df.set(w, (df.get(w) || 0) + 1); });
      total += fields.b.size_;
      return {
        page: page, fields: fields, sections: sections, length: fields.b.size_,
        names: page.n.map(norm),
      };
    });
    return { docs: docs, df: df, vocab: Array.from(df.keys()), avg: total / Math.max(1, docs.length) };
  }

  function load() {
    if (!loading) {
      showMeta(strings.ggLoading);
      loading = fetch(indexUrl, { credentials: "same-origin" })
        .then(function (response) {
          if (!response.ok) throw new Error(response.status + " " + indexUrl);
          return response.json();
        })
        .then(function (data) { index = prepare(data); run(); })
        .catch(function (error) { loading = null; showMeta(String(error)); });
    }
    return loading;
  }

  /* The words one query word stands for, each with a weight: itself, its plural or
     singular, and (for the last word, or a word no page has) longer words it starts. */
  function candidates(word, prefix) {
    var out = [];
    var df = index.df;
    if (df.has(word)) out.push([word, 1]);
    if (!HAN.test(word)) {
      if (word.length > 3 && /s$/.test(word) && df.has(word.slice(0, -1))) out.push([word.slice(0, -1), 0.9]);
      if (df.has(word + "s")) out.push([word + "s", 0.9]);
      if (df.has(word + "es")) out.push([word + "es", 0.9]);
    }
    if ((prefix || !out.length) && (word.length >= 2 || HAN.test(word))) {
      var longer = [];
      for (var i = 0; i < index.vocab.length; i++) {
        var v = index.vocab[i];
        if (v.length > word.length && v.lastIndexOf(word, 0) === 0) longer.push([v, 0.6 * word.length / v.length]);
      }
      longer.sort(function (a, b) { return df.get(b[0]) - df.get(a[0]); });
      out = out.concat(longer.slice(0, 40));
    }
    return out;
  }

  function idf(word) {
    var n = index.docs.length, df = index.df.get(word) || 0;
    return Math.log(1 + (n - df + 0.5) / (df + 0.5));
  }

  function wordScore(doc, word) {
    var weighted = 0;
    for (var f in FIELDS) weighted += FIELDS[f] * (doc.fields[f].get(word) || 0);
    if (!weighted) return 0;
    var lengthNorm = 1 - B + B * doc.length / index.avg;
    return idf(word) * weighted * (K1 + 1) / (weighted + K1 * lengthNorm);
  }

  /* The longest run of the query's words (at least three, or six Chinese characters) that
     a page has verbatim, and the section that has it. */
  function longestRun(doc, words) {
    var least = 3;
    for (var size = words.length; size >= 1; size--) {
      for (var start = 0; start + size <= words.length; start++) {
        var run = words.slice(start, start + size);
        var han = HAN.test(run.join("")) ? Array.from(run.join("")).length : 0;
        if (size < least && han < 6) return null;
        var needle = " " + run.join(" ") + " ";
        var found = null;
        for (var s = 0; s < doc.sections.length && !(found && found.heading); s++) {
          var section = doc.sections[s];
          if (section.norm.indexOf(needle) < 0) continue;
          // A section titled by the phrase (an error message as a heading) is the one that explains it.
          var heading = section.headingNorm.indexOf(needle) >= 0;
          if (!found || heading) found = { size: Math.max(size, han / 2) * (heading ? 2 : 1), section: section, heading: heading };
        }
        if (found) return found;
      }
    }
    return null;
  }

  function search(raw) {
    var query = fold(raw).replace(QUESTION, " ");
    var phrase = norm(query);
    if (!phrase) return [];
    var words = Array.from(new Set(tokens(query)));
    var content = words.filter(function (w) { return !STOP.has(w); });
    if (!content.length) content = words;
    var endsInWord = !/\s$/.test(raw);
    var groups = content.map(function (w, i) {
      return candidates(w, endsInWord && i === content.length - 1);
    });
    var phraseWords = phrase.split(" ");
    var results = [];
    index.docs.forEach(function (doc) {
      var score = 0, matched = 0;
      groups.forEach(function (group) {
        var best = 0;
        for (var i = 0; i < group.length; i++) best = Math.max(best, group[i][1] * wordScore(doc, group[i][0]));
        if (best > 0) matched++;
        score += best;
      });
      var coverage = matched / Math.max(1, groups.length);
      score *= coverage * coverage;
      var bonus = 0, section = null;
      if (doc.names.indexOf(phrase) >= 0) bonus += 50;
      else {
        doc.names.forEach(function (name) {
          if (name.length < 2) return;
          if ((" " + phrase + " ").indexOf(" " + name + " ") >= 0 && name.length >= 3) {
            bonus = Math.max(bonus, 12 * name.length / phrase.length);
          } else if (name.indexOf(phrase) >= 0 && HAN.test(phrase) === HAN.test(name)) {
            bonus = Math.max(bonus, 15 * phrase.length / name.length);
          }
        });
      }
      if (coverage >= 0.5 && (phraseWords.length >= 3 || Array.from(phrase).length >= 6)) {
        var run = longestRun(doc, phraseWords);
        if (run) { bonus += 3 * run.size; section = run.section; }
      }
      if (score + bonus > 0) results.push({ doc: doc, score: (score + bonus) * doc.page.w, section: section });
    });
    results.sort(function (a, b) { return b.score - a.score; });
    return { items: results.slice(0, 20), words: content, phrase: phrase };
  }

  /* ---- Showing the results ---- */

  function showMeta(text) {
    if (meta) meta.textContent = text || "";
  }

  function escapeRegExp(text) {
    return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  }

  /* The words at the start of a word (Latin) or anywhere (Chinese), longest first. */
  function wordPattern(words) {
    var alternatives = words.slice().sort(function (a, b) { return b.length - a.length; }).map(function (w) {
      return HAN.test(w) ? escapeRegExp(w) : "(?<![0-9A-Za-z_])" + escapeRegExp(w);
    });
    return new RegExp("(" + alternatives.join("|") + ")", "giu");
  }

  /* A word worth marking: a single Latin letter would mark half the text. */
  function markable(word) {
    return word.length >= 2 || HAN.test(word);
  }

  /* The pieces of a text split by a pattern with one group as nodes: the matches (odd
     places) in <mark>s, the text between them as it is. */
  function markParts(parts) {
    var fragment = document.createDocumentFragment();
    parts.forEach(function (part, i) {
      if (!part) return;
      if (i % 2) {
        var mark = document.createElement("mark");
        mark.textContent = part;
        fragment.appendChild(mark);
      } else {
        fragment.appendChild(document.createTextNode(part));
      }
    });
    return fragment;
  }

  /* `text` as nodes, with every occurrence of one of `words` in a <mark>. */
  function marked(text, words) {
    var useful = words.filter(markable);
    return markParts(useful.length ? text.split(wordPattern(useful)) : [text]);
  }

  /* A page opened from a search result (?h=words) marks those words in its article. */
  function markSearchedWords() {
    var words = (new URLSearchParams(location.search).get("h") || "").split(/\s+/).filter(markable);
    var article = document.querySelector("article");
    if (!words.length || !article) return;
    var pattern = new RegExp("(" + words.map(escapeRegExp).join("|") + ")", "giu");
    var walker = document.createTreeWalker(article, NodeFilter.SHOW_TEXT, {
      acceptNode: function (node) {
        return node.parentElement.closest("pre, .headerlink, mark") ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT;
      },
    });
    var nodes = [];
    while (walker.nextNode() && nodes.length < 500) nodes.push(walker.currentNode);
    nodes.forEach(function (node) {
      var parts = node.nodeValue.split(pattern);
      if (parts.length > 1) node.parentNode.replaceChild(markParts(parts), node);
    });
  }

  /* About 200 characters of `text` around the first word of the query it contains. */
  function excerpt(text, words) {
    var lower = fold(text), at = -1;
    for (var i = 0; i < words.length && at < 0; i++) at = lower.indexOf(words[i]);
    if (at < 0) return text.length > 200 ? text.slice(0, 200) + "…" : text;
    var start = Math.max(0, at - 60);
    var piece = text.slice(start, start + 200);
    return (start > 0 ? "…" : "") + piece + (start + 200 < text.length ? "…" : "");
  }

  function bestSection(doc, words) {
    var best = null, most = 0;
    doc.sections.forEach(function (s) {
      var hits = 0;
      words.forEach(function (w) { if (s.norm.indexOf(w) >= 0) hits++; });
      if (hits > most) { most = hits; best = s; }
    });
    return best;
  }

  function render(result, raw) {
    list.textContent = "";
    var items = result.items || [];
    if (!raw.trim()) { showMeta(strings.ggPlaceholder); return; }
    showMeta(!items.length ? strings.ggNone : items.length === 1 ? strings.ggOne : strings.ggOther.replace("#", items.length));
    var markWords = result.words.concat(Array.from(result.phrase.match(/\p{sc=Han}+/gu) || []));
    var highlight = result.words.filter(function (w) { return !HAN.test(w); }).concat(result.phrase.match(/\p{sc=Han}+/gu) || []);
    items.forEach(function (item, position) {
      var doc = item.doc, page = doc.page;
      var nameHit = position === 0 && doc.names.indexOf(result.phrase) >= 0;
      var section = item.section || (nameHit ? null : bestSection(doc, result.words));
      var href = new URL(page.u, root);
      if (highlight.length) href.searchParams.set("h", highlight.join(" "));
      if (section && section.id) href.hash = section.id;
      var li = document.createElement("li");
      li.className = "md-search-result__item";
      var a = document.createElement("a");
      a.className = "md-search-result__link";
      a.href = href.pathname + href.search + href.hash;
      var article = document.createElement("article");
      article.className = "md-search-result__article md-search-result__article--document md-typeset";
      var icon = document.createElement("div");
      icon.className = "md-search-result__icon md-icon";
      var title = document.createElement("h1");
      title.appendChild(marked(page.t, markWords));
      article.appendChild(icon);
      article.appendChild(title);
      var where = [page.p, section && section.id ? section.heading : ""].filter(Boolean).join(" › ");
      if (where) {
        var path = document.createElement("p");
        path.className = "gg-search-where";
        path.textContent = where;
        article.appendChild(path);
      }
      var teaser = document.createElement("p");
      teaser.className = "md-search-result__teaser";
      teaser.appendChild(marked(section && !nameHit ? excerpt(section.text, markWords) : page.s, markWords));
      article.appendChild(teaser);
      a.appendChild(article);
      li.appendChild(a);
      list.appendChild(li);
    });
  }

  var timer = 0;
  function run() {
    clearTimeout(timer);
    timer = 0;
    var raw = input.value;
    if (!index) { if (raw.trim()) load(); else showMeta(strings.ggPlaceholder); return; }
    var started = performance.now();
    var result = raw.trim() ? search(raw) : { items: [] };
    render(result, raw);
    form.setAttribute("data-gg-searched", raw);  // what the list shows now (for tests and benchmarks)
    form.setAttribute("data-gg-search-ms", (performance.now() - started).toFixed(1));
  }

  function schedule() {
    if (!timer) timer = setTimeout(run, 40);
  }

  /* ---- Opening, closing and the keyboard ---- */

  var returnFocus = null;

  function setOpen(open) {
    if (toggle.checked !== open) {
      toggle.checked = open;
      toggle.dispatchEvent(new Event("change"));  // Material locks the page's scrolling on phones
    }
  }

  function open() {
    if (!toggle.checked) returnFocus = document.activeElement;
    setOpen(true);
    load();
    if (document.activeElement !== input) input.focus();
  }

  function close() {
    setOpen(false);
    input.blur();
    if (returnFocus && returnFocus.focus && returnFocus !== input && document.contains(returnFocus)) returnFocus.focus();
    returnFocus = null;
  }

  input.addEventListener("focus", function () { if (!toggle.checked) open(); else load(); });
  input.addEventListener("input", function (event) {
    if (event.isComposing) return;  // an input method is still composing: wait for its commit
    if (!toggle.checked) open();
    schedule();
  });
  input.addEventListener("compositionend", schedule);
  form.addEventListener("submit", function (event) {
    event.preventDefault();
    var first = list.querySelector("a");
    if (first) first.click();
  });
  form.addEventListener("reset", function () {
    setTimeout(function () { run(); input.focus(); }, 0);
  });
  toggle.addEventListener("change", function () {
    if (toggle.checked) { load(); if (document.activeElement !== input) input.focus(); }
  });
  if (label) label.addEventListener("click", function () { input.focus(); });  // brings up a phone's keyboard
  list.addEventListener("click", function (event) {
    if (event.target instanceof Element && event.target.closest("a")) setOpen(false);
  });

  function links() {
    return Array.prototype.slice.call(list.querySelectorAll("a"));
  }

  document.addEventListener("keydown", function (event) {
    if (event.metaKey || event.ctrlKey || event.altKey) return;
    var active = document.activeElement;
    if (!toggle.checked) {
      var typing = active && (active.isContentEditable || /^(input|textarea|select)$/i.test(active.tagName));
      if (!typing && (event.key === "/" || event.key === "s" || event.key === "f")) {
        event.preventDefault();
        open();
        input.select();
      }
      return;
    }
    var all = links();
    var at = all.indexOf(active);
    if (event.key === "Escape") {
      event.preventDefault();
      close();
    } else if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      if (!all.length) return;
      event.preventDefault();
      var next = event.key === "ArrowDown" ? at + 1 : at - 1;
      if (next < 0 || next >= all.length) input.focus();
      else all[next].focus();
    }
  }, true);

  /* A page opened with ?q= opens the search with that query. */
  var params = new URLSearchParams(location.search);
  if (params.has("q")) {
    input.value = params.get("q");
    open();
  }
})();
