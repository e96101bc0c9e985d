// Reading kubetwin serve's JSON API: relative to where the UI is served (/ui/ → /api/v1/), with
// the bearer token the user gave (kept for the browser tab only) and the API's error answers
// ({"error", "path", "fix"}) turned into ApiError for the views to show.

const BASE = new URL("../../", import.meta.url);
const TOKEN_KEY = "kubetwin-serve-token";

export class ApiError extends Error {
  constructor(status, body, url) {
    const msg = (body && (body.message || body.error)) || `HTTP ${status}`;
    super(msg);
    this.status = status;
    this.body = body || {};
    this.url = url;
  }
}

export function token() {
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(value) {
  if (value) sessionStorage.setItem(TOKEN_KEY, value);
  else sessionStorage.removeItem(TOKEN_KEY);
}

async function request(method, path, body) {
  const url = new URL(path.replace(/^\//, ""), BASE).href;
  const headers = { accept: "application/json" };
  if (token()) headers.authorization = `Bearer ${token()}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  let r;
  try {
    r = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (e) {
    throw new ApiError(0, { error: `kubetwin serve did not answer (${e.message}); is it still running?` }, url);
  }
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch { data = { error: text.slice(0, 500) }; }
  if (!r.ok) throw new ApiError(r.status, data, url);
  return data;
}

export const get = (path) => request("GET", path);
export const post = (path, body) => request("POST", path, body);
export const del = (path) => request("DELETE", path);
