"""The shared corpora the experiments read, named once: where each lives in ../shared/data
(``$BIOTOK_SHARED_DATA``; see its MANIFEST.md), and readers of the French text they hold.

Every script takes its paths from here: the shared data's corpora and tokenizers, and the
checkout's own small sample and term list.
"""

from __future__ import annotations

import csv
import io
import json
import tarfile
from pathlib import Path
from typing import Iterator

from biotok.datadir import shared_data
from biotok.datasets.named import QUAERO_TAR
from biotok.io import open_text

REPO = Path(__file__).resolve().parent.parent
DATA = shared_data() or REPO.parent / "shared" / "data"  # the checkout's ../shared/data by default
CORPORA = DATA / "corpora"
TOKENIZERS = DATA / "tokenizers"

E3C = CORPORA / "e3c-fr"
PAMJ = E3C / "layer3_fr_pamj_ccby.jsonl.xz"  # E3C layer 3, Pan African Medical Journal clinical cases (CC BY 4.0)
LEAFLETS = E3C / "layer3_fr_ministere_ccbync.jsonl.xz"  # E3C layer 3, French drug leaflets (CC BY-NC)
WMT_BIOMED_TRAIN = CORPORA / "wmt-biomed-fr-en" / "wmt_biomed_train_medline_scielo_edp_fr-en.tar.xz"
WMT_BIOMED_FR = ("./medline_d1.fr", "./scielo_d1.fr", "./edp_d1.fr")  # its French sides, one sentence a line
CIM10 = CORPORA / "edsnlp-fr-terminology" / "cim10.csv.gz"  # CIM-10 (French ICD-10) codes and labels
FRENCHMEDMCQA = CORPORA / "frenchmedmcqa"  # {train,dev,test}.json.gz: questions and answers
QUAERO = CORPORA / QUAERO_TAR  # QUAERO French medical corpus (EMEA and MEDLINE texts)
LABFORSIMS = CORPORA / "labforsims2-fr-dialogues" / "labforsims2-corpus.tar.xz"  # simulated clinical dialogues
GPU_SUITE_H200 = DATA.parent / "gpu" / "h200-2026-11-27"  # the GPU suite's first run, on one H200 (its README)
CAMEMBERTA = TOKENIZERS / "camemberta-base"
CAMEMBERTV2 = TOKENIZERS / "camembertv2-base"
BERT_BASE_CASED = TOKENIZERS / "bert-base-cased"

SAMPLE = REPO / "corpora" / "sample" / "e3c_pamj_fr.txt"  # in the checkout: a small PAMJ sample (no shared data needed)
TERMS_FR = REPO / "corpora" / "terms" / "fr_biomedical.txt"  # in the checkout: French biomedical terms

FRENCH_TASKS = ("e3c", "quaero-emea-drb", "quaero-medline-drb", "morfitt", "frenchmedmcqa")
"""The French tasks the experiments evaluate (registered in biotok_train.tasks)."""


def require_data() -> None:
    """Stop with one line when the shared data is not there."""
    if not (DATA / "MANIFEST.md").is_file():
        raise SystemExit(f"this needs the reference data: {DATA} not found (set BIOTOK_SHARED_DATA)")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def pamj_documents() -> Iterator[str]:
    """The PAMJ clinical cases, one document a line (its lines joined by a space)."""
    with open_text(PAMJ, newline=None) as f:
        for line in f:
            if line.strip() and (doc := _one_line(json.loads(line)["text"])):
                yield doc


def leaflet_texts() -> Iterator[str]:
    """The drug leaflets, one leaflet a line (many repeat the same sentences)."""
    with open_text(LEAFLETS, newline=None) as f:
        for line in f:
            if line.strip() and (doc := _one_line(json.loads(line)["text"])):
                yield doc


def wmt_biomed_french() -> Iterator[str]:
    """The French side of the WMT-biomed training abstracts (MEDLINE, SciELO, EDP), a sentence a line."""
    with tarfile.open(WMT_BIOMED_TRAIN) as t:
        for name in WMT_BIOMED_FR:
            member = t.extractfile(name)
            assert member is not None, name
            for line in member.read().decode("utf-8").splitlines():
                if line := _one_line(line):
                    yield line


def wmt_french_file(out: Path) -> Path:
    """The French side of the WMT-biomed training abstracts written once to ``out``, one stripped
    line each (the general text of the transfer and Table 9 CPU runs); reused when it exists."""
    if out.is_file():
        return out
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_suffix(".tmp")
    with tarfile.open(WMT_BIOMED_TRAIN, "r:xz") as tar, open(tmp, "w", encoding="utf-8") as f:
        for name in WMT_BIOMED_FR:
            for line in io.TextIOWrapper(tar.extractfile(name), encoding="utf-8"):
                if line.strip():
                    f.write(line.strip() + "\n")
    tmp.rename(out)
    return out


def cim10_labels() -> Iterator[str]:
    """The CIM-10 labels (their long French form), one a line."""
    with open_text(CIM10, newline=None) as f:
        for row in csv.DictReader(f):
            if label := _one_line(row["long"]):
                yield label


__all__ = [
    "BERT_BASE_CASED", "CAMEMBERTA", "CAMEMBERTV2", "CIM10", "CORPORA", "DATA", "E3C", "FRENCHMEDMCQA", "FRENCH_TASKS",
    "GPU_SUITE_H200", "LABFORSIMS", "LEAFLETS", "PAMJ", "QUAERO", "REPO", "SAMPLE", "TERMS_FR", "TOKENIZERS", "WMT_BIOMED_FR", "WMT_BIOMED_TRAIN", "cim10_labels", "leaflet_texts", "pamj_documents", "require_data",
    "wmt_biomed_french", "wmt_french_file",
]
