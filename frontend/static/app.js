// redolab front-end glue: CSRF header on every htmx request, and errors made visible.
(function () {
  "use strict";

  function csrfToken() {
    const match = document.cookie.match(/(?:^|;\s*)csrftoken=([^;]+)/);
    return match ? decodeURIComponent(match[1]) : null;
  }

  function flash(message) {
    const box = document.getElementById("flash");
    if (!box) return;
    box.textContent = message;
    box.hidden = false;
  }

  // Form errors come back as 422 (and a failed login as 401) with the form re-rendered:
  // swap those in like a success; other 4xx/5xx are errors shown in the flash box.
  htmx.config.responseHandling = [
    { code: "204", swap: false },
    { code: "[23]..", swap: true },
    { code: "401", swap: true, error: false },
    { code: "422", swap: true, error: false },
    { code: "[45]..", swap: false, error: true },
  ];

  document.addEventListener("htmx:configRequest", function (event) {
    const token = csrfToken();
    if (token) event.detail.headers["X-CSRFToken"] = token;
  });

  document.addEventListener("htmx:beforeRequest", function () {
    const box = document.getElementById("flash");
    if (box) box.hidden = true;
  });

  document.addEventListener("htmx:responseError", function (event) {
    const xhr = event.detail.xhr;
    let text = xhr.responseText || xhr.statusText;
    try {
      const body = JSON.parse(text);
      if (body && body.detail) text = typeof body.detail === "string" ? body.detail : JSON.stringify(body.detail);
    } catch (_) { /* plain text */ }
    if (xhr.status === 403 && /CSRF/.test(text)) {
      text = "The page is out of date (security token missing): reload it and try again.";
    }
    flash("Request failed (HTTP " + xhr.status + "): " + text);
  });

  // Charts: figures are built server-side (plotly JSON in data-figure) and drawn here.
  function drawPlots(root) {
    if (typeof Plotly === "undefined") return;
    (root || document).querySelectorAll(".plot[data-figure]").forEach(function (element) {
      const figure = JSON.parse(element.dataset.figure);
      Plotly.react(element, figure.data, figure.layout, { responsive: true, displaylogo: false });
      element.dataset.drawn = String(figure.data.reduce(function (n, trace) { return n + (trace.x ? trace.x.length : 0); }, 0));
    });
  }
  document.addEventListener("DOMContentLoaded", function () { drawPlots(document); });
  document.addEventListener("htmx:afterSettle", function (event) { drawPlots(event.detail.elt.parentNode || document); });

  // Plan: copy a settings snippet, print the page as the plan report.
  document.addEventListener("click", function (event) {
    const copy = event.target.closest("[data-copy]");
    if (copy) {
      const text = document.getElementById(copy.dataset.copy).textContent;
      navigator.clipboard.writeText(text).then(function () { copy.textContent = "Copied"; },
        function () { flash("The browser refused the clipboard: select the lines and copy them by hand."); });
    }
    if (event.target.closest("[data-print]")) window.print();
  });
  // A printed plan shows its working: reviewers check the numbers on paper.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.working, details.evidence").forEach(function (d) { d.open = true; });
  });

  document.addEventListener("htmx:sendError", function () {
    flash("redolab did not answer: check that the server is running, then try again.");
  });
})();
