// The Change view: manifests to apply or delete, reviewed as `kubectl
// effectivepolicy diff` reviews them (an EffectivePolicyReview: nothing is
// applied or stored). The targets whose effective policies change are
// marked on the graph; the panel has diff's trees, each field before -> after.
import { drawTrees, drawError } from "./tree.js";
import { known, mark } from "./graph.js";
import { currentFocus } from "./live.js";

const token = new URLSearchParams(location.search).get("token") || "";

// review posts the change to the server (the one endpoint that takes a
// POST: manifests do not fit in a URL) and returns its answer; it throws
// the server's message on an error status.
async function review(change) {
  const res = await fetch("api/change", {
    method: "POST",
    headers: { "X-EffectivePolicy-Token": token, "Content-Type": "application/json" },
    body: JSON.stringify(change),
    credentials: "omit",
    cache: "no-store",
  });
  const body = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) throw new Error(body.error || res.statusText);
  return body;
}

function textarea(name, rows, placeholder) {
  const label = document.createElement("label");
  label.append(name === "apply" ? "Apply" : "Delete");
  const t = document.createElement("textarea");
  t.name = name;
  t.rows = rows;
  t.cols = 44;
  t.spellcheck = false;
  t.placeholder = placeholder;
  t.style.fontFamily = "ui-monospace, monospace";
  label.append(t);
  return label;
}

function note(text, className) {
  const p = document.createElement("p");
  p.className = className;
  p.textContent = text;
  return p;
}

// summary says what the review found above the trees: the changes, those
// the user may not see (counted, never named), what was skipped, the
// targets reached for the first time (drawn in, as they would be) and the
// changed targets the graph does not draw (outside the Gateway drawn).
function summary(r, cy) {
  const out = [];
  let line = r.changes === 1 ? "1 EffectivePolicy would change" : r.changes + " EffectivePolicies would change";
  if (r.hidden > 0) line += ", and " + r.hidden + " more where you may not read effectivepolicies";
  out.push(note(line + ".", "muted"));
  for (const w of r.warnings || []) out.push(note("Warning: " + w, "muted"));
  const fresh = ((r.after && r.after.nodes) || []).filter((n) => n.target).length;
  if (fresh > 0) {
    out.push(note((fresh === 1 ? "1 target" : fresh + " targets") + " reached for the first time, drawn on the graph as after the change (✚ new: not there before).", "muted"));
  }
  const missing = cy ? r.marks.filter((m) => !known(cy, m.id)) : [];
  if (missing.length > 0) {
    out.push(note("Not on the graph drawn: " + missing.map((m) => m.id.split("/").slice(1).join("/") + " (" + m.note + ")").join(", "), "muted"));
  }
  return out;
}

// setupChange adds the view's tab and form; cy() is the drawn graph (null
// before it is drawn), panel where the answer goes.
export function setupChange({ tabs, left, before, panel, cy }) {
  const tab = document.createElement("button");
  tab.dataset.view = "change";
  tab.setAttribute("aria-pressed", "false");
  tab.textContent = "Change";
  tabs.append(tab);

  const form = document.createElement("form");
  form.id = "change-form";
  form.className = "view";
  form.dataset.view = "change";
  form.hidden = true;
  const submit = document.createElement("button");
  submit.type = "submit";
  submit.textContent = "Review";
  form.append(
    textarea("apply", 5, "manifests to apply (YAML), as kubectl apply -f"),
    textarea("delete", 5, "manifests to delete, or KIND/NAME a line (timeoutpolicy/baker-timeouts), in the page's namespace or -n NS"),
    submit,
  );
  left.insertBefore(form, before);

  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    submit.disabled = true;
    try {
      const r = await review({ apply: data.get("apply") || "", delete: data.get("delete") || "", gateway: currentFocus() || undefined });
      drawTrees(panel, r.trees, "What the change would do");
      // Marked first: what the change draws in is then on the graph.
      if (cy()) mark(cy(), r.marks, r.after);
      panel.querySelector("h2").after(...summary(r, cy()));
      if (cy()) {
        // The form took room from the graph: draw it again in what is left.
        cy().resize();
        cy().fit(undefined, 20);
      }
    } catch (err) {
      drawError(panel, err);
      if (cy()) mark(cy(), []);
    } finally {
      submit.disabled = false;
    }
  });
}
