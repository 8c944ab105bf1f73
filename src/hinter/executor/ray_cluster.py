"""The Ray executor: validity parsing and model calls on the workers of a Ray cluster.

Each worker is a Ray actor holding one spaCy pipeline (with its validity caches) and one copy of the model,
both loaded once when the actor starts. The driver ships work in batches: a batch of texts' changed sentence
pairs to validate, a batch of texts to ask the model; each goes to the least busy worker and the results come
back in the order they were asked. The driver keeps everything else (mutation, oracle, the run store), so a
run resumes the same way as a local one, and its results equal the local executor's.

API models (openai:...) are I/O-bound: their global concurrency bound is split among the workers (the sum of
the workers' concurrent requests never exceeds it), and a worker parses while it waits for answers. Local
models (gguf, hf) run one batch at a time per worker, with the worker's CPUs (and GPUs: `gpus_per_worker`).

Driver and workers exchange the frozen dataclasses below (pickled by Ray): `WorkerReady` or `WorkerError` when a
worker starts, `ValidityResult` for a slice of validity work, `BatchResult` or `WorkerError` for a model batch.
"""
from __future__ import annotations

import logging
import os
import threading
from contextlib import nullcontext
from dataclasses import dataclass, replace
from typing import Iterable, Iterator, NoReturn, Sequence

try:
    import ray
except ImportError:  # pragma: no cover - the error names the extra to install
    from hinter.errors import InputError
    raise InputError("the Ray executor needs Ray", where="--executor ray",
                     fix="pip install 'hinter[ray]' (on the driver and on every node of the cluster).") from None

from hinter.errors import HinterError, InputError, ModelError
from hinter.models import ModelSpec, resolve_model
from hinter.models.base import BatchSpreadingModel, Outcome, predict_with_retries
from hinter.validity import SpacyParser, Validator
from hinter.validity.parsers import DEFAULT_SPACY_MODEL
from hinter.executor.base import Pairs, ValidityResult

IN_FLIGHT_PER_WORKER = 2  # a worker always has its next batch queued, so it never waits on the driver


@dataclass(frozen=True)
class WorkerError:
    """A HinterError raised on a worker (its keyword fields do not survive pickling, so it travels as this)."""

    kind: str  # the error's class name: "InputError", "ModelError"...
    problem: str
    where: str | None = None
    fix: str | None = None
    fatal: bool = False

    @classmethod
    def of(cls, e: HinterError) -> WorkerError:
        return cls(type(e).__name__, e.problem, e.where, e.fix, getattr(e, "fatal", False))

    def raise_(self) -> NoReturn:
        """Raise it on the driver: an InputError as one, anything else as a fatal ModelError."""
        if self.kind == "InputError":
            raise InputError(f"{self.problem} (on a Ray worker)", where=self.where, fix=self.fix)
        raise ModelError(f"{self.problem} (on a Ray worker)", where=self.where, fix=self.fix, fatal=True)


@dataclass(frozen=True)
class WorkerReady:
    """A worker that started: what it loaded, and where it runs."""

    parser_fingerprint: str
    model_fingerprint: str | None  # None: a worker without a model (API models need fewer than all workers)
    batch_size: int | None
    node_id: str
    gpu_ids: tuple = ()


@dataclass(frozen=True)
class BatchResult:
    """A model batch's outcomes, or the text of its last error when every try failed (see predict_with_retries)."""

    outcomes: list[Outcome] | None = None
    error: str | None = None

    @property
    def value(self) -> list[Outcome] | str:
        return self.error if self.outcomes is None else self.outcomes


