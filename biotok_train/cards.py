"""Model cards (README.md) of what ``biotok-train`` writes: pretraining runs, fine-tuned models
and fine-tuning results, transfer outputs; builders over :mod:`biotok.card`, torch-free.

Every card is made from the files and results of its folder and the inputs it names (the
prepared data's meta.json, the tokenizer's biotok.json, heldout.json, results, transfer.json),
never from times or temporary paths: the same inputs give the same bytes.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping

from biotok.card import (ModelCard, cell_code, code_block, code_span, command_section, current_command, files_table,
                         folder_name, hub_id, md_text, py_str, sh_quote, versions_line, write_card)
from biotok.output import atomic_file

RUN_META = "biotok_pretrain.json"  # = biotok_train.pretrain.checkpoint.RUN_META (that module imports torch)

#: The Hub pipeline of each fine-tuning task type (None: no transformers pipeline fits it).
PIPELINE_TAGS: dict[str, str | None] = {
    "ner": "token-classification", "classify": "text-classification", "relation": "text-classification",
    "multilabel": "text-classification", "yesno-qa": "text-classification", "pair-regression": "text-classification",
    "mcq": None,
}


def _read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _g(x: Any) -> str:
    """A value as a card prints it: integers with separators, floats with 4 significant digits, any
    other value as literal Markdown (a JSON file received from elsewhere may hold markup)."""
    if isinstance(x, bool) or x is None:
        return str(x)
    if isinstance(x, int):
        return f"{x:,}"
    if isinstance(x, float):
        return f"{x:.4g}"
    return md_text(x)


# --- the vocabulary ------------------------------------------------------------------------------
def tokenizer_meta(*places: str | os.PathLike[str] | None) -> dict | None:
    """The biotok.json provenance of the first of ``places`` (tokenizer folders) that has one."""
    for p in places:
        if p:
            meta = _read_json(Path(p) / "biotok.json")
            if meta is not None:
                return meta
    return None


def vocabulary_section(meta: Mapping[str, Any] | None, name: str | None = None) -> str:
    """The tokenizer's provenance (algorithm, backend, normalization, corpus files with sha256)
    from its biotok.json; a line saying it is unknown when the tokenizer was not made by biotok."""
    if not meta:
        return (f"Tokenizer {code_span(name)} (no biotok.json found with it: its corpus and recipe are not recorded)."
                if name else "")
    cfg = meta.get("config", {})
    corpus = meta.get("corpus", {})
    switches = md_text(", ".join(f"{k}={v}" for k, v in cfg.get("normalize", {}).items()) or "none")
    lines = [
        f"- tokenizer: {code_span(name or meta.get('name', '?'))}, algorithm **{_g(cfg.get('algo', '?'))}** "
        f"(trained with {_g(cfg.get('backend', '?'))}), {_g(meta.get('vocab_size', cfg.get('vocab_size')))} pieces, "
        f"seed {_g(cfg.get('seed'))}",
        f"- normalization: {switches}",
        f"- corpus: {_g(corpus.get('lines'))} lines, {_g(corpus.get('words'))} words",
    ]
    table = files_table(corpus.get("files", []))
    return "\n".join(lines) + ("\n\n" + table if table else "")


# --- pretraining runs ----------------------------------------------------------------------------
def _heldout_section(held: dict | None) -> str:
    """The card's Evaluation section: held-out [MASK] prediction against the unigram floor."""
    if held is None:
        return ""
    return "\n".join([
        f"Held-out [MASK] prediction at step {_g(held.get('step'))} ({_g(held.get('positions'))} masked positions, "
        f"model: {_g(held.get('model'))}):", "",
        "| | loss | top-1 |", "|---|---:|---:|",
        f"| this model | {_g(held.get('loss'))} | {_g(held.get('top1'))} |",
        f"| unigram floor / most frequent piece | {_g(held.get('floor_loss'))} | {_g(held.get('floor_top1'))} |",
        "", f"Gap to the floor {_g(held.get('gap'))} [{_g(held.get('gap_low'))}, {_g(held.get('gap_high'))}]: "
        f"{'left' if held.get('left_plateau') else 'still on'} the unigram plateau.",
    ])


