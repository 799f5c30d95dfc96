"""The command line is a contract: JSON shapes, and one clear line for every bad input."""
import json
import math

import pytest

from lib.content.prompts import CONFIDENT


def test_models_lists_every_shipped_model(run_cli):
    out = run_cli("models", check=True).stdout
    assert out.splitlines()[0].startswith("calling-game")
    assert "hand-wired" in out


def test_predict_json_ranks_tarso_first(run_cli):
    data = json.loads(run_cli("predict", "calling-game", CONFIDENT, "--json", check=True).stdout)
    assert set(data) == {"model", "prompt", "temperature", "next"}
    assert data["prompt"] == CONFIDENT.split() and data["temperature"] == 1.0
    assert len(data["next"]) == 28
    probs = [n["prob"] for n in data["next"]]
    assert probs == sorted(probs, reverse=True) and sum(probs) == pytest.approx(1.0)
    assert data["next"][0]["token"] == "Tarso" and data["next"][0]["prob"] >= 0.99
    assert set(data["next"][0]) == {"token", "prob", "logit"}


def test_predict_truncation_and_temperature(run_cli):
    data = json.loads(run_cli("predict", "calling-game", "<BOS> Pietro chiama", "--json", "--top-k", "3",
                              "--temperature", "2", check=True).stdout)
    assert len(data["next"]) == 3 and data["temperature"] == 2.0
    assert sum(n["prob"] for n in data["next"]) == pytest.approx(1.0)
    data = json.loads(run_cli("predict", "calling-game", CONFIDENT, "--json", "--top-p", "0.5", check=True).stdout)
    assert [n["token"] for n in data["next"]] == ["Tarso"]


def test_predict_prints_a_readable_page(run_cli):
    out = run_cli("predict", "calling-game", CONFIDENT, check=True).stdout
    assert "Tarso" in out.splitlines()[1]


def test_lens_json_stages_run_from_embedding_to_output(run_cli):
    data = json.loads(run_cli("lens", "calling-game", CONFIDENT, "--json", check=True).stdout)
    assert set(data) == {"model", "prompt", "stages"}
    names = [s["name"] for s in data["stages"]]
    assert names == ["embed", "blocks.0.attn", "blocks.0.mlp", "blocks.1.attn", "blocks.1.mlp"]
    predicted = json.loads(run_cli("predict", "calling-game", CONFIDENT, "--json", check=True).stdout)
    last = data["stages"][-1]["top"][0]
    assert last["token"] == "Tarso" and last["prob"] == pytest.approx(predicted["next"][0]["prob"], abs=1e-6)


def test_check_passes_on_the_shipped_models(run_cli):
    r = run_cli("check")
    assert r.returncode == 0, r.stdout + r.stderr
    from lib.model.store import shipped_names, shipped_runs
    assert r.stdout.count("PASS") == sum(len(shipped_runs(n)) for n in shipped_names()) and "FAIL" not in r.stdout


