"""Options that several commands take: where the work runs (run, resume), and how a run is judged (run, report,
check: the model-failure thresholds, the findings' alpha and label of interest)."""
from __future__ import annotations

from typing import Optional

import typer

from ..config import Execution

EXECUTOR_OPT = typer.Option("local", "--executor", help="Where parsing and model calls run: local (this machine: "
                            "spaCy on each core, the model in this process) or ray (the workers of a Ray cluster; "
                            "pip install 'hinter[ray]'). The results are the same.")
RAY_ADDRESS_OPT = typer.Option(None, "--ray-address", help="With --executor ray: the cluster to join (HOST:PORT of its "
                               "head, ray://HOST:10001, or auto). Default: RAY_ADDRESS, else Ray is started on this machine.")
WORKERS_OPT = typer.Option(None, "--workers", help="Worker processes: spaCy processes for local (default: one per "
                           "core, at most 4), Ray actors for ray (default: as many as the cluster's CPUs allow).")
CPUS_OPT = typer.Option(1.0, "--cpus-per-worker", help="With --executor ray: CPUs each worker reserves (and gives a "
                        "local model's threads).")
GPUS_OPT = typer.Option(0.0, "--gpus-per-worker", help="With --executor ray: GPUs each worker reserves, e.g. 1 for "
                        "one copy of an hf: or hf-causal: model per GPU (0.5: two workers share one).")
CONCURRENCY_OPT = typer.Option(None, "--concurrency", help="API models (openai:...): requests at once, in all (default "
                               "4). With Ray the bound is global: the workers share it.")


def execution(executor: str, ray_address: Optional[str], workers: Optional[int], cpus_per_worker: float,
              gpus_per_worker: float, concurrency: Optional[int]) -> Execution:
    return Execution(executor, ray_address, workers, cpus_per_worker, gpus_per_worker, concurrency)


MAX_FAILED_SHARE_OPT = typer.Option(0.05, "--max-failed-share", help="The model counts as failed (exit 3, and "
                                    "check/--fail-on refuse the run) when more than this share of its calls got a "
                                    "model error or an unparseable answer.")
MAX_FAILED_ORIGINALS_OPT = typer.Option(0, "--max-failed-originals", help="... or when more than this many "
                                        "originals got no usable answer (their mutants cannot be tested).")
ALPHA_OPT = typer.Option(None, "--alpha", help="False discovery rate of the findings (Benjamini-Hochberg over all "
                         "cells of the run): a finding is significant when its q-value is at most this. Default: "
                         "the run's (0.05).")
LABEL_OPT = typer.Option(None, "--label", help="The label of interest of the findings: an effect is the change of "
                         "its share (or of its score). Default: the task's first label (imdb: Positive).")
ALLOW_ERRORS_OPT = typer.Option(False, "--allow-model-errors", help="Gate a run whose model failed anyway "
                                "(its errors are never counted as bias or as no bias).")
