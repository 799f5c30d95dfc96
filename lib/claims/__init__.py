"""Claims as code: every conclusion a chapter states, registered with its measurement and its scope.

Each chapter registers its own in its unit, `lib/chapters/PART/NAME/claims.py`; the registry finds
them by walking the units. See `lib.claims.registry` for the API and the scopes, `lib.claims.words` for
a statement's words and the checks they mean, `lib.claims.panel` for the panel of training runs every
lesson about a recipe is measured on, `lib.claims.runs` for measuring a claim on a run, and
`lib.claims.glue` for the page's statement.
`python -m lib claims` re-measures them on any seeds and runs.
"""
from lib.claims.glue import glue_claim, page_statement
from lib.claims.registry import (EVERY_RUN, NO_RUN, PAGE_SEEDS, SCOPES, THIS_RUN, Absent, Claim, Span, chapters,
                                 claim, claims, get, glue_name, holds, measure, numbers_over, statement, why_not)
from lib.claims.words import All, Either, Max, Min, Q

__all__ = ["EVERY_RUN", "NO_RUN", "PAGE_SEEDS", "SCOPES", "THIS_RUN", "Absent", "All", "Claim", "Either", "Max", "Min", "Q",
           "Span", "chapters", "claim", "claims", "get", "glue_claim", "glue_name", "holds", "measure", "numbers_over",
           "page_statement", "statement", "why_not"]
