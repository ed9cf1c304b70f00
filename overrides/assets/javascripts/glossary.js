/* Link previews and abbreviations: hovering or focusing a link to a term, or an
   abbreviation, shows one small box with the term and its one-line summary.
   Event delegation on the document, so it needs no set-up per page. */
(function () {
  "use strict";
  var SELECTOR = "a[data-gg-summary], abbr[title], abbr[data-gg-title]";
  var tip = null;
  var owner = null;

  function box() {
    if (!tip) {
      tip = document.createElement("div");
      tip.id = "gg-tooltip";
      tip.className = "gg-tooltip md-typeset";
      tip.setAttribute("role", "tooltip");
      tip.hidden = true;
      document.body.appendChild(tip);
    }
    return tip;
  }

  function describe(el) {
    if (el.tagName === "ABBR") {
      // Move the native title aside so the browser does not show a second tooltip.
      if (el.title) {
        el.setAttribute("data-gg-title", el.title);
        el.setAttribute("aria-label", el.textContent + ": " + el.title);
        el.removeAttribute("title");
      }
      return { title: el.textContent, text: el.getAttribute("data-gg-title") };
    }
    return { title: el.getAttribute("data-gg-title"), text: el.getAttribute("data-gg-summary") };
  }

  function show(el) {
    var info = describe(el);
    var t = box();
    t.textContent = "";
    var strong = document.createElement("strong");
    strong.textContent = info.title;
    var text = document.createElement("span");
    text.textContent = info.text;
    t.appendChild(strong);
    t.appendChild(text);
    t.hidden = false;
    owner = el;
    el.setAttribute("aria-describedby", "gg-tooltip");
    var rect = el.getBoundingClientRect();
    var width = Math.min(320, document.documentElement.clientWidth - 16);
    t.style.maxWidth = width + "px";
    var left = Math.max(8, Math.min(rect.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - width - 8));
    t.style.left = left + "px";
    t.style.top = (rect.bottom + window.scrollY + 6) + "px";
  }

  function hide() {
    if (tip) tip.hidden = true;
    if (owner) owner.removeAttribute("aria-describedby");
    owner = null;
  }

  function target(event) {
    return event.target instanceof Element ? event.target.closest(SELECTOR) : null;
  }

  document.addEventListener("mouseover", function (event) {
    var el = target(event);
    if (el && el !== owner) show(el);
  });
  document.addEventListener("mouseout", function (event) {
    var el = target(event);
    if (el && el === owner && !el.contains(event.relatedTarget)) hide();
  });
  document.addEventListener("focusin", function (event) {
    var el = target(event);
    if (el) show(el); else hide();
  });
  document.addEventListener("focusout", function (event) {
    if (target(event) === owner) hide();
  });
  document.addEventListener("keydown", function (event) {
    if (event.key === "Escape") hide();
  });
})();

/* "Skip to content" lands on the page's title, so the definition under it is the first thing
   read (Material points it at the first section heading, past the definition). */
(function () {
  "use strict";
  var skip = document.querySelector("a.md-skip");
  var title = document.querySelector("article h1");
  if (!skip || !title) return;
  if (!title.id) title.id = "gg-title";
  title.tabIndex = -1;
  skip.setAttribute("href", "#" + title.id);
})();

/* The language button keeps the reader's place: headings have the same id in both
   languages, so the other language opens at the section being read. */
(function () {
  "use strict";
  function currentSection() {
    var header = document.querySelector(".md-header");
    var top = (header ? header.getBoundingClientRect().bottom : 0) + 8;
    var found = "";
    var headings = document.querySelectorAll("article :is(h2, h3)[id]");
    for (var i = 0; i < headings.length; i++) {
      if (headings[i].getBoundingClientRect().top > top) break;
      found = headings[i].id;
    }
    return found;
  }
  function update(link) {
    var url = new URL(link.href, location.href);
    url.hash = currentSection();
    link.href = url.href;
  }
  ["pointerdown", "focusin", "keydown"].forEach(function (type) {
    document.addEventListener(type, function (event) {
      var link = event.target instanceof Element && event.target.closest(".md-select__link[hreflang]");
      if (link) update(link);
    }, true);
  });
})();