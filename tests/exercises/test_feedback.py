"""Exercises: the self-checks judge without giving answers away, and the student notebooks run."""
import math
import re
import sys

import nbformat
import numpy as np
import torch
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "scripts"))

import book  # noqa: E402
import notebooks  # noqa: E402
from lib import chapters  # noqa: E402
from lib.exercises import Feedback, check_number  # noqa: E402
from lib.chapters.part3.search_by_hand import checks as check  # noqa: E402
from lib.model.store import load  # noqa: E402


def test_feedback_never_contains_the_expected_answer():
    expected = 1.2345
    for answer in (..., 0.0, 5.0, "abc", float("nan")):
        fb = check_number(answer, expected, tol=1e-3, what="x")
        assert not fb and "1.234" not in fb.message and "1.235" not in fb.message
    assert check_number(1.2346, expected, tol=1e-3, what="x")
    assert "too high" in check_number(2, expected, tol=1e-3, what="x").message
    assert "too low" in check_number(0, expected, tol=1e-3, what="x").message


def test_value_checks_read_numpy_and_torch_answers():
    from lib.exercises import check_choice, check_whole_number
    assert check_number(np.float64(1.2345), 1.2345, tol=1e-3, what="x")
    assert check_number(np.array([1.2345]), 1.2345, tol=1e-3, what="x")
    assert check_number(torch.tensor(1.2345), 1.2345, tol=1e-3, what="x")
    assert check_whole_number(np.int64(3), 3, what="n") and check_whole_number(torch.tensor(3), 3, what="n")
    assert check_choice(np.str_("Tarso"), ["Tarso", "Cefa"], "Tarso", right="yes", wrong="no")
    for garbage in (np.array([1.0, 2.0]), torch.tensor([1.0, 2.0]), 10 ** 400, float("inf"), "1.2345", True):
        fb = check_number(garbage, 1.2345, tol=1e-3, what="x")
        assert not fb and "single finite number" in fb.message and len(fb.message) < 200
        fb = check_choice(garbage, ["Tarso", "Cefa"], "Tarso", right="yes", wrong="no")
        assert not fb and "one of" in fb.message and len(fb.message) < 200
    # A right verdict carries the interval it accepts (for the page test); a wrong one never does.
    assert 'data-accepts="1.2335' in check_number(1.2345, 1.2345, tol=1e-3, what="x")._repr_html_()
    assert "data-accepts" not in check_number(2.0, 1.2345, tol=1e-3, what="x")._repr_html_()


def test_search_by_hand_checks():
    assert not check.logit_of_cefa(...).answered
    assert check.logit_of_cefa(0.2 * 0.3 + 1.0 * 1.0 + 0.4 * 0.2)
    assert "chapter's query" in check.logit_of_cefa(0.3 + 0.5 - 0.04).message
    assert not check.winner_for_query("Tarso") and check.winner_for_query("Cefa")
    assert "chapter's query" in check.winner_for_query("Tarso").message
    assert "not the largest" in check.winner_for_query("Paolo").message
    assert "one of" in check.winner_for_query("banana").message
    assert check.smallest_scale(5) and not check.smallest_scale(6) and not check.smallest_scale(4)
    assert "whole number" in check.smallest_scale(2.5).message
    lm = load("calling-game")
    assert "raise" in check.temperature_for_half(lm, 1.0).message
    assert "positive" in check.temperature_for_half(lm, -1).message


def test_feedback_renders_in_a_notebook():
    html = Feedback(False, "a <b> c").__repr__(), Feedback(True, "x")._repr_html_()
    assert html[0].startswith("Not yet") and "Correct" in html[1]


@pytest.fixture(scope="module")
def student_notebooks(tmp_path_factory):
    """The handouts `make student` writes: the chapters with exercises (other pages come along)."""
    out = tmp_path_factory.mktemp("student")
    book.student(out)
    return [p for p in sorted(out.rglob("*.ipynb"))
            if any(c.get("metadata", {}).get("course", {}).get("role") == "answer"
                   for c in nbformat.read(p, as_version=4).cells)]


def stub_checks(nb) -> int:
    """How many verdicts the answer cells of a notebook print: one per `check.` call."""
    return sum(len(re.findall(r"^check\.\w+\(", c.source, re.M)) for c in nb.cells
               if c.cell_type == "code" and c.metadata.get("course", {}).get("role") == "answer")


def answer_stubs(text: str) -> int:
    """The learner's places to answer: a value left as `...`, or a function whose body is `...`."""
    return text.count("= ...") + len(re.findall(r"^def \w+\(.*\):\n    \.\.\.", text, re.M))


def test_student_notebooks_have_no_solutions(student_notebooks):
    names = [p.stem for p in student_notebooks]
    for chapter in ("what-an-embedding-is", "hand-wired", "three-ways", "residual-path", "real-language", "gram-schmidt-by-hand", "why-attention", "bigrams", "one-head", "many-heads", "shapes-and-cache", "circuits", "ablation",
                    "search-by-hand", "mechanism", "results-page", "hallucination", "lever", "scale", "tools",
                    "practice"):
        assert chapter in names, f"no student notebook for {chapter}"
    for path in student_notebooks:
        nb = nbformat.read(path, as_version=4)
        text = "\n".join(c.source for c in nb.cells)
        assert "Solution to" not in text and "solution-start" not in text, path.stem
        assert all(not c.get("outputs") for c in nb.cells if c.cell_type == "code")
        tasks = [c for c in nb.cells if c.metadata.get("course", {}).get("role") == "task"]
        answers = [c for c in nb.cells if c.metadata.get("course", {}).get("role") == "answer"]
        assert len(tasks) >= 2, f"{path.stem}: every chapter ends with exercises"
        assert [c.metadata["course"]["exercise"] for c in answers] == [c.metadata["course"]["exercise"] for c in tasks]
        assert answer_stubs(text) >= len(tasks), f"{path.stem}: every answer stub stays in the student notebook"
    nb = nbformat.read(student_notebooks[names.index("search-by-hand")], as_version=4)
    text = "\n".join(c.source for c in nb.cells)
    assert "answer = float(" not in text and "lo, hi = 1.0, 100.0" not in text
    assert text.count("= ...") == 4 and stub_checks(nb) == 5


# A student notebook is its chapter without the solutions. Executing all 21 again took 700 s of CI;
# instead each is read with the outputs of the build's own execution (solutions left out, outputs
# kept), and what could make the two runs differ is ruled out: a solution that binds or changes a
# name a later cell of the handout reads. One handout is still executed for real, in a fresh kernel
# in its own folder (and the grader's test runs handouts with answers).
def top_level_bindings(tree) -> tuple[set, set]:
    """(names a cell binds at its top level, names it changes in place: x.a = ..., x[i] = ..., x += ...)."""
    import ast

    bound, changed = set(), set()
    scoped = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp,
              ast.DictComp, ast.GeneratorExp)

    def visit(node):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(node.name)
            return
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).split(".")[0] for a in node.names)
            return
        if isinstance(node, scoped):
            return
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            root = node
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name):
                changed.add(root.id)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return bound, changed


def names_read(tree) -> set:
    import ast
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


