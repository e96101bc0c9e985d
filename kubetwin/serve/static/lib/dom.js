// The few DOM helpers every view uses: h() builds an element, s() an SVG element, fmt* format
// amounts the way kubectl prints them. Plain ES module, no dependencies.

const SVG_NS = "http://www.w3.org/2000/svg";

function append(el, child) {
  if (child === null || child === undefined || child === false) return;
  if (Array.isArray(child)) { child.forEach((c) => append(el, c)); return; }
  el.append(child instanceof Node ? child : document.createTextNode(String(child)));
}

function build(el, attrs, children) {
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  children.forEach((c) => append(el, c));
  return el;
}

/** An HTML element: h("a", {href: "#/x", class: "y"}, "text", child, [more]). */
export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

/** An SVG element. */
export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

/** A link to a route of the UI. */
export function link(route, text, attrs = {}) {
  return h("a", { href: "#" + route, ...attrs }, text);
}

export const nodeRoute = (name) => `/nodes/${encodeURIComponent(name)}`;
export function podRoute(key) {
  const [ns, ...rest] = key.split("/");
  return `/pods/${encodeURIComponent(ns)}/${encodeURIComponent(rest.join("/"))}`;
}

const BINARY = [["Ei", 2 ** 60], ["Pi", 2 ** 50], ["Ti", 2 ** 40], ["Gi", 2 ** 30], ["Mi", 2 ** 20], ["Ki", 2 ** 10]];

/** Bytes as kubectl's binary suffixes (at most one decimal). */
export function fmtBytes(n) {
  if (n === null || n === undefined) return "";
  for (const [suffix, size] of BINARY) {
    if (Math.abs(n) >= size) {
      const v = n / size;
      return (Number.isInteger(v) ? String(v) : v.toFixed(1)) + suffix;
    }
  }
  return String(n);
}

/** An amount in the scheduler's units (cpu: millicores; memory, storage, hugepages: bytes). */
export function fmtAmount(resource, n) {
  if (n === null || n === undefined) return "";
  if (resource === "cpu") return n % 1000 === 0 ? String(n / 1000) : `${n}m`;
  if (resource === "memory" || resource === "ephemeral-storage" || resource.startsWith("hugepages-")) return fmtBytes(n);
  return String(n);
}

/** A Linux CPU list ("0-3,8") as an array of ids. */
export function parseCpuList(text) {
  const out = [];
  if (!text) return out;
  for (const part of String(text).split(",")) {
    const [a, b] = part.split("-").map((x) => parseInt(x, 10));
    if (Number.isNaN(a)) continue;
    for (let i = a; i <= (Number.isNaN(b) || b === undefined ? a : b); i++) out.push(i);
  }
  return out;
}

/** A stable colour for an owner (a pod or container name), from its text. */
export function colourOf(text) {
  let hash = 0;
  for (const ch of String(text)) hash = (hash * 31 + ch.codePointAt(0)) >>> 0;
  return `hsl(${hash % 360}, 60%, 72%)`;
}

/** A small labelled figure for the headers of views. */
export function stat(label, value, attrs = {}) {
  return h("div", { class: "stat", ...attrs }, h("div", { class: "stat-value" }, value), h("div", { class: "stat-label" }, label));
}

/** A definition list from [label, value] pairs (values may be nodes). */
export function facts(pairs) {
  return h("dl", { class: "facts" }, pairs.filter((p) => p[1] !== undefined && p[1] !== null && p[1] !== "")
    .map(([k, v]) => [h("dt", {}, k), h("dd", {}, v)]));
}

export function badge(text, kind = "") {
  return h("span", { class: `badge ${kind}` }, text);
}

export function section(title, ...children) {
  return h("section", { class: "panel" }, h("h2", {}, title), ...children);
}
