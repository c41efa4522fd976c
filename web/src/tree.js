// Draws the plugin's trees (pkg/cli/render, sent as JSON by pkg/cli/ui) as
// nested lists: the same lines as the terminal, each span with the class of
// its role. Text goes in as text, never as HTML (a policy's message is
// anyone's input).

export function drawTrees(panel, trees, heading) {
  panel.replaceChildren();
  if (heading) {
    const h = document.createElement("h2");
    h.textContent = heading;
    panel.append(h);
  }
  if (!trees || trees.length === 0) {
    const p = document.createElement("p");
    p.className = "muted";
    p.textContent = "Nothing to show.";
    panel.append(p);
    return;
  }
  for (const t of trees) {
    const ul = document.createElement("ul");
    ul.className = "tree";
    ul.append(item(t));
    panel.append(ul);
  }
}

function item(node) {
  const li = document.createElement("li");
  const line = document.createElement("div");
  line.className = "line";
  for (const s of node.line || []) {
    const span = document.createElement("span");
    if (s.style) span.className = "s-" + s.style;
    span.textContent = s.text;
    line.append(span);
  }
  li.append(line);
  if (node.children && node.children.length) {
    const ul = document.createElement("ul");
    for (const c of node.children) ul.append(item(c));
    li.append(ul);
  }
  return li;
}

export function drawError(panel, err) {
  panel.replaceChildren();
  const p = document.createElement("p");
  p.className = "error";
  p.setAttribute("role", "alert");
  p.textContent = String(err.message || err);
  panel.append(p);
}
