"""The model and its training.

`config` (the shapes and the recipe), `vocab` (word-level tokens), `transformer` (the model,
written out head by head), `readout` (from the last position's logits to a next token: softmax,
temperature, top-k, top-p, sampling), `generate` (one token at a time, with or without the KV
cache), `train` (the training loop), `store` (saving, loading and verifying the weights in data/).
"""
