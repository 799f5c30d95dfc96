"""Hook points: every named activation of a forward pass can be read, and replaced, by name.

The names are the cache's (`Transformer.run_with_cache` lists them): `embed`, `blocks.0.attn.pattern`,
`blocks.1.attn.head_out`, `blocks.1.mlp_out`, `logits`, ... A hook is a function
`fn(tensor, name) -> tensor | None`, attached to a name or to a predicate over names
(TransformerLens's `run_with_hooks` is the model):

    model.run_with_hooks(tokens, fwd_hooks=[("blocks.0.attn.head_out", fn)])

The hook sees the tensor as the cache stores it (`blocks.L.attn.head_out` is [position, head, d_model]
for one prompt, [batch, position, head, d_model] for a batch) and may return a tensor of the same shape,
which the rest of the pass then uses in its place (so a hook that changes one head's slice of
`head_out` changes the layer's sum, `attn_out`); returning None keeps the tensor. Hooks on one name
run in the order given. The cache stores what the pass used, after the hooks.

Every intervention is written on this one mechanism: switching a head or an MLP off (`zero_hooks`, which
the model's `ablate=` and `ablate_mlps=` keywords use), mean and resample ablation
(`lib.analysis.ablation`), activation patching (`lib.analysis.patching`). A run without hooks and without
a cache pays one test per named tensor and nothing else.
"""
from __future__ import annotations

import functools
from typing import Callable, Iterable, Sequence, Union

import torch

from lib.messages import say
from lib.errors import CourseError, require

HookFn = Callable[[torch.Tensor, str], Union[torch.Tensor, None]]
NameOrPredicate = Union[str, Callable[[str], bool]]
Head = tuple[int, int]  # (layer, head)

# Tensors kept in TransformerLens's [position, head, ...] order, though attention computes them in
# [head, position, ...] order.
POSITION_FIRST = ("q", "k", "v", "z", "head_out")


def hook_names(cfg) -> list[str]:
    """Every hook point of a model of this configuration, in forward order (the cache's keys)."""
    return list(_names_of(cfg))


def _names_of(cfg) -> tuple[str, ...]:
    # A model of another architecture (lib.model.llama) says its own names; the toy's follow from its flags.
    own = getattr(cfg, "hook_names", None)
    return own() if own is not None else _names(cfg.n_layers, cfg.layer_norm, cfg.has_mlp)


@functools.lru_cache(maxsize=64)
def _names(n_layers: int, layer_norm: bool, has_mlp: bool) -> tuple[str, ...]:
    names = ["embed", "pos_embed"]
    for layer in range(n_layers):
        p = f"blocks.{layer}."
        names += [p + "resid_pre"] + ([p + "ln1"] if layer_norm else [])
        names += [p + "attn." + n for n in ("q", "k", "v", "qk", "scores", "pattern", "z", "head_out")]
        names += [p + "attn_out", p + "resid_mid"]
        if has_mlp:
            names += ([p + "ln2"] if layer_norm else []) + [p + "mlp.pre", p + "mlp.post", p + "mlp_out"]
        names += [p + "resid_post"]
    names += ["resid_final"] + (["ln_final"] if layer_norm else []) + ["logits"]
    return tuple(names)


@functools.lru_cache(maxsize=64)
def _name_set(names: tuple[str, ...]) -> frozenset[str]:
    return frozenset(names)


class Hooks:
    """The hooks of one run, checked against the model's hook points: name -> functions, in order."""

    def __init__(self, fwd_hooks: Iterable[tuple[NameOrPredicate, HookFn]], cfg):
        known = _names_of(cfg)
        known_set = _name_set(known)
        self.by_name: dict[str, list[HookFn]] = {}
        for item in fwd_hooks:
            try:
                where, fn = item
            except (TypeError, ValueError):
                raise CourseError(f"a hook is a pair (name or predicate, function), got {item!r}") from None
            require(callable(fn), f"a hook's function must be callable, got {fn!r}")
            if isinstance(where, str):
                require(where in known_set, f"the model has no hook point {where!r}; it has: {', '.join(known)}")
                matched = [where]
            elif callable(where):
                matched = [name for name in known if where(name)]
            else:
                raise CourseError(f"a hook is attached to a hook point's name or to a predicate over names, "
                                  f"got {where!r}")
            for name in matched:
                self.by_name.setdefault(name, []).append(fn)

    def __bool__(self) -> bool:
        return bool(self.by_name)


