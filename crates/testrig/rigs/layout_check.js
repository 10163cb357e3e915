// What a person would see wrong with the page as laid out in this window,
// for watch_page.py: "loading" until the page and its images have loaded,
// then "layout:" and a JSON array of problems (empty when none):
//   - the page wider than the window (a horizontal scroll bar);
//   - an element past the window's right edge, unless a box that scrolls
//     or clips holds it (a wide table scrolls inside itself);
//   - two block siblings that overlap (one drawn over the other);
//   - a chart's text outside its chart (a label cut at the edge);
//   - charts of one page drawn at different widths (a run's report and its
//     seconds side by side at two scales read as two kinds of data).
// Inline elements are left out of the overlap check: a wrapped inline
// element's box spans lines and would seem to overlap its neighbours.
(() => {
  if (document.readyState !== "complete") return "loading";
  if (![...document.images].every((i) => i.complete)) return "loading";
  const out = [];
  const width = window.innerWidth;
  const name = (e) =>
    e.tagName.toLowerCase() +
    (e.id ? "#" + e.id : "") +
    (typeof e.className === "string" && e.className ? "." + e.className.split(" ")[0] : "");
  const page = document.documentElement.scrollWidth;
  if (page > width + 1) out.push(`page ${page} px wide in a ${width} px window`);
  const held = (e) => {
    for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === "auto" || o === "scroll" || o === "hidden") return true;
    }
    return false;
  };
  const shown = (e) => {
    const r = e.getBoundingClientRect();
    const s = getComputedStyle(e);
    return r.width > 0 && r.height > 0 && s.visibility !== "hidden";
  };
  for (const e of document.body.querySelectorAll("*")) {
    if (e.closest("svg") && e.tagName.toLowerCase() !== "svg") continue;
    if (!shown(e)) continue;
    const r = e.getBoundingClientRect();
    if (r.right > width + 1 && !held(e)) {
      out.push(`${name(e)} ends at ${Math.round(r.right)} px, past the ${width} px window`);
    }
  }
  const block = (e) => {
    const s = getComputedStyle(e);
    return (
      shown(e) &&
      !s.display.startsWith("inline") &&
      s.display !== "contents" &&
      s.position !== "absolute" &&
      s.position !== "fixed"
    );
  };
  for (const parent of [document.body, ...document.body.querySelectorAll("*")]) {
    if (parent.closest("svg")) continue;
    const kids = [...parent.children].filter(block);
    for (let i = 0; i < kids.length; i++) {
      const a = kids[i].getBoundingClientRect();
      for (let j = i + 1; j < kids.length; j++) {
        const b = kids[j].getBoundingClientRect();
        const x = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const y = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (x > 1 && y > 1) {
          out.push(`${name(kids[i])} and ${name(kids[j])} overlap by ${Math.round(x)}x${Math.round(y)} px`);
        }
      }
    }
  }
  for (const svg of document.querySelectorAll("svg")) {
    if (!shown(svg)) continue;
    const s = svg.getBoundingClientRect();
    for (const t of svg.querySelectorAll("text")) {
      const r = t.getBoundingClientRect();
      if (r.width === 0) continue;
      if (r.left < s.left - 1 || r.right > s.right + 1 || r.top < s.top - 1 || r.bottom > s.bottom + 1) {
        out.push(`${name(svg)}: text "${t.textContent.slice(0, 40)}" is cut at the chart's edge`);
      }
    }
  }
  const widths = [...document.querySelectorAll(".charts > figure, img.live")]
    .filter(shown)
    .map((c) => Math.round(c.getBoundingClientRect().width));
  if (widths.length && Math.max(...widths) - Math.min(...widths) > 2) {
    out.push(`charts drawn ${Math.min(...widths)} to ${Math.max(...widths)} px wide`);
  }
  return "layout:" + JSON.stringify(out.slice(0, 40));
})()