def solution_leaks(nb) -> list[str]:
    """Names a solution's code binds or changes that a later cell outside the solutions reads before
    binding them again: the handout, which has no solutions, would run differently there."""
    import ast

    from IPython.core.inputtransformer2 import TransformerManager

    python = TransformerManager()
    leaked, found, inside, imported = {}, [], False, set()
    for cell in nb.cells:
        role = cell.metadata.get("course", {}).get("role")
        if role == "solution":
            inside = True
            continue
        if cell.cell_type == "markdown":
            if re.match(r"#{1,4} ", cell.source):
                inside = False
            continue
        # Statement by statement: a name the cell binds before it reads it is its own.
        for statement in ast.parse(python.transform_cell(cell.source)).body:
            bound, changed = top_level_bindings(statement)
            is_import = isinstance(statement, (ast.Import, ast.ImportFrom))
            if inside:
                # An import the handout has already made binds the same module again: harmless.
                if not (is_import and ast.dump(statement) in imported):
                    leaked.update({name: cell.source.splitlines()[0] for name in bound | changed})
                continue
            if is_import:
                imported.add(ast.dump(statement))
            found += [f"{name!r} (from the solution cell starting {leaked[name]!r})"
                      for name in sorted(names_read(statement) & set(leaked))]
            for name in bound:
                leaked.pop(name, None)
    return sorted(set(found))


def test_student_notebooks_run_and_report_unanswered():
    """Every handout, with its build's outputs: each answer cell says it is not answered yet, no cell
    shows an error, and no solution (absent from the handout) feeds a later cell."""
    info = notebooks.Book.read()
    checked = 0
    for doc in notebooks.toc_docnames():
        path = ROOT / (doc + ".md")
        if not path.exists():
            continue
        ran = notebooks.executed(path)
        handout = notebooks.reader_notebook(doc, ran, info, solutions="absent", outputs=True)
        expected = stub_checks(handout)
        if not expected:
            continue
        outputs = " ".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                           for c in handout.cells if c.cell_type == "code" for o in c.outputs)
        assert outputs.count("Not answered yet") == expected, (doc, outputs[-2000:])
        assert "error" not in [o.get("output_type") for c in handout.cells for o in c.get("outputs", [])], doc
        leaks = solution_leaks(notebooks.reader_notebook(doc, ran, info, solutions="fold", outputs=False))
        assert not leaks, f"{doc}: a later cell reads what a solution made: {leaks}"
        checked += 1
    assert checked >= 21


def test_the_leak_check_can_fail():
    cells = [nbformat.v4.new_code_cell("lm = 1"),
             nbformat.v4.new_markdown_cell("#### Solution", metadata={"course": {"role": "solution"}}),
             nbformat.v4.new_code_cell("answer = 2\nlm.model.x = 3\nimport numpy as np\ndef helper():\n    inner = 1"),
             nbformat.v4.new_markdown_cell("### Exercise 2"),
             nbformat.v4.new_code_cell("print(answer, lm, np, [inner for inner in range(2)])\nhelper()")]
    found = solution_leaks(nbformat.v4.new_notebook(cells=cells))
    assert sorted(f.split()[0] for f in found) == ["'answer'", "'helper'", "'lm'", "'np'"], found
    cells[-1].source = "answer = 0\nprint(answer)"
    assert solution_leaks(nbformat.v4.new_notebook(cells=cells)) == []


def test_a_student_notebook_runs_in_a_fresh_kernel(student_notebooks):
    """One handout, executed for real from its own folder, as a learner opens it."""
    from nbclient import NotebookClient

    path = next(p for p in student_notebooks if p.stem == "search-by-hand")
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(path.parent)}}).execute()
    outputs = " ".join(str(o.get("data", {}).get("text/plain", "")) + str(o.get("text", ""))
                       for c in nb.cells if c.cell_type == "code" for o in c.outputs)
    assert outputs.count("Not answered yet") == stub_checks(nb) == 5
    assert "error" not in [o.get("output_type") for c in nb.cells for o in c.get("outputs", [])]


def built_chapters():
    site = ROOT / "_build" / "html" / "chapters"
    return sorted(site.rglob("*.html")) if site.exists() else []


def test_the_book_shows_every_solution_as_correct():
    pages = built_chapters()
    if not pages:
        pytest.fail("the site is not built: run `make book`")
    with_exercises = 0
    for html in pages:
        text = html.read_text()
        assert "Not yet" not in text and "Not answered yet" not in text, f"{html.name}: a solution does not pass its check"
        exercises = len(re.findall(r'class="exercise (?:\w+ )?admonition"', text))
        if exercises:
            with_exercises += 1
            assert text.count("<strong>Correct</strong>") >= exercises, html.name
    assert with_exercises >= 15
    text = (ROOT / "_build" / "html" / "chapters" / "part3" / "search-by-hand.html").read_text()
    from lib.exercises.catalogue import catalogue
    in_chapter = [e for e in catalogue() if e.chapter == "chapters/part3/search-by-hand"]
    assert text.count("<strong>Correct</strong>") == len(in_chapter) == 5


# ------------------------------------------------------------------ Part 3's self-checks
from lib.content.prompts import CONFIDENT, UNCERTAIN  # noqa: E402
from lib.chapters.part3.hallucination import checks as hallucination  # noqa: E402
from lib.chapters.part3.lever import checks as lever  # noqa: E402
from lib.chapters.part3.mechanism import checks as mechanism  # noqa: E402
from lib.chapters.part3.practice import checks as practice  # noqa: E402
from lib.chapters.part3.results_page import checks as results_page  # noqa: E402
from lib.chapters.part3.scale import checks as scale  # noqa: E402
from lib.chapters.part3.tools import checks as tools  # noqa: E402


@pytest.fixture(scope="module")
def lm():
    return load("calling-game")


# What a learner may hand in by mistake: each gets a verdict in one line, never an exception.
PART3_GARBAGE = (None, "Tarso?", np.array([1.0, 2.0]), torch.tensor([3.0, 4.0]), 10 ** 400, 1e308, float("nan"))


def one_line_verdicts(check, *args):
    for garbage in PART3_GARBAGE:
        fb = check(*args, garbage)
        assert isinstance(fb, Feedback) and not fb.ok, (garbage, fb)
        assert "\n" not in fb.message and len(fb.message) < 400, fb.message


