"""The course's budgets on a 2-core machine, one home for every benchmark that measures against them.

`make bench` prints each figure beside its budget (`python -m lib bench`, `scripts/book.py bench`,
`scripts/site_bench.py`); no test times anything, since a timed test fails on a busy machine.
Seconds unless the name says otherwise.
"""
from __future__ import annotations

BUDGETS: dict[str, float] = {
    # the book
    "build": 180.0,               # execute every chapter and build the website, from a clean cache
    "rebuild": 20.0,              # rebuild after a one-line prose change
    "install": 120.0,             # the environment from a fresh clone, the reader's JupyterLab included
    "ci": 20 * 60.0,              # `.ci/run`, every test run
    # the library, in a kernel
    "import": 2.0,                # `import lib`
    "train": 60.0,                # retrain any shipped model from scratch (the induction model: each run, to its floor)
    "forward": 0.050,             # one forward pass of a prompt, in a kernel
    "slider_step": 0.050,         # one slider step in a kernel, compute and redraw, p95
    "tsne_step": 0.100,           # one t-SNE slider step (a stored layout), p95
    "tsne_first": 0.300,          # a first, uncached t-SNE layout
    "chapter_memory_mb": 1024.0,  # peak memory executing any chapter
    "minilm_load": 2.0,           # loading the real pretrained encoder (all-MiniLM-L6-v2)
    "minilm_sentence": 0.050,     # one sentence of up to 64 WordPiece tokens through it, with the cache
    "minilm_site_patterns": 20.0,  # the site's build: every head's pattern on the sentences its explorer offers
    "patching_grid": 1.0,         # a whole activation-patching grid (heads x positions), page or kernel
    "smollm2_load": 5.0,          # loading SmolLM2-135M from its package's GGUF file, dequantizing included
    "smollm2_prompt": 0.500,      # a prompt of 32 tokens through SmolLM2, filling the KV cache
    "smollm2_token": 0.100,       # one generated token with the KV cache
    "smollm2_memory_mb": 1536.0,  # peak memory of a chapter that uses SmolLM2
    "smollm2_site_menu": 30.0,    # the site's build: SmolLM2 run on the 56 prompts of the real-model chapter's menu
    "smollm2_site_decoding": 75.0,  # the real-model chapter's 24 open prompts decoded five ways (about 5,800 row-steps of
                                    # a batch at about 9 ms each; measured 54 s on one thread with the machine idle, 67 s
                                    # under a load of 2): shipped in data/real-model/decoding.json, so a build pays it only
                                    # when a setting or the model file changes
    # SmolLM2 in the page (lib/explorers/js/smollm2/: Node for the kernels, chromium for the page)
    "smollm2_page_token_ms": 30.0,     # one new token with the KV cache at 32 positions, CPU of one thread, p95
    "smollm2_page_prompt": 1.0,        # a 32-token text from nothing
    "smollm2_page_lens_ms": 150.0,     # the logit lens of all 30 layers at one position
    "smollm2_page_cached": 3.0,        # second visit: the model from the browser's cache to the first result
    "smollm2_page_memory_mb": 384.0,   # the page's WebAssembly memory
    "main_thread_ms": 50.0,            # the page's longest task on its main thread while the model works
    # the grader (`make bench-grade`, scripts/grade_bench.py)
    "grade_class": 600.0,         # 30 learners x every chapter with exercises, `make grade` on 2 idle cores
    "grade_memory_mb": 300.0,     # the grader's own peak memory (its runs not counted), whatever a learner returns
    # the website
    "page_gzip_bytes": 2_000_000,  # one page, gzip-compressed as a host serves it, theme included
    "frame_ms": 16.0,             # one interaction (forward pass in the page and draw), p95
    "ready_ms": 1000.0,           # explorers answering after the page loads
    "longest_task_ms": 50.0,      # the longest task of a page's main thread once it is shown (first contentful paint)
}
