/* Answer boxes under the exercises on the website: a predict or investigate exercise is checked in
 * the page, without a kernel.
 *
 * Each exercise whose check has a page twin (lib/exercises/site.py, generated into
 * exercise_checks.js) gets a box and a Check button. The page computes what the check compares with
 * (COMPUTE: the twin of the check's `values`, with the shipped models running in the page, as the
 * explorers do; each chapter's in its lib/chapters/PART/UNIT/page.js, those several chapters share in
 * twins.js, assembled by the build into units.js), then applies the same rule as the library
 * (rules.js: lib/exercises/__init__.py's check_number, check_whole_number, check_choice) with the
 * same sentences (lib/messages.py and the twin's texts). Nothing the check compares against is
 * shipped: the class site's boxes work too. A write exercise says why it is a notebook exercise and how
 * to run it live; one whose check has no twin says how to run it live.
 */
import { el } from "./dom.js";
import { EXERCISE_CHECKS, SOLUTIONS } from "./exercise_checks.js";
import { loadModel } from "./model.js";
import { CourseError } from "./readout.js";
import { boxHint, judge } from "./rules.js";
import { COMPUTE } from "./units.js";
import * as smol from "./smollm2/client.js";

export { boxHint, judge, pyFormat, typedAnswer } from "./rules.js";

const BASE = new URL("./", import.meta.url);

const COMPUTED = new Map();

/** What the check of `decl` compares with, computed in the page (once: the models do not change). A
 *  check that reads several models gets them as a list, in its order. */
export function compute(decl) {
  if (decl.values) return Promise.resolve(decl.values);   // shipped by the default site: the page cannot compute them
  if (!COMPUTED.has(decl.check)) {
    const load = (name) => loadModel(new URL("models/", BASE).href, name);
    const work = (async () => {
      const model = decl.model === null || decl.model === undefined ? null
        : Array.isArray(decl.model) ? await Promise.all(decl.model.map(load)) : await load(decl.model);
      return await COMPUTE[decl.compute]({ ...decl.args, texts: decl.texts }, model);
    })();
    work.catch(() => COMPUTED.delete(decl.check));      // a failure is tried again at the next click
    COMPUTED.set(decl.check, work);
  }
  return COMPUTED.get(decl.check);
}

/** An own-text check (the learner's text, run by the real model the reader loads into the page): what its check
 *  compares with, computed afresh for each text. */
async function computeOwn(decl, text) {
  if (smol.real.state !== "ready") throw new CourseError(OWN_LOAD);
  const real = { run: (op, args) => smol.call(op, args).promise.catch((e) => { throw e.reader ? new CourseError(e.message) : e; }) };
  return COMPUTE[decl.compute]({ ...decl.args, texts: decl.texts, text }, null, real);
}

const OWN_LOAD = "this check runs SmolLM2 on your text: load the real model first (the button above), or run it in the notebook";

// ----------------------------------------------------------------------------- the page

const LIVE = SOLUTIONS === "hide"
  ? "Run it live: download this page's notebook (the download icon at the top of the page) and open it where you run notebooks (JupyterLab, your class's hub); its check runs there."
  : "Run it live: download this page's notebook (the download icon at the top of the page) and open it in JupyterLab, or open it on Binder (the rocket icon); its check runs there.";

// Why a write exercise is done in the notebook: what the learner writes is a Python function, and its
// check runs it on many inputs, awkward ones included; this page runs no Python.
const WRITE = "This is a notebook exercise: you write a Python function, and its check runs your function on "
  + "many inputs, awkward ones included, which needs Python; this page runs none. Read the task and the steps "
  + "here, and write and check the function in the notebook.";

// Why a predict or investigate exercise without a page twin has no box: the exercise says it is a notebook
// exercise (tests/browser/test_site_checks.py holds every such exercise to saying so).
const NOTEBOOK = "This is a notebook exercise: its answer comes from a computation you run in the notebook, which "
  + "this page does not run, so the page has no box to check it.";

