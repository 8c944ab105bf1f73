#!/bin/bash
# issue 43 item 4 on the GPU machine, one call (about 4 minutes): where the generative run's start-up goes. The
# whole `run --suite` on the bios suite with SmolLM2's shape (G.sh's), its load phases (HINTER_TIMINGS), what it
# imports (python -X importtime, cumulative) and a cProfile of the whole process (cumulative). Carried: .gpu/startup.
cd "$(dirname "$0")/../.."
T0=$SECONDS
S=.gpu/startup
mkdir -p /tmp/site && tar xzf $S/site.tar.gz -C /tmp/site || exit 1
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site:src
python3 -c "import torch, transformers; print(torch.__version__, transformers.__version__)" | tee $OUT/machine.txt
# SmolLM2's shape with random weights (and one round of bench/startup.py's timing, which fills the bytecode cache)
timeout 150 python3 bench/startup.py --make-shape $S/minilm --prefix hf-causal --model-dir /tmp/smol \
  --task $S/reference-letter.yaml --suite $S/bios.suite --rounds 1 --variants this --out /tmp/st-gen 2>&1 | tail -15 | tee $OUT/startup-gen.txt
RUN="run --suite $S/bios.suite --model hf-causal:/tmp/smol --task $S/reference-letter.yaml --overwrite"
for i in 1 2; do
  /usr/bin/time -f "whole run %e s" env HINTER_TIMINGS=1 python3 -m hinter.cli $RUN --out /tmp/gen$i > /tmp/gen$i.txt 2>&1
  grep -E "first_call_at|whole run|seconds" /tmp/gen$i.txt | tail -4 | tee -a $OUT/runs.txt
done
python3 -X importtime -m hinter.cli $RUN --out /tmp/gen-it 2> /tmp/importtime.txt > /dev/null
sort -t'|' -k2 -n /tmp/importtime.txt | tail -60 > $OUT/importtime-top.txt
python3 -m cProfile -o /tmp/gen.prof -m hinter.cli $RUN --out /tmp/gen-prof > /dev/null 2>&1
python3 -c "
import pstats; p = pstats.Stats('/tmp/gen.prof'); p.sort_stats('cumulative').print_stats(150)" > $OUT/profile-cumulative.txt
python3 -c "
import pstats; p = pstats.Stats('/tmp/gen.prof'); p.sort_stats('tottime').print_stats(50)" > $OUT/profile-tottime.txt
cp /tmp/gen1/summary.json $OUT/summary1.json 2>/dev/null
echo "done at $((SECONDS - T0)) s"
