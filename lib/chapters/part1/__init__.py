"""The chapters of Part 1: one unit per chapter with code of its own."""
