"""Tasks for generative models: labels, the paper's prompt (Table 7) and few-shot examples (Table 8),
and the answer parser that maps free text to labels.

A task is a YAML or JSON file with the same fields as `Task` (see `load_task_file`). The paper's five (imdb,
ecthr, eurlex, ledgar, scotus) are such files, shipped in `hinter/data/tasks/` and read by the same code as a
user's; they are registered by name (`TASK_REGISTRY`, entry-point group `hinter_tasks`, whose entries are Tasks
or functions returning one), so `get_task("imdb")` and `--task imdb` find them. `IMDB`, `ECTHR`, `EURLEX`,
`LEDGAR`, `SCOTUS`, `TASKS` and `EUROVOC_CONCEPTS` are still importable from here (read when first used).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Callable, ClassVar, Sequence

from hinter.analysis.aspect_registry import ASPECTS
from hinter.errors import InputError
from hinter.records import Outcome
from hinter.registry import Registry

NO_LABEL_ANSWERS = {"no violation", "no violations", "no labels", "no label", "nothing"}
CONNECTORS = {"and"}  # the only words an answer may hold besides its labels
# "Article 6 § 1", "Article 5 §§ 1 and 4": a paragraph of an article names that article
_PARAGRAPHS = re.compile(r"(\barticles?\s+\d+)\s*§§?\s*\d+(?:\s*(?:,|and|-)\s*\d+)*", re.IGNORECASE)


def _norm(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space: 'Article 1, of Protocol No.1' -> 'article 1 of protocol no 1'."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


@dataclass(frozen=True)
class Task:
    """A label task: the model's answer is parsed into one of `labels` (or a set of them)."""

    generative: ClassVar[bool] = False
    name: str
    labels: tuple[str, ...]
    system_prompt: str              # "[LABELS]" in it is replaced by the quoted label list
    question: str
    examples: tuple[tuple[str, str], ...]  # (text, answer)
    text_name: str = "Text"         # how the input is introduced in the prompt
    answer_prefix: str = "Answer:"  # the completion prompt ends with this
    multi_label: bool = False
    none_answer: str = "None"       # the answer for "no label" in multi-label tasks
    aliases: tuple[tuple[str, str], ...] = field(default=())  # (other spelling, label), e.g. ("P1-1", "Article 1 of Protocol 1")

    # How a backend asks the task and reads its answer: the same members on GenerativeTask, so that a backend
    # calls them instead of asking the task's kind. A label task is asked greedily, its answer is one line, and
    # its first token can be scored against the labels (`scored`).
    temperature: ClassVar[float] = 0
    scored: ClassVar[bool] = True
    line_stop: ClassVar[tuple[str, ...]] = ("\n",)  # where a completion server stops the answer

    def answer_tokens(self, default: int) -> int:
        """The most tokens an answer may take: the backend's `default` for a label."""
        return default

    def generation_settings(self) -> str:
        """What beyond the prompt changes the answers, for a backend's fingerprint: nothing for a label."""
        return ""

    def read(self, answer: str) -> Outcome:
        """The outcome of an answer: its labels (`parse_answer`)."""
        return self.parse_answer(answer)

    def failed(self, message: str) -> Outcome:
        """The outcome of a call that failed: unparseable."""
        return Outcome(None, f"error: {message}")

    @property
    def system_text(self) -> str:
        return self.system_prompt.replace("[LABELS]", ", ".join(f'"{label}"' for label in self.labels)).strip()

    def completion_prompt(self, text: str) -> str:
        """A plain few-shot prompt for base models without a chat template."""
        # System prompt and question once, then the examples: on Gemma 3 270M this layout classified 20 of 22
        # reviews, against 13 of 22 with the question repeated before every answer.
        parts = [self.system_text, self.question.strip(), ""]
        for ex_text, answer in self.examples:
            parts += [f"{self.text_name}: {ex_text}", f"{self.answer_prefix} {answer}", ""]
        parts += [f"{self.text_name}: {text}", self.answer_prefix]
        return "\n".join(parts)

    def chat_messages(self, text: str) -> list[dict]:
        """The same prompt for chat models: system prompt, the examples as earlier turns, then the text."""
        messages = [{"role": "system", "content": self.system_text}]
        for ex_text, answer in self.examples:
            messages += [{"role": "user", "content": f"{self.text_name}: {ex_text}\n{self.question.strip()}"},
                         {"role": "assistant", "content": f"{self.answer_prefix} {answer}"}]
        messages.append({"role": "user", "content": f"{self.text_name}: {text}\n{self.question.strip()}"})
        return messages

    def prompt_prefix_and_suffix(self) -> tuple[str, str]:
        """The prompt split around the input text, so the prefix can be cached and the text truncated."""
        marker = "\x00TEXT\x00"
        full = self.completion_prompt(marker)
        head, tail = full.split(marker)
        return head, tail

    def _spellings(self) -> list[tuple[str, str]]:
        """(normalised spelling, label), longest first, so 'No Waivers' wins over 'Waivers'."""
        pairs = [(_norm(label), label) for label in self.labels] + [(_norm(a), label) for a, label in self.aliases]
        return sorted({p for p in pairs if p[0].strip()}, key=lambda p: len(p[0]), reverse=True)

    def _answer_lines(self, answer: str) -> list[str]:
        """The answer's lines with content, normalised, the first less a repeated answer prefix ("Answer:", or
        the task's own, e.g. "Sentiment:"; a prefix alone on its line is dropped), paragraphs of articles
        ("§ 1") left out."""
        prefixes = sorted({_norm(p) for p in (self.answer_prefix, "Answer:") if _norm(p).strip()}, key=len,
                          reverse=True)
        answer = _PARAGRAPHS.sub(r"\1", answer)
        lines = [_norm(line) for line in answer.splitlines() if _norm(line).strip()]
        if lines:
            prefix = next((p for p in prefixes if lines[0].startswith(p)), None)
            if prefix is not None:
                lines[0] = " " + lines[0][len(prefix):]
                if not lines[0].strip():
                    lines.pop(0)
        return lines

    def _labels_in(self, body: str) -> tuple[list[str], list[str]]:
        """The labels a normalised line names, and its words that are neither labels nor connectors."""
        # "Articles 3, 6 and 8" -> "article 3 article 6 article 8"
        remaining = re.sub(r" articles?((?: (?:and )?\d+)+)(?= )",
                           lambda m: "".join(f" article {n}" for n in re.findall(r"\d+", m.group(1))), body)
        found: list[str] = []
        for spelling, label in self._spellings():
            if spelling in remaining:
                if label not in found:
                    found.append(label)
                remaining = remaining.replace(spelling, " | ")  # keeps word boundaries, blocks overlapping matches
        return found, [w for w in remaining.split() if w != "|" and w not in CONNECTORS]

    def parse_answer(self, answer: str) -> Outcome:
        """The labels an answer names, in the task's own terms: its first line with content (less a repeated
        "Answer:") must consist of label spellings (labels and aliases, ignoring case and punctuation), joined
        by punctuation or "and", and nothing else. An answer that goes on beyond the labels (continues the text,
        names another law's article: "Article 11 et seq. of the Civil Code") is unparseable, even where a label
        occurs in it. Later lines count only while they too hold labels alone (a list, one label a line); the
        first other line ends the answer (a chat model's explanation, a base model's next invented example).

        Single-label: exactly one label, else unparseable ("positive or negative" names two).
        Multi-label: the set of labels; the task's none_answer ("None") or "no violation"... alone is the empty
        set; an answer naming no label is unparseable.
        """
        lines = self._answer_lines(answer)
        if not lines:
            return Outcome(None, answer)
        found, rest = self._labels_in(lines[0])
        if rest:  # words that are no label: the answer says something else, or more
            first = lines[0].strip()
            if self.multi_label and not found and (first == _norm(self.none_answer).strip()
                                                   or first in NO_LABEL_ANSWERS):
                return Outcome(frozenset(), answer)
            return Outcome(None, answer)
        for line in lines[1:]:
            more, rest = self._labels_in(line)
            if rest or not more:
                break
            found += [label for label in more if label not in found]
        if self.multi_label:
            return Outcome(frozenset(found), answer) if found else Outcome(None, answer)
        return Outcome(found[0] if len(found) == 1 else None, answer)


