#!/bin/bash
# issue 43 items 2 and 4 on the GPU machine, one call (about 7 minutes): the start-up of `hinter run --suite` with
# the bytecode kept in hinter's cache (the machine's torch has none and PYTHONDONTWRITEBYTECODE is set) against
# HINTER_BYTECODE=0, alternated; what the warm start-up still imports (python -X importtime); then the generation
# table (the whole generative run against raw batched generate plus the model's own load). Carried: .gpu/startup
# (see E.sh: imdb.suite, bios.suite, minilm/, site.tar.gz).
cd "$(dirname "$0")/../.."
T0=$SECONDS
S=.gpu/startup
mkdir -p /tmp/site && tar xzf $S/site.tar.gz -C /tmp/site || exit 1
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc; env | grep ^PYTHON;
  python3 -c "import torch, transformers, tokenizers; print(torch.__version__, transformers.__version__, tokenizers.__version__)"; } 2>&1 | tee $OUT/machine.txt
rm -rf ~/.cache/hinter/bytecode
timeout 200 python3 bench/startup.py --make-shape $S/minilm --model-dir /tmp/minilm --suite $S/imdb.suite \
  --rounds 3 --out /tmp/st-cls 2>&1 | tee $OUT/startup-cls.txt
echo "at $((SECONDS - T0)) s"
# what the warm start-up imports, by cumulative seconds (stopped at the first call)
HINTER_TIMINGS=1 python3 -X importtime bench/startup.py --child src --first-call-only -- run --suite $S/imdb.suite \
  --model hf:/tmp/minilm --out /tmp/st-it --overwrite 2> /tmp/importtime.txt
grep -v "^import time" /tmp/importtime.txt | tail -3
sort -t'|' -k2 -n /tmp/importtime.txt | tail -45 | tee $OUT/importtime-top.txt
echo "at $((SECONDS - T0)) s"
# generation: SmolLM2-135M's architecture beside MiniLM's tokenizer, random weights; whole run, stage, raw passes
timeout 100 python3 bench/startup.py --make-shape $S/minilm --prefix hf-causal --model-dir /tmp/smol \
  --task $S/reference-letter.yaml --suite $S/bios.suite --rounds 1 --variants this --out /tmp/st-gen 2>&1 | tee $OUT/startup-gen.txt
timeout $((400 - (SECONDS - T0))) python3 bench/generation_gpu.py --shape /tmp/smol --suite $S/bios.suite \
  --raw-batch 128,512 --out /tmp/gen 2>&1 | tail -40 | tee $OUT/generation.txt
for d in cls gen; do [ -f /tmp/st-$d/startup.json ] && cp /tmp/st-$d/startup.json $OUT/startup-$d.json; done
cp /tmp/gen/generation.json $OUT/ 2>/dev/null
echo "done at $((SECONDS - T0)) s"