@ray.remote(concurrency_groups={"parse": 1, "model": 1})
class HinterWorker:
    """One worker: a spaCy pipeline and (optionally) one model, loaded once. Parsing and model calls have a
    concurrency group each, so an API model's worker parses while it waits; a local model's worker takes a
    lock instead and does one thing at a time (its CPUs are already busy)."""

    def __init__(self, spacy_model: str, model, overlap: bool):
        # Before llama.cpp loads its OpenMP runtime: spinning idle threads of one worker slowed a second worker
        # on the same machine 5x (measured: two 1-thread Gemma workers on 2 cores, 21.5 s each vs 7.3 s passive).
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        self.error: WorkerError | None = None
        self._serial = nullcontext() if overlap else threading.Lock()
        try:
            self.validator = Validator(SpacyParser(spacy_model, n_process=1))
            self.model = None if model is None else resolve_model(model)
        except HinterError as e:  # reported by ready(), with its fix, instead of a dead actor
            self.error = WorkerError.of(e)

    def ready(self) -> WorkerReady | WorkerError:
        if self.error:
            return self.error
        model = self.model
        return WorkerReady(self.validator.parser.fingerprint, None if model is None else model.fingerprint,
                           getattr(model, "batch_size", None),  # a user's model object may leave it out
                           ray.get_runtime_context().get_node_id(), tuple(ray.get_gpu_ids()))

    @ray.method(concurrency_group="parse")
    def validate(self, pairs: Pairs) -> ValidityResult:
        v = self.validator
        with self._serial:
            tagged, parsed = v.sentences_tagged, v.sentences_parsed
            reasons = v.reasons(pairs)
        return ValidityResult([r is None for r in reasons], v.sentences_tagged - tagged, v.sentences_parsed - parsed,
                              reasons)

    @ray.method(concurrency_group="model")
    def predict(self, texts: list[str], retries: int, backoff_s: float) -> BatchResult | WorkerError:
        with self._serial:
            try:
                result = predict_with_retries(self.model, texts, retries, backoff_s)
            except ModelError as e:  # fatal: retrying cannot help
                return WorkerError.of(e)
        return BatchResult(error=result) if isinstance(result, str) else BatchResult(outcomes=result)


def _check_reachable(address: str, timeout_s: float = 5.0) -> None:
    import socket
    host, _, port = address.rpartition(":")
    try:
        socket.create_connection((host or "127.0.0.1", int(port)), timeout=timeout_s).close()
    except (OSError, ValueError) as e:
        raise InputError(f"no Ray cluster answers at {address} ({e})", where="--ray-address",
                         fix="Start it first (`ray start --head --port PORT` on its head node) and give HOST:PORT of "
                             "its head, or leave --ray-address out to start Ray on this machine.") from None


