"""Throughput of each model backend (texts/s) on the bundled IMDB sample, one table.

Usage: python bench/backends.py [--texts 40] [--max-chars 4000] [--hf-model FOLDER] [--skip gguf,server,hf]

Backends, all on the same texts (the first --texts reviews of the bundled sample shorter than --max-chars, so
that every prompt fits Gemma's 2048-token context in both llama.cpp paths):
- gguf: the embedded Gemma 3 270M in-process (gguf:default), first-token logits, KV cache of the prompt head;
- server: the same model behind llama.cpp's OpenAI-compatible server on loopback (openai:gemma@URL,
  completions endpoint, first-token logprobs), started here with --n_threads matching the in-process run;
- hf: all-MiniLM-L6-v2 with a trained sentiment head (scripts/train_minilm.py; trained first unless
  --hf-model is given; training time is not counted).

Each backend gets a fresh instance (no outcome cache) and one warm-up text, which is not timed. The HF
classifier runs on CUDA when present; the llama.cpp paths here run on the CPU.
"""
from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "scripts"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def start_server(gguf: Path, threads: int) -> tuple[subprocess.Popen, str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(gguf), "--host", "127.0.0.1",
                             "--port", str(port), "--n_threads", str(threads), "--n_ctx", "2048"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 180
    while True:
        try:
            urllib.request.urlopen(url + "/models", timeout=2)
            return proc, url
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                proc.kill()
                raise SystemExit("llama.cpp's server did not start")
            time.sleep(0.5)


def measure(name: str, model, texts: list[str]) -> dict:
    model.predict(["A warm-up review, not timed."])
    start = time.perf_counter()
    outcomes = model.predict(texts)
    seconds = time.perf_counter() - start
    labels = [o.value for o in outcomes]
    return {"backend": name, "texts": len(texts), "seconds": seconds, "rate": len(texts) / seconds,
            "positive": labels.count("Positive"), "unparseable": labels.count(None)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--texts", type=int, default=40)
    ap.add_argument("--max-chars", type=int, default=4000)
    ap.add_argument("--hf-model", type=Path)
    ap.add_argument("--skip", default="")
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    args = ap.parse_args()
    skip = set(filter(None, args.skip.split(",")))

    from hinter.datasets import load_dataset
    from hinter.models import load_model
    texts = [r.text for r in load_dataset("imdb") if len(r.text) < args.max_chars][: args.texts]
    rows = []
    if "gguf" not in skip:
        from hinter.models.gguf import GGUFModel, default_gguf_path
        from hinter.models.tasks import get_task
        rows.append(measure("gguf:default (in-process)", GGUFModel(default_gguf_path(), get_task("imdb"),
                                                                    n_threads=args.threads), texts))
    if "server" not in skip:
        from hinter.models.gguf import default_gguf_path
        proc, url = start_server(default_gguf_path(), args.threads)
        try:
            rows.append(measure("openai:gemma@llama.cpp server", load_model(f"openai:gemma@{url}", "imdb"), texts))
        finally:
            proc.terminate()
            proc.wait(timeout=20)
    if "hf" not in skip:
        folder = args.hf_model
        with tempfile.TemporaryDirectory() as tmp:
            if folder is None:
                import train_minilm
                folder = train_minilm.train("imdb", Path(tmp) / "minilm-imdb")
            model = load_model(f"hf:{folder}", "imdb")
            rows.append(measure(f"hf:MiniLM-L6 ({model.device}, max {model.max_length} tokens)", model, texts))

    import platform
    print(f"\n{len(texts)} IMDB reviews (bundled sample, < {args.max_chars} characters, mean "
          f"{sum(map(len, texts)) / len(texts):.0f}); {os.cpu_count()} CPUs ({platform.processor() or platform.machine()}), "
          f"llama.cpp threads {args.threads}; load average {os.getloadavg()[0]:.1f} at the end\n")
    print(f"| {'backend':<45} | texts | seconds | texts/s | Positive | unparseable |")
    print(f"|{'-' * 47}|------:|--------:|--------:|---------:|------------:|")
    for r in rows:
        print(f"| {r['backend']:<45} | {r['texts']:>5} | {r['seconds']:>7.1f} | {r['rate']:>7.2f} | "
              f"{r['positive']:>8} | {r['unparseable']:>11} |")


if __name__ == "__main__":
    main()
