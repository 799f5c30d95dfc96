// Draws explorers' starting pictures for the book's build, with the renderer the pages use.
// Reads [[view, data], ...] as JSON on stdin; writes [html, ...] as JSON on stdout.
import { picture } from "../_assets/explorers/render.js";

let input = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => { input += chunk; });
process.stdin.on("end", () => {
  const out = JSON.parse(input).map(([view, data]) => (data ? picture(view, data) : ""));
  process.stdout.write(JSON.stringify(out));
});
