#!/bin/bash
# issue 43 item 1 after this session's start-up cuts (one spaCy load a process, no lemminflect tables): the large
# campaign's suite build at 1 and 16 workers, this tree against the session's first tree, alternated, then this
# tree's 16-worker timeline. Carried: .gpu/g44 (site.tar.xz and langs.tar.gz as in A.sh; base/src: 8a76c89;
# new/src and new/bench: this tree).
cd "$(dirname "$0")/../../.gpu/g44"
T0=$SECONDS
mkdir -p /tmp/site && tar xJf site.tar.xz -C /tmp/site && tar xzf langs.tar.gz -C /tmp/site || exit 1
export PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1
echo "unpacked in $((SECONDS - T0)) s"
python3 -c "import lemminflect" 2>&1 | tail -1
python3 new/bench/suite_scaling.py --workers 1,16 --baseline base/src --baseline-workers 1,16 --out /tmp/scal 2>&1 | tee $OUT/scaling.txt
echo "at $((SECONDS - T0)) s"
python3 new/bench/suite_scaling.py --timeline 16 --out /tmp/tl 2>&1 | tail -25 | tee $OUT/timeline.txt
echo "done at $((SECONDS - T0)) s"
