"""Checkpoints: the model in HF format (safetensors + tokenizer files, loadable without biotok)
and the training state (optimizer, scheduler, RNG, data position) that ``--resume`` restores.

Layout of a run directory::

    config.json, model.safetensors      the model (the discriminator for ELECTRA)
    tokenizer.json, tokenizer_config.json, special_tokens_map.json
    generator/                          ELECTRA only: the generator, same format
    biotok_pretrain.json                run config, tokenizer fingerprint, step
    checkpoint/state.pt                 training state for --resume
    metrics.jsonl                       one JSON object per logged step

state.pt holds tensors and plain data only (numbers, strings, lists, dicts) and is read with
``torch.load(weights_only=True)``: a run folder received from someone else never executes
anything on ``--resume`` (a file holding other objects is refused in one line, as is a
truncated one).
"""

from __future__ import annotations

import json
import os
import pickle
import random
import re
from pathlib import Path

import numpy as np
import torch
from torch import nn

from biotok.errors import DataError, OutputWriteError
from biotok.output import as_os_error, os_error_message

STATE = Path("checkpoint") / "state.pt"
RUN_META = "biotok_pretrain.json"


def save_model(module: nn.Module, out: Path) -> None:
    """The main model (and the ELECTRA generator) with ``save_pretrained`` (safetensors); a
    failed write is one :class:`~biotok.errors.OutputWriteError` naming the run folder."""
    from biotok_train.hf_models import save_pretrained
    from biotok_train.pretrain.models import main_model

    try:
        save_pretrained(main_model(module), out)
        if hasattr(module, "generator"):
            save_pretrained(module.generator, out / "generator")
    except Exception as e:  # safetensors' 'No space left on device (os error 28)' names no file
        oe = as_os_error(e)
        if oe is None or isinstance(e, OutputWriteError):
            raise
        raise OutputWriteError(os_error_message(oe, out)) from e


def rng_state() -> dict:
    """The state of every random generator a run uses (torch, numpy, python, cuda), as tensors
    and plain data (what ``torch.load(weights_only=True)`` reads back)."""
    name, keys, pos, has_gauss, cached = np.random.get_state(legacy=True)
    state = {"torch": torch.get_rng_state(), "python": random.getstate(),
             "numpy": {"name": str(name), "keys": torch.from_numpy(np.asarray(keys, dtype=np.int64)),
                       "pos": int(pos), "has_gauss": int(has_gauss), "cached_gaussian": float(cached)}}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def set_rng_state(state: dict) -> None:
    """Restore what :func:`rng_state` saved (also the numpy tuple of checkpoints before issue 33)."""
    torch.set_rng_state(state["torch"])
    npst = state["numpy"]
    if isinstance(npst, dict):
        npst = (npst["name"], npst["keys"].numpy().astype(np.uint32), npst["pos"], npst["has_gauss"],
                npst["cached_gaussian"])
    np.random.set_state(npst)
    random.setstate(state["python"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])


class _Recorder:
    """A file's ``write``/``flush`` that keep the OSError they raise: torch.save turns a failed
    write (a full disk) into a RuntimeError without its errno."""

    def __init__(self, f) -> None:
        self.f, self.error = f, None

    def write(self, data) -> int:
        try:
            return self.f.write(data)
        except OSError as e:
            self.error = e
            raise

    def flush(self) -> None:
        try:
            self.f.flush()
        except OSError as e:
            self.error = e
            raise


def save_state(out: Path, state: dict) -> None:
    """Write the training state atomically (a crash while saving keeps the previous one); a full
    disk is one :class:`~biotok.errors.OutputWriteError` naming state.pt, and no state.tmp is left."""
    path = out / STATE
    tmp = path.with_suffix(".tmp")
    rec = None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with open(tmp, "wb") as f:
            rec = _Recorder(f)
            torch.save(state, rec)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException as e:
        tmp.unlink(missing_ok=True)
        oe = e if isinstance(e, OSError) else (rec.error if rec is not None else None)
        if isinstance(e, Exception) and oe is not None:
            raise OutputWriteError(os_error_message(oe, path)) from e
        raise


# what torch's weights-only unpickler names when it refuses a global: 'Unsupported global: GLOBAL os.system'
_GLOBAL = re.compile(r"GLOBAL\s+([\w.]+)")
_REQUIRED = {"module": dict, "optimizer": dict, "scheduler": dict, "rng": dict, "step": int,
             "data_position": int, "losses": list}


def _numpy_arrays() -> list:
    """What a plain numpy array unpickles with (the numpy RNG state of checkpoints before issue 33):
    data, no code; an array of Python objects still meets the weights-only unpickler's checks."""
    core = getattr(np, "_core", None) or np.core
    return [core.multiarray._reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]


def _first_line(e: BaseException) -> str:
    text = " ".join(str(e).split())
    return text[:200] or type(e).__name__


def load_state(out: Path, map_location: str | torch.device = "cpu") -> dict | None:
    """The training state saved under ``out`` (None when there is none), read as tensors and plain
    data only: a file holding anything else (code to run) or a damaged one is a :class:`DataError`."""
    path = out / STATE
    if not path.is_file():
        return None
    try:
        with torch.serialization.safe_globals(_numpy_arrays()):
            state = torch.load(path, map_location=map_location, weights_only=True)
    except pickle.UnpicklingError as e:
        m = _GLOBAL.search(str(e))
        what = f" ({m.group(1)})" if m else ""
        raise DataError(f"refused {path}: it holds Python objects{what}, not only tensors and plain data, and "
                        "loading it could run code; resume only checkpoints biotok wrote") from None
    except (RuntimeError, EOFError, OSError, ValueError) as e:
        raise DataError(f"{path} is damaged ({_first_line(e)}); it cannot be resumed: restore it, or start "
                        "again without --resume (--force)") from None
    bad = [k for k, t in _REQUIRED.items() if not isinstance(state, dict) or not isinstance(state.get(k), t)]
    if bad:
        raise DataError(f"{path} is damaged (no valid {', '.join(bad)}); it cannot be resumed: restore it, or start "
                        "again without --resume (--force)")
    return state


def write_run_meta(out: Path, meta: dict) -> None:
    """biotok_pretrain.json: the run config, fingerprint and the step of the last checkpoint
    (temp then rename: a run killed while saving never leaves half a file)."""
    from biotok.output import atomic_file

    with atomic_file(out / RUN_META, force=True) as tmp:
        tmp.write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
