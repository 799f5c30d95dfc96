// Draws explorers' starting pictures for the book's build, with the renderer the pages use.
// Reads [[view, data], ...] as JSON on stdin; writes [html, ...] as JSON on stdout. Its argument is
// the renderer as the site installs it (beside the constants module the build generates).
import { pathToFileURL } from "node:url";

const { picture } = await import(pathToFileURL(process.argv[2]).href);

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(([view, data]) => (data ? picture(view, data) : ""));
  process.stdout.write(JSON.stringify(out));
});
