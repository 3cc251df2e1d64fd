"""biotok.hub: a real push round-trip through huggingface_hub against a local Hub.

The server below answers, on 127.0.0.1 only, the three calls a push makes (create the repository,
ask how to upload each file, commit), keeps what it receives in memory, and stops by itself at the
end of the test (or after a minute at most). Nothing of huggingface_hub is mocked.
"""

from __future__ import annotations

import base64
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from click.testing import CliRunner

from biotok.cli import main
from biotok.hub import HubError, check_push, files_to_push, hub_card, push_folder


class LocalHub(ThreadingHTTPServer):
    """The Hub endpoints huggingface_hub calls for create_repo, preupload and commit."""

    daemon_threads = True

    def __init__(self, token: str = "hf_test") -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.token = token
        self.repos: dict[str, dict[str, bytes]] = {}  # repo -> path -> bytes (the last commit's view)
        self.requests: list[tuple[str, str]] = []
        self.private: dict[str, bool] = {}
        self.metadata: dict | None = None  # the last card's front matter, as validated

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Handler(BaseHTTPRequestHandler):
    server: LocalHub

    def log_message(self, *args) -> None:  # quiet
        pass

    def _reply(self, status: int, body: dict) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _body(self) -> bytes:
        data = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        return gzip.decompress(data) if self.headers.get("Content-Encoding") == "gzip" else data

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        self.server.requests.append(("POST", self.path))
        body = self._body()
        if self.headers.get("Authorization") != f"Bearer {self.server.token}":
            return self._reply(401, {"error": "Invalid credentials in Authorization header"})
        path = self.path.split("?")[0]
        if path == "/api/validate-yaml":  # the card's front matter, checked before the commit
            import yaml

            content = json.loads(body)["content"]
            try:
                meta = yaml.safe_load(content.split("---\n")[1]) if content.startswith("---\n") else {}
            except yaml.YAMLError as e:
                return self._reply(400, {"errors": [{"message": str(e)}]})
            self.server.metadata = meta
            return self._reply(200, {"errors": [], "warnings": []})
        if path == "/api/repos/create":
            req = json.loads(body)
            repo = f"{req['organization']}/{req['name']}" if req.get("organization") else req["name"]
            if repo in self.server.repos:
                return self._reply(409, {"error": "You already created this model repo", "url": f"{self.server.url}/{repo}"})
            self.server.repos[repo] = {}
            self.server.private[repo] = req.get("visibility") == "private" or bool(req.get("private"))
            return self._reply(200, {"url": f"{self.server.url}/{repo}", "name": repo})
        parts = path.split("/")  # /api/models/{owner}/{name}/{preupload|commit}/{revision}
        if len(parts) >= 7 and parts[:3] == ["", "api", "models"]:
            repo, verb = f"{parts[3]}/{parts[4]}", parts[5]
            if repo not in self.server.repos:
                return self._reply(404, {"error": "Repository not found"})
            if verb == "preupload":
                files = json.loads(body)["files"]
                return self._reply(200, {"files": [{"path": f["path"], "uploadMode": "regular", "shouldIgnore": False}
                                                   for f in files]})
            if verb == "commit":
                for line in body.decode().splitlines():
                    item = json.loads(line)
                    if item["key"] == "file":
                        v = item["value"]
                        assert v.get("encoding") == "base64"
                        self.server.repos[repo][v["path"]] = base64.b64decode(v["content"])
                oid = f"{len(self.server.requests):040x}"
                return self._reply(200, {"commitUrl": f"{self.server.url}/{repo}/commit/{oid}", "commitOid": oid})
        return self._reply(404, {"error": f"not served here: {path}"})

    def do_GET(self) -> None:  # noqa: N802
        self.server.requests.append(("GET", self.path))
        self._reply(404, {"error": "not served here"})


@pytest.fixture()
def hub(monkeypatch):
    server = LocalHub()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    stop = threading.Timer(60, server.shutdown)  # stops by itself, even if the test hangs
    stop.daemon = True
    stop.start()
    monkeypatch.setenv("HF_ENDPOINT", server.url)
    monkeypatch.setenv("HF_TOKEN", server.token)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("HF_HUB_DISABLE_XET", "1")
    try:
        yield server
    finally:
        stop.cancel()
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture()
def small_corpus(tmp_path, sample_lines):
    p = tmp_path / "small.txt"
    p.write_text("\n".join(sample_lines[:150]) + "\n", encoding="utf-8")
    return p


@pytest.fixture()
def tok(tmp_path, small_corpus, monkeypatch):
    """A tokenizer written by ``biotok train`` at a relative path, with a training-state folder beside."""
    monkeypatch.chdir(tmp_path)
    r = CliRunner().invoke(main, ["train", str(small_corpus), "--vocab-size", "300", "--out", "toks/t1", "-q",
                                  "--workers", "1"])
    assert r.exit_code == 0, r.output
    (tmp_path / "toks" / "t1" / "checkpoint").mkdir()
    (tmp_path / "toks" / "t1" / "checkpoint" / "state.pt").write_bytes(b"optimizer state")
    return tmp_path / "toks" / "t1"


