/* The explorers on the website: controls from each explorer's declaration, the model run in the page.
 *
 * Each explorer is a <div class="course-explorer course-live"> holding its declaration (JSON written
 * by lib/explorers/page.py: the controls, the model, the view and its fixed arguments) and its
 * starting picture, drawn when the book was built. This script builds the controls the declaration
 * lists, fetches the model's weights (once per site: the browser caches them), and on every move
 * computes the view in the page (views.js) and draws it (render.js), the renderer JupyterLab uses.
 * A value the library would refuse gets the library's sentence in the message line, and the last
 * good picture stays. Nothing is fetched from outside the site.
 */
import { CourseError } from "./readout.js";
import { realPatterns } from "./real.js";
import { draw, picture } from "./render.js";
import { VIEWS, pageModel, viewContext } from "./views.js";
import { points } from "./twins.js";
import { el } from "./dom.js";
import { pyFloat, pyParseFloat } from "./python.js";
import { explorerIds, readState, shareBar, writeState } from "./share.js";
import * as smol from "./smollm2/client.js";

const BASE = new URL("./", import.meta.url);
let counter = 0;

// ----------------------------------------------------------------------------- controls

/** What a "number" control's box holds, as the view reads it: the number Python's float() reads in the
 *  text (nan, inf, 0 and negatives included: the view says what is allowed), else the text itself
 *  (lib.explorers.boxes.parse_number). */
export function parseNumber(text) {
  const value = pyParseFloat(String(text));
  return value === null ? String(text) : value;
}

/** The index of the stop nearest `value` in the logarithm; the end beyond it; the first stop for a value
 *  that is no positive number (lib.explorers.boxes.nearest_stop). */
export function nearestStop(stops, value) {
  if (typeof value !== "number" || !(value > 0)) return 0;
  if (value >= stops[stops.length - 1]) return stops.length - 1;
  const target = Math.log(value);
  let best = 0;
  for (let i = 1; i < stops.length; i++) if (Math.abs(Math.log(stops[i]) - target) < Math.abs(Math.log(stops[best]) - target)) best = i;
  return best;
}

/** A text box's width in characters: a prompt's box as wide as the longest prompt it offers (the CSS
 *  keeps it inside the screen), other text 12. lib.explorers.kernel.box_chars is its kernel twin. */
export function boxWidth(c) {
  if (c.kind !== "prompt") return 12;
  return Math.max(34, ...[c.default, ...(c.options || [])].map((p) => String(p).length + 2));
}

/** A box the view refused (aria-invalid: announced, and outlined by explorers.css), or no longer. */
function invalid(node, wrong) {
  if (wrong) node.setAttribute("aria-invalid", "true"); else node.removeAttribute("aria-invalid");
}

