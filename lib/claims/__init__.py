"""Claims as code: every conclusion a chapter states, registered with its measurement.

Each chapter registers its own in its unit, `lib/chapters/PART/NAME/claims.py`; the registry finds
them by walking the units. See `lib.claims.registry` for the API; `python -m lib claims` re-measures
them on any seeds.
"""
from lib.claims.registry import (PAGE_SEEDS, Claim, Span, chapters, claim, claims, get, glue_claim, glue_name,
                                 holds, measure, numbers_over, statement)

__all__ = ["PAGE_SEEDS", "Claim", "Span", "chapters", "claim", "claims", "get", "glue_claim", "glue_name", "holds",
           "measure", "numbers_over", "statement"]