def test_push_round_trip_through_a_local_hub(hub, tok):
    pushed = push_folder("toks/t1", "me/my-tok", private=True)
    assert pushed.url == f"{hub.url}/me/my-tok" and len(pushed.commit) == 40
    stored = hub.repos["me/my-tok"]
    assert sorted(stored) == sorted(pushed.files) == files_to_push(tok)
    assert "checkpoint/state.pt" not in stored and {"tokenizer.json", "biotok.json", "README.md"} <= set(stored)
    for name in stored:
        if name != "README.md":
            assert stored[name] == (tok / name).read_bytes()  # byte for byte
    card = stored["README.md"].decode()
    assert 'AutoTokenizer.from_pretrained("me/my-tok")' in card  # the snippet loads the repository
    assert 'from_pretrained("toks/t1")' in (tok / "README.md").read_text(encoding="utf-8")  # local card unchanged
    assert hub.private["me/my-tok"] and "tokenizer" in hub.metadata["tags"]
    # pushing again: the repository exists (409 taken as exist_ok), a second commit
    again = push_folder(tok, "me/my-tok")
    assert again.commit != pushed.commit and sorted(hub.repos["me/my-tok"]) == sorted(stored)


def test_push_command_and_train_push_to_hub(hub, tok, small_corpus):
    r = CliRunner().invoke(main, ["push", "toks/t1", "me/cli-tok"])
    assert r.exit_code == 0, r.output
    assert f"{hub.url}/me/cli-tok" in r.output and "me/cli-tok" in hub.repos
    r = CliRunner().invoke(main, ["train", str(small_corpus), "--vocab-size", "300", "--out", "toks/t2", "-q",
                                  "--workers", "1", "--push-to-hub", "me/t2"])
    assert r.exit_code == 0, r.output
    assert hub.repos["me/t2"]["tokenizer.json"] == (tok.parent / "t2" / "tokenizer.json").read_bytes()


def test_wrong_token_no_token_no_network_and_bad_names_are_one_line(hub, tok, monkeypatch):
    def run(*args):
        r = CliRunner().invoke(main, list(args))
        lines = r.output.strip().splitlines()
        assert r.exit_code == 2 and len(lines) == 1 and lines[0].startswith("biotok: error: "), r.output
        return lines[0]

    monkeypatch.setenv("HF_TOKEN", "hf_wrong")
    assert "refused the token" in run("push", "toks/t1", "me/x") and "me/x" not in hub.repos
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", str(tok.parent / "no-hf-home"))  # no saved token either
    before = len(hub.requests)
    assert "no Hugging Face token" in run("push", "toks/t1", "me/x")
    # refused before the tokenizer is trained: nothing written, nothing sent
    assert "no Hugging Face token" in run("train", "toks/t1/README.md", "--out", "toks/t3", "--push-to-hub", "me/t3")
    assert not (tok.parent / "t3").exists() and len(hub.requests) == before
    monkeypatch.setenv("HF_TOKEN", hub.token)
    assert "not a Hub repository name" in run("push", "toks/t1", "me/bad name!")
    assert "not a folder" in run("push", "toks/missing", "me/x")
    dead = hub.url
    hub.shutdown()
    hub.server_close()
    monkeypatch.setenv("HF_ENDPOINT", dead)
    monkeypatch.setenv("HF_HUB_ETAG_TIMEOUT", "2")
    line = run("push", "toks/t1", "me/x")
    assert "cannot reach the Hub" in line and "biotok push" in line


def test_files_to_push_leave_the_training_state_links_and_hidden_files(tmp_path):
    (tmp_path / "f").mkdir()
    for rel in ("config.json", "sub/a.bin", "checkpoint/state.pt", ".git/x", "sub/.hidden", ".tmp-next/y"):
        (tmp_path / "f" / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / "f" / rel).write_text("x")
    (tmp_path / "secret").mkdir()
    (tmp_path / "secret" / "key").write_text("k")
    (tmp_path / "f" / "linked").symlink_to(tmp_path / "secret")
    (tmp_path / "f" / "link.txt").symlink_to(tmp_path / "secret" / "key")
    assert files_to_push(tmp_path / "f") == ["config.json", "sub/a.bin"]


def test_hub_card_swaps_only_the_folder():
    text = '```python\nfill = pipeline("fill-mask", model="runs/x")\nother("runs/y", "runs/x/generator")\n```'
    out = hub_card(text, "runs/x", "me/x")
    assert 'model="me/x"' in out and '"runs/y"' in out and '"runs/x/generator"' in out


def test_check_push_refuses_before_work(monkeypatch, tmp_path):
    monkeypatch.setenv("HF_TOKEN", "t")
    assert check_push("me/x") == "t"
    monkeypatch.delenv("HF_TOKEN")
    monkeypatch.setenv("HF_HOME", str(tmp_path))
    with pytest.raises(HubError, match="hf auth login"):
        check_push("me/x")
