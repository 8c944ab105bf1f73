"""The dependency invariant on the real spaCy parser: the paper's Figure 3, and engine == reference."""
import random

from hinter.mutation.dictionary import load_dictionary
from hinter.mutation.mutants import generate
from hinter.validity import ReferenceValidator, Validator, changed_sentences, invariant_check, split_sentences


def test_figure_3_his_to_him_is_discarded_her_passes(parser):
    original = "The man loved his dog. It was a good dog."
    parse = lambda s: parser.parse([s])[0]
    assert not invariant_check(original, "The man loved him dog. It was a good dog.", parse)
    assert invariant_check(original, "The man loved her dog. It was a good dog.", parse)


def test_inserted_adjective_is_tolerated(parser):
    parse = lambda s: parser.parse([s])[0]
    assert invariant_check("The man walked home.", "The disabled man walked home.", parse)


def test_sentence_count_change_is_invalid(parser):
    parse = lambda s: parser.parse([s])[0]
    assert not invariant_check("He met the man. Then he left.", "He met the man. Then. He left.", parse)


def test_split_sentences():
    assert split_sentences("Mr. Smith came. He saw! Did he? Yes.<br /><br />New part") == [
        "Mr. Smith came.", "He saw!", "Did he?", "Yes.", "New part"]
    assert changed_sentences("One man. Two men.", "One man. Two women.") == [("Two men.", "Two women.")]


def _mutants(texts, attributes):
    dic = load_dictionary().restrict(attributes).sample(None)
    out = []
    for i, t in enumerate(texts):
        out += [(t, m.text) for m in generate(i, t, dic, attributes, 2).mutants]
    return out


def test_engine_equals_reference_on_real_texts(parser, imdb_texts):
    pairs = _mutants(imdb_texts, ("gender", "race"))
    random.Random(0).shuffle(pairs)
    pairs = pairs[:300]
    assert len(pairs) >= 100
    reference = ReferenceValidator(parser)
    expected = [reference.validate_text(o, [m])[0] for o, m in pairs]
    engine = Validator(parser)
    got = engine.validate([changed_sentences(o, m) for o, m in pairs])
    assert got == expected
    assert 0 < sum(got) < len(got)  # both verdicts occur
    assert engine.sentences_parsed < reference.sentences_parsed


def test_cache_never_changes_a_verdict(parser, imdb_texts):
    pairs = _mutants(imdb_texts[:12], ("body", "gender"))[:200]
    items = [changed_sentences(o, m) for o, m in pairs]
    fresh = Validator(parser).validate(items)
    v = Validator(parser)
    half = len(items) // 2
    first = v.validate(items[:half])
    second = v.validate(items[half:])  # with what the first half cached
    assert first + second == fresh
    # a cache too small to hold one round still gives the same verdicts
    assert Validator(parser, parse_cache_size=3, verdict_cache_size=2).validate(items[:40]) == fresh[:40]


def test_worker_processes_give_the_same_verdicts(parser, imdb_texts):
    from hinter.validity import SpacyParser

    pairs = _mutants(imdb_texts[:15], ("gender", "race"))[:150]
    items = [changed_sentences(o, m) for o, m in pairs]
    pool = SpacyParser(n_process=2)
    try:
        sentences = sorted({s for it in items if it for pair in it for s in pair})[:80]
        assert pool.tag(sentences) == parser.tag(sentences)
        assert pool.parse(sentences) == parser.parse(sentences)
        assert Validator(pool).validate(items) == Validator(parser).validate(items)
    finally:
        pool.close()


def test_tags_first_parses_only_sentences_whose_tags_passed(parser):
    v = Validator(parser)
    # "him" for "his" changes a tag: decided by the tagger alone, no dependency parse
    assert v.validate([[("The man loved his dog.", "The man loved him dog.")]]) == [False]
    assert v.sentences_tagged == 2 and v.sentences_parsed == 0
    assert v.validate([[("The man loved his dog.", "The man loved her dog.")]]) == [True]
    assert v.sentences_tagged == 3 and v.sentences_parsed == 2


def test_sentence_by_sentence_pairs_equal_whole_text_splitting(imdb_texts):
    from hinter.mutation.mutants import apply_replacements
    from hinter.validity import changed_sentence_pairs, sentence_spans

    from hinter.mutation.dictionary import Dictionary, Pair

    dic = load_dictionary()
    # replacements that make or unmake an abbreviation or an initial before a full stop move a boundary
    abbreviating = Dictionary((Pair("gender", "male", "female", "man", "Mr"), Pair("gender", "male", "female", "he", "J"),
                               Pair("race", "a", "b", "st", "saint"), Pair("race", "a", "b", "white", "e.g")), "tricky")
    tricky = ["He met Mr. Smith and the man. The man left!", "A man.<br />The woman J. Doe met him. man? man.",
              "It was he. Then the man. White st. Later.", "(the man). He went to the white. Or st. he."]
    checked = 0
    for i, t in enumerate(imdb_texts[:20] + tricky * 2):
        spans = sentence_spans(t)
        sentences = [t[a:b] for a, b in spans]
        d = abbreviating if i >= 20 + len(tricky) else dic
        for m in generate(i, t, d, ("body", "gender", "race"), 2).mutants[:300]:
            whole = changed_sentences(t, apply_replacements(t, m.edits))
            assert changed_sentence_pairs(t, spans, sentences, m.edits) == whole
            checked += 1
    assert checked > 1000



