"""The claims of the chapter `chapters/part2/hand-wired.md`, each with its measurement.

The axes' numbers are `lib.shipped.behaviour.axes_read_back`, shared with Gram-Schmidt by hand.
"""
from __future__ import annotations

from lib.claims.registry import EVERY_RUN, claim, listed
from lib.chapters.part2.hand_wired.runs import axes_per_run
from lib.content.corpora.hand_wired import AXES
from lib.shipped.behaviour import HAND_WIRED_MAX_GAP, PROBE_R2_THRESHOLD, axes_read_back


claim("hand-wired.axes-back", "hand-wired",
      "Trained to its corpus's floor, the model rebuilt {read:.0f} of the {axes:.0f} axes as directions a "
      "straight line reads back (held-out R² above {threshold:.1f}: {read_names}); {missed_names} did not come "
      "back across the vocabulary",
      holds=lambda x: 0 < x["read"] < x["axes"], seeded=False,
      note="probes read back some but not all of the six designed axes")(axes_read_back)

claim("hand-wired.gender-among-named", "hand-wired",
      "Gender is a direction only among the {n_named:.0f} words the corpus calls male or female: a probe "
      "there reads it back with held-out R² {gender_named:.2f} (the same probe with the genders shuffled among "
      "the same words: at most {shuffled_hi:.2f} in {shuffles:.0f} shuffles), while over all {n_words:.0f} words it scores "
      "{gender_all:.2f}",
      holds=lambda x: x["gender_named"] > 0.5 and x["gender_named"] > x["shuffled_hi"] and x["gender_all"] < 0.5,
      note="gender probe among named words beats shuffled labels; over all words it fails")(axes_read_back)


# ----------------------------------------------------------------------------- over the shipped runs
def listed(names: list[str]) -> str:
    return "none" if not names else names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


@claim("hand-wired.axes-over-runs", "hand-wired",
       "Of the {runs:.0f} shipped runs, {at_floor:.0f} reach their corpus's floor (within {max_gap} nats). On every "
       "one of those the probes read back {always} (held-out R² above {threshold}); {sometimes} on some of them "
       "only; {never} on none",
       holds=lambda x: x["at_floor"] >= 3 and 1 <= x["n_always"] < x["n_axes"], seeded=False, scope=EVERY_RUN,
       models=("hand-wired",), covers_runs=True,
       note="the designed axes probes read back, over the runs that learned their corpus: some always, not all")
def _axes_over_runs(seed):
    per = [r for r in axes_per_run().values() if r["at_floor"]]
    count = {a: sum(a in r["read"] for r in per) for a in AXES}
    return {"runs": len(axes_per_run()), "at_floor": len(per), "max_gap": HAND_WIRED_MAX_GAP,
            "threshold": PROBE_R2_THRESHOLD, "n_axes": len(AXES),
            "always": listed([a for a, n in count.items() if per and n == len(per)]),
            "sometimes": listed([a for a, n in count.items() if 0 < n < len(per)]),
            "never": listed([a for a, n in count.items() if n == 0]),
            "n_always": sum(per and n == len(per) for n in count.values())}
