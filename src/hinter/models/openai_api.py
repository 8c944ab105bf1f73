"""Models behind an OpenAI-compatible API (OpenAI, vLLM, Ollama, llama.cpp's server, TGI...).

`openai:MODEL[@BASE_URL]` uses the completions endpoint with the task's plain few-shot prompt (base models,
as the embedded GGUF backend does); `openai-chat:MODEL[@BASE_URL]` sends the same prompt as chat messages.
The API key comes only from the environment (HINTER_OPENAI_API_KEY, else OPENAI_API_KEY) and is never written
anywhere: the fingerprint names the endpoint, the model and the prompt only.

Requests run concurrently (at most `concurrency` at a time), each with a timeout, at temperature 0; timeouts,
connection errors, 429 and 5xx are retried with exponential backoff (honouring Retry-After). A request the
server refuses (400, e.g. a text longer than its context) gives an unparseable outcome with the error as raw
answer, so one text cannot stop a campaign; other refusals (401, 404...) stop it with a ModelError.

Labels: where the server returns log-probabilities for the first answer token, a single-label task whose
labels start differently is decided as the GGUF backend decides it, the label whose first token is the most
likely; otherwise the answer text is parsed (`Task.parse_answer`). `Outcome.scores` are then those first-token
log-probabilities, for the labels found among the returned top ones (a label missing from them has no score);
None where the answer was parsed. `seen` is None: a server that cannot read a whole text refuses it (above).

Before the campaign (`preflight`, called when the model is loaded) one short request (the task's prompt for a
one-sentence text, a one-token answer) checks the server: nothing listening, a host that does not resolve or
accept connections, a refused key (401, 403), an unknown model or endpoint (404) or any other refusal (4xx) stop
at once with a ModelError naming the URL and the fix (exit code 2); a server that answers, even slowly, with 429 /
5xx or by dropping the connection, lets the campaign start (its requests are retried). Each retry is logged on the "hinter.models" logger (warning: what failed, the attempt,
the wait).

A generative task (tasks.GenerativeTask) sends its plain prompt (completions) or its system prompt and prompt as
chat messages, at its temperature and max_tokens, without log-probabilities (its stop strings cut the answer here); each call is a fresh
sample. The answer is the text written; an empty answer or a refused request is a model error, never an answer.

A body that is not JSON (a truncated answer), or JSON without an answer in it, is that text's failure alone: asked
again like a 5xx, then a model error of that text (asked again by the next run), never a failed batch. Ctrl-C while
requests hang stops at once (models.base.ask_each): no request or retry starts after it, and the texts answered
before it are kept.

Options (`openai:MODEL@URL?timeout=30&concurrency=8&retries=3`): timeout, seconds per request (60; a request that
times out is tried twice in all, so a text that never answers costs two timeouts); concurrency, requests at once,
in all (4; --concurrency wins over it); retries, after the first try (5); give_up, requests failed in a row with no
answer between them after which the run stops (20: a server answering 500 to everything); rpm and tpm, requests
and tokens per minute at most (no limit; a 429 also halves the requests at once, which grow back as requests
succeed: pacing.py); price_in and price_out, per million tokens, for the run's cost (--price-in / --price-out
win). None changes results or the fingerprint. Each response's `usage` (tokens read and written) is counted in
`usage` (hinter.usage), estimated and marked so where the server sends none.
"""
from __future__ import annotations

import hashlib
import logging
import os
import time

from hinter.errors import InputError, ModelError
from hinter.models.tasks import Task
from hinter.models.base import AsksEachText, Outcome, stopping, wait_to_retry
from hinter.models.pacing import GIVE_UP, TIMEOUT_TRIES
from hinter.models.registry import Backend, Option, register_backend

KEY_VARIABLES = ("HINTER_OPENAI_API_KEY", "OPENAI_API_KEY")
log = logging.getLogger("hinter.models")


def api_key(base_url: str | None) -> str:
    for name in KEY_VARIABLES:
        if os.environ.get(name):
            return os.environ[name]
    if base_url:  # self-hosted servers usually need no key, but the client insists on one
        return "no-key"
    raise ModelError("no API key for the OpenAI API",
                     fix=f"Set {KEY_VARIABLES[0]} or {KEY_VARIABLES[1]} in the environment (never on the command line).")