def test_mechanism_checks(lm):
    from lib.analysis.search import model_dictionary, model_query
    from lib.model.readout import prompt_logits
    right = float(prompt_logits(lm, CONFIDENT)[lm.vocab.id("Cefa")])
    assert mechanism.logit_of(lm, right) and not mechanism.logit_of(lm, ...).answered
    no_bias = float(model_query(lm, CONFIDENT) @ model_dictionary(lm)["Cefa"])
    if abs(no_bias - right) > 1e-3:
        assert "bias" not in mechanism.logit_of(lm, no_bias).message and "one more" in mechanism.logit_of(lm, no_bias).message
    # The cosine exercise asks about a prompt the chapter does not rank.
    prompt = mechanism.COSINE_PROMPT
    h = model_query(lm, prompt)
    W = lm.model.W_U.detach().double().numpy()
    cos = h @ W / (np.linalg.norm(W, axis=0) * np.linalg.norm(h))
    best = lm.vocab.tokens[int(np.argmax(cos))]
    by_dot = lm.vocab.tokens[int(prompt_logits(lm, prompt).argmax())]
    assert mechanism.cosine_winner(lm, best) and not mechanism.cosine_winner(lm, "Tarso")
    assert best != "7" and not mechanism.cosine_winner(lm, "7"), "the page's example prints 7 first by angle"
    assert "one of" in mechanism.cosine_winner(lm, "Giovanni").message
    if by_dot != best:
        assert "dot product" in mechanism.cosine_winner(lm, by_dot).message
    for garbage in PART3_GARBAGE:
        assert not mechanism.cosine_winner(lm, garbage)


def test_the_stretched_query_keeps_its_bias(lm):
    from lib.analysis.search import model_query
    i = lm.vocab.id("Cefa")
    bias = float(lm.model.b_U[i])
    # The reference, from the model itself: the doubled query through the unembedding.
    doubled = float(2 * model_query(lm, CONFIDENT) @ lm.model.W_U.detach().double().numpy()[:, i] + bias)
    logit = doubled / 2 + bias / 2    # the logit at the query's own length
    fb = mechanism.stretched_logit(lm, doubled)
    assert fb and fb.accepts[0] < doubled < fb.accepts[1]
    assert "temperature" in mechanism.stretched_logit(lm, 2 * logit).message      # the bias doubled too
    assert "own length" in mechanism.stretched_logit(lm, logit).message            # nothing stretched
    assert "bias is missing" in mechanism.stretched_logit(lm, doubled - bias).message
    assert "too high" in mechanism.stretched_logit(lm, doubled + 5).message
    assert not mechanism.stretched_logit(lm, ...).answered
    one_line_verdicts(mechanism.stretched_logit, lm)


def test_results_page_checks(lm):
    from lib.model.readout import prompt_logits, softmax
    # Hugging Face's order: top-k 5 leaves five near-equal players, shared out to about a fifth each.
    assert results_page.survivors_after_top_k(lm, 3) and not results_page.survivors_after_top_k(lm, 4)
    assert "whole page" in results_page.survivors_after_top_k(lm, 5).message
    assert "whole number" in results_page.survivors_after_top_k(lm, 4.5).message
    logits = prompt_logits(lm, CONFIDENT)
    hot = float(softmax(logits, 3.0).max())
    assert results_page.top_prob_at(lm, hot) and results_page.top_prob_at(lm, hot + 0.004)
    assert not results_page.top_prob_at(lm, hot + 0.01)
    # What a learner gets by hand from the ten logits the first table prints, to two decimals.
    ten = torch.round(torch.sort(logits, descending=True).values[:10] * 100) / 100
    assert results_page.top_prob_at(lm, float(softmax(ten, 3.0)[0]))
    assert "multiplied" in results_page.top_prob_at(lm, float(softmax(logits * 9, 3.0).max())).message
    hot_count, warm_count = results_page._broken_rounds(lm, 2.0, range(20)), results_page._broken_rounds(lm, 1.0, range(20))
    assert results_page.broken_rounds(lm, hot_count) and not results_page.broken_rounds(lm, hot_count + 1)
    if warm_count != hot_count:
        assert "temperature 1" in results_page.broken_rounds(lm, warm_count).message


def test_hallucination_checks(lm):
    from lib.analysis.signs import read_signs
    h = read_signs(lm, "<BOS> banana chiama").entropy_bits
    assert hallucination.entropy_of(lm, h) and "nats" in hallucination.entropy_of(lm, h * math.log(2)).message
    # The page sits just under the one-bit flag the chapter prints everywhere: the round 1 is not it.
    assert abs(h - 1.0) > 1e-3 and not hallucination.entropy_of(lm, 1.0)
    one_line_verdicts(hallucination.entropy_of, lm)
    assert hallucination.confident_impossible(lm, "<BOS> Pietro chiama Pietro")
    assert "can occur" in hallucination.confident_impossible(lm, CONFIDENT).message
    assert "only" in hallucination.confident_impossible(lm, "<BOS> 7 chiama").message
    assert "cannot read" in hallucination.confident_impossible(lm, "<BOS> Giovanni").message


def test_the_entropy_of_a_sure_page(lm):
    n = len(lm.vocab)
    page = np.full(n, 0.1 / (n - 1))
    page[0] = 0.9
    right = float(-(page * np.log2(page)).sum())
    assert hallucination.entropy_sure_page(lm, right) and hallucination.entropy_sure_page(lm, round(right, 2))
    assert "nats" in hallucination.entropy_sure_page(lm, right * math.log(2)).message
    assert "only the top word" in hallucination.entropy_sure_page(lm, -0.9 * math.log2(0.9)).message
    two = -0.9 * math.log2(0.9) - 0.1 * math.log2(0.1)
    assert "as one word" in hallucination.entropy_sure_page(lm, two).message
    assert "too high" in hallucination.entropy_sure_page(lm, 1.5).message
    one_line_verdicts(hallucination.entropy_sure_page, lm)


def test_lever_checks(lm):
    from lib.analysis.lens import lens_view
    from lib.analysis.trajectory import residual_trajectory
    # The count over the vice set, by the lens prompt by prompt.
    prompts = lever.vice_set()
    assert len(prompts) == 40 and all("chiama Paolo" in p for p in prompts)
    at = lever.leads_after(lm, prompts, "vice")
    view = lens_view(lm, prompts[0], "vice")    # one prompt counted by hand
    assert lever.leads_after(lm, prompts[:1], "vice") == {s: int(r == 1) for s, r in zip(view.stages, view.track_ranks)}
    assert lever.vice_leads_after(lm, at["blocks.1.attn"]) and lever.vice_leads_after(lm, float(at["blocks.1.attn"]))
    if at["blocks.0.mlp"] != at["blocks.1.attn"]:
        assert "one stage earlier" in lever.vice_leads_after(lm, at["blocks.0.mlp"]).message
    if at["blocks.1.mlp"] != at["blocks.1.attn"]:
        assert "last stage" in lever.vice_leads_after(lm, at["blocks.1.mlp"]).message
    assert "whole number" in lever.vice_leads_after(lm, 36.5).message
    for garbage in PART3_GARBAGE:
        assert not lever.vice_leads_after(lm, garbage)
    # MLP 1's share of the path along vice: the pushes add up to where the path ends.
    path = residual_trajectory(lm, lever.VICE_PROMPT, toward="vice")
    share = path.pushes["blocks.1.mlp"] / sum(path.pushes.values())
    assert lever.push_share(lm, share)
    chapter = residual_trajectory(lm, CONFIDENT)
    tarso_share = chapter.pushes["blocks.1.mlp"] / sum(chapter.pushes.values())
    if abs(tarso_share - share) > 0.01:
        assert "chapter's prompt" in lever.push_share(lm, tarso_share).message
    assert "percentage" in lever.push_share(lm, share * 100).message
    assert "push itself" in lever.push_share(lm, path.pushes["blocks.1.mlp"]).message
    one_line_verdicts(lever.push_share, lm)


