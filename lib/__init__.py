"""The course's shared library: the model, its training, the read-out, the maps and the examples.

Subpackages, one layer each, lowest first: `model` (the Transformer, its vocabulary, training,
read-out, generation and stored weights), `content` (the corpora and the worked examples),
`analysis` (ablation, circuits, lens, trajectory, maps and the other measurements), `shipped`
(the shipped models' recipes and behaviour targets), `pictures` (matplotlib figures and SVG
charts), `explorers` (the interactive pictures),
`exercises` (self-checks) and `cli` (the command line and the benchmark).

`import lib` stays cheap: the names below are loaded on first use.
"""
from importlib import import_module

_EXPORTS = {
    "load": "model.store", "shipped_names": "model.store", "CourseError": "errors",
    "ModelConfig": "model.config", "TrainConfig": "model.config", "Transformer": "model.transformer",
    "Vocabulary": "model.vocab", "train": "model.train", "generate": "model.generate",
    "logit_lens": "analysis.lens", "direct_logit_attribution": "analysis.lens",
    "softmax": "model.readout", "sample": "model.readout", "results_page": "model.readout",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    if name in _EXPORTS:
        value = getattr(import_module(f".{_EXPORTS[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'lib' has no attribute {name!r}")
