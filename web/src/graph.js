// The hierarchy as a graph (cytoscape, laid out by dagre): GatewayClass,
// Gateway, listeners, routes, rules and backends as the policies' contexts
// name them, each node colored by the outcome of the policies that reach it
// (Okabe–Ito, a palette readable with every common color-vision deficiency)
// and labelled with it in text too.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";

cytoscape.use(dagre);

// outcomes: the color and the word of each outcome class the server sends.
export const outcomes = {
  enforced: { color: "#0072B2", text: "Enforced" },
  partial: { color: "#E69F00", text: "Partially enforced" },
  lost: { color: "#CC79A7", text: "Overridden" },
  conflict: { color: "#D55E00", text: "Conflicted or invalid" },
  none: { color: "#BBBBBB", text: "No policy reaches it here" },
};

export function drawLegend(ul) {
  ul.replaceChildren();
  for (const [key, o] of Object.entries(outcomes)) {
    const li = document.createElement("li");
    const sw = document.createElement("span");
    sw.className = "swatch o-" + key;
    sw.style.background = o.color;
    li.append(sw, document.createTextNode(o.text));
    ul.append(li);
  }
}

// Node boxes are sized to their label as measured here, with the label
// wrapped here too, so that cytoscape draws exactly the lines measured:
// its own "label" sizing under-measures wrapped, multi-line labels and the
// text ran over the box's edges.
const fontSize = 12;
const fontFamily = "system-ui, sans-serif";
const lineHeight = 1.3;
const maxLine = 220;
const pad = 8;
const measure = document.createElement("canvas").getContext("2d");
const boxes = new Map();

// greedy joins pieces with sep into lines no wider than maxLine (a piece
// wider than that stays whole on its line).
function greedy(pieces, sep) {
  const out = [];
  let cur = "";
  for (const p of pieces) {
    const next = cur ? cur + sep + p : p;
    if (cur && measure.measureText(next).width > maxLine) {
      out.push(cur);
      cur = p;
    } else {
      cur = next;
    }
  }
  out.push(cur);
  return out;
}

// wrapLine breaks one line between its " · " parts first (an outcome and
// its count stay together), then at spaces.
function wrapLine(line) {
  return greedy(line.split(" · "), " · ").flatMap((l) => (measure.measureText(l).width > maxLine ? greedy(l.split(" "), " ") : [l]));
}

// box is a label's wrapped text and the size of its box.
export function box(label) {
  let b = boxes.get(label);
  if (b) return b;
  measure.font = fontSize + "px " + fontFamily;
  const lines = String(label || "").split("\n").flatMap(wrapLine);
  const width = Math.max(...lines.map((l) => measure.measureText(l).width));
  b = { text: lines.join("\n"), width: Math.ceil(width) + 2 * pad, height: Math.ceil(lines.length * fontSize * lineHeight) + 2 * pad };
  boxes.set(label, b);
  return b;
}

const style = [
  {
    selector: "node",
    style: {
      shape: "round-rectangle",
      label: (n) => box(n.data("label")).text,
      "text-wrap": "wrap",
      "text-max-width": 10000,
      "text-valign": "center",
      "text-halign": "center",
      "line-height": lineHeight,
      "font-size": fontSize,
      "font-family": fontFamily,
      // Text too small to read is not drawn (a large graph seen whole).
      "min-zoomed-font-size": 6,
      width: (n) => box(n.data("label")).width,
      height: (n) => box(n.data("label")).height,
      "border-width": 1,
      "border-color": "#333",
      color: "#000",
      "background-color": (n) => (outcomes[n.data("outcome")] || outcomes.none).color,
    },
  },
  { selector: "node[outcome = 'enforced'], node[outcome = 'conflict']", style: { color: "#fff" } },
  { selector: "edge", style: { width: 1.5, "line-color": "#777", "target-arrow-color": "#777", "target-arrow-shape": "triangle", "curve-style": "bezier" } },
  { selector: "node:selected", style: { "border-width": 4, "border-color": "#000" } },
  { selector: "node.marked", style: { "border-width": 4, "border-color": "#000", "border-style": "double" } },
  { selector: ".faded", style: { opacity: 0.25 } },
];

