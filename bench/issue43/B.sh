#!/bin/bash
# issue 43 item 1 (second part): a campaign of over 2 million mutants, legal texts included, built on every core and
# run on the GPU, end to end: 381 texts (EUR-Lex 200, SCOTUS 4, the 33 ECtHR cases under 9,000 characters, IMDB
# 144), race x gender x body x age (the age pack), order 3
cd "$(dirname "$0")"
T0=$SECONDS
mkdir -p /tmp/site && tar xJf ../scal/site.tar.xz -C /tmp/site && tar xzf ../scal/langs.tar.gz -C /tmp/site || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
python3 mkshape.py shape /tmp/shape 2>&1 | tail -1
echo "ready at $((SECONDS - T0)) s"
timeout 320 python3 new/bench/suite_scaling.py --timeline 16 --dataset mixed.jsonl --attributes race,gender,body,age \
  --extra "--packs age --order 3" --limit 381 --out /tmp/b2m 2>&1 | tee $OUT/build2m.txt
ls -la /tmp/b2m/timeline16/campaign.suite
left=$((585 - (SECONDS - T0)))
echo "built at $((SECONDS - T0)) s; ${left} s left for the run"
nvidia-smi --query-gpu=name,memory.used --format=csv,noheader
timeout $left python3 new/bench/driver.py --suite /tmp/b2m/timeline16/campaign.suite --model hf:/tmp/shape --task imdb \
  --out /tmp/run2m --no-compare --json $OUT/run2m.json > $OUT/run2m-full.txt 2>&1
echo "run rc $? at $((SECONDS - T0)) s"
grep -v "^  " $OUT/run2m-full.txt | tail -40
