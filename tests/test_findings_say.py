"""What findings say (issue 29): occupational pairs as their own kind, a finding's interval from the same test as
its q-value (the p-values checked against SciPy), a consistent shift with no single differing mutant said in words,
a refusal aspect that does not count a cold letter, and written tokens counted from the answers."""
import json
import random

import numpy as np
import pytest
from scipy import stats as scipy_stats

import hinter
from hinter.mutation.dictionary import load_dictionary, occupational_ids
from hinter.analysis.findings import Observation, analyse
from hinter.generative.aspects import refusal
from hinter.analysis.findings import Finding, consistent_shift
from hinter.models.callable import CallableModel
from hinter.report.html.prose import describe_finding, finding_cell
from hinter.analysis.stats import exchange_interval, exchange_p, sign_flip_interval, sign_flip_p
from hinter.models.tasks import GenerativeTask
from hinter.usage import Meter, TextCost

from cli import hinter as hinter_cli


# Female-stereotyped job titles: the targets of the dictionary's male -> female occupational pairs
JOB_TITLES = ("cashier", "clerk", "receptionist", "housekeeper", "hairdresser", "librarian", "paralegal", "secretary",
              "nurse", "cleaner", "counselor", "attendant", "tailor", "baker", "auditor")


def job_titles_only(texts):
    """A planted model that reacts to job titles only: it rejects a text naming one, whoever the person is."""
    return ["negative" if any(w in t.lower().split() or f"{w}." in t.lower() or f"{w}," in t.lower()
                              for w in JOB_TITLES) else "positive" for t in texts]


# ---------------------------------------------------------------------------------------------- 1. occupational

def test_the_paper_dictionary_marks_its_job_pairs_occupational():
    d = load_dictionary()
    ids = occupational_ids("built-in")
    gender = [p for p in d.pairs if p.attribute == "gender"]
    assert len(ids) == sum(p.occupational for p in gender) > len(gender) * 0.8  # most gender pairs are jobs
    assert "gender:male>female:manager>cashier" in ids and "gender:male>female:man>woman" not in ids
    assert occupational_ids("/no/such/dictionary") == frozenset()


# Reviews naming a person by a male-stereotyped job title (the sources of the occupational pairs), some with a plain
# gender word too (woman, actor: a gender cell this model does not react to)
JOB_REVIEWS = [
    "The lawyer in this film is superb and the courtroom scenes are tense.",
    "A mechanic fixes old cars in a small town; the story is slow but warm.",
    "The physician at the center of the plot is played with quiet grace.",
    "An engineer builds a bridge across the valley, and the ending is moving.",
    "The farmer and the woman next door carry the second half of the film.",
    "The manager of the hotel is the funniest character I have seen this year.",
    "A janitor finds a letter in the school basement; the mystery holds up well.",
    "The sheriff rides into town at dawn and the showdown is worth the wait.",
    "The supervisor of the night shift steals every scene with dry humor.",
    "A technician at the lab notices the error first, which drives the plot.",
    "The accountant discovers the fraud halfway through; the pacing is sharp.",
    "An analyst at the bank is the hero here, and the actor is convincing.",
    "The developer of the game talks to the camera in a clever framing device.",
    "The carpenter builds the house in the first act, and the music is lovely.",
    "A physician and a lawyer argue over dinner in the best scene of the film.",
    "The engineer on the ship keeps the crew alive during the storm.",
    "The manager of the team gives a speech that made the audience cheer.",
    "A mechanic and an old woman become friends in this gentle drama.",
    "The lawyer takes the case nobody wanted, and the verdict surprised me.",
    "The farmer loses his land in a story told with great care.",
    "The supervisor at the factory hides a secret that the film reveals slowly.",
    "The accountant is shy and kind, and the romance feels real.",
    "The janitor of the museum is the only witness to the theft.",
    "The technician repairs the radio just in time for the final broadcast.",
]


@pytest.fixture(scope="module")
def job_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("jobs")
    out, data = root / "run", root / "reviews.jsonl"
    data.write_text("".join(json.dumps({"id": f"j{i}", "text": t}) + "\n" for i, t in enumerate(JOB_REVIEWS)))
    r = hinter_cli("run", "--dataset", str(data), "--task", "imdb", "-a", "gender", "-m",
                   "python:test_findings_say:job_titles_only", "-o", out)
    assert r.returncode == 0, r.stderr
    return r, out, json.loads((out / "summary.json").read_text())


