// The hierarchy as a graph (cytoscape, laid out by dagre): GatewayClass,
// Gateway, listeners, routes, rules and backends as the policies' contexts
// name them, each node colored by the outcome of the policies that reach it
// (Okabe–Ito, a palette readable with every common color-vision deficiency)
// and labelled with it in text too.
import cytoscape from "cytoscape";
import dagre from "cytoscape-dagre";
import { outcomes } from "./outcomes.js";
import { buildModel, elements, foldBack, level, reveal, withAfter } from "./fold.js";

export { outcomes };

cytoscape.use(dagre);

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

// labelled is the data of a node labelled label: the label, its wrapped
// text and its box's size, which the style reads as data (a function in
// the style is called again for each element at each style pass; data is
// read once: the style was most of the load of a large graph).
export function labelled(label) {
  const b = box(label);
  return { label, text: b.text, w: b.width, h: b.height };
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
      label: "data(text)",
      "text-wrap": "wrap",
      "text-max-width": 10000,
      "text-valign": "center",
      "text-halign": "center",
      "line-height": lineHeight,
      "font-size": fontSize,
      "font-family": fontFamily,
      // Text too small to read is not drawn (a large graph seen whole).
      "min-zoomed-font-size": 6,
      width: "data(w)",
      height: "data(h)",
      "border-width": 1,
      "border-color": "#333",
      color: "#000",
      "background-color": outcomes.none.color,
    },
  },
  ...Object.entries(outcomes).map(([o, c]) => ({ selector: `node[outcome = '${o}']`, style: { "background-color": c.color } })),
  { selector: "node[outcome = 'enforced'], node[outcome = 'conflict']", style: { color: "#fff" } },
  { selector: "edge", style: { width: 1.5, "line-color": "#777", "target-arrow-color": "#777", "target-arrow-shape": "triangle", "curve-style": "straight" } },
  // A holder of folded leaves: a dashed border, in the color of the worst
  // outcome hidden in it (its badge says it in words).
  { selector: "node[folded > 0]", style: { "border-width": 3, "border-style": "dashed" } },
  ...Object.entries(outcomes).map(([o, c]) => ({ selector: `node[folded > 0][inner = '${o}']`, style: { "border-color": c.color } })),
  // A holder opened by a click: a thick solid border (its badge says
  // "▾ fold" in words).
  { selector: "node[open > 0]", style: { "border-width": 3 } },
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

// layoutFor is the layout of a graph of nodes objects (folded or not: a
// folded graph's routes alone are too many edges for dagre, 1.5 CPU-s on a
// 207-object graph folded to 101).
export function layoutFor(nodes) {
  if (nodes <= dagreMax) return { name: "dagre", rankDir: "LR", nodeSep: 12, rankSep: 60 };
  return { name: "concentric", concentric: (n) => level(n.data()), levelWidth: () => 1, minNodeSpacing: 8, avoidOverlap: true, animate: false };
}


// drawn is what m draws, each node with its label's text and box.
function drawn(m) {
  const els = elements(m);
  for (const el of els) if (el.group === "nodes") Object.assign(el.data, labelled(el.data.base));
  return els;
}

const key = "effectivepolicy";
const model = (cy) => cy.scratch(key);

// sync brings the drawn elements to what model m draws: labels and colors
// change in place; it answers the elements added, whether any went, and
// whether any changed.
function sync(cy, m) {
  const want = drawn(m);
  const seen = new Set();
  const fresh = [];
  let changed = false;
  let added = cy.collection();
  let gone = 0;
  cy.batch(() => {
    for (const el of want) {
      seen.add(el.data.id);
      const cur = cy.getElementById(el.data.id);
      if (cur.empty()) fresh.push(el);
      else if (el.group === "nodes" && (cur.data("base") !== el.data.base || cur.data("outcome") !== el.data.outcome || cur.data("inner") !== el.data.inner || cur.data("target") !== el.data.target)) {
        cur.data(el.data);
        changed = true;
      }
    }
    const old = cy.elements().filter((el) => !seen.has(el.id()));
    gone = old.length;
    cy.remove(old);
    added = cy.add(fresh);
  });
  return { added, gone, changed };
}

