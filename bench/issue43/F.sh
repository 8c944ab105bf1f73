#!/bin/bash
# issue 43 item 3 (the model stage), one device call (about 4 minutes on an H200; BUDGET=480: about 8.5, more pairs alternated): the
# model stage of `run --suite` of this round's tree (new/) and the code before it (base/, b09922c), alternated,
# against the reference pass, on the IMDB suite (race x gender) and the race x gender x body campaign, with
# all-MiniLM-L6-v2's shape (random weights: the real model's forward work; bench/issue43/mkshape.py). Run from a
# folder .gpu/gs holding new/ and base/ (each a tree's src and bench), shape/ (all-MiniLM-L6-v2's config and
# tokenizer), the two suites, gpu_best_pass.py (the shared reference tool) and site.tar.gz (catalogue,
# pyahocorasick, typer, rich and theirs, for a run without spaCy).
cd "$(dirname "$0")"
T0=$SECONDS
mkdir -p /tmp/site && tar xzf site.tar.gz -C /tmp/site || exit 1
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1 PYTHONPATH=/tmp/site  # each tree's driver.py puts its own src first
python3 new/bench/issue43/mkshape.py shape /tmp/shape 2>&1 | tail -1
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
python3 new/bench/issue43/stage_ab.py --new new --base base --model /tmp/shape \
  --suites imdb-rg.suite,imdb-rgb.suite --reference gpu_best_pass.py --budget $((${BUDGET:-200} - (SECONDS - T0))) \
  --out "${OUT:-/tmp/stage_ab}" 2>&1 | tee "${OUT:-/tmp}/stage_ab.log"
echo "done at $((SECONDS - T0)) s"
