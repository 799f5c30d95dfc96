"""The claims of Part 3 (the final step as a search), each with its measurement."""
from __future__ import annotations

from lib.claims.registry import claim
