"""Models behind Anthropic's Messages API: `anthropic:MODEL[@BASE_URL]`.

Each text is one POST to {BASE_URL}/v1/messages (BASE_URL https://api.anthropic.com by default; a proxy or gateway
otherwise, its /v1 not doubled when the URL ends with it), with the headers `x-api-key` and `anthropic-version`, and
the body `model`, `max_tokens`, `temperature`, `system` (the task's system prompt) and `messages` (the task's chat
prompt: its examples as earlier user / assistant turns, then the text), as `openai-chat:` sends it. The answer is the
text of the response's `content` blocks, parsed by the task (`Task.read`): the API returns no log-probabilities,
so no label is decided by its first token's and `Outcome.scores` is None. A free-text task (tasks.GenerativeTask)
is asked at its temperature (the API takes 0 to 1) and max_tokens, its stop strings applied to the answer.

The API key comes only from the environment (HINTER_ANTHROPIC_API_KEY, else ANTHROPIC_API_KEY) and is never written
anywhere: the fingerprint names the endpoint, the model and the prompt only. With a base URL and no key, no
`x-api-key` is sent (a gateway may add its own).

Requests go as the OpenAI backend's do (openai_api.py), over plain HTTP (http_api.post_json, no SDK): at most
`concurrency` at a time, paced (pacing.py: a 429 halves them, `rpm` / `tpm` cap them per minute), each with a
timeout; timeouts, connection errors, 408, 429, 529 (overloaded) and other 5xx, and answers that are not the
Messages API's JSON are retried with exponential backoff (honouring Retry-After), then are a model error of that
text (asked again by the next run). A text the API refuses (400: too long for the context; 413) is unparseable,
the error as raw answer. 401 and 403 stop the run with a ModelError naming the key's variables; 404 and other
refusals stop it naming the model and the URL. One short request before the campaign (`preflight`) checks the
endpoint. Each response's `usage` (input_tokens, output_tokens) is counted in `usage` (hinter.usage) for --budget
and the run's cost (--price-in / --price-out or the price_in / price_out options); estimated, and marked so, where
a response has none. The options are the openai backend's (openai_api.OPTIONS); none changes results or the
fingerprint.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import time

from hinter.errors import InputError, ModelError
from hinter.models.base import AsksEachText, Outcome, stopping, wait_to_retry
from hinter.models.http_api import Refused, Transient, post_json
from hinter.models.openai_api import OPTIONS
from hinter.models.pacing import GIVE_UP, TIMEOUT_TRIES
from hinter.models.registry import Backend, register_backend
from hinter.models.tasks import Task

KEY_VARIABLES = ("HINTER_ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY")
DEFAULT_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"  # the `anthropic-version` header: the Messages API's current version
REFUSED_TEXT = frozenset({400, 413})  # this text is refused (e.g. longer than the context): unparseable
PREFLIGHT_TEXT = "A short test."
MAX_TEMPERATURE = 1.0
log = logging.getLogger("hinter.models")

KEY_FIX = (f"Set {KEY_VARIABLES[1]} (or {KEY_VARIABLES[0]}) in the environment to a key this API accepts "
           "(never on the command line).")


def api_key(base_url: str | None) -> str | None:
    """The key from the environment; None where a base URL is given (a gateway may hold the key itself)."""
    for name in KEY_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    if base_url:
        return None
    raise ModelError("no API key for Anthropic's API", where="--model", fix=KEY_FIX, fatal=True)


def messages_request(task, text: str) -> tuple[str, list[dict]]:
    """The task's chat prompt in the Messages API's shape: the system prompt apart (a top-level field there, not a
    message), then the user / assistant turns."""
    messages = task.chat_messages(text)
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    return system, [m for m in messages if m["role"] != "system"]


def answer_text(answer: dict) -> str:
    """The text of a Messages API response: its `content` blocks of type text, joined. ValueError (or KeyError,
    TypeError) for a body of another shape."""
    if not isinstance(answer, dict) or not isinstance(answer.get("content"), list):
        raise ValueError("no content list in the response")
    return "".join(block["text"] for block in answer["content"]
                   if isinstance(block, dict) and block.get("type") == "text")


def _message(body: str) -> str:
    """The error's message from an error body {"type": "error", "error": {"type": ..., "message": ...}}."""
    try:
        error = json.loads(body).get("error")
    except (ValueError, AttributeError):
        return body[:300]
    if isinstance(error, dict) and error.get("message"):
        return f"{error.get('type', 'error')}: {error['message']}"[:300]
    return body[:300]


