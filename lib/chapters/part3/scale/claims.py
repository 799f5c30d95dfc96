"""The claims of the chapter `chapters/part3/scale.md`, each with its measurement."""
from __future__ import annotations

import numpy as np
import torch

import lib
from lib.analysis.inventory import file_model_facts, from_config, real_model_rows
from lib.analysis.search import model_dictionary
from lib.claims.registry import EVERY_RUN, NO_RUN, claim
from lib.claims.words import Q
from lib.shipped.presets import get_preset
from lib.content.prompt_sets import fixed_and_open
from lib.model import smollm2

SMOLLM2 = "SmolLM2-135M"   # its published configuration's name (the course runs the Instruct model of it)


def model_rows():
    """The published models of `lib.content.real_models` counted from their configurations, SmolLM2-135M (the
    model the course runs) counted from its GGUF file's tensors and metadata, and the calling-game model from
    its own configuration."""
    rows = {r.name: r for r in real_model_rows(from_config("calling game", get_preset("calling-game").model))}
    rows[SMOLLM2] = file_model_facts(SMOLLM2, smollm2.file_facts())
    return rows


@claim("scale.dictionary-share", "scale",
       "Counted from the published configurations (SmolLM2's from its file), the read-out dictionary is {gpt3_share:.2%} of GPT-3's "
       "{gpt3_params:,.0f} parameters and {toy_share:.1%} of the calling-game model's {toy_params:,.0f}, but "
       "{gpt2_share:.1%} of GPT-2 small's {gpt2_params:,.0f} ({gpt2_compute:.0%} of the multiply-adds of one token "
       "through its weight matrices) and {smol_share:.1%} of SmolLM2-135M-Instruct's; in GPT-2 XL {xl_share:.1%}, in "
       "Llama-2-7B {llama2_share:.1%} and in Llama-3-8B, whose vocabulary is four times Llama 2's, {llama3_share:.1%}",
       words={"is {gpt3_share:.2%} of GPT-3's {gpt3_params:,.0f} parameters and {toy_share:.1%} of the calling-game "
              "model's {toy_params:,.0f}, but {gpt2_share:.1%} of GPT-2 small's":
              (Q("gpt3_share") < 0.01, Q("toy_share") < 0.05, Q("gpt2_share") > 0.25)},
       seeded=False,
       note="counted from configurations, not from any trained weights: the dictionary is under 1% of GPT-3 and "
            "under 5% of the toy, but over a quarter of GPT-2 small",
       scope=NO_RUN)
def _(seed):
    rows = model_rows()
    names = {"gpt3": "GPT-3 175B", "toy": "calling game", "gpt2": "GPT-2 small", "smol": SMOLLM2,
             "xl": "GPT-2 XL", "llama2": "Llama-2-7B", "llama3": "Llama-3-8B"}
    out = {f"{k}_share": rows[n].unembed_share for k, n in names.items()}
    out.update({f"{k}_params": rows[n].parameters for k, n in names.items()})
    out["gpt2_compute"] = rows["GPT-2 small"].unembed_compute_share
    return out


@claim("scale.kv-cache", "scale",
       "Counted from the published configurations, keys and values kept per token of context, in 16-bit numbers: "
       "{gpt2_kib:.0f} KiB for GPT-2 small, "
       "{llama2_kib:.0f} KiB for Llama-2-7B, and {llama3_kib:.0f} KiB for Llama-3-8B, whose {llama3_heads:.0f} heads "
       "share {llama3_kv:.0f} sets of keys and values (grouped-query attention)",
       words={"{llama3_kib:.0f} KiB for Llama-3-8B, whose {llama3_heads:.0f} heads share {llama3_kv:.0f} sets of "
              "keys and values": Q("llama3_kib") < Q("llama2_kib") / 2},
       seeded=False,
       note="counted from configurations: grouped-query attention cuts Llama-3-8B's KV cache per token below half "
            "of Llama-2-7B's",
       scope=NO_RUN)
def _(seed):
    rows = model_rows()
    return {"gpt2_kib": rows["GPT-2 small"].kv_bytes_per_token / 1024, "llama2_kib": rows["Llama-2-7B"].kv_bytes_per_token / 1024,
            "llama3_kib": rows["Llama-3-8B"].kv_bytes_per_token / 1024, "llama3_heads": rows["Llama-3-8B"].heads,
            "llama3_kv": rows["Llama-3-8B"].kv_heads}


@claim("scale.last-step-is-search", "scale",
       "On {runs}, on {n:.0f} labelled prompts, the calling-game model's own next-token scores are the query's dot "
       "products with every dictionary column plus the bias, to within {max_err:max:.0e}, and the search's first "
       "word is the model's on all {agree:.0f}",
       words={"to within {max_err:max:.0e}": Q("max_err") < Q("bound"),
              "the search's first word is the model's on all {agree:.0f}": Q("agree").eq(Q("n"))},
       setup=("with every dictionary column",),
       others="the scores differ by {max_err:.0e} and the first words agree on {agree:.0f} of {n:.0f}",
       note="logits equal query . W_U + b_U on every labelled prompt of the seed (fixed and open kinds)",
       scope=EVERY_RUN, models=('calling-game',))
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
