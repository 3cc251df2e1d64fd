"""Publish an output folder (a tokenizer, a pretraining run, a fine-tuned model, a transfer) to the
Hugging Face Hub, as ``Trainer.push_to_hub`` and ``hf upload`` do: ``HfApi.create_repo`` then
one commit of the folder's files (what ``upload_folder`` sends). Torch-free.

What goes up: every file but the training state (``checkpoint/``, what ``--resume`` continues) and
temporary or hidden entries. The model card goes up rewritten for the Hub: its usage snippet
loads the repository instead of the local folder. Every failure (no token, no network, a refused
token, a bad repository name) is one line (:class:`HubError`), never a traceback.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path

from biotok.card import CARD
from biotok.errors import BiotokError, ConfigError
from biotok.hubclient import DEFAULT_TIMEOUT, TIMEOUT_ENV, endpoint, hub_timeout, timed_out, with_deadline, within

#: folder entries that never go up: the training state, hidden and temporary files
EXCLUDED = ("checkpoint/", ".")
TOKEN_HINT = "log in with `hf auth login` or set HF_TOKEN"


class HubError(BiotokError):
    """The Hub (or the network to it) refused or failed a push: one line saying what to do."""


@dataclass(frozen=True)
class Pushed:
    """Where a folder went: the repository, its URL, the commit and the files sent."""

    repo_id: str
    url: str
    commit: str
    files: tuple[str, ...]


def check_push(repo_id: str, token: str | None = None, given_as: str = "--push-to-hub") -> str:
    """Before any work: ``repo_id`` is a valid repository name and a token is available (returned);
    the network is only used by :func:`push_folder`. ``given_as``: how the user gave it (the
    option, or REPO of ``biotok push``), named in the error line."""
    # lazy: huggingface_hub's client (httpx, 100+ ms) only when a push is asked for
    from huggingface_hub import get_token
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    try:
        validate_repo_id(repo_id)
    except HFValidationError as e:
        raise ConfigError(f"{given_as} {repo_id!r} is not a Hub repository name (owner/name): "
                          f"{str(e).splitlines()[0]}") from None
    token = token or get_token()
    if not token:
        raise HubError(f"no Hugging Face token to push to {repo_id}: {TOKEN_HINT}")
    return token


def files_to_push(folder: str | os.PathLike[str]) -> list[str]:
    """The folder's files that go up, as POSIX paths relative to it, sorted (no links followed)."""
    root = Path(folder)
    out = []
    for here, dirs, files in os.walk(root, followlinks=False):  # a linked folder is not entered
        base = Path(here)
        dirs[:] = [d for d in dirs if not d.startswith(".") and not (base / d).is_symlink()]
        for name in files:
            path = base / name
            rel = path.relative_to(root).as_posix()
            if (path.is_symlink() or not path.is_file() or rel.startswith(EXCLUDED[0])
                    or any(part.startswith(".") for part in rel.split("/"))):
                continue
            out.append(rel)
    return sorted(out)


def hub_card(text: str, folder: str | os.PathLike[str], repo_id: str) -> str:
    """The model card for the Hub: every Python string in its code blocks that names ``folder``
    (as the card wrote it: the path given when it was made) now names ``repo_id``."""
    target = Path(folder).resolve()

    def swap(m: re.Match) -> str:
        try:
            value = json.loads(m.group())
        except ValueError:
            return m.group()
        try:
            same = isinstance(value, str) and value and Path(value).resolve() == target
        except (OSError, ValueError):
            same = False
        return json.dumps(repo_id) if same else m.group()

    return re.sub(r'"(?:[^"\\\n]|\\.)*"', swap, text)


def push_folder(folder: str | os.PathLike[str], repo_id: str, *, private: bool | None = None,
                token: str | None = None, message: str | None = None, given_as: str = "--push-to-hub") -> Pushed:
    """Create ``repo_id`` on the Hub if needed (a model repository; ``private`` for a new one) and
    commit the folder's files (:func:`files_to_push`) in one commit, its card rewritten for the Hub.
    Every call has a deadline (:func:`hub_timeout`); the folder is only read."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(f"cannot push {folder}: not a folder")
    token = check_push(repo_id, token, given_as)
    timeout = with_deadline()
    names = files_to_push(folder)
    if not names:
        raise ConfigError(f"cannot push {folder}: it holds no file")
    from huggingface_hub import CommitOperationAdd, HfApi  # lazy: only when pushing

    api = HfApi(endpoint=endpoint(), token=token)
    ops = []
    for name in names:
        if name == CARD:
            text = (folder / name).read_text(encoding="utf-8", errors="replace")
            ops.append(CommitOperationAdd(name, hub_card(text, folder, repo_id).encode("utf-8")))
        else:
            ops.append(CommitOperationAdd(name, str(folder / name)))
    try:
        url = api.create_repo(repo_id, private=private, exist_ok=True)
        info = api.create_commit(repo_id, ops, commit_message=message or f"Upload {folder.name} with biotok")
    except Exception as e:  # noqa: BLE001 - every Hub or network failure becomes one line
        raise HubError(_why(e, repo_id, timeout)) from None
    return Pushed(repo_id, str(url), str(getattr(info, "oid", "") or ""), tuple(names))


def _why(e: Exception, repo_id: str, timeout: float = DEFAULT_TIMEOUT) -> str:
    """One line for a failed push: no answer in time, no network, a refused token, or the Hub's own message."""
    status = getattr(getattr(e, "response", None), "status_code", None)
    where = endpoint()
    if status is None and timed_out(e):
        return (f"the Hub at {where} did not answer within {timeout:g} s ({type(e).__name__}) while pushing {repo_id}; "
                f"the folder is unchanged: retry later, or give it longer with {TIMEOUT_ENV}=SECONDS")
    if status in (401, 403):
        return f"the Hub at {where} refused the token for {repo_id} (HTTP {status}): {TOKEN_HINT} with write access"
    if status is not None:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        return f"pushing to {repo_id} on {where} failed (HTTP {status}): {first}"
    names = {c.__name__ for c in type(e).__mro__}
    if names & {"ConnectError", "ConnectionError", "ConnectTimeout", "TimeoutException", "NetworkError",
                "OfflineModeIsEnabled", "OSError"}:
        return (f"cannot reach the Hub at {where} to push {repo_id} ({type(e).__name__}): no network? "
                "the folder is complete: push it later with `biotok push FOLDER REPO`")
    first = (str(e).strip().splitlines() or [""])[0]
    return f"pushing to {repo_id} on {where} failed: {type(e).__name__}: {first}"


__all__ = ["DEFAULT_TIMEOUT", "EXCLUDED", "HubError", "Pushed", "TIMEOUT_ENV", "check_push", "endpoint",
           "files_to_push", "hub_card", "hub_timeout", "push_folder", "timed_out", "with_deadline", "within"]
