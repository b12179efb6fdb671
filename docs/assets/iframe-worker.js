// A stand-in for Web Workers on file:// (a page opened from disk may not start one):
// mkdocs-material's search runs its worker script in a hidden same-origin iframe, so the
// search works offline. Its offline plugin would load the same kind of shim from unpkg.com;
// this one ships with the site. On http(s) nothing changes.
(function () {
  "use strict";
  if (location.protocol !== "file:") return;

  class IframeWorker extends EventTarget {
    constructor(url) {
      super();
      this.onmessage = null;
      this.onerror = null;
      this._queue = [];
      this._ready = false;
      const iframe = document.createElement("iframe");
      iframe.setAttribute("aria-hidden", "true");
      iframe.style.display = "none";
      (document.body || document.documentElement).appendChild(iframe);
      this._iframe = iframe;
      const scope = iframe.contentWindow;
      const self = this;
      // the worker's postMessage reaches this object, asynchronously, as a worker's does
      scope.postMessage = function (data) {
        setTimeout(function () {
          const ev = new MessageEvent("message", { data: data });
          if (typeof self.onmessage === "function") self.onmessage(ev);
          self.dispatchEvent(ev);
        });
      };
      const script = scope.document.createElement("script");
      script.src = new URL(url, location.href).href;
      script.onload = function () {
        self._ready = true;
        self._queue.splice(0).forEach(function (data) { self._deliver(data); });
      };
      script.onerror = function () {
        const ev = new Event("error");
        if (typeof self.onerror === "function") self.onerror(ev);
        self.dispatchEvent(ev);
      };
      scope.document.head.appendChild(script);
    }
    postMessage(data) {
      if (this._ready) this._deliver(data);
      else this._queue.push(data);
    }
    _deliver(data) {
      const scope = this._iframe.contentWindow;
      setTimeout(function () { scope.dispatchEvent(new scope.MessageEvent("message", { data: data })); });
    }
    terminate() {
      this._iframe.remove();
    }
  }
  window.Worker = IframeWorker;
})();
