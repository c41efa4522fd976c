// Where the page's data comes from: the data inlined into an --html file, or
// the local server's JSON endpoints, asked with the per-run token that the
// URL printed by `kubectl effectivepolicy ui` carries. Nothing else is sent.

const inlined = document.getElementById("ep-data");

// report is the data of an --html file, or null when served.
export const report = inlined ? JSON.parse(inlined.textContent) : null;

const token = new URLSearchParams(location.search).get("token") || "";

// get asks the server for path with the query params; it throws the
// server's message on an error status.
export async function get(path, params = {}) {
  return (await getTagged(path, params)).body;
}

// getGraph asks for the graph; tag names it (the server's
// X-EffectivePolicy-Graph header), so that the Live stream need not send
// the same graph again.
export async function getGraph(params = {}) {
  const { body, tag } = await getTagged("api/graph", params);
  return { graph: body, tag };
}

async function getTagged(path, params) {
  const q = new URLSearchParams(params).toString();
  const res = await fetch(path + (q ? "?" + q : ""), {
    headers: { "X-EffectivePolicy-Token": token },
    credentials: "omit",
    cache: "no-store",
  });
  const body = await res.json().catch(() => ({ error: res.statusText }));
  if (!res.ok) {
    throw new Error(body.error || res.statusText);
  }
  return { body, tag: res.headers.get("X-EffectivePolicy-Graph") || "" };
}