def _split(total: int, parts: int) -> list[int]:
    """`total` split into `parts` whole shares as even as can be (the first ones one larger)."""
    return [total // parts + (i < total % parts) for i in range(parts)]


class RayExecutor:
    """Validity parsing and model calls on a Ray cluster.

    `address`: a running cluster ("auto", "HOST:PORT", "ray://HOST:10001"); None starts one on this machine
    (or joins the one RAY_ADDRESS names). `workers`: how many actors (default: as many as the cluster's CPUs
    allow at `cpus_per_worker` each, and its GPUs at `gpus_per_worker`)."""

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, cpus_per_worker: float = 1.0,
                 gpus_per_worker: float = 0.0, spacy_model: str = DEFAULT_SPACY_MODEL, start_timeout_s: float = 600):
        if workers is not None and workers < 1:
            raise InputError(f"--workers must be at least 1, got {workers}", where="--workers")
        if cpus_per_worker <= 0 or gpus_per_worker < 0:
            raise InputError("--cpus-per-worker must be above 0 and --gpus-per-worker at least 0",
                             where="--cpus-per-worker / --gpus-per-worker")
        self.address, self.workers = address, workers
        self.cpus_per_worker, self.gpus_per_worker = cpus_per_worker, gpus_per_worker
        self.spacy_model, self.start_timeout_s = spacy_model, start_timeout_s
        self.actors: list = []
        self.model_actors: list = []
        self._connected = False
        self.nodes: list[str] = []

    # ------------------------------------------------------------------ start

    def _connect(self, env_vars: dict[str, str]) -> None:
        os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # no phoning home from an offline tool
        kwargs = dict(log_to_driver=False, logging_level=logging.WARNING, configure_logging=True,
                      runtime_env={"env_vars": env_vars} if env_vars else None)
        if ray.is_initialized():  # the caller's own connection: theirs to keep
            return
        address = self.address or os.environ.get("RAY_ADDRESS")
        if address and address not in ("auto", "local") and not address.startswith("ray://"):
            _check_reachable(address)  # ray.init would wait minutes on an address where nothing listens
        try:
            if address:
                ray.init(address=address, **kwargs)
            else:
                ray.init(include_dashboard=False, **kwargs)
            # ours to end: a driver left connected is killed by Ray when its cluster goes away later
            self._connected = True
        except (ConnectionError, RuntimeError, ValueError) as e:
            raise InputError(f"cannot connect to the Ray cluster at {address or 'a new local cluster'} ({e})",
                             where="--ray-address", fix="Start it first (`ray start --head` on its head node) and "
                             "give its address, e.g. --ray-address 10.0.0.5:6379, or leave the option out to start "
                             "Ray on this machine.") from None

    def _worker_count(self) -> int:
        resources = ray.cluster_resources()
        fit = int(resources.get("CPU", 1) // self.cpus_per_worker)
        if self.gpus_per_worker:
            fit = min(fit, int(resources.get("GPU", 0) // self.gpus_per_worker))
            if fit < 1:
                raise InputError(f"the Ray cluster has no room for a worker with {self.gpus_per_worker} GPU "
                                 f"(it has {resources.get('GPU', 0)} GPUs)", where="--gpus-per-worker",
                                 fix="Add GPU nodes, or leave --gpus-per-worker out to run on CPUs.")
        return self.workers or max(1, fit)

    def start(self, model, parser=None, spacy_model=None, characters=None):  # the workers are --workers or the cluster's
        self.spacy_model = spacy_model or self.spacy_model
        if parser is not None and getattr(parser, "fingerprint", "").split(":")[0] != "spacy":
            raise InputError("the Ray executor loads spaCy on every worker and cannot ship another parser",
                             where="parser", fix="Leave parser unset (the executor's spacy_model names the pipeline).")
        spec = ModelSpec(model) if isinstance(model, str) else model
        backend = spec.backend if isinstance(spec, ModelSpec) else None
        is_api = backend is not None and backend.is_api
        # the variables the backend reads its settings from (API keys), as its registry record names them
        env = {k: os.environ[k] for k in (backend.env if backend else ()) if k in os.environ}
        self._connect(env)
        n = self._worker_count()
        model_sources: list = [spec] * n
        if isinstance(spec, ModelSpec):
            if is_api:  # one global bound: the workers' shares add up to it, and every worker gets at least 1
                total = spec.concurrency or 4
                shares = _split(total, min(n, total))
                model_sources = [replace(spec, concurrency=c) for c in shares] + [None] * (n - len(shares))
            else:
                model_sources = [replace(spec, threads=max(1, int(self.cpus_per_worker)))] * n
        else:
            try:
                ref = ray.put(spec)
            except Exception as e:
                raise InputError(f"the model cannot be sent to Ray workers ({type(e).__name__}: {e})",
                                 where="model", fix="With the Ray executor, give the model as a spec string "
                                 "(gguf:..., hf:..., openai:..., python:module:function) so each worker loads it.") from None
            model_sources = [ref] * n
        options = dict(num_cpus=self.cpus_per_worker, num_gpus=self.gpus_per_worker)
        self.actors = [HinterWorker.options(**options).remote(self.spacy_model, src, is_api) for src in model_sources]
        try:
            infos = ray.get([a.ready.remote() for a in self.actors], timeout=self.start_timeout_s)
        except ray.exceptions.GetTimeoutError:
            self.close()
            raise InputError(f"{n} Ray workers did not all start within {self.start_timeout_s:.0f} s",
                             where="--workers", fix=f"The cluster may lack room for {n} workers of "
                             f"{self.cpus_per_worker} CPU and {self.gpus_per_worker} GPU each: lower --workers "
                             "or add nodes (`ray status` shows its resources).") from None
        except ray.exceptions.RayError as e:
            self.close()
            raise ModelError(f"a Ray worker failed to start ({e})", fix="Check that hinter (with the extras the "
                             "model needs) is installed on every node of the cluster.") from None
        for info in infos:
            if isinstance(info, WorkerError):
                self.close()
                info.raise_()
        self.nodes = [info.node_id for info in infos]
        self.parser_fingerprint = infos[0].parser_fingerprint
        self.model_actors = [a for a, src in zip(self.actors, model_sources) if src is not None]
        fingerprints = {info.model_fingerprint for info, src in zip(infos, model_sources) if src is not None}
        if len(fingerprints) != 1 or len({info.parser_fingerprint for info in infos}) != 1:
            self.close()
            raise ModelError("the Ray workers loaded different models or parsers "
                             f"({sorted(map(str, fingerprints))})", fix="Install the same hinter, spaCy pipeline "
                             "and model files on every node.")
        return RemoteModel(self, fingerprints.pop(), infos[0].batch_size or 16)

    # ------------------------------------------------------------------ dispatch

    def _get(self, ref):
        try:
            return ray.get(ref)
        except ray.exceptions.RayError as e:
            raise ModelError(f"a Ray worker was lost ({type(e).__name__}: {str(e).splitlines()[0]})",
                             fix="Check the cluster (`ray status`); finished batches are saved, and running the same "
                                 "command again continues the run.", fatal=True) from None

    def _ordered_map(self, actors: Sequence, method: str, items: Iterable[tuple[object, tuple]]) -> Iterator[tuple[object, object]]:
        """Call `method(*args)` for each (payload, args) item on the least busy actor, keeping at most
        IN_FLIGHT_PER_WORKER calls per actor; yield (payload, result) in the items' order. Items are
        read only when an actor has room, so a lazy producer is not run far ahead."""
        items = iter(items)
        load = [0] * len(actors)
        in_flight: dict = {}  # ref -> (position, actor index)
        payloads: dict[int, object] = {}
        done: dict[int, object] = {}
        submitted = emitted = 0
        exhausted = False

        def submit() -> None:
            nonlocal submitted, exhausted
            while not exhausted:
                i = min(range(len(actors)), key=load.__getitem__)
                if load[i] >= IN_FLIGHT_PER_WORKER:
                    return
                item = next(items, None)
                if item is None:
                    exhausted = True
                    return
                payload, args = item
                ref = getattr(actors[i], method).remote(*args)
                in_flight[ref] = (submitted, i)
                payloads[submitted] = payload
                load[i] += 1
                submitted += 1

        submit()
        while emitted < submitted:
            if emitted in done:
                yield payloads.pop(emitted), done.pop(emitted)
                emitted += 1
                continue
            ready, _ = ray.wait(list(in_flight), num_returns=1)
            for ref in ready:
                position, i = in_flight.pop(ref)
                load[i] -= 1
                done[position] = self._get(ref)
            submit()

    def validate(self, jobs: Iterable[tuple[object, Pairs]]) -> Iterator[tuple[object, ValidityResult]]:
        """Each job (a batch of texts' mutants) is cut into one contiguous slice per worker, so that even a
        single batch keeps every worker busy; a text's mutants stay together but at a slice's edge."""
        def slices():
            for payload, pairs in jobs:
                pairs = list(pairs)
                bounds = [0]
                for share in _split(len(pairs), min(len(self.actors), len(pairs))) if pairs else []:
                    bounds.append(bounds[-1] + share)
                parts = [pairs[a:b] for a, b in zip(bounds, bounds[1:])] or [[]]
                for i, part in enumerate(parts):
                    yield (payload, i == len(parts) - 1), (part,)

        valid: list[bool] = []
        reasons: list[str | None] = []
        tagged = parsed = 0
        for (payload, last), part in self._ordered_map(self.actors, "validate", slices()):
            valid += part.valid
            reasons += part.reasons
            tagged += part.sentences_tagged
            parsed += part.sentences_parsed
            if last:
                yield payload, ValidityResult(valid, tagged, parsed, reasons)
                valid, reasons, tagged, parsed = [], [], 0, 0

    def describe(self) -> str:
        if not self.actors:
            return f"Ray at {self.address or os.environ.get('RAY_ADDRESS') or 'a new local cluster'}, not started"
        return (f"Ray: {len(self.actors)} workers on {len(set(self.nodes))} node(s), the model on "
                f"{len(self.model_actors)} of them")

    def close(self) -> None:
        for a in self.actors:
            try:  # a graceful exit (ray.kill would leave SIGTERM stack dumps in the logs)
                a.__ray_terminate__.remote()
            except Exception:  # already gone with its node
                pass
        self.actors, self.model_actors = [], []
        if self._connected and ray.is_initialized():
            ray.shutdown()
            self._connected = False


class RemoteModel(BatchSpreadingModel):
    """The model as the driver sees it on Ray: its fingerprint, and batches run on the model workers."""

    def __init__(self, executor: RayExecutor, fingerprint: str, batch_size: int):
        self.executor, self.fingerprint, self.batch_size = executor, fingerprint, batch_size

    def predict_batches(self, batches: list[list[str]], retries: int, backoff_s: float) -> Iterator[list[Outcome] | str]:
        """Each batch's outcomes (or its last error, every try having failed), in order; retries run on the worker."""
        items = ((None, (batch, retries, backoff_s)) for batch in batches)
        for _, result in self.executor._ordered_map(self.executor.model_actors, "predict", items):
            if isinstance(result, WorkerError):
                result.raise_()
            yield result.value

    def predict(self, texts: Sequence[str]) -> list[Outcome]:
        result = next(self.predict_batches([list(texts)], 0, 0.0))
        if isinstance(result, str):
            raise ModelError(result)
        return result
