"""The Starlette application of `hinter serve`: the run's report page with the findings browser, triage and
"try a sentence" added, and the JSON API behind them.

Safe by default: every write (POST) needs the token made at start-up (header X-Hinter-Token; the page's script
sends the one in its URL), requests must name a loopback host when the server listens on one (a page of another
site reaching it through DNS rebinding is refused), the page's policy forbids any request but to this server,
dataset text reaches the page autoescaped or as textContent, and a bad request gets a 4xx JSON error
{"error", "fix"}: never a crash. The model and the parser are loaded once and used under one lock (llama.cpp and
spaCy are not thread-safe).
"""
from __future__ import annotations

import datetime as dt
import json
import logging
import secrets
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.middleware import Middleware
from starlette.middleware.trustedhost import TrustedHostMiddleware
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from hinter.analysis import triage
from hinter.audit.folder import is_audit
from hinter.config import RunConfig
from hinter.mutation.dictionary import load_dictionary
from hinter.errors import HinterError, InputError
from hinter.languages import get_language, parser_language
from hinter.analysis.measures import summary
from hinter.models import ModelSpec, resolve_model
from hinter.models.base import OutcomeCache
from hinter.models.callable import SOURCE_MARK
from hinter.mutation.mutants import generate
from hinter.pipeline.stages import Mutate, campaign_dictionary, campaign_texts
from hinter.pipeline.recorded_settings import config_of
from hinter.records import pair_key, text_key
from hinter.report.instances import load_instances
from hinter.store import RunStore, open_run
from hinter.validity import SpacyParser, Validator

MAX_TRY_CHARS = 5000       # a paragraph or two: a campaign's texts are tested with `hinter run`
MAX_BODY = 64 * 1024       # bytes of a request body
MAX_TRY_MUTANTS = 400      # mutants of one tried text (a text naming many people): ask for fewer attributes
DEFAULT_TRY_PAIRS = 3      # per attribute, when the run tested all pairs and the text has too many mutants for that
REMEMBERED_ANSWERS = 50_000  # answers kept across tries (per model)
TOKEN_HEADER = "x-hinter-token"
LOOPBACK = ("127.0.0.1", "localhost", "::1", "[::1]")
CSP = ("default-src 'none'; connect-src 'self'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
       "img-src data:; frame-ancestors 'none'; base-uri 'none'; form-action 'none'")


class ApiError(Exception):
    def __init__(self, status: int, error: str, fix: str | None = None):
        self.status, self.error, self.fix = status, error, fix


def _json_error(status: int, error: str, fix: str | None = None) -> JSONResponse:
    return JSONResponse({"error": error, **({"fix": fix} if fix else {})}, status_code=status)


def model_spec_of(settings: dict) -> tuple[str | None, str | None]:
    """(model spec, task) a run recorded: its config's, else a python: model's fingerprint (which is its spec)."""
    config = config_of(settings)
    if config is not None and config.model:
        return config.model, config.task
    fingerprint = settings.get("model") or ""  # python:NAME@source=HASH: the spec, then a hash of its code
    return (fingerprint.split(SOURCE_MARK)[0], None) if fingerprint.startswith("python:") else (None, None)


@dataclass
class ServedRun:
    """One run folder: its settings, and its page data computed once (the triage section is recomputed)."""

    index: int
    folder: Path
    settings: dict = field(default_factory=dict)
    _cache: tuple | None = None
    _ids: dict[str, int] | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def name(self) -> str:
        return self.folder.resolve().name

    def open(self):
        return open_run(self.folder)

    def data(self) -> tuple[dict, list, list[triage.Bias], dict[int, object]]:
        """(summary, instances, biases for triage, instances by mutant id): read once."""
        with self._lock:
            if self._cache is None:
                store = self.open()
                try:
                    s = summary(store)
                    instances = load_instances(store)
                    biases = [triage.Bias.of(m) for m in store.biased_mutants()]
                finally:
                    store.close()
                self._cache = (s, instances, biases, {i.mutant_id: i for i in instances})
            return self._cache

    def triage_section(self, verdicts: Sequence[triage.Verdict] | None = None) -> dict:
        _, _, biases, _ = self.data()
        return triage.section(biases, triage.load(self.folder) if verdicts is None else verdicts)

    @property
    def config(self):
        """The config the run was made with (recorded_settings.config_of), its model stage included."""
        return config_of(self.settings)

    def text_id_of(self, text: str) -> int:
        """The run's id of `text` (its pair samples are seeded by it), or the next id for a text the run lacks."""
        with self._lock:
            if self._ids is None:
                store = self.open()
                try:
                    self._ids = {text_key(t.text): t.text_id for t in store.texts()}
                finally:
                    store.close()
        return self._ids.get(text_key(text), len(self._ids))

    def attributes(self) -> list[str]:
        return list(self.settings.get("attributes") or [])