def test_scale_checks():
    assert scale.multiply_adds(50257 * 768) and not scale.multiply_adds(50257)
    assert "added" in scale.multiply_adds(50257 + 768).message
    assert "bytes" in scale.multiply_adds(50257 * 768 * 4).message
    assert "one multiply-add per word" in scale.multiply_adds(50257).message
    assert "too low" in scale.multiply_adds(1000).message
    assert scale.dictionary_gigabytes(256_000 * 12288 * 2 / 1e9)
    assert "32-bit" in scale.dictionary_gigabytes(256_000 * 12288 * 4 / 1e9).message
    assert "2**30" in scale.dictionary_gigabytes(256_000 * 12288 * 2 / 2**30).message
    assert "GPT-3's own" in scale.dictionary_gigabytes(50257 * 12288 * 2 / 1e9).message   # half the table's figure
    one_line_verdicts(scale.multiply_adds)
    one_line_verdicts(scale.dictionary_gigabytes)


def test_tools_checks(lm):
    from lib.content.conveyor import always, current_turn, run_belt
    from lib.content.corpora.calling_game import legal_callees
    belt = run_belt(lm, "<BOS>", always("4"))
    first = next(i for i, t in enumerate(belt.tokens) if t.writer == "tool")
    after = belt.tokens[first + 1].token
    assert tools.word_after_tool(lm, after) and not tools.word_after_tool(lm, "Paolo")
    assert "tool's own word" in tools.word_after_tool(lm, "4").message
    if after not in ("Tarso", "vice"):
        assert "numbers get none" in tools.word_after_tool(lm, "Tarso").message
    for garbage in PART3_GARBAGE:
        assert not tools.word_after_tool(lm, garbage)
    assert tools.full_round_tool(lm, lambda w: [legal_callees(*current_turn(w))[-1]])
    assert "cannot read" in tools.full_round_tool(lm, lambda w: ["Giovanni"]).message
    assert "ZeroDivisionError" in tools.full_round_tool(lm, lambda w: [1 / 0]).message
    assert "function" in tools.full_round_tool(lm, "Paolo").message
    assert not tools.full_round_tool(lm, lambda w: ["Pietro"])


def test_a_tool_left_as_the_stub_or_looping_gets_a_verdict(lm):
    def tool(words):
        ...

    def forever(words):
        while True:
            pass

    assert not tools.full_round_tool(lm, tool).answered
    fb = tools.full_round_tool(lm, forever)
    assert not fb and fb.answered and "loop" in fb.message