/** One control from its declaration: {node to place, read() -> value, input element(s)}. */
function buildControl(c, uid, model, onChange) {
  const id = `${uid}-${c.name}`;
  // The label holds only its words (a control inside its label would lend it its value as a name).
  const label = (control, extra = []) => el("span", { class: "course-control" }, [
    el("label", { class: "course-label", for: id, text: c.label }), control, ...extra]);
  const described = { title: c.description, "aria-description": c.description, "data-control": c.name, id };

  if (c.kind === "toggle") {
    const button = el("button", { type: "button", class: "course-toggle", "aria-pressed": String(Boolean(c.default)),
      ...described, text: c.label });
    button.addEventListener("click", () => {
      button.setAttribute("aria-pressed", button.getAttribute("aria-pressed") === "true" ? "false" : "true");
      onChange();
    });
    return { node: button, read: () => button.getAttribute("aria-pressed") === "true",
      set: (v) => button.setAttribute("aria-pressed", String(v === true)) };
  }

  if (c.kind === "number") {
    // A slider over the common range and a box that takes any number, linked both ways (as in a kernel).
    const textOf = (v) => {
      const i = typeof v === "number" ? c.options.indexOf(v) : -1;
      return i >= 0 ? c.shown[i] : typeof v === "number" ? pyFloat(v) : String(v);
    };
    const at = nearestStop(c.options, c.default);
    const input = el("input", { type: "range", min: 0, max: c.options.length - 1, step: 1, value: at,
      "aria-valuetext": c.shown[at], ...described });
    const box = el("input", { type: "text", class: "course-number", value: textOf(c.default), size: c.width || 8,
      spellcheck: "false", autocomplete: "off", autocapitalize: "off", inputmode: "decimal",
      "aria-label": `${c.label} (typed)`, title: c.description, "data-control-box": c.name });
    const slide = (i) => { input.value = i; input.setAttribute("aria-valuetext", c.shown[i]); };
    input.addEventListener("input", () => {
      box.value = c.shown[+input.value];
      input.setAttribute("aria-valuetext", c.shown[+input.value]);
      onChange();
    });
    // A typed number moves the slider to its stop; text that is no positive number leaves it where the
    // picture is (the message says what is wrong, and `mark` puts the slider at the value drawn).
    const follow = () => { const v = parseNumber(box.value); if (typeof v === "number" && v > 0) slide(nearestStop(c.options, v)); };
    box.addEventListener("input", () => { follow(); onChange(); });
    const set = (v) => { box.value = textOf(v); follow(); };
    const mark = (wrong, drawn) => {
      invalid(box, wrong);
      if (wrong) slide(nearestStop(c.options, drawn));
    };
    return { node: label(input, [box]), read: () => parseNumber(box.value), set, mark };
  }

  if (c.kind === "choice") {
    const at = c.options.indexOf(c.default);
    if (c.slider) {
      const input = el("input", { type: "range", min: 0, max: c.options.length - 1, step: 1, value: at,
        "aria-valuetext": c.shown[at], ...described });
      const out = el("output", { for: id, text: c.shown[at] });
      input.addEventListener("input", () => {
        out.textContent = c.shown[+input.value];
        input.setAttribute("aria-valuetext", c.shown[+input.value]);
        onChange();
      });
      const set = (v) => {
        const i = c.options.findIndex((o) => JSON.stringify(o) === JSON.stringify(v));
        if (i < 0) return;
        input.value = i;
        out.textContent = c.shown[i];
        input.setAttribute("aria-valuetext", c.shown[i]);
      };
      return { node: label(input, [out]), read: () => c.options[+input.value], set };
    }
    const select = el("select", described, c.options.map((o, i) => el("option", { value: i, selected: i === at, text: c.shown[i] })));
    select.addEventListener("change", onChange);
    // A value from the address (JSON) or from a click on the machine's map (its option's text).
    const set = (v) => {
      const i = c.options.findIndex((o) => JSON.stringify(o) === JSON.stringify(v) || String(o) === String(v));
      if (i >= 0) select.selectedIndex = i;
    };
    return { node: label(select), read: () => c.options[select.selectedIndex], set };
  }

  if (c.precomputed) {
    // What the site's build computed, as a menu (in a kernel the same control takes any text).
    const at = Math.max(0, c.options.indexOf(c.default));
    const select = el("select", described, c.options.map((o, i) => el("option", { value: i, selected: i === at, text: o })));
    select.addEventListener("change", onChange);
    const set = (v) => { const i = c.options.indexOf(String(v)); if (i >= 0) select.selectedIndex = i; };
    return { node: label(select), read: () => c.options[select.selectedIndex], set };
  }

  // Text of some kind: a prompt, a token, or a value the view parses.
  const input = el("input", { type: "text", value: c.default, placeholder: c.placeholder || null, spellcheck: "false",
    autocomplete: "off", autocapitalize: "off", size: c.width || boxWidth(c), ...described });
  input.addEventListener("input", onChange);
  const set = (v) => { input.value = typeof v === "string" ? v : input.value; };
  const mark = (wrong) => invalid(input, wrong);
  const extra = [];
  const suggestions = c.kind === "token" && model ? model.vocab.tokens : c.options || [];
  if (suggestions.length) {
    const list = el("datalist", { id: `${id}-list` }, suggestions.map((s) => el("option", { value: s })));
    input.setAttribute("list", list.id);
    extra.push(list);
  }
  const node = label(input, extra);
  if (c.kind === "prompt" && model) {
    // The vocabulary as buttons: a prompt can be built without typing.
    const add = (word) => { input.value = (input.value.trim() ? input.value.trim() + " " : "") + word; onChange(); };
    const back = el("button", { type: "button", class: "course-token", title: "remove the last word", text: "⌫ last word" });
    back.addEventListener("click", () => { input.value = input.value.trim().split(/\s+/).slice(0, -1).join(" "); onChange(); });
    const buttons = model.vocab.tokens.map((t) => {
      const b = el("button", { type: "button", class: "course-token", title: `add ${t} to the prompt`, text: t });
      b.addEventListener("click", () => add(t));
      return b;
    });
    const palette = el("details", { class: "course-palette" }, [el("summary", { text: "add a token" }), back, ...buttons]);
    return { node: el("div", { class: "course-prompt" }, [node, palette]), read: () => input.value, set, mark };
  }
  return { node, read: () => input.value, set, mark };
}

