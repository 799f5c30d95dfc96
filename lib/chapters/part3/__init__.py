"""The chapters of Part 3: one unit per chapter with code of its own."""
