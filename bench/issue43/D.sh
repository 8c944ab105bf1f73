#!/bin/bash
# issue 43 item 1: where a build's tasks go, per process (bench/suite_scaling.py --timeline with its task lines):
# the large campaign on 16 workers twice; then the 2-million-mutant campaign on 16
cd "$(dirname "$0")"
T0=$SECONDS
mkdir -p /tmp/site && tar xJf ../scal/site.tar.xz -C /tmp/site && tar xzf ../scal/langs.tar.gz -C /tmp/site || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
for w in 16 16; do echo "== large campaign, $w workers"; python3 new/bench/suite_scaling.py --timeline $w --out /tmp/tl$w 2>&1; done | tee $OUT/tasks-large.txt
echo "at $((SECONDS - T0)) s"
left=$((220 - (SECONDS - T0)))
[ $left -gt 100 ] && timeout $left python3 new/bench/suite_scaling.py --timeline 16 --dataset mixed.jsonl --attributes race,gender,body,age \
  --extra "--packs age --order 3" --limit 381 --out /tmp/b2m 2>&1 | tee $OUT/tasks-2m.txt
echo "done at $((SECONDS - T0)) s"
