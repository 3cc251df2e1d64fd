"""The error contract of ``biotok-train`` under disk faults, broken data and misuse (issue 16).

Every case: exit 2, one ``biotok-train: error:`` line naming the path, no traceback, and the
inputs and any previous output byte-identical afterwards. The tokenizer, data, model and NER
set are tiny and built once per module (WordPiece 400 pieces, sequences of 32, BERT-tiny 1 step).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from tests._contract import Mounts, assert_contract, leftovers, modes, tree_digest
from biotok_train.cli import main

PROG = "biotok-train"


def run(*args):
    return CliRunner().invoke(main, [str(a) for a in args], prog_name=PROG)


@pytest.fixture()
def mounts(tmp_path):
    m = Mounts(tmp_path / "mounts")
    yield m
    m.close()


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    return tmp_path_factory.mktemp("contract-train")


@pytest.fixture(scope="module")
def corpus(base, sample_lines):
    p = base / "c.txt"
    p.write_text("\n".join(sample_lines[:60]) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def tok(base, corpus):
    from biotok.cli import main as biotok_main

    r = CliRunner().invoke(biotok_main, ["train", str(corpus), "--algo", "wordpiece", "--vocab-size", "400",
                                         "--out", str(base / "tok"), "-q"])
    assert r.exit_code == 0, r.output
    return base / "tok"


@pytest.fixture(scope="module")
def data(base, corpus, tok):
    r = run("prepare", corpus, "-t", tok, "--seq-len", 32, "--out", base / "data", "--no-progress")
    assert r.exit_code == 0, r.output
    return base / "data"


@pytest.fixture(scope="module")
def model(base, data):
    r = run("mlm", data, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out", base / "model",
            "--no-progress")
    assert r.exit_code == 0, r.output
    return base / "model"


@pytest.fixture(scope="module")
def bio(base):
    """A tiny BIO NER set: train / dev / test files."""
    d = base / "bio"
    d.mkdir()
    sent = "Le\tO\npatient\tO\nprésente\tO\nune\tO\nfièvre\tB-SIGN\nélevée\tI-SIGN\n.\tO\n\n"
    for split, n in (("train", 6), ("dev", 2), ("test", 2)):
        (d / f"{split}.tsv").write_text(sent * n, encoding="utf-8")
    return d


def _copy(src: Path, dest: Path) -> Path:
    shutil.copytree(src, dest)
    return dest


# --- read-only output folders ------------------------------------------------------------------
def test_mlm_into_read_only_folder(mounts, data):
    ro = mounts.read_only()
    before = tree_digest(ro), tree_digest(data)
    r = run("mlm", data, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out", ro / "run", "--no-progress")
    assert_contract(r, PROG, ro / "run")
    assert (tree_digest(ro), tree_digest(data)) == before


def test_prepare_into_read_only_folder(mounts, corpus, tok):
    ro = mounts.read_only()
    before = tree_digest(ro)
    r = run("prepare", corpus, "-t", tok, "--seq-len", 32, "--out", ro / "data", "--no-progress")
    assert_contract(r, PROG, ro / "data")
    assert tree_digest(ro) == before


def test_ablate_into_read_only_folder(mounts, corpus, tok, bio):
    ro = mounts.read_only()
    before = tree_digest(ro)
    r = run("ablate", "--tokenizers", tok, "--corpus", corpus, "--task", bio, "--budget", 1,
            "--batch-size", 2, "--seq-len", 32, "--ner-max-steps", 1, "--n-words", 5, "--out", ro / "abl", "-q")
    assert_contract(r, PROG, ro / "abl")
    assert tree_digest(ro) == before


def test_prepare_on_a_full_disk_keeps_the_previous_data(mounts, corpus, tok, data):
    full = mounts.full(populate=lambda m: shutil.copytree(data, m / "data"), size="2m")
    before = tree_digest(full)
    r = run("prepare", corpus, corpus, corpus, "-t", tok, "--seq-len", 32, "--out", full / "data", "--force",
            "--no-progress")
    assert_contract(r, PROG, full / "data")
    assert tree_digest(full) == before


# --- broken data and models, checked before any work --------------------------------------------
def test_truncated_tokens_bin(tmp_path, data):
    d = _copy(data, tmp_path / "data")
    tokens = d / "tokens.bin"
    tokens.write_bytes(tokens.read_bytes()[: tokens.stat().st_size // 2])
    before = tree_digest(d)
    r = run("mlm", d, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out", tmp_path / "run", "--no-progress")
    assert_contract(r, PROG, "tokens.bin")
    assert tree_digest(d) == before
    assert not (tmp_path / "run").exists()


def test_truncated_sequences_table(tmp_path, data):
    d = _copy(data, tmp_path / "data")
    seq = d / "sequences.npy"
    seq.write_bytes(seq.read_bytes()[:-40])
    r = run("mlm", d, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out", tmp_path / "run", "--no-progress")
    assert_contract(r, PROG, "sequences.npy")
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("cmd", ["fill-mask", "eval-mlm"])
def test_truncated_model_safetensors(tmp_path, model, corpus, cmd):
    m = _copy(model, tmp_path / "model")
    w = m / "model.safetensors"
    w.write_bytes(w.read_bytes()[: w.stat().st_size // 3])
    before = tree_digest(m)
    args = ["le <mask> est"] if cmd == "fill-mask" else ["--corpus", corpus, "--n-words", 5]
    assert_contract(run(cmd, m, *args), PROG, "model.safetensors")
    assert tree_digest(m) == before


def test_binary_cloze_file(tmp_path, model):
    cloze = tmp_path / "cloze.tsv"
    cloze.write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
    assert_contract(run("fill-mask", model, "--cloze", cloze), PROG, cloze)


def test_model_without_tokenizer_json_says_it_in_full(tmp_path, model):
    """transformers' multi-line message was cut after its first line ('...from one of: ')."""
    m = _copy(model, tmp_path / "model")
    (m / "tokenizer.json").unlink()
    line = assert_contract(run("fill-mask", m, "le <mask> est"), PROG, m)
    assert not line.rstrip().endswith(":"), line
    assert "tokenizer" in line


def test_model_without_any_tokenizer_file(tmp_path, model):
    """transformers 5 would build an empty tokenizer from config.json alone: refuse it."""
    m = tmp_path / "model"
    m.mkdir()
    for f in ("config.json", "model.safetensors"):
        shutil.copy(model / f, m / f)
    assert_contract(run("fill-mask", m, "le <mask> est"), PROG, m)


# --- validation at the door ---------------------------------------------------------------------
def test_prepare_seq_len_beyond_the_models_positions(tmp_path, corpus, tok):
    out = tmp_path / "data"
    r = run("prepare", corpus, "-t", tok, "--seq-len", 100000, "--out", out, "--no-progress")
    assert_contract(r, PROG, "--seq-len")
    assert not out.exists() and leftovers(tmp_path, "data") == []


