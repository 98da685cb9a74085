// attngrade review: the pages of the staff grading app, filled from its JSON API. Plain script, no
// inline code (strict CSP). Student text is never put into a page as HTML: only textContent and
// attribute values are set (the one exception: a part's statement, MathML the server sanitized).
//
// The grader's secret comes in the URL's fragment (#k=...), which browsers never send to a server;
// it is kept in this tab's sessionStorage, taken out of the address bar and history at once, and sent
// in the X-Attngrade-Token header of each API request. No cookie holds it: a cookie would go to
// every server on this host, whatever its port.
"use strict";

(function () {
  const STORE_KEY = "attngrade-secret";
  const POLL_MS = 700; // pages show others' changes within a second
  const SLOW_POLL_MS = 2000;

  function takeSecret() {
    const found = /(?:^#|&)k=([A-Za-z0-9_-]{20,200})/.exec(location.hash);
    if (found) {
      sessionStorage.setItem(STORE_KEY, found[1]);
      history.replaceState(null, "", location.pathname + location.search);
    }
    return sessionStorage.getItem(STORE_KEY) || "";
  }
  const secret = takeSecret();
  const main = document.getElementById("main");
  const statusLine = document.getElementById("status");
  let me = {grader: "", anonymous: false};

  // ------------------------------------------------------------------ small helpers

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (name === "class") node.className = value;
      else if (name === "text") node.textContent = String(value);
      else if (name.startsWith("data-")) node.setAttribute(name, String(value));
      else if (name in node && typeof node[name] !== "function") node[name] = value;
      else node.setAttribute(name, String(value));
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function say(text, bad) {
    statusLine.textContent = text;
    statusLine.className = bad ? "bad" : "";
  }

  function points(x) {
    if (x === null || x === undefined) return "–";
    return String(Math.round(Number(x) * 100) / 100);
  }

  async function api(path, body) {
    const init = {headers: {"X-Attngrade-Token": secret}, cache: "no-store", credentials: "omit"};
    if (body !== undefined) {
      init.method = "POST";
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    let response;
    try {
      response = await fetch(path, init);
    } catch (error) {
      return {ok: false, status: 0, data: {error: "the app does not answer (is grade review still running?)"}};
    }
    let data;
    try { data = await response.json(); } catch (e) { data = {error: "the app said: " + response.status}; }
    if (response.status === 403) say("This page has no grader's secret: open the URL grade review printed for you.", true);
    return {ok: response.ok, status: response.status, data: data};
  }

  function answerText(answer) {
    const names = Object.keys(answer || {});
    if (names.length === 1) return String(answer[names[0]]);
    return names.map((n) => n + ": " + answer[n]).join("\n");
  }

  // One piece of work at a time, in the order asked for: a key pressed while the last change is on
  // its way waits for it, so each change is sent with the versions the page last saw.
  // The page's own reading of others' changes (`quiet`) waits its turn too, without counting as busy.
  let queue = Promise.resolve();
  let pending = 0;
  function enqueue(work, quiet) {
    if (!quiet) {
      pending += 1;
      document.body.dataset.busy = "1";
    }
    queue = queue.then(work).catch((error) => say(String(error), true)).finally(() => {
      if (quiet) return;
      pending -= 1;
      if (!pending) document.body.dataset.busy = "0";
    });
    return queue;
  }

  function every(ms, work) {
    let stopped = false;
    async function tick() {
      if (stopped) return;
      try { await work(); } catch (e) { /* the next tick tries again */ }
      setTimeout(tick, ms);
    }
    setTimeout(tick, ms);
    return () => { stopped = true; };
  }

  async function whoAmI() {
    const r = await api("/api/me");
    if (!r.ok) return false;
    me = r.data;
    document.getElementById("grader").textContent = me.grader;
    document.getElementById("anonymous").hidden = !me.anonymous;
    return true;
  }

  function partPath(kind, homework, part) {
    return "/" + kind + "/" + encodeURIComponent(homework) + "/" + encodeURIComponent(part);
  }

  function apiPart(homework, part) {
    return "/api/parts/" + encodeURIComponent(homework) + "/" + encodeURIComponent(part);
  }

  // ------------------------------------------------------------------ the parts page

  function byGrader(counts) {
    return Object.entries(counts || {}).map(([who, n]) => who + " " + n).join(", ");
  }

  async function indexPage() {
    document.title = "What waits for staff · attngrade review";
    const table = el("table", {class: "parts"});
    const integrity = el("div");
    main.replaceChildren(el("h1", {text: "What waits for staff"}), table,
      el("h2", {text: "Near-identical written answers"}),
      el("p", {class: "note", text: "Long answers that match word for word across students, for staff to look at; never a verdict, never shown to students."}),
      integrity);
    async function load() {
      const r = await api("/api/parts");
      if (!r.ok) { say(r.data.error || "cannot read the parts", true); return; }
      table.replaceChildren(el("thead", {}, el("tr", {}, ["homework", "part", "graded", "to grade", "points pending",
        "groups left", "needs another look", "regrade requests", "graded by", ""].map((h) => el("th", {text: h})))));
      const body = el("tbody");
      if (!r.data.length) body.append(el("tr", {}, el("td", {colSpan: 10, text: "Nothing: every answer of this run was decided by a machine."})));
      for (const row of r.data) {
        body.append(el("tr", {class: row.to_grade ? "" : "done", "data-part": row.part},
          el("td", {text: row.homework}),
          el("td", {}, el("a", {href: partPath("part", row.homework, row.part), text: row.part}), row.written ? " " : "",
            row.written ? el("span", {class: "tag", text: "written"}) : null),
          el("td", {class: "num", text: row.graded}), el("td", {class: "num", text: row.to_grade}),
          el("td", {class: "num", text: points(row.pending_points)}),
          el("td", {class: "num", text: row.groups_left + " of " + row.groups}),
          el("td", {class: "num", text: row.look_again || ""}),
          el("td", {class: "num"}, row.requests ? el("a", {href: partPath("requests", row.homework, row.part),
            text: row.requests_open + " open of " + row.requests}) : ""),
          el("td", {text: byGrader(row.by_grader)}),
          el("td", {}, row.next_group ? el("a", {href: partPath("part", row.homework, row.part), text: "grade"}) : "")));
      }
      table.append(body);
    }
    async function loadIntegrity() {
      const r = await api("/api/integrity");
      if (!r.ok) return;
      integrity.replaceChildren(r.data.length ? el("ul", {class: "integrity"}, r.data.map((f) =>
        el("li", {text: f.homework + " " + f.part + ": " + f.students.join(", ") + " (" + Math.round(f.overlap * 100) + "% of word runs shared)"})))
        : el("p", {text: "None found."}));
    }
    await load();
    await loadIntegrity();
    every(SLOW_POLL_MS, load);
  }

  // ------------------------------------------------------------------ the audit log

  async function auditPage() {
    const table = el("table", {class: "audit"});
    main.replaceChildren(el("h1", {text: "Audit log"}),
      el("p", {class: "note", text: "Every change to the staff store, newest first: who, when, what, before and after."}), table);
    async function load() {
      const r = await api("/api/audit?limit=500");
      if (!r.ok) { say(r.data.error || "cannot read the audit log", true); return; }
      table.replaceChildren(el("thead", {}, el("tr", {}, ["when", "who", "what", "part", "of", "before", "after"].map((h) => el("th", {text: h})))),
        el("tbody", {}, r.data.map((row) => el("tr", {},
          el("td", {text: row.at}), el("td", {text: row.who}), el("td", {text: row.action}),
          el("td", {text: (row.homework || "") + " " + (row.part || "")}), el("td", {}, el("code", {text: row.target || ""})),
          el("td", {}, el("code", {text: row.before || ""})), el("td", {}, el("code", {text: row.after || ""}))))));
    }
    await load();
    every(SLOW_POLL_MS, load);
  }

  // ------------------------------------------------------------------ next ungraded group, any part

  async function nextPage() {
    main.replaceChildren(el("p", {class: "note", text: "Finding the next ungraded group…"}));
    const r = await api("/api/next", {});
    if (r.ok && r.data.group) {
      location.replace(partPath("part", r.data.homework, r.data.part) + "#" + r.data.group);
    } else {
      main.replaceChildren(el("h1", {text: "Nothing to hand out"}),
        el("p", {text: r.ok ? "Every group is graded, or held by another grader right now." : (r.data.error || "")}),
        el("p", {}, el("a", {href: "/", text: "back to the parts"})));
    }
  }

  // ------------------------------------------------------------------ regrade requests of a part

  function requestsPage(homework, partId) {
    const base = apiPart(homework, partId);
    const list = el("div");
    main.replaceChildren(el("h1", {text: homework + " · part " + partId + " · regrade requests"}),
      el("p", {}, el("a", {href: partPath("part", homework, partId), text: "grade the part"})), list);
    const drafts = {};
    async function load() {
      const r = await api(base + "/requests");
      if (!r.ok) { say(r.data.error || "cannot read the requests", true); return; }
      const active = document.activeElement;
      if (active && list.contains(active) && active.matches("textarea, input")) return; // never under the grader's hands
      list.replaceChildren(...(r.data.requests.length ? r.data.requests.map((q) => renderRequest(q, r.data.rubric, drafts))
        : [el("p", {text: "No regrade request for this part."})]));
    }
    load();
    every(SLOW_POLL_MS, load);
  }

  function renderRequest(q, rubric, drafts) {
    const chosen = new Set((q.grade && q.grade.items) || []);
    const reply = el("textarea", {class: "reply", rows: 3, value: drafts[q.id] !== undefined ? drafts[q.id] : q.reply,
      placeholder: "your reply: the student reads it in their report"});
    reply.addEventListener("input", () => { drafts[q.id] = reply.value; });
    const adjust = el("input", {type: "number", step: "0.25", class: "adjust", value: q.grade ? q.grade.adjust : 0});
    const buttons = rubric.map((item) => {
      const b = el("button", {type: "button", class: "item", "data-item": item.id, "aria-pressed": chosen.has(item.id) ? "true" : "false"},
        el("b", {text: (item.points >= 0 ? "+" : "") + item.points}), " " + item.text);
      b.addEventListener("click", () => b.setAttribute("aria-pressed", b.getAttribute("aria-pressed") === "true" ? "false" : "true"));
      return b;
    });
    const save = el("button", {type: "button", class: "save", text: "save reply and grade"});
    const box = el("section", {class: "request" + (q.answered ? " answered" : ""), "data-request": q.id},
      el("header", {}, el("b", {class: "who", text: q.student}), " asked on " + q.received,
        q.answered ? el("span", {class: "tag", text: "answered by " + (q.by || "?")}) : el("span", {class: "tag again", text: "open"})),
      el("blockquote", {class: "message", text: q.message}),
      q.answer ? el("pre", {class: "answer", text: answerText(q.answer)}) : el("p", {class: "note", text: "(this answer is not in the run any more)"}),
      q.grade ? el("p", {class: "grade", text: "now " + points(q.grade.score) + " of " + points(q.grade.max) +
        " (the machine " + points(q.grade.machine) + ", staff " + points(q.grade.staff) + ")"}) : null,
      el("div", {class: "items"}, buttons),
      el("label", {}, "adjust ", adjust), reply, save,
      el("details", {class: "history"}, el("summary", {text: "history of this grade"}),
        el("ul", {}, q.history.map((h) => el("li", {text: h.at + " " + h.who + ": " + h.action + " " + (h.after || "")})))));
    save.addEventListener("click", () => enqueue(async () => {
      const items = buttons.filter((b) => b.getAttribute("aria-pressed") === "true").map((b) => Number(b.dataset.item));
      const body = {reply: reply.value, expected: q.version};
      if (q.answer) body.grade = {items: items, adjust: Number(adjust.value || 0), expected: q.own.version};
      const r = await api("/api/requests/" + q.id + "/reply", body);
      if (r.ok) { delete drafts[q.id]; say("saved"); } else say((r.data.error || "not saved") + " (your reply is kept: save again)", true);
    }));
    return box;
  }

  // ------------------------------------------------------------------ a part's grading page

  function partPage(homework, partId) {
    const base = apiPart(homework, partId);
    const view = {part: null, groups: new Map(), order: [], current: null, since: 0, version: "", drafts: new Map(),
                  open: new Set(), distinct: new Set(), forms: new Map(), again: null, query: ""};
    const layout = el("div", {class: "layout", id: "part", "data-homework": homework, "data-part": partId});
    const column = el("div", {class: "groups"});
    const side = el("aside", {class: "side"});
    layout.append(column, side);
    main.replaceChildren(layout);

    async function load(focusId) {
      const r = await api(base + (view.query ? "?q=" + encodeURIComponent(view.query) : ""));
      if (!r.ok) { say(r.data.error || "cannot read the part", true); return false; }
      const keep = focusId || view.current;
      view.part = r.data;
      view.since = r.data.since;
      view.version = r.data.version;
      view.groups = new Map(r.data.groups.map((g) => [g.id, g]));
      view.order = r.data.groups.map((g) => g.id);
      renderAll();
      for (const id of view.forms.keys()) if (view.groups.has(id)) transcribeForm(id);
      if (keep && view.groups.has(keep)) focus(keep, false);
      else if (view.order.length) focus(view.order[0], false);
      return true;
    }

    function renderAll() {
      const p = view.part;
      const statement = el("div", {class: "statement"});
      if (p.statement_html) {
        const parsed = new DOMParser().parseFromString(p.statement_html, "text/html");
        statement.append(...Array.from(parsed.body.childNodes).map((n) => document.importNode(n, true)));
      }
      column.replaceChildren(...[el("h1", {text: p.homework + " · part " + p.part}), statement,
        el("p", {class: "progress", id: "progress"}),
        view.query ? el("p", {class: "note"}, "Groups with an answer or a student matching “" + view.query + "”. ",
          el("a", {href: "#", id: "all-groups", text: "all groups"})) : null,
        ...view.order.map((id, i) => renderGroup(view.groups.get(id), i))].filter(Boolean));
      const all = document.getElementById("all-groups");
      if (all) all.addEventListener("click", (e) => { e.preventDefault(); view.query = ""; load(); });
      if (!view.order.length) column.append(el("p", {text: "No group here."}));
      showProgress(p.progress);
      renderSide();
    }

    function showProgress(pr) {
      const line = document.getElementById("progress");
      if (!line || !pr) return;
      line.replaceChildren(el("span", {id: "graded-count", text: pr.graded}), " graded, ",
        el("span", {id: "to-grade-count", text: pr.to_grade}), " to grade, ",
        el("span", {id: "pending-points", text: points(pr.pending_points)}), " points pending, ",
        el("span", {id: "groups-left", text: pr.groups_left}), " of " + pr.groups + " groups left",
        pr.look_again ? el("strong", {text: " · " + pr.look_again + " need another look"}) : "",
        Object.keys(pr.by_grader || {}).length ? el("span", {class: "by", id: "by-grader", text: " · graded by " + byGrader(pr.by_grader)}) : "");
    }

    // ---------------------------------------------------------------- one group

    function states(g) {
      return new Set(g.units.map((u) => (u.graded ? "1" : "0") + ":" + u.items.slice().sort().join(",")));
    }

    function renderGroup(g, index) {
      const section = el("section", {class: "group", id: g.id, tabIndex: -1, "data-group": g.id});
      fillGroup(section, g, index);
      section.addEventListener("click", (e) => { if (view.current !== g.id && !e.target.closest("button, input, textarea, a, summary")) focus(section.id, false); });
      return section;
    }

    function draftKey(kind, id) { return kind + ":" + id; }

    function field(kind, id, saved, make) {
      // A field keeps what the grader typed and did not save, beside what is saved now.
      const key = draftKey(kind, id);
      const draft = view.drafts.get(key);
      const input = make(draft !== undefined ? draft : saved);
      input.dataset.saved = saved;
      if (draft !== undefined && draft !== saved) input.classList.add("unsaved");
      input.addEventListener("input", () => {
        view.drafts.set(key, input.value);
        input.classList.toggle("unsaved", input.value !== input.dataset.saved);
      });
      const wrap = el("span", {class: "field"}, input);
      if (draft !== undefined && draft !== saved) {
        wrap.append(el("span", {class: "saved-now", text: "not saved; saved now: " + (saved === "" ? "(nothing)" : saved)}));
      }
      return input;
    }

    function fillGroup(section, g, index) {
      if (index === undefined) index = view.order.indexOf(g.id);
      const hint = (view.part.suggestions || {})[g.id];
      const first = g.units[0];
      const mixed = g.mixed;
      section.classList.toggle("graded", g.graded);
      section.classList.toggle("mixed", mixed);
      section.dataset.claimedBy = g.claimed_by || "";
      section.dataset.versions = g.units.map((u) => u.id + ":" + u.version).join(" ");
      const stateText = g.graded ? (mixed ? "graded differently" : "graded") : (mixed ? "partly graded" : "not graded");
      const header = el("header", {},
        el("span", {class: "number", text: index + 1}),
        el("span", {class: "size", text: g.size + " student" + (g.size === 1 ? "" : "s") + (g.units.length > 1 ? ", " + g.units.length + " distinct answers" : "")}),
        el("span", {class: "state", "data-role": "state", text: stateText}),
        el("span", {class: "points"}, el("span", {"data-role": "points", text: g.graded && !mixed ? points(g.points) : "–"}), " / " + points(g.cap)),
        g.placed ? el("span", {class: "tag", text: "placed by staff"}) : null,
        g.changed ? el("span", {class: "tag again", text: "changed since grading"}) : null,
        first.unreadable ? el("span", {class: "tag", text: "unreadable"}) : null,
        g.claimed_by && g.claimed_by !== me.grader ? el("span", {class: "tag claim", "data-role": "claim", text: g.claimed_by + " is grading this"}) : null,
        el("label", {class: "pick"}, el("input", {type: "checkbox", class: "merge-pick", checked: section.querySelector("input.merge-pick:checked") !== null}), " pick to merge"));
      const parts = [header, el("pre", {class: "answer", text: g.answer})];
      for (const u of g.units) {
        if (u.prior) {
          parts.push(el("div", {class: "prior"}, el("b", {text: "Graded before, for the answer it replaced: "}),
            el("pre", {class: "answer old", text: answerText(u.prior.answer)}),
            el("span", {text: "it had " + points(u.prior.points) + (u.prior.items.length ? " with " + itemNames(u.prior.items) : "")})));
        }
      }
      if (first.unreadable) parts.push(unreadableBox(section, g, first));
      if (g.graded) {
        // a graded group needs no suggestion
      } else if (hint && hint.neighbour) {
        parts.push(el("p", {class: "hint", text: "Nearest graded group (" + Math.round(hint.neighbour.similarity * 100) + "% similar) got " +
          points(hint.neighbour.points) + (hint.neighbour.items.length ? " with " + itemNames(hint.neighbour.items) : "") + ": press a to give the same items."}));
      } else if (hint && hint.items && hint.items.length) {
        parts.push(el("p", {class: "hint", text: "Closest rubric items: " + itemNames(hint.items) + "."}));
      }
      parts.push(el("div", {class: "items"}, view.part.rubric.map((item, i) => {
        const has = g.units.filter((u) => u.items.includes(item.id)).length;
        const pressed = has === 0 ? "false" : has === g.units.length ? "true" : "mixed";
        const b = el("button", {type: "button", class: "item", "data-item": item.id, "aria-pressed": pressed},
          el("kbd", {text: i < 9 ? i + 1 : ""}), " ", el("b", {text: (item.points >= 0 ? "+" : "") + item.points}), " " + item.text);
        b.addEventListener("click", () => { focus(section.id, false); toggleItem(section.id, item.id, false); });
        return b;
      })));
      const adjust = field("adjust", first.id, String(first.adjust || 0), (v) => el("input", {class: "adjust", type: "number", step: "0.25", value: v}));
      adjust.addEventListener("change", () => changeGroup(section.id, "adjust", adjust));
      const comment = field("comment", first.id, first.comment || "", (v) => el("textarea", {class: "group-comment", rows: 2, value: v,
        placeholder: "comment to the group (Ctrl+Enter saves)"}));
      // A comment is saved when asked (Ctrl+Enter, the button), never on leaving the box: after a refusal,
      // only the grader's own second request saves their text over what someone else saved.
      comment.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); changeGroup(section.id, "comment", comment); } });
      const confirm = el("button", {type: "button", class: "confirm"}, "confirm ", el("kbd", {text: "Enter"}));
      confirm.addEventListener("click", () => { focus(section.id, false); confirmAndGo(section.id); });
      const ungrade = el("button", {type: "button", class: "unconfirm"}, "ungrade ", el("kbd", {text: "u"}));
      ungrade.addEventListener("click", () => send(section.id, {op: "unconfirm"}));
      const saveComment = el("button", {type: "button", class: "save-comment", text: "save comment"});
      saveComment.addEventListener("click", () => changeGroup(section.id, "comment", comment));
      parts.push(el("div", {class: "actions"}, confirm, ungrade, el("label", {}, "adjust ", adjust.parentNode),
        el("label", {class: "wide"}, "comment to the group ", comment.parentNode, saveComment)));
      parts.push(membersBox(section, g), distinctBox(section, g));
      section.replaceChildren(...parts);
    }

    function itemNames(ids) {
      return view.part.rubric.filter((i) => ids.includes(i.id)).map((i) => "“" + i.text + "”").join(", ");
    }

    function membersBox(section, g) {
      const details = el("details", {class: "members", open: view.open.has(g.id)});
      details.addEventListener("toggle", () => { if (details.open) view.open.add(g.id); else view.open.delete(g.id); });
      const list = el("ul");
      for (const m of g.members) {
        const box = field("student", m.student, m.comment || "", (v) => el("textarea", {class: "student-comment", rows: 1, value: v,
          placeholder: "comment to this student (Ctrl+Enter saves)"}));
        box.dataset.version = m.comment_version;
        const save = () => saveStudentComment(section.id, m.student, box);
        box.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); save(); } });
        const keep = el("button", {type: "button", class: "save-student-comment", text: "save"});
        keep.addEventListener("click", save);
        const split = el("button", {type: "button", class: "split", text: "split out"});
        split.addEventListener("click", () => structure("/split", {unit: m.unit, student: m.student}));
        list.append(el("li", {"data-student": m.student, "data-unit": m.unit},
          el("span", {class: "who", text: m.student}),
          el("span", {class: "score", "data-role": "score", text: m.score === null ? "pending" : points(m.score)}),
          m.look_again ? el("span", {class: "tag again", text: "needs another look"}) : null, split, box.parentNode, keep));
      }
      details.append(el("summary", {text: "members"}), list);
      return details;
    }

    function distinctBox(section, g) {
      const box = el("div", {class: "distinct", hidden: !view.distinct.has(g.id)});
      box.append(el("h3", {text: "Distinct answers in this group (d hides them)"}));
      for (const u of g.units) {
        const split = el("button", {type: "button", class: "split-unit", text: "split out"});
        split.addEventListener("click", () => structure("/split", {unit: u.id}));
        box.append(el("div", {class: "unit" + (u.graded ? " graded" : ""), "data-unit": u.id},
          el("pre", {class: "answer", text: answerText(u.answer)}),
          el("span", {text: u.size + " student" + (u.size === 1 ? "" : "s") + " · " + (u.graded ? "graded " + points(u.points) + (u.items.length ? " with " + itemNames(u.items) : "") + (u.by ? " by " + u.by : "") : "not graded")}),
          " ", split));
      }
      return box;
    }

    function unreadableBox(section, g, unit) {
      const box = el("div", {class: "unreadable"});
      box.append(el("p", {class: "note", text: "The machine could not read this answer. The student wrote:"}));
      const written = unit.written || {};
      box.append(el("pre", {class: "answer written", text: Object.keys(written).length ? answerText(written) : "(what the student wrote is in their report)"}));
      const t = unit.transcript;
      if (t) {
        box.append(el("p", {class: "transcript"}, el("b", {text: "Transcribed by " + (t.by || "?") + ": "}), answerText(t.text)),
          el("p", {class: "verdict", text: "attngrade's checks on it: " + t.verdict.status + ", " + points(t.verdict.score) + " of " + points(t.verdict.max_score)}),
          el("ul", {class: "verdict-feedback"}, (t.verdict.feedback || []).map((line) => el("li", {text: line}))));
      }
      const open = el("button", {type: "button", class: "transcribe"}, t ? "transcribe again " : "transcribe ", el("kbd", {text: "t"}));
      open.addEventListener("click", () => transcribeForm(section.id));
      box.append(open);
      if (t) {
        const back = el("button", {type: "button", class: "untranscribe", text: "take the transcription back"});
        back.addEventListener("click", () => enqueue(async () => {
          const r = await api(base + "/transcribe", {unit: unit.id, text: null, expected: t.version});
          afterChange(section.id, r);
        }));
        box.append(" ", back);
      }
      return box;
    }

    // An open transcription form outlives a redraw of its group (another grader's change, a claim):
    // what was typed in it is kept in view.forms until it is saved or taken back.
    function transcribeForm(id) {
      const g = view.groups.get(id);
      const section = document.getElementById(id);
      if (!g || !section) return;
      const unit = g.units.find((u) => u.unreadable);
      if (!unit) { say("only an answer the machine could not read is transcribed", true); return; }
      const old = section.querySelector("form.transcribe-form");
      if (old) { old.querySelector("textarea").focus(); return; }
      const fields = view.part.fields.length ? view.part.fields.map((f) => f.name) : Object.keys(unit.written || {});
      const kept = view.forms.get(id) || {text: unit.transcript ? unit.transcript.text : (unit.written || {}), said: ""};
      view.forms.set(id, kept);
      const boxes = fields.map((name) => el("textarea", {name: name, rows: 2, class: "transcription", value: kept.text[name] || "",
        placeholder: "in attngrade's notation (docs/reference/math.md)"}));
      boxes.forEach((box, i) => box.addEventListener("input", () => { kept.text = Object.assign({}, kept.text, {[fields[i]]: box.value}); }));
      const said = el("p", {class: "reader", role: "alert", text: kept.said});
      const go = el("button", {type: "submit", text: "grade it (Ctrl+Enter)"});
      const close = el("button", {type: "button", class: "close", text: "close"});
      const form = el("form", {class: "transcribe-form"}, el("h3", {text: "Transcription: type what the student wrote"}),
        ...fields.map((name, i) => el("label", {}, name + " ", boxes[i])), el("p", {}, go, " ", close), said);
      close.addEventListener("click", () => { view.forms.delete(id); form.remove(); });
      form.addEventListener("submit", (e) => {
        e.preventDefault();
        enqueue(async () => {
          const text = {};
          fields.forEach((name, i) => { text[name] = boxes[i].value; });
          const now = view.groups.get(id);
          const u = now ? now.units.find((x) => x.id === unit.id) : unit;
          const r = await api(base + "/transcribe", {unit: unit.id, text: text, expected: u && u.transcript ? u.transcript.version : 0});
          if (r.status === 422 || r.status === 400) {
            kept.said = r.data.error;
            const shown = document.getElementById(id) && document.getElementById(id).querySelector("form.transcribe-form .reader");
            if (shown) shown.textContent = r.data.error;
            say("not saved: the transcription does not read", true);
            return;
          }
          if (r.ok) view.forms.delete(id);
          afterChange(id, r);
        });
      });
      form.addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); form.requestSubmit(); } });
      section.querySelector(".unreadable").append(form);
      boxes[0].focus();
    }

    // ---------------------------------------------------------------- changes

    function versions(g) {
      const out = {};
      for (const u of g.units) out[u.id] = u.version;
      return out;
    }

    function afterChange(id, r) {
      if (r.data && r.data.group) {
        if (r.data.group.id !== id || r.data.version !== view.version) { load(r.data.group.id); }
        else replaceGroup(r.data.group);
      }
      if (r.data && r.data.progress) showProgress(r.data.progress);
      if (!r.ok) {
        const more = r.status === 409 ? " — the group shows what is saved now; what you typed is kept: save it again" : "";
        say((r.data.error || "not saved") + more, true);
        if (r.status === 409 && !r.data.group) load();
        return false;
      }
      say("saved");
      return true;
    }

    function replaceGroup(g) {
      const before = view.groups.get(g.id);
      if (before && JSON.stringify(before) === JSON.stringify(g) && document.getElementById(g.id)) return;
      view.groups.set(g.id, g);
      const section = document.getElementById(g.id);
      if (!section) return;
      const hadFocus = document.activeElement && section.contains(document.activeElement) ? document.activeElement : null;
      const focusedField = hadFocus && hadFocus.matches("textarea, input") ? hadFocus.className : null;
      fillGroup(section, g);
      if (view.forms.has(g.id) && section.querySelector(".unreadable")) transcribeForm(g.id);
      if (focusedField) {
        const again = section.querySelector("." + focusedField.split(" ")[0]);
        if (again) again.focus();
      }
    }

    // Each change is an async function run by the queue (`enqueue`): a key's target group is read when
    // its turn comes, after the changes and moves asked for before it.
    async function doSend(id, body) {
      const g = view.groups.get(id);
      if (!g) return false;
      const units = body.units || g.units.map((u) => u.id);
      const r = await api(base + "/grade", Object.assign({units: units, expected: versions(g)}, body));
      return afterChange(id, r);
    }

    function send(id, body) {
      return enqueue(() => doSend(id, body));
    }

    function toggleItem(id, item, fromKey) {
      enqueue(() => doToggle(id, item, fromKey));
    }

    async function doToggle(id, item, fromKey) {
      {
        const g = view.groups.get(id);
        if (!g) return;
        const all = g.units.every((u) => u.items.includes(item));
        const every = view.again && view.again.id === id && view.again.item === item && Date.now() - view.again.at < 8000;
        const r = await api(base + "/grade", {units: g.units.map((u) => u.id), expected: versions(g),
          op: all ? "remove" : "add", item: item, every: Boolean(every)});
        view.again = null;
        if (r.status === 409 && r.data.disagree) {
          view.again = {id: id, item: item, at: Date.now()};
          afterChange(id, r);
          say("The answers of this group were graded differently: press " + (fromKey ? "the key" : "the item") +
            " again to give or take it for all of them, or d to see each answer.", true);
          return;
        }
        afterChange(id, r);
      }
    }

    function changeGroup(id, op, input) {
      enqueue(async () => {
        const g = view.groups.get(id);
        if (!g) return;
        const value = op === "adjust" ? Number(input.value || 0) : input.value;
        if (op === "adjust" && !Number.isFinite(value)) { say("the adjustment is a number", true); return; }
        const r = await api(base + "/grade", {units: g.units.map((u) => u.id), expected: versions(g), op: op, value: value});
        if (r.ok) view.drafts.delete(draftKey(op, g.units[0].id));
        else view.drafts.set(draftKey(op, g.units[0].id), input.value);
        afterChange(id, r);
      });
    }

    function saveStudentComment(id, student, box) {
      enqueue(async () => {
        const r = await api(base + "/comment", {student: student, text: box.value, expected: Number(box.dataset.version)});
        if (r.ok) {
          view.drafts.delete(draftKey("student", student));
          box.dataset.version = r.data.version;
          box.dataset.saved = box.value;
          box.classList.remove("unsaved");
          say("saved");
          return;
        }
        view.drafts.set(draftKey("student", student), box.value);
        if (r.status === 409 && r.data.current) {
          box.dataset.version = r.data.current.version; // what is saved now: saving again replaces it knowingly
          box.dataset.saved = r.data.current.comment;
          box.classList.add("unsaved");
          say((r.data.error || "not saved") + " — saved now: “" + r.data.current.comment + "”; yours is kept: save again to replace it", true);
        } else say(r.data.error || "not saved", true);
      });
    }

    function structure(path, body) {
      enqueue(() => doStructure(path, body));
    }

    async function doStructure(path, body) {
      const r = await api(base + path, Object.assign({version: view.version}, body));
      if (!r.ok) say(r.data.error || "not done", true);
      await load();
    }

    function confirmAndGo(id) {
      enqueue(() => doConfirmAndGo(id));
    }

    async function doConfirmAndGo(id) {
      if (await doSend(id, {op: "confirm"})) await doNext(id);
    }

    function goNext(after) {
      enqueue(() => doNext(after));
    }

    async function doNext(after) {
      {
        const r = await api(base + "/next", {after: after || view.current || ""});
        if (!r.ok) { say(r.data.error || "cannot hand out a group", true); return; }
        if (!r.data.group) {
          say(r.data.left ? r.data.held_by_others + " ungraded group" + (r.data.held_by_others === 1 ? " is" : "s are") +
            " being graded by others right now" : "every group of this part is graded");
          return;
        }
        if (!view.groups.has(r.data.group)) await load(r.data.group);
        focus(r.data.group, true);
      }
    }

    function focus(id, scroll) {
      const section = document.getElementById(id);
      if (!section) return;
      view.current = id;
      for (const s of column.querySelectorAll("section.group.current")) if (s !== section) s.classList.remove("current");
      section.classList.add("current");
      section.focus({preventScroll: true});
      if (scroll !== false) section.scrollIntoView({block: "nearest"});
      history.replaceState(null, "", "#" + id);
    }

    function step(by) {
      const i = view.order.indexOf(view.current);
      const next = view.order[Math.max(0, Math.min(view.order.length - 1, (i < 0 ? 0 : i) + by))];
      if (next) focus(next);
    }

    // ---------------------------------------------------------------- the side panel

    function renderSide() {
      const p = view.part;
      const rubric = el("ol", {class: "rubric"});
      for (const item of p.rubric) {
        const pts = el("input", {class: "item-points", type: "number", step: "0.25", value: item.points, "aria-label": "points"});
        const text = el("input", {class: "item-text", type: "text", value: item.text, "aria-label": "text"});
        const save = el("button", {type: "button", class: "item-save", text: "save"});
        const del = el("button", {type: "button", class: "item-delete", text: "delete"});
        save.addEventListener("click", () => rubricChange({id: item.id, version: item.version, points: Number(pts.value), text: text.value}));
        del.addEventListener("click", () => rubricChange({id: item.id, version: item.version, deleted: true}));
        rubric.append(el("li", {"data-item": item.id, "data-version": item.version}, pts, text, save, " ", del));
      }
      const newPoints = el("input", {id: "new-points", type: "number", step: "0.25", placeholder: "±points", "aria-label": "new item points"});
      const newText = el("input", {id: "new-text", type: "text", placeholder: "new rubric item", "aria-label": "new item text"});
      const add = el("button", {type: "button", id: "add-item", text: "add"});
      add.addEventListener("click", () => rubricChange({points: Number(newPoints.value || 0), text: newText.value}));
      const search = el("input", {id: "search", name: "q", type: "search", placeholder: "search answers or students", value: view.query});
      const form = el("form", {}, search);
      form.addEventListener("submit", (e) => { e.preventDefault(); view.query = search.value; load(); });
      const merge = el("button", {type: "button", id: "merge"}, "merge picked groups ", el("kbd", {text: "M"}));
      merge.addEventListener("click", mergePicked);
      const parts = [el("h2", {text: "Rubric"}), rubric, el("p", {class: "add-item"}, newPoints, " ", newText, " ", add)];
      if (p.reference) parts.push(referenceBox(p.reference));
      if (p.written) {
        const threshold = el("input", {id: "threshold", type: "number", min: "0.5", max: "1", step: "0.01", value: Number(p.threshold).toFixed(2)});
        const regroup = el("button", {type: "button", id: "regroup", text: "regroup"});
        regroup.addEventListener("click", () => enqueue(async () => {
          const r = await api(base + "/threshold", {value: Number(threshold.value), version: view.version});
          if (!r.ok) say(r.data.error, true);
          await load();
        }));
        parts.push(el("h2", {text: "Grouping by meaning"}), el("p", {}, el("label", {}, "merge answers at least ", threshold, " similar"), " ", regroup),
          el("p", {class: "note", text: "By " + p.embedder + ". Higher: fewer, safer merges. Groups are an aid: read before you grade."}));
      }
      parts.push(el("p", {}, merge), form, el("h2", {text: "Keys"}), keysHelp());
      side.replaceChildren(...parts);
    }

    function referenceBox(ref) {
      const box = el("details", {class: "reference", id: "reference"}, el("summary", {}, "Reference solution (staff only) ", el("kbd", {text: "r"})));
      const show = (title, obj) => {
        const names = Object.keys(obj || {});
        if (!names.length) return;
        box.append(el("h3", {text: title}), el("pre", {class: "answer", text: names.map((n) => (names.length > 1 ? n + ": " : "") + obj[n]).join("\n")}));
      };
      show("Reference answer", ref.answer);
      show("Key", ref.key);
      if (ref.rubric) box.append(el("h3", {text: "Rubric (keys.yaml)"}), el("p", {text: ref.rubric}));
      show("Explanation", ref.explain);
      return box;
    }

    function keysHelp() {
      const keys = [["j k", "next, previous group"], ["1–9", "give or take back a rubric item"], ["Enter", "confirm and take the next ungraded group"],
        ["a", "give the suggested items"], ["u", "ungrade"], ["n", "take the next ungraded group"], ["c", "comment to the group"],
        ["d", "show the group's distinct answers"], ["t", "transcribe an unreadable answer"], ["r", "reference solution"],
        ["x M", "pick to merge, merge the picked"], ["/", "search"], ["Esc", "leave a field"]];
      return el("dl", {class: "keys"}, keys.map(([k, what]) => [el("dt", {}, k.split(" ").map((x) => el("kbd", {text: x}))), el("dd", {text: what})]));
    }

    function rubricChange(body) {
      enqueue(async () => {
        const r = await api(base + "/rubric", body);
        if (!r.ok) say(r.data.error || "not saved", true); else say("saved");
        await load();
      });
    }

    function mergePicked() {
      enqueue(doMerge);
    }

    async function doMerge() {
      const picked = Array.from(column.querySelectorAll("section.group")).filter((s) => s.querySelector("input.merge-pick").checked).map((s) => s.id);
      if (picked.length < 2) { say("pick two groups or more (x) to merge", true); return; }
      await doStructure("/merge", {groups: picked});
    }

    async function doHint(id) {
      const hint = (view.part.suggestions || {})[id];
      const items = hint && hint.neighbour ? hint.neighbour.items : [];
      if (!items.length) { say("no suggestion for this group", true); return; }
      await doSend(id, {op: "set_items", items: items});
    }

    // ---------------------------------------------------------------- keys

    document.addEventListener("keydown", (e) => {
      const inField = e.target.closest && e.target.closest("input, textarea, select");
      if (inField) {
        if (e.key === "Escape") { inField.blur(); if (view.current) focus(view.current, false); }
        return;
      }
      if (e.ctrlKey || e.metaKey || e.altKey || !view.part) return;
      if (e.key === "Enter" && e.target.closest && e.target.closest("button, a, summary")) return; // that one's own action
      const key = e.key;
      if (!/^[1-9]$/.test(key) && !["Enter", "j", "k", "ArrowDown", "ArrowUp", "n", "a", "u", "c", "d", "t", "r", "x", "M", "/"].includes(key)) return;
      e.preventDefault();
      enqueue(() => act(key));
    });

    async function act(key) {
      const id = view.current;
      const section = id ? document.getElementById(id) : null;
      if (/^[1-9]$/.test(key)) {
        const item = view.part.rubric[Number(key) - 1];
        if (item && id) await doToggle(id, item.id, true);
      } else if (key === "Enter" && id) await doConfirmAndGo(id);
      else if (key === "j" || key === "ArrowDown") step(1);
      else if (key === "k" || key === "ArrowUp") step(-1);
      else if (key === "n") await doNext(id);
      else if (key === "a" && id) await doHint(id);
      else if (key === "u" && id) await doSend(id, {op: "unconfirm"});
      else if (key === "c" && section) section.querySelector("textarea.group-comment").focus();
      else if (key === "d" && section) {
        if (view.distinct.has(id)) view.distinct.delete(id); else view.distinct.add(id);
        section.querySelector("div.distinct").hidden = !view.distinct.has(id);
      } else if (key === "t" && id) transcribeForm(id);
      else if (key === "r") { const ref = document.getElementById("reference"); if (ref) ref.open = !ref.open; }
      else if (key === "x" && section) { const box = section.querySelector("input.merge-pick"); box.checked = !box.checked; }
      else if (key === "M") await doMerge();
      else if (key === "/") document.getElementById("search").focus();
    }


    // ---------------------------------------------------------------- live

    function poll() {
      return enqueue(pollOnce, true);
    }

    async function pollOnce() {
      if (!view.part) return;
      const r = await api(base + "/poll", {since: view.since, focus: view.current || "", version: view.version});
      if (!r.ok) return;
      if (r.data.reload) { await load(); return; }
      view.since = r.data.since;
      for (const g of r.data.groups) {
        if (view.groups.has(g.id)) replaceGroup(g); else { await load(); return; }
      }
      for (const id of view.order) {
        const g = view.groups.get(id);
        const holder = r.data.claims[id] || null;
        if (g && (g.claimed_by || null) !== holder) replaceGroup(Object.assign({}, g, {claimed_by: holder}));
      }
      if (r.data.progress) showProgress(r.data.progress);
    }

    window.addEventListener("pagehide", () => {
      fetch(base + "/leave", {method: "POST", keepalive: true, credentials: "omit",
        headers: {"X-Attngrade-Token": secret, "Content-Type": "application/json"}, body: "{}"}).catch(() => {});
    });

    (async () => {
      const wanted = /^#(g[0-9a-f]+)$/.exec(location.hash);
      if (!(await load(wanted ? wanted[1] : null))) return;
      if (!wanted) goNext("");
      every(POLL_MS, poll);
    })();
  }

  // ------------------------------------------------------------------ start

  (async () => {
    if (!secret) {
      main.replaceChildren(el("h1", {text: "Open the URL grade review printed for you"}),
        el("p", {text: "Each grader has a URL of their own; it carries their secret, which this tab keeps while it is open."}));
      return;
    }
    if (!(await whoAmI())) return;
    const page = document.body.dataset.page;
    const path = location.pathname.split("/").map((s) => { try { return decodeURIComponent(s); } catch (e) { return s; } });
    document.body.dataset.busy = "0";
    if (page === "index") indexPage();
    else if (page === "audit") auditPage();
    else if (page === "next") nextPage();
    else if (page === "requests") requestsPage(path[2], path[3]);
    else if (page === "part") partPage(path[2], path[3]);
  })();
})();