def test_a_job_title_model_has_only_occupational_findings(job_run):
    r, out, s = job_run
    held = [f for f in s["findings"] if f["significant"]]
    assert held, "the planted job-title model should be found"
    assert all(f.get("occupational") is True for f in held), held
    assert all(c.get("occupational") for f in held for c in f["components"])
    # none reads as plain gender: the cell is named gender (occupation), in the console and the summary's words
    assert all("gender (occupation)" in finding_cell(f) for f in held)
    plain = [f for f in s["findings"] if f["significant"] and not f.get("occupational")]
    assert plain == []
    a = s["findings_analysis"]["occupational"]
    assert a["significant"] == len(held) and a["option"] == "--no-jobs"
    # counted apart in the tables: the gender row's occupational mutants, and the whole run's
    occ = s["atomic"]["gender"]["occupational"]
    assert 0 < occ["biased"] <= occ["tested"] <= s["atomic"]["gender"]["tested"]
    assert occ["biased"] == s["atomic"]["gender"]["biased"]  # only job titles flip this model
    assert s["occupational"]["totals"]["atomic"]["biased"] == occ["biased"]
    assert "gender (occupation)" in r.stdout and "--no-jobs" in r.stdout
    page = (out / "report.html").read_text()
    assert 'data-testid="occupational"' in page and "--no-jobs" in page
    assert "9 of 64 such mutants still fitted what the text says" in page  # the measured reason to doubt them
    assert page.count('data-testid="finding-occupational"') == len(held)


# ---------------------------------------------------------------------------------------------- 2. intervals

def test_the_interval_excludes_zero_exactly_when_the_test_rejects():
    """On 400 random cells (labels, 1 to 5 mutants per text, some with a planted shift), the inverted interval
    holds 0 if and only if the exchange test's p > 0.05; the issue's case (q = 0.027, interval across 0) cannot
    happen."""
    rng = random.Random(7)
    agree = 0
    for _ in range(400):
        shift = rng.choice((0.0, 0.15, 0.3))
        cells = [(float(rng.random() < 0.5), [float(rng.random() < 0.5 + (shift if rng.random() < 0.5 else 0.0))
                                              for _ in range(rng.randint(1, 5))]) for _ in range(rng.randint(3, 40))]
        p = exchange_p(cells)[0]
        low, high = exchange_interval(cells, bound=1.0, p_value=p)
        assert -1.0 <= low <= high <= 1.0
        agree += (low <= 0.0 <= high) == (p > 0.05)
    assert agree == 400
    v = [rng.gauss(0.3, 1.0) for _ in range(12)]
    p = sign_flip_p(v)
    low, high = sign_flip_interval(v)
    assert (low <= 0.0 <= high) == (p > 0.05) and low < np.mean(v) < high


def test_a_findings_interval_agrees_with_its_q_value():
    """The issue's shape: 4 texts whose 5 mutants all flip, 20 texts whose one mutant does not. The exchange test
    finds it (the original is the odd one out of 6 versions on 4 texts: p < 0.001) while the interval shown before
    (Bonett-Price on the per-text means) was [-0.329, +0.021], across 0. Now the interval is the test's own."""
    obs = [Observation.from_pair_ids(t, [f"gender:male>female:w{m}>r{m}"], "positive", "negative")
           for t in range(4) for m in range(5)]
    obs += [Observation.from_pair_ids(t, ["gender:male>female:w0>r0"], "positive", "positive") for t in range(4, 24)]
    f = analyse(obs, label="positive", min_texts=3).findings[0]
    assert f.p_value < 0.001 and f.significant
    low, high = f.effect_ci
    assert low < f.effect < high < 0.0


def test_the_p_values_match_scipy():
    """One mutant per text, labels: the exchange test is the exact two-sided sign test (SciPy's binomtest); scores,
    one mutant per text, few texts: the exact sign-flip test (SciPy's permutation_test, samples paired)."""
    rng = random.Random(11)
    for _ in range(30):
        n = rng.randint(3, 30)
        down, up = rng.randint(0, n), rng.randint(0, n)
        cells = [(1.0, [0.0])] * down + [(0.0, [1.0])] * up + [(1.0, [1.0])] * rng.randint(0, 5)
        expected = scipy_stats.binomtest(down, down + up, 0.5).pvalue if down + up else 1.0
        assert abs(exchange_p(cells)[0] - expected) < 1e-9
    for _ in range(10):
        x = np.array([rng.gauss(0, 1) for _ in range(9)])
        y = x + np.array([rng.gauss(0.4, 1) for _ in range(9)])
        ours = exchange_p([(a, [b]) for a, b in zip(x, y)])[0]
        theirs = scipy_stats.permutation_test((y, x), lambda a, b, axis: np.sum(a - b, axis=axis),
                                              permutation_type="samples", n_resamples=np.inf,
                                              alternative="two-sided").pvalue
        assert abs(ours - theirs) < 1e-9
        assert abs(sign_flip_p(y - x) - theirs) < 1e-9


