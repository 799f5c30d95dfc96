"""The chapters' own code: one folder per chapter, mirroring its page (`lib/chapters/PART/UNIT/`).

The walker that finds the units (`units()`, `unit(name)`, `load(kind)`, `checks(name)`) lives low in the
library, in `lib.units`, where the registries import it; its names are handed on here, so that
`from lib import chapters; chapters.checks("results_page")` reads as before.
"""
from lib.units import ROOT, Unit, checks, load, unit, units  # noqa: F401  (handed on)
