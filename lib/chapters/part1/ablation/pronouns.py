"""Sentences with a pronoun and its known antecedent: the labelled set for MiniLM's heads.

Written before any head was measured, and never changed to suit a head. Each item is
(sentence, pronoun, antecedent, other candidate nouns): every one of those words is a whole
WordPiece token and occurs once in its sentence, so "the pronoun's attention lands on the
antecedent" is a question about one position. The pronoun is made clear by what it must be:
its gender (he or she, with a king and a queen), its number (it or they, with one dog and
several birds), or a person against a thing. In about half the antecedent is the nearest noun
before the pronoun, in the rest it is not, so the nearest-noun rule is a baseline, not a
ceiling.

`PAIRS` are Winograd-style pairs (after Levesque, Davis and Morgenstern's Winograd Schema
Challenge): two sentences that differ by one word, which changes the antecedent ("The trophy
did not fit in the suitcase because it was too big / small"). Only meaning tells them apart:
word order, gender and number are the same in both.

The chapter's own sentence, "The cat sat on the mat because it was tired", is not in the set.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Item:
    sentence: str
    pronoun: str
    antecedent: str
    others: tuple[str, ...]          # the other nouns the pronoun could have meant
    pair: int | None = None          # the Winograd pair it belongs to, if any
    clue: str = ""                   # what makes the antecedent clear: gender, number, animacy, meaning


def _items(clue: str, rows) -> list[Item]:
    return [Item(s, p, a, tuple(o.split()), None, clue) for s, p, a, o in rows]


SINGLES: list[Item] = (
    _items("gender", [
        ("The king thanked the queen because she had saved the castle.", "she", "queen", "king castle"),
        ("The queen thanked the king because he had saved the castle.", "he", "king", "queen castle"),
        ("The boy gave the girl a book because she liked stories.", "she", "girl", "boy book"),
        ("The girl gave the boy a book because he liked stories.", "he", "boy", "girl book"),
        ("The mother called the son when she arrived home.", "she", "mother", "son"),
        ("The father called the daughter when he arrived home.", "he", "father", "daughter"),
        ("The woman met the man at the station, and he carried the bags.", "he", "man", "woman station"),
        ("The man met the woman at the station, and she carried the bags.", "she", "woman", "man station"),
        ("The actress hugged the actor after he won the prize.", "he", "actor", "actress"),
        ("The uncle visited the aunt because she was ill.", "she", "aunt", "uncle"),
        ("The aunt visited the uncle because he was ill.", "he", "uncle", "aunt"),
        ("The brother wrote to the sister after she moved abroad.", "she", "sister", "brother"),
        ("The sister wrote to the brother after he moved abroad.", "he", "brother", "sister"),
        ("The prince followed the princess until she reached the tower.", "she", "princess", "prince tower"),
        ("The husband waited for the wife while she finished work.", "she", "wife", "husband"),
        ("The girl asked the father whether he could help.", "he", "father", "girl"),
    ])
    + _items("number", [
        ("The dogs chased the ball until they were exhausted.", "they", "dogs", "ball"),
        ("The dog chased the birds until they flew away.", "they", "birds", "dog"),
        ("The children ate the cake because it was sweet.", "it", "cake", "children"),
        ("The farmer fed the cows before they went outside.", "they", "cows", "farmer"),
        ("The students read the book because it was required.", "it", "book", "students"),
        ("The boat carried the tourists until they reached the island.", "they", "tourists", "boat island"),
        ("The tourists boarded the boat before it left the harbour.", "it", "boat", "tourists harbour"),
        ("The birds left the tree when it began to shake.", "it", "tree", "birds"),
        ("The soldiers crossed the bridge after it was repaired.", "it", "bridge", "soldiers"),
        ("The gardener watered the roses because they looked dry.", "they", "roses", "gardener"),
        ("The teachers praised the student because she worked hard.", "she", "student", "teachers"),
        ("The workers moved the piano because it blocked the door.", "it", "piano", "workers door"),
    ])
    + _items("person or thing", [
        ("The woman dropped the glass and it broke.", "it", "glass", "woman"),
        ("The man painted the fence because it was old.", "it", "fence", "man"),
        ("The doctor opened the letter because it looked urgent.", "it", "letter", "doctor"),
        ("The teacher repaired the chair because it was broken.", "it", "chair", "teacher"),
        ("The pilot landed the plane after it lost an engine.", "it", "plane", "pilot engine"),
        ("The chef tasted the soup, but it was too salty.", "it", "soup", "chef"),
        ("The driver parked the car where it would be safe.", "it", "car", "driver"),
        ("The scientist studied the rock because it contained gold.", "it", "rock", "scientist gold"),
        ("The boy kicked the ball and it flew over the wall.", "it", "ball", "boy wall"),
        ("The judge read the verdict after it was written.", "it", "verdict", "judge"),
        ("The students visited the museum because it had new paintings.", "it", "museum", "students paintings"),
        ("The nurse cleaned the wound before it became infected.", "it", "wound", "nurse"),
        ("The engineer checked the machine because it was making noise.", "it", "machine", "engineer noise"),
        ("The child hid the letter because it contained a secret.", "it", "letter", "child secret"),
        ("The farmer sold the horse because it was too old to work.", "it", "horse", "farmer"),
        ("The girl lost the ring, and her mother found it in the garden.", "it", "ring", "girl mother garden"),
    ])
)

# (first sentence, its antecedent), (second sentence, its antecedent), pronoun, the two candidates.
_PAIRS = [
    ("The trophy did not fit in the suitcase because it was too big.",
     "The trophy did not fit in the suitcase because it was too small.", "it", "trophy", "suitcase"),
    ("The city council refused the protesters a permit because they feared violence.",
     "The city council refused the protesters a permit because they advocated violence.", "they", "council",
     "protesters"),
    ("The man could not lift his son because he was so weak.",
     "The man could not lift his son because he was so heavy.", "he", "man", "son"),
    ("The ball broke the table because it was made of steel.",
     "The ball broke the table because it was made of glass.", "it", "ball", "table"),
    ("The girl thanked the woman for the help she had received.",
     "The girl thanked the woman for the help she had given.", "she", "girl", "woman"),
    ("The lawyer asked the witness a question, but he was reluctant to repeat it.",
     "The lawyer asked the witness a question, but he was reluctant to answer it.", "he", "lawyer", "witness"),
    ("The fish ate the worm because it was hungry.",
     "The fish ate the worm because it was tasty.", "it", "fish", "worm"),
    ("The cat could not catch the mouse because it was too slow.",
     "The cat could not catch the mouse because it was too fast.", "it", "cat", "mouse"),
    ("The bottle did not fit in the bag because it was too large.",
     "The bottle did not fit in the bag because it was too narrow.", "it", "bottle", "bag"),
    ("The sculpture rolled off the shelf because it was not anchored.",
     "The sculpture rolled off the shelf because it was not level.", "it", "sculpture", "shelf"),
    ("The truck overtook the bus because it was going so fast.",
     "The truck overtook the bus because it was going so slowly.", "it", "truck", "bus"),
    ("The horse could not jump over the fence because it was too tired.",
     "The horse could not jump over the fence because it was too tall.", "it", "horse", "fence"),
    ("The boy could not see over the man because he was so short.",
     "The boy could not see over the man because he was so tall.", "he", "boy", "man"),
]

PAIRS: list[Item] = [
    item
    for i, (first, second, pronoun, a, b) in enumerate(_PAIRS)
    for item in (Item(first, pronoun, a, (b,), i, "meaning"), Item(second, pronoun, b, (a,), i, "meaning"))
]

ITEMS: list[Item] = SINGLES + PAIRS