class AnthropicModel(AsksEachText):
    def __init__(self, model: str, task: Task, base_url: str | None = None, concurrency: int = 4,
                 timeout: float = 60.0, retries: int = 5, max_answer_tokens: int | None = None, backoff: float = 0.5,
                 rpm: int | None = None, tpm: int | None = None, price_in: float | None = None,
                 price_out: float | None = None, give_up: int = GIVE_UP):
        if not model:
            raise InputError("no model name", where="--model", fix="Write anthropic:MODEL or anthropic:MODEL@BASE_URL.")
        if task.temperature > MAX_TEMPERATURE:
            raise InputError(f"the task {task.name!r} asks for temperature {task.temperature:g}; Anthropic's API "
                             f"takes 0 to {MAX_TEMPERATURE:g}", where="--task", fix="Lower the task's temperature.")
        self.model, self.task, self.base_url = model, task, base_url
        self._key = api_key(base_url)  # held here only: never in the fingerprint, a log line or an error
        root = base_url or DEFAULT_URL
        self.url = root + ("/messages" if root.endswith("/v1") else "/v1/messages")
        self.timeout, self.retries, self.backoff = timeout, retries, backoff
        self._pace_requests(task, concurrency, rpm, tpm, price_in, price_out, give_up)
        self.max_answer_tokens = max_answer_tokens or task.answer_tokens(64 if task.multi_label else 16)
        prompt = repr(messages_request(task, "\x00")) + task.generation_settings()
        prompt_hash = hashlib.sha256(prompt.encode()).hexdigest()[:12]
        self.fingerprint = f"anthropic-messages:{model}@{base_url or 'api.anthropic.com'}:{task.name}:{prompt_hash}"

    # --- one request, retried -------------------------------------------------------------------------------
    def _headers(self) -> dict:
        return {"anthropic-version": API_VERSION, **({"x-api-key": self._key} if self._key else {})}

    def _payload(self, text: str, max_tokens: int | None = None) -> dict:
        system, messages = messages_request(self.task, text)
        payload = {"model": self.model, "max_tokens": max_tokens or self.max_answer_tokens,
                   "temperature": self.task.temperature, "messages": messages}
        if system:
            payload["system"] = system
        return payload

    def _count(self, answer: object, text: str) -> int:
        """Add a response's tokens to `usage` (the API's count, prompt-cache reads and writes included; estimated,
        and marked so, where it gives none); returns the tokens counted."""
        u = answer.get("usage") if isinstance(answer, dict) else None
        u = u if isinstance(u, dict) else {}
        tin, tout = u.get("input_tokens"), u.get("output_tokens")
        if isinstance(tin, int):
            tin += sum(u.get(k) or 0 for k in ("cache_creation_input_tokens", "cache_read_input_tokens")
                       if isinstance(u.get(k), int))
            tout = tout if isinstance(tout, int) else 0
            self.usage.add(calls=1, tokens_in=tin, tokens_out=tout)
            return tin + tout
        tin, tout = self._text_cost.of(text)
        self.usage.add(calls=1, tokens_in=tin, tokens_out=tout, estimated_calls=1)
        return tin + tout

    def _refusal(self, e: Refused, where: str | None = None) -> ModelError:
        """The fatal error of a refusal that retrying cannot change (401, 403, 404, another 4xx)."""
        if e.status in (401, 403):
            return ModelError(f"the API at {self.url} refused the API key ({e.status}: {_message(e.body)})",
                              where=where, fix=KEY_FIX, fatal=True)
        if e.status == 404:
            return ModelError(f"the API at {self.url} has no model {self.model!r} or no messages endpoint "
                              f"({e.status}: {_message(e.body)})", where=where,
                              fix="Check the model name, and that the URL after @ in --model is the API's root "
                                  f"(e.g. {DEFAULT_URL}).", fatal=True)
        return ModelError(f"the API at {self.url} refused the request ({e.status}: {_message(e.body)})", where=where,
                          fix="Check the model name, the base URL and the API key variable.", fatal=True)

    def _request(self, text: str) -> Outcome:
        """One text's outcome, its request retried where that may help (a timeout once, other transient failures
        and malformed answers up to `retries` times); a ModelError when it still fails (fatal when retrying cannot
        help, or when GIVE_UP requests in a row failed: the API fails everything)."""
        payload = self._payload(text)
        timeouts = 0
        for attempt in range(self.retries + 1):
            if stopping():  # the batch was given up (Ctrl-C): nothing more is sent
                raise ModelError("not asked: the run is stopping")
            counter = self.pacer.acquire(sum(self._text_cost.of(text)))
            limited, retry_after = False, None
            try:
                body = post_json(self.url, payload, self._headers(), self.timeout)
            except Refused as e:
                self.usage.add(calls=1)  # refused: no token read or written
                if e.status in REFUSED_TEXT:
                    self.streak.answered()
                    return self.task.failed(f"{e.status}: {_message(e.body)}")
                raise self._refusal(e) from None
            except Transient as e:
                limited, retry_after, failure = e.status == 429, e.retry_after, e.what
                timeouts += e.what.startswith("no answer within")
            else:
                try:
                    answer = json.loads(body)
                    outcome = self.task.read(answer_text(answer))
                except (ValueError, TypeError, KeyError) as e:  # not JSON, or JSON of another shape
                    failure = f"a malformed answer ({type(e).__name__}: {str(e)[:120]})"
                else:
                    self.pacer.settle(counter, self._count(answer, text))
                    self.streak.answered()
                    return outcome
            finally:
                self.pacer.release(rate_limited=limited)
            if not limited and self.streak.failed():
                self.usage.add(calls=1)
                raise ModelError(f"the API at {self.url} failed {self.streak.limit} requests in a row with no answer "
                                 f"between them (last: {failure}): the run stops rather than ask every text in vain",
                                 fix="Check the service (status page, load); running the same command again "
                                     "continues the run, asking only what was not answered.", fatal=True)
            if attempt == self.retries or timeouts >= TIMEOUT_TRIES:
                self.usage.add(calls=1)
                tries = attempt + 1
                raise ModelError(f"the API at {self.url} failed {tries} time{'s' * (tries > 1)} on this text "
                                 f"({failure})", fix="Check that the API is reachable; lower the load or raise the "
                                 "timeout (?timeout=).")
            wait_to_retry(self, attempt, failure, retry_after, f"the API at {self.url}")
        raise AssertionError("unreachable")

    # --- before the campaign -------------------------------------------------------------------------------
    def preflight(self, connect_timeout: float = 10.0) -> None:
        """One short request (the task's prompt for a one-sentence text, one token answered): nothing listening, a
        host that cannot be found, or a refusal (a key, a model, a URL) stops the run now with a fatal ModelError;
        an API that answers, even with 429 / 529 / 5xx or too slowly, is left to the campaign's retries."""
        payload = self._payload(PREFLIGHT_TEXT, max_tokens=1)
        for attempt in range(2):
            try:
                body = post_json(self.url, payload, self._headers(), min(connect_timeout, self.timeout))
            except Refused as e:
                self.usage.add(calls=1)
                raise self._refusal(e, where="--model") from None
            except Transient as e:
                if e.connected:  # it answered (429, 529, 5xx), is slow or broke off: the campaign's retries will tell
                    log.warning("the API at %s answered a test request with %s; starting all the same", self.url,
                                e.what)
                    return
                if attempt == 0:  # a server still starting: one more try
                    time.sleep(1.0)
                    continue
                raise ModelError(f"cannot reach {self.url} ({e.what})", where="--model",
                                 fix="Check the network, or correct the URL after @ in --model (e.g. "
                                     "anthropic:MODEL@http://127.0.0.1:8080 for a gateway).", fatal=True) from None
            try:
                answer = json.loads(body)
            except ValueError:
                answer = None
            self._count(answer, PREFLIGHT_TEXT)  # a real request: counted with the run's usage
            return