// ----------------------------------------------------------------------------- the real model, on request

/** One request to the real model (worker.js's operations): its answer; null if the reader moved on meanwhile
 *  (the request is then cancelled at its next step); a reader's mistake (an empty text, one too long) as the
 *  CourseError the message line shows. */
function runLive(stale, op, args, onPartial) {
  const job = smol.call(op, args, onPartial && ((r) => { if (!stale()) onPartial(r); }));
  const timer = setInterval(() => { if (stale()) job.cancel(); }, 50);
  return job.promise.then((r) => (stale() ? null : r), (e) => {
    if (e.cancelled) return null;
    throw e.reader ? new CourseError(e.message) : e;
  }).finally(() => clearInterval(timer));
}

/** The bar over a real-model explorer: a button that loads SmolLM2 into the page (its size said), the
 *  download's progress in bytes, then what the page runs; one sentence if it cannot. `loaded` is called once
 *  the model is ready (whichever explorer's button loaded it). */
function liveBar(live, ownText, loaded) {
  const size = live.bytes ? smol.mb(live.bytes) : "about 98 MB";
  const button = el("button", { type: "button", class: "course-real-load",
    text: `Load the real model (${size}, kept by your browser) to run SmolLM2 on your own text` });
  const status = el("p", { class: "course-note course-real-status", role: "status", "aria-live": "polite" });
  if (ownText) status.textContent = "This link holds a text of its own: load the real model to run it.";
  const bar = el("div", { class: "course-real" }, [button, status]);
  let done = false;
  button.addEventListener("click", () => smol.load(new URL("smollm2/", BASE).href));
  smol.watch((r) => {
    if (r.state === "loading") {
      button.disabled = true;
      const verb = r.cached && r.cached === r.loaded ? "Reading SmolLM2 from your browser's cache" : "Downloading SmolLM2";
      status.textContent = r.total ? `${verb}: ${smol.mb(r.loaded)} of ${smol.mb(r.total)}` : `${verb}…`;
    } else if (r.state === "ready") {
      button.hidden = true;
      const from = r.info.fromCache === r.info.bytes ? "from your browser's cache" : "downloaded";
      status.textContent = `SmolLM2 runs in this page (${smol.mb(r.info.bytes)} ${from} in ${r.info.seconds.toFixed(1)} s): ` +
        `type any text of up to ${live.max_tokens || r.info.maxTokens} tokens.`;
      if (!done) { done = true; setTimeout(loaded); }
    } else if (r.state === "failed") {
      button.disabled = false;
      status.textContent = r.message;
    }
  });
  return bar;
}

// ----------------------------------------------------------------------------- one explorer

// Pictures drawn again for the room they have, one per task: each figure's latest request, in the order asked.
const REDRAWS = new Map();
function redrawSoon(figure, fn) {
  const first = REDRAWS.size === 0;
  REDRAWS.delete(figure);
  REDRAWS.set(figure, fn);
  if (first) setTimeout(function next() {
    const [[key, todo]] = REDRAWS;
    REDRAWS.delete(key);
    todo();
    if (REDRAWS.size) setTimeout(next);
  });
}

