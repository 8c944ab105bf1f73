"""summary.json declared once (hinter.analysis.summary_spec): the committed reference is its rendering, a real run's summary
has exactly the declared keys, and the gate accepts every declared path before a run and nothing else."""
import sys
from pathlib import Path

import pytest

import hinter
from hinter.mutation.dictionary import Dictionary, Pair
from hinter.errors import InputError
from hinter.analysis.measures import summary
from hinter.report.gate import check_paths
from hinter.analysis.summary_spec import COMBINATION, RUN, data_keyed_sections, reference_markdown

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
import planted  # noqa: E402

DIC = Dictionary(planted.PAIRS + (Pair("body", "young", "old", "young", "old"),), "planted-spec")


def test_the_committed_reference_is_the_declarations_rendering():
    committed = (HERE.parent / "docs" / "summary-schema.md").read_text(encoding="utf-8")
    assert committed == reference_markdown(), ("docs/summary-schema.md differs from summary_spec: regenerate it "
                                               "(the command is in the file's first lines)")


@pytest.fixture(scope="module")
def real(parser, tmp_path_factory):
    r = hinter.run(planted.TEXTS + ["A young white man sang well. It was fine."], planted.intersectional,
                   attributes=("gender", "race", "body"), order=3,
                   dictionary=DIC, parser=parser, out=tmp_path_factory.mktemp("spec"))
    return summary(r.store)


def _leaves(obj, prefix=""):
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _leaves(v, f"{prefix}.{k}" if prefix else k)
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield prefix


def test_a_real_summary_has_exactly_the_declared_keys(real):
    declared = {k: e for e in RUN for k in e.keys}
    assert set(real) <= set(declared), set(real) - set(declared)
    assert {k for k, e in declared.items() if not e.optional} <= set(real)
    combo = {k: e for e in COMBINATION for k in e.keys}
    tables = [*real["atomic"].values(), *real["intersectional"].values(), *real["totals"].values()]
    assert any(t["order"] == 3 for t in real["intersectional"].values())
    for t in tables:
        assert set(t) <= set(combo), set(t) - set(combo)
        assert {k for k, e in combo.items() if not e.optional} <= set(t)


def test_the_gate_accepts_every_measure_of_a_real_run_before_it_and_refuses_a_misspelled_one(real):
    paths = [p for p in _leaves(real) if p.split(".")[0] not in data_keyed_sections()]
    assert "totals.intersectional.hidden_rate" in paths and "originals_with_bias.rate" in paths
    check_paths([f"{p}>0" for p in paths], ("gender", "race", "body"), 3)  # raises on an unknown path
    check_paths(["hidden>0", "significant_findings>0", "group_bias.atomic.gender.groups.*.error_rate>0.2"],
                ("gender", "race"), 2)
    for wrong in ("intersectional.eror_rate>0.05", "intersectional.gender+race+body.error_rate>0",
                  "findings_analysis.nothing>0"):
        with pytest.raises(InputError):
            check_paths([wrong], ("gender", "race"), 2)
