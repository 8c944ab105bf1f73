#!/bin/bash
# issue 43 item 4 on the GPU machine, one call (about 5 minutes): the whole generative `run --suite` of this tree
# against another (.gpu/startup/base/src). Run once with this tree at 1b2d0f3 (hf-causal's answers written in a
# thread of their own, since reverted: slower) against 143469f,
# 3 rounds alternated, SmolLM2's shape on the bios suite as in G.sh; then the generation table (raw generate plus
# the model's own load). Carried: .gpu/startup.
cd "$(dirname "$0")/../.."
T0=$SECONDS
S=.gpu/startup
mkdir -p /tmp/site && tar xzf $S/site.tar.gz -C /tmp/site || exit 1
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site
timeout 330 python3 bench/startup.py --make-shape $S/minilm --prefix hf-causal --model-dir /tmp/smol \
  --task $S/reference-letter.yaml --suite $S/bios.suite --rounds 3 --variants this --baseline-src $S/base/src \
  --out /tmp/st-gen 2>&1 | tail -22 | tee $OUT/startup-gen.txt
echo "at $((SECONDS - T0)) s"
timeout $((560 - (SECONDS - T0))) python3 bench/generation_gpu.py --shape /tmp/smol --suite $S/bios.suite \
  --raw-batch 512 --out /tmp/gen 2>&1 | tail -30 | tee $OUT/generation.txt
cp /tmp/st-gen/startup.json $OUT/ 2>/dev/null; cp /tmp/gen/generation.json $OUT/ 2>/dev/null
echo "done at $((SECONDS - T0)) s"
