"""Issue 46, item 5: every Hub call has a deadline. A Hub endpoint that accepts the connection and
never answers costs ``BIOTOK_HUB_TIMEOUT`` seconds, then one line naming the endpoint and the
timeout, exit 2, the folder unchanged; a refused repository name names what the user typed."""

from __future__ import annotations

import socket
import threading

import pytest
from click.testing import CliRunner

from biotok.cli import main
from tests._contract import assert_contract, tree_digest


@pytest.fixture()
def silent_hub(monkeypatch):
    """http://127.0.0.1:PORT that accepts connections and never answers (closed after the test)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.settimeout(0.2)
    held, stop = [], threading.Event()

    def accept() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
                held.append(conn)  # read nothing, answer nothing
            except OSError:
                continue

    t = threading.Thread(target=accept, daemon=True)
    t.start()
    url = f"http://127.0.0.1:{server.getsockname()[1]}"
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.setenv("HF_TOKEN", "hf_not_a_real_token")
    monkeypatch.setenv("BIOTOK_HUB_TIMEOUT", "1")
    yield url
    stop.set()
    t.join(5)
    for c in held:
        c.close()
    server.close()


@pytest.fixture()
def folder(tmp_path):
    d = tmp_path / "tok"
    d.mkdir()
    (d / "tokenizer.json").write_text("{}", encoding="utf-8")
    (d / "README.md").write_text("# a card\n", encoding="utf-8")
    return d


def test_push_to_a_hub_that_never_answers_stops_at_its_deadline(silent_hub, folder):
    before = tree_digest(folder)
    r = CliRunner().invoke(main, ["push", str(folder), "me/tok"], prog_name="biotok")
    line = assert_contract(r, "biotok", silent_hub, "within 1 s", "BIOTOK_HUB_TIMEOUT")
    assert "me/tok" in line
    assert tree_digest(folder) == before


def test_hub_tokenizer_download_from_a_hub_that_never_answers(silent_hub, monkeypatch, tmp_path):
    from biotok.errors import TokenizerLoadError
    from biotok.formats import hub as fhub

    monkeypatch.setattr(fhub, "hub_reachable", lambda timeout=3.0: True)
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path / "cache"))
    alias = fhub.Alias("test-alias", "me/not-there", ("x",), "a test alias")
    with pytest.raises(TokenizerLoadError, match=r"did not answer within 1 s"):
        fhub._download(alias, None)


def test_push_refuses_a_bad_repository_naming_what_the_user_typed(folder):
    r = CliRunner().invoke(main, ["push", str(folder), "../../etc"], prog_name="biotok")
    line = assert_contract(r, "biotok", "REPO '../../etc'")
    assert "--push-to-hub" not in line
