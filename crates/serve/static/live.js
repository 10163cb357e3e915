// iomark serve's live page: each second, ask the server what is new for
// this run; redraw the charts when a second was stored, and go to the
// run's page when the run is finished. The only script the server has.
"use strict";
(function () {
  const status = document.getElementById("live-status");
  if (!status) return;
  const run = status.dataset.run;

  // A chart is swapped for its new drawing once that has loaded, so the
  // page never shows a half-loaded one.
  function redraw(img, seq) {
    const figure = img.id.replace("chart-", "");
    const next = new Image();
    next.className = img.className;
    next.alt = img.alt;
    next.onload = function () {
      const now = document.getElementById(img.id);
      if (now) {
        next.id = img.id;
        now.replaceWith(next);
      }
    };
    next.src = "/live/" + run + "/" + figure + ".svg?seq=" + seq;
  }

  async function look() {
    let now;
    try {
      const answer = await fetch("/api/live/" + run, { cache: "no-store" });
      if (!answer.ok) return;
      now = await answer.json();
    } catch (e) {
      // The server restarting is no error of the page: look again.
      return;
    }
    const seq = now.seq === null ? "none" : String(now.seq);
    // The figures a run has show with its first seconds (a Himeno run's
    // are MFLOPS, not bandwidth): a page drawn before them is drawn again.
    const shown = Array.from(document.querySelectorAll("img.live"), (i) => i.id.replace("chart-", ""));
    if (now.figures.join() !== shown.join()) {
      window.location.reload();
      return;
    }
    if (seq !== status.dataset.seq) {
      for (const img of document.querySelectorAll("img.live")) redraw(img, seq);
      status.dataset.seq = seq;
      status.dataset.points = String(now.points);
    }
    // The figures in large type: a figure the page lacks (the run's
    // first second, a flops test after a bandwidth one) redraws it all.
    const big = document.getElementById("live-figures");
    if (big) {
      const ids = Array.from(big.querySelectorAll(".value"), (v) => v.id);
      if (ids.join() !== now.big.map((f) => f.id).join()) {
        big.replaceChildren(...now.big.map(function (f) {
          const box = document.createElement("div");
          const value = document.createElement("span");
          value.className = "value";
          value.id = f.id;
          value.textContent = f.value;
          const unit = document.createElement("span");
          unit.className = "unit";
          unit.textContent = f.unit;
          box.append(value, " ", unit);
          return box;
        }));
      } else {
        for (const f of now.big) {
          document.getElementById(f.id).textContent = f.value;
          document.getElementById(f.id).nextElementSibling.textContent = f.unit;
        }
      }
    }
    status.textContent = now.text;
    // A PTS test's steady state after its last round: the page has the
    // line once a round ended (the convergence chart came with it).
    const round = document.getElementById("live-round");
    if (round && now.round) round.textContent = now.round;
    status.dataset.live = String(now.in_progress);
    // Finished, or failed: the run's own page. Going ("running"), or
    // killed and keeping its last second ("interrupted"): stay.
    if (now.status !== "running" && now.status !== "interrupted") window.location.assign("/runs/" + run);
  }
  setInterval(look, 1000);
})();
