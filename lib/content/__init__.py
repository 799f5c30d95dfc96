"""The course's own material: what the models are trained on and the worked examples.

`corpora` (the calling game and its rules, the hand-wired table), `prompt_sets` (labelled prompts
for measuring a claim over many cases), `real_words` (Part 2's rows of
a real model), `worked_examples` (the source notes' small examples on the library's model),
`note_slips` (where a note's printed arithmetic and the computation part ways),
`convolution` (a filter by hand), `conveyor` (a tool-using harness).
"""
