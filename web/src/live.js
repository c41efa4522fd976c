// Live: the served page follows the server's stream (/api/live), which
// watches the EffectivePolicies with the user's credentials and sends the
// whole graph when it starts and after each change, as Server-Sent Events.
// The page reads the stream with fetch, which sends the per-run token in
// its header (EventSource cannot send a header, and the token never goes
// in a URL the server accepts). The page sends the tag of the graph it drew
// (drawn): a stream whose first graph is that one says "unchanged" rather
// than sending it, so the page does not read and lay out the same graph
// twice on loading. When the server's watches end for good, the stream
// ends and the page connects again, getting the graph as it is then;
// offline there is no stream and nothing to follow.
//
// A graph too large to draw at once comes focused on one Gateway, with the
// others to choose from (the server's focus.go): the choice redraws the
// graph and follows that Gateway.
import { getGraph } from "./data.js";
import { update } from "./graph.js";

const token = new URLSearchParams(location.search).get("token") || "";
const firstRetry = 1000;
const lastRetry = 30000;

// What the browser tests read: the state, how many graphs came (those the
// stream sent and those it said were already drawn: unchanged).
const state = { state: "connecting", graphs: 0, unchanged: 0, connects: 0 };
window.epLive = state;

// focus is the Gateway drawn when the graph is drawn one at a time.
let focus = "";
// restart connects the live stream again (for a new focus).
let restart = () => {};
// drawn is the tag of the graph drawn (the server's), "" when unknown.
let drawn = "";

// setDrawn says which graph the page drew (its tag from /api/graph).
export function setDrawn(tag) {
  drawn = tag || "";
}

// currentFocus is the id of the Gateway drawn, "" when the graph is whole.
export function currentFocus() {
  return focus;
}

// drawFocus offers the Gateways of a focused graph in a selector.
export function drawFocus(cy, graph, setStatus) {
  focus = graph.focus || "";
  if (!graph.gateways || graph.gateways.length === 0) return;
  const sel = document.createElement("select");
  sel.id = "focus";
  for (const c of graph.gateways) sel.append(new Option(c.label, c.id, false, c.id === focus));
  const label = document.createElement("label");
  label.className = "focus";
  label.append("Gateway ", sel);
  document.getElementById("status").before(label);
  sel.addEventListener("change", async () => {
    setStatus("Loading…");
    try {
      const { graph: g, tag } = await getGraph({ gateway: sel.value });
      drawn = tag;
      focus = g.focus || "";
      update(cy, g);
      setStatus(g.summary);
      restart();
    } catch (err) {
      setStatus(err.message || String(err));
    }
  });
}

// events yields the Server-Sent Events of a response body: {event, data}.
async function* events(body) {
  const reader = body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buf += value;
    let end;
    while ((end = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, end);
      buf = buf.slice(end + 2);
      const ev = { event: "message", data: "", id: "" };
      for (const line of block.split("\n")) {
        if (line.startsWith("event: ")) ev.event = line.slice(7);
        else if (line.startsWith("data: ")) ev.data += line.slice(6);
        else if (line.startsWith("id: ")) ev.id = line.slice(4);
      }
      if (ev.data) yield ev;
    }
  }
}

// followLive keeps the graph drawn in cy up to date; setStatus shows
// what the page last heard.
export function followLive(cy, setStatus) {
  let retry = firstRetry;
  let timer = null;
  let ctrl = null;
  const connect = async () => {
    clearTimeout(timer);
    const mine = new AbortController();
    ctrl = mine;
    state.state = "connecting";
    state.connects++;
    try {
      const params = {};
      if (focus) params.gateway = focus;
      if (drawn) params.drawn = drawn;
      const q = Object.keys(params).length ? "?" + new URLSearchParams(params) : "";
      const res = await fetch("api/live" + q, { headers: { "X-EffectivePolicy-Token": token }, credentials: "omit", cache: "no-store", signal: mine.signal });
      if (res.status === 501) {
        state.state = "off";
        return;
      }
      if (!res.ok) {
        const body = await res.json().catch(() => ({ error: res.statusText }));
        throw new Error(body.error || res.statusText);
      }
      state.state = "live";
      retry = firstRetry;
      for await (const ev of events(res.body)) {
        if (ev.event === "graph") {
          const g = JSON.parse(ev.data);
          state.graphs++;
          drawn = ev.id;
          if (update(cy, g)) setStatus(g.summary + " · updated " + new Date().toLocaleTimeString());
        } else if (ev.event === "unchanged") {
          state.graphs++;
          state.unchanged++;
        } else if (ev.event === "end") {
          setStatus("Live: the watch ended (" + JSON.parse(ev.data).reason + "); connecting again");
        }
      }
    } catch (err) {
      if (mine.signal.aborted) return;
      setStatus("Live updates failed: " + (err.message || err) + "; trying again");
      retry = Math.min(retry * 2, lastRetry);
    }
    if (mine.signal.aborted) return;
    state.state = "ended";
    timer = setTimeout(connect, retry);
  };
  restart = () => {
    if (ctrl) ctrl.abort();
    connect();
  };
  connect();
}
