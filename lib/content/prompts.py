"""The course's canonical prompts: the two the whole course returns to, and who may answer the second.

`CONFIDENT` is the opening call once its callee is named: the rules fix the next token (Tarso, the
epithet Pietro gives Paolo). `UNCERTAIN` stops just before the callee: any player but Pietro may
follow (`LEGAL_OPENING`), so a well-trained model spreads its page over them.
"""
from __future__ import annotations

from lib.content.corpora import calling_game

CONFIDENT = "<BOS> Pietro chiama Paolo"
UNCERTAIN = "<BOS> Pietro chiama"
LEGAL_OPENING = [p for p in calling_game.PLAYERS if p != "Pietro"]