def pretrain_card(run_dir: str | os.PathLike[str], command: str | None = None) -> ModelCard:
    """The card of a pretraining run folder (as the user gave it: the usage snippet loads it from
    there), from its biotok_pretrain.json, its heldout.json (when
    it scores the saved step), the prepared data's meta.json and the tokenizer's biotok.json."""
    run = Path(run_dir)
    meta = _read_json(run / RUN_META) or {}
    cfg = meta.get("config", {})
    optim = cfg.get("optim", {})
    objective, arch = cfg.get("objective", "mlm"), cfg.get("arch", "bert")
    electra = objective == "electra"
    data = Path(meta["data"]) if meta.get("data") else None
    data_meta = (_read_json(data / "meta.json") if data else None) or {}
    tok = data_meta.get("tokenizer", {})
    vocab = tokenizer_meta(data / "tokenizer" if data else None, tok.get("source"))
    held = _read_json(run / "heldout.json")
    if held is not None and held.get("step") != meta.get("step"):
        held = None  # scored another checkpoint than the one saved here
    model = "ELECTRA (discriminator; generator/ beside it)" if electra else f"{_g(str(arch).upper())} masked LM"
    init = cfg.get("init_from")
    made = [
        f"- objective: **{_g(objective)}**{' (whole-word masking)' if cfg.get('wwm') else ''}, model {model}, "
        f"size {_g(cfg.get('size'))}, {_g(meta.get('num_params'))} parameters",
        f"- steps: {_g(meta.get('step'))} of {_g(cfg.get('steps'))}, batch {_g(cfg.get('batch_size'))} x grad accum "
        f"{_g(cfg.get('grad_accum'))} x {_g(meta.get('world_size', 1))} process(es), sequence length "
        f"{_g(meta.get('seq_len'))}",
        f"- optimizer: {_g(optim.get('name'))}, peak lr {_g(optim.get('lr'))}, warm-up {_g(optim.get('warmup'))}, "
        f"{_g(optim.get('schedule'))} schedule, weight decay {_g(optim.get('weight_decay'))}; seed {_g(cfg.get('seed'))}, "
        f"mask probability {_g(cfg.get('mask_prob'))}",
    ]
    if init:
        made.append(f"- continued from {code_span(init)} (continual pretraining)")
    if data_meta:
        made.append(f"- data: {_g(data_meta.get('num_tokens'))} tokens in {_g(data_meta.get('num_sequences'))} "
                    f"sequences from {', '.join(code_span(c) for c in data_meta.get('corpus', [])) or '?'}")
    scores = _heldout_section(held)
    where = py_str(str(run))  # the folder as given: the snippet runs from there (biotok push swaps in the repo)
    load = (f"AutoModelForMaskedLM.from_pretrained({where}, subfolder=\"generator\"), tokenizer={where}"
            if electra else where)  # ELECTRA: the generator fills masks, the tokenizer is the folder's
    usage = code_block(f"from transformers import {'AutoModelForMaskedLM, ' if electra else ''}pipeline\n"
                       f"fill = pipeline(\"fill-mask\", model={load})\n"
                       "fill(f\"le patient présente une {fill.tokenizer.mask_token} .\")", "python")
    tags = ["biotok", "biomedical", objective, "electra" if electra else arch]
    if not electra:
        tags.insert(1, "fill-mask")
    return ModelCard(
        title=f"{md_text(folder_name(run))}: a biotok {'ELECTRA' if electra else _g(str(arch).upper())} pretraining run",
        summary=("A model pretrained with `biotok-train`. It loads without biotok "
                 f"(`AutoModelFor{'PreTraining' if electra else 'MaskedLM'}` and `AutoTokenizer` on this folder); "
                 "`checkpoint/` holds the training state that `--resume` continues."),
        metadata={"library_name": "transformers", "pipeline_tag": None if electra else "fill-mask",
                  "tags": tags, "base_model": hub_id(init)},
        sections=[("How it was made", "\n".join(made)), ("Evaluation", scores),
                  ("Vocabulary", vocabulary_section(vocab, tok.get("name"))),
                  ("Command", command_section(command)), ("Usage", usage)],
    )


