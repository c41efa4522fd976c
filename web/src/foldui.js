// The fold controls besides the graph's clicks (a canvas has no keyboard
// focus): in the side panel, a button for the holder whose stack it shows
// ("▸ Draw the 1 rule, 3 backends it holds" or "▾ Fold back 1 rule, 3
// backends", aria-expanded as a disclosure button says it), and in the
// header "Fold all back" while any holder is open.
import { foldAll, foldState, toggleFold } from "./graph.js";

function render(b, st) {
  b.hidden = !st.folded && !st.open;
  b.setAttribute("aria-expanded", String(st.open > 0));
  b.textContent = st.open ? "▾ Fold back " + st.what : "▸ Draw the " + st.what + " it holds";
}

// foldButton is the panel's button for the holder id, or null when id
// holds nothing folded and opened nothing.
export function foldButton(cy, id) {
  const st = foldState(cy, id);
  if (!st.folded && !st.open) return null;
  const b = document.createElement("button");
  b.type = "button";
  b.id = "fold-toggle";
  b.dataset.id = id;
  render(b, st);
  b.addEventListener("click", () => toggleFold(cy, id));
  return b;
}

// setupFold keeps the panel's button and the header's "Fold all back"
// (all, a button) in step with the graph's folds.
export function setupFold(cy, all) {
  all.addEventListener("click", () => foldAll(cy));
  cy.on("ep:fold", () => {
    const b = document.getElementById("fold-toggle");
    if (b) render(b, foldState(cy, b.dataset.id));
    all.hidden = cy.nodes("[open > 0]").empty();
  });
}
