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

  // An error is shown next to what caused it: after the form (or the button) that sent the request.
  function showNear(element, message) {
    const anchor = (element && (element.closest("form") || element)) || null;
    if (!anchor || !anchor.isConnected) { flash(message); return; }
    let box = anchor.nextElementSibling;
    if (!box || !box.classList.contains("request-error")) {
      box = document.createElement("p");
      box.className = "request-error";
      box.setAttribute("role", "alert");
      anchor.after(box);
    }
    box.textContent = message;
  }

  document.addEventListener("htmx:beforeRequest", function (event) {
    const box = document.getElementById("flash");
    if (box) box.hidden = true;
    const element = event.detail.elt;
    const anchor = element && (element.closest("form") || element);
    const old = anchor && anchor.nextElementSibling;
    if (old && old.classList.contains("request-error")) old.remove();
  });

  // A form the user has typed in is kept when its section refreshes around it (e.g. the
  // Experiments section after a host was added). Such forms carry hx-preserve, so htmx keeps the
  // old element of the same id; just before a swap, the forms that must be replaced lose their id:
  // the one that sent the request (its answer shows its errors) and any the user has not typed in
  // (they take the fresh host list).
  function noteTyped(event) {
    const form = event.target.closest && event.target.closest("form[hx-preserve]");
    if (form) form.dataset.typed = "true";
  }
  document.addEventListener("input", noteTyped);
  document.addEventListener("change", noteTyped);
  document.addEventListener("htmx:beforeSwap", function (event) {
    const target = event.detail.target;
    if (!event.detail.shouldSwap || !target || !target.querySelectorAll) return;
    const source = event.detail.requestConfig && event.detail.requestConfig.elt;
    const sending = source && source.closest ? source.closest("form") : null;
    target.querySelectorAll("form[hx-preserve]").forEach(function (form) {
      if (form === sending || !form.dataset.typed) form.removeAttribute("id");
    });
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
    showNear(event.detail.elt, "Request failed (HTTP " + xhr.status + "): " + text);
  });

  // Charts: figures are built server-side (plotly JSON in data-figure) and drawn here. Long series
  // come as typed blocks ({dtype: "f8", bdata: base64}), which plotly.js reads itself; their point
  // count is their byte length over the element size.
  const DTYPE_BYTES = { f8: 8, f4: 4, i4: 4, u4: 4, i2: 2, u2: 2, i1: 1, u1: 1 };
  function pointCount(values) {
    if (!values) return 0;
    if (typeof values.bdata === "string") {
      const padding = (values.bdata.match(/=*$/) || [""])[0].length;
      return (values.bdata.length * 3 / 4 - padding) / (DTYPE_BYTES[values.dtype] || 8);
    }
    return values.length || 0;
  }
  // The toolbar is always there (a phone has no hover) and saves the figure with its title block (in
  // the layout, so it is in the image) as PNG or as SVG, named after the chart.
  function plotConfig(element) {
    const name = element.dataset.filename || element.id || "redolab-chart";
    const svg = {
      name: "toSVG",
      title: "Download as SVG (with its title block)",
      icon: Plotly.Icons.disk || Plotly.Icons.camera,
      click: function (chart) { Plotly.downloadImage(chart, { format: "svg", filename: name }); },
    };
    return {
      responsive: true,
      displaylogo: false,
      displayModeBar: true,
      toImageButtonOptions: { format: "png", filename: name, scale: 2 },
      modeBarButtonsToAdd: [svg],
    };
  }
  function drawPlots(root) {
    if (typeof Plotly === "undefined") return;
    (root || document).querySelectorAll(".plot[data-figure]").forEach(function (element) {
      const figure = JSON.parse(element.dataset.figure);
      Plotly.react(element, figure.data, figure.layout, plotConfig(element))
        .then(function () { if (element.id === "redo-rate-chart") offerRehearsal(element); });
      element.dataset.drawn = String(figure.data.reduce(function (n, trace) { return n + pointCount(trace.x); }, 0));
    });
  }
  // History chart: a period selected by dragging across it (plotly zooms the x axis) can be rehearsed.
  // The chart's times are the database's clock as drawn (naive, never converted by the browser), so
  // the FROM and TO put in the Rehearsal form stay on that clock.
  function wallClock(value) {
    if (typeof value === "number") return new Date(value).toISOString().slice(0, 19).replace("T", " ");
    return String(value).replace("T", " ").slice(0, 19);
  }
  function selectedPeriod(update) {
    let from = null, to = null;
    Object.keys(update).forEach(function (key) {
      const match = key.match(/^xaxis\d*\.range(?:\[([01])\])?$/);
      if (!match) return;
      if (match[1] === undefined) { from = update[key][0]; to = update[key][1]; }
      else if (match[1] === "0") from = update[key];
      else to = update[key];
    });
    return from !== null && to !== null ? [wallClock(from), wallClock(to)] : null;
  }
  function rehearseButton(chart) {
    let box = document.getElementById("rehearse-window");
    if (!box) {
      box = document.createElement("div");
      box.id = "rehearse-window";
      box.className = "rehearse-window";
      box.hidden = true;
      const button = document.createElement("button");
      button.type = "button";
      button.className = "secondary";
      button.id = "rehearse-window-button";
      box.appendChild(button);
      chart.after(box);
    }
    return box;
  }
  function offerRehearsal(chart) {
    if (chart.dataset.rehearse || !document.getElementById("rehearsal-form") || typeof chart.on !== "function") return;
    chart.dataset.rehearse = "on";
    const zone = (document.getElementById("env-time-zone") || { textContent: "" }).textContent.trim();
    chart.on("plotly_relayout", function (update) {
      const box = rehearseButton(chart);
      const period = selectedPeriod(update || {});
      box.hidden = !period;
      if (!period) return;
      const button = box.querySelector("button");
      button.dataset.from = period[0];
      button.dataset.to = period[1];
      button.textContent = "Rehearse this window (" + period[0] + " to " + period[1] + (zone ? " " + zone : "") + ")";
    });
  }
  document.addEventListener("click", function (event) {
    const button = event.target.closest("#rehearse-window-button");
    const form = document.getElementById("rehearsal-form");
    if (!button || !form) return;
    form.querySelector("[name=window]").value = "period";
    form.querySelector("[name=window_from]").value = button.dataset.from;
    form.querySelector("[name=window_to]").value = button.dataset.to;
    form.dataset.typed = "true";  // kept when its section refreshes (see hx-preserve above)
    const panel = document.getElementById("rehearsal-panel");
    if (panel) panel.open = true;
    form.scrollIntoView({ behavior: "smooth", block: "start" });
    form.querySelector("[name=window_from]").focus({ preventScroll: true });
  });

  // Typing a period's end chooses "a period" as the window to replay.
  document.addEventListener("input", function (event) {
    const typed = event.target.closest && event.target.closest("#rehearsal-form [name=window_from], #rehearsal-form [name=window_to]");
    if (typed) typed.form.querySelector("[name=window]").value = "period";
  });

  // plotly.js (4.8 MB) loads async, so htmx and the forms work before it arrives: draw when either
  // the page is ready or plotly.js has loaded, whichever is last.
  document.addEventListener("DOMContentLoaded", function () {
    drawPlots(document);
    const plotly = document.getElementById("plotly-js");
    if (plotly && typeof Plotly === "undefined") plotly.addEventListener("load", function () { drawPlots(document); });
  });
  document.addEventListener("htmx:afterSettle", function (event) { drawPlots(event.detail.elt.parentNode || document); });

  // A region that scrolls sideways (a wide table on a phone) must be reachable by keyboard: give it
  // a tab stop and a name when it overflows, and take them away when it no longer does.
  function scrollersReachable(root) {
    root.querySelectorAll("table, .table-scroll, .compact, pre").forEach(function (element) {
      const scrolls = element.scrollWidth > element.clientWidth + 1 &&
        ["auto", "scroll"].includes(getComputedStyle(element).overflowX);
      if (scrolls && !element.hasAttribute("tabindex")) {
        element.setAttribute("tabindex", "0");
        element.dataset.scrollStop = "1";
        if (!element.hasAttribute("aria-label") && !element.hasAttribute("aria-labelledby")) {
          element.setAttribute("aria-label", "scrolls sideways");
        }
      } else if (!scrolls && element.dataset.scrollStop) {
        element.removeAttribute("tabindex");
        delete element.dataset.scrollStop;
      }
    });
  }
  // On a phone a list table reads as cards: each cell carries its column's heading as a label, so
  // the number that matters in a row (a run's throughput, a preview's rate) is never off-screen.
  function labelCells(root) {
    root.querySelectorAll("table.list").forEach(function (table) {
      const headings = Array.from(table.querySelectorAll("thead th")).map(function (th) { return th.textContent.trim(); });
      if (!headings.length) return;
      table.classList.add("labelled");
      table.querySelectorAll("tbody tr").forEach(function (row) {
        Array.from(row.children).forEach(function (cell, index) {
          if (!cell.hasAttribute("data-label") && headings[index]) cell.setAttribute("data-label", headings[index]);
        });
      });
    });
  }
  document.addEventListener("htmx:afterSettle", function () { labelCells(document); });
  // On a phone a long fold (a preview's sample rows, each a card) starts folded, once: a person who
  // opened it keeps it open across later swaps.
  function foldOnPhone(root) {
    if (!window.matchMedia("(max-width: 760px)").matches) return;
    root.querySelectorAll("details[data-fold-on-phone]").forEach(function (details) {
      details.removeAttribute("open");
      details.removeAttribute("data-fold-on-phone");
    });
  }
  document.addEventListener("htmx:afterSettle", function () { foldOnPhone(document); });

  // A new environment's form: the transport modes offered are the chosen platform's (no NEARSYNC or
  // SUPERASYNC for Data Guard); a mode the platform lacks gives way to its first.
  function platformModes() {
    const platform = document.getElementById("f-platform");
    if (!platform) return;
    document.querySelectorAll("option[data-platform]").forEach(function (option) {
      const fits = option.dataset.platform.split(" ").indexOf(platform.value) >= 0;
      option.hidden = !fits;
      option.disabled = !fits;
      if (!fits && option.selected) {
        const first = option.parentElement.querySelector("option:not([disabled])");
        if (first) first.selected = true;
      }
    });
  }
  document.addEventListener("change", function (event) {
    if (event.target.id === "f-platform") platformModes();
  });
  document.addEventListener("htmx:afterSettle", platformModes);
  // A form's fields that fit only some choices (data-when="role=standby", "transport=ssh"): hidden
  // otherwise, so a "This machine" host shows no SSH fields and a primary no destination.
  function fitFields(root) {
    root.querySelectorAll("[data-when]").forEach(function (group) {
      const rule = group.dataset.when.split("=");
      const form = group.closest("form");
      const control = form && form.elements[rule[0]];
      if (control) group.hidden = rule[1].split("|").indexOf(control.value) < 0;
    });
  }
  document.addEventListener("change", function (event) {
    if (event.target.form && event.target.form.querySelector("[data-when]")) fitFields(event.target.form);
  });
  document.addEventListener("htmx:afterSettle", function () { fitFields(document); });

  document.addEventListener("DOMContentLoaded", function () {
    platformModes();
    fitFields(document);
    labelCells(document);
    foldOnPhone(document);
    scrollersReachable(document);
    // On a phone the environment's facts fold into their one-line summary (a tap unfolds them).
    const facts = document.getElementById("facts-fold");
    if (facts && window.matchMedia("(max-width: 760px)").matches) facts.removeAttribute("open");
  });
  document.addEventListener("htmx:afterSettle", function () { scrollersReachable(document); });
  window.addEventListener("resize", function () { scrollersReachable(document); });

  // Plan: copy a settings snippet, print the page as the plan report.
  document.addEventListener("click", function (event) {
    const copy = event.target.closest("[data-copy]");
    if (copy) {
      const text = document.getElementById(copy.dataset.copy).textContent;
      navigator.clipboard.writeText(text).then(function () { copy.textContent = "Copied"; },
        function () { flash("The browser refused the clipboard: select the lines and copy them by hand."); });
    }
    if (event.target.closest("[data-print]")) printWithEvidence();
  });
  // A long evidence list loads when opened: open it, and print once it is in (or after 5 s).
  function printWithEvidence() {
    const pending = document.querySelector("#plan-evidence [data-evidence-pending]");
    if (!pending) { window.print(); return; }
    const details = pending.closest("details");
    let printed = false;
    const go = function () { if (!printed) { printed = true; window.print(); } };
    details.addEventListener("htmx:afterSettle", go, { once: true });
    setTimeout(go, 5000);
    details.open = true;
  }
  // A printed plan shows its working: reviewers check the numbers on paper.
  window.addEventListener("beforeprint", function () {
    document.querySelectorAll("details.working, details.evidence").forEach(function (d) { d.open = true; });
  });

  document.addEventListener("htmx:sendError", function () {
    flash("redolab did not answer: check that the server is running, then try again.");
  });
})();