def parse_spec(rest: str) -> tuple[str, str | None]:
    """MODEL[@BASE_URL] -> (model, base_url)."""
    model, sep, url = rest.partition("@")
    if sep and not url.startswith(("http://", "https://")):
        raise InputError(f"the base URL {url!r} is not an http(s) URL", where="--model",
                         fix=f"Write e.g. anthropic:MODEL@{DEFAULT_URL}, or the URL of your gateway.")
    return model.strip(), (url.rstrip("/") if sep else None)


def _load(rest: str, *, task=None, concurrency: int | None = None, timeout: float = 60.0, retries: int = 5,
          preflight: bool = True, rpm: int | None = None, tpm: int | None = None, price_in: float | None = None,
          price_out: float | None = None, give_up: int = GIVE_UP, **_) -> AnthropicModel:
    from hinter.models.tasks import get_task
    model, base_url = parse_spec(rest)
    loaded = AnthropicModel(model, get_task(task or "imdb"), base_url=base_url, timeout=timeout, retries=retries,
                            rpm=rpm, tpm=tpm, price_in=price_in, price_out=price_out, give_up=give_up,
                            **({"concurrency": concurrency} if concurrency else {}))
    if preflight:
        loaded.preflight()
    return loaded


ANTHROPIC = register_backend(Backend(
    prefix="anthropic", loader=_load, usage="anthropic:MODEL[@BASE_URL]",
    summary="Anthropic's Messages API, answers parsed (no log-probabilities)",
    example="anthropic:claude-haiku-4-5", is_api=True, env=KEY_VARIABLES, options=OPTIONS))
