"""The page's core modules held to the library in Node: the forward pass (model.js), the read-out
(readout.js: softmax with temperature, top-k then top-p, the seeded roll) and the vocabulary's messages
(vocab.js), each registered with `shared_twin` (tests/twin_contract.py) and run by tests/explorers/test_twins.py
in the same Node process as every view and check twin. The views hold these modules too, through what
they show; these hold them directly, on random prompts of every shipped model with heads and MLPs off.
"""
from __future__ import annotations

import random

import lib
from explorer_cases import random_roll
from twin_contract import outcome, shared_twin

MODELS = {"calling-game": 60, "hand-wired": 24, "zero-layer": 12, "induction": 12}   # model: random prompts


def roll(rng: random.Random, lm, i: int, longest: int | None = None) -> dict:
    """explorer_cases.random_roll for the page: the model named, the seed as text (a JavaScript number holds
    whole numbers exactly only up to 2**53)."""
    c = random_roll(rng, lm, i, longest)
    return dict(c, model=lm.name, seed=str(c["seed"]))


def by_turns(per_model: dict[str, list]) -> list:
    """The models' cases taken in turn (the first few cases of a twin, which the mutation test probes with,
    reach every model)."""
    rows = list(per_model.values())
    return [row[i] for i in range(max(map(len, rows))) for row in rows if i < len(row)]


@shared_twin("read-out", """async (site, c) => {
    const m = await site.loadModel(c.model), r = site.readout;
    const logits = m.promptLogits(m.encode(c.prompt), {heads: c.heads, mlps: c.mlps});
    return {heated: Array.from(r.softmax(logits, c.temperature)),
            probs: Array.from(r.reshape(logits, c.temperature, c.top_k, c.top_p)),
            pick: m.vocab.tokens[r.sample(logits, c.temperature, c.top_k, c.top_p, BigInt(c.seed))]};
}""", holds=("model.js", "readout.js"))
def read_out():
    """Every shipped model's next-token page at a temperature, then reshaped by top-k and top-p, and rolled:
    each probability to 1e-5, the same pick."""
    from lib.model.readout import prompt_logits, reshape, sample, softmax

    out = {}
    for name, count in MODELS.items():
        lm, rng = lib.load(name), random.Random(f"read-out {name}")
        out[name] = []
        for i in range(count):
            c = roll(rng, lm, i)

            def page(c=c, lm=lm):
                logits = prompt_logits(lm, c["prompt"], [tuple(h) for h in c["heads"]], c["mlps"])
                pick = sample(logits, c["temperature"], c["top_k"], c["top_p"], seed=int(c["seed"]))
                return {"heated": softmax(logits, c["temperature"]).tolist(),
                        "probs": reshape(logits, c["temperature"], c["top_k"], c["top_p"]).tolist(),
                        "pick": lm.vocab.tokens[pick]}
            out[name].append((c, outcome(page)))
    return by_turns(out)


@shared_twin("forward pass", """async (site, c) => {
    const m = await site.loadModel(c.model), run = m.run(m.encode(c.prompt), {heads: c.heads, mlps: c.mlps});
    return {stages: m.stageNames().map((name) => run.stages[name].map((row) => Array.from(row))),
            patterns: run.patterns.map((heads) => heads.map((rows) => rows.map((row) => Array.from(row)))),
            logits: Array.from(run.logitsAt(0))};
}""", holds=("model.js",), tol=1e-4)
def forward_pass():
    """Every residual stage and attention pattern at every position, and the first position's logits, to 1e-4
    (relative beyond 1: the residual stream reaches 30, which the library holds in float32, the page in doubles)."""
    from lib.analysis.lens import stage_names, stage_residuals

    out = []
    for i in range(3):
        for name in MODELS:
            lm, rng = lib.load(name), random.Random(f"forward pass {name} {i}")
            c = roll(rng, lm, i, longest=12)      # every position's every stage: short prompts

            def page(c=c, lm=lm):
                ids = lm.encode(c["prompt"])
                logits, cache = lm.model.run_with_cache(ids, [tuple(h) for h in c["heads"]], c["mlps"])
                stages = stage_residuals(lm.model, cache)
                return {"stages": [stages[s].tolist() for s in stage_names(lm.model)],
                        "patterns": [cache[f"blocks.{layer}.attn.pattern"].tolist() for layer in range(lm.model.cfg.n_layers)],
                        "logits": logits[0].tolist()}
            out.append((c, outcome(page)))
    return out


@shared_twin("seeded roll", """async (site, c) => ({
    splitmix: String(site.readout.splitmix64(BigInt(c.seed), c.n)),
    uniform: site.readout.uniform(BigInt(c.seed), c.n),
})""", holds=("readout.js",), tol=0.0)
def seeded_roll():
    """SplitMix64 read as a counter, and the number in [0, 1) it gives, exactly (the published test vector's
    seed among them)."""
    from lib.model.readout import Rolls, splitmix64

    out = []
    for seed in (0, 1, 42, 1234567, 2**53 + 1, 2**63 - 1):
        rolls = Rolls(seed)
        for n in range(3):
            out.append(({"seed": str(seed), "n": n},
                        {"result": {"splitmix": str(splitmix64(seed, n)), "uniform": rolls.next()}}))
    return out


@shared_twin("vocabulary", """async (site, c) => (await site.loadModel(c.model)).encode(c.prompt)""",
             holds=("vocab.js",))
def vocabulary():
    """A prompt read into token ids, or the command line's sentence for an unknown word (its suggestions
    chosen as difflib chooses them), an empty prompt or one too long."""
    out = {}
    for k, name in enumerate(MODELS):
        lm = lib.load(name)
        words = [lm.vocab.tokens[0], lm.vocab.tokens[-1]]
        texts = [" ".join(words), "pietro", "", "Tars", " ".join(words * lm.model.cfg.n_ctx), "chiamma", "x", "   ",
                 "<bos>", "Cefà", "kingg", "Queen"]
        texts = texts[k:] + texts[:k]          # the models' first cases, taken in turn, are of every kind
        out[name] = [({"model": name, "prompt": text}, outcome(lambda lm=lm, text=text: list(lm.encode(text))))
                     for text in texts]
    return by_turns(out)
