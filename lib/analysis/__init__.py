"""What the course measures inside a model.

`ablation` (switching heads and MLPs off), `head_survey` (what each head does, counted over labelled
prompt sets), `positions` (order, and what learned position embeddings encode), `circuits` (QK and
OV circuits, head habits, copying), `lens`
(logit lens, direct logit attribution), `trajectory` (the residual stream's path on a plane),
`search` (the last step written as a search), `signs` (entropy and margin beside the rules, and
the rules' verdict on a top word), `flatness` (a flat page counted as a detector of impossible
prompts), `logit_difference` (a word's lead over its rival, by stage and by component),
`query_length` (what the query's length, the unembedding's bias and a final LayerNorm do to the page),
`inventory` (every weight and activation, parameter counts, KV-cache size), `bigrams` (the
game's bigram table and the zero-layer model), `scale` (the final search at GPT sizes), and
`maps` (PCA, concept planes, t-SNE, analogies, probes, neighbours).
"""
