"use strict";
// toolrelay view: draws the embedded trace (#trace-data) as a sequence diagram.
// Recorded text only ever enters the page through textContent, never as markup.
(() => {
  const data = JSON.parse(document.getElementById("trace-data").textContent);
  withDefaults(data.groups);
  const laneIndex = new Map(data.lanes.map((lane, index) => [lane.key, index]));
  const laneTitle = new Map(data.lanes.map((lane) => [lane.key, lane.title]));
  const REPLIES = new Set(["model_response", "mcp_response", "mcp_reply", "mcp_unpaired"]);
  const SEED_ORDER = [["declare", "declare"], ["request", "request"], ["parse", "parse"], ["route", "route"],
    ["call", "call"], ["result", "result"], ["feedback", "feedback"], ["request", "next request"]];
  const rows = new Map();      // seq → row data
  const places = new Map();    // seq → {group, call}: where a row sits, to reveal it
  const openers = new Map();   // group key or "group/call_id" → function(open)
  const panel = document.getElementById("panel");
  let selected = null;

  // A row, call or stream group leaves out the fields at their defaults (model.py page_value):
  // put them back once, so the rest of the script reads every field.
  function withDefaults(groups) {
    const fill = (item) => {
      for (const [name, value] of Object.entries(data.defaults[item.type] || {})) {
        if (!(name in item)) item[name] = Array.isArray(value) ? [] : value;
      }
      if (item.type !== "row") for (const row of item.rows) fill(row);
    };
    for (const group of groups) for (const item of group.items) fill(item);
  }

  // A record is its text whole, or [base seq, head, tail, middle]: the text shares its
  // first `head` and last `tail` UTF-16 units with the base's text (record_texts.py). A
  // chain is joined from its nearest known text; every 32nd text on the way is kept, so
  // opening a late record again, or one near it, walks a short chain.
  const joined = new Map();
  function recordText(seq) {
    const chain = [];
    let key = String(seq);
    let entry = data.records[key];
    while (Array.isArray(entry) && !joined.has(key)) {
      chain.push([key, entry]);
      key = String(entry[0]);
      entry = data.records[key];
    }
    let text = joined.has(key) ? joined.get(key) : (typeof entry === "string" ? entry : "");
    for (let i = chain.length - 1; i >= 0; i -= 1) {
      const [own, [, head, tail, middle]] = chain[i];
      text = text.slice(0, head) + middle + text.slice(text.length - tail);
      if (i === 0 || i % 32 === 0) joined.set(own, text);
    }
    return text;
  }

  function el(tag, className, text) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null && text !== "") node.textContent = String(text);
    return node;
  }

  function duration(seconds) {
    if (typeof seconds !== "number") return "";
    const milli = seconds * 1000;
    if (milli < 10) return milli.toFixed(1) + " ms";
    return milli < 1000 ? Math.round(milli) + " ms" : seconds.toFixed(2) + " s";
  }

  function badges(list) {
    const box = el("span", "badges");
    for (const badge of list) box.append(el("span", "badge b-" + badge.kind, badge.text));
    return box;
  }

  // -- header: the run, verify's verdict, the legend ------------------------------------

  function header() {
    const run = data.run;
    const top = document.getElementById("top");
    const title = el("div", "title");
    title.append(el("span", "brand", "toolrelay trace"), el("h1", null, run.task || run.source));
    const facts = el("dl", "facts");
    const fact = (name, value, className) => {
      if (value === "" || value === null || value === undefined) return;
      const item = el("div", className);
      item.append(el("dt", null, name), el("dd", null, value));
      facts.append(item);
    };
    fact("status", run.status, "status status-" + run.status);
    fact("turns", run.turns);
    fact("calls", run.calls + (run.failed_calls ? " · " + run.failed_calls + " failed" : ""),
      run.failed_calls ? "has-failed" : "");
    fact("messages", run.messages);
    if (run.stream_events) fact("stream events", run.stream_events);
    fact("took", duration(run.duration));
    if (run.tokens) fact("tokens", run.tokens);
    if (run.cost) fact("cost", run.cost);
    fact("model", run.model);
    fact("run", run.run_id);
    fact("source", run.source);
    top.append(title, facts, verdictBanner(data.verdict), legend());
  }

  function verdictBanner(verdict) {
    if (!verdict) return el("div", "verdict none", "verify did not run on this trace");
    const box = el("div", "verdict " + (verdict.ok ? "ok" : "broken"));
    if (verdict.ok) {
      box.append(el("strong", null, "✓ verify: every link holds"),
        el("span", "muted", " (" + verdict.checked + " checks)"));
    } else {
      box.append(el("strong", null, "✗ verify: broken link "), el("span", "link-name", verdict.broken_link),
        el("span", "verdict-message", verdict.broken_message));
      if (verdict.broken_seqs.length) {
        const show = el("button", "show-link", "show");
        show.type = "button";
        show.addEventListener("click", () => reveal(verdict.broken_seqs[0]));
        box.append(show);
      }
      box.append(moreFailures(verdict.failures.slice(1)));
    }
    if (!verdict.finished) box.append(el("div", "unfinished", "unfinished: " + verdict.unfinished.join("; ")));
    return box;
  }

  function moreFailures(failures) {
    const more = el("details", "failures");
    if (!failures.length) return more;
    more.append(el("summary", null, failures.length + " more failed finding" + (failures.length > 1 ? "s" : "")));
    const list = el("ul");
    for (const failure of failures) {
      const item = el("li");
      item.append(el("span", "link-name", failure.link), el("span", null, failure.message));
      list.append(item);
    }
    more.append(list);
    return more;
  }

  function legend() {
    const box = el("div", "legend");
    const order = el("ol", "seed-order");
    for (const [stage, text] of SEED_ORDER) {
      const step = el("li");
      step.append(el("span", "stage s-" + stage, text));
      order.append(step);
    }
    const keys = el("div", "keys");
    for (const [className, text] of [["k-model", "model message"], ["k-mcp", "MCP message"],
      ["k-reply", "reply (dashed)"], ["k-note", "app step"], ["k-failed", "failed"],
      ["k-broken", "broken link (verify)"]]) {
      const key = el("span", "key " + className);
      key.append(el("i"), el("span", null, text));
      keys.append(key);
    }
    keys.append(badges([{kind: "call", text: "call_id"}, {kind: "mcp", text: "mcp id"},
      {kind: "server", text: "server#connection"}]));
    box.append(order, keys);
    return box;
  }

  // -- the diagram -------------------------------------------------------------------------

  function diagram() {
    const main = document.getElementById("trace");
    main.style.setProperty("--lanes", String(data.lanes.length));
    main.style.setProperty("--model-lane", String(laneIndex.get("model") ?? 2));
    const heads = el("div", "lanes");
    heads.append(el("div", "gutter-head", "seq · stage"));
    for (const lane of data.lanes) {
      const head = el("div", "lane lane-" + lane.key.split(":")[0]);
      head.dataset.lane = lane.key;
      head.append(el("span", "lane-title", lane.title), el("span", "lane-note", lane.note));
      heads.append(head);
    }
    const lifelines = el("div", "lifelines");
    lifelines.append(el("div"));
    for (let i = 0; i < data.lanes.length; i += 1) lifelines.append(el("div", "lifeline"));
    const body = el("div", "diagram");
    body.append(lifelines);
    for (const group of data.groups) body.append(section(group));
    main.append(heads, body);
  }

  function collapsible(box, head, body, state, fill, key) {
    const toggle = (open) => {
      state.expanded = open;
      head.setAttribute("aria-expanded", String(open));
      box.classList.toggle("open", open);
      body.replaceChildren();  // a collapsed section keeps no DOM: large runs stay light
      if (open) fill(body);
    };
    head.addEventListener("click", () => toggle(!state.expanded));
    openers.set(key, toggle);
    toggle(state.expanded);
  }

  function section(group) {
    const box = el("section", "group g-" + group.kind + " state-" + group.state + (group.broken ? " broken" : ""));
    box.dataset.group = group.key;
    const head = el("button", "group-head");
    head.type = "button";
    head.append(el("span", "chevron"), el("span", "group-title", group.title),
      el("span", "group-summary", group.summary));
    const body = el("div", "group-body");
    box.append(head, body);
    const fill = (target) => {
      for (const item of group.items) {
        if (item.type === "call") target.append(callFrame(item, group));
        else if (item.type === "stream") target.append(streamFrame(item, group));
        else target.append(row(item));
      }
    };
    collapsible(box, head, body, group, fill, group.key);
    return box;
  }

  // Where an item sits in a streamed model response's span (its request to its response):
  // the span is drawn on the model lane, so a call that started mid-stream is seen inside it.
  function during(item) {
    return item.during ? " during-" + item.during : "";
  }

  function streamFrame(stream, group) {
    const frame = el("div", "stream state-" + stream.state + (stream.broken ? " broken" : "") + during(stream));
    frame.dataset.stream = stream.key;
    const head = el("button", "stream-head");
    head.type = "button";
    head.append(el("span", "chevron"), el("span", "frame-tag", "stream"), el("span", "stream-summary", stream.summary),
      el("span", "stream-text", stream.text ? "“" + stream.text + "”" : ""));
    const body = el("div", "stream-body");
    frame.append(head, body);
    const fill = (target) => { for (const item of stream.rows) target.append(row(item)); };
    collapsible(frame, head, body, stream, fill, group.key + "/" + stream.key);
    return frame;
  }

  function callFrame(call, group) {
    const frame = el("div", "call state-" + call.state + (call.broken ? " broken" : "") + during(call));
    frame.dataset.callId = call.call_id;
    const head = el("button", "call-head");
    head.type = "button";
    const ids = [{kind: "call", text: call.call_id}];
    if (call.mcp_id !== null) ids.push({kind: "mcp", text: "id " + call.mcp_id});
    if (call.connection) ids.push({kind: "server", text: call.connection});
    head.append(el("span", "chevron"), el("span", "frame-tag", "call"), el("span", "alias", call.alias),
      el("span", "route", call.target ? "→ " + call.target : ""), badges(ids),
      el("span", "outcome o-" + call.state, call.status || "no outcome"),
      el("span", "elapsed", duration(call.elapsed)));
    const body = el("div", "call-body");
    frame.append(head, body);
    const fill = (target) => { for (const item of call.rows) target.append(row(item)); };
    collapsible(frame, head, body, call, fill, group.key + "/" + call.call_id);
    return frame;
  }

  function family(item) {
    const ends = [item.source, item.target];
    if (ends.includes("user")) return "user";
    return ends.includes("model") ? "model" : "mcp";
  }

  function place(node, from, to) {
    const a = laneIndex.get(from) ?? 1;
    const b = laneIndex.get(to) ?? 1;
    node.style.gridColumn = (Math.min(a, b) + 2) + " / " + (Math.max(a, b) + 3);
    node.style.setProperty("--span", String(Math.abs(a - b) + 1));
  }

  function row(item) {
    const isArrow = item.source !== item.target;
    const node = el("div", ["row", item.message ? "msg" : "step", isArrow ? "f-" + family(item) : "",
      REPLIES.has(item.kind) ? "reply" : "", "state-" + item.state].join(" ") + during(item));
    if (item.links.some((link) => !link.ok)) node.classList.add("broken");
    node.dataset.seq = String(item.seq);
    node.dataset.kind = item.kind;
    node.tabIndex = 0;
    node.setAttribute("role", "button");
    const gutter = el("div", "gutter");
    gutter.append(el("span", "seq", "#" + item.seq), el("span", "stage s-" + item.stage, item.stage));
    node.append(gutter, isArrow ? arrow(item) : note(item));
    for (const link of item.links) node.append(linkNote(link));
    if (selected && Number(selected.dataset.seq) === item.seq) { selected = node; node.classList.add("selected"); }
    return node;
  }

  function caption(item) {
    const label = el("div", "label");
    label.append(el("span", "text", item.label), badges(item.badges));
    if (typeof item.elapsed === "number") label.append(el("span", "elapsed", duration(item.elapsed)));
    return label;
  }

  function arrow(item) {
    const rightward = (laneIndex.get(item.source) ?? 0) < (laneIndex.get(item.target) ?? 0);
    const node = el("div", "arrow " + (rightward ? "ltr" : "rtl"));
    place(node, item.source, item.target);
    node.append(caption(item), el("div", "line"), el("div", "detail", item.detail));
    return node;
  }

  function note(item) {
    const node = el("div", "note on-" + item.source.split(":")[0]);
    place(node, item.source, item.target);
    node.append(caption(item), el("div", "detail", item.detail));
    return node;
  }

  function linkNote(link) {
    const box = el("div", "link-note " + (link.ok ? "holds" : "fails"));
    box.append(el("span", "link-name", link.link), el("span", null, link.message));
    return box;
  }

  // -- the side panel: the exact recorded JSON of the clicked row ----------------------------

  function select(node) {
    const item = rows.get(Number(node.dataset.seq));
    if (!item) return;
    if (selected) selected.classList.remove("selected");
    selected = node;
    node.classList.add("selected");
    document.getElementById("panel-kind").textContent = item.kind;
    const route = item.source === item.target ? "on " + laneTitle.get(item.source)
      : laneTitle.get(item.source) + " → " + laneTitle.get(item.target);
    document.getElementById("panel-where").textContent = " · " + route + " · #" + item.seq + " · +" +
      item.at.toFixed(3) + " s" + (item.elapsed !== null ? " · took " + duration(item.elapsed) : "");
    document.getElementById("panel-badges").replaceChildren(badges(item.badges));
    document.getElementById("panel-links").replaceChildren(...item.links.map(linkNote));
    document.getElementById("panel-note").textContent = item.message
      ? "The exact message body, as recorded in the transcript:"
      : "The recorded event:";
    document.getElementById("panel-json").textContent = indentJson(recordText(item.seq));
    panel.hidden = false;
    document.body.classList.add("panel-open");
  }

  // Indents compact JSON text without parsing it, so every number and string is shown
  // exactly as recorded (JSON.parse would round large integers); the layout is Python's
  // json.dumps(indent=2).
  function indentJson(text) {
    const out = [];
    let depth = 0;
    let start = 0;
    const newline = () => "\n" + "  ".repeat(depth);
    for (let i = 0; i < text.length; i++) {
      const ch = text[i];
      if (ch === '"') {  // copy the whole string, escapes included
        let end = i + 1;
        while (end < text.length && text[end] !== '"') end += text[end] === "\\" ? 2 : 1;
        i = end;
        continue;
      }
      if (ch !== "{" && ch !== "[" && ch !== "}" && ch !== "]" && ch !== "," && ch !== ":") continue;
      out.push(text.slice(start, i));
      start = i + 1;
      if ((ch === "{" && text[i + 1] === "}") || (ch === "[" && text[i + 1] === "]")) {
        out.push(ch + text[i + 1]);
        i++;
        start = i + 1;
      } else if (ch === "{" || ch === "[") {
        depth++;
        out.push(ch + newline());
      } else if (ch === "}" || ch === "]") {
        depth--;
        out.push(newline() + ch);
      } else {
        out.push(ch === "," ? "," + newline() : ": ");
      }
    }
    out.push(text.slice(start));
    return out.join("");
  }

  function closePanel() {
    panel.hidden = true;
    document.body.classList.remove("panel-open");
    if (selected) selected.classList.remove("selected");
    selected = null;
  }

  function reveal(seq) {
    const where = places.get(seq);
    if (!where) return;
    const group = data.groups.find((candidate) => candidate.key === where.group);
    if (!group.expanded) openers.get(where.group)(true);
    const frame = where.frame && group.items.find((item) => frameKey(item) === where.frame);
    if (frame && !frame.expanded) openers.get(where.group + "/" + where.frame)(true);
    const node = document.querySelector('.row[data-seq="' + seq + '"]');
    if (node) { node.scrollIntoView({block: "center"}); select(node); node.focus({preventScroll: true}); }
  }

  // A frame's key among its section's openers: a call by its call_id, a stream group by its key.
  function frameKey(item) {
    if (item.type === "call") return item.call_id;
    return item.type === "stream" ? item.key : null;
  }

  function index() {
    for (const group of data.groups) {
      for (const item of group.items) {
        const inner = item.type === "row" ? [item] : item.rows;
        for (const one of inner) {
          rows.set(one.seq, one);
          places.set(one.seq, {group: group.key, frame: frameKey(item)});
        }
      }
    }
  }

  function listen() {
    const main = document.getElementById("trace");
    main.addEventListener("click", (event) => {
      const node = event.target.closest(".row");
      if (node) select(node);
    });
    main.addEventListener("keydown", (event) => {
      const node = event.target.closest(".row");
      if (node && (event.key === "Enter" || event.key === " ")) { event.preventDefault(); select(node); }
    });
    document.addEventListener("keydown", (event) => { if (event.key === "Escape") closePanel(); });
    document.getElementById("panel-close").addEventListener("click", closePanel);
  }

  index();
  header();
  diagram();
  listen();
})();
