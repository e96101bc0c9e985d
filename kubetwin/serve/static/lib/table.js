// The one table helper of every view: a search box over every cell, a filter per column marked
// `filter` (a select of its values), a click on a header sorts (again: reverses), a footer
// computed over the rows shown (totals), and "N of M rows".
//
// column: {key, label, value(row) -> string|number (searched and sorted), render(row) -> node|string,
//          numeric, filter, title, cellClass(row)}
// The element returned has setRows(rows): new rows, the user's search, filters and sort kept.

import { h } from "./dom.js";

function compare(a, b) {
  const na = a === null || a === undefined || a === "", nb = b === null || b === undefined || b === "";
  if (na || nb) return na === nb ? 0 : na ? 1 : -1;   // empty cells last
  if (typeof a === "number" && typeof b === "number") return a - b;
  return String(a).localeCompare(String(b), undefined, { numeric: true });
}

export function dataTable({ id, rows, columns, sort, rowClass, footer, empty = "nothing to show", caption }) {
  const valueOf = (c, r) => (c.value ? c.value(r) : r[c.key]);
  const state = { query: "", filters: {}, sort: sort ? { ...sort } : null };
  const tbody = h("tbody");
  const tfoot = h("tfoot");
  const count = h("span", { class: "count", "data-role": "count" });
  const heads = columns.map((c) => {
    const th = h("th", { scope: "col", title: c.title || "Sort by " + c.label, class: c.numeric ? "num" : "",
      "data-key": c.key, tabindex: 0 }, c.label);
    const click = () => {
      state.sort = state.sort && state.sort.key === c.key ? { key: c.key, desc: !state.sort.desc }
        : { key: c.key, desc: !!c.numeric };
      update();
    };
    th.addEventListener("click", click);
    th.addEventListener("keydown", (e) => { if (e.key === "Enter") click(); });
    return th;
  });

  const search = h("input", { type: "search", placeholder: "Search…", "aria-label": "Search the table",
    "data-role": "search", class: "search" });
  search.addEventListener("input", () => { state.query = search.value.trim().toLowerCase(); update(); });
  const options = (c) => {
    const values = [...new Set(rows.map((r) => String(valueOf(c, r) ?? "")))].sort(compare);
    const chosen = state.filters[c.key];
    if (chosen && !values.includes(chosen)) values.push(chosen);   // kept while rows come and go
    return [h("option", { value: "" }, `${c.label}: all`),
      values.map((v) => h("option", { value: v, selected: v === chosen }, v || "(none)"))];
  };
  const selects = columns.filter((c) => c.filter).map((c) => {
    const sel = h("select", { "aria-label": "Filter by " + c.label, "data-filter": c.key }, options(c));
    sel.addEventListener("change", () => { state.filters[c.key] = sel.value; update(); });
    sel.column = c;
    return sel;
  });

  function visible() {
    let out = rows.filter((r) => columns.every((c) => !state.filters[c.key] ||
      String(valueOf(c, r) ?? "") === state.filters[c.key]));
    if (state.query) {
      const words = state.query.split(/\s+/);
      out = out.filter((r) => {
        const text = columns.map((c) => String(valueOf(c, r) ?? "")).join(" ").toLowerCase();
        return words.every((w) => text.includes(w));
      });
    }
    if (state.sort) {
      const c = columns.find((x) => x.key === state.sort.key);
      if (c) {
        out = out.map((r, i) => [r, i]).sort((x, y) => compare(valueOf(c, x[0]), valueOf(c, y[0])) * (state.sort.desc ? -1 : 1) || x[1] - y[1])
          .map((x) => x[0]);
      }
    }
    return out;
  }

  function update() {
    const shown = visible();
    heads.forEach((th, i) => {
      const c = columns[i];
      th.setAttribute("aria-sort", state.sort && state.sort.key === c.key ? (state.sort.desc ? "descending" : "ascending") : "none");
    });
    tbody.replaceChildren(...(shown.length ? shown.map((r) => h("tr", { class: rowClass ? rowClass(r) : "" },
      columns.map((c) => h("td", { class: [c.numeric ? "num" : "", c.cellClass ? c.cellClass(r) : ""].join(" ").trim() },
        c.render ? c.render(r) : valueOf(c, r))))) : [h("tr", {}, h("td", { colspan: columns.length, class: "empty" }, empty))]));
    if (footer) tfoot.replaceChildren(h("tr", {}, footer(shown).map((cell, i) =>
      h("td", { class: columns[i] && columns[i].numeric ? "num" : "" }, cell))));
    count.textContent = shown.length === rows.length ? `${rows.length} rows` : `${shown.length} of ${rows.length} rows`;
  }

  const table = h("table", { class: "data", id }, caption ? h("caption", {}, caption) : null,
    h("thead", {}, h("tr", {}, heads)), tbody, tfoot);
  update();
  const wrap = h("div", { class: "table-wrap", "data-table": id || "" },
    h("div", { class: "toolbar" }, search, selects, count), h("div", { class: "scroll" }, table));
  /** New rows (a refresh), the search, filters and sort kept as the user left them. */
  wrap.setRows = (next) => {
    rows = next;
    selects.forEach((sel) => sel.replaceChildren(...options(sel.column).flat()));
    update();
  };
  return wrap;
}