class Heavy:
    """The parser and the models, loaded once and used by one request at a time."""

    def __init__(self, model_override: str | None = None, parser=None):
        self.model_override = model_override
        self.lock = threading.Lock()
        # per language (RunConfig.language: a French run's texts are tried with the French parser and its
        # agreement check); a parser given is its own language's
        self._parsers = {parser_language(parser) or "en": parser} if parser is not None else {}
        self._validators: dict[str, Validator] = {}
        self._models: dict[tuple, object] = {}
        self._mutates: dict[tuple, object] = {}

    def parser(self, language: str = "en"):
        if language not in self._parsers:
            self._parsers[language] = SpacyParser(get_language(language).spacy_model, language=language)
        return self._parsers[language]

    def validator(self, language: str = "en"):
        if language not in self._validators:
            self._validators[language] = Validator(self.parser(language))
        return self._validators[language]

    def model(self, spec: str, task: str | None):
        """The model's answers through an OutcomeCache kept while the server runs (nothing stored): trying a text
        again, or with one more attribute, asks the model only about the new mutants."""
        key = (spec, task)
        if key not in self._models:
            self._models[key] = OutcomeCache(resolve_model(ModelSpec(spec, task)))
        cache = self._models[key]
        cache.forget(errors=True, keep=REMEMBERED_ANSWERS)  # a failed answer is asked again on the next try
        return cache

    def mutate(self, config, dictionary):
        """The mutation stage of a run's campaign, kept (its person filter's parser loads once)."""
        key = (config, id(dictionary))
        if key not in self._mutates:
            self._mutates[key] = Mutate(config, dictionary)
        return self._mutates[key]


def served_campaign(run: "ServedRun | None"):
    """(config, dictionary) of the campaign a text is tried against: the run's recorded config and its dictionary
    as the run used it (packs added, restricted, sampled), or the built-in dictionary's attributes without a run."""
    if run is None:
        config = RunConfig(attributes=tuple(load_dictionary(None).attributes))
    else:
        config = run.config
        if config.dictionary is not None and not Path(config.dictionary).exists():
            raise ApiError(409, f"the run's dictionary {config.dictionary} is not here",
                           "Serve the run on the machine that has its dictionary file.")
    return config, campaign_dictionary(config)