class OpenAIModel(AsksEachText):
    def __init__(self, model: str, task: Task, base_url: str | None = None, chat: bool = False,
                 concurrency: int = 4, timeout: float = 60.0, retries: int = 5, max_answer_tokens: int | None = None,
                 top_logprobs: int = 5, backoff: float = 0.5, rpm: int | None = None, tpm: int | None = None,
                 price_in: float | None = None, price_out: float | None = None, give_up: int = GIVE_UP):
        try:
            import openai
        except ImportError:
            raise ModelError("the OpenAI backend needs the openai package", fix="pip install 'hinter[openai]'.") from None
        if not model:
            raise InputError("no model name", where="--model", fix="Write openai:MODEL or openai:MODEL@BASE_URL.")
        self.openai = openai
        self.model, self.task, self.base_url, self.chat = model, task, base_url, chat
        # Our own retry loop (below) rather than the client's, so that what is retried and how is explicit.
        self.client = openai.OpenAI(api_key=api_key(base_url), base_url=base_url, timeout=timeout, max_retries=0)
        self.timeout = timeout
        self.url = base_url or "https://api.openai.com/v1"
        self.retries, self.backoff = retries, backoff
        self._pace_requests(task, concurrency, rpm, tpm, price_in, price_out, give_up)
        self.top_logprobs = top_logprobs
        self.max_answer_tokens = max_answer_tokens or task.answer_tokens(64 if task.multi_label else 16)
        # logprobs score the labels' first tokens (a free-text task has none); cleared when a server rejects them
        self._logprobs_ok = bool(task.labels)
        api = "chat" if chat else "completions"
        prompt = repr(task.chat_messages("\x00") if chat else task.completion_prompt("\x00"))
        prompt += task.generation_settings()  # a free-text task's temperature, max_tokens and stop change its answers
        prompt_hash = hashlib.sha256(prompt.encode()).hexdigest()[:12]
        self.fingerprint = f"openai-{api}:{model}@{base_url or 'api.openai.com'}:{task.name}:{prompt_hash}"
        self._firsts = [label.lower() for label in task.labels] if task.labels and not task.multi_label else None

    # --- one request, retried -------------------------------------------------------------------------------
    def _call(self, text: str):
        kwargs = dict(model=self.model, temperature=self.task.temperature,
                      max_tokens=self.max_answer_tokens)
        # a generative task's stop strings are applied to the answer (Task.answer), not sent: a server would stop at
        # one written before the answer begins ("\n\n" after "Letter:") and return nothing
        if self.chat:
            kwargs["messages"] = self.task.chat_messages(text)
            if self._logprobs_ok:
                kwargs.update(logprobs=True, top_logprobs=self.top_logprobs)
            return self.client.chat.completions.create(**kwargs)
        kwargs.update(prompt=self.task.completion_prompt(text))
        if self.task.line_stop:
            kwargs["stop"] = list(self.task.line_stop)
        if self._logprobs_ok:
            kwargs["logprobs"] = self.top_logprobs
        return self.client.completions.create(**kwargs)

    def _count(self, response, text: str) -> int | None:
        """Add a response's tokens to `usage` (the server's count; estimated, and marked so, where it gives none);
        returns the tokens counted."""
        u = getattr(response, "usage", None)
        tin, tout = getattr(u, "prompt_tokens", None), getattr(u, "completion_tokens", None)
        if isinstance(tin, int):
            self.usage.add(calls=1, tokens_in=tin, tokens_out=tout if isinstance(tout, int) else 0)
            return tin + (tout or 0)
        tin, tout = self._text_cost.of(text)
        self.usage.add(calls=1, tokens_in=tin, tokens_out=tout, estimated_calls=1)
        return tin + tout

    def _paced_call(self, text: str):
        """One request, when the pacer lets it go (a slot, the per-minute limits); its tokens counted."""
        counter = self.pacer.acquire(sum(self._text_cost.of(text)))
        limited = False
        try:
            response = self._call(text)
        except self.openai.RateLimitError:
            limited = True
            raise
        finally:
            self.pacer.release(rate_limited=limited)
        self.pacer.settle(counter, self._count(response, text))
        return response

    def _request(self, text: str) -> Outcome:
        """One text's outcome, its request retried where that may help (a timeout once, other transient failures
        and malformed answers up to `retries` times); a ModelError when it still fails (fatal when retrying cannot
        help, or when GIVE_UP requests in a row failed: the server fails everything)."""
        o = self.openai
        timeouts = 0
        for attempt in range(self.retries + 1):
            if stopping():  # the batch was given up (Ctrl-C): nothing more is sent
                raise ModelError("not asked: the run is stopping")
            try:
                response = self._paced_call(text)
            except o.BadRequestError as e:
                self.usage.add(calls=1)  # refused: no token read or written
                if self._logprobs_ok and "logprob" in str(e).lower():  # a server without logprobs: ask without
                    self._logprobs_ok = False
                    continue
                self.streak.answered()
                return self._outcome(e)
            except (o.APITimeoutError, o.APIConnectionError, o.RateLimitError, o.InternalServerError,
                    ValueError) as e:
                # ValueError: a body that is not JSON (a truncated answer) is this text's failure alone
                error, failure = e, _failure(e, self.timeout)
            except o.APIStatusError as e:  # 401, 403, 404...: retrying will not help
                raise ModelError(f"the API at {self.base_url or 'api.openai.com'} refused the request "
                                 f"({e.status_code}: {_message(e)})",
                                 fix="Check the model name, the base URL and the API key variable.",
                                 fatal=True) from None
            else:
                try:
                    outcome = self._outcome(response)
                except (ValueError, TypeError, AttributeError, IndexError, KeyError) as e:  # JSON of another shape
                    error, failure = None, f"a malformed answer ({type(e).__name__}: {str(e)[:120]})"
                else:
                    self.streak.answered()
                    return outcome
            timeouts += isinstance(error, o.APITimeoutError)
            if not isinstance(error, o.RateLimitError) and self.streak.failed():
                self.usage.add(calls=1)
                raise ModelError(f"the API at {self.url} failed {self.streak.limit} requests in a row with no answer "
                                 f"between them (last: {failure}): the run stops rather than ask every text in vain",
                                 fix="Check the server (its log, its load); running the same command again "
                                     "continues the run, asking only what was not answered.", fatal=True) from None
            if attempt == self.retries or timeouts >= TIMEOUT_TRIES:
                self.usage.add(calls=1)
                tries = attempt + 1
                raise ModelError(f"the API at {self.url} failed {tries} time{'s' * (tries > 1)} on this text "
                                 f"({failure})", fix="Check that the server runs and is reachable; lower the load or "
                                 "raise the timeout (?timeout=).") from None
            response = getattr(error, "response", None)
            wait_to_retry(self, attempt, failure, retry_after_s(response.headers) if response is not None else None,
                          f"the API at {self.url}")
        raise AssertionError("unreachable")

    # --- before the campaign -------------------------------------------------------------------------------
    def preflight(self, connect_timeout: float = 10.0) -> None:
        """One short request: a server that cannot be reached or refuses it stops the run now (a fatal ModelError
        naming the URL and the fix) rather than after every text's retries; one that answers, even with 429 or
        5xx, or too slowly, is left to the campaign's retries (a warning is logged)."""
        import httpx
        o = self.openai
        connect = min(connect_timeout, self.timeout)
        client = self.client.with_options(timeout=httpx.Timeout(self.timeout, connect=connect), max_retries=0)
        kwargs = dict(model=self.model, temperature=0, max_tokens=1)
        where, endpoint = "--model", "chat/completions" if self.chat else "completions"
        text = "A short test."  # in the task's prompt: the requests of the campaign will look the same
        for attempt in range(2):
            try:
                if self.chat:
                    response = client.chat.completions.create(messages=self.task.chat_messages(text), **kwargs)
                else:
                    response = client.completions.create(prompt=self.task.completion_prompt(text), **kwargs)
                self._count(response, text)  # a real request: counted with the run's usage
                return
            except o.APITimeoutError as e:
                if isinstance(e.__cause__, httpx.ConnectTimeout):
                    raise ModelError(f"{self.url} accepts no connection (none within {connect:g} s)",
                                     where=where, fix="Check the host and port after @ in --model, and that no "
                                     "firewall drops the connection.", fatal=True) from None
                log.warning("the API at %s did not answer a test request within %g s; starting all the same",
                            self.url, self.timeout)
                return
            except o.APIConnectionError as e:
                cause = e.__cause__
                if not isinstance(cause, httpx.ConnectError) and not _unresolved(cause):
                    # connected, but the answer broke off: a server is there, and the campaign's retries will tell
                    log.warning("the API at %s accepted a test request but sent no answer (%s); starting all the "
                                "same", self.url, cause or e)
                    return
                if attempt == 0 and not _unresolved(cause):  # a server still starting: one more try
                    time.sleep(1.0)
                    continue
                fix = ("Start the server, or correct the URL after @ in --model (e.g. "
                       "openai:MODEL@http://127.0.0.1:8765/v1).")
                if _unresolved(cause):
                    problem = f"the host of {self.url} cannot be found ({cause})"
                    fix = "Correct the host name in the URL after @ in --model, or check the network's DNS."
                elif isinstance(cause, httpx.ConnectError) and "refused" in str(cause).lower():
                    problem = f"nothing answers at {self.url} (connection refused)"
                else:
                    problem = f"cannot connect to {self.url} ({cause or e})"
                raise ModelError(problem, where=where, fix=fix, fatal=True) from None
            except (o.RateLimitError, o.InternalServerError) as e:
                log.warning("the API at %s answered a test request with %s; starting all the same", self.url,
                            _failure(e, self.timeout))
                return
            except o.APIStatusError as e:
                status = e.status_code
                if status == 408:
                    log.warning("the API at %s answered a test request with 408; starting all the same", self.url)
                    return
                if status in (401, 403):
                    problem = f"the API at {self.url} refused the API key ({status}: {_message(e)})"
                    fix = (f"Set {KEY_VARIABLES[0]} or {KEY_VARIABLES[1]} in the environment to a key this server "
                           "accepts (never on the command line).")
                elif status == 404:
                    problem = (f"the API at {self.url} has no model {self.model!r} or no {endpoint} endpoint "
                               f"({status}: {_message(e)})")
                    fix = (f"Check the model name (GET {self.url}/models lists what the server serves) and that "
                           "the URL is the API's root, usually ending in /v1"
                           + ("." if self.chat else "; a chat-only model needs openai-chat:."))
                else:
                    problem = f"the API at {self.url} refused a test request ({status}: {_message(e)})"
                    fix = "Check the model name, the base URL and the API key variable."
                raise ModelError(problem, where=where, fix=fix, fatal=True) from None

    # --- from a response to an outcome ------------------------------------------------------------------------
    def _first_token_choice(self, choice) -> tuple[str | None, str, tuple[tuple[str, float], ...] | None]:
        """The label whose first token is most likely, from the first position's top log-probabilities, a note for
        the raw answer, and the labels' scores (the best log-probability of a token beginning each label found)."""
        if self._firsts is None:
            return None, "", None
        top: dict[str, float] = {}
        lp = getattr(choice, "logprobs", None)
        if lp is None:
            return None, "", None
        if self.chat:
            content = getattr(lp, "content", None) or []
            if content:
                top = {t.token: t.logprob for t in (content[0].top_logprobs or [])}
        else:
            tops = getattr(lp, "top_logprobs", None) or []
            if tops and tops[0]:
                top = dict(tops[0])
        best: dict[int, float] = {}
        for token, logprob in top.items():
            piece = token.strip().lower()
            if not piece:
                continue
            starts = [i for i, label in enumerate(self._firsts) if label.startswith(piece)]
            if len(starts) == 1:  # a token that begins exactly one label
                best[starts[0]] = max(best.get(starts[0], float("-inf")), logprob)
        if not best:
            return None, "", None
        i = max(best, key=best.__getitem__)
        note = ", ".join(f"{self.task.labels[j]}={v:.3f}" for j, v in sorted(best.items()))
        scores = tuple((self.task.labels[j], float(v)) for j, v in sorted(best.items()))
        return self.task.labels[i], f"  (first-token logprobs: {note})", scores

    def _outcome(self, response) -> Outcome:
        if isinstance(response, Exception):
            return self.task.failed(_message(response))
        if not response.choices:
            return self.task.failed("no choice in the response")
        choice = response.choices[0]
        answer = (choice.message.content if self.chat else choice.text) or ""
        label, note, scores = self._first_token_choice(choice)  # a label's first token (none: free text)
        if label is not None:
            return Outcome(label, answer.strip() + note, scores=scores)
        return self.task.read(answer)