BAD_INPUTS = [
    (("predict", "nonesuch", CONFIDENT), "unknown model 'nonesuch'"),
    (("predict", "calling-game", "<BOS> Pietro chiama Giovanni"), "unknown token 'Giovanni'"),
    (("predict", "calling-game", "<BOS> pietro chiama"), "did you mean 'Pietro'"),
    (("predict", "calling-game", "   "), "prompt is empty"),
    (("predict", "calling-game", " ".join(["<BOS>"] + ["Pietro"] * 48)), "at most 48"),
    (("predict", "calling-game", CONFIDENT, "--temperature", "0"), "temperature must be a finite number of at least 1e-06"),
    (("predict", "calling-game", CONFIDENT, "--temperature", "-1"), "temperature must be a finite number of at least 1e-06"),
    (("predict", "calling-game", CONFIDENT, "--temperature", "nan"), "temperature must be a finite number of at least 1e-06"),
    (("predict", "calling-game", CONFIDENT, "--temperature", "inf"), "temperature must be a finite number of at least 1e-06"),
    (("predict", "calling-game", CONFIDENT, "--temperature", "hot"), "temperature must be a number"),
    (("predict", "calling-game", CONFIDENT, "--top-p", "0"), "top-p must lie in (0, 1]"),
    (("predict", "calling-game", CONFIDENT, "--top-p", "1.5"), "top-p must lie in (0, 1]"),
    (("predict", "calling-game", CONFIDENT, "--top-k", "0"), "top-k must be a whole number of at least 1"),
    (("predict", "calling-game", CONFIDENT, "--top-k", "2.5"), "top-k must be a whole number"),
    (("predict", "calling-game", CONFIDENT, "--min-p", "0"), "min-p must be a number above 0 and at most 1"),
    (("predict", "calling-game", CONFIDENT, "--min-p", "1.5"), "min-p must be a number above 0 and at most 1"),
    (("predict", "calling-game", CONFIDENT, "--min-p", "nan"), "min-p must be a number above 0 and at most 1"),
    (("predict", "calling-game", CONFIDENT, "--min-p", "some"), "min-p must be a number"),
    (("predict", "calling-game", CONFIDENT, "--repetition-penalty", "0.9"), "the repetition penalty must be a number from 1"),
    (("predict", "calling-game", CONFIDENT, "--repetition-penalty", "inf"), "the repetition penalty must be a number from 1"),
    (("generate", "calling-game", CONFIDENT, "--tokens", "0"), "--tokens must be a whole number from 1 to 256"),
    (("generate", "calling-game", CONFIDENT, "--tokens", "many"), "--tokens must be a whole number"),
    (("generate", "calling-game", CONFIDENT, "--method", "nucleus"), "invalid choice: 'nucleus'"),
    (("generate", "calling-game", CONFIDENT, "--method", "beam", "--beams", "0"),
     "the number of beams must be a whole number from 1 to 64"),
    (("generate", "calling-game", CONFIDENT, "--method", "beam", "--repetition-penalty", "1.2"),
     "--method beam does not read --repetition-penalty"),
    (("generate", "calling-game", CONFIDENT, "--temperature", "2"), "--method greedy does not read --temperature"),
    (("generate", "calling-game", CONFIDENT, "--method", "sample", "--beams", "2"),
     "--method sample does not read --beams"),
    (("generate", "calling-game", CONFIDENT, "--method", "sample", "--min-p", "2"), "min-p must be a number above 0"),
    (("generate", "calling-game", "<BOS> Pietro chiama Giovanni"), "unknown token 'Giovanni'"),
    (("lens", "calling-game", "<BOS> Pietro chiama banane"), "unknown token 'banane'"),
    (("lens", "calling-game", ""), "prompt is empty"),
    (("train", "nonesuch"), "unknown model 'nonesuch'"),
    (("check", "nonesuch"), "unknown model 'nonesuch'"),
    (("predict",), "the following arguments are required"),
    (("fly",), "invalid choice"),
]


@pytest.mark.parametrize("args,message", BAD_INPUTS, ids=[" ".join(a)[:60] for a, _ in BAD_INPUTS])
def test_bad_input_gets_one_clear_line_and_a_non_zero_exit(run_cli, args, message):
    r = run_cli(*args)
    assert r.returncode == 2
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert message in lines[0], lines[0]


def test_predict_min_p_and_penalty_report_the_processed_page(run_cli, calling_game):
    """The penalty divides the logits of the prompt's tokens, then min-p leaves out every token below P times
    the best one's probability; the page is shared out among the rest."""
    prompt = "<BOS> Pietro chiama"
    plain = json.loads(run_cli("predict", "calling-game", prompt, "--json", check=True).stdout)
    got = json.loads(run_cli("predict", "calling-game", prompt, "--json", "--temperature", "1.5", "--min-p", "0.2",
                             "--repetition-penalty", "1.5", check=True).stdout)
    assert got["min_p"] == 0.2 and got["repetition_penalty"] == 1.5
    logits = {n["token"]: n["logit"] for n in plain["next"]}
    for token in prompt.split():            # in the prompt: penalised (by the rule on its sign)
        x = logits[token]
        logits[token] = x / 1.5 if x > 0 else x * 1.5
    best = max(logits.values())
    kept = {t: x for t, x in logits.items() if x >= best + 1.5 * math.log(0.2)}
    z = sum(math.exp(x / 1.5) for x in kept.values())
    assert {n["token"] for n in got["next"]} == set(kept) and 1 < len(kept) < 28
    for n in got["next"]:
        assert abs(n["logit"] - kept[n["token"]]) < 1e-6 and abs(n["prob"] - math.exp(n["logit"] / 1.5) / z) < 1e-9


