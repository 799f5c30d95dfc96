/* The page twins of the shapes-and-cache chapter: the KV-cache calculator's view and its
 * checks' computations.
 */
import { MAX_COUNT } from "../../../explorers/js/constants.js";
import { pyFloat, pyInt, pyParseFloat, pyRepr, pyStrip } from "../../../explorers/js/python.js";
import { require, say } from "../../../explorers/js/readout.js";

// lib.analysis.inventory's _shown: a long value cut to 20 characters and "...".
const shown = (text) => (text.length <= 24 ? text : `${text.slice(0, 20)}...`);
const KV_SIZES = [["layers", "layers"], ["context", "context (tokens)"], ["heads", "heads"], ["d_head", "d_head"]];

export const VIEWS = {
  kv_cache(_, v) {
    const sizes = KV_SIZES.map(([name, label]) => {
      const n = pyInt(v[name]);
      require(n !== null, say("box_whole", { label, got: pyRepr(pyStrip(v[name])) }));
      return n;
    });
    const text = pyStrip(v.bytes);
    const per = pyParseFloat(text);
    require(per !== null, say("box_number", { got: pyRepr(text) }));
    // lib.analysis.inventory.kv_cache_bytes: its checks (counts and bytes up to MAX_COUNT, values
    // shown as Python's repr, cut like its _shown), then 2 x the sizes x the bytes per number.
    const maximum = MAX_COUNT.toLocaleString("en-US");
    KV_SIZES.forEach(([name], i) => require(sizes[i] >= 1n && sizes[i] <= BigInt(MAX_COUNT),
      say("whole_count", { name, maximum, got: shown(String(sizes[i])) })));
    require(per > 0 && per <= MAX_COUNT, say("bytes_per_element", { maximum, got: shown(pyFloat(per)) }));
    const total = Number(sizes.reduce((a, b) => a * b, 2n)) * per;
    require(Number.isFinite(total), say("cache_overflow"));
    return { layers: String(sizes[0]), context: String(sizes[1]), heads: String(sizes[2]), d_head: String(sizes[3]),
      bytes: per, total };
  },
};

export const COMPUTE = {
  cacheTokens(a) {
    const perToken = (factor, bytes) => 2 * a.layers * a.heads * a.d_head * bytes * factor;
    const fit = (factor = 1, bytes = a.bytes) => Math.floor(a.budget / perToken(factor, bytes));
    return { expected: fit(), hints: [["keys_only", fit(0.5)], ["float32", fit(1, 4)],
      ["rounded_up", Math.ceil(a.budget / perToken(1, a.bytes))]] };
  },

  embeddingShare(a) {
    const share = (s) => s.vocab * s.d_model / s.total;
    const expected = share(a.seven_b);
    return { expected, hints: [["both", 2 * expected], ["gpt2", share(a.gpt2)], ["percent", 100 * expected]] };
  },
};
