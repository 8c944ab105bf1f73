#!/bin/bash
# issue 43 item 4 on the GPU machine, one call (about 6 minutes): the generative run with the machine's
# transformers (5.17, which imports scikit-learn when its generation utilities load) against the same tree with
# transformers 5.24 first on PYTHONPATH (5.21 and later import it only for assisted generation), alternated whole
# runs (bench/startup.py --with-path), then the generation table under each. Carried: .gpu/startup, .gpu/tf
# (tf524.tar.gz: the transformers 5.24 and huggingface_hub 1.33 wheels unpacked).
cd "$(dirname "$0")/../.."
T0=$SECONDS
S=.gpu/startup
mkdir -p /tmp/site /tmp/tf && tar xzf $S/site.tar.gz -C /tmp/site && tar xzf .gpu/tf/tf524.tar.gz -C /tmp/tf || exit 1
export HF_HUB_OFFLINE=1 PYTHONUNBUFFERED=1 PYTHONPATH=/tmp/site
check='import sys, time; t = time.time(); import transformers, huggingface_hub; from transformers import AutoModelForCausalLM; import transformers.generation.utils; print(transformers.__version__, huggingface_hub.__version__, "sklearn imported:", "sklearn" in sys.modules, f"{time.time() - t:.2f} s")'
python3 -c "$check" | sed 's/^/machine: /' | tee $OUT/versions.txt
PYTHONPATH=/tmp/tf:/tmp/site python3 -c "$check" | sed 's/^/carried: /' | tee -a $OUT/versions.txt
timeout 240 python3 bench/startup.py --make-shape $S/minilm --prefix hf-causal --model-dir /tmp/smol \
  --task $S/reference-letter.yaml --suite $S/bios.suite --rounds 3 --variants this --with-path tf524=/tmp/tf \
  --out /tmp/st-gen 2>&1 | tail -16 | tee $OUT/startup-gen.txt
echo "at $((SECONDS - T0)) s"
timeout 150 python3 bench/generation_gpu.py --shape /tmp/smol --suite $S/bios.suite --raw-batch 512 \
  --out /tmp/gen517 2>&1 | tail -14 | tee $OUT/generation-517.txt
echo "at $((SECONDS - T0)) s"
PYTHONPATH=/tmp/tf:/tmp/site timeout $((570 - (SECONDS - T0))) python3 bench/generation_gpu.py --shape /tmp/smol \
  --suite $S/bios.suite --raw-batch 512 --out /tmp/gen524 2>&1 | tail -14 | tee $OUT/generation-524.txt
cp /tmp/st-gen/startup.json $OUT/ 2>/dev/null; cp /tmp/gen517/generation.json $OUT/generation-517.json 2>/dev/null
cp /tmp/gen524/generation.json $OUT/generation-524.json 2>/dev/null
echo "done at $((SECONDS - T0)) s"
