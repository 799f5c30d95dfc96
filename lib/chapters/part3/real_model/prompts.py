"""The menu of prompts the real model's explorers offer on the website, chosen to teach.

Each group shows one kind of last step (the chapter reads them by group):
- "fact": the world fixes the next word (a capital, a date, a formula); the page should be sharp;
- "open": many continuations are good (a story, an opinion); the page should be flat;
- "made-up": a fact about something that does not exist; no answer is right, and the page does not know;
- "pattern": the answer is written earlier in the prompt (a list, a repeated name, a count): copying;
- "code": a program, whose syntax fixes some tokens and leaves names open;
- "grammar": the sentence's own words fix the form of the next one (agreement, a pronoun, an article).

Short prompts (at most 24 tokens each), so that every head's pattern on every prompt ships in a few kB.
"""
from __future__ import annotations

GROUPS: dict[str, tuple[str, ...]] = {
    "fact": (
        "The capital of France is",
        "The capital of Japan is",
        "Water is made of hydrogen and",
        "The first man to walk on the Moon was Neil",
        "The largest planet in the solar system is",
        "Two plus two equals",
        "The chemical symbol for gold is",
        "William Shakespeare wrote Romeo and",
        "The Great Wall is in",
        "A week has seven",
    ),
    "open": (
        "Once upon a time, there was a little",
        "My favourite food is",
        "She opened the door and saw",
        "The best thing about summer is",
        "I went to the market to buy some",
        "He looked at the sky and",
        "In the future, people will",
        "The weather today is",
        "The old fisherman pulled in his net and found",
        "My grandmother always told me that",
        "The most important thing in a friendship is",
        "After the storm, the village",
        "If I could travel anywhere, I would go to",
        "The robot woke up in an empty factory and",
        "Dear diary, today at school",
        "The secret to a good cup of tea is",
        "When the music started, everyone in the room",
        "Our team lost the game, but",
        "The letter on the kitchen table said",
        "Learning a new language is hard because",
        "In the middle of the forest stood",
        "The detective looked at the broken window and",
        "On my first day at the new job, I",
        "The garden was quiet until",
    ),
    "made-up": (
        "The capital of the country Zelvania is",
        "The first person to walk on Mars was",
        "The chemical symbol for the element florbium is",
        "The famous painter Ardo Vintelli was born in",
        "The Treaty of Glimmersby was signed in the year",
        "The capital of Atlantis is",
    ),
    "pattern": (
        "Monday, Tuesday, Wednesday,",
        "1, 2, 3, 4,",
        "A B C D E",
        "red green blue red green blue red",
        "Mary and John went to the shop. John gave a bag to",
        "apple banana cherry apple banana",
    ),
    "code": (
        "def add(a, b):\n    return a",
        "for i in range(10):\n    print(",
        "import numpy as",
        "<html><head><title>Hello</title></",
    ),
    "grammar": (
        "The keys to the cabinet",
        "She said that he",
        "I have an",
        "The children were playing in the garden because they",
        "If I were you, I",
        "The man who lives next door",
    ),
}

MENU: tuple[str, ...] = tuple(p for prompts in GROUPS.values() for p in prompts)
GROUP_OF: dict[str, str] = {p: g for g, prompts in GROUPS.items() for p in prompts}
MAX_TOKENS = 24
