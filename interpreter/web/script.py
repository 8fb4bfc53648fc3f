"""The one script of ``ludus serve``'s pages, served as ``/static/ludus.js``.

It polls a seat's JSON (so a hot-seat partner or another browser sees each decision), makes
the board's places and pieces clickable when a legal choice is about them, and uploads a log
to replay. Plain browser JavaScript: no build step, nothing fetched from elsewhere. The pages
work without it (forms post and redirect), only less conveniently.
"""

SCRIPT = r"""
(function () {
  "use strict";
  var body = document.body;

  function buttons() { return Array.prototype.slice.call(document.querySelectorAll("button.choice")); }

  // Mark every board element a choice is about; a click on one makes that choice, or, when
  // several choices are about it, shows only those.
  function bind() {
    var byValue = {};
    buttons().forEach(function (b) {
      (b.getAttribute("data-values") || "").split(" ").forEach(function (v) {
        if (v) { (byValue[v] = byValue[v] || []).push(b); }
      });
    });
    document.querySelectorAll("[data-value]").forEach(function (el) {
      var vals = [el.getAttribute("data-value")].concat((el.getAttribute("data-also") || "").split(" "));
      var matching = null;
      vals.forEach(function (v) {
        (byValue[v] || []).forEach(function (b) {
          matching = matching || [];
          if (matching.indexOf(b) < 0) { matching.push(b); }
        });
      });
      el.classList.toggle("clickable", !!matching);
      el.onclick = matching ? function (ev) {
        ev.stopPropagation();
        if (matching.length === 1) { matching[0].click(); return; }
        var box = document.getElementById("choices");
        buttons().forEach(function (b) { b.classList.toggle("match", matching.indexOf(b) >= 0); });
        box.classList.add("filtered");
        var f = document.querySelector("p.filter");
        if (f) { f.hidden = false; }
      } : null;
    });
    var all = document.querySelector("button.showall");
    if (all) {
      all.onclick = function () {
        document.getElementById("choices").classList.remove("filtered");
        document.querySelector("p.filter").hidden = true;
      };
    }
    var log = document.getElementById("log");
    if (log) { log.scrollTop = log.scrollHeight; }
  }

  function poll() {
    var api = body.getAttribute("data-api");
    if (!api) { return; }
    fetch(api, {cache: "no-store"}).then(function (r) { return r.ok ? r.json() : null; }).then(function (d) {
      if (d && String(d.version) !== body.getAttribute("data-version")) {
        body.setAttribute("data-version", String(d.version));
        ["board", "lists", "status", "decision", "log"].forEach(function (k) {
          var el = document.getElementById(k);
          if (el) { el.innerHTML = d[k]; }
        });
        bind();
      }
    }).catch(function () {}).then(function () { setTimeout(poll, 1500); });
  }

  var upload = document.getElementById("upload");
  if (upload) {
    upload.onchange = function () {
      var file = upload.files[0];
      if (!file) { return; }
      fetch("/replay/upload?name=" + encodeURIComponent(file.name),
            {method: "POST", body: file, headers: {"Content-Type": "application/octet-stream",
                                                      "Accept": "application/json"}})
        .then(function (r) { return r.json(); })
        .then(function (d) {
          if (d.url) { window.location = d.url; } else {
            var pre = document.createElement("pre");
            pre.className = "error";
            pre.textContent = d.error;
            upload.parentNode.appendChild(pre);
          }
        });
    };
  }
  bind();
  if (body.getAttribute("data-api")) { setTimeout(poll, 1500); }
})();
"""