async function start(root, id) {
  const spec = JSON.parse(root.querySelector("script.course-explorer-spec").textContent);
  const uid = `cx${++counter}`;
  // What the view computes with (the declaration's model, the point sets), as the tests' Node contract gets it.
  const base = await viewContext(spec), { model } = base;
  const figure = root.querySelector(".course-figure");
  // "Where this sits" holds for some pictures only (the game model's embedding table, not MiniLM's rows).
  let where = null;
  const showWhere = (values) => {
    if (!where || !spec.where_if) return;
    const v = spec.where_if.name in values ? values[spec.where_if.name] : spec.args[spec.where_if.name];
    where.hidden = !spec.where_if.values.includes(v);
  };
  const message = el("p", { class: "course-message", role: "alert" });
  const controls = {};
  let pending = null, busy = false, explorer = null;
  // The room the picture has, as the browser last laid it out: read on a resize, never in a move
  // (asking for it there would make the browser lay the page out before drawing).
  // The starting picture was drawn by the build for 640 px: when the room the figure has differs (a
  // phone, a wide screen), or changes (a phone turned), the picture on show is drawn again for it.
  let width, drawnAt = 640;
  new ResizeObserver(() => {                      // laid out already: reading the width costs nothing
    width = figure.clientWidth;
    if (!width || Math.abs(width - drawnAt) < 8 || busy) return;
    // Drawn again in a task of its own (`redrawSoon`): the observer hears every figure of the page in one callback,
    // and four pictures drawn there at once (the ablation page's) were one long task of the page's load.
    redrawSoon(figure, () => {
      const shown = explorer && explorer.drawn ? explorer.drawn.view : spec.default;   // explorer: null until started
      if (!shown || busy || !width || Math.abs(width - drawnAt) < 8) return;
      try {
        draw(figure, spec.view, shown, { width });
        drawnAt = width;
        if (explorer) explorer.drawn = { view: shown, width };
      } catch (e) { console.error(e); }
    });
  }).observe(figure);

  // The values of the picture on show: a box the view refuses falls back to its value here.
  let good = null;
  // The real model (SmolLM2), for an explorer that can run it once the reader loads it (args.real): until then
  // its text controls are the menu of stored prompts; once it is loaded, boxes that take any text.
  const live = spec.args && spec.args.real ? spec.args.real : null;
  let realBar = null, ownText = null;
  const liveModel = (stale = () => false) => (live && smol.real.state === "ready"
    ? { info: smol.real.info, run: (op, args, onPartial = null) => runLive(stale, op, args, onPartial) } : null);
  const labelOf = (name) => (spec.rows.flat().find((c) => c.name === name) || { label: name }).label;
  async function withoutOneBox(context, values, error) {
    if (!good) return [null, null, values];
    for (const name of Object.keys(values)) {
      if (JSON.stringify(values[name]) === JSON.stringify(good[name])) continue;
      const tried = { ...values, [name]: good[name] };
      try {
        const view = await VIEWS[spec.view](context, tried, spec.args);
        const kept = typeof good[name] === "number" ? pyFloat(good[name]) : String(good[name]).trim() || "blank";
        // The box is named, unless the sentence opens with its name already ("top-p must lie in...").
        const said = error.message.startsWith(labelOf(name)) ? error.message : `${labelOf(name)}: ${error.message}`;
        return [{ name, text: `${said}. The picture keeps the last ${labelOf(name)} that worked (${kept}); ` +
          "the other controls still work." }, view, tried];
      } catch (e) {
        if (!(e instanceof CourseError)) throw e;
      }
    }
    return [null, null, values];
  }

  let generation = 0;
  async function update() {
    // Moves that arrive while the page is computing collapse into one more update; a view computed
    // in steps (the patching grid) stops at its next step, its picture now stale.
    if (busy) { pending = true; generation++; return; }
    busy = true;
    const values = Object.fromEntries(Object.entries(controls).map(([name, c]) => [name, c.read()]));
    const mine = generation;
    try {
      const t0 = performance.now();
      // A view computed in steps draws each partial view as it comes (`progress`).
      const progress = (partial) => {
        draw(figure, spec.view, partial, { width });
        message.textContent = "";
        if (explorer.firstDrawn === null) explorer.firstDrawn = performance.now();
      };
      const stale = () => generation !== mine;
      const context = { ...base, progress, stale, real: liveModel(stale) };
      let view, wrong = null, drawnValues = values;
      try {
        view = await VIEWS[spec.view](context, values, spec.args);
      } catch (e) {
        if (!(e instanceof CourseError)) throw e;
        // One box the view refuses must not hold the others up: the picture is drawn with that box's
        // last good value, and the message names the box. (Several wrong at once: the first's message.)
        [wrong, view, drawnValues] = await withoutOneBox(context, values, e);
        if (!wrong) throw e;
      }
      const t1 = performance.now();
      for (const [name, c] of Object.entries(controls)) if (c.mark) c.mark(name === (wrong && wrong.name), good ? good[name] : undefined);
      if (wrong) message.textContent = wrong.text;
      if (view !== null) {
        good = drawnValues;
        draw(figure, spec.view, view, { width });      // before the first resize report: the build's width
        if (width) drawnAt = width;
        if (!wrong) message.textContent = "";
        showWhere(drawnValues);
        explorer.timing = [t1 - t0, performance.now() - t1];
        explorer.drawn = { view, width };               // what the figure shows (the tests redraw it afresh)
        // The address follows the picture, once the moves pause (a slider's drag writes it once).
        clearTimeout(explorer.sharing);
        explorer.sharing = setTimeout(() => { writeState(id, declared, drawnValues); share.refresh(); }, 200);
      }
    } catch (e) {
      if (!(e instanceof CourseError)) { console.error(e); message.textContent = `This explorer failed: ${e.message}`; }
      else message.textContent = e.message;
    } finally {
      busy = false;
      if (pending) { pending = null; update(); } else explorer.settled += 1;     // every move answered
    }
  }

  // A part of a picture marked data-choose="control=value" (the machine's map), or several such pairs
  // joined by "&" (a cell of the patching grid: its row and its position), sets those controls when clicked.
  const choose = (event) => {
    const target = event.target.closest && event.target.closest("[data-choose]");
    if (!target || (event.type === "keydown" && event.key !== "Enter" && event.key !== " ")) return;
    if (event.type === "keydown") event.preventDefault();      // Space presses the part, not scrolls the page
    let changed = false;
    for (const pair of target.getAttribute("data-choose").split("&")) {
      const at = pair.indexOf("="), name = pair.slice(0, at), value = pair.slice(at + 1);
      if (at > 0 && controls[name] && controls[name].set) { controls[name].set(value); changed = true; }
    }
    if (changed) update();
  };
  // A part the keyboard reached (its tabindex) is pressed with Enter or Space, as a click presses it.
  figure.addEventListener("click", choose);
  figure.addEventListener("keydown", choose);
  // A control that follows a choice (an axis written in the chosen word set's words) is reset to its
  // value for the new option when that choice changes.
  const followers = (name) => spec.rows.flat().filter((c) => c.follows && c.follows.control === name);
  const moved = (c) => () => {
    for (const f of followers(c.name)) controls[f.name].set(f.follows.values[String(controls[c.name].read())]);
    return update();
  };
  const rows = spec.rows.map((row) => el("div", { class: "course-controls" }, row.map((c) => {
    controls[c.name] = buildControl(c, uid, model, followers(c.name).length ? moved(c) : update);
    return controls[c.name].node;
  })));
  // One computation of the starting view, not drawn (the build drew it): the data it needs (a point
  // set) is fetched and the code is warm before the reader's first move.
  const declared = spec.rows.flat();
  // Settings the page's address holds for this explorer (a shared link) replace the defaults.
  const restored = readState(id, declared);
  for (const [name, value] of Object.entries(restored)) controls[name].set(value);
  // A shared link may hold a reader's own text, which only the real model can run: kept until it is loaded.
  if (live) {
    const own = Object.entries(restored).filter(([name, value]) => live.texts.includes(name) &&
      !(declared.find((c) => c.name === name).options || []).includes(String(value)));
    if (own.length) ownText = Object.fromEntries(own);
  }
  const defaults = Object.fromEntries(declared.map((c) => [c.name, c.default]));
  try {
    // `starting`: a view whose data only a move needs (the induction explorer's checkpoints) may answer
    // null here and ask for that data `later`, once every explorer of the page is ready.
    await VIEWS[spec.view]({ ...base, starting: true, later, real: null }, defaults, spec.args);
    good = defaults;
  } catch (e) {
    // A starting value the page refuses shows its message at the first move, as in a kernel.
  }
  const panel = el("div", { class: "course-panel" }, [...rows]);
  if (live) {
    realBar = liveBar(live, ownText, () => {
      // Loaded: each text control becomes a box that takes any text ("Your text"), holding the text on show.
      live.texts.forEach((name, i) => {
        const c = declared.find((d) => d.name === name), old = controls[name];
        const value = ownText && name in ownText ? ownText[name] : old.read();
        const box = buildControl({ ...c, kind: "text", precomputed: false, options: [],
          label: (live.labels || [])[i] || `Your ${c.label}`, width: 48 }, uid, null, update);
        box.set(value);
        old.node.replaceWith(box.node);
        controls[name] = box;
      });
      // The picture on show stays (the model computes the same numbers for a prompt of the menu): only a text
      // of the reader's own, from a shared link, is run now.
      if (ownText) { ownText = null; update(); }
    });
    panel.prepend(realBar);
  }
  if (spec.note) panel.append(el("p", { class: "course-note", text: spec.note }));
  if (spec.where) {
    where = el("p", { class: "course-where" }, [
      el("a", { href: new URL("../../chapters/part1/index.html#the-machine-at-a-glance", BASE).href, text: "Where this sits" }),
      ` on the machine: ${spec.where}`]);
    panel.append(where);
    showWhere({ ...defaults, ...restored });
  }
  panel.append(message);
  root.insertBefore(panel, figure);
  const share = shareBar(figure, id, el);
  figure.after(share.bar);
  root.classList.add("course-live-ready");
  // The other point sets a control can choose are fetched after the start, not at the reader's move.
  for (const c of spec.rows.flat()) if (c.name === "points") c.options.forEach((name) => points(name).catch(() => {}));
  explorer = { root, spec, id, update, controls, timing: null, firstDrawn: null, settled: 0 };
  if (Object.keys(restored).length) await update();     // the shared picture, drawn over the built one
  return explorer;
}

