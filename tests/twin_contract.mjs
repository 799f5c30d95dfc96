// The page twins run in Node, as the site serves them (tests/twin_contract.py writes the folder and the jobs).
//
// Reads one JSON object on stdin: {sites: [folder, ...], calls: {name: "async (site, c) => ..."}, jobs: [...]},
// where each folder is a copy of the site's explorers folder (lib.explorers.web.install, export_site and the
// exercise checks' module: the page's modules, the shipped weights, the point sets, the stored files), and
// each job one of
//   {site, kind: "view", view, model, values, args}   an explorer's view, as page.js computes it: the context
//                                                      from views.js's viewContext, VIEWS[view], then drawn
//   {site, kind: "check", decl, texts}                 a check's twin, as checks.js computes and judges it
//   {site, kind: "call", call, case}                   a shared module's registered twin (calls[call])
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
const { sites, calls, jobs } = JSON.parse(input, (_, v) => (v && typeof v === "object" && !Array.isArray(v)
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

async function run(job) {
  const s = await site(job.site);
  if (job.kind === "view") {
    const context = await s.views.viewContext({ model: job.model });
    const view = await s.views.VIEWS[job.view](context, job.values, job.args);
    s.render.picture(job.view, view);          // every view can be drawn
    return JSON.parse(JSON.stringify(view, plain));
  }
  if (job.kind === "check") {
    const values = await s.checks.compute(job.decl);
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