def test_tags_and_labels_are_those_of_the_pipeline_with_its_attribute_ruler(imdb_texts):
    """The parser leaves spaCy's attribute ruler out in English (it sets POS and morphology, which validity does not
    read): its tags and labels must stay those the pipeline gave with the ruler, whitespace tokens included (the
    ruler tags them `_SP` and, after a whole parse, labels them `dep`), tagged first or parsed whole."""
    from hinter.validity.parsers import DEFAULT_SPACY_MODEL, _SpacyWorker

    lean = _SpacyWorker(DEFAULT_SPACY_MODEL, 64)
    ruled = _SpacyWorker(DEFAULT_SPACY_MODEL, 64)
    ruled.nlp.enable_pipe("attribute_ruler")  # the pipeline as it ran before
    ruled._space_rules = None
    ruled.tagging_pipes = [n for n in ruled.nlp.pipe_names if n != "parser"]
    assert "attribute_ruler" not in lean.nlp.pipe_names and "attribute_ruler" in ruled.tagging_pipes
    # the last two: the parser labels their first token (whitespace) itself, the ruler then `dep`
    spaced = ["The  man\tsaid  hello .", "She left.\n\nHe  stayed  home  ,  alone .", "  Two spaces first .",
              "A tab\tinside and   three spaces .", "\xa0 Where I saw it: Comcast Moviepass", "\n And I wanted to love it."]
    sentences = spaced + [s for t in imdb_texts[:6] for s in split_sentences(t)][:60]
    for w in (lean, ruled):
        w.tag(sentences[::2])  # tagged first: parse() runs the parser alone on these
    want = ruled.parse(sentences)
    assert lean.parse(sentences) == want
    assert any("_SP" in p.tags for p in want) and any("dep" in p.deps for p in want)
    assert lean.tag(sentences) == ruled.tag(sentences)
    for w in (lean, ruled):
        w.tag([])  # nothing tagged: parse() parses each sentence whole
    assert lean.parse(spaced) == ruled.parse(spaced)
    assert lean.parse(spaced[-1:]) == ruled.parse(spaced[-1:])  # one sentence: nlp() alone


def test_the_parser_sees_english_mutations_one_load_and_parses_as_a_load_of_its_own(imdb_texts):
    """languages.parses.pipeline_view: the validity parser is made of the components English mutation loaded (one
    load a process, not two), gives what its own spacy.load gave, and what it turns off stays on for mutation."""
    from hinter.languages.english import SPACY_MODEL, full_pipeline
    from hinter.languages.parses import import_spacy, pipeline_view

    view = pipeline_view(SPACY_MODEL, exclude=["ner", "lemmatizer"], disable=["attribute_ruler"])
    full = full_pipeline()
    assert view.tokenizer is full.tokenizer and view.get_pipe("parser") is full.get_pipe("parser")
    own = import_spacy().load(SPACY_MODEL, exclude=["ner", "lemmatizer"], disable=["attribute_ruler"])
    assert view.pipe_names == own.pipe_names == ["tok2vec", "tagger", "parser"]
    assert sorted(view.disabled) == sorted(own.disabled)
    sentences = ["The  man\tsaid  hello .", "  Two spaces first ."] + [
        s for t in imdb_texts[:4] for s in split_sentences(t)][:40]

    def read(nlp):
        return [[(t.tag_, t.dep_, t.head.i, t.pos_) for t in d] for d in nlp.pipe(sentences)]
    assert read(view) == read(own)
    with view.select_pipes(enable=["tok2vec", "tagger"]):
        assert {"parser", "ner", "lemmatizer", "attribute_ruler"} <= set(full.pipe_names)
        doc = full("Peter Cook met the black women of the village.")
    assert [e.label_ for e in doc.ents] == ["PERSON"] and doc[5].lemma_ == "woman" and doc[5].dep_ == "dobj"


def test_an_attribute_ruler_that_sets_other_tags_keeps_running(tmp_path):
    """Left out only where it does what spaCy's English pipelines' does: a pipeline whose ruler sets other tags (a
    user's own) keeps it, and its tags."""
    import spacy

    from hinter.validity.parsers import DEFAULT_SPACY_MODEL, _SpacyWorker

    assert _SpacyWorker(DEFAULT_SPACY_MODEL, 64)._space_rules == (True, True)
    nlp = spacy.load(DEFAULT_SPACY_MODEL, exclude=["ner", "lemmatizer"])
    nlp.get_pipe("attribute_ruler").add([[{"LOWER": "hello"}]], {"TAG": "NNP"})
    nlp.to_disk(tmp_path / "custom")
    custom = _SpacyWorker(str(tmp_path / "custom"), 64)
    assert custom._space_rules is None and "attribute_ruler" in custom.nlp.pipe_names
    assert custom.tag(["He said hello twice ."]) == [("PRP", "VBD", "NNP", "RB", ".")]
