"""The prompt as a conveyor belt: a next-word loop, a harness that watches it, and a tool.

A language model never leaves its loop: it reads the belt (the tokens so far) and writes one
more. A tool-using system adds a *harness* outside the model. The harness watches what the model
writes; when it sees a request (here, the word `chiama`: "who is called?"), it runs a tool and
lays the tool's answer on the belt as ordinary tokens, then lets the loop continue. The model
reads the tool's words exactly as it reads its own: through the same KV cache, one token at a time.
"""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

import torch

from lib.content.corpora.calling_game import legal_callees
from lib.errors import CourseError, require
from lib.model.readout import check_temperature, greedy, sample, softmax
from lib.model.vocab import BOS, EOS, SEP

Tool = Callable[[list[str]], list[str]]


@dataclass(frozen=True)
class BeltToken:
    token: str
    writer: str        # "prompt", "model" or "tool"
    prob: float | None = None   # the model's probability for the token it wrote (or would give a tool's)


@dataclass
class Belt:
    tokens: list[BeltToken] = field(default_factory=list)
    tool_calls: int = 0

    def text(self) -> str:
        return " ".join(t.token for t in self.tokens)

    def words(self) -> list[str]:
        return [t.token for t in self.tokens]


def current_turn(words: list[str]) -> tuple[str, str | None]:
    """(caller, previous caller) for the turn being played at the end of `words`."""
    turns = [i for i, w in enumerate(words) if w == "chiama"]
    require(turns, "the belt holds no call yet")
    caller = words[turns[-1] - 1]
    previous = words[turns[-2] - 1] if len(turns) > 1 else None
    return caller, previous


def referee(seed: int = 0) -> Tool:
    """A tool that answers "who is called?" with a legal player drawn at random (seeded)."""
    rng = random.Random(seed)

    def tool(words: list[str]) -> list[str]:
        caller, previous = current_turn(words)
        options = legal_callees(caller, previous) if caller in legal_callees("", None) else ["Pietro"]
        return [rng.choice(options)]
    return tool


def always(word: str) -> Tool:
    """A tool that gives the same answer every time (a stuck, or broken, tool)."""
    return lambda words: [word]


def run_belt(lm, prompt: str, tool: Tool | None = None, trigger: str = "chiama", max_new_tokens: int = 40,
             temperature: float = 1.0, use_greedy: bool = True, seed: int = 0) -> Belt:
    """Run the next-word loop from `prompt`; after every `trigger` the model writes, the tool writes.

    `max_new_tokens` counts the tokens the model writes (the tool's are extra). Stops at <EOS> or
    when the context is full. A tool that answers with a word the model does
    not know raises `CourseError` naming the word: the belt only carries known tokens.
    """
    check_temperature(temperature)
    model, vocab = lm.model, lm.vocab
    require(trigger in vocab, f"the trigger {trigger!r} is not a token of {lm.name}")
    ids = lm.encode(prompt)
    belt = Belt([BeltToken(w, "prompt") for w in vocab.decode(ids)])
    gen = torch.Generator().manual_seed(int(seed))
    logits, kv = model.forward_with_kv(ids)
    room = model.cfg.n_ctx - len(ids)
    while room > 0 and max_new_tokens > 0 and belt.tokens[-1].token != EOS:
        last = logits[-1]
        probs = softmax(last)
        nxt = greedy(last) if use_greedy else sample(last, temperature, generator=gen)
        belt.tokens.append(BeltToken(vocab.tokens[nxt], "model", float(probs[nxt])))
        feed = [nxt]
        room, max_new_tokens = room - 1, max_new_tokens - 1
        if tool is not None and vocab.tokens[nxt] == trigger and room > 0:
            answer = list(tool(belt.words()))
            unknown = [w for w in answer if w not in vocab]
            if unknown:
                raise CourseError(f"the tool answered {' '.join(unknown)!r}, which {lm.name} cannot read; "
                                  f"a tool must answer with known tokens")
            answer = answer[:room]
            logits, kv = model.forward_with_kv(feed, kv)
            for w in answer:
                # What the model itself would have given the tool's word, for the reader to compare.
                p = float(softmax(logits[-1])[vocab.id(w)])
                belt.tokens.append(BeltToken(w, "tool", p))
                logits, kv = model.forward_with_kv([vocab.id(w)], kv)
            belt.tool_calls += 1
            room -= len(answer)
            continue
        logits, kv = model.forward_with_kv(feed, kv)
    return belt


__all__ = ["Belt", "BeltToken", "Tool", "referee", "always", "run_belt", "current_turn", "BOS", "SEP"]
