"""The Hub's address and a deadline for every call biotok makes to it (huggingface_hub's shared
client has none: an endpoint that accepts the connection and never answers would hold a push or a
download forever). Torch-free; huggingface_hub imported only when a call is made."""

from __future__ import annotations

import os

from biotok.errors import ConfigError

TIMEOUT_ENV = "BIOTOK_HUB_TIMEOUT"  # seconds a Hub call may wait for each connect, send or answer
DEFAULT_TIMEOUT = 30.0
_TIMEOUTS = {"TimeoutException", "ConnectTimeout", "ReadTimeout", "WriteTimeout", "PoolTimeout", "TimeoutError",
             "Timeout"}


def endpoint() -> str:
    """The Hub's address: $HF_ENDPOINT (a mirror, a private Hub), else huggingface.co."""
    return (os.environ.get("HF_ENDPOINT") or "https://huggingface.co").rstrip("/")


def hub_timeout() -> float:
    """The deadline of every Hub call biotok makes, in seconds: $BIOTOK_HUB_TIMEOUT, else 30 (each
    connection, send and wait for an answer; a large upload that keeps sending is not cut)."""
    raw = os.environ.get(TIMEOUT_ENV)
    if raw is None or not raw.strip():
        return DEFAULT_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value < 1e6:
        raise ConfigError(f"{TIMEOUT_ENV}={raw!r}: give the seconds a Hub call may wait, a number above 0")
    return value


def with_deadline() -> float:
    """huggingface_hub's shared HTTP client with :func:`hub_timeout` as its timeout (its default
    client waits forever for an endpoint that accepts and never answers); a client factory the user
    set is left alone. Returns the timeout."""
    import huggingface_hub  # lazy: the Hub's client only when the Hub is used
    from huggingface_hub.utils import _http  # lazy: as above (its client factory, to give it a timeout)

    timeout = hub_timeout()
    current = getattr(_http, "_GLOBAL_CLIENT_FACTORY", None)
    mine = getattr(current, "biotok_timeout", None)
    if mine == timeout or (mine is None and current is not getattr(_http, "default_client_factory", None)):
        return timeout

    def factory():
        client = _http.default_client_factory()
        client.timeout = timeout
        return client

    factory.biotok_timeout = timeout  # type: ignore[attr-defined]
    huggingface_hub.set_client_factory(factory)
    return timeout


def within(seconds: float, fn, *args, **kwargs):
    """``fn(*args, **kwargs)``, or TimeoutError once ``seconds`` have passed without its answer (a
    Hub read that huggingface_hub retries five times, each waiting its timeout, is cut at the
    first deadline; the call is left to end in a daemon thread)."""
    import threading  # lazy: one use

    box: dict = {}

    def call() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller
            box["error"] = e

    t = threading.Thread(target=call, name="biotok-hub-call", daemon=True)
    t.start()
    t.join(seconds)
    if t.is_alive():
        raise TimeoutError(f"no answer within {seconds:g} s")
    if "error" in box:
        raise box["error"]
    return box.get("value")


def timed_out(e: BaseException) -> bool:
    """Whether ``e`` (or what it wraps) is a Hub call that ran past its deadline."""
    seen = set()
    while e is not None and id(e) not in seen:
        seen.add(id(e))
        if {c.__name__ for c in type(e).__mro__} & _TIMEOUTS:
            return True
        e = e.__cause__ or e.__context__
    return False


__all__ = ["DEFAULT_TIMEOUT", "TIMEOUT_ENV", "endpoint", "hub_timeout", "timed_out", "with_deadline", "within"]
