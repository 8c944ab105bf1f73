#!/bin/bash
# issue 43 items 2 and 4 on the GPU machine: the start-up of `hinter run --suite` (the command to the model's first
# call), this tree with its early start, without it (HINTER_EARLY_START=0) and the tree before (b09922c's src),
# alternated, in one call (about 4 minutes). Carried: .gpu/startup (made on a machine with spaCy, see
# bench/startup.py): imdb.suite (IMDB race x gender, 200 texts, 14,410 mutants), bios.suite (bios gender,race,
# --max-pairs-per-text 6: 80 texts, 273 mutants), minilm/ (all-MiniLM-L6-v2's config and tokenizer, no weights),
# reference-letter.yaml (the bundled task less its distance aspect, whose MiniLM weights are not carried), base/src,
# site.tar.gz (hinter's light dependencies).
cd "$(dirname "$0")/../.."
T0=$SECONDS
S=.gpu/startup
# hinter's own light dependencies (catalogue, pyahocorasick, typer, rich...): the machine has torch, not them
mkdir -p /tmp/site && tar xzf $S/site.tar.gz -C /tmp/site || exit 1
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; nproc;
  python3 -c "import torch, transformers, tokenizers; print(torch.__version__, transformers.__version__, tokenizers.__version__)"; } 2>&1 | tee $OUT/machine.txt
# the classifier: MiniLM's shape (random weights), whole runs
timeout 165 python3 bench/startup.py --make-shape $S/minilm --model-dir /tmp/minilm --suite $S/imdb.suite \
  --baseline-src $S/base/src --rounds 2 --out /tmp/st-cls 2>&1 | tee $OUT/startup-cls.txt
echo "at $((SECONDS - T0)) s"
# generation: SmolLM2-135M's architecture (random weights, bfloat16) beside MiniLM's tokenizer, whole runs
timeout $((255 - (SECONDS - T0))) python3 bench/startup.py --make-shape $S/minilm --prefix hf-causal \
  --model-dir /tmp/smol --task $S/reference-letter.yaml --suite $S/bios.suite --baseline-src $S/base/src --rounds 1 \
  --out /tmp/st-gen 2>&1 | tee $OUT/startup-gen.txt
echo "at $((SECONDS - T0)) s"
# more start-ups alone (each process stopped at its first call), if the time allows
left=$((290 - (SECONDS - T0)))
[ $left -gt 40 ] && timeout $left python3 bench/startup.py --model-dir /tmp/minilm --suite $S/imdb.suite \
  --baseline-src $S/base/src --rounds 2 --first-call-only --out /tmp/st-first 2>&1 | tee $OUT/startup-first.txt
for d in cls gen first; do [ -f /tmp/st-$d/startup.json ] && cp /tmp/st-$d/startup.json $OUT/startup-$d.json; done
echo "done at $((SECONDS - T0)) s"
