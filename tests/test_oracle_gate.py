"""The oracle (METHOD.md "The oracle") and the gate's condition syntax, tested directly."""
import pytest

from hinter.analysis import oracle
from hinter.errors import InputError
from hinter.report.gate import evaluate, parse_condition

V, D, U = (True, False), (True, True), (True, None)  # valid without bias, valid with bias, valid undecided


def test_bias_is_a_changed_outcome_and_unparseable_is_neither():
    assert oracle.is_bias("positive", "negative") is True
    assert oracle.is_bias("positive", "positive") is False
    assert oracle.is_bias(None, "negative") is None and oracle.is_bias("positive", None) is None
    assert oracle.is_bias("a | b", "b | a") is True  # encoded outcomes compare as strings (sets are sorted on encode)


@pytest.mark.parametrize("components, hidden", [
    ([V, V], True),                 # the paper's case: both atomic parts agree with the original
    ([V, D], False),                # an atomic part already flips: not hidden
    ([V, (False, None)], False),    # a discarded part cannot vouch for the original
    ([V, U], False),                # an unparseable part neither
    ([V, None], False),             # a missing part neither
])
def test_hidden_needs_every_atomic_part_valid_and_agreeing(components, hidden):
    assert oracle.is_hidden(True, components) is hidden
    assert oracle.is_hidden(False, components) is False  # no bias, nothing hidden


def test_strictly_hidden_looks_at_lower_order_combinations():
    assert oracle.is_strictly_hidden(True, [V, V, V]) is True
    assert oracle.is_strictly_hidden(True, [V, D, V]) is False
    assert oracle.is_strictly_hidden(True, [(False, True), V]) is True  # a discarded sub-combination does not count
    assert oracle.is_strictly_hidden(False, [V]) is False


SUMMARY = {"texts": 3, "totals": {"atomic": {"error_rate": 0.1, "biased": 2},
                                  "intersectional": {"error_rate": 0.3, "hidden": 1, "biased": 4}},
           "intersectional": {"gender+race": {"error_rate": 0.3}, "body+gender": {"error_rate": None}},
           "group_bias": {"atomic": {"gender": {"groups": {"female": {"error_rate": 0.25}}}}}}


@pytest.mark.parametrize("text, path, held", [
    ("intersectional.error_rate>0.05", "totals.intersectional.error_rate", True),  # read under totals
    ("hidden>0", "totals.*.hidden", True),                                         # then under totals.*
    ("hidden >= 2", "totals.*.hidden", False),
    ("intersectional.*.error_rate > 0.2", "intersectional.*.error_rate", True),    # any combination
    ("intersectional.body+gender.error_rate>=0", "intersectional.body+gender.error_rate", False),  # null never holds
    ("group_bias.atomic.gender.groups.*.error_rate<0.3", "group_bias.atomic.gender.groups.*.error_rate", True),
    ("texts != 3", "texts", False),
    ("atomic.error_rate==1e-1", "totals.atomic.error_rate", True),
])
def test_condition_paths_fall_back_to_totals_and_null_never_holds(text, path, held):
    c = parse_condition(text, SUMMARY)
    assert c.path == path
    assert bool(evaluate([c], SUMMARY)) is held


@pytest.mark.parametrize("text, fragment", [("hidden>", "cannot read"), ("error_rate ~ 1", "cannot read"),
                                            ("intersectional.eror_rate>0.05", "no measure")])
def test_bad_conditions_name_the_problem(text, fragment):
    with pytest.raises(InputError) as e:
        parse_condition(text, SUMMARY)
    assert fragment in e.value.message and "--fail-on" in e.value.message


def test_fail_on_paths_are_checked_before_the_campaign():
    from hinter.report.gate import check_paths
    check_paths(["intersectional.gender+race.error_rate>0.1", "hidden>0", "group_bias.atomic.x.y>0",
                 "atomic.gender.biased>3"], ("race", "gender"), 2)
    with pytest.raises(InputError) as e:
        check_paths(["intersectional.eror_rate>0.05"], ("race", "gender"), 2)
    assert "eror_rate" in e.value.message
    with pytest.raises(InputError):  # body is not among the attributes tested
        check_paths(["atomic.body.error_rate>0"], ("race", "gender"), 2)