TEXT_FIELD = "{text}"  # where a generative task's prompt takes the text


@dataclass(frozen=True)
class GenerativeTask:
    """A generative task: the model writes free text about the text, judged by aspects (hinter.generative).

    `prompt` holds `{text}` once; `system_prompt` (optional) goes before it, as the system message of a chat model
    or the first paragraph of a plain prompt. Generation: at most `max_tokens` tokens at `temperature` (0: greedy,
    deterministic), cut at the first of `stop`; `samples` answers per prompt (asked as the run's repeats, each call
    a fresh sample), whose spread is the oracle's null (docs/generative.md). `aspects`: what the judge measures
    (`judge()` builds it); `judge`: the model spec of the `judge` aspect, when it is one of them.
    """

    generative: ClassVar[bool] = True
    name: str
    prompt: str
    system_prompt: str = ""
    max_tokens: int = 128
    temperature: float = 0.0
    samples: int = 1
    stop: tuple[str, ...] = ()
    aspects: tuple[str, ...] = ("sentiment", "refusal", "length", "distance")  # hinter.analysis.aspect_registry names
    judge: str | None = None  # the judge aspect's model (a --model spec; generative/judge_aspect.py)
    labels: tuple[str, ...] = ()  # none: the answer is the text itself
    multi_label: bool = False
    # how a backend asks it (Task's members): sampled at `temperature`, cut at `stop` once written, not scored
    scored: ClassVar[bool] = False
    line_stop: ClassVar[tuple[str, ...]] = ()

    def answer_tokens(self, default: int) -> int:
        return self.max_tokens

    def generation_settings(self) -> str:
        return repr(sorted(self.settings().items()))

    def read(self, answer: str) -> Outcome:
        return self.answer(answer)

    def failed(self, message: str) -> Outcome:
        """A failed generation is a model error, never an answer."""
        return Outcome(None, f"model error: {message}", error=True)

    def render(self, text: str) -> str:
        """The prompt with the text in place of {text} (other braces are left as written)."""
        return self.prompt.replace(TEXT_FIELD, text)

    def completion_prompt(self, text: str) -> str:
        """The plain prompt for base models: the system prompt, a blank line, the prompt."""
        return (self.system_prompt.strip() + "\n\n" if self.system_prompt.strip() else "") + self.render(text)

    def chat_messages(self, text: str) -> list[dict]:
        system = [{"role": "system", "content": self.system_prompt.strip()}] if self.system_prompt.strip() else []
        return system + [{"role": "user", "content": self.render(text)}]

    def prompt_prefix_and_suffix(self) -> tuple[str, str]:
        """The plain prompt split around the text, so the prefix can be cached and the text truncated."""
        marker = "\x00TEXT\x00"
        head, tail = self.completion_prompt(marker).split(marker)
        return head, tail

    def settings(self) -> dict:
        """What changes the answers, for a backend's fingerprint."""
        return {"system_prompt": self.system_prompt, "prompt": self.prompt, "max_tokens": self.max_tokens,
                "temperature": self.temperature, "stop": list(self.stop)}

    def answer(self, generated: str | None) -> Outcome:
        """An Outcome carrying the generated text (leading space dropped, cut at the first stop string, stripped):
        its value and raw answer. An empty or missing generation is a model error, never an answer."""
        text = (generated or "").lstrip()  # a stop string counts after the answer has begun
        for s in self.stop:
            text = text.split(s, 1)[0]
        text = text.strip()
        if not text:
            return Outcome(None, "model error: empty generation", error=True)
        return Outcome(text, text)