def write_pretrain_card(run_dir: str | os.PathLike[str], command: str | None = None) -> Path:
    """Write (atomically) the README.md of a pretraining run folder; ``command`` defaults to the
    command line being run."""
    card = pretrain_card(run_dir, command if command is not None else current_command())
    path = Path(run_dir) / "README.md"
    with atomic_file(path, force=True) as tmp:
        tmp.write_text(card.render(), encoding="utf-8")
    return path


# --- fine-tuning ---------------------------------------------------------------------------------
def finetune_card(result: Mapping[str, Any], *, has_model: bool, name: str,
                  command: str | None = None) -> ModelCard:
    """The card of a fine-tuning output folder from its results.json content ``result`` (a
    :meth:`FinetuneResult.to_dict`); ``has_model``: the fine-tuned model is saved beside it;
    ``name``: the folder as the user gave it (the usage snippet loads it from there)."""
    task = result.get("task", "?")
    info = result.get("task_info", {}) or {}
    cfg = result.get("config", {}) or {}
    optim = cfg.get("optim", {}) or {}
    pipe = PIPELINE_TAGS.get(task)
    metrics = result.get("metrics", {}) or {}
    headline = info.get("metric", result.get("dev_metric"))
    rows = ["| metric | test |", "|---|---:|"]
    rows += [f"| {md_text(k)}{' (benchmark metric)' if k == headline else ''} | {_g(v)} |" for k, v in metrics.items()]
    scores = "\n".join([
        *rows, "",
        f"Best dev {_g(result.get('dev_metric'))} {_g(result.get('dev_score'))} at epoch {_g(result.get('best_epoch'))} "
        f"({_g(result.get('steps'))} optimizer steps); test is scored once, on the best dev state.",
    ])
    setup = [f"- task: **{_g(result.get('dataset'))}** ({_g(task)}"
             + (f", {_g(info['description'])}" if info.get("description") else "") + ")",
             f"- fine-tuned from {code_span(result.get('model'))}",
             f"- recipe: {_g(cfg.get('epochs'))} epochs (patience {_g(cfg.get('patience'))}), batch "
             f"{_g(cfg.get('batch_size'))}, peak lr {_g(optim.get('lr'))}, warm-up {_g(optim.get('warmup'))}, weight decay "
             f"{_g(optim.get('weight_decay'))}, max length {_g(cfg.get('max_length'))}, seed {_g(cfg.get('seed'))}"]
    for key in ("scheme", "nested", "relation_input", "threshold", "train_fraction"):
        if key in info:
            setup.append(f"- {key.replace('_', ' ')}: {_g(info[key])}")
    if result.get("lr_search"):
        setup.append("- learning rates tried (best dev kept): "
                     + ", ".join(f"{_g(r['lr'])}" for r in result["lr_search"]))
    labels = result.get("labels", [])
    if labels:
        shown = ", ".join(code_span(l) for l in labels[:40]) + (f" and {len(labels) - 40} more" if len(labels) > 40 else "")
        setup.append(f"- labels ({len(labels)}): {shown}")
    if has_model and pipe:
        extra = ', aggregation_strategy="simple"' if pipe == "token-classification" else ""
        usage = code_block(f"from transformers import pipeline\nnlp = pipeline(\"{pipe}\", model={py_str(name)}{extra})",
                           "python")
    elif has_model:
        usage = f"Load it with {code_span(f'transformers.AutoModel.from_pretrained({py_str(name)})')} and its tokenizer."
    else:
        usage = ("This folder holds the scores and predictions only (no model): `predictions.jsonl` has every "
                 "test prediction with its gold answer.")
    return ModelCard(
        title=f"{md_text(folder_name(name))}: {md_text(folder_name(result.get('model')))} fine-tuned on {md_text(result.get('dataset'))}",
        summary=("Fine-tuned with `biotok-train finetune`; results.json holds every number below, "
                 "predictions.jsonl every test prediction."),
        metadata={"library_name": "transformers" if has_model else None, "pipeline_tag": pipe if has_model else None,
                  "tags": ["biotok", "biomedical", task], "base_model": hub_id(result.get("model")),
                  "datasets": [result.get("dataset")], "metrics": list(metrics)},
        sections=[("Test scores", scores), ("How it was made", "\n".join(setup)),
                  ("Command", command_section(command)), ("Usage", usage)],
    )