class Recorder:
    """The hook points of one forward pass: `keep(name, x)` runs the hooks attached to the name (each
    may replace x), stores the result in the cache under the module's prefix, and returns it. Without
    hooks or a cache it returns x as it came. A single prompt's tensors are shown without the batch axis."""

    __slots__ = ("cache", "hooks", "prefix", "single", "active", "names")

    def __init__(self, cache=None, prefix: str = "", single: bool = False, hooks: Hooks | None = None, names=None):
        self.cache, self.prefix, self.single = cache, prefix, single
        self.hooks = hooks if hooks else None
        self.active = cache is not None or self.hooks is not None
        self.names = names        # None: the cache keeps every name; else a predicate over names

    def __call__(self, name: str, x: torch.Tensor, position_first: bool = False) -> torch.Tensor:
        if not self.active:
            return x
        full = self.prefix + name
        # Attention works in [batch, head, position, ...]; q, k, v, z and head_out are shown in
        # TransformerLens's [batch, position, head, ...].
        shown = x.transpose(1, 2) if position_first else x
        if self.single:
            shown = shown[0]
        fns = None if self.hooks is None else self.hooks.by_name.get(full)
        if fns:
            for fn in fns:
                out = fn(shown, full)
                if out is not None:
                    require(isinstance(out, torch.Tensor) and tuple(out.shape) == tuple(shown.shape),
                            f"the hook on {full} must return None or a tensor shaped {tuple(shown.shape)}, "
                            f"got {tuple(out.shape) if isinstance(out, torch.Tensor) else type(out).__name__}")
                    shown = out.to(x.dtype)
            back = shown.unsqueeze(0) if self.single else shown
            x = back.transpose(1, 2) if position_first else back
        if self.cache is not None and (self.names is None or self.names(full)):
            # Detached: the cache is for reading, and .numpy() fails on a tensor that needs grad.
            self.cache[full] = shown.detach()
        return x

    def scope(self, name: str) -> "Recorder":
        r = Recorder.__new__(Recorder)
        r.cache, r.hooks, r.single, r.active, r.names = self.cache, self.hooks, self.single, self.active, self.names
        r.prefix = f"{self.prefix}{name}."
        return r


NOT_RECORDED = Recorder()


# ------------------------------------------------------------------ the simplest intervention
def check_heads(heads: Iterable[Head], cfg) -> list[Head]:
    """(layer, head) pairs, checked, sorted, without repeats."""
    out = set()
    for item in heads:
        try:
            layer, head = (int(x) for x in item)
        except (TypeError, ValueError):
            raise CourseError(f"a head is named as (layer, head), got {item!r}") from None
        require(0 <= layer < cfg.n_layers and 0 <= head < cfg.n_heads,
                say("no_head", layer=layer, head=head, last_layer=cfg.n_layers - 1, last_head=cfg.n_heads - 1))
        out.add((layer, head))
    return sorted(out)


def check_mlps(layers: Iterable[int], cfg) -> list[int]:
    """MLP layers, checked, sorted, without repeats."""
    out = set()
    for layer in layers:
        require(isinstance(layer, int) and not isinstance(layer, bool) and 0 <= layer < cfg.n_layers,
                say("no_layer", layer=repr(layer), last_layer=cfg.n_layers - 1))
        require(cfg.has_mlp, "this model has no MLPs to switch off")
        out.add(layer)
    return sorted(out)


def replace_heads(heads: Sequence[int], value: Callable[[torch.Tensor], torch.Tensor]) -> HookFn:
    """A hook on `blocks.L.attn.head_out` that puts `value(head_out)` [..., position, head, d_model]
    in place of the listed heads' writes (the other heads' writes are kept)."""
    heads = list(heads)

    def hook(x, name):
        out = x.clone()
        out[..., heads, :] = value(x)[..., heads, :]
        return out
    return hook


def _zero_heads(heads: list[int]) -> HookFn:
    """`replace_heads(heads, torch.zeros_like)`, without building a tensor of zeros to copy from."""
    def hook(x, name):
        out = x.clone()
        out[..., heads, :] = 0.0
        return out
    return hook


def zero_hooks(cfg, heads: Iterable[Head] = (), mlps: Iterable[int] = ()) -> list[tuple[str, HookFn]]:
    """Zero ablation: the listed heads and MLPs write nothing into the residual stream. A head switched
    off still looks (its pattern is computed and cached); an MLP switched off still computes its
    activations. What `ablate=` and `ablate_mlps=` do."""
    per_layer: dict[int, list[int]] = {}
    for layer, head in check_heads(heads, cfg):
        per_layer.setdefault(layer, []).append(head)
    hooks = [(f"blocks.{layer}.attn.head_out", _zero_heads(hs)) for layer, hs in per_layer.items()]
    hooks += [(f"blocks.{layer}.mlp_out", lambda x, name: torch.zeros_like(x)) for layer in check_mlps(mlps, cfg)]
    return hooks