def test_generate_greedy_and_sampled_equal_the_library_s_generation(run_cli, calling_game):
    from lib.model.generate import generate
    prompt = "<BOS> Pietro chiama"
    ids = calling_game.encode(prompt)
    eos = calling_game.vocab.id("<EOS>")
    for extra, knobs in [((), {}), (("--repetition-penalty", "1.4"), {"repetition_penalty": 1.4}),
                         (("--method", "sample", "--seed", "5", "--temperature", "1.3", "--min-p", "0.05",
                           "--top-k", "6"), {"do_sample": True, "seed": 5, "temperature": 1.3, "min_p": 0.05,
                                             "top_k": 6})]:
        got = json.loads(run_cli("generate", "calling-game", prompt, "--tokens", "16", "--json", *extra,
                                 check=True).stdout)
        want = generate(calling_game.model, ids, 16, stop=[eos], **knobs)
        assert got["tokens"] == calling_game.vocab.decode(want.new_tokens), extra
        logp = [float(l.double().log_softmax(-1)[t]) for l, t in zip(want.step_logits, want.new_tokens)]
        assert all(abs(a - b) < 1e-5 for a, b in zip(got["logprobs"], logp)) and len(got["logprobs"]) == len(logp)
        assert abs(got["logprob"] - sum(logp)) < 1e-4


def test_generate_beam_ranks_its_beams_and_one_beam_is_greedy(run_cli):
    prompt = "<BOS> Pietro chiama"
    got = json.loads(run_cli("generate", "calling-game", prompt, "--tokens", "12", "--method", "beam", "--beams",
                             "4", "--json", check=True).stdout)
    sums = [b["logprob"] for b in got["beams"]]
    assert len(sums) == 4 and sums == sorted(sums, reverse=True) and got["tokens"] == got["beams"][0]["tokens"]
    assert all(abs(b["logprob"] - sum(b["logprobs"])) < 1e-9 for b in got["beams"])
    one = json.loads(run_cli("generate", "calling-game", prompt, "--tokens", "12", "--method", "beam", "--beams",
                             "1", "--json", check=True).stdout)
    greedy = json.loads(run_cli("generate", "calling-game", prompt, "--tokens", "12", "--json", check=True).stdout)
    # (one pass over the whole text against step by step with the cache: float32 rounding, 12 tokens summed)
    assert one["tokens"] == greedy["tokens"] and abs(one["logprob"] - greedy["logprob"]) < 1e-4
    assert sums[0] >= greedy["logprob"] - 1e-9       # here beam search finds a likelier round than greedy
    text = run_cli("generate", "calling-game", prompt, "--tokens", "12", "--method", "beam", check=True).stdout
    assert text.splitlines()[1].startswith("beam 1: ") and "log-probability" in text


# ----------------------------------------------------------------------------- real processes
# What only a real `python -m lib` shows: its exit status, a pipe closed by its reader, and the
# interpreter's own last words. tests/test_bad_input.py holds the full table of bad inputs.
@pytest.mark.parametrize("args", [("predict", "calling-game", "<BOS> Pietro chiama"),
                                  ("lens", "calling-game", "<BOS> Pietro chiama", "--json"), ("models",)],
                         ids=["predict", "lens", "models"])
def test_a_reader_that_stops_reading_gets_no_traceback(args):
    """The reader's end is closed before the command writes, as `| head -1` does to a slow one."""
    import subprocess
    import sys
    p = subprocess.Popen([sys.executable, "-m", "lib", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()
    err = p.stderr.read().decode()
    assert p.wait() == 141 and err == "", err


def test_head_takes_the_first_line_quietly():
    import subprocess
    import sys
    r = subprocess.run(f'"{sys.executable}" -m lib predict calling-game "<BOS> Pietro chiama" | head -1',
                       shell=True, capture_output=True, text=True)
    assert r.stdout.startswith("calling-game: <BOS> Pietro chiama") and r.stdout.count("\n") == 1
    assert r.stderr == ""


def test_the_help_pointer_names_a_command_that_exists(run_cli):
    r = run_cli("lib", "--help")
    assert r.returncode == 2 and r.stderr.strip().endswith("(see: python -m lib --help)"), r.stderr
    assert run_cli("--help").returncode == 0


def test_a_damaged_model_is_one_line_from_a_real_process(tmp_path):
    import os
    import shutil
    import subprocess
    import sys

    from lib.model.store import PACKAGE_DATA
    shutil.copytree(PACKAGE_DATA / "models", tmp_path / "models")
    weights = tmp_path / "models" / "calling-game" / "model.safetensors"
    weights.write_bytes(weights.read_bytes()[:1000])
    r = subprocess.run([sys.executable, "-m", "lib", "predict", "calling-game", CONFIDENT], capture_output=True,
                       text=True, env=dict(os.environ, COURSE_DATA=str(tmp_path)))
    assert r.returncode == 2 and r.stdout == ""
    assert r.stderr.startswith("error: the model calling-game is damaged: model.safetensors (1,000 bytes) does not "
                               "match the checksum") and r.stderr.count("\n") == 1, r.stderr