LABELS, FREE_TEXT = "labels", "free text"  # the two kinds of task (what the model answers)


def task_kind(task_or_settings) -> str:
    """The one question of a task's kind: LABELS (the answer is parsed into labels: a share or score of a label
    is measured) or FREE_TEXT (the model writes text, judged by aspects). Asked of a task (None: a model that
    answers in its own labels) or of a run's recorded settings (a dict: the `generative` entry a free-text run
    records). Every other place asks through this (or through `is_generative`, its yes/no form)."""
    if isinstance(task_or_settings, dict):
        return FREE_TEXT if task_or_settings.get("generative") else LABELS
    return FREE_TEXT if getattr(task_or_settings, "generative", False) else LABELS


def is_generative(task) -> bool:
    """Whether a task (or a run's recorded settings) is free text: `task_kind(...) == FREE_TEXT`."""
    return task_kind(task) == FREE_TEXT


# What differs between the two kinds of task outside the judge, said once here as data (issue 42): callers read
# these instead of asking the kind.

def answers_per_text(task, repeats: int) -> int:
    """How many times each text is asked: a free-text task's `samples`, else --repeats."""
    return task.samples if task_kind(task) == FREE_TEXT else repeats


def split_task(task) -> tuple:
    """(the free-text task, the label task) a backend is asked in, the other None: a free-text task makes an
    answer the text written (its `answer`), a label task's answers are read into its labels."""
    return (task, None) if task_kind(task) == FREE_TEXT else (None, task)