// place lays out the nodes just drawn for holders, each holder's beside it
// (dagre on the holder and its leaves, moved so the holder stays where it
// was, away from the graph's middle); many at once lay the whole graph out
// again.
function place(cy, hs, added) {
  const nodes = added.nodes();
  if (nodes.empty()) return;
  if (nodes.length > dagreMax) {
    cy.layout(layoutFor(model(cy).nodes.size)).run();
    return;
  }
  const mid = cy.nodes().difference(nodes).boundingBox();
  const done = new Set();
  for (const id of hs) {
    const h = cy.getElementById(id);
    if (h.empty()) continue;
    const mine = h.successors().nodes().intersection(nodes).filter((n) => !done.has(n.id()));
    if (mine.empty()) continue;
    mine.forEach((n) => done.add(n.id()));
    const at = { ...h.position() };
    const part = h.union(mine);
    const rankDir = at.x >= (mid.x1 + mid.x2) / 2 ? "LR" : "RL";
    part.union(part.edgesWith(part)).layout({ name: "dagre", rankDir, nodeSep: 12, rankSep: 60, fit: false, animate: false }).run();
    const dx = at.x - h.position("x");
    const dy = at.y - h.position("y");
    part.positions((n) => ({ x: n.position("x") + dx, y: n.position("y") + dy }));
  }
}

// drawGraph draws graph ({nodes, edges}) into el, folded when large
// (fold.js), and calls onTap with the data of a node clicked; a click on a
// holder of folded leaves also draws them, a click on one opened so folds
// them back (each emits "ep:fold" on the graph).
export function drawGraph(el, graph, onTap) {
  const m = buildModel(graph);
  m.base = graph;
  m.after = null;
  const els = drawn(m);
  performance.mark("ep:folded");
  const big = els.length > 4 * dagreMax;
  const cy = cytoscape({
    container: el,
    elements: els,
    style,
    layout: layoutFor(m.nodes.size),
    wheelSensitivity: 0.3,
    boxSelectionEnabled: false,
    // A large graph pans and zooms as a picture, edges hidden while it moves.
    textureOnViewport: big,
    hideEdgesOnViewport: big,
  });
  performance.mark("ep:laid-out");
  cy.scratch(key, m);
  cy.on("tap", "node", (ev) => {
    const d = ev.target.data();
    // The stack is asked for first: the fold's layout must not delay it.
    onTap(d);
    toggleFold(cy, d.id);
  });
  return cy;
}

// toggleFold draws what the holder id holds folded, or folds back what it
// was opened to draw; it answers whether anything changed.
export function toggleFold(cy, id) {
  const n = cy.getElementById(id);
  if (n.empty() || !(n.data("folded") || n.data("open"))) return false;
  if (n.data("folded")) expand(cy, id);
  else collapse(cy, [id]);
  cy.emit("ep:fold", [id]);
  return true;
}

// foldAll folds back every holder the user opened.
export function foldAll(cy) {
  const ids = cy.nodes("[open > 0]").map((n) => n.id());
  if (ids.length === 0) return;
  collapse(cy, ids);
  cy.emit("ep:fold", [""]);
}

// expand draws the leaves folded into the holder id.
export function expand(cy, id) {
  const m = model(cy);
  m.open.add(id);
  place(cy, [id], sync(cy, m).added);
  paint(cy, m);
}

// collapse folds back what the holders ids were opened to draw. The rest
// of the graph stays where it is: an opening laid its leaves out beside
// the holder without moving anything else, so taking them away restores
// the picture before it; past dagreMax leaves the opening laid the whole
// graph out, and so does folding them back.
function collapse(cy, ids) {
  const m = model(cy);
  for (const id of ids) foldBack(m, id);
  if (sync(cy, m).gone > dagreMax) cy.layout(layoutFor(m.nodes.size)).run();
  paint(cy, m);
}

// afterStack is the describe tree of id after the change the Change view
// draws in, when id is a target the change reaches for the first time.
export function afterStack(cy, id) {
  const m = model(cy);
  return (m && m.after && m.after.stacks && m.after.stacks[id]) || null;
}

// foldState is what the holder id holds folded (folded > 0) or was
// opened to draw (open > 0), and in words (what).
export function foldState(cy, id) {
  const n = cy.getElementById(id);
  if (n.empty()) return { folded: 0, open: 0, what: "" };
  return { folded: n.data("folded") || 0, open: n.data("open") || 0, what: n.data("what") || "" };
}

// folded is how many objects the graph holds folded (not drawn).
export function folded(cy) {
  const m = model(cy);
  return m ? m.nodes.size - cy.nodes().length : 0;
}

// known answers whether the graph has the node id, drawn or folded.
export function known(cy, id) {
  const m = model(cy);
  return m ? m.nodes.has(id) : cy.getElementById(id).nonempty();
}

