"""The chapters of Part 2: one unit per chapter with code of its own."""