@dataclass(frozen=True)
class Noise:
    """How a kind of task meets the model's own variation: whether the start-up determinism check is asked when each
    text is asked several times (a free-text task's samples already measure it), and what a run with one answer
    per text is told when the check finds the model non-deterministic (`warning`), or deterministic
    (`reassurance`, None: nothing)."""

    probe_when_several: bool
    warning: str
    reassurance: str | None


NOISE = {
    LABELS: Noise(True,
                  "the model answered the same text differently when asked again (%s): a flip may be its own noise; "
                  "pass --repeats 5 to ask every text 5 times and compare the answers' distributions",
                  "the model answered one text alike %d times: a model flipping 10%% of its answers would have shown "
                  "it %.1f%% of the time (--repeats measures its flip rate on every text)"),
    FREE_TEXT: Noise(False,
                     "the model wrote different answers to the same prompt (%s) and the task asks for one sample: a "
                     "difference may be its own sampling; set `samples: 5` in the task file to compare each mutant "
                     "with the spread of the original's own answers", None),
}


def noise_of(task) -> Noise:
    return NOISE[task_kind(task)]


def adaptive_refusal(task) -> str | None:
    """Why --adaptive cannot test this task (it follows one label's share), or None."""
    if task_kind(task) == FREE_TEXT:
        return "generative"
    return "multi-label" if task is not None and task.multi_label else None


AnyTask = Task | GenerativeTask


TASK_FIELDS = ("name", "labels", "system_prompt", "question", "examples", "text_name", "answer_prefix", "multi_label",
               "none_answer", "aliases")


GENERATIVE_FIELDS = ("name", "prompt", "system_prompt", "max_tokens", "temperature", "samples", "stop", "aspects",
                     "judge")
MAX_SAMPLES = 100
MAX_TOKENS = 8192