// dagre lays a small graph out best, in left-to-right layers; past
// dagreMax objects its crossing minimization grows out of reach (scale 1's
// busiest Gateway, 1,327 objects and 2,353 edges: 40 CPU-s in Node.js;
// without its 897 Services, 412 objects: 2 CPU-s). A larger graph is laid
// out in rings by level, the GatewayClass in the middle and the backends
// outermost (cytoscape's own concentric layout, linear in the graph: 0.4
// CPU-s for the 1,327): its breadthfirst layout put the 897 Services in one
// row, which seen whole is a line.
const dagreMax = 150;

function level(n) {
  const kind = n.data("kind") || "";
  const section = Boolean(n.data("section"));
  if (kind === "GatewayClass") return 7;
  if (kind === "Gateway" || kind === "ListenerSet") return section ? 5 : 6;
  if (kind === "Namespace") return 4;
  if (kind.endsWith("Route")) return section ? 2 : 3;
  return 1;
}

export function layoutFor(nodes) {
  if (nodes <= dagreMax) return { name: "dagre", rankDir: "LR", nodeSep: 12, rankSep: 60 };
  return { name: "concentric", concentric: level, levelWidth: () => 1, minNodeSpacing: 8, avoidOverlap: true, animate: false };
}

// drawGraph draws graph ({nodes, edges}) into el and calls onTap with the
// data of a node clicked.
export function drawGraph(el, graph, onTap) {
  const elements = [];
  for (const n of graph.nodes || []) elements.push({ data: n });
  for (const e of graph.edges || []) elements.push({ data: { id: e.from + "->" + e.to, source: e.from, target: e.to } });
  const big = elements.length > 4 * dagreMax;
  const cy = cytoscape({
    container: el,
    elements,
    style,
    layout: layoutFor((graph.nodes || []).length),
    wheelSensitivity: 0.3,
    boxSelectionEnabled: false,
    // A large graph pans and zooms as a picture, edges hidden while it moves.
    textureOnViewport: big,
    hideEdgesOnViewport: big,
  });
  cy.on("tap", "node", (ev) => onTap(ev.target.data()));
  return cy;
}

// mark highlights the nodes of ids (the others fade), with their outcome
// written into their label; no ids clears the marks.
export function mark(cy, marks) {
  cy.batch(() => {
    cy.elements().removeClass("marked faded");
    cy.nodes().forEach((n) => n.data("label", n.data("base")));
    if (!marks || marks.length === 0) return;
    cy.elements().addClass("faded");
    for (const m of marks) {
      const n = cy.getElementById(m.id);
      if (n.empty()) continue;
      n.removeClass("faded").addClass("marked");
      if (m.note) n.data("label", n.data("base") + "\n▶ " + m.note);
    }
  });
}

// update brings the drawn graph to graph (the Live view): colors and
// labels change in place; nodes and edges that came or went are added or
// removed, and only then is the graph laid out again. It returns whether
// anything changed.
export function update(cy, graph) {
  let changed = false;
  let moved = false;
  const seen = new Set();
  cy.batch(() => {
    for (const n of graph.nodes || []) {
      seen.add(n.id);
      const el = cy.getElementById(n.id);
      if (el.empty()) {
        cy.add({ data: n });
        moved = true;
        continue;
      }
      if (el.data("base") !== n.base || el.data("outcome") !== n.outcome) {
        el.data({ ...n, label: n.base });
        changed = true;
      }
    }
    for (const e of graph.edges || []) {
      const id = e.from + "->" + e.to;
      seen.add(id);
      if (cy.getElementById(id).empty()) {
        cy.add({ data: { id, source: e.from, target: e.to } });
        moved = true;
      }
    }
    const gone = cy.elements().filter((el) => !seen.has(el.id()));
    if (gone.nonempty()) {
      cy.remove(gone);
      moved = true;
    }
  });
  if (moved) cy.layout(layoutFor(cy.nodes().length)).run();
  return changed || moved;
}
