"""Retrain the calling-game and zero-layer models on other training seeds and keep their embeddings.

Part 2 compares two models' embedding geometries; a comparison means something only beside the spread
that retraining the same recipe on another seed gives. Retraining takes tens of seconds per model, so
the embeddings are computed here, once, and stored as data (`data/training-seeds/embeddings.json`); the
claims read them (`lib/chapters/part2/what_an_embedding_is/claims.py`). Run from the repository's root:

    python scripts/retrained_embeddings.py [--seeds 1,2,3,4]
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from lib.content.corpora import get_corpus  # noqa: E402
from lib.model.train import train  # noqa: E402
from lib.shipped.presets import get_preset  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "data" / "training-seeds" / "embeddings.json"
MODELS = ("calling-game", "zero-layer")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1,2,3,4")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",")]
    store = json.loads(OUT.read_text()) if OUT.exists() else {"runs": {}}
    for name in MODELS:
        preset = get_preset(name)
        for seed in seeds:
            key = f"{name}/{seed}"
            if key in store["runs"]:
                continue
            tcfg = dataclasses.replace(preset.train, seed=seed)
            result = train(preset.model, tcfg, get_corpus(preset.corpus, tcfg.corpus_options), progress=False)
            W_E = result.model.W_E.detach().double().numpy()
            store["runs"][key] = {"model": name, "seed": seed, "final_loss": round(sum(result.losses[-50:]) / 50, 5),
                                  "seconds": round(result.seconds, 1),
                                  "W_E": [[round(float(x), 6) for x in row] for row in W_E]}
            OUT.parent.mkdir(parents=True, exist_ok=True)
            OUT.write_text(json.dumps(store, indent=None, separators=(",", ":")) + "\n")
            print(key, store["runs"][key]["final_loss"], store["runs"][key]["seconds"], "s", flush=True)


if __name__ == "__main__":
    main()
