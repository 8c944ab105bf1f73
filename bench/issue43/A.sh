#!/bin/bash
# issue 43 item 1 on the GPU machine: the machine's own slow-down, the scaling curve (this tree and the one before,
# alternated), each tree's process timeline at 16 workers, and a larger (legal) campaign if the time allows
cd "$(dirname "$0")"
T0=$SECONDS
mkdir -p /tmp/site && tar xJf ../scal/site.tar.xz -C /tmp/site && tar xzf ../scal/langs.tar.gz -C /tmp/site || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
echo "unpacked in $((SECONDS - T0)) s"
{ lscpu; echo; nproc; python3 --version; free -g; } > $OUT/machine.txt 2>&1
grep -E "^(Model name|Thread|Core|Socket|CPU\(s\)|NUMA|CPU max|L3)" $OUT/machine.txt
python3 new/bench/suite_scaling.py --contention 1,2,4,8,16 2>&1 | tee $OUT/contention.txt
echo "at $((SECONDS - T0)) s"
python3 new/bench/suite_scaling.py --workers 1,16,8,4,2 --baseline base/src --baseline-workers 1,16 --out /tmp/scal 2>&1 | tee $OUT/scaling.txt
echo "at $((SECONDS - T0)) s"
{ echo "== this tree"; python3 new/bench/suite_scaling.py --timeline 16 --out /tmp/tl 2>&1;
  echo "== baseline tree"; python3 new/bench/suite_scaling.py --timeline 16 --src base/src --out /tmp/tlb 2>&1; } | tee $OUT/timeline.txt
left=$((570 - (SECONDS - T0)))
echo "at $((SECONDS - T0)) s; ${left} s left"
if [ $left -gt 200 ]; then
  timeout $left python3 new/bench/suite_scaling.py --dataset ecthr --workers 16,1 --out /tmp/ecthr 2>&1 | tee $OUT/ecthr.txt
fi
echo "done at $((SECONDS - T0)) s"
