// The page twins run in Node, as the site serves them (tests/twin_contract.py writes the folder and the jobs).
//
// Reads one JSON object on stdin: {sites: [folder, ...], specs: [...], calls: {name: "async (site, c) => ..."},
// models: {name: "async (site) => real"}, jobs: [...]}, where each folder is a copy of the site's explorers
// folder (lib.explorers.web.install, export_site and the exercise checks' module: the page's modules, the shipped
// weights, the point sets, the stored files), each spec an explorer's declaration as the page reads it (its
// opening view in `default`), and each job one of
//   {site, kind: "view", spec, values}      an explorer's view, as page.js computes it: the context from views.js's
//                                            viewContext (with `real`, the real model its args name, where
//                                            `models` has it, else null: the page before a reader loads it),
//                                            VIEWS[view], then drawn
//   {site, kind: "check", decl, texts}       a check's twin, as checks.js computes and judges it (an own-text
//                                            check, with `real` and `text`: its computation on that text, run by
//                                            the real model `models[real]`)
//   {site, kind: "call", call, case}         a shared module's registered twin (calls[call])
// Writes [{result} | {error: a CourseError's message} | {crash: a stack}, ...] as JSON, one per job.
//
// The page fetches the site's files by URLs relative to its modules: here file: URLs, read from the folder.
// A fetch of anything else fails, as the browser tests refuse every host but the site's.
import { readFile } from "node:fs/promises";
import { fileURLToPath, pathToFileURL } from "node:url";

globalThis.fetch = async (resource) => {
  const url = new URL(typeof resource === "string" ? resource : resource.url ?? String(resource));
  if (url.protocol !== "file:") throw new TypeError(`the page asked for ${url.href}: a twin reads the site's own files only`);
  try {
    return new Response(await readFile(fileURLToPath(url)), { status: 200 });
  } catch (e) {
    if (e.code === "ENOENT") return new Response("not found", { status: 404, statusText: "Not Found" });
    throw e;
  }
};

// JSON as the browser tests read a page's values: typed arrays as lists, BigInts as numbers, and the numbers
// JSON cannot write as {"__float__": "NaN"} (tests/twin_contract.py reads them back).
const plain = (_, v) => (typeof v === "bigint" ? Number(v) : ArrayBuffer.isView(v) ? Array.from(v)
  : typeof v === "number" && !Number.isFinite(v) ? { __float__: String(v) } : v);

let input = "";
process.stdin.setEncoding("utf8");
for await (const chunk of process.stdin) input += chunk;
// Numbers JSON cannot write (a box given nan or inf) come as {"__float__": "NaN"}.
const { sites, specs, calls, models, jobs } = JSON.parse(input, (_, v) => (v && typeof v === "object" && !Array.isArray(v)
  && Object.keys(v).length === 1 && typeof v.__float__ === "string" ? Number(v.__float__) : v));

const loaded = new Map();
async function site(i) {
  if (!loaded.has(i)) {
    const base = pathToFileURL(sites[i].endsWith("/") ? sites[i] : `${sites[i]}/`);
    const load = (name) => import(new URL(name, base).href);
    const [views, checks, readout, render, model, twins] = await Promise.all(
      ["views.js", "checks.js", "readout.js", "render.js", "model.js", "twins.js"].map(load));
    loaded.set(i, { base, import: load, views, checks, readout, render, model, twins,
      loadModel: (name) => views.pageModel(name) });
  }
  return loaded.get(i);
}

const made = {};
const callOf = (name) => (made[name] ||= (0, eval)(`(${calls[name]})`));
const real = new Map();       // site and model -> the real model as page.js's liveModel gives it, once
function realOf(s, i, name) {
  const key = `${i} ${name}`;
  if (!real.has(key)) real.set(key, (0, eval)(`(${models[name]})`)(s));
  return real.get(key);
}

async function run(job) {
  const s = await site(job.site);
  if (job.kind === "view") {
    const spec = specs[job.spec], wanted = spec.args && spec.args.real ? spec.args.real.model : null;
    const context = { ...(await s.views.viewContext(spec)), real: wanted && models[wanted] ? await realOf(s, job.site, wanted) : null };
    const view = await s.views.VIEWS[spec.view](context, job.values, spec.args);
    s.render.picture(spec.view, view);          // every view can be drawn
    return JSON.parse(JSON.stringify(view, plain));
  }
  if (job.kind === "check") {
    // An own-text check: its computation on the learner's text, with the real model (checks.js computeOwn).
    const values = job.real
      ? await (await s.import("units.js")).COMPUTE[job.decl.compute]({ ...job.decl.args, texts: job.decl.texts,
        text: job.text }, null, await realOf(s, job.site, job.real))
      : await s.checks.compute(job.decl);
    const verdicts = job.texts.map((text) => {
      const r = s.checks.judge(job.decl, text, values);
      return [r.verdict, r.message];
    });
    const { decide, ...rest } = values;
    return { values: decide ? null : JSON.parse(JSON.stringify(rest, plain)), verdicts };
  }
  if (job.kind === "call") return JSON.parse(JSON.stringify(await callOf(job.call)(s, job.case), plain));
  throw new Error(`unknown job ${job.kind}`);
}

const out = [];
for (const job of jobs) {
  let entry;
  try {
    entry = { result: await run(job) };
  } catch (e) {
    const s = loaded.get(job.site);
    entry = s && e instanceof s.readout.CourseError ? { error: e.message } : { crash: String(e && e.stack || e) };
  }
  out.push(entry);
}
process.stdout.write(JSON.stringify(out));