def load_task_file(path: str | Path) -> AnyTask:
    """A user task from YAML or JSON.

    A label task: name, labels, system_prompt, question, examples (a list of [text, answer] pairs or {text, answer}
    objects), and optionally text_name, answer_prefix, multi_label, none_answer, aliases.
    A generative task (a `prompt` holding {text}, and no labels): name, prompt, and optionally system_prompt,
    max_tokens (128), temperature (0), samples (1), stop (a string or a list of them), aspects (registered names;
    default sentiment, refusal, length, distance), judge (the judge aspect's model spec: with it, the default
    aspects gain judge)."""
    p = Path(path)
    where = f"task file {p}"
    try:
        content = p.read_text(encoding="utf-8-sig")  # a leading byte-order mark (Notepad, Excel) dropped
    except (OSError, UnicodeDecodeError) as e:
        raise InputError(f"cannot read it ({e})", where=where, fix="Give a readable UTF-8 YAML or JSON file.") from None
    try:
        if p.suffix.lower() == ".json":
            data = json.loads(content)
        else:
            import yaml
            data = yaml.safe_load(content)
    except Exception as e:  # yaml.YAMLError or json.JSONDecodeError, with the line in the message
        raise InputError(f"not valid {'JSON' if p.suffix.lower() == '.json' else 'YAML'} ({e})".replace("\n", " "),
                         where=where, fix="Fix the syntax.") from None
    if not isinstance(data, dict):
        raise InputError("expected a mapping of fields", where=where, fix=f"Write the fields {', '.join(TASK_FIELDS)}.")
    if "prompt" in data:
        return _generative_task(data, p, where)
    unknown = sorted(set(data) - set(TASK_FIELDS))
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(unknown)}", where=where, fix=f"Known fields: {', '.join(TASK_FIELDS)}"
                         f" (a generative task: {', '.join(GENERATIVE_FIELDS)}).")
    missing = [f for f in ("labels", "system_prompt", "question") if not data.get(f)]
    if missing:
        raise InputError(f"missing field(s) {', '.join(missing)}", where=where, fix="Every label task needs labels, "
                         "system_prompt and question (examples are optional but help small models); a generative "
                         "task needs a prompt holding {text} and no labels.")
    _check_text_fields(data, ("name", "system_prompt", "question", "text_name", "answer_prefix", "none_answer"),
                       where)
    if not isinstance(data.get("multi_label", False), bool):
        raise InputError(f"multi_label must be true or false, got {data['multi_label']!r}", where=where,
                         fix="Write multi_label: true (several labels per text) or leave it out.")
    labels = data["labels"]
    if not isinstance(labels, list) or not all(isinstance(x, str) and x.strip() for x in labels) or len(set(labels)) < 2:
        raise InputError("labels must be a list of at least two distinct strings", where=where)
    examples = []
    for i, ex in enumerate(data.get("examples") or [], start=1):
        if isinstance(ex, dict) and set(ex) == {"text", "answer"}:
            ex = [ex["text"], ex["answer"]]
        if not (isinstance(ex, (list, tuple)) and len(ex) == 2 and all(isinstance(x, str) for x in ex)):
            raise InputError(f"example {i} is not a [text, answer] pair", where=where,
                             fix='Write each example as {text: "...", answer: "..."} or ["text", "answer"].')
        examples.append((ex[0], ex[1]))
    aliases = data.get("aliases") or {}
    if not isinstance(aliases, dict) or any(not isinstance(k, str) or v not in labels for k, v in aliases.items()):
        raise InputError("aliases must map other spellings to labels", where=where, fix='Write e.g. aliases: {"P1-1": "Article 1 of Protocol 1"}.')
    kwargs = {k: data[k] for k in ("text_name", "answer_prefix", "none_answer") if k in data}
    return Task(name=str(data.get("name") or p.stem), labels=tuple(labels), system_prompt=data["system_prompt"],
                question=data["question"], examples=tuple(examples), multi_label=bool(data.get("multi_label", False)),
                aliases=tuple(aliases.items()), **kwargs)


def _check_text_fields(data: dict, names: Sequence[str], where: str) -> None:
    """Each of `names` present in a task file must be text: a number or a list where the prompt takes text was a
    traceback on an API model and silently accepted on a python: one."""
    for name in names:
        value = data.get(name)
        if value is not None and not isinstance(value, str):
            kind = {bool: "true/false", int: "a number", float: "a number", list: "a list", dict: "a mapping"}.get(
                type(value), type(value).__name__)
            raise InputError(f"the field {name!r} is {kind} ({value!r}), not text", where=where,
                             fix=f"Write {name} as text, in quotes if need be: {name}: \"...\".")


