"""The claims of the chapter `chapters/part2/hand-wired.md`, each with its measurement.

The axes' numbers are `lib.shipped.behaviour.axes_read_back`, shared with Gram-Schmidt by hand.
"""
from __future__ import annotations

from lib.claims.registry import claim
from lib.shipped.behaviour import axes_read_back


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