def test_practice_checks(lm):
    assert practice.needs_review(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama")
    assert not practice.needs_review(lm, CONFIDENT) and "one of" in practice.needs_review(lm, UNCERTAIN).message
    assert "one word only, Tarso" in practice.needs_review(lm, CONFIDENT).message
    assert "one word only, Cefa" in practice.needs_review(lm, practice.REVIEW_PROMPTS[2]).message
    for garbage in PART3_GARBAGE:
        assert not practice.needs_review(lm, garbage)
    assert practice.steer_to(lm, "<BOS> Pietro chiama 4 <SEP> 4 chiama Paolo")
    assert "forbid" in practice.steer_to(lm, "<BOS> 4 chiama Paolo").message
    assert "top word" in practice.steer_to(lm, CONFIDENT).message


def test_the_catalogue_reads_kinds_and_refuses_a_misspelt_one(tmp_path):
    from lib.errors import CourseError
    from lib.exercises.catalogue import catalogue

    (tmp_path / "_toc.yml").write_text("root: intro\nchapters:\n- file: ch\n")
    exercise = ":::{{exercise}}\n:class: {kind}\n:label: ex-{n}\n\nDo it.\n:::\n"
    (tmp_path / "ch.md").write_text("# A chapter\n\n" + exercise.format(kind="predict", n=1)
                                    + exercise.format(kind="investigate extra", n=2))
    assert [(e.label, e.kind, e.kind_label) for e in catalogue(tmp_path)] == [
        ("ex-1", "predict", "Predict, then check"), ("ex-2", "investigate", "Investigate")]
    (tmp_path / "ch.md").write_text("# A chapter\n\n" + exercise.format(kind="wirte", n=3))
    with pytest.raises(CourseError, match="did you mean 'write'"):
        catalogue(tmp_path)


def test_the_catalogue_lists_every_exercise_with_its_self_check():
    from lib.exercises.catalogue import catalogue

    listed = catalogue()
    written = sum(p.read_text().count(":::{exercise}") for p in (ROOT / "chapters").rglob("*.md")
                  if not any(part.startswith(".") for part in p.parts))
    assert len(listed) == written >= 39
    kinds = {e.label: e.kind for e in listed}
    assert kinds["ex-page-softmax"] == "write" and kinds["ex-page-hot"] == "predict"
    assert kinds["ex-page-hot-rounds"] == "investigate"
    assert set(kinds.values()) <= {"write", "predict", "investigate", None}
    assert len({e.label for e in listed}) == len(listed), "exercise labels are unique"
    assert all(e.checks for e in listed), [e.label for e in listed if not e.checks]
    for e in listed:
        module = chapters.checks(e.chapter)
        for name in e.checks:
            assert callable(getattr(module, name, None)), f"{e.label}: the chapter's checks have no {name}"


# ------------------------------------------------------------------ the instructor page's plan
def _fabricated_chapter(tmp_path, exercises: str):
    """A book of one chapter, `ch`, with some prose, two code cells and the given exercises."""
    (tmp_path / "_toc.yml").write_text("root: intro\nchapters:\n- file: ch\n")
    prose = " ".join(["word"] * 240)
    (tmp_path / "ch.md").write_text(
        "---\njupytext:\n  formats: md:myst\n---\n\n# A chapter\n\n" + prose + "\n\n"
        "```{code-cell} ipython3\n:tags: [hide-input]\n\nprint('a table to study, not words to read')\n```\n\n"
        "```{code-cell} ipython3\n:tags: [remove-cell]\n\nhidden = 'set-up the reader never sees'\n```\n\n"
        "## Exercises\n\n" + exercises)


def _exercise(label, kind, call, module="results_page"):
    option = f":class: {kind}\n" if kind else ""
    return (f":::{{exercise}}\n:label: {label}\n{option}\nDo it.\n:::\n\n"
            f"```{{code-cell}} ipython3\n:tags: [remove-cell, exercise-stub]\n\n"
            f"from {chapters.unit(module).package} import checks as check\nanswer = ...\ncheck.{call}\n```\n\n")


def test_a_chapter_plan_counts_kinds_and_lists_the_exercises_that_suit_grading(tmp_path):
    from lib.exercises import plan as teaching

    _fabricated_chapter(tmp_path, "".join([
        _exercise("ex-write", "write", "softmax_with_temperature(answer)"),
        _exercise("ex-predict", "predict", "top_prob_at(lm, answer)"),
        _exercise("ex-value", "investigate", "broken_rounds(lm, answer)"),
        _exercise("ex-open", "investigate", "confident_impossible(lm, answer)", module="hallucination"),
        _exercise("ex-unkinded", None, "smallest_scale(answer)", module="search_by_hand"),
        _exercise("ex-predict-2", "predict", "survivors_after_top_k(lm, answer)"),
    ]))
    [plan] = teaching.chapter_plans(tmp_path)
    assert (plan.chapter, plan.title) == ("ch", "A chapter")
    assert plan.counts == {"write": 1, "predict": 2, "investigate": 2, None: 1}
    assert list(plan.counts) == ["write", "predict", "investigate", None], "in the book's order of kinds"
    # The open investigation (a prompt of the learner's own) is the one left out.
    assert plan.graded == ("ex-write", "ex-predict", "ex-value", "ex-unkinded", "ex-predict-2")
    # Words of prose before the exercises only: not the front matter, the code or the tasks.
    assert (plan.words, plan.outputs) == (242, 1)
    m = teaching.MINUTES_PER_EXERCISE
    assert plan.exercise_minutes == m["write"] + 2 * m["predict"] + 2 * m["investigate"] + m[None]
    assert plan.reading_minutes == round(242 / teaching.WORDS_PER_MINUTE + teaching.MINUTES_PER_OUTPUT)
    assert plan.minutes % teaching.ROUND_TO == 0
    assert plan.reading_minutes + plan.exercise_minutes <= plan.minutes < (
        plan.reading_minutes + plan.exercise_minutes + teaching.ROUND_TO)
    text = teaching.plan_markdown(plan)
    assert "1 write, 2 predict, 2 investigate, 1 without a kind yet" in text
    assert "{ref}`ex-unkinded <ex-unkinded>`" in text and "ex-open" not in text
    assert f"about {plan.minutes} minutes" in text and "242 words, 1 table, figure or explorer" in text


def test_an_exercise_set_in_the_text_is_timed_as_an_exercise_not_read_as_prose(tmp_path):
    from lib.exercises import plan as teaching

    # A predict placed before the explorer that checks it: its task, answer cell and solution sit in
    # the prose; the plan counts it once, as an exercise.
    in_text = (_exercise("ex-early", "predict", "top_prob_at(lm, answer)")
               + ":::{solution-start} ex-early\n:class: dropdown\n:::\n\nWhy, in five more words.\n\n"
               "```{code-cell} ipython3\nanswer = 0.5\n```\n\n:::{solution-end}\n:::\n\nThen two words.\n\n")
    _fabricated_chapter(tmp_path, _exercise("ex-write", "write", "softmax_with_temperature(answer)"))
    text = (tmp_path / "ch.md").read_text().replace("## Exercises", in_text + "## Exercises")
    (tmp_path / "ch.md").write_text(text)
    [plan] = teaching.chapter_plans(tmp_path)
    assert [e for e in plan.counts if plan.counts[e]] == ["write", "predict"]
    assert (plan.words, plan.outputs) == (242 + 3, 1), "the prose after it is read; the exercise is not"


def test_a_chapter_plan_refuses_a_misspelt_kind_and_a_check_that_is_not_there(tmp_path):
    from lib.errors import CourseError
    from lib.exercises import plan as teaching
    from lib.exercises.catalogue import Exercise

    _fabricated_chapter(tmp_path, _exercise("ex-1", "predcit", "top_prob_at(lm, answer)"))
    with pytest.raises(CourseError, match="did you mean 'predict'"):
        teaching.chapter_plans(tmp_path)
    with pytest.raises(CourseError, match="'wirte' is not a kind of exercise"):
        teaching.count_by_kind([Exercise("ch", "A chapter", "ex-1", "wirte", "Do it.", ("f",), "results_page")])
    _fabricated_chapter(tmp_path, _exercise("ex-1", "investigate", "no_such_check(answer)"))
    with pytest.raises(CourseError, match="no_such_check is not in the checks of chapter results_page"):
        teaching.chapter_plans(tmp_path)
    with pytest.raises(CourseError, match="not a chapter with exercises"):
        teaching.plan_of("chapters/part9/nowhere", [])


def instructor_page_sections() -> dict[str, str]:
    """The instructor page's ### sections, by the chapter whose plan each one prints."""
    text = (ROOT / "instructors.md").read_text()
    sections = {}
    for section in re.split(r"^(?=#{2,3} )", text, flags=re.M):
        for chapter in re.findall(r'^plan\("([^"]+)"\)', section, re.M):
            assert chapter not in sections, f"{chapter} has two plan entries on the instructor page"
            sections[chapter] = section
    return sections


def test_every_chapter_with_exercises_has_a_plan_on_the_instructor_page():
    from lib.exercises.catalogue import catalogue

    chapters = {e.chapter: e.title for e in catalogue()}
    sections = instructor_page_sections()
    assert set(chapters) - set(sections) == set(), "chapters with exercises but no plan on instructors.md"
    assert set(sections) - set(chapters) == set(), "plans on instructors.md for chapters without exercises"
    for chapter, section in sections.items():
        assert section.startswith(f"### {chapters[chapter]}\n"), f"{chapter}: the section is headed by its title"
        assert f"{{doc}}`the chapter <{chapter}>`, a learner can:" in section, chapter
        assert len(re.findall(r"^- \S", section, re.M)) >= 2, f"{chapter}: at least two things a learner can do"
        assert "**Before it:**" in section and "Mathematics:" in section, f"{chapter}: its prerequisites"


# ------------------------------------------------------------------ Part 1's self-checks
def test_part1_checks(lm):
    from lib.chapters.part1.ablation import checks as ablation
    from lib.chapters.part1.bigrams import checks as bigrams
    from lib.chapters.part1.circuits import checks as circuits
    from lib.chapters.part1.many_heads import checks as many_heads
    from lib.chapters.part1.one_head import checks as one_head
    from lib.chapters.part1.shapes_and_cache import checks as shapes_and_cache
    from lib.chapters.part1.why_attention import checks as why_attention
    # The T: the horizontal filter at the centre stop sees the bar on its negative row.
    assert why_attention.centre_response(-2) and why_attention.centre_response(-2.0)
    assert "vertical" in why_attention.centre_response(4).message
    assert "too low" in why_attention.centre_response(-3).message
    assert "too high" in why_attention.centre_response(6).message      # the vertical stroke's printed answer
    assert "whole number" in why_attention.centre_response(5.5).message
    assert "whole number" in why_attention.centre_response("minus two").message
    assert why_attention.predicted_class("vertical") and not why_attention.predicted_class("horizontal")
    assert "scores lower" in why_attention.predicted_class("horizontal").message
    assert "one of" in why_attention.predicted_class("diagonal").message


def test_one_head_value_checks():
    from lib.content.worked_examples import cat_sat
    from lib.chapters.part1.one_head import checks as one_head
    ex = cat_sat()
    _, cache = ex.model.run_with_cache(ex.tokens)
    raw = cache["blocks.0.attn.qk"][0, 2, :3].double()
    right = float(torch.softmax(raw, -1)[1])
    assert one_head.sat_on_cat_unscaled(right) and one_head.sat_on_cat_unscaled(right + 0.002)
    scaled = float(cache["blocks.0.attn.pattern"][0, 2, 1])
    assert "divided by sqrt(d_head)" in one_head.sat_on_cat_unscaled(scaled).message
    assert "too high" in one_head.sat_on_cat_unscaled(float(torch.softmax(raw, -1)[2])).message
    assert not one_head.sat_on_cat_unscaled(...).answered
    import math as m
    e = [m.exp(s / m.sqrt(8)) for s in (1, 1, 2)]
    assert one_head.abc_self_weight(e[2] / sum(e))
    d2 = [m.exp(s / m.sqrt(2)) for s in (1, 1, 2)]
    assert "too high" in one_head.abc_self_weight(d2[2] / sum(d2)).message        # d_head left at 2
    assert "too low" in one_head.abc_self_weight(1 / 3).message                   # a uniform guess


def test_many_heads_and_shapes_value_checks():
    from lib.chapters.part1.many_heads import checks as many_heads
    from lib.chapters.part1.shapes_and_cache import checks as shapes_and_cache
    assert many_heads.mlp_weights(96) and many_heads.mlp_weights(96.0)
    assert "one of the two matrices" in many_heads.mlp_weights(48).message
    assert "biases" in many_heads.mlp_weights(96 + 6 + 8).message
    assert "not square" in many_heads.mlp_weights(36 + 64).message
    # GPT-2 small: 2 x 12 layers x 12 heads x 64 numbers x 2 bytes = 36,864 bytes per token.
    assert 10**9 // 36864 == 27126
    assert shapes_and_cache.gpt2_tokens_in_budget(27126) and shapes_and_cache.gpt2_tokens_in_budget(27126.0)
    assert "only the keys" in shapes_and_cache.gpt2_tokens_in_budget(54253).message
    assert "32-bit" in shapes_and_cache.gpt2_tokens_in_budget(13563).message
    assert "round down" in shapes_and_cache.gpt2_tokens_in_budget(27127).message
    assert "too low" in shapes_and_cache.gpt2_tokens_in_budget(1024).message       # the context, not the budget
    assert "whole number" in shapes_and_cache.gpt2_tokens_in_budget(27126.5).message
    assert "whole number" in shapes_and_cache.gpt2_tokens_in_budget("lots").message
    share = 32_000 * 4_096 / 6_738_415_616
    assert shapes_and_cache.seven_b_embedding_share(share)
    assert "W_U" in shapes_and_cache.seven_b_embedding_share(2 * share).message
    assert "GPT-2 small's share" in shapes_and_cache.seven_b_embedding_share(38_597_376 / 124_439_808).message
    assert "percentage" in shapes_and_cache.seven_b_embedding_share(100 * share).message


def test_bigram_two_steps_check():
    from lib.chapters.part1.bigrams import checks as bigrams
    from lib.model.readout import prompt_logits, softmax
    zl = load("zero-layer")
    prefix, target = bigrams.TWO_STEPS["prefix"], bigrams.TWO_STEPS["target"]
    paths = bigrams.two_step_paths(zl, prefix, target)
    # The ways through x, summed over every x: the model's page two steps on, by brute force.
    t = zl.vocab.id(target)
    pages = [softmax(prompt_logits(zl, prefix + " " + x)) for x in zl.vocab.tokens]
    first = softmax(prompt_logits(zl, prefix))
    assert abs(sum(paths) - sum(float(first[x] * pages[x][t]) for x in range(len(pages)))) < 1e-12
    assert bigrams.two_steps_ahead(zl, sum(paths)) and bigrams.two_steps_ahead(zl, sum(paths) + 0.004)
    assert "only the way through vice" in bigrams.two_steps_ahead(zl, max(paths)).message
    assert "who called him" in bigrams.two_steps_ahead(zl, paths[zl.vocab.id("Tarso")]).message
    assert "right after Paolo" in bigrams.two_steps_ahead(zl, float(first[t])).message
    assert "rules say" in bigrams.two_steps_ahead(zl, 1).message
    assert "too high" in bigrams.two_steps_ahead(zl, 0.6).message
    assert not bigrams.two_steps_ahead(zl, ...).answered


def test_bigram_unseen_pair_check():
    from lib.chapters.part1.bigrams import checks as bigrams
    zl = load("zero-layer")
    p = bigrams.unseen_probability(zl)
    assert 0 < p < 0.001, "the predict's right range is the second"
    assert bigrams.unseen_pair(zl, bigrams.range_of(p))
    assert "softmax" in bigrams.unseen_pair(zl, "exactly 0").message
    assert "how far down" in bigrams.unseen_pair(zl, "above 0.1").message
    assert [bigrams.range_of(q) for q in (0.0, 1e-5, 0.05, 0.5)] == list(bigrams.UNSEEN_RANGES)
    for garbage in (None, "zero", np.array([0.0]), 10**400, True):
        fb = bigrams.unseen_pair(zl, garbage)
        assert not fb.ok and fb.message


def test_the_ways_of_switching_off_and_the_patch_checks(lm):
    """The two investigates of the three ways and of patching: the library's own answer is right,
    the same counts in another order, one count off, a wrong head and a wrong position are named."""
    from lib.analysis.ablation import KINDS
    from lib.analysis.head_survey import ablation_survey
    from lib.analysis.patching import patch, swap_players
    from lib.content.prompt_sets import epithet_sets
    from lib.chapters.part1.ablation import checks as ablation

    group = epithet_sets(40, ablation.KIND_SET_SEED, max_tokens=lm.model.cfg.n_ctx)[ablation.KIND_EPITHET]
    lost = tuple(ablation_survey(lm, group, kind=k, seed=ablation.KIND_SET_SEED).lost(ablation.KIND_HEAD)
                 for k in KINDS)
    assert len(set(lost)) == 3, "the three ways must disagree on this set, or the exercise teaches nothing"
    # What the solution says of them: mean ablation costs the fewest, zero the most, resample close behind.
    zero, mean, resample = (lost[KINDS.index(k)] for k in ("zero", "mean", "resample"))
    assert mean < resample < zero and zero - resample < resample - mean, lost
    assert ablation.lost_each_way(lm, lost) and ablation.lost_each_way(lm, list(lost))
    assert "order" in ablation.lost_each_way(lm, lost[::-1]).message
    off = (lost[0], lost[1] + 1, lost[2])
    assert "mean" in ablation.lost_each_way(lm, off).message and str(lost[1]) not in ablation.lost_each_way(lm, off).message
    assert "three whole numbers" in ablation.lost_each_way(lm, (1.5, 2, 3)).message
    r = patch(lm, ablation.PATCH_CLEAN, swap_players(ablation.PATCH_CLEAN), ablation.PATCH_TARGET, ablation.PATCH_AGAINST)
    ranked = sorted(r.head_cells(), key=lambda c: -c["recovered"])
    assert ranked[0]["recovered"] - ranked[1]["recovered"] > 0.05, "a clear best cell"
    best = (ranked[0]["head"], ranked[0]["position"])
    # What the solution says of it: a first-layer head, at the position where the swapped player first stands.
    swapped = [i for i, (x, y) in enumerate(zip(r.clean, r.corrupted)) if x != y]
    assert best[0].startswith("L0") and best[1] == swapped[0] and best[1] < len(r.clean) - 1, (best, swapped)
    assert ablation.best_patch(lm, best) and ablation.best_patch(lm, list(best))
    other_head = next(c["head"] for c in ranked if c["head"] != best[0])
    assert "another head" in ablation.best_patch(lm, (other_head, best[1])).message
    assert "too" in ablation.best_patch(lm, (best[0], best[1] + 1)).message
    assert "a pair" in ablation.best_patch(lm, "L0H3").message


def test_ablation_and_circuits_value_checks(lm):
    from lib.analysis.ablation import ablation_view, all_heads
    from lib.chapters.part1.ablation import checks as ablation
    from lib.chapters.part1.circuits import checks as circuits
    # The page names L0H3, the head Cefa needs most; the exercise ranks all eight and asks for the second (L0H1 on the shipped
    # model, which takes Cefa from 0.9998 to 0.984, where L0H3 takes it to 0.30).
    assert ablation.cefa_head(lm, "L0H1") and not ablation.cefa_head(lm, "L1H3") and not ablation.cefa_head(lm, "L0H0")
    assert "comes first" in ablation.cefa_head(lm, "L0H3").message
    assert "one of" in ablation.cefa_head(lm, "L0H9").message
    top = ablation_view(lm, ablation.LATER_CALL, list(all_heads(lm.model)), None).page[0][0]
    intact = ablation_view(lm, ablation.LATER_CALL, [], None).page[0][0]
    assert intact == "Cefa" and top != "Cefa", "the prompt must need attention"
    assert ablation.every_head_off_top(lm, top)
    assert "nothing reaches the last position" in ablation.every_head_off_top(lm, "Cefa").message
    wrong = ablation.every_head_off_top(lm, "Tarso")
    assert not wrong and top not in wrong.message
    assert "one of" in ablation.every_head_off_top(lm, "not-a-token").message
    assert circuits.pair_ov_rank(lm, 2 * lm.model.cfg.d_head)
    assert "one head's rank" in circuits.pair_ov_rank(lm, lm.model.cfg.d_head).message
    assert "bounds the rank" in circuits.pair_ov_rank(lm, lm.model.cfg.d_model).message
    answer = circuits._most_self_attending_capo(lm)
    assert circuits.most_self_attending_capo(lm, answer)
    other = next(n for n in ("L0H3", "L1H3") if n != answer)
    wrong = circuits.most_self_attending_capo(lm, other)
    assert not wrong and answer not in wrong.message
    assert "one of" in circuits.most_self_attending_capo(lm, "head 3").message


def test_part2_embedding_checks(lm):
    from lib.chapters.part2.what_an_embedding_is import checks as emb
    from lib.analysis.maps import nearest
    zl = load("zero-layer")
    # Cefa's neighbour in the zero-layer model: right; the calling-game model's; Cefa itself; not a token.
    word = nearest(zl.model.W_E.detach().double().numpy(), zl.vocab.tokens, "Cefa", 1)[0][0]
    cg_word = nearest(lm.model.W_E.detach().double().numpy(), lm.vocab.tokens, "Cefa", 1)[0][0]
    assert word != cg_word
    assert emb.zero_layer_neighbour(lm, zl, word)
    assert "calling-game model" in emb.zero_layer_neighbour(lm, zl, cg_word).message
    assert "itself" in emb.zero_layer_neighbour(lm, zl, "Cefa").message
    assert "one of" in emb.zero_layer_neighbour(lm, zl, "banana-split").message
    # The Pietro-Paolo cosine: right; the dot product; the distance.
    E = lm.model.W_E.detach().double().numpy()
    a, b = E[lm.vocab.id("Pietro")], E[lm.vocab.id("Paolo")]
    assert emb.row_cosine(lm, float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b))))
    assert "dot product" in emb.row_cosine(lm, float(a @ b)).message
    assert "distance" in emb.row_cosine(lm, float(np.linalg.norm(a - b))).message


