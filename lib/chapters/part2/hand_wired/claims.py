"""The claims of the chapter `chapters/part2/hand-wired.md`, each with its measurement.

The shipped run's axes are `lib.shipped.behaviour.axes_read_back`, shared with Gram-Schmidt by hand; the
lessons about the recipe read `lib.chapters.part2.hand_wired.runs` (each axis beside what a word's class
tells of it), measured on every run of the panel.
"""
from __future__ import annotations

from lib.chapters.part2.hand_wired.runs import COMPARED, STATED, read_back, run_axes
from lib.claims.registry import EVERY_RUN, THIS_RUN, claim, listed
from lib.claims.words import Q
from lib.content.corpora.hand_wired import AXES
from lib.shipped.behaviour import axes_read_back


claim("hand-wired.axes-back", "hand-wired",
      "Trained to its corpus's floor, the model rebuilt {read:.0f} of the {axes:.0f} axes as directions a "
      "straight line reads back with a held-out R² above {threshold:.1f} ({read_names}); {missed_names} did not",
      words={"rebuilt {read:.0f} of the {axes:.0f} axes as directions a straight line reads back with a held-out "
             "R² above {threshold:.1f}": (Q("read") > 0, Q("read") < Q("axes")),
             "{missed_names} did not": Q("read") < Q("axes")},
      seeded=False, note="probes read back some but not all of the six designed axes, on the pages' run",
      scope=THIS_RUN, models=('hand-wired',))(axes_read_back)


def _beyond(seed) -> dict:
    """Each axis's probe on what a word's class leaves of it, against its within-class shuffles."""
    r = run_axes(0)
    margin = {a: r[a]["within_r2"] - r[a]["null_hi"] for a in AXES}
    return {"gap": r["gap"], "compared": listed(COMPARED), "stated": listed(STATED),
            "cmp_lo": min(r[a]["within_r2"] for a in COMPARED), "cmp_margin": min(margin[a] for a in COMPARED),
            "stated_hi": max(r[a]["within_r2"] for a in STATED),
            "stated_over_95": max(r[a]["within_r2"] - r[a]["null_95"] for a in STATED),
            "best_stated": max(STATED, key=lambda a: r[a]["within_r2"] - r[a]["null_95"]),
            "weakest": min(COMPARED, key=lambda a: margin[a]),
            "r2": [r[a]["r2"] for a in AXES], "within": [r[a]["within_r2"] for a in AXES],
            "read_back": listed(read_back(r))}


claim("hand-wired.compared-beyond-class", "hand-wired",
      "On {runs}, each axis the corpus compares words along ({compared}) comes back beyond what a word's class "
      "tells: with each class's mean taken out of it and of the embedding, a straight line reads what is left "
      "back, the weakest with a "
      "held-out R² of {cmp_lo:.2f}, above the most the same probe reaches on those values shuffled among the "
      "words of each class (by {cmp_margin:.2f} for the weakest)",
      words={"above the most the same probe reaches on those values shuffled among the words of each class":
             Q("cmp_margin") > 0},
      others="the weakest compared axis, {weakest}, minus its best shuffle is {cmp_margin:.2f}",
      seeded=False, note="every compared axis's probe, class means taken out, beats all 100 within-class shuffles",
      scope=EVERY_RUN, models=("hand-wired",))(_beyond)

claim("hand-wired.stated-beyond-class", "hand-wired",
      "On {runs}, an axis it only states word by word comes back beyond the class as well, among the words it is "
      "stated for: of {stated}, {best_stated} is read back, the class taken out the same way, with a held-out R² "
      "of {stated_hi:.2f}, above the 95th percentile of its within-class shuffles (by {stated_over_95:.2f})",
      words={"above the 95th percentile of its within-class shuffles": Q("stated_over_95") > 0},
      setup=("an axis it only states word by word", "the class taken out the same way"),
      others="the best of {stated}, {best_stated}, minus the 95th percentile of its shuffles is {stated_over_95:.2f}",
      seeded=False, note="an axis the corpus never compares beats the 95th percentile of its within-class shuffles, "
                         "with the class taken out of the axis and of the embedding",
      scope=EVERY_RUN, models=("hand-wired",))(_beyond)


@claim("hand-wired.animacy-is-class", "hand-wired",
       "On {runs}, animacy, never compared, is read back across the vocabulary with a held-out R² of "
       "{animacy:.2f}, within {gap_to_class:.2f} of a probe that reads only whether a word is a thing "
       "({thing:.2f}): a word's class alone tells {class_r2:.0%} of its animacy, and what animacy adds to the class, "
       "a probe does not read back ({within:.2f})",
       words={"within {gap_to_class:.2f} of a probe that reads only whether a word is a thing":
              Q("gap_to_class") < 0.1,
              "what animacy adds to the class, a probe does not read back ({within:.2f})":
              Q("within") <= Q("null_95")},
       others="animacy scores {animacy:.2f} and the probe of the class 'thing' {thing:.2f}",
       setup=("animacy, never compared",),
       seeded=False, scope=EVERY_RUN, models=("hand-wired",),
       note="animacy's probe follows the class 'thing' probe within 0.1; class means tell most of animacy, and "
            "the rest is not read back above its within-class shuffles' 95th percentile")
def _animacy(seed):
    r = run_axes(0)
    a = r["animacy"]
    return {"animacy": a["r2"], "thing": r["thing_r2"], "gap_to_class": abs(a["r2"] - r["thing_r2"]),
            "class_r2": a["class_r2"], "within": a["within_r2"], "null_95": a["null_95"]}


@claim("hand-wired.gender-among-named", "hand-wired",
       "On {runs}, among the {n_named:.0f} words the corpus calls male or female a straight line reads gender "
       "back with a held-out R² of {gender_named:.2f}, above every one of {shuffles:.0f} shuffles of their genders "
       "({shuffled_hi:.2f} at most), while over the {n_words:.0f} words it scores {gender_all:.2f}, below 0.5",
       words={"above every one of {shuffles:.0f} shuffles of their genders ({shuffled_hi:.2f} at most)":
              Q("gender_named") > Q("shuffled_hi"),
              "below 0.5": Q("gender_all") < 0.5},
       others="among the named words gender scores {gender_named:.2f}, its shuffles up to {shuffled_hi:.2f}",
       note="gender probe among named words beats shuffled labels; over all words it fails",
       scope=EVERY_RUN, models=('hand-wired',))
def _gender(seed):
    x = axes_read_back(seed)
    return {k: x[k] for k in ("n_named", "gender_named", "shuffles", "shuffled_hi", "n_words", "gender_all")}