// fewMarks: marks on at most this many folded leaves draw them (a trace's
// rule and backends); more are counted on their holders.
const fewMarks = 30;

// mark highlights the nodes of marks (the others fade), with their outcome
// written into their label; no marks clears them. Marked leaves that are
// folded are drawn when few, else counted on the object holding them.
// after (the Change view's) is what a change reaches for the first time,
// drawn in as it would be until the marks change again (fold.js withAfter).
export function mark(cy, marks, after) {
  let m = model(cy);
  let added = cy.collection();
  let gone = 0;
  if ((after || null) !== m.after) {
    const { base, folding } = m;
    m = buildModel(withAfter(base, after), m);
    // A few objects more do not unfold a folded graph, nor fold one drawn whole.
    Object.assign(m, { base, folding, after: after || null });
    cy.scratch(key, m);
    ({ added, gone } = sync(cy, m));
  }
  m.marks = marks || [];
  let hs = [];
  if (m.folding && m.marks.length) {
    const vis = new Set(cy.nodes().map((n) => n.id()));
    const hidden = m.marks.filter((x) => m.nodes.has(x.id) && !vis.has(x.id)).map((x) => x.id);
    if (hidden.length > 0 && hidden.length <= fewMarks) {
      hs = reveal(m, hidden);
      added = added.union(sync(cy, m).added);
    }
  }
  if (!m.folding && (added.nonempty() || gone > 0)) cy.layout(layoutFor(m.nodes.size)).run();
  else if (m.folding) place(cy, [...hs, ...parentsOf(added)], added);
  paint(cy, m);
}

// parentsOf are the drawn objects the nodes added hang from, the most
// specific first (place lays each one's new successors out beside it).
function parentsOf(added) {
  const ps = added.nodes().incomers().nodes().difference(added);
  return ps.sort((a, b) => level(a.data()) - level(b.data())).map((n) => n.id());
}

// inside says which marks a holder's folded leaves have: how many of each
// note (the three most common).
function inside(notes) {
  const by = new Map();
  for (const n of notes) by.set(n, (by.get(n) || 0) + 1);
  const top = [...by].sort((a, b) => b[1] - a[1]);
  const words = top.slice(0, 3).map(([n, c]) => c + " " + (n || "marked"));
  if (top.length > 3) words.push("…");
  return "▶ inside: " + words.join(" · ");
}

// paint draws m's marks; a graph never marked is left alone (a click
// that opens a holder restyles nothing else).
function paint(cy, m) {
  if (m.marks.length === 0 && !m.painted) return;
  m.painted = m.marks.length > 0;
  cy.batch(() => {
    cy.elements().removeClass("marked faded");
    cy.nodes().forEach((n) => {
      if (n.data("label") !== n.data("base")) n.data(labelled(n.data("base")));
    });
    if (m.marks.length === 0) return;
    cy.elements().addClass("faded");
    const held = new Map();
    for (const x of m.marks) {
      const n = cy.getElementById(x.id);
      if (n.empty()) {
        const h = holderOf(cy, m, x.id);
        if (h) held.set(h, [...(held.get(h) || []), x.note || ""]);
        continue;
      }
      n.removeClass("faded").addClass("marked");
      if (x.note) n.data(labelled(n.data("base") + "\n▶ " + x.note));
    }
    for (const [id, notes] of held) {
      const n = cy.getElementById(id);
      n.removeClass("faded").addClass("marked");
      n.data(labelled(n.data("label") + "\n" + inside(notes)));
    }
  });
}

// holderOf is the drawn object that the folded leaf id is in.
function holderOf(cy, m, id) {
  for (let x = id, i = 0; x && i < 8; i++) {
    const os = m.owners.get(x);
    if (!os) return "";
    const drawn = os.find((o) => cy.getElementById(o).nonempty());
    if (drawn) return drawn;
    x = os[0];
  }
  return "";
}

// update brings the drawn graph to graph (the Live view, a new focus):
// colors and labels change in place; nodes and edges that came or went are
// added or removed, and only then is the graph laid out again; what the
// user opened stays open. It returns whether anything changed.
export function update(cy, graph) {
  const prev = model(cy);
  const m = buildModel(withAfter(graph, prev.after), prev);
  Object.assign(m, { base: graph, after: prev.after });
  cy.scratch(key, m);
  const { added, gone, changed } = sync(cy, m);
  const moved = added.nonempty() || gone > 0;
  if (moved) cy.layout(layoutFor(m.nodes.size)).run();
  return changed || moved;
}