def retry_after_s(headers) -> float | None:
    """Seconds a 429 / 503 asks to wait: `retry-after-ms`, or `Retry-After` in seconds or as an HTTP date; None
    when absent or unreadable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    after = headers.get("retry-after")
    if not after:
        return None
    try:
        return max(0.0, float(after))
    except ValueError:
        from email.utils import parsedate_to_datetime
        try:
            when = parsedate_to_datetime(after)
        except (TypeError, ValueError):
            return None
        import datetime
        return max(0.0, (when - datetime.datetime.now(datetime.timezone.utc)).total_seconds())


def _message(e: Exception) -> str:
    body = getattr(e, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])[:300]
        if isinstance(inner, str):
            return inner[:300]
    return str(e)[:300]


def _failure(e: Exception, timeout: float) -> str:
    """What went wrong, for a log line: "503 (Service Unavailable)", "timeout after 60 s", "connection error (...)"."""
    import openai
    status = getattr(e, "status_code", None)
    if status is not None:
        return f"{status} ({_message(e)[:120]})"
    if isinstance(e, openai.APITimeoutError):
        return f"timeout after {timeout:g} s"
    if isinstance(e, ValueError):
        return f"a malformed answer ({type(e).__name__}: {str(e)[:120]})"
    return f"connection error ({e.__cause__ or e})"


def _unresolved(cause: BaseException | None) -> bool:
    """A host name that does not resolve (DNS): retrying at once will not help."""
    import socket
    while cause is not None:
        if isinstance(cause, socket.gaierror):
            return True
        text = str(cause).lower()
        if "name or service not known" in text or "nodename nor servname" in text or "getaddrinfo failed" in text \
                or "temporary failure in name resolution" in text or "no address associated" in text:
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def parse_spec(rest: str) -> tuple[str, str | None]:
    """MODEL[@BASE_URL] -> (model, base_url)."""
    model, sep, url = rest.partition("@")
    if sep and not url.startswith(("http://", "https://")):
        raise InputError(f"the base URL {url!r} is not an http(s) URL", where="--model",
                         fix="Write e.g. openai:MODEL@http://127.0.0.1:8080/v1.")
    return model.strip(), (url.rstrip("/") if sep else None)


def _loader(chat: bool):
    def load(rest: str, *, task=None, concurrency: int | None = None, timeout: float = 60.0, retries: int = 5,
             preflight: bool = True, rpm: int | None = None, tpm: int | None = None, price_in: float | None = None,
             price_out: float | None = None, give_up: int = GIVE_UP, **_) -> OpenAIModel:
        import openai  # noqa: F401  (missing: load_model names the extra to install)
        from hinter.models.tasks import get_task
        model, base_url = parse_spec(rest)
        loaded = OpenAIModel(model, get_task(task or "imdb"), base_url=base_url, chat=chat, timeout=timeout,
                             retries=retries, rpm=rpm, tpm=tpm, price_in=price_in, price_out=price_out, give_up=give_up,
                             **({"concurrency": concurrency} if concurrency else {}))
        if preflight:
            loaded.preflight()
        return loaded
    return load


OPTIONS = (
    Option("timeout", 60.0, f"seconds per request; a request that times out is tried {TIMEOUT_TRIES} times in all, "
           "then is a model error of its text (asked again by the next run)", kind=float, minimum=0.1),
    Option("concurrency", 4, "requests at once in all, --concurrency wins", minimum=1),
    Option("retries", 5, "retries of connection errors, malformed answers, 429 and 5xx", minimum=0),
    Option("give_up", GIVE_UP, "requests failed in a row (no answer between them) after which the run stops: a server "
           "that fails everything", minimum=1),
    Option("rpm", None, "requests per minute at most", minimum=1, auto="no limit"),
    Option("tpm", None, "tokens per minute at most (read and written; estimated before each request)", minimum=1,
           auto="no limit"),
    Option("price_in", None, "price of a million tokens read, for the run's cost (--price-in wins)", kind=float,
           minimum=0, auto="none"),
    Option("price_out", None, "price of a million tokens written (--price-out wins)", kind=float, minimum=0,
           auto="none"),
)

COMPLETIONS = register_backend(Backend(
    prefix="openai", loader=_loader(chat=False), usage="openai:MODEL[@BASE_URL]",
    summary="completions endpoint, plain prompt",
    example="openai:gemma@http://127.0.0.1:8765/v1", is_api=True, env=KEY_VARIABLES, extra="openai", options=OPTIONS))
CHAT = register_backend(Backend(
    prefix="openai-chat", loader=_loader(chat=True), usage="openai-chat:MODEL[@BASE_URL]",
    summary="chat endpoint",
    example="openai-chat:gpt-4o-mini", is_api=True, env=KEY_VARIABLES, extra="openai", options=OPTIONS))