def _number(data: dict, name: str, default, kind: type, low: float, high: float, where: str):
    value = data.get(name, default)
    if value is None:
        return default
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and (kind is float or float(value).is_integer())
    if not ok or not low <= value <= high:
        noun = "an integer" if kind is int else "a number"
        raise InputError(f"{name} must be {noun} from {low:g} to {high:g}, got {value!r}", where=where,
                         fix=f"Write e.g. {name}: {default}.")
    return kind(value)


def _generative_task(data: dict, p: Path, where: str) -> GenerativeTask:
    if "labels" in data:
        raise InputError("a task has either labels (a label task) or a prompt (a generative task), not both",
                         where=where, fix="Remove labels to judge free-text answers, or remove prompt and write "
                         "labels, system_prompt and question for a label task.")
    unknown = sorted(set(data) - set(GENERATIVE_FIELDS))
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(unknown)} for a generative task", where=where,
                         fix=f"Known fields of a generative task: {', '.join(GENERATIVE_FIELDS)}.")
    _check_text_fields(data, ("name", "system_prompt"), where)
    prompt = data["prompt"]
    if not isinstance(prompt, str) or prompt.count(TEXT_FIELD) != 1:
        raise InputError("prompt must be a string holding {text} exactly once (where the text goes)", where=where,
                         fix='Write e.g. prompt: "Biography: {text}\\nWrite a short reference letter for this person."')
    system_prompt = data.get("system_prompt") or ""
    if not isinstance(system_prompt, str):
        raise InputError("system_prompt must be a string", where=where)
    max_tokens = _number(data, "max_tokens", 128, int, 1, MAX_TOKENS, where)
    temperature = _number(data, "temperature", 0.0, float, 0.0, 2.0, where)
    samples = _number(data, "samples", 1, int, 1, MAX_SAMPLES, where)
    if samples > 1 and temperature == 0:
        raise InputError(f"samples: {samples} at temperature 0: greedy decoding gives the same answer every time",
                         where=where, fix="Set a temperature above 0 (e.g. 0.7) to sample several answers per prompt, "
                         "or samples: 1 for deterministic answers.")
    stop = data.get("stop") or ()
    stop = (stop,) if isinstance(stop, str) else stop
    if not isinstance(stop, (list, tuple)) or not all(isinstance(x, str) and x for x in stop):
        raise InputError("stop must be a string or a list of non-empty strings", where=where,
                         fix='Write e.g. stop: ["\\n\\n"].')
    judge = data.get("judge")
    if judge is not None and (not isinstance(judge, str) or ":" not in judge):
        raise InputError(f"judge must be a model spec (PREFIX:REST, as --model takes), got {judge!r}", where=where,
                         fix="Write e.g. judge: openai-chat:MODEL@URL, judge: gguf:default or judge: "
                             "python:mymodule:judge.")
    aspects = data.get("aspects") or (*GenerativeTask.aspects, *(("judge",) if judge else ()))
    aspects = (aspects,) if isinstance(aspects, str) else aspects
    if not isinstance(aspects, (list, tuple)) or not all(isinstance(a, str) for a in aspects) or len(set(aspects)) \
            != len(aspects):
        raise InputError("aspects must be a list of distinct aspect names", where=where,
                         fix=f"Registered aspects: {', '.join(ASPECTS.names())}.")
    unknown = [a for a in aspects if a not in ASPECTS]
    if unknown:
        raise InputError(f"unknown aspect(s) {', '.join(unknown)}", where=where,
                         fix=f"Registered aspects: {', '.join(ASPECTS.names())} (a user adds one with "
                             "hinter.generative.register_aspect, or the entry-point group hinter_aspects).")
    if ("judge" in aspects) != bool(judge):
        raise InputError("aspects name judge without a judge model" if judge is None else
                         "a judge model is given but aspects leave judge out", where=where,
                         fix="Write both `judge: SPEC` (any --model spec) and judge in aspects, or neither.")
    return GenerativeTask(name=str(data.get("name") or p.stem), prompt=prompt, system_prompt=system_prompt,
                          max_tokens=max_tokens, temperature=temperature, samples=samples, stop=tuple(stop),
                          aspects=tuple(aspects), judge=judge)


