"""The course's shared library: the model, its training, the read-out, the maps and the examples.

Modules (one concept each): `config`, `vocab`, `model`, `train`, `presets`, `store` (shipped
models), `readout` (softmax, temperature, top-k/top-p, sampling), `lens` (logit lens and direct
logit attribution), `generate` (KV cache), `maps` (PCA, concept planes, t-SNE, analogies, probes),
`corpora` (the calling game, the hand-wired table), `worked_examples`, `convolution`,
`behaviour` (measured figures and targets), `search` (the last step written as a search),
`trajectory` (the residual path on a concept plane), `signs` (entropy and margin beside the
rules), `conveyor` (a tool-using harness), `scale` (the search at GPT sizes, timed),
`explorers` (pure views behind the sliders), `charts` (their SVG pictures), `widgets`
(ipywidgets controls), `figures` (the book's matplotlib look), `exercises` (self-checks), `cli`.

`import lib` stays cheap: names below are loaded on first use.
"""
from importlib import import_module

_EXPORTS = {
    "load": "store", "shipped_names": "store", "CourseError": "errors", "ModelConfig": "config",
    "TrainConfig": "config", "Transformer": "model", "Vocabulary": "vocab", "train": "train",
    "generate": "generate", "logit_lens": "lens", "direct_logit_attribution": "lens",
    "softmax": "readout", "sample": "readout", "results_page": "readout",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lib' has no attribute {name!r}")
