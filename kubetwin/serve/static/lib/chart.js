// A line chart in inline SVG (no library): series of [x, y] points over a shared x axis, with
// axes, a few ticks and a legend. Enough for a simulation's counts over simulated time.

import { h, s } from "./dom.js";

const COLOURS = ["#2563eb", "#dc2626", "#16a34a", "#9333ea", "#ea580c", "#0891b2", "#4b5563"];

/** A 1, 2 or 5 × 10^k step near (max - min) / n (whole numbers only when `whole`), and its ticks. */
function ticks(min, max, n = 4, whole = false) {
  if (max <= min) return [min];
  const raw = (max - min) / n;
  const mag = 10 ** Math.floor(Math.log10(raw));
  let step = [1, 2, 5, 10].map((m) => m * mag).find((x) => x >= raw);
  if (whole) step = Math.max(1, Math.round(step));
  const out = [];
  for (let v = Math.ceil(min / step) * step; v <= max + 1e-9; v += step) out.push(+v.toFixed(6));
  return out;
}

const short = (v) => (Math.abs(v) >= 1000 ? `${(v / 1000).toFixed(1)}k` : Number.isInteger(v) ? String(v) : v.toFixed(1));

/** series: [{name, points: [[x, y], ...]}]; xLabel formats an x value. */
export function lineChart({ title, series, width = 560, height = 220, xLabel = short, yLabel = short }) {
  const pad = { l: 44, r: 12, t: 12, b: 28 };
  const xs = series.flatMap((x) => x.points.map((p) => p[0]));
  const ys = series.flatMap((x) => x.points.map((p) => p[1]));
  const x0 = Math.min(...xs, 0), x1 = Math.max(...xs, 1);
  const y1 = Math.max(...ys, 1);
  const whole = ys.every(Number.isInteger);
  const X = (v) => pad.l + ((v - x0) / (x1 - x0 || 1)) * (width - pad.l - pad.r);
  const Y = (v) => height - pad.b - (v / y1) * (height - pad.t - pad.b);
  const svg = s("svg", { viewBox: `0 0 ${width} ${height}`, width, height, role: "img", "aria-label": title, class: "chart" },
    ticks(0, y1, 4, whole).map((v) => [s("line", { x1: pad.l, x2: width - pad.r, y1: Y(v), y2: Y(v), class: "grid" }),
      s("text", { x: pad.l - 6, y: Y(v) + 4, "text-anchor": "end" }, yLabel(v))]),
    ticks(x0, x1).map((v) => s("text", { x: X(v), y: height - 8, "text-anchor": "middle" }, xLabel(v))),
    s("line", { x1: pad.l, x2: pad.l, y1: pad.t, y2: height - pad.b, class: "axis" }),
    s("line", { x1: pad.l, x2: width - pad.r, y1: height - pad.b, y2: height - pad.b, class: "axis" }),
    series.map((x, i) => s("polyline", {
      points: x.points.map((p) => `${X(p[0]).toFixed(1)},${Y(p[1]).toFixed(1)}`).join(" "),
      fill: "none", stroke: x.colour || COLOURS[i % COLOURS.length], "stroke-width": 2, "data-series": x.name,
    })));
  const legend = h("div", { class: "legend" }, series.map((x, i) =>
    h("span", {}, h("i", { style: `background:${x.colour || COLOURS[i % COLOURS.length]}` }), x.name)));
  return h("figure", { class: "chart-box" }, title ? h("figcaption", {}, title) : null, svg, legend);
}
