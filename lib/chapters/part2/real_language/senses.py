"""One word in two senses: sentences for Part 2's contextual vectors (`lib.chapters.part2.real_language.contextual`).

Written for each sense before anything was measured; "bank" is one whole WordPiece token, once
in every sentence, and nothing but the sentence around it tells the senses apart.
"""
BANK_SENSES: dict[str, tuple[str, ...]] = {
    "money": (
        "She deposited her salary at the bank on Friday.",
        "The bank approved the loan for the new house.",
        "He opened a savings account at the bank downtown.",
        "The bank raised its interest rates again.",
        "Thieves robbed the bank and escaped with the cash.",
        "My bank charges a fee for every transfer.",
        "The bank closed early because of the holiday.",
        "They asked the bank for a mortgage.",
    ),
    "river": (
        "We had a picnic on the bank of the river.",
        "The boat drifted toward the muddy bank.",
        "Fishermen sat along the bank waiting for trout.",
        "The flood washed away part of the bank.",
        "Reeds grew thickly on the far bank of the stream.",
        "The children climbed down the steep bank to the water.",
        "A heron stood still on the grassy bank.",
        "The canoe scraped against the rocky bank.",
    ),
}