def write_finetune_card(folder: str | os.PathLike[str], result: Mapping[str, Any], *, has_model: bool,
                        name: str, command: str | None = None) -> Path:
    """Write the README.md of a fine-tuning output being filled (``folder`` is its temporary sibling)."""
    return write_card(folder, finetune_card(result, has_model=has_model, name=name,
                                            command=command if command is not None else current_command()))


# --- transfer ------------------------------------------------------------------------------------
def transfer_card(provenance: Mapping[str, Any], name: str, command: str | None = None) -> ModelCard:
    """The card of a transfer output from its transfer.json content ``provenance``; ``name``: the
    folder as the user gave it (the usage snippet loads it from there)."""
    model = provenance.get("model", {}) or {}
    new = provenance.get("new_tokenizer", {}) or {}
    old = provenance.get("old_tokenizer", {}) or {}
    method = provenance.get("method", "?")
    counts = provenance.get("counts", {}) or {}
    sizes = provenance.get("vocab_size", {}) or {}
    made = [
        f"- source model: {code_span(model.get('path'))} ({_g(model.get('architecture'))}"
        + (f", generator {_g(model.get('generator'))}" if model.get("generator") else "") + ")",
        f"- method: **{_g(method)}**, seed {_g(provenance.get('seed'))}; vocabulary {_g(sizes.get('old'))} -> "
        f"{_g(sizes.get('new'))} rows: " + ", ".join(f"{_g(v)} {md_text(k)}" for k, v in counts.items()),
        f"- old tokenizer: {code_span(old.get('name'))} (sha256 {_g(str(old.get('fingerprint'))[:16])}), new "
        f"tokenizer: {code_span(new.get('name'))} (sha256 {_g(str(new.get('fingerprint'))[:16])})",
        f"- versions: {versions_line(provenance.get('versions', {}))}",
    ]
    weights = model.get("weights_sha256", {}) or {}
    if weights:
        made += ["", "| source weights | sha256 |", "|---|---|"] + [f"| {cell_code(k)} | {cell_code(v)} |" for k, v in weights.items()]
    usage = (code_block(f"from transformers import pipeline\nfill = pipeline(\"fill-mask\", model={py_str(name)})", "python")
             + "\n\nContinue its pretraining on the new vocabulary: "
             + code_span(f"biotok-train mlm DATA --init-from {sh_quote(name)} ...") + ".")
    return ModelCard(
        title=f"{md_text(folder_name(name))}: {code_span(model.get('path'))} with a new vocabulary ({_g(method)})",
        summary=("The source model's embeddings, tied output layer and MLM bias rebuilt for a new tokenizer by "
                 "`biotok-train transfer`; transfer.json records how every row was made."),
        metadata={"library_name": "transformers", "pipeline_tag": "fill-mask" if not model.get("generator") else None,
                  "tags": ["biotok", "vocabulary-transfer", method, "biomedical"],
                  "base_model": hub_id(model.get("path"))},
        sections=[("How it was made", "\n".join(made)),
                  ("New vocabulary", vocabulary_section(tokenizer_meta(new.get("source")), new.get("name"))),
                  ("Command", command_section(command)), ("Usage", usage)],
    )


def write_transfer_card(folder: str | os.PathLike[str], provenance: Mapping[str, Any], name: str,
                        command: str | None = None) -> Path:
    """Write the README.md of a transfer output being filled (``folder``: its temporary sibling)."""
    return write_card(folder, transfer_card(provenance, name,
                                            command if command is not None else current_command()))


__all__ = ["PIPELINE_TAGS", "finetune_card", "pretrain_card", "tokenizer_meta", "transfer_card", "vocabulary_section",
           "write_finetune_card", "write_pretrain_card", "write_transfer_card"]