def test_mlm_on_data_longer_than_the_models_positions(tmp_path, data):
    d = _copy(data, tmp_path / "data")
    meta = json.loads((d / "meta.json").read_text())
    meta["seq_len"] = 100000
    (d / "meta.json").write_text(json.dumps(meta))
    r = run("mlm", d, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out", tmp_path / "run", "--no-progress")
    assert_contract(r, PROG, "100000")
    assert not (tmp_path / "run").exists()


def test_device_cuda_without_cuda(tmp_path, data):
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA: --device cuda is valid here")
    out = tmp_path / "run"
    r = run("mlm", data, "--steps", 1, "--batch-size", 2, "--device", "cuda", "--out", out, "--no-progress")
    assert_contract(r, PROG, "cuda")
    assert not out.exists()


def test_unknown_device(tmp_path, data):
    out = tmp_path / "run"
    r = run("mlm", data, "--steps", 1, "--device", "tpu7", "--out", out, "--no-progress")
    assert_contract(r, PROG, "tpu7")
    assert not out.exists()


def test_resume_without_a_checkpoint(tmp_path, data):
    out = tmp_path / "run"
    r = run("mlm", data, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--resume", "--out", out,
            "--no-progress")
    assert_contract(r, PROG, out)
    assert not out.exists()


# --- atomic prepare: a failure never removes or half-writes data ---------------------------------
def _bad_corpus(tmp_path: Path, corpus: Path) -> list[Path]:
    bad = tmp_path / "zz-broken.txt"
    bad.write_bytes(b"une ligne correcte\n" + b"\xff\xfe invalide\n")
    return [corpus, bad]


def test_prepare_force_with_a_bad_corpus_keeps_the_old_data(tmp_path, corpus, tok, data):
    d = _copy(data, tmp_path / "data")
    before = tree_digest(d)
    files = _bad_corpus(tmp_path, corpus)
    r = run("prepare", *files, "-t", tok, "--seq-len", 32, "--out", d, "--force", "--no-progress")
    assert_contract(r, PROG, files[1])
    assert tree_digest(d) == before
    assert leftovers(tmp_path, "data") == []


def test_failed_prepare_leaves_nothing_and_the_corrected_rerun_works(tmp_path, corpus, tok):
    out = tmp_path / "data"
    files = _bad_corpus(tmp_path, corpus)
    r = run("prepare", *files, "-t", tok, "--seq-len", 32, "--out", out, "--no-progress")
    assert_contract(r, PROG, files[1])
    assert not out.exists() and leftovers(tmp_path, "data") == []
    r = run("prepare", corpus, "-t", tok, "--seq-len", 32, "--out", out, "--no-progress")
    assert r.exit_code == 0, r.output


def test_prepare_force_never_replaces_its_input(tmp_path, tok):
    d = tmp_path / "texts"
    d.mkdir()
    (d / "a.txt").write_text("Le patient présente une fièvre.\n" * 20, encoding="utf-8")
    before = tree_digest(d)
    r = run("prepare", d, "-t", tok, "--seq-len", 32, "--out", d, "--force", "--no-progress")
    assert_contract(r, PROG, d)
    assert tree_digest(d) == before


# --- results are not overwritten without --force ------------------------------------------------
def test_ner_refuses_to_overwrite_results(tmp_path, model, bio):
    out = tmp_path / "ner"
    args = ("ner", model, "--data", bio, "--epochs", 1, "--max-steps", 1, "--batch-size", 2, "--out", out, "-q")
    r = run(*args)
    assert r.exit_code == 0, r.output
    before = tree_digest(out)
    assert_contract(run(*args), PROG, out)
    assert tree_digest(out) == before
    r = run(*args, "--force")
    assert r.exit_code == 0, r.output


def test_eval_mlm_refuses_to_overwrite_results(tmp_path, model, corpus):
    out = tmp_path / "mlm.json"
    args = ("eval-mlm", model, "--corpus", corpus, "--n-words", 5, "--out", out)
    r = run(*args)
    assert r.exit_code == 0, r.output
    before = tree_digest(out)
    assert_contract(run(*args), PROG, out)
    assert tree_digest(out) == before
    r = run(*args, "--force")
    assert r.exit_code == 0, r.output


# --- ablate: a failure at the door leaves nothing; the corrected rerun is not refused --------------
def _ablate(tok, corpus, task, out, *extra):
    return run("ablate", "--tokenizers", tok, "--corpus", corpus, "--task", task, "--size", "tiny",
               "--budget", 1, "--batch-size", 2, "--seq-len", 32, "--ner-epochs", 1, "--ner-max-steps", 1,
               "--n-words", 5, "--out", out, "-q", *extra)


def test_failed_ablate_leaves_no_partial_output(tmp_path, tok, corpus):
    out = tmp_path / "abl"
    r = _ablate(tok, corpus, tmp_path / "no-such-task", out)
    assert_contract(r, PROG, "no-such-task")
    assert not out.exists() and leftovers(tmp_path, "abl") == []


def test_ablate_with_a_bad_corpus_leaves_no_partial_output(tmp_path, tok, corpus, bio):
    out = tmp_path / "abl"
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"ok\n\xff\xfe\n")
    r = _ablate(tok, bad, bio, out)
    assert_contract(r, PROG, bad)
    assert not out.exists() and leftovers(tmp_path, "abl") == []


@pytest.mark.slow
def test_failed_ablate_then_the_corrected_rerun_works(tmp_path, tok, corpus, bio):
    out = tmp_path / "abl"
    assert _ablate(tok, corpus, tmp_path / "no-such-task", out).exit_code == 2
    r = _ablate(tok, corpus, bio, out)
    assert r.exit_code == 0, r.output
    assert (out / "ablation.md").is_file()


# --- permissions ---------------------------------------------------------------------------------
def test_prepared_data_and_runs_get_the_users_umask(tmp_path, corpus, tok):
    old = os.umask(0o022)
    try:
        r = run("prepare", corpus, "-t", tok, "--seq-len", 32, "--out", tmp_path / "data", "--no-progress")
        assert r.exit_code == 0, r.output
        r = run("mlm", tmp_path / "data", "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out",
                tmp_path / "run", "--no-progress")
        assert r.exit_code == 0, r.output
    finally:
        os.umask(old)
    for d in (tmp_path / "data", tmp_path / "run"):
        for rel, mode in modes(d).items():
            want = "0o755" if (d / rel).is_dir() else "0o644"
            assert mode == want, (d, rel, mode)


