"""The claims of the chapter `chapters/part1/shapes-and-cache.md`, each with its measurement."""
from __future__ import annotations

from lib.chapters.part1.shapes_and_cache import smol_shapes
from lib.claims.registry import THIS_RUN, claim
from lib.claims.words import Q

claim("shapes-and-cache.smol-shapes", "shapes-and-cache",
      "SmolLM2's file stores {tensors:.0f} tensors holding {file_params:,.0f} numbers, and the inventory's count "
      "from the sizes in its header, with a gated MLP, RMSNorm, no biases, no position table and the unembedding "
      "tied to the embedding, gives {formula_params:,.0f}: the same",
      words={"with a gated MLP, RMSNorm, no biases, no position table and the unembedding tied to the embedding, gives "
             "{formula_params:,.0f}: the same": Q("file_params").eq(Q("formula_params"))}, seeded=False,
      note="the parameter count from SmolLM2's sizes equals the count of numbers its GGUF file stores",
      scope=THIS_RUN)(lambda seed: smol_shapes.numbers())

claim("shapes-and-cache.smol-gqa", "shapes-and-cache",
      "In each of SmolLM2's {layers:.0f} layers, W_Q has {q_rows:.0f} rows ({heads:.0f} query heads of {d_head:.0f}) "
      "but W_K and W_V only {k_rows:.0f} ({kv_heads:.0f} key/value heads): each key/value head serves "
      "{group:.0f} query heads. So a token adds {per_token:,.0f} bytes to the KV cache in float32, where "
      "{heads:.0f} heads with keys and values of their own would add {per_token_full:,.0f}; at its full context of "
      "{n_ctx:,.0f} tokens the cache takes {cache_ctx_mb:,.0f} MB instead of {cache_ctx_full_mb:,.0f} MB, beside "
      "{weights_mb:,.0f} MB of weights in float32, which the cache outweighs only after {crossover:,.0f} tokens "
      "(without the sharing, {crossover_full:,.0f}). The calling game's model adds {toy_per_token:,.0f} bytes a "
      "token: SmolLM2's cache grows {toy_ratio:,.0f} times faster",
      words={"but W_K and W_V only {k_rows:.0f} ({kv_heads:.0f} key/value heads)":
             (Q("k_rows").eq(Q("kv_heads") * Q("d_head")), Q("v_rows").eq(Q("k_rows")), Q("k_rows") < Q("q_rows"),
              Q("q_rows").eq(Q("heads") * Q("d_head"))),
             "where {heads:.0f} heads with keys and values of their own would add {per_token_full:,.0f}":
             Q("per_token_full").eq(Q("group") * Q("per_token")),
             "which the cache outweighs only after {crossover:,.0f} tokens (without the sharing, {crossover_full:,.0f})":
             (Q("crossover") > Q("n_ctx"), Q("n_ctx") > Q("crossover_full"))},
      seeded=False,
      note="SmolLM2's file: W_K and W_V have a third of W_Q's rows, so the KV cache is a third of what one key and "
           "value head per query head would keep; at the full context it stays below the weights, without sharing "
           "it would pass them",
      scope=THIS_RUN)(lambda seed: smol_shapes.numbers())