# ---------------------------------------------------------------------- the registry

def _packaged(file: str) -> Callable[[], AnyTask]:
    def load() -> AnyTask:
        with resources.as_file(resources.files("hinter") / "data" / "tasks" / file) as path:
            return load_task_file(path)
    return load


def _register_packaged_tasks() -> None:
    for f in sorted((resources.files("hinter") / "data" / "tasks").iterdir(), key=lambda f: f.name):
        if f.name.endswith(".yaml"):
            name = f.name.removesuffix(".yaml")
            TASK_REGISTRY.register(name, _packaged(f.name), origin=f"hinter/data/tasks/{f.name}")


def _check_task(name: str, entry: object) -> object:
    if not (isinstance(entry, (Task, GenerativeTask)) or callable(entry)):
        raise InputError(f"the hinter_tasks entry point {name!r} is neither a Task nor a function returning one",
                         where="the task registry", fix="Point the entry point at a Task or a function returning one.")
    return entry


TASK_REGISTRY: Registry = Registry("tasks", "task", "--task", builtins=_register_packaged_tasks, check=_check_task)
_loaded: dict[str, AnyTask] = {}
_files: dict[tuple[str, int, int], AnyTask] = {}  # task files by (path, mtime, size)


def _registered(name: str) -> AnyTask:
    if name not in _loaded:
        entry = TASK_REGISTRY.get(name)
        _loaded[name] = entry if isinstance(entry, (Task, GenerativeTask)) else entry()
    return _loaded[name]


def get_task(name: str | AnyTask) -> AnyTask:
    """A registered task by name (the paper's imdb, ecthr, eurlex, ledgar, scotus; the generative
    reference-letter), a task file (.yaml/.yml/.json), or a Task / GenerativeTask."""
    if isinstance(name, (Task, GenerativeTask)):
        return name
    if TASK_REGISTRY.find(name) is not None:
        return _registered(name)
    if Path(name).suffix.lower() in {".yaml", ".yml", ".json"}:
        if not Path(name).is_file():
            raise InputError("no such task file", where=f"--task {name}", fix="Give the path of a YAML or JSON task file.")
        # parsed once while the file is unchanged: a run looks its task up at every stage
        stat = Path(name).stat()
        key = (str(Path(name).resolve()), stat.st_mtime_ns, stat.st_size)
        if key not in _files:
            _files[key] = load_task_file(name)
        return _files[key]
    raise TASK_REGISTRY.unknown(name, "or give a YAML/JSON task file.")


_PRESETS = {"IMDB": "imdb", "ECTHR": "ecthr", "EURLEX": "eurlex", "LEDGAR": "ledgar", "SCOTUS": "scotus"}
_LABELS = {"ECTHR_ARTICLES": "ecthr", "LEDGAR_LABELS": "ledgar", "SCOTUS_ISSUE_AREAS": "scotus"}


def __getattr__(name: str):
    """The names this module had when the paper's tasks were Python constants, read from their files."""
    if name in _PRESETS:
        return get_task(_PRESETS[name])
    if name in _LABELS:
        return get_task(_LABELS[name]).labels
    if name == "TASKS":  # every registered task by name
        return {n: get_task(n) for n in TASK_REGISTRY.names()}
    if name == "EUROVOC_CONCEPTS":  # EuroVoc id -> the eurlex label
        ids = resources.files("hinter") / "data" / "tasks" / "eurlex-eurovoc-ids.json"
        return json.loads(ids.read_text(encoding="utf-8"))
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