// ----------------------------------------------------------------------------- the page

const state = { ready: false, readyAt: null, explorers: [], later: [] };
window.courseExplorers = state;

// Work the views ask for once the page is ready (`later`): queued while the explorers start, begun
// when they all have; `state.later` holds their promises (the benchmark waits for them before timing moves).
const waiting = [];
function later(fn) {
  if (state.ready) state.later.push(Promise.resolve().then(fn).catch(() => {}));
  else waiting.push(fn);
}

/** One update of an explorer, from reading its controls to the new picture laid out:
 *  [total, computing the view, drawing it] in ms. */
async function timed(ex) {
  const t = performance.now();
  await ex.update();
  void ex.root.querySelector(".course-figure").offsetHeight;    // the layout of the new picture
  const [compute, draw] = ex.timing || [0, 0];
  return [performance.now() - t, compute, performance.now() - t - compute];
}

/** Times the page's own updates (site_bench.py): every prompt length up to the context, and a move
 *  of each control, for every explorer that runs a model. Returns {moves, p95_ms, max_ms}. */
state.bench = async function bench(rounds = 3) {
  // Moves are timed on a page that has loaded and been drawn once, as a reader's first move meets
  // it: not charged with the layout of what the theme and MathJax added to the page after the start.
  if (document.readyState !== "complete") await new Promise((done) => window.addEventListener("load", done, { once: true }));
  await new Promise((done) => requestAnimationFrame(() => setTimeout(done)));
  await Promise.all(state.later);     // what the page fetches after it is ready (a move is timed, not a download)
  const times = [];
  for (const ex of state.explorers) {
    const prompt = ex.root.querySelector('[data-control="prompt"]');
    const model = await pageModel(ex.spec.model);
    const inputs = [...ex.root.querySelectorAll("[data-control]")];
    for (let r = 0; r < rounds; r++) {
      if (prompt && model) {
        for (let n = 1; n <= model.cfg.n_ctx; n++) {
          const words = Array.from({ length: n }, (_, i) => model.vocab.tokens[(7 * i + 3 * r + n) % model.vocab.size]);
          prompt.value = words.join(" ");
          times.push(await timed(ex));
        }
        prompt.value = ex.spec.rows.flat().find((c) => c.name === "prompt").default;
      }
      for (const input of inputs) {
        if (input === prompt) continue;
        // The control moved by hand (no event: the timing covers exactly one update).
        if (input.tagName === "BUTTON") input.setAttribute("aria-pressed", input.getAttribute("aria-pressed") === "true" ? "false" : "true");
        else if (input.type === "range") {
          input.value = String((+input.value + 1) % (+input.max + 1));
          // A number's slider writes its box, which holds the value the view reads.
          const box = input.parentElement.querySelector("input.course-number");
          const c = ex.spec.rows.flat().find((d) => d.name === input.dataset.control);
          if (box && c) box.value = c.shown[+input.value];
        }
        else if (input.tagName === "SELECT") input.selectedIndex = (input.selectedIndex + 1) % input.options.length;
        // A text box: its own value again (the update is timed all the same).
        times.push(await timed(ex));
      }
    }
  }
  const p95 = (xs) => { xs.sort((a, b) => a - b); return xs[Math.max(0, Math.ceil(0.95 * xs.length) - 1)] || 0; };
  return { moves: times.length, p95_ms: p95(times.map((t) => t[0])), compute_p95_ms: p95(times.map((t) => t[1])),
    draw_p95_ms: p95(times.map((t) => t[2])), max_ms: Math.max(0, ...times.map((t) => t[0])) };
};

