/* Reading on a phone: diagrams that open full screen with pan and zoom, tables that show they
   scroll, and code output whose long lines can wrap. Strings come from the page
   (#gg-strings, written from scripts/gpu_glossary/site/i18n.py). */
(function () {
  "use strict";
  var stringsElement = document.getElementById("gg-strings");
  var t = stringsElement ? JSON.parse(stringsElement.textContent) : {};
  var article = document.querySelector("article");
  if (!article) return;

  /* ---- Diagrams: tap, click, Enter or Space opens one full screen ---- */

  var dialog = null, view = null, picture = null, opener = null;
  var state = { scale: 1, x: 0, y: 0, fit: 1, width: 1, height: 1 };
  var pointers = new Map(), pinch = null;

  function button(name, label, text) {
    var b = document.createElement("button");
    b.type = "button";
    b.className = "gg-zoom__button md-icon";
    b.setAttribute("data-gg-zoom", name);
    b.setAttribute("aria-label", label);
    b.title = label;
    b.textContent = text;
    return b;
  }

  function apply() {
    picture.style.transform = "translate(" + state.x + "px, " + state.y + "px) scale(" + state.scale + ")";
    dialog.setAttribute("data-gg-scale", state.scale.toFixed(3));
  }

  /* Zoom by `factor` keeping the point (cx, cy) of the view where it is. */
  function zoom(factor, cx, cy) {
    var rect = view.getBoundingClientRect();
    if (cx === undefined) { cx = rect.width / 2; cy = rect.height / 2; }
    var next = Math.min(Math.max(state.scale * factor, state.fit * 0.5), Math.max(4, state.fit * 8));
    state.x = cx - (cx - state.x) * next / state.scale;
    state.y = cy - (cy - state.y) * next / state.scale;
    state.scale = next;
    apply();
  }

  /* Show the picture at `scale`, centred. */
  function place(scale) {
    var rect = view.getBoundingClientRect();
    state.scale = scale;
    state.x = (rect.width - state.width * scale) / 2;
    state.y = Math.max(0, (rect.height - state.height * scale) / 2);
    apply();
  }

  /* Fitted to the screen where its labels stay readable; on a phone, at its drawn size
     (labels as the diagram's author set them), to be moved around with a finger. */
  function start(width, height) {
    var rect = view.getBoundingClientRect();
    state.width = width;
    state.height = height;
    picture.style.width = width + "px";
    picture.style.height = height + "px";
    state.fit = Math.min(rect.width / width, (rect.height - 48) / height);
    place(state.fit >= 0.75 ? Math.min(state.fit, 2) : 1);
  }

  /* The size the diagram was drawn at: its SVG's viewBox (an <img> of an SVG without width
     and height reports a default size). The file is in the browser's cache already. */
  function drawnSize(img) {
    var rect = img.getBoundingClientRect();
    var guess = { width: rect.width * 2, height: rect.height * 2 };
    return fetch(img.currentSrc || img.src)
      .then(function (response) { return response.text(); })
      .then(function (svg) {
        var box = /viewBox\s*=\s*["']\s*[-\d.]+[\s,]+[-\d.]+[\s,]+([\d.]+)[\s,]+([\d.]+)/.exec(svg);
        return box ? { width: +box[1], height: +box[2] } : guess;
      })
      .catch(function () { return guess; });
  }

  function build() {
    dialog = document.createElement("dialog");
    dialog.className = "gg-zoom";
    dialog.setAttribute("aria-label", t.zoom_title || "Diagram");
    var bar = document.createElement("div");
    bar.className = "gg-zoom__bar";
    bar.appendChild(button("in", t.zoom_in || "Zoom in", "+"));
    bar.appendChild(button("out", t.zoom_out || "Zoom out", "−"));
    bar.appendChild(button("fit", t.zoom_fit || "Fit to screen", "⤢"));
    bar.appendChild(button("close", t.zoom_close || "Close", "×"));
    view = document.createElement("div");
    view.className = "gg-zoom__view";
    picture = document.createElement("img");
    picture.className = "gg-zoom__image";
    picture.draggable = false;
    view.appendChild(picture);
    dialog.appendChild(bar);
    dialog.appendChild(view);
    document.body.appendChild(dialog);

    bar.addEventListener("click", function (event) {
      var which = event.target instanceof Element && event.target.closest("[data-gg-zoom]");
      if (!which) return;
      var name = which.getAttribute("data-gg-zoom");
      if (name === "in") zoom(1.5);
      else if (name === "out") zoom(1 / 1.5);
      else if (name === "fit") place(state.fit);
      else dialog.close();
    });
    dialog.addEventListener("close", function () {
      document.documentElement.classList.remove("gg-zoom-open");
      if (opener && document.contains(opener)) opener.focus();
    });
    dialog.addEventListener("keydown", function (event) {
      var step = 60;
      if (event.key === "+" || event.key === "=") zoom(1.5);
      else if (event.key === "-") zoom(1 / 1.5);
      else if (event.key === "0") place(state.fit);
      else if (event.key === "ArrowLeft") { state.x += step; apply(); }
      else if (event.key === "ArrowRight") { state.x -= step; apply(); }
      else if (event.key === "ArrowUp") { state.y += step; apply(); }
      else if (event.key === "ArrowDown") { state.y -= step; apply(); }
      else return;
      event.preventDefault();
    });
    view.addEventListener("wheel", function (event) {
      event.preventDefault();
      var rect = view.getBoundingClientRect();
      zoom(Math.pow(1.0015, -event.deltaY), event.clientX - rect.left, event.clientY - rect.top);
    }, { passive: false });
    view.addEventListener("dblclick", function (event) {
      var rect = view.getBoundingClientRect();
      if (state.scale > state.fit * 1.2) place(state.fit);
      else zoom(2.5, event.clientX - rect.left, event.clientY - rect.top);
    });
    view.addEventListener("pointerdown", function (event) {
      view.setPointerCapture(event.pointerId);
      pointers.set(event.pointerId, { x: event.clientX, y: event.clientY });
      if (pointers.size === 2) pinch = null;
    });
    view.addEventListener("pointermove", function (event) {
      var last = pointers.get(event.pointerId);
      if (!last) return;
      var now = { x: event.clientX, y: event.clientY };
      if (pointers.size === 1) {
        state.x += now.x - last.x;
        state.y += now.y - last.y;
        apply();
      } else if (pointers.size === 2) {
        pointers.set(event.pointerId, now);
        var points = Array.from(pointers.values());
        var distance = Math.hypot(points[0].x - points[1].x, points[0].y - points[1].y);
        var rect = view.getBoundingClientRect();
        var cx = (points[0].x + points[1].x) / 2 - rect.left, cy = (points[0].y + points[1].y) / 2 - rect.top;
        if (pinch) zoom(distance / pinch, cx, cy);
        pinch = distance;
        return;
      }
      pointers.set(event.pointerId, now);
    });
    function release(event) {
      pointers.delete(event.pointerId);
      if (pointers.size < 2) pinch = null;
    }
    view.addEventListener("pointerup", release);
    view.addEventListener("pointercancel", release);
  }

  function open(img) {
    if (!dialog) build();
    opener = img;
    picture.alt = img.alt;
    picture.src = img.currentSrc || img.src;
    document.documentElement.classList.add("gg-zoom-open");
    dialog.setAttribute("data-gg-scale", "");
    dialog.showModal();
    drawnSize(img).then(function (size) { start(size.width, size.height); });
  }

  var diagrams = article.querySelectorAll("img[src$='.svg'], img[src*='.svg#']");
  Array.prototype.forEach.call(diagrams, function (img) {
    img.classList.add("gg-zoomable");
    img.tabIndex = 0;
    img.setAttribute("role", "button");
    img.setAttribute("aria-haspopup", "dialog");
    if (t.zoom_open) img.setAttribute("aria-description", t.zoom_open);
  });
  article.addEventListener("click", function (event) {
    var img = event.target instanceof Element && event.target.closest("img.gg-zoomable");
    if (img) { event.preventDefault(); open(img); }
  });
  article.addEventListener("keydown", function (event) {
    var img = event.target instanceof Element && event.target.closest("img.gg-zoomable");
    if (img && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); open(img); }
  });

  /* ---- Tables wider than the screen: a shadow on the side that has more ---- */

  function edges(box) {
    var more = box.scrollWidth - box.clientWidth;
    box.toggleAttribute("data-gg-more-left", more > 1 && box.scrollLeft > 1);
    box.toggleAttribute("data-gg-more-right", more > 1 && box.scrollLeft < more - 1);
  }

  var boxes = [];
  var resized = "ResizeObserver" in window ? new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { edges(entry.target); });
  }) : null;
  /* Code in a table breaks between its words only: a line may break after a hyphen or a
     slash ("nvidia-container-cli:"), so each word is kept whole by a span of its own. */
  function keepWordsWhole(code) {
    if (code.children.length || !/\S\s+\S/.test(code.textContent) && !/[-/]/.test(code.textContent)) return;
    var fragment = document.createDocumentFragment();
    code.textContent.split(/(\s+)/).forEach(function (part) {
      if (!part) return;
      if (/^\s+$/.test(part)) { fragment.appendChild(document.createTextNode(part)); return; }
      var word = document.createElement("span");
      word.className = "gg-word";
      word.textContent = part;
      fragment.appendChild(word);
    });
    code.textContent = "";
    code.appendChild(fragment);
  }

  function watchTables() {
    Array.prototype.forEach.call(article.querySelectorAll("table:not([class]) td code"), keepWordsWhole);
    Array.prototype.forEach.call(article.querySelectorAll("table"), function (table) {
      var box = table.closest(".md-typeset__scrollwrap") || table.parentElement;
      if (!box || box.hasAttribute("data-gg-scroll-box")) return;
      if (getComputedStyle(box).overflowX === "visible") {  // not wrapped by Material
        var wrapper = document.createElement("div");
        wrapper.className = "gg-table-scroll";
        table.parentNode.insertBefore(wrapper, table);
        wrapper.appendChild(table);
        box = wrapper;
      }
      box.setAttribute("data-gg-scroll-box", "");
      box.addEventListener("scroll", function () { edges(box); }, { passive: true });
      boxes.push(box);
      edges(box);
      if (resized) resized.observe(box);  // drawn late (content-visibility), or the screen turned
    });
  }

  /* ---- Output with long lines: a button that wraps them ---- */

  /* Measured when a block comes near the screen: a block further away is not laid out yet
     (content-visibility), and measuring it would lay it out. */
  function watchCode(highlight) {
    var pre = highlight.querySelector("pre");
    var code = pre && pre.querySelector("code");
    if (!code || pre.querySelector(".gg-wrap") || code.scrollWidth <= code.clientWidth + 1) return;
    var wrap = document.createElement("button");
    wrap.type = "button";
    wrap.className = "gg-wrap md-icon";
    wrap.title = t.wrap || "Wrap long lines";
    wrap.setAttribute("aria-label", wrap.title);
    wrap.setAttribute("aria-pressed", "false");
    wrap.textContent = "↵";
    wrap.addEventListener("click", function () {
      var on = pre.classList.toggle("gg-wrapped");
      wrap.setAttribute("aria-pressed", String(on));
    });
    pre.appendChild(wrap);
  }

  function measureAll() {
    watchTables();
    boxes.forEach(edges);
  }

  // Material wraps tables for scrolling once its bundle has run; blocks off screen are laid out
  // only when the reader nears them (content-visibility), so code is measured again then.
  if (document.readyState === "complete") setTimeout(measureAll, 0);
  else addEventListener("load", function () { setTimeout(measureAll, 0); });
  if ("IntersectionObserver" in window) {
    var seen = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) { if (entry.isIntersecting) watchCode(entry.target); });
    }, { rootMargin: "200px" });
    Array.prototype.forEach.call(article.querySelectorAll(".highlight"), function (el) { seen.observe(el); });
  }
})();
