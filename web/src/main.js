// The page of `kubectl effectivepolicy ui` and of --html files (docs/ui.md).
import "./style.css";
import { report, get, getGraph } from "./data.js";
import { afterStack, drawGraph, drawLegend, folded, mark } from "./graph.js";
import { drawTrees, drawError } from "./tree.js";
import { setupChange } from "./change.js";
import { drawFocus, followLive, setDrawn } from "./live.js";
import { foldButton, setupFold } from "./foldui.js";

const $ = (sel) => document.querySelector(sel);
const panel = $("#panel");
const status = $("#status");
let cy = null;

function setStatus(text) {
  status.textContent = text;
}

function showView(view) {
  for (const b of document.querySelectorAll("#tabs button")) {
    b.setAttribute("aria-pressed", String(b.dataset.view === view));
  }
  for (const f of document.querySelectorAll("form.view")) f.hidden = f.dataset.view !== view;
  if (cy) mark(cy, []);
  if (view === "reach") loadReaches();
}

// A node's stack: its EffectivePolicy as the describe tree; a holder of
// folded objects has its fold button under the heading.
async function showTarget(node) {
  const withFold = () => {
    const b = foldButton(cy, node.id);
    if (b) panel.querySelector("h2").after(b);
  };
  // A target the change reaches for the first time has no EffectivePolicy
  // to ask for yet: its stack after the change came with the review.
  const after = afterStack(cy, node.id);
  if (!node.target || after) {
    drawTrees(panel, after || [], after ? node.base + "\n(after the change)" : node.base);
    withFold();
    return;
  }
  try {
    const trees = report
      ? report.targets && report.targets[node.id]
      : (await get("api/target", { group: node.group, kind: node.kind, namespace: node.namespace, name: node.name })).trees;
    drawTrees(panel, trees, node.base);
    withFold();
  } catch (err) {
    drawError(panel, err);
  }
}

async function loadReaches() {
  const sel = $("#reach-select");
  if (sel.options.length) return;
  try {
    const list = report ? [] : (await get("api/reaches")).policies;
    const none = new Option(list.length ? "(choose a policy)" : "(no policy)", "");
    sel.append(none);
    for (const p of list) sel.append(new Option(p.label, JSON.stringify(p.ref)));
  } catch (err) {
    drawError(panel, err);
  }
}

async function showReach() {
  const v = $("#reach-select").value;
  if (!v) return;
  try {
    const r = await get("api/reach", JSON.parse(v));
    drawTrees(panel, r.trees);
    if (cy) mark(cy, r.marks);
  } catch (err) {
    drawError(panel, err);
  }
}

async function showTrace(ev) {
  ev.preventDefault();
  const params = Object.fromEntries(new FormData(ev.target).entries());
  try {
    const r = await get("api/trace", params);
    drawTrees(panel, r.trees);
    if (cy) mark(cy, r.marks);
  } catch (err) {
    drawError(panel, err);
  }
}

// graphSayingListing asks for the graph and, while the server's first list
// is under way (seconds at scale 1: the server lists every effective
// policy the user may read once, at its start), says how far it is.
async function graphSayingListing() {
  let timer = 0;
  const tick = async () => {
    try {
      const l = await get("api/listing");
      if (timer && l.listed > 0) {
        const of = l.total > 0 ? " of " + l.total.toLocaleString("en") : "";
        setStatus(`Listing the effective policies: ${l.listed.toLocaleString("en")}${of}…`);
      }
    } catch {
      // The graph's own request says what went wrong.
    }
    if (timer) timer = setTimeout(tick, 500);
  };
  timer = setTimeout(tick, 500);
  try {
    const { graph, tag } = await getGraph();
    setDrawn(tag);
    return graph;
  } finally {
    clearTimeout(timer);
    timer = 0;
  }
}

async function start() {
  drawLegend($("#legend"));
  if (!report) setupChange({ tabs: $("#tabs"), left: $("#left"), before: $("#graph"), panel, cy: () => cy });
  for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => showView(b.dataset.view));
  $("#reach-select").addEventListener("change", showReach);
  $("#trace-form").addEventListener("submit", showTrace);
  setStatus("Loading…");
  try {
    const g = report ? report.graph : await graphSayingListing();
    // Where the load's time goes (docs/benchmarks/ui.md reads these marks).
    performance.mark("ep:graph-read");
    if (report) {
      document.body.classList.add("report");
      if (!g || !g.nodes || g.nodes.length === 0) document.body.classList.add("no-graph");
      document.title = report.title || document.title;
    }
    cy = drawGraph($("#graph"), g || { nodes: [] }, showTarget);
    setupFold(cy, $("#fold-all"));
    if (!report) drawFocus(cy, g, setStatus);
    const hidden = folded(cy);
    setStatus((g && g.summary ? g.summary : "") + (hidden ? " · " + hidden + " folded: click a dashed object to draw what it holds, a ▾ fold one to fold it back" : ""));
    if (report && report.trees) drawTrees(panel, report.trees, report.title);
    // What the browser tests read and click (the graph is a canvas).
    window.epGraph = {
      nodes: () => cy.nodes().map((n) => ({ ...n.data(), marked: n.hasClass("marked"), x: n.position("x"), y: n.position("y") })),
      tap: (id) => cy.getElementById(id).emit("tap"),
    };
    document.body.dataset.ready = "true";
    requestAnimationFrame(() => requestAnimationFrame(() => performance.mark("ep:drawn")));
  } catch (err) {
    setStatus("");
    drawError(panel, err);
    document.body.dataset.ready = "error";
  }
}

start().then(() => {
  if (!report && cy) followLive(cy, setStatus);
});
