"""The claims of the chapter `chapters/part3/scale.md`, each with its measurement."""
from __future__ import annotations

import numpy as np
import torch

import lib
from lib.analysis.scale import SHAPES
from lib.analysis.search import model_dictionary
from lib.claims.registry import claim
from lib.content.prompt_sets import fixed_and_open

GPT3_PARAMETERS = 175e9     # Brown et al. (2020), the model's own name


@claim("scale.dictionary-share", "scale",
       "GPT-3's dictionary, {gpt3_rows:,.0f} rows of {gpt3_d:,.0f} numbers, is {gpt3_share:.2%} of its 175 billion "
       "parameters; the calling-game model's, {toy_rows:.0f} rows of {toy_d:.0f}, is {toy_share:.0%} of its "
       "{toy_params:,.0f}",
       holds=lambda x: x["gpt3_share"] < 0.01 < x["toy_share"], seeded=False,
       note="the read-out dictionary is under 1% of GPT-3's parameters and over 1% of the toy's")
def _(seed):
    lm = lib.load("calling-game")
    v, d = SHAPES["GPT-3 (175B)"]
    tv, td = lm.model.cfg.vocab_size, lm.model.cfg.d_model
    params = sum(p.numel() for p in lm.model.parameters())
    return {"gpt3_rows": v, "gpt3_d": d, "gpt3_share": v * d / GPT3_PARAMETERS, "toy_rows": tv, "toy_d": td,
            "toy_share": tv * td / params, "toy_params": params}


@claim("scale.last-step-is-search", "scale",
       "On {n:.0f} labelled prompts, the calling-game model's own next-token scores are the query's dot products "
       "with every dictionary column plus the bias, to within {bound:.0e}, and the search's first word is the "
       "model's on all {agree:.0f}",
       holds=lambda x: x["max_err"] < x["bound"] and x["agree"] == x["n"],
       note="logits equal query . W_U + b_U on every labelled prompt of the seed (fixed and open kinds)")
def _(seed):
    lm = lib.load("calling-game")
    fixed, open_ = fixed_and_open(seed, lm.model.cfg.n_ctx)
    prompts = fixed + open_
    encoded = [lm.encode(p) for p in prompts]
    width = max(len(ids) for ids in encoded)
    pad = lm.vocab.id("<PAD>")
    batch = torch.tensor([ids + [pad] * (width - len(ids)) for ids in encoded])   # causal: padding is never read
    logits, cache = lm.model.run_with_cache(batch)
    last = torch.tensor([len(ids) - 1 for ids in encoded])
    rows = torch.arange(len(prompts))
    key = "ln_final" if lm.model.ln_final is not None else "resid_final"
    queries = cache[key][rows, last].double().numpy()                       # [prompt, d_model]
    own = logits[rows, last].double().numpy()                               # the model's own scores
    columns = np.array(list(model_dictionary(lm).values())).T               # [d_model, vocab]
    scores = queries @ columns + lm.model.b_U.detach().double().numpy()     # the search, by hand
    return {"n": len(prompts), "max_err": float(np.abs(scores - own).max()), "bound": 1e-4,
            "agree": int((scores.argmax(1) == own.argmax(1)).sum())}