function answerBox(exercise, label, decl) {
  const id = `course-answer-${label}`;
  const input = el("input", { type: "text", id, class: "course-answer", spellcheck: "false", autocomplete: "off",
    autocapitalize: "off", size: 16, "data-exercise": label, "aria-describedby": `${id}-hint` });
  const button = el("button", { type: "button", class: "course-check-button", text: "Check" });
  const out = el("p", { class: "course-verdict", role: "status", "aria-live": "polite", "data-verdict": "" });
  // An own-text check: a box for the learner's text above the answer, and the button that loads the real model.
  let own = null;
  if (decl.own) {
    own = el("input", { type: "text", id: `${id}-text`, class: "course-answer course-own-text", spellcheck: "false",
      autocomplete: "off", autocapitalize: "off", size: 40, "data-exercise-text": label });
  }
  const run = async () => {
    try {
      if (own) {
        if (own.value.trim() === "") throw new CourseError(`type your text in the box “${decl.own}” first`);
        out.dataset.verdict = ""; out.textContent = "Checking in the page…";
      } else if (!decl.values && !COMPUTED.has(decl.check)) { out.dataset.verdict = ""; out.textContent = "Checking in the page…"; }
      const v = own ? await computeOwn(decl, own.value) : await compute(decl);
      const result = judge(decl, input.value, v);
      out.dataset.verdict = result.verdict;
      out.textContent = "";
      out.append(el("strong", { text: result.ok ? "Correct" : result.verdict === "not answered" ? "Not answered yet" : "Not yet" }),
        `: ${result.message}`);
    } catch (e) {
      if (!(e instanceof CourseError)) console.error(e);
      out.dataset.verdict = "failed";
      // A reader's own text the model refuses (empty, too long, a character it cannot write): its sentence alone.
      const said = own && e instanceof CourseError;
      out.textContent = said ? `${e.message[0].toUpperCase()}${e.message.slice(1)}.` : `The check failed in this page: ${e.message}. ${LIVE}`;
    }
  };
  button.addEventListener("click", run);
  input.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
  const parts = [el("label", { for: id, text: "Your answer " }), input, button,
    el("p", { class: "course-answer-hint", id: `${id}-hint`, text: boxHint(decl) }), out];
  if (own) {
    const load = el("button", { type: "button", class: "course-real-load",
      text: "Load the real model (about 98 MB, kept by your browser) to check your own text" });
    load.addEventListener("click", () => smol.load(new URL("smollm2/", BASE).href));
    const status = el("span", { class: "course-note", role: "status" });
    smol.watch((r) => {
      load.hidden = r.state === "ready";
      load.disabled = r.state === "loading";
      status.textContent = r.state === "loading" && r.total ? ` ${smol.mb(r.loaded)} of ${smol.mb(r.total)}` : r.state === "failed" ? ` ${r.message}` : "";
    });
    own.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
    parts.unshift(el("div", { class: "course-own" }, [el("label", { for: own.id, text: `${decl.own} ` }), own, load, status]));
  }
  const box = el("div", { class: "course-check", "data-exercise": label }, parts);
  exercise.after(box);
  return box;
}

function liveNote(exercise, label, text) {
  const note = el("p", { class: "course-check course-live-note", "data-exercise": label, text });
  exercise.after(note);
}

export function startChecks(root = document) {
  const boxes = [];
  for (const exercise of root.querySelectorAll("div.exercise[id]")) {
    const label = exercise.id, classes = exercise.classList;
    const decl = EXERCISE_CHECKS[label];
    if (decl && decl.live) liveNote(exercise, label, `This site is a class's copy and ships no answer for this exercise. ${LIVE}`);
    else if (decl) boxes.push(answerBox(exercise, label, decl));
    else if (classes.contains("write")) liveNote(exercise, label, `${WRITE} ${LIVE}`);
    else if (classes.contains("predict") || classes.contains("investigate")) liveNote(exercise, label, `${NOTEBOOK} ${LIVE}`);
  }
  window.courseChecks = { ready: true, boxes, declarations: EXERCISE_CHECKS, judge, compute, solutions: SOLUTIONS };
  return boxes;
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => startChecks());
  else startChecks();
}
