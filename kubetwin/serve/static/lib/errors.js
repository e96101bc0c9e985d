// The API's error answers (and any other failure) as a message in the page, with the fix the
// API gave; a 401 asks for the bearer token (kept for this browser tab only).

import { ApiError, setToken } from "./api.js";
import { h } from "./dom.js";

export function errorBox(err) {
  const box = h("div", { class: "error", role: "alert" });
  if (err instanceof ApiError) {
    box.append(h("strong", {}, err.status ? `The API answered ${err.status}: ` : "No answer: "), err.message);
    if (err.body.fix) box.append(h("div", { class: "fix" }, "fix: ", err.body.fix));
    if (err.status === 401) {
      const input = h("input", { type: "password", placeholder: "bearer token", "aria-label": "bearer token" });
      box.append(h("form", { class: "token", onsubmit: (e) => { e.preventDefault(); setToken(input.value); location.reload(); } },
        input, h("button", { type: "submit" }, "Use token")));
    }
  } else {
    box.append(h("strong", {}, "The page failed: "), String(err && err.message ? err.message : err));
  }
  return box;
}