async function startAll() {
  const roots = [...document.querySelectorAll(".course-explorer.course-live")];
  const ids = explorerIds(roots.map((root) => ({ view: root.dataset.view })));
  const started = await Promise.all(roots.map((root, i) => start(root, ids[i]).catch((e) => {
    console.error("course explorer not started:", e);
    return null;
  })));
  state.explorers = started.filter(Boolean);
  state.readyAt = performance.now();
  state.ready = true;
  waiting.splice(0).forEach(later);
  // Once the page is idle, each picture is made once without being drawn: the renderer's code is
  // compiled, and what it makes on first use (a number formatter) made, before the reader's first move.
  const warm = () => state.explorers.forEach((ex) => { try { picture(ex.spec.view, ex.spec.default); } catch (e) { /* drawn at the move */ } });
  if (window.requestIdleCallback) requestIdleCallback(warm, { timeout: 2000 }); else setTimeout(warm, 200);
}

// The weights this page preloads (course_explorers.py writes a preload link per model it runs) are
// read into models now, while the rest of the page is still arriving: when the document is parsed,
// the explorers start at once, before the theme's deferred scripts and MathJax take the thread.
// The same for the point set a map starts with, into the one cache the views and the checks read (twins.js).
// A failure is met again, and shown, at the start.
const preloaded = (ext) => [...document.querySelectorAll(`link[rel="preload"][href$=".${ext}"]`)].map((link) => {
  const path = new URL(link.href).pathname;
  return [path.split("/").slice(-2, -1)[0], decodeURIComponent(path.split("/").pop().slice(0, -ext.length - 1))];
});
for (const [, name] of preloaded("safetensors")) pageModel(name).catch(() => {});
for (const [folder, name] of preloaded("json")) if (folder === "points") points(name).catch(() => {});
// The real model's stored patterns' index too (lib.chapters.part1.ablation.explorers).
for (const [folder, name] of preloaded("json")) if (folder === "real") realPatterns(`${folder}/${name}`).catch(() => {});

// Loaded async: start as soon as the document is parsed, not after the theme's deferred scripts.
if (document.readyState === "loading") {
  document.addEventListener("readystatechange", function once() {
    document.removeEventListener("readystatechange", once);
    startAll();
  });
} else startAll();
