"""Algorithm 4 against a literal transcription of the paper's pseudocode, plus hand cases."""
from hypothesis import given, settings, strategies as st

from hinter.validity import tolerant_compare


def paper_algorithm_4(s1, s2):
    """tolerantTableComp, as printed in the paper (1-based line numbers in comments)."""
    is_1 = 0                                     # 2
    is_2 = 0                                     # 3
    st_1 = len(s1)                               # 4
    st_2 = len(s2)                               # 5
    error_limit = abs(st_1 - st_2)               # 6
    error = 0                                    # 7
    shift = 0                                    # 8
    while is_1 < st_1 and is_2 < st_2:           # 9
        if s1[is_1] != s2[is_2]:                 # 10
            error = error + 1                    # 11
            if shift < error_limit:              # 12
                shift = shift + 1                # 13
                if st_1 > st_2:                  # 14
                    is_1 = is_1 + 1              # 15
                elif st_1 < st_2:                # 16
                    is_2 = is_2 + 1              # 17
        is_1 = is_1 + 1                          # 18
        is_2 = is_2 + 1                          # 19
    error = error + (st_1 - is_1) + (st_2 - is_2)  # 20
    return error <= error_limit                  # 21


tags = st.lists(st.sampled_from(["NN", "NNS", "JJ", "DT", "VB", "PRP", "PRP$"]), max_size=12)


@settings(max_examples=3000)
@given(tags, tags)
def test_matches_paper_pseudocode(s1, s2):
    assert tolerant_compare(s1, s2) == paper_algorithm_4(s1, s2)


@given(tags)
def test_identical_sequences_pass(s):
    assert tolerant_compare(s, s)


def test_hand_cases():
    # equal length, one substitution: tolerance 0, so it fails (Figure 3: PRP$ vs PRP)
    assert not tolerant_compare(["PRP", "VBD", "PRP$", "NN"], ["PRP", "VBD", "PRP", "NN"])
    # one inserted adjective ("man" -> "disabled man"): tolerance 1, one shift
    assert tolerant_compare(["DT", "NN", "VBD"], ["DT", "JJ", "NN", "VBD"])
    # two insertions in the longer sequence: tolerance 2
    assert tolerant_compare(["DT", "NN", "VBD"], ["DT", "JJ", "JJ", "NN", "VBD"])
    # one insertion plus one substitution exceeds the tolerance of 1
    assert not tolerant_compare(["DT", "NN", "VBD", "RB"], ["DT", "JJ", "NN", "VBZ", "RB"])
    assert tolerant_compare([], [])
    # appended elements are counted as errors within the tolerance
    assert tolerant_compare(["NN"], ["NN", "NN"])