# --- issue 24, output policy: never an input, a model or corpus it reads, nor a foreign folder -----
def test_mlm_never_trains_over_its_own_base(tmp_path, data, model):
    base = _copy(model, tmp_path / "base")
    before = tree_digest(base)
    r = run("mlm", data, "--init-from", base, "--out", base, "--steps", 1, "--batch-size", 2, "--device", "cpu",
            "--no-progress", "--force")
    assert_contract(r, PROG, base, "input")
    assert tree_digest(base) == before


def test_mlm_into_an_existing_run_needs_force_and_never_replaces_a_foreign_folder(tmp_path, data, model):
    run_dir = _copy(model, tmp_path / "run")
    before = tree_digest(run_dir)
    args = ("mlm", data, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--no-progress", "--report-to", "none")
    assert_contract(run(*args, "--out", run_dir), PROG, run_dir, "--force")
    assert tree_digest(run_dir) == before
    foreign = tmp_path / "my-model"
    foreign.mkdir()
    (foreign / "config.json").write_text("{}", encoding="utf-8")
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    mine = tree_digest(foreign)
    assert_contract(run(*args, "--out", foreign, "--force"), PROG, foreign, "not a biotok pretraining run")
    assert tree_digest(foreign) == mine
    r = run(*args, "--out", run_dir, "--force")  # a previous run is replaced when asked
    assert r.exit_code == 0, r.output


def test_eval_mlm_never_overwrites_its_corpus_or_its_model(tmp_path, model, corpus):
    c = tmp_path / "corpus.txt"
    shutil.copy(corpus, c)
    m = _copy(model, tmp_path / "m")
    before_c, before_m = tree_digest(c), tree_digest(m)
    assert_contract(run("eval-mlm", m, "--corpus", c, "--n-words", 5, "--out", c, "--force"), PROG, c, "input")
    assert_contract(run("eval-mlm", m, "--corpus", c, "--n-words", 5, "--out", m / "config.json", "--force"),
                    PROG, "config.json", "input")
    assert tree_digest(c) == before_c and tree_digest(m) == before_m


def test_bench_never_writes_into_the_model_it_evaluates(tmp_path, model):
    m = _copy(model, tmp_path / "m")
    before = tree_digest(m)
    r = run("bench", m, "--suite", "fr", "--out", m, "--force", "-q")
    assert_contract(r, PROG, m, "input")
    assert tree_digest(m) == before


def test_finetune_never_writes_into_the_model(tmp_path, model, bio):
    m = _copy(model, tmp_path / "m")
    before = tree_digest(m)
    r = run("finetune", m, "--task-type", "ner", "--train", bio / "train.tsv", "--dev", bio / "dev.tsv",
            "--test", bio / "test.tsv", "--epochs", 1, "--max-steps", 1, "--out", m / "ner", "-q")
    assert_contract(r, PROG, "input")
    assert tree_digest(m) == before


# --- issue 24, numbers at the door: every numeric option has a range (biotok.config.check_range) -----
@pytest.mark.parametrize("args,named", [
    (("--lr", "inf"), "--lr"),
    (("--lr", "nan"), "--lr"),
    (("--seed", -1), "--seed -1"),
    (("--seed", 2**32), "--seed 4294967296"),
    (("--seed", 2**64), "--seed"),
], ids=["lr-inf", "lr-nan", "seed-neg", "seed-2^32", "seed-2^64"])
def test_mlm_numbers_at_the_door(tmp_path, data, args, named):
    out = tmp_path / "run"
    before = tree_digest(data)
    r = run("mlm", data, "--steps", 1, "--batch-size", 2, "--device", "cpu", "--out", out, "--no-progress", *args)
    assert_contract(r, PROG, named)
    assert not out.exists() and leftovers(tmp_path, "run") == [] and tree_digest(data) == before


@pytest.mark.parametrize("seed", [-1, 2**32, 2**65])
def test_finetune_and_transfer_seeds_in_numpy_range(tmp_path, model, tok, bio, seed):
    out = tmp_path / "out"
    r = run("finetune", model, "--task-type", "ner", "--train", bio / "train.tsv", "--dev", bio / "dev.tsv",
            "--test", bio / "test.tsv", "--epochs", 1, "--max-steps", 1, "--seed", seed, "--out", out, "-q")
    assert_contract(r, PROG, "--seed")
    r = run("transfer", model, "-t", tok, "--seed", seed, "--out", out)
    assert_contract(r, PROG, "--seed")
    assert not out.exists() and leftovers(tmp_path, "out") == []


def test_fill_mask_top_k_beyond_the_vocabulary_lists_every_piece(model):
    r = run("fill-mask", model, "le <mask> est", "--top-k", 1000000)
    assert r.exit_code == 0, r.output
    assert "Traceback" not in r.output


def test_fill_mask_text_longer_than_the_models_positions(model):
    r = run("fill-mask", model, "le patient " * 400 + "<mask> .")
    assert_contract(r, PROG, "512 positions")


def test_train_configs_refuse_numbers_no_library_takes():
    from biotok.errors import ConfigError
    from biotok_train.ablate.config import AblationConfig, Pretraining
    from biotok_train.config import (FinetuneConfig, OptimConfig, PrepareConfig, PretrainConfig, ProbeConfig,
                                     TransferConfig)

    for make in (lambda: OptimConfig(lr=float("inf")), lambda: PretrainConfig(seed=-1),
                 lambda: FinetuneConfig(seed=2**32), lambda: TransferConfig(seed=2**64),
                 lambda: ProbeConfig(seeds=(0, 2**33)), lambda: PrepareConfig(seed=-5),
                 lambda: AblationConfig(tokenizers=("a",), corpus=("c",), pretraining=Pretraining(seeds=(-1,))),
                 lambda: PretrainConfig(peak_tflops=float("nan"))):
        with pytest.raises(ConfigError):
            make()


# --- issue 24, text the libraries refuse, and task files that say one thing twice --------------------
def _ft(model, train, dev, test, out, *extra, task_type="classify"):
    return run("finetune", model, "--task-type", task_type, "--train", train, "--dev", dev, "--test", test,
               "--epochs", 1, "--max-steps", 1, "--batch-size", 2, "--out", out, "-q", *extra)


@pytest.fixture()
def cls_tsv(tmp_path):
    p = tmp_path / "cls.tsv"
    p.write_text("text\tlabel\n" + "Le patient va bien\ta\nLa fièvre monte\tb\n" * 4, encoding="utf-8")
    return p


def test_finetune_lone_surrogate_in_a_jsonl_escape(tmp_path, model, cls_tsv):
    bad = tmp_path / "train.jsonl"
    bad.write_text('{"text": "Le patient", "label": "a"}\n{"text": "fièvre \\udc00", "label": "b"}\n',
                   encoding="utf-8")
    out = tmp_path / "out"
    assert_contract(_ft(model, bad, cls_tsv, cls_tsv, out), PROG, f"{bad}:2", "surrogate")
    assert not out.exists() and leftovers(tmp_path, "out") == []


def test_finetune_tsv_field_over_the_csv_modules_limit_is_read(tmp_path, model, cls_tsv):
    """csv refuses a field over 128 KiB by default (one long document in a cell)."""
    big = tmp_path / "train.tsv"
    big.write_text("text\tlabel\nLe patient va bien\ta\n" + "x" * 200_000 + " fin\tb\n", encoding="utf-8")
    r = _ft(model, big, cls_tsv, cls_tsv, tmp_path / "out")
    assert r.exit_code == 0, r.output


def test_finetune_tsv_with_a_duplicated_header_column(tmp_path, model, cls_tsv):
    dup = tmp_path / "train.tsv"
    dup.write_text("text\tlabel\tlabel\nLe patient\ta\tb\n", encoding="utf-8")
    assert_contract(_ft(model, dup, cls_tsv, cls_tsv, tmp_path / "out"), PROG, f"{dup}:1", "label twice")
    assert not (tmp_path / "out").exists()


def test_finetune_label_list_with_duplicates(tmp_path, model, cls_tsv):
    r = _ft(model, cls_tsv, cls_tsv, cls_tsv, tmp_path / "out", "--labels", "a,b,a")
    assert_contract(r, PROG, "--labels", "a twice")
    assert not (tmp_path / "out").exists()


# --- issue 24, paths: a directory where a file is needed, links that cannot be followed ------------
def test_finetune_train_that_is_a_directory(tmp_path, model, bio):
    r = _ft(model, bio, bio / "dev.tsv", bio / "test.tsv", tmp_path / "out", task_type="ner")
    assert_contract(r, PROG, "--train", str(bio))


@pytest.mark.parametrize("kind", ["loop", "dangling"])
def test_finetune_train_that_is_a_link_to_nothing(tmp_path, model, bio, kind):
    a = tmp_path / "train.tsv"
    if kind == "loop":
        (tmp_path / "b.tsv").symlink_to(a)
        a.symlink_to(tmp_path / "b.tsv")
    else:
        a.symlink_to(tmp_path / "nowhere.tsv")
    r = _ft(model, a, bio / "dev.tsv", bio / "test.tsv", tmp_path / "out", task_type="ner")
    assert_contract(r, PROG, a, "symbolic link")
    assert not (tmp_path / "out").exists()


def test_a_model_that_is_a_symlink_loop_is_not_looked_up_on_the_hub(tmp_path, monkeypatch, corpus):
    loop = tmp_path / "model"
    (tmp_path / "other").symlink_to(loop)
    loop.symlink_to(tmp_path / "other")
    monkeypatch.chdir(tmp_path)
    assert_contract(run("fill-mask", "model", "le <mask> est"), PROG, "model", "symbolic link")
    assert_contract(run("eval-mlm", "model", "--corpus", corpus, "--n-words", 5), PROG, "model")


def test_a_hub_id_while_the_hub_is_unreachable_is_one_line_at_once(monkeypatch):
    """No five retries over half a minute, each a warning line on stderr."""
    import time

    import biotok.formats.hub as hub

    monkeypatch.setattr(hub, "hub_reachable", lambda timeout=3.0: False)
    t0 = time.monotonic()
    assert_contract(run("fill-mask", "no-such-org/no-such-model", "le <mask> est"), PROG, "no-such-org/no-such-model")
    assert time.monotonic() - t0 < 20


# --- issue 24, models whose config.json and weights disagree, or that are not encoders ---------------
@pytest.fixture(scope="module")
def wide(base, model):
    """The tiny model with a config.json twice as wide as its weights."""
    d = _copy(model, base / "wide")
    cfg = json.loads((d / "config.json").read_text())
    cfg["hidden_size"] *= 2
    cfg["intermediate_size"] *= 2
    (d / "config.json").write_text(json.dumps(cfg))
    return d


def test_config_and_weights_that_disagree_are_named(tmp_path, wide, data, tok, corpus, bio):
    """transformers says 'look at the above report' (a report quiet loading never prints)."""
    before = tree_digest(wide)
    cases = {
        "transfer": ("transfer", wide, "-t", tok, "--out", tmp_path / "tr"),
        "mlm --init-from": ("mlm", data, "--init-from", wide, "--steps", 1, "--batch-size", 2, "--device", "cpu",
                            "--out", tmp_path / "run", "--no-progress", "--report-to", "none"),
        "ablate --base": ("ablate", "--tokenizers", tok, "--corpus", corpus, "--task", bio, "--size", "tiny",
                          "--budget", 1, "--batch-size", 2, "--seq-len", 32, "--ner-epochs", 1, "--ner-max-steps", 1,
                          "--n-words", 5, "--base", wide, "--arms", "continual", "--out", tmp_path / "abl", "-q"),
        "ner": ("ner", wide, "--data", bio, "--epochs", 1, "--max-steps", 1, "--out", tmp_path / "ner", "-q"),
    }
    for name, args in cases.items():
        line = assert_contract(run(*args), PROG, wide, "config.json and model.safetensors disagree", "[128]", "[256]")
        assert "above report" not in line, name
    assert tree_digest(wide) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == []


def test_mlm_force_keeps_the_previous_run_when_init_from_cannot_load(tmp_path, wide, data, model):
    """The previous run was removed before --init-from was loaded."""
    prev = _copy(model, tmp_path / "prev")
    before = tree_digest(prev)
    r = run("mlm", data, "--init-from", wide, "--out", prev, "--force", "--steps", 1, "--batch-size", 2, "--device",
            "cpu", "--no-progress", "--report-to", "none")
    assert_contract(r, PROG, wide)
    assert tree_digest(prev) == before


@pytest.fixture(scope="module")
def gpt2(base, corpus):
    """A tiny GPT-2 (byte-level BPE tokenizer without a padding token, as GPT-2's)."""
    import transformers
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.train([str(corpus)], trainers.BpeTrainer(vocab_size=300, special_tokens=["<|endoftext|>"],
                                                 initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
    d = base / "gpt2"
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, bos_token="<|endoftext|>",
                                                eos_token="<|endoftext|>", unk_token="<|endoftext|>")
    cfg = transformers.GPT2Config(vocab_size=tok.get_vocab_size(), n_positions=64, n_embd=32, n_layer=1, n_head=2,
                                  bos_token_id=0, eos_token_id=0)
    transformers.GPT2LMHeadModel(cfg).save_pretrained(d)
    fast.save_pretrained(d)
    assert fast.pad_token is None
    return d


def test_a_gpt2_model_on_a_classification_task(tmp_path, gpt2, cls_tsv):
    """It failed deep inside transformers ('Cannot handle batch sizes > 1 if no padding token')."""
    r = _ft(gpt2, cls_tsv, cls_tsv, cls_tsv, tmp_path / "out")
    assert r.exit_code == 0, r.output
    assert json.loads((tmp_path / "out" / "results.json").read_text())["task"] == "classify"


@pytest.mark.parametrize("cmd", ["fill-mask", "eval-mlm"])
def test_a_gpt2_model_where_a_masked_lm_is_needed(gpt2, corpus, cmd):
    """GPT2LMHeadModel was taken for a bare encoder, then transformers' 50-name list."""
    args = ["le <mask> est"] if cmd == "fill-mask" else ["--corpus", corpus, "--n-words", 5]
    assert_contract(run(cmd, gpt2, *args), PROG, gpt2, "no AutoModelForMaskedLM for a gpt2 model")


# --- issue 24, errors that name the file they are about ------------------------------------------------
@pytest.mark.parametrize("content", ["", "\n  \n", "12 34 56\n"], ids=["empty", "blank", "no-word"])
def test_eval_mlm_empty_corpus_is_named(tmp_path, model, content):
    empty = tmp_path / "empty.txt"
    empty.write_text(content, encoding="utf-8")
    out = tmp_path / "mlm.json"
    assert_contract(run("eval-mlm", model, "--corpus", empty, "--n-words", 5, "--out", out), PROG, empty)
    assert not out.exists() and leftovers(tmp_path, "mlm.json") == []


def test_prepare_empty_corpus_is_named(tmp_path, tok):
    empty = tmp_path / "empty.txt"
    empty.write_text("\n\n", encoding="utf-8")
    out = tmp_path / "data"
    assert_contract(run("prepare", empty, "-t", tok, "--seq-len", 32, "--out", out, "--no-progress"), PROG, empty)
    assert not out.exists() and leftovers(tmp_path, "data") == []


def test_ablate_corpus_too_short_is_named(tmp_path, tok, bio):
    small = tmp_path / "small.txt"
    small.write_text("a b c\nd e f\n", encoding="utf-8")
    out = tmp_path / "abl"
    assert_contract(_ablate(tok, small, bio, out), PROG, small)
    assert not out.exists() and leftovers(tmp_path, "abl") == []


# --- issue 24, the output policy in commands the issue does not name ---------------------------------
@pytest.mark.parametrize("name", ["loss.xyz", "loss.svg", "loss"])
def test_plot_out_with_a_name_that_is_not_png(tmp_path, model, name):
    out = tmp_path / name
    before = tree_digest(model)
    assert_contract(run("plot", model, "--out", out), PROG, out, ".png")
    assert not out.exists() and leftovers(tmp_path, name) == [] and tree_digest(model) == before


def test_plot_replaces_a_figure_only_with_force(tmp_path, model):
    run_dir = _copy(model, tmp_path / "run")
    out = run_dir / "loss.png"
    assert run("plot", run_dir).exit_code == 0 and out.is_file()
    before = tree_digest(run_dir)
    assert_contract(run("plot", run_dir), PROG, out, "--force")
    assert tree_digest(run_dir) == before
    r = run("plot", run_dir, "--force")
    assert r.exit_code == 0, r.output
    assert leftovers(run_dir, "loss.png") == []


def test_prepare_never_writes_into_the_model_whose_tokenizer_it_uses(tmp_path, corpus, model):
    m = _copy(model, tmp_path / "m")
    before = tree_digest(m)
    r = run("prepare", corpus, "-t", m, "--seq-len", 32, "--out", m / "data", "--no-progress")
    assert_contract(r, PROG, m, "input")
    assert tree_digest(m) == before


def test_ner_never_writes_into_its_data_folder(tmp_path, model, bio):
    d = _copy(bio, tmp_path / "bio")
    before = tree_digest(d)
    r = run("ner", model, "--data", d, "--epochs", 1, "--max-steps", 1, "--out", d / "res", "-q")
    assert_contract(r, PROG, d, "input")
    assert tree_digest(d) == before


# --- issue 24, ablate: never into a folder that is not an ablation, nor into what it reads -------------
@pytest.mark.parametrize("kind", ["notes", "model", "inside-the-tokenizer"])
def test_ablate_never_writes_into_a_folder_that_is_not_its_own(tmp_path, tok, corpus, bio, model, kind):
    """It mixed its files with the user's, and over a model folder replaced its config.json."""
    if kind == "notes":
        out = tmp_path / "mine"
        out.mkdir()
        (out / "notes.txt").write_text("keep me", encoding="utf-8")
        watched, named = out, "not an ablation"
    elif kind == "model":
        out = watched = _copy(model, tmp_path / "model")
        named = "not an ablation"
    else:
        t = _copy(tok, tmp_path / "tok")
        watched, out, named = t, t / "abl", "input"
    before = tree_digest(watched)
    r = run("ablate", "--tokenizers", watched if kind == "inside-the-tokenizer" else tok, "--corpus", corpus, "--task",
            bio, "--size", "tiny", "--budget", 1, "--batch-size", 2, "--seq-len", 32, "--ner-epochs", 1,
            "--ner-max-steps", 1, "--n-words", 5, "--out", out, "-q")
    assert_contract(r, PROG, out, named)
    assert tree_digest(watched) == before


# --- issue 33: the newest commands under bad input and faults ------------------------------------------
PROBE = ("--steps", 2, "--batch-size", 2, "--seq-len", 16, "--layers", 1, "--hidden", 16, "--heads", 1,
         "--n-resamples", 20, "-q")


@pytest.fixture(scope="module")
def held(base, sample_lines):
    p = base / "held.txt"
    p.write_text("\n".join(sample_lines[-12:]) + "\n", encoding="utf-8")
    return p


@pytest.fixture(scope="module")
def probe_done(base, tok, corpus, held):
    out = base / "probe"
    r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--out", out)
    assert r.exit_code == 0, r.output
    return out


def _report(probe: Path) -> dict:
    """probe.json but its command line (which names the folder)."""
    return {k: v for k, v in json.loads((probe / "probe.json").read_text()).items() if k != "command"}


def _digest_without_lock(root: Path) -> dict:
    return {k: v for k, v in tree_digest(root).items() if k != ".biotok.lock"}


def test_probe_force_keeps_the_previous_probe_until_the_new_one_is_complete(tmp_path, probe_done, tok, corpus, held,
                                                                            monkeypatch):
    """``probe --force`` removed the previous probe first: SIGTERM while the new one trained left
    only probe-config.json and timings.json."""
    import signal

    import biotok_train.probe.model as pm

    p = _copy(probe_done, tmp_path / "p")
    before = _digest_without_lock(p)
    real = pm.train

    def terminated(*a, **k):
        os.kill(os.getpid(), signal.SIGTERM)
        return real(*a, **k)

    monkeypatch.setattr(pm, "train", terminated)
    r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--steps", 3, "--force", "--out", p)
    assert r.exit_code == 143, r.output
    assert _digest_without_lock(p) == before  # the previous probe, whole
    monkeypatch.setattr(pm, "train", real)
    r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--steps", 3, "--force", "--out", p)
    assert r.exit_code == 0, r.output
    assert json.loads((p / "probe-config.json").read_text())["recipe"]["steps"] == 3
    assert json.loads((p / "probe.json").read_text())["setup"]["steps"] == 3
    assert not [q.name for q in tmp_path.iterdir() if q.name.startswith(".p.")]  # nothing left aside


def test_two_probes_into_one_out(tmp_path, probe_done, tok, corpus, held):
    """Both exited 0 and the folder mixed both recipes; now the second is refused at once."""
    from biotok.output import run_lock

    p = _copy(probe_done, tmp_path / "p")
    with run_lock(p, "probe"):  # another probe holds the folder
        before = _digest_without_lock(p)
        r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--steps", 3, "--force", "--out", p)
        assert_contract(r, PROG, p, "in use by another probe run")
        assert _digest_without_lock(p) == before


@pytest.mark.parametrize("damage", ["run-truncated", "run-doc-bits", "timings-array"])
def test_probe_recomputes_a_damaged_cache(tmp_path, probe_done, tok, corpus, held, damage):
    """A truncated run JSON, one whose numbers do not fit the held-out text, or timings.json holding
    ``[]``: a traceback on rerun; now recomputed, with the same report."""
    p = _copy(probe_done, tmp_path / "p")
    run_file = next((p / "runs").rglob("seed0.json"))
    if damage == "run-truncated":
        run_file.write_bytes(run_file.read_bytes()[:40])
    elif damage == "run-doc-bits":
        obj = json.loads(run_file.read_text())
        run_file.write_text(json.dumps({**obj, "doc_bits": obj["doc_bits"][:2]}))
    else:
        (p / "timings.json").write_text("[]")
    r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--out", p)
    assert r.exit_code == 0, r.output
    assert _report(p) == _report(probe_done)
    assert json.loads(run_file.read_text())["doc_bits"] == json.loads(
        next((probe_done / "runs").rglob("seed0.json")).read_text())["doc_bits"]
    assert isinstance(json.loads((p / "timings.json").read_text()), dict)


def test_probe_refuses_a_damaged_probe_config_in_one_line(tmp_path, probe_done, tok, corpus, held):
    p = _copy(probe_done, tmp_path / "p")
    (p / "probe-config.json").write_text('{"recipe": {"steps": 2')
    before = _digest_without_lock(p)
    r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--out", p)
    assert_contract(r, PROG, p / "probe-config.json", "damaged", "--force")
    assert _digest_without_lock(p) == before


def test_probe_cache_is_keyed_by_the_text_the_arm_saw(tmp_path, tok, corpus, held):
    """With --fair the text depends on every arm's normalization: adding a lowercasing arm changes
    the first arm's text, and its cached run (keyed by tokenizer alone) was reused, stale."""
    from biotok.cli import main as biotok_main

    lower = tmp_path / "lower"
    r = CliRunner().invoke(biotok_main, ["train", str(corpus), "--algo", "wordpiece", "--vocab-size", "400", "--lower",
                                         "--out", str(lower), "-q"])
    assert r.exit_code == 0, r.output
    p, fresh = tmp_path / "p", tmp_path / "fresh"
    assert run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, "--fair", "--out", p).exit_code == 0
    r = run("probe", tok, lower, "--corpus", corpus, "--heldout", held, *PROBE, "--fair", "--out", p)
    assert r.exit_code == 0, r.output
    r = run("probe", tok, lower, "--corpus", corpus, "--heldout", held, *PROBE, "--fair", "--out", fresh)
    assert r.exit_code == 0, r.output
    got, want = (json.loads((d / "probe.json").read_text())["arms"][0] for d in (p, fresh))
    assert got["bits_per_char"] == want["bits_per_char"]
    from biotok_train.tracking import resolve_report_to

    if resolve_report_to("auto") == "tensorboard":  # its TensorBoard events were written again too
        run0 = next((p / "runs").glob("tok-*/seed0.json"))
        assert (run0.with_suffix("") / "key").read_text().strip() == json.loads(run0.read_text())["key"]


def test_a_jsonl_record_is_one_document(tmp_path, tok, sample_lines):
    """Each record's text was split at its newlines: 152 held-out cases became 308 documents."""
    train, heldout = tmp_path / "train.jsonl", tmp_path / "held.jsonl"
    train.write_text("".join(json.dumps({"text": "\n".join(sample_lines[i:i + 3])}) + "\n" for i in range(0, 60, 3)),
                     encoding="utf-8")
    heldout.write_text("".join(json.dumps({"text": f"{a}\n\n{b}"}) + "\n"
                               for a, b in zip(sample_lines[-10::2], sample_lines[-9::2])), encoding="utf-8")
    r = run("probe", tok, "--corpus", train, "--heldout", heldout, *PROBE, "--out", tmp_path / "p")
    assert r.exit_code == 0, r.output
    setup = json.loads((tmp_path / "p" / "probe.json").read_text())["setup"]
    assert (setup["train_documents"], setup["heldout_documents"]) == (20, 5)


# --- the pretraining checkpoint: tensors and plain data only; SIGTERM is Ctrl-C --------------------------
class _Planted:
    """An object whose unpickling makes a folder: what a crafted state.pt would run."""

    def __init__(self, where: str) -> None:
        self.where = where

    def __reduce__(self):
        return (os.mkdir, (self.where,))


def test_mlm_resume_never_unpickles_code(tmp_path, model, data):
    import torch

    run_dir = _copy(model, tmp_path / "run")
    planted = tmp_path / "planted"
    torch.save({"module": {}, "planted": _Planted(str(planted))}, run_dir / "checkpoint" / "state.pt")
    r = run("mlm", data, "--steps", 2, "--batch-size", 2, "--device", "cpu", "--resume", "--out", run_dir,
            "--no-progress")
    assert_contract(r, PROG, run_dir / "checkpoint" / "state.pt", "refused", "mkdir")
    assert not planted.exists()


@pytest.mark.parametrize("how", ["truncated", "not-a-state"])
def test_mlm_resume_from_a_damaged_state(tmp_path, model, data, how):
    import torch

    run_dir = _copy(model, tmp_path / "run")
    state = run_dir / "checkpoint" / "state.pt"
    if how == "truncated":
        state.write_bytes(state.read_bytes()[: state.stat().st_size // 2])
    else:
        torch.save([1, 2, 3], state)
    before = tree_digest(run_dir)
    r = run("mlm", data, "--steps", 2, "--batch-size", 2, "--device", "cpu", "--resume", "--out", run_dir,
            "--no-progress")
    assert_contract(r, PROG, state, "damaged")
    assert tree_digest(run_dir) == before


def test_mlm_resume_on_a_full_disk_names_the_run(mounts, model, data):
    """A full disk while saving was a line naming no file ('cannot read or write a file')."""
    full = mounts.full(populate=lambda m: shutil.copytree(model, m / "run"), size="16m")
    r = run("mlm", data, "--steps", 2, "--batch-size", 2, "--device", "cpu", "--resume", "--out", full / "run",
            "--no-progress", "--report-to", "none")
    assert_contract(r, PROG, full / "run", "no space left")
    assert not (full / "run" / "checkpoint" / "state.tmp").exists()


def test_sigterm_saves_a_checkpoint_like_ctrl_c(tmp_path, data, monkeypatch):
    """SIGTERM (what Ray and SLURM send) stopped mlm mid-step with no checkpoint; the folder then
    could neither be resumed nor rerun. Now: a checkpoint, exit 143, and the resumed run ends
    byte-identical to one never stopped."""
    import signal

    import biotok_train.pretrain.loop as loop

    args = ("--steps", 4, "--batch-size", 2, "--device", "cpu", "--no-progress")
    assert run("mlm", data, *args, "--out", tmp_path / "straight").exit_code == 0
    real, calls = loop.mask_tokens, {"n": 0}

    def terminating(*a, **k):
        calls["n"] += 1
        if calls["n"] == 2:  # during step 2
            os.kill(os.getpid(), signal.SIGTERM)
        return real(*a, **k)

    monkeypatch.setattr(loop, "mask_tokens", terminating)
    r = run("mlm", data, *args, "--out", tmp_path / "run")
    assert r.exit_code == 143 and "terminated (SIGTERM)" in r.stderr, r.output
    assert json.loads((tmp_path / "run" / "biotok_pretrain.json").read_text())["step"] == 2
    monkeypatch.setattr(loop, "mask_tokens", real)
    r = run("mlm", data, *args, "--resume", "--out", tmp_path / "run")
    assert r.exit_code == 0, r.output
    assert (tmp_path / "run" / "model.safetensors").read_bytes() == (
        tmp_path / "straight" / "model.safetensors").read_bytes()


# --- sizes bounded at the door: a tokenizer's ids and nesting, a probe's shape ---------------------------
def _big_id_tokenizer(tok: Path, dest: Path) -> Path:
    t = _copy(tok, dest)
    d = json.loads((t / "tokenizer.json").read_text(encoding="utf-8"))
    d["model"]["vocab"][list(d["model"]["vocab"])[-1]] = 2_000_000_000
    (t / "tokenizer.json").write_text(json.dumps(d), encoding="utf-8")
    return t


def _deep_tokenizer(tok: Path, dest: Path) -> Path:
    t = _copy(tok, dest)
    (t / "tokenizer.json").write_text("[" * 50_000 + "]" * 50_000, encoding="utf-8")
    return t


@pytest.mark.parametrize("damage", ["id-2e9", "nested-50000"])
@pytest.mark.parametrize("cmd", ["probe", "prepare", "transfer"])
def test_tokenizer_sizes_are_checked_at_the_door(tmp_path, tok, corpus, held, model, cmd, damage):
    """An id of 2,000,000,000: a 14.9 GiB numpy error (probe) or a Rust abort, exit 134 (prepare,
    transfer); 50,000 levels of nesting: RecursionError."""
    bad = (_big_id_tokenizer if damage == "id-2e9" else _deep_tokenizer)(tok, tmp_path / "bad")
    out = tmp_path / "out"
    if cmd == "probe":
        r = run("probe", bad, "--corpus", corpus, "--heldout", held, *PROBE, "--out", out)
    elif cmd == "prepare":
        r = run("prepare", corpus, "-t", bad, "--seq-len", 32, "--out", out, "--no-progress")
    else:
        r = run("transfer", model, "-t", bad, "--out", out)
    line = assert_contract(r, PROG, bad)
    assert ("2,000,000,000" in line) if damage == "id-2e9" else ("nested too deeply" in line)
    assert not out.exists()


@pytest.mark.parametrize("option", [("--hidden", 1048576), ("--layers", 1000000)])
def test_probe_model_sizes_have_a_range(tmp_path, tok, corpus, held, option):
    """They asked the allocator for 13 TB."""
    r = run("probe", tok, "--corpus", corpus, "--heldout", held, *PROBE, *option, "--out", tmp_path / "p")
    assert_contract(r, PROG, option[0], "out of range")
    assert not (tmp_path / "p").exists()


# --- one model check for every command that loads a model ----------------------------------------------
@pytest.fixture(scope="module")
def ner_model(base, model, bio):
    """A model fine-tuned for NER: no masked-LM head."""
    r = run("ner", model, "--data", bio, "--epochs", 1, "--max-steps", 1, "--out", base / "ner", "-q")
    assert r.exit_code == 0, r.output
    return next(p.parent for p in (base / "ner").rglob("config.json"))


@pytest.mark.parametrize("cmd", ["fill-mask", "eval-mlm"])
def test_a_model_without_masked_lm_head_is_refused(ner_model, corpus, cmd):
    """A fine-tuned NER model got a random head: exit 0, other answers each run."""
    args = ("fill-mask", ner_model, "Le patient présente une [MASK] .") if cmd == "fill-mask" else (
        "eval-mlm", ner_model, "--corpus", corpus, "--n-words", 5)
    r = run(*args)
    assert_contract(r, PROG, ner_model, "no masked-LM head")


def _bigger_tokenizer(tmp_path: Path, model: Path) -> Path:
    """The model with a tokenizer of more ids than its embedding has rows."""
    m = _copy(model, tmp_path / "m")
    d = json.loads((m / "tokenizer.json").read_text(encoding="utf-8"))
    top = max(d["model"]["vocab"].values())
    d["model"]["vocab"].update({f"extra{i}": top + 1 + i for i in range(600)})
    (m / "tokenizer.json").write_text(json.dumps(d), encoding="utf-8")
    return m


@pytest.mark.parametrize("cmd", ["fill-mask", "eval-mlm", "finetune"])
def test_a_tokenizer_larger_than_the_embedding_is_refused(tmp_path, model, corpus, bio, cmd):
    """IndexError mid-run."""
    m = _bigger_tokenizer(tmp_path, model)
    if cmd == "fill-mask":
        r = run("fill-mask", m, "extra5 [MASK] extra599")
    elif cmd == "eval-mlm":
        r = run("eval-mlm", m, "--corpus", corpus, "--n-words", 5)
    else:
        r = run("ner", m, "--data", bio, "--epochs", 1, "--max-steps", 1, "--out", tmp_path / "res", "-q")
    assert_contract(r, PROG, m, "embedding")


@pytest.mark.parametrize("damage", ["truncated", "vocab-size-negative", "architectures-int"])
@pytest.mark.parametrize("cmd", ["fill-mask", "eval-mlm", "transfer", "finetune"])
def test_a_damaged_config_json_is_one_line(tmp_path, model, tok, corpus, bio, cmd, damage):
    m = _copy(model, tmp_path / "m")
    cfg = m / "config.json"
    if damage == "truncated":
        cfg.write_text(cfg.read_text()[:50])
    else:
        d = json.loads(cfg.read_text())
        d.update({"vocab_size": -5} if damage == "vocab-size-negative" else {"architectures": [7]})
        cfg.write_text(json.dumps(d))
    before = tree_digest(m)
    if cmd == "fill-mask":
        r = run("fill-mask", m, "Le patient présente une [MASK] .")
    elif cmd == "eval-mlm":
        r = run("eval-mlm", m, "--corpus", corpus, "--n-words", 5)
    elif cmd == "transfer":
        r = run("transfer", m, "-t", tok, "--out", tmp_path / "out")
    else:
        r = run("ner", m, "--data", bio, "--epochs", 1, "--max-steps", 1, "--out", tmp_path / "res", "-q")
    assert_contract(r, PROG, cfg)
    assert tree_digest(m) == before


# --- the smaller ones ------------------------------------------------------------------------------------
def test_ner_without_any_entity_writes_json_and_no_warnings(tmp_path, model):
    """NaN in results.json (not JSON) and numpy's 'Mean of empty slice' despite -q."""
    d = tmp_path / "noent"
    d.mkdir()
    (d / "train.tsv").write_text("Le\tO\npatient\tB-X\n.\tO\n\n", encoding="utf-8")
    for split in ("dev", "test"):
        (d / f"{split}.tsv").write_text("Le\tO\npatient\tO\n.\tO\n\n", encoding="utf-8")
    r = run("ner", model, "--data", d, "--epochs", 1, "--max-steps", 1, "--out", tmp_path / "res", "-q")
    assert r.exit_code == 0, r.output
    assert "Warning" not in r.stderr, r.stderr

    def refuse(token):
        raise AssertionError(f"{token} in results.json")

    res = json.loads((tmp_path / "res" / "results.json").read_text(encoding="utf-8"), parse_constant=refuse)
    assert res["macro_f1"] == 0.0


def _bases(env: dict) -> "subprocess.CompletedProcess":
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "biotok_train.bases", "minilm"], capture_output=True, text=True,
                          env={**os.environ, **env}, timeout=300)


def test_bases_with_a_cache_that_is_a_file(tmp_path):
    """NotADirectoryError traceback."""
    from tests._contract import assert_proc_contract

    f = tmp_path / "afile"
    f.write_text("x")
    p = _bases({"BIOTOK_CACHE": str(f)})
    assert_proc_contract(p, "python -m biotok_train.bases", f"BIOTOK_CACHE={f}", "not a folder")


def test_bases_without_network_names_the_program_and_leaves_nothing(tmp_path):
    """'error: cannot download ...' without the program's name, and an empty wheels/ folder left."""
    from tests._contract import assert_proc_contract

    cache = tmp_path / "cache"
    p = _bases({"BIOTOK_CACHE": str(cache), "PIP_INDEX_URL": "http://127.0.0.1:9/simple", "PIP_RETRIES": "0",
                "PIP_TIMEOUT": "2", "PIP_FIND_LINKS": "", "PIP_NO_INDEX": ""})
    assert_proc_contract(p, "python -m biotok_train.bases", "cannot download")
    assert not cache.exists()


def _st_folder(model: Path, dest: Path) -> Path:
    """The older sentence-transformers layout: the transformer (and its tokenizer) in 0_Transformer/."""
    shutil.copytree(model, dest / "0_Transformer")
    (dest / "1_Pooling").mkdir()
    (dest / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 16}')
    (dest / "modules.json").write_text(json.dumps([
        {"idx": 0, "name": "0", "path": "0_Transformer", "type": "sentence_transformers.models.Transformer"},
        {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}]))
    return dest


def test_prepare_takes_a_sentence_transformers_folder(tmp_path, model, corpus):
    """Documented for prepare -t, but refused ('holds no tokenizer')."""
    st = _st_folder(model, tmp_path / "st")
    r = run("prepare", corpus, "-t", st, "--seq-len", 32, "--out", tmp_path / "data", "--no-progress")
    assert r.exit_code == 0, r.output
    meta = json.loads((tmp_path / "data" / "meta.json").read_text())
    assert meta["tokenizer"]["fingerprint"] == json.loads(
        (model / "biotok_pretrain.json").read_text())["tokenizer_fingerprint"]


def test_finetune_tsv_header_with_a_byte_order_mark(tmp_path, model, cls_tsv):
    """'lacks column text ... got text': the BOM was part of the first column's name."""
    bom = tmp_path / "bom.tsv"
    bom.write_bytes("\ufeff".encode() + cls_tsv.read_bytes())
    r = _ft(model, bom, cls_tsv, cls_tsv, tmp_path / "res")
    assert r.exit_code == 0, r.output


def test_an_out_name_with_a_newline_and_a_code_fence_keeps_the_card_whole(tmp_path, model, cls_tsv):
    """The name closed the card's code block and put raw HTML outside any."""
    from markdown_it import MarkdownIt

    out = tmp_path / "res\n```\n<img src=x onerror=alert(1)>"
    r = _ft(model, cls_tsv, cls_tsv, cls_tsv, out)
    assert r.exit_code == 0, r.output
    card = (out / "README.md").read_text(encoding="utf-8")
    tokens = MarkdownIt("commonmark").parse(card.split("---\n", 2)[2])
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
    assert [t.info for t in tokens if t.type == "fence"] == ["bash", "python"]  # the command and the usage, whole
    assert "<img" not in MarkdownIt("commonmark").render(card.split("---\n", 2)[2])


def test_transfer_out_name_with_a_newline_and_a_code_fence_keeps_the_card_whole(tmp_path, model, tok):
    """Issue 40 item 7: the transfer card broke (an extra fence, a second level-1 heading, raw HTML)."""
    from markdown_it import MarkdownIt

    out = tmp_path / "moved\n```\n# second title\n<img src=x onerror=alert(1)>"
    r = run("transfer", model, "-t", tok, "--out", out)
    assert r.exit_code == 0, r.output
    card = (out / "README.md").read_text(encoding="utf-8")
    body = card.split("---\n", 2)[2]
    tokens = MarkdownIt("commonmark").parse(body)
    assert [t.tag for t in tokens if t.type == "heading_open"].count("h1") == 1
    assert not [t for t in tokens if t.type in ("html_block", "html_inline")]
    assert [t.info for t in tokens if t.type == "fence"] == ["bash", "python"]  # the command and the usage, whole
    assert "<img" not in MarkdownIt("commonmark").render(body)