def test_part2_gram_schmidt_checks():
    from lib.chapters.part2.gram_schmidt_by_hand import checks as gs
    assert gs.prince_royalty(1.5 / np.sqrt(2)) and gs.prince_royalty(1.06), "a pencil estimate from e2 to 3 decimals"
    assert "e1" in gs.prince_royalty(1.0).message
    assert "length greater than 1" in gs.prince_royalty(1.5).message
    assert gs.overlap_before(2.0) and gs.overlap_before(2)
    assert "king - man" in gs.overlap_before(0.0).message
    assert "along e2" in gs.overlap_before(np.sqrt(2)).message
    assert "too low" in gs.overlap_before(1).message


def test_part2_hand_wired_checks():
    from lib.content.corpora import hand_wired as hw
    from lib.chapters.part2.hand_wired import checks as hand_wired
    from lib.analysis.maps import analogy, pca
    hwm = load("hand-wired")
    E = hwm.model.W_E.detach().double().numpy()
    vecs = {w: E[hwm.vocab.id(w)] for w in hw.WORDS}
    learned = np.array([vecs[w] for w in hw.WORDS])
    n = int(np.argmax(np.cumsum(pca(learned).explained_ratio) >= 0.95)) + 1
    designed = int(np.argmax(np.cumsum(pca(hw.designed_matrix()).explained_ratio) >= 0.95)) + 1
    assert n != designed
    assert hand_wired.components_for_share(hwm, n)
    assert "designed table" in hand_wired.components_for_share(hwm, designed).message
    assert "too high" in hand_wired.components_for_share(hwm, n + 1).message
    assert "one of" in hand_wired.inputs_left_in(hwm, "banana").message
    assert hand_wired.inputs_left_in(hwm, analogy(vecs, "man", "boy", "girl", exclude_inputs=False).best)
    assert "left out" in hand_wired.inputs_left_in(hwm, analogy(vecs, "man", "boy", "girl").best).message


