// attngrade review: keyboard grading on the part page. Plain script, no inline code (strict CSP).
// Student text is never put into the page as HTML: only textContent and attribute values are set.
"use strict";

(function () {
  const token = document.querySelector('meta[name="attngrade-token"]').content;
  const graderInput = document.getElementById("grader");
  const status = document.getElementById("status");
  if (graderInput) {
    graderInput.value = localStorage.getItem("attngrade-grader") || "";
    graderInput.addEventListener("change", () => localStorage.setItem("attngrade-grader", graderInput.value.trim()));
  }

  function say(text, bad) {
    status.textContent = text;
    status.className = bad ? "bad" : "";
  }

  async function post(url, body) {
    const response = await fetch(url, {
      method: "POST",
      headers: {"Content-Type": "application/json", "X-Attngrade-Token": token,
                "X-Attngrade-Grader": (graderInput && graderInput.value.trim()) || ""},
      body: JSON.stringify(body),
    });
    let data = {};
    try { data = await response.json(); } catch (e) { data = {error: "the server did not answer with JSON"}; }
    return {ok: response.ok, status: response.status, data: data};
  }

  const root = document.getElementById("part");
  if (!root) return;
  const base = "/api/parts/" + encodeURIComponent(root.dataset.homework) + "/" + encodeURIComponent(root.dataset.part);
  const groups = Array.from(document.querySelectorAll("section.group"));
  let current = 0;

  function focusGroup(index) {
    if (!groups.length) return;
    current = Math.max(0, Math.min(groups.length - 1, index));
    groups.forEach((g, i) => g.classList.toggle("current", i === current));
    const g = groups[current];
    g.focus({preventScroll: true});
    g.scrollIntoView({block: "nearest"});
    history.replaceState(null, "", "#" + g.id);
  }

  function nextUngraded(from) {
    for (let step = 1; step <= groups.length; step++) {
      const i = (from + step) % groups.length;
      if (!groups[i].classList.contains("graded")) return i;
    }
    return -1;
  }

  function units(g) { return g.dataset.units.split(" ").filter(Boolean); }

  function versions(g) {
    const out = {};
    g.dataset.versions.trim().split(" ").filter(Boolean).forEach((pair) => {
      const [unit, version] = pair.split(":");
      out[unit] = Number(version);
    });
    return out;
  }

  function show(g, group, progress) {
    if (!group) return;
    g.classList.toggle("graded", group.graded);
    g.querySelector('[data-role="state"]').textContent = group.graded ? "graded" : "not graded";
    g.querySelector('[data-role="points"]').textContent = group.graded && group.points !== null ? String(group.points) : "–";
    g.querySelectorAll("button.item").forEach((b) => {
      b.setAttribute("aria-pressed", group.items.includes(Number(b.dataset.item)) ? "true" : "false");
    });
    g.dataset.versions = group.units.map((u) => u.id + ":" + u.version).join(" ");
    group.members.forEach((m) => {
      const row = Array.from(g.querySelectorAll("li[data-student]")).find((li) => li.dataset.student === m.student);
      if (row) row.querySelector('[data-role="score"]').textContent = m.score === null ? "pending" : String(m.score);
    });
    if (progress) {
      document.getElementById("graded-count").textContent = progress.graded;
      document.getElementById("to-grade-count").textContent = progress.to_grade;
      document.getElementById("pending-points").textContent = progress.pending_points;
      document.getElementById("groups-left").textContent = progress.groups_left;
    }
  }

  // One change at a time, in the order they were asked for: a key pressed while the last change is
  // still on its way waits for it, so what the page shows is always what was saved last.
  let queue = Promise.resolve(true);

  function grade(g, make) {
    queue = queue.then(async () => {
      const body = typeof make === "function" ? make() : make;
      body.units = units(g);
      const result = await post(base + "/grade", body);
      if (result.data.group) show(g, result.data.group, result.data.progress);
      if (!result.ok) {
        say((result.data.error || "not saved") + (result.status === 409 ? " (the group now shows what was saved)" : ""), true);
        return false;
      }
      say("saved");
      return true;
    }).catch((error) => { say(String(error), true); return false; });
    return queue;
  }

  function toggleItem(g, button) {
    const on = button.getAttribute("aria-pressed") === "true";
    return grade(g, {op: on ? "remove" : "add", item: Number(button.dataset.item)});
  }

  function confirmAndGo(g) {
    g.classList.add("graded");  // at once, so the next key goes to the next group; the answer confirms it
    grade(g, {op: "confirm"});
    const next = nextUngraded(groups.indexOf(g));
    if (next >= 0) focusGroup(next); else say("every group of this part is graded");
  }

  function applyHint(g) {
    const items = (g.dataset.hint || "").split(" ").filter(Boolean).map(Number);
    if (!items.length) { say("no suggestion for this group", true); return; }
    grade(g, {op: "set_items", items: items});
  }

  groups.forEach((g, index) => {
    g.addEventListener("click", () => { if (current !== index) focusGroup(index); });
    g.querySelectorAll("button.item").forEach((b) => b.addEventListener("click", () => toggleItem(g, b)));
    g.querySelector("button.confirm").addEventListener("click", () => confirmAndGo(g));
    g.querySelector("button.unconfirm").addEventListener("click", () => grade(g, {op: "unconfirm"}));
    g.querySelector("input.adjust").addEventListener("change", (e) => {
      grade(g, () => ({op: "adjust", value: Number(e.target.value || 0), expected: versions(g)}));
    });
    g.querySelector("input.group-comment").addEventListener("change", (e) => {
      grade(g, () => ({op: "comment", value: e.target.value, expected: versions(g)}));
    });
    g.querySelectorAll("li[data-student]").forEach((li) => {
      li.querySelector("button.split").addEventListener("click", async () => {
        const r = await post(base + "/split", {unit: li.dataset.unit, student: li.dataset.student});
        if (r.ok) location.reload(); else say(r.data.error, true);
      });
      const box = li.querySelector("input.student-comment");
      box.addEventListener("change", async () => {
        const r = await post(base + "/comment", {student: li.dataset.student, text: box.value,
                                                  expected: Number(box.dataset.version)});
        if (r.ok) { box.dataset.version = r.data.version; say("saved"); } else say(r.data.error, true);
      });
    });
    g.querySelectorAll("div.unit").forEach((div) => {
      div.querySelector("button.split-unit").addEventListener("click", async () => {
        const r = await post(base + "/split", {unit: div.dataset.unit});
        if (r.ok) location.reload(); else say(r.data.error, true);
      });
    });
  });

  async function merge() {
    const picked = groups.filter((g) => g.querySelector("input.merge-pick").checked).map((g) => g.id);
    if (picked.length < 2) { say("pick two groups or more (x) to merge", true); return; }
    const r = await post(base + "/merge", {groups: picked});
    if (r.ok) location.reload(); else say(r.data.error, true);
  }
  document.getElementById("merge").addEventListener("click", merge);

  const regroup = document.getElementById("regroup");
  if (regroup) {
    regroup.addEventListener("click", async () => {
      const r = await post(base + "/threshold", {value: Number(document.getElementById("threshold").value)});
      if (r.ok) location.reload(); else say(r.data.error, true);
    });
  }

  document.querySelectorAll("ol.rubric li").forEach((li) => {
    li.querySelector(".item-save").addEventListener("click", async () => {
      const r = await post(base + "/rubric", {id: Number(li.dataset.item), version: Number(li.dataset.version),
        points: Number(li.querySelector(".item-points").value), text: li.querySelector(".item-text").value});
      if (r.ok) location.reload(); else say(r.data.error, true);
    });
    li.querySelector(".item-delete").addEventListener("click", async () => {
      const r = await post(base + "/rubric", {id: Number(li.dataset.item), version: Number(li.dataset.version), deleted: true});
      if (r.ok) location.reload(); else say(r.data.error, true);
    });
  });
  document.getElementById("add-item").addEventListener("click", async () => {
    const r = await post(base + "/rubric", {points: Number(document.getElementById("new-points").value || 0),
                                            text: document.getElementById("new-text").value});
    if (r.ok) location.reload(); else say(r.data.error, true);
  });

  document.addEventListener("keydown", (e) => {
    const field = e.target.closest && e.target.closest("input, textarea, select");
    if (field) {
      if (e.key === "Escape") { field.blur(); focusGroup(current); }
      return;
    }
    if (e.ctrlKey || e.metaKey || e.altKey || !groups.length) return;
    const g = groups[current];
    const items = g.querySelectorAll("button.item");
    if (/^[1-9]$/.test(e.key)) {
      const button = items[Number(e.key) - 1];
      if (button) toggleItem(g, button);
    } else if (e.key === "Enter") {
      confirmAndGo(g);
    } else if (e.key === "j" || e.key === "ArrowDown") {
      focusGroup(current + 1);
    } else if (e.key === "k" || e.key === "ArrowUp") {
      focusGroup(current - 1);
    } else if (e.key === "n") {
      const next = nextUngraded(current);
      if (next >= 0) focusGroup(next);
    } else if (e.key === "a") {
      applyHint(g);
    } else if (e.key === "u") {
      grade(g, {op: "unconfirm"});
    } else if (e.key === "c") {
      g.querySelector("input.group-comment").focus();
    } else if (e.key === "x") {
      const box = g.querySelector("input.merge-pick");
      box.checked = !box.checked;
    } else if (e.key === "M") {
      merge();
    } else if (e.key === "/") {
      document.getElementById("search").focus();
    } else {
      return;
    }
    e.preventDefault();
  });

  const wanted = groups.findIndex((g) => "#" + g.id === location.hash);
  focusGroup(wanted >= 0 ? wanted : Math.max(0, groups.findIndex((g) => !g.classList.contains("graded"))));
})();