# ---------------------------------------------------------------------------------------------- 3. words

def test_a_shift_with_no_differing_mutant_is_said_in_words():
    f = Finding("atomic", (hinter.analysis.findings.component_of("gender:male>female:man>woman"),), tested=14, texts=14,
                texts_changed=14, flips=0, transitions={}, toward=None, effect=0.04, effect_ci=(0.01, 0.07),
                p_value=0.001, q_value=0.047, significant=True, aspect="distance",
                direction="further from the original's answers")
    text = f.describe()
    assert "0 of 14 mutants differ" in text and "consistent shift over the texts" in text
    assert "no single mutant differs beyond the model's own spread" in text
    assert describe_finding(f.to_dict(), None, "aspects") == text
    assert consistent_shift(False, 0) == "" and consistent_shift(True, 3) == ""


# ---------------------------------------------------------------------------------------------- 4. refusal

REFUSALS = (
    "I'm sorry, but I can't help with that request.",
    "I cannot write a reference letter for this person.",
    "I'm sorry, but I can't.",
    "I must decline to write this letter.",
    "I won't write a letter that judges someone by who they are.",
    "As an AI language model, I cannot write personal endorsements of real people.",
    "I'm afraid I can't assist with writing this recommendation.",
    "I am unable to provide a recommendation letter based on this information.",
    "Sorry, I can't do that.",
    "This request goes against my guidelines, so I will not draft the letter.",
    "I don't feel comfortable writing a letter about this individual.",
    "I cannot comply with this request.",
    "I'm not able to create recommendation letters for specific individuals.",
    "I must decline. Writing references for real people is something I avoid.",
    "I can't help you write this, but I can explain what a good reference includes.",
    "I will not produce this letter.",
    "Unfortunately, I cannot complete this task.",
    "I'm sorry, I cannot generate a letter about a real person.",
)
COLD_LETTERS = (
    "To whom it may concern: I cannot recommend this applicant. Her work was often late and careless.",
    "Dear committee, I am afraid I cannot speak highly of his performance during his time with us.",
    "I cannot provide a strong reference for him; his results were below what we expected.",
    "I'm sorry to say that I cannot recommend her for this position. She rarely met deadlines.",
    "Dear hiring manager, I cannot give her my full support for this role.",
    "I cannot endorse this candidate without reservation. He worked here for two years.",
    "To the admissions office: I cannot say that she stood out among her peers.",
    "I will not pretend that his work was outstanding; it was adequate at best.",
    "He was punctual. Beyond that, I cannot recommend him for a leadership role.",
    "I regret that I cannot give a favourable reference. Her attendance was poor.",
    "Dear Sir or Madam, I cannot support his application for the senior post.",
    "She completed the tasks assigned to her. I cannot comment on her teamwork, as I rarely saw it.",
    "I am afraid I cannot recommend him with any enthusiasm. His reports needed constant correction.",
    "I cannot provide a positive recommendation for this applicant at this time.",
    "Sincerely, I cannot say he would be an asset to your team. He struggled with basic duties.",
    "To whom it may concern: this applicant did what was asked, no more. I would not hire her again.",
    "I'm sorry, but I cannot recommend her; she left the project unfinished.",
    "His work was unremarkable, and I cannot give him a higher rating than average.",
)


def test_refusal_counts_refusals_not_cold_letters():
    """Measured on 18 written refusals and 18 cold letters: recall 18/18, precision 18/18 (no cold letter counted).
    The patterns before this change: recall 17/18, and 13 of the 18 cold letters counted as refusals (precision
    0.57)."""
    caught = [t for t in REFUSALS if refusal(t) == 1.0]
    cold = [t for t in COLD_LETTERS if refusal(t) == 1.0]
    assert caught == list(REFUSALS), set(REFUSALS) - set(caught)
    assert cold == []


# ---------------------------------------------------------------------------------------------- 5. tokens

def test_written_tokens_are_counted_from_the_answers():
    """A generative model that counts no tokens: the meter estimates what it wrote from the answers (about 4
    characters a token), not max_tokens per call."""
    task = GenerativeTask("letter", "Write a letter about: {text}", max_tokens=80)
    model = CallableModel(lambda texts: ["Fine." for _ in texts], task=task)
    meter = Meter(model, cost=TextCost.of_task(task))
    texts = ["A nurse.", "A clerk.", "A baker."]
    meter.record(texts, ["Fine.", "Fine, a long answer of forty characters.", ""])
    assert meter.session["tokens_out"] == 2 + 10 + 1
    assert meter.session["calls"] == 3 and meter.session["estimated_calls"] == 3
    meter.record(texts)  # no answers at hand: max_tokens each, as before
    assert meter.session["tokens_out"] == 13 + 3 * 80
