/* Search costs nothing until the reader starts to search. Material, on every page load,
   starts its search worker (a thread and a 40 KB script, 12 KB gzipped) and requests the
   search index over HTTP (it waits for the search toggle only on file://); the index is
   most of a page's weight (hundreds of KB, growing with each term). This script runs
   before Material's bundle and holds both back until the search box gets focus (a click,
   "/", "s", "f" or the search button, which all focus it) or the search toggle opens. A
   page opened from a search result (?h=, search.highlight) or with ?q= needs the index at
   once and gets it. Material queues queries until its worker has the index, so nothing
   typed is lost; its first message to the worker is the index, so the worker starts then. */
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

  // Material's worker: a stand-in that starts the real one with the first message (the
  // index, sent once it has arrived) and passes the worker's events on.
  var SEARCH_WORKER = /\/workers\/search\.[^/]*\.js(?:[?#]|$)/;
  var RealWorker = window.Worker;
  window.Worker = function (url, options) {
    if (!SEARCH_WORKER.test(String(url))) return new RealWorker(url, options);
    var standIn = new EventTarget();
    var worker = null;
    standIn.postMessage = function () {
      if (!worker) {
        worker = new RealWorker(url, options);
        worker.onmessage = function (event) { standIn.dispatchEvent(new MessageEvent("message", { data: event.data })); };
        worker.onmessageerror = function () { standIn.dispatchEvent(new Event("messageerror")); };
        worker.onerror = function () { standIn.dispatchEvent(new Event("error")); };
      }
      worker.postMessage.apply(worker, arguments);
    };
    standIn.terminate = function () { if (worker) worker.terminate(); };
    return standIn;
  };

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