def test_part2_three_ways_checks():
    from lib.chapters.part2.three_ways import checks as three_ways
    from lib.analysis.maps.views import plane_view
    spreads = three_ways.epithet_plane_spreads()
    assert len(spreads) == 6 and spreads["Tarso and capo"] == plane_view("calling-game", "Tarso", "capo").spread
    ranked = sorted(spreads, key=spreads.get, reverse=True)
    assert spreads[ranked[0]] - spreads[ranked[1]] > 0.01, "the widest plane stands out at the explorer's percent"
    assert three_ways.widest_epithet_plane(ranked[0]) and not three_ways.widest_epithet_plane(ranked[1])
    assert "one of" in three_ways.widest_epithet_plane("Tarso, capo").message
    from lib.analysis.maps.views import SEEDS
    kept = three_ways.seeds_keeping("calling-game", "banana", 10.0)
    assert 0 < kept < len(SEEDS), "the investigate asks about a word whose page neighbour the seed decides"
    assert three_ways.seeds_keeping_neighbour(kept) and three_ways.seeds_keeping_neighbour(float(kept))
    assert "not every seed" in three_ways.seeds_keeping_neighbour(len(SEEDS)).message
    assert "whole number" in three_ways.seeds_keeping_neighbour("banana").message
    assert three_ways.full_neighbour("calling-game", "Tarso") == "vice"
    # The degenerate layout: the stored run's count is right, and so is chance's estimate if within 2;
    # the count an ordinary perplexity keeps gets its own diagnosis.
    count = three_ways.nearest_kept("calling-game", 27.0, 0)
    ordinary = three_ways.nearest_kept("calling-game", 5.0, 0)
    assert ordinary - count > 4
    fb = three_ways.degenerate_nearest_kept(count)
    assert fb and fb.accepts == (count - 2, count + 2)
    assert three_ways.degenerate_nearest_kept(round(28 / 27)), "chance's estimate is within 2 of this count"
    assert "ordinary perplexity" in three_ways.degenerate_nearest_kept(ordinary).message
    assert "too high" in three_ways.degenerate_nearest_kept(count + 6).message
    # The known clusters at perplexity 50: the right choice is computed, the other gets the hint, and
    # anything else is told the two choices.
    right = three_ways.known_distances_closer("data")
    assert right and "4.96 in the data" in right.message
    wrong = three_ways.known_distances_closer("perplexity 10")
    assert not wrong and "neighbourhood" in wrong.message and "data" not in wrong.message
    for garbage in ("Data", 4.5, True, None, ["data"]):
        assert not three_ways.known_distances_closer(garbage)


