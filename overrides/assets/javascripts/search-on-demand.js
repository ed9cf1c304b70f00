/* Load the search index when the reader starts to search, not with every page.
   The index is most of a page's weight (hundreds of KB, growing with each term), and
   Material requests it on every page load over HTTP (it waits for the search toggle
   only on file://). This script runs before Material's bundle and holds back that one
   request until the search box gets focus (a click, "/", "s", "f" or the search button,
   which all focus it) or the search toggle opens. A page opened from a search result
   (?h=, search.highlight) or with ?q= needs the index at once and gets it. Material
   queues queries until its worker has the index, so nothing typed is lost. */
(function () {
  "use strict";
  var INDEX = /\/search\/search_index\.json(?:[?#]|$)/;
  var params = new URLSearchParams(location.search);
  var started = params.has("h") || params.has("q");
  var waiting = [];

  function start() {
    if (started) return;
    started = true;
    waiting.splice(0).forEach(function (go) { go(); });
  }

  document.addEventListener("focusin", function (event) {
    var el = event.target;
    if (el instanceof Element && el.matches("[data-md-component=search-query]")) start();
  });
  document.addEventListener("change", function (event) {
    if (event.target.id === "__search" && event.target.checked) start();
  });

  // Material requests the index with XMLHttpRequest: open() as usual, send() held back.
  var open = XMLHttpRequest.prototype.open;
  var send = XMLHttpRequest.prototype.send;
  XMLHttpRequest.prototype.open = function (method, url) {
    this.ggSearchIndex = INDEX.test(String(url));
    return open.apply(this, arguments);
  };
  XMLHttpRequest.prototype.send = function () {
    if (started || !this.ggSearchIndex) return send.apply(this, arguments);
    var request = this, args = arguments;
    waiting.push(function () { send.apply(request, args); });
  };
})();
