// The kubetwin serve web UI: a hash router over one view module per page. Each view is an async
// function of the route's parameters returning an element; a failure (the API's error answer,
// a network error, a bug) is shown as a message in place of the view, never a blank page.

import { h } from "./lib/dom.js";
import { errorBox } from "./lib/errors.js";
import { overview } from "./views/overview.js";
import { nodeView } from "./views/node.js";
import { podView } from "./views/pod.js";
import { pendingView } from "./views/pending.js";
import { simulationsView, simulationView } from "./views/simulations.js";
import { whatIfView } from "./views/whatif.js";

const ROUTES = [
  [/^\/overview$/, "overview", () => overview()],
  [/^\/nodes\/([^/]+)$/, "overview", (m) => nodeView(decodeURIComponent(m[1]))],
  [/^\/pods\/([^/]+)\/([^/]+)$/, "overview", (m) => podView(decodeURIComponent(m[1]), decodeURIComponent(m[2]))],
  [/^\/pending$/, "pending", () => pendingView()],
  [/^\/what-if$/, "what-if", () => whatIfView()],
  [/^\/simulations$/, "simulations", () => simulationsView()],
  [/^\/simulations\/([^/]+)$/, "simulations", (m) => simulationView(decodeURIComponent(m[1]))],
];

let generation = 0;   // a slow view that finishes after the user moved on is dropped

export async function route() {
  const main = document.getElementById("view");
  const path = (location.hash || "#/overview").slice(1) || "/overview";
  const mine = ++generation;
  const found = ROUTES.map(([re, nav, view]) => [path.match(re), nav, view]).find((x) => x[0]);
  document.querySelectorAll("[data-nav]").forEach((a) => a.classList.toggle("active", !!found && a.dataset.nav === found[1]));
  if (!found) {
    main.replaceChildren(h("div", { class: "error", role: "alert" }, `No page ${path}. `, h("a", { href: "#/overview" }, "Go to the cluster overview")));
    main.dataset.state = "ready";
    return;
  }
  main.replaceChildren(h("p", { class: "loading" }, "Loading…"));
  main.dataset.state = "loading";
  let content;
  try {
    content = await found[2](found[0]);
  } catch (err) {
    content = errorBox(err);
  }
  if (mine !== generation) return;
  main.replaceChildren(content);
  main.dataset.state = "ready";
  document.title = `${path.split("/").filter(Boolean).map(decodeURIComponent).join(" / ")} — kubetwin serve`;
}

window.addEventListener("hashchange", route);
window.addEventListener("error", (e) => { document.getElementById("view").append(errorBox(e.error || e.message)); });
window.addEventListener("unhandledrejection", (e) => { document.getElementById("view").append(errorBox(e.reason)); });
if (!location.hash) history.replaceState(null, "", "#/overview");
route();