class Server:
    """What the routes share: the runs, the heavy parts, the token."""

    def __init__(self, runs: Sequence[Path], model: str | None = None, token: str | None = None, parser=None):
        folders = [Path(f) for f in runs]
        # audit folders (hinter audit's --out) are served as their page; the others are runs
        self.audits = [f for f in folders if is_audit(f)]
        self.runs = [ServedRun(i, f, RunStore.read_settings(f))
                     for i, f in enumerate(f for f in folders if not is_audit(f))]
        self.heavy = Heavy(model, parser)
        self.token = token or secrets.token_urlsafe(24)
        self._campaigns: dict[int, tuple] = {}
        self._write = threading.Lock()

    # ------------------------------------------------------------------ helpers
    def run_of(self, value) -> ServedRun:
        if not self.runs:
            raise ApiError(404, "no run is served", "Start hinter serve with a RUN_DIR.")
        return self.runs[served_index(value, len(self.runs), "run")]

    def audit_of(self, value) -> Path:
        if not self.audits:
            raise ApiError(404, "no audit is served", "Start hinter serve with an audit folder (hinter audit's --out).")
        return self.audits[served_index(value, len(self.audits), "audit")]

    def try_setup(self, run: ServedRun | None):
        """(config, dictionary, model spec, task) for trying a text against `run`'s campaign (or none)."""
        settings = run.settings if run is not None else {}
        spec, task = model_spec_of(settings)
        if self.heavy.model_override:
            spec = self.heavy.model_override
        if spec is None:
            raise ApiError(409, "this run's model cannot be loaded from its settings (not named by a spec)",
                           "Start hinter serve with --model SPEC, e.g. --model gguf:default.")
        config, d = self.campaign(run)
        return config, d, spec, task

    def campaign(self, run: ServedRun | None):
        """(config, dictionary) of `run`'s campaign, computed once (served_campaign)."""
        key = -1 if run is None else run.index
        if key not in self._campaigns:
            self._campaigns[key] = served_campaign(run)
        return self._campaigns[key]

    def warm(self, run_index: int | None = 0) -> str:
        """Load the parser and the model a first try would use (the CLI does it before listening)."""
        run = self.runs[run_index] if self.runs and run_index is not None else None
        with self.heavy.lock:
            config, _, spec, task = self.try_setup(run)
            self.heavy.validator(config.language)
            model = self.heavy.model(spec, task)
            try:  # one short answer: a local model's prompt head is then in its cache (the first try took 3x longer)
                model.predict(["The film was fine."])
            except Exception:  # noqa: BLE001  a failing model says so on the first try, with its error
                pass
        return spec

    def check_token(self, request: Request) -> None:
        given = request.headers.get(TOKEN_HEADER, "")
        if not given or not secrets.compare_digest(given.encode(), self.token.encode()):
            raise ApiError(403, "this request changes or computes something and needs the server's token",
                           f"Send the token hinter serve printed at start-up in the {TOKEN_HEADER} header (the page "
                           "opened from the printed URL does it).")

    async def body(self, request: Request) -> dict:
        length = request.headers.get("content-length")
        if length is not None and (not length.isdigit() or int(length) > MAX_BODY):
            raise ApiError(413, f"the request body is over {MAX_BODY // 1024} KiB")
        raw = b""
        async for chunk in request.stream():
            raw += chunk
            if len(raw) > MAX_BODY:
                raise ApiError(413, f"the request body is over {MAX_BODY // 1024} KiB")
        try:
            data = json.loads(raw)
        except (ValueError, RecursionError) as e:  # ValueError: bad JSON or bytes; RecursionError: nested too deep
            problem = "nested too deep" if isinstance(e, RecursionError) else str(e)
            raise ApiError(400, f"the body is not valid JSON ({problem})", 'Send one flat JSON object, e.g. '
                           '{"text": "...", "attributes": ["race", "gender"], "order": 2}.') from None
        if not isinstance(data, dict):
            raise ApiError(400, "the body must be a JSON object")
        return data

    # ------------------------------------------------------------------ routes
    async def page(self, request: Request) -> Response:
        from hinter.report.html import render
        run = self.run_of(request.query_params.get("run")) if self.runs else None

        def build() -> str:
            if run is None:
                s, instances = None, []
            else:
                s, instances, _, _ = run.data()
                s = {**s, "triage": run.triage_section()}
            # the attributes the run's campaign can change (packs included): what /api/try accepts
            attributes = sorted(self.campaign(run)[1].attributes)
            ctx = {"runs": [{"index": r.index, "name": r.name} for r in self.runs],
                   "audits": [{"index": i, "name": f.resolve().name} for i, f in enumerate(self.audits)],
                   "run": None if run is None else run.index, "attributes": attributes,
                   "order": (run.settings.get("order") if run is not None else 2) or 2, "max_chars": MAX_TRY_CHARS}
            if s is None:
                return render_empty(ctx)
            return render(s, instances, run.name, None, serve=ctx)
        html = await run_in_threadpool(build)
        return HTMLResponse(html)

    async def runs_api(self, request: Request) -> Response:
        return JSONResponse({"runs": [{"index": r.index, "name": r.name, "folder": str(r.folder),
                                       "model": r.settings.get("model"), "attributes": r.attributes(),
                                       "order": r.settings.get("order")} for r in self.runs],
                             "audits": [{"index": i, "name": f.resolve().name, "folder": str(f), "page": f"/audit?audit={i}"}
                                        for i, f in enumerate(self.audits)]})

    async def audit_page(self, request: Request) -> Response:
        """An audit's own page (audit.html: self-contained, autoescaped, no scripts), as `hinter audit` wrote it."""
        page = self.audit_of(request.query_params.get("audit")) / "audit.html"
        try:
            html = await run_in_threadpool(page.read_text, encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise ApiError(404, f"cannot read {page} ({e})"[:300],
                           "Write it again with the same `hinter audit` command (the answers are kept).") from None
        return HTMLResponse(html)

    async def instances_api(self, request: Request) -> Response:
        run = self.run_of(request.query_params.get("run"))
        q = request.query_params
        _, instances, _, _ = await run_in_threadpool(run.data)
        decided = triage.resolve(run.data()[2], triage.load(run.folder), dt.date.today())
        out = []
        for i in instances:
            groups = {f"{r.attribute}:{r.target_group}" for r in i.replacements}
            if q.get("attribute") and q["attribute"] not in i.attributes.split("+"):
                continue
            if q.get("group") and q["group"] not in groups:
                continue
            if q.get("combination") and q["combination"] != i.attributes:
                continue
            if q.get("hidden") in ("1", "0") and bool(i.hidden) != (q["hidden"] == "1"):
                continue
            v = decided.get((i.text_id, _pair_key(i)))
            out.append({"mutant_id": i.mutant_id, "text_id": i.text_id, "source_id": i.source_id,
                        "order": i.order, "attributes": i.attributes, "pair_key": _pair_key(i),
                        "finding": triage.cell_of(i.replacements), "hidden": i.hidden,
                        "replacements": [r.to_json() for r in i.replacements],
                        "versions": [{"label": x.label, "text": x.text, "valid": x.valid, "outcome": x.outcome,
                                      "bias": x.bias, **_free_version(x)}
                                     for x in [i.original, *i.components, i.mutant]],
                        "triage": None if v is None else v.to_json()})
        return JSONResponse({"total": len(out), "instances": out})

    async def triage_get(self, request: Request) -> Response:
        run = self.run_of(request.query_params.get("run"))
        return JSONResponse(await run_in_threadpool(self._triage_state, run))

    def _triage_state(self, run: ServedRun) -> dict:
        verdicts = triage.load(run.folder)
        _, instances, biases, _ = run.data()
        decided = triage.resolve(biases, verdicts, dt.date.today())
        by_key = {(i.text_id, _pair_key(i)): i.mutant_id for i in instances}
        return {"section": triage.section(biases, verdicts),
                "instances": {str(by_key[k]): {**v.to_json(), "scope": "instance" if v.instance else "finding"}
                              for k, v in decided.items() if k in by_key},
                "verdicts": [v.to_json() for v in verdicts]}

    async def triage_post(self, request: Request) -> Response:
        self.check_token(request)
        data = await self.body(request)
        run = self.run_of(data.get("run"))
        mutant_id, scope = data.get("mutant_id"), data.get("scope", "instance")
        if scope not in ("instance", "finding"):
            raise ApiError(400, f"unknown scope {scope!r}", "Use instance or finding.")
        _, _, _, by_id = await run_in_threadpool(run.data)
        if isinstance(mutant_id, bool) or not isinstance(mutant_id, int) or mutant_id not in by_id:
            raise ApiError(404, f"no bias with mutant_id {mutant_id!r} in this run",
                           "Give the mutant_id of a biased mutant (GET /api/instances).")
        inst = by_id[mutant_id]
        target = {"text_id": inst.text_id, "pair_key": _pair_key(inst)} if scope == "instance" else {
            "finding": triage.cell_of(inst.replacements)}
        shown = (f"text {inst.source_id}: " + "; ".join(r.describe() for r in inst.replacements)
                 if scope == "instance" else "every bias changing " + target["finding"])
        with self._write:  # read, change, write: one at a time
            verdicts = triage.load(run.folder)
            if data.get("verdict") is None:
                verdicts = triage.remove(verdicts, ("instance", (inst.text_id, _pair_key(inst))) if scope == "instance"
                                         else ("finding", target["finding"]))
            else:
                at = dt.datetime.now(dt.timezone.utc).replace(microsecond=0).isoformat()
                try:
                    v = triage.parse_verdict({**target, "verdict": data.get("verdict"), "reason": data.get("reason", ""),
                                              "expires": data.get("expires"), "at": at, "about": shown}, "request")
                except InputError as e:
                    raise ApiError(400, e.message) from None
                verdicts = triage.upsert(verdicts, v)
            triage.save(run.folder, verdicts)
        return JSONResponse(await run_in_threadpool(self._triage_state, run))

    async def try_api(self, request: Request) -> Response:
        self.check_token(request)
        data = await self.body(request)
        text = data.get("text")
        if not isinstance(text, str):
            raise ApiError(400, '"text" must be a string', 'Send {"text": "...", "attributes": [...], "order": 2}.')
        if not text.strip():
            raise ApiError(400, "the text is empty", "Type or paste a sentence that names people.")
        if len(text) > MAX_TRY_CHARS:
            raise ApiError(413, f"the text has {len(text):,} characters, over the limit of {MAX_TRY_CHARS:,}",
                           "Try a shorter passage here; test long texts with `hinter run`.")
        run = self.run_of(data.get("run")) if self.runs else None
        config, d, spec, task = self.try_setup(run)
        known = sorted(d.attributes)
        attributes = data.get("attributes", list(config.attributes))
        if not isinstance(attributes, list) or not attributes or not all(isinstance(a, str) for a in attributes):
            raise ApiError(400, '"attributes" must be a non-empty list of names', f"Choose among {', '.join(known)}.")
        unknown = [a for a in attributes if a not in known]
        if unknown:
            raise ApiError(400, f"unknown attribute {unknown[0]!r}", f"Choose among {', '.join(known)}.")
        order = data.get("order", min(config.order, len(set(attributes))))
        if isinstance(order, bool) or not isinstance(order, int) or not 1 <= order <= len(set(attributes)):
            raise ApiError(400, f'"order" must be a whole number from 1 to {len(set(attributes))} (the attributes '
                           f"chosen), got {order!r}",
                           f'Send an "order" from 1 (one attribute at a time) to {len(set(attributes))}, or choose '
                           'more "attributes".')
        pairs = data.get("max_pairs_per_text", config.max_pairs_per_text)
        if pairs is not None and (isinstance(pairs, bool) or not isinstance(pairs, int) or not 1 <= pairs <= 50):
            raise ApiError(400, f'"max_pairs_per_text" must be a whole number from 1 to 50, got {pairs!r}',
                           "Leave it out to sample as the run did.")
        # the run's campaign, on the attributes and order chosen (the same dictionary, sampling, person-only,
        # repair, window, repeats and validity mode)
        config = config.replace(attributes=tuple(attributes), order=order, max_pairs_per_text=pairs)

        def work() -> dict:
            from hinter.serve.try_text import try_text
            nonlocal config
            note = None
            # the run's id of the text as its campaign reads it (--validity reference formats it first)
            read = campaign_texts(config, [text])[0].text
            text_id = run.text_id_of(read) if run is not None else 0
            n = len(generate(text_id, read, d, config.attributes, config.order, config.max_pairs_per_text,
                             config.seed).mutants)
            if n > MAX_TRY_MUTANTS and "max_pairs_per_text" not in data and config.max_pairs_per_text is None:
                note = (f"the run tested every pair present; this text gives {n} mutants, over the limit of "
                        f"{MAX_TRY_MUTANTS}: a seeded sample of {DEFAULT_TRY_PAIRS} pairs per attribute is tried")
                config = config.replace(max_pairs_per_text=DEFAULT_TRY_PAIRS)
                n = len(generate(text_id, read, d, config.attributes, config.order, DEFAULT_TRY_PAIRS,
                                 config.seed).mutants)
            if n > MAX_TRY_MUTANTS:
                raise ApiError(413, f"the text gives {n} mutants, over the limit of {MAX_TRY_MUTANTS}",
                               "Choose fewer attributes or a lower order, or a shorter text.")
            with self.heavy.lock:
                result = try_text(text, config, d, self.heavy.model(spec, task), self.heavy.validator(config.language),
                                  text_id=text_id, mutate=self.heavy.mutate(config, d))
            return {**result, "model": spec, "max_pairs_per_text": config.max_pairs_per_text,
                    **({"note": note} if note else {})}
        return JSONResponse(await run_in_threadpool(work))

    async def explain_api(self, request: Request) -> Response:
        q = request.query_params
        run = self.run_of(q.get("run"))
        try:
            mutant_id, component = int(q.get("mutant_id", "")), q.get("component")
            component = None if component in (None, "") else int(component)
        except ValueError:
            raise ApiError(400, "mutant_id and component must be numbers") from None
        _, _, _, by_id = await run_in_threadpool(run.data)
        inst = by_id.get(mutant_id)
        if inst is None or (component is not None and not 0 <= component < len(inst.components)):
            raise ApiError(404, f"no bias with mutant_id {mutant_id} (and component {component}) in this run")

        def work() -> dict:
            from hinter.serve.explain import explain
            reps = inst.replacements if component is None else (inst.replacements[component],)
            store = run.open()
            try:
                row = store.component(inst.text_id, pair_key(r.pair_id for r in reps))
            finally:
                store.close()
            mutant = inst.mutant.text if component is None else inst.components[component].text
            with self.heavy.lock:
                out = explain(inst.original.text, mutant, self.heavy.parser(run.config.language))
            return {**out, "valid": None if row is None else row.valid,
                    "discard_reason": getattr(row, "discard_reason", None)}
        return JSONResponse(await run_in_threadpool(work))


def _free_version(version) -> dict:
    """A generative run's version: every answer, and its aspects as stored (try_text.aspects_json); {} otherwise."""
    if version.answers is None:
        return {}
    from hinter.serve.try_text import aspects_json
    return {"answers": list(version.answers), "aspects": aspects_json(version.aspects)}


def served_index(value, n: int, what: str) -> int:
    """The index of a served run or audit from a query's digits or a JSON integer (none: the first). int() of a
    JSON 1e400 (infinity) raised OverflowError (a 500), and of 1.5 gave run 1."""
    if value in (None, ""):
        i = 0
    elif type(value) is int:
        i = value
    elif isinstance(value, str) and value.isascii() and value.isdigit():
        i = int(value)
    else:
        raise ApiError(400, f"{what} must be a whole number (the {what}'s index, from 0), got {value!r}"[:300],
                       f"Use GET /api/runs for the {what}s served and their numbers.")
    if not 0 <= i < n:
        raise ApiError(404, f"no {what} {i}: {n} served", "Use GET /api/runs.")
    return i


def _pair_key(inst) -> str:
    return pair_key(r.pair_id for r in inst.replacements)


def render_empty(ctx: dict) -> str:
    """The page without a run: try a sentence only."""
    from hinter.report.html import render_serve
    return render_serve(ctx)


def create_app(runs: Sequence[Path], model: str | None = None, *, host: str = "127.0.0.1", token: str | None = None,
               parser=None) -> Starlette:
    """The application over the run folders `runs` (each must hold a run.sqlite: InputError otherwise)."""
    server = Server(runs, model, token, parser)

    def guard(handler):
        async def wrapped(request: Request) -> Response:
            try:
                response = await handler(request)
            except ApiError as e:
                response = _json_error(e.status, e.error, e.fix)
            except HinterError as e:
                response = _json_error(400 if isinstance(e, InputError) else 502, e.message)
            except Exception as e:  # never a crash: the request fails, the server goes on
                logging.getLogger("hinter.serve").exception("request failed")
                response = _json_error(500, f"internal error: {type(e).__name__}: {e}"[:500])
            response.headers["Content-Security-Policy"] = CSP
            response.headers["X-Content-Type-Options"] = "nosniff"
            response.headers["Referrer-Policy"] = "no-referrer"  # the page's URL holds the token
            response.headers["Cache-Control"] = "no-store"
            return response
        return wrapped

    routes = [Route("/", guard(server.page)), Route("/api/runs", guard(server.runs_api)),
              Route("/audit", guard(server.audit_page)),
              Route("/api/instances", guard(server.instances_api)),
              Route("/api/triage", guard(server.triage_get), methods=["GET"]),
              Route("/api/triage", guard(server.triage_post), methods=["POST"]),
              Route("/api/try", guard(server.try_api), methods=["POST"]),
              Route("/api/explain", guard(server.explain_api))]
    loopback = host in LOOPBACK
    middleware = [Middleware(TrustedHostMiddleware, allowed_hosts=["127.0.0.1", "localhost", "::1", "[::1]"]
                             if loopback else ["*"])]
    app = Starlette(routes=routes, middleware=middleware)
    app.state.server = server
    return app