def test_part2_residual_path_checks(lm):
    from lib.chapters.part2.residual_path import checks as residual_path
    from lib.analysis.ablation import all_heads
    from lib.analysis.trajectory import path_view
    from lib.model.readout import prompt_logits
    later = residual_path.later_turn(lm)
    assert later.endswith("Pietro chiama Paolo") and later != residual_path.PROMPT
    # Predict: the top token without block 0's heads. Tarso (the intact answer) has its own diagnosis.
    heads0 = [h for h in all_heads(lm.model) if h[0] == 0]
    blind = lm.vocab.tokens[int(prompt_logits(lm, later, ablate=heads0).argmax())]
    assert blind != "Tarso"
    assert residual_path.blind_top_token(lm, blind)
    assert "intact model" in residual_path.blind_top_token(lm, "Tarso").message
    assert blind not in residual_path.blind_top_token(lm, "capo").message
    # Investigate: the most necessary single component on the later turn, not the first turn's.
    effects = residual_path.single_effects(lm, later)
    best = min(effects, key=effects.get)
    first = residual_path.single_effects(lm, residual_path.PROMPT)
    first_best = min(first, key=first.get)
    assert best != first_best and best != "MLP 1"
    assert residual_path.most_necessary(lm, best)
    assert "first turn" in residual_path.most_necessary(lm, first_best).message
    assert "largest push" in residual_path.most_necessary(lm, "MLP 1").message
    # Investigate: P(Tarso) on the later turn with the whole of block 1 off; each half alone is diagnosed.
    heads1 = [h for h in all_heads(lm.model) if h[0] == 1]
    view = path_view(lm, later, heads_off=heads1, mlps_off=[1])
    # The mean over the set, its first prompt being the drawn later turn (its P(Tarso) as the path reads it).
    turns = residual_path.later_turns(lm)
    assert len(turns) == 40 and turns[0] == later
    assert abs(residual_path.mean_target(lm, turns[:1], heads1, [1]) - view.prob) < 1e-9
    v = residual_path.BLOCK1_OFF.computed(lm)     # means over the 40, computed once (each is 40 runs)
    assert residual_path.block1_off(lm, v.expected) and v.hints["one"] == view.prob
    for key, said in (("intact", "intact"), ("heads", "MLP off too"), ("mlp", "heads off too"), ("one", "alone")):
        assert said in residual_path.block1_off(lm, v.hints[key]).message


def test_part2_real_language_checks():
    from lib.chapters.part2.real_language import checks as real_language
    from lib.content import real_words
    from lib.analysis.maps import analogy, nearest, pca
    rows = real_words.load()
    x = rows.vectors.astype(float)
    content = np.array([g != "function words" for g in rows.groups])
    share = pca(x[content]).cumulative(4)
    assert real_language.content_top4_share(share)
    assert "all 84 words" in real_language.content_top4_share(pca(x).cumulative(4)).message
    assert "top two" in real_language.content_top4_share(pca(x[content]).cumulative(2)).message
    assert "percentage" in real_language.content_top4_share(share * 100).message
    assert real_language.teacher_analogy("mother") and "inputs" in real_language.teacher_analogy("teacher").message
    assert "baseline" in real_language.teacher_analogy("father").message
    assert "not the closest" in real_language.teacher_analogy("doctor").message
    assert "one of" in real_language.teacher_analogy("nurse").message
    # The predict: the offset's word and the baseline's, computed here without the check's helper.
    vecs = {w: x[i] for i, w in enumerate(rows.words)}
    offset = analogy(vecs, "father", "man", "woman").best
    baseline = next(w for w, _ in nearest(x, rows.words, "father", 3) if w not in ("man", "woman"))
    right, wrong = ("same", "different") if offset == baseline else ("different", "same")
    assert real_language.baseline_agrees(right)
    assert "gender rows" in real_language.baseline_agrees(wrong).message
    assert "one of" in real_language.baseline_agrees("yes").message
    assert "one of" in real_language.baseline_agrees(True).message


def test_dot_versus_cosine_predict(lm):
    from lib.chapters.part2.what_an_embedding_is import checks as ch
    n = ch.dot_disagreements(lm)
    assert 0 < n < len(lm.vocab.tokens)
    assert ch.dot_vs_cosine(lm, ch.dot_range(n))
    assert "lengths" in ch.dot_vs_cosine(lm, "none").message
    wrong = next(r for r in ch.DOT_RANGES[1:] if r != ch.dot_range(n))
    assert "is not it" in ch.dot_vs_cosine(lm, wrong).message
    assert [ch.dot_range(k) for k in (0, 5, 12, 25)] == list(ch.DOT_RANGES)
    for garbage in (None, "5", np.array([5]), 10**400, True):
        fb = ch.dot_vs_cosine(lm, garbage)
        assert not fb.ok and fb.message


def test_lever_top_without_mlp_predict(lm):
    from lib.chapters.part3.lever import checks as lever
    from lib.model.readout import prompt_logits
    top = lm.vocab.tokens[int(prompt_logits(lm, lever.CONFIDENT, ablate_mlps=[1]).argmax())]
    assert lever.top_without_mlp(lm, top) and "keeps its place" in lever.top_without_mlp(lm, top).message
    assert "share of the final lead" in lever.top_without_mlp(lm, "Paolo").message
    no_mlp0 = lm.vocab.tokens[int(prompt_logits(lm, lever.CONFIDENT, ablate_mlps=[0]).argmax())]
    assert no_mlp0 == top or not lever.top_without_mlp(lm, no_mlp0), "the check asks about MLP 1, not MLP 0"
    for garbage in (None, "Tarsoo", np.array(["Tarso", "Cefa"]), 10**400, True):
        fb = lever.top_without_mlp(lm, garbage)
        assert not fb.ok and fb.message
