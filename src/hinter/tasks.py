"""Tasks for generative models: labels, the paper's prompt (Table 7) and few-shot examples (Table 8),
and the answer parser that maps free text to labels.

The five presets are the paper's: imdb, ecthr, eurlex, ledgar, scotus. A user task is a YAML or JSON
file with the same fields as `Task` (see `load_task_file`).
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from .errors import InputError
from .models.base import Outcome


NO_LABEL_ANSWERS = {"no violation", "no violations", "no labels", "no label", "nothing"}


def _norm(text: str) -> str:
    """Lower case, every run of non-alphanumerics one space: 'Article 1, of Protocol No.1' -> 'article 1 of protocol no 1'."""
    return " " + " ".join(re.findall(r"[^\W_]+", text.lower())) + " "


@dataclass(frozen=True)
class Task:
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

    def parse_answer(self, answer: str) -> Outcome:
        """Labels named in the answer, matched as whole words, ignoring case and punctuation.

        Single-label: exactly one label named, else unparseable ("positive or negative" names two).
        Multi-label: the set of labels named; "None" (alone, or opening the answer) is the empty set;
        an answer naming no label is unparseable.
        """
        body = _norm(answer)
        prefix = _norm(self.answer_prefix)
        if prefix.strip() and body.startswith(prefix):  # a model that repeats "Answer:"
            body = " " + body[len(prefix):]
        # "Articles 3, 6 and 8" -> "article 3 article 6 article 8"
        remaining = re.sub(r" articles?((?: (?:and |or )?\d+)+)(?= )",
                           lambda m: "".join(f" article {n}" for n in re.findall(r"\d+", m.group(1))), body)
        found: list[str] = []
        for spelling, label in self._spellings():
            if spelling in remaining:
                if label not in found:
                    found.append(label)
                remaining = remaining.replace(spelling, " | ")  # keeps word boundaries, blocks overlapping matches
        if self.multi_label:
            if found:
                return Outcome(frozenset(found), answer)
            if body.startswith(_norm(self.none_answer)) or body.strip() in NO_LABEL_ANSWERS:
                return Outcome(frozenset(), answer)
            return Outcome(None, answer)
        return Outcome(found[0] if len(found) == 1 else None, answer)

# The 100 EuroVoc level-2 concepts of LexGLUE EURLEX (MultiEURLEX level 2, the 100 most frequent), id -> name.
EUROVOC_CONCEPTS = {
    "100163": "political framework", "100168": "politics and public safety",
    "100169": "executive power and public service", "100170": "international affairs", "100171": "cooperation policy",
    "100172": "international security", "100173": "defence", "100174": "EU institutions and European civil service",
    "100175": "European Union law", "100176": "European construction", "100177": "EU finance", "100179": "civil law",
    "100180": "criminal law", "100183": "international law", "100184": "rights and freedoms",
    "100185": "economic policy", "100186": "economic conditions", "100187": "regions and regional policy",
    "100189": "national accounts", "100190": "economic analysis", "100191": "trade policy", "100192": "tariff policy",
    "100193": "trade", "100194": "international trade", "100195": "consumption", "100196": "marketing",
    "100197": "distributive trades", "100198": "monetary relations", "100199": "monetary economics",
    "100200": "financial institutions and credit", "100201": "free movement of capital",
    "100202": "financing and investment", "100204": "public finance and budget policy", "100205": "budget",
    "100206": "taxation", "100207": "prices", "100212": "social affairs", "100214": "social protection",
    "100215": "health", "100220": "documentation", "100221": "communications",
    "100222": "information and information processing", "100223": "information technology and data processing",
    "100224": "natural and applied sciences", "100226": "business organisation", "100227": "business classification",
    "100229": "management", "100230": "accounting", "100231": "competition", "100232": "employment",
    "100233": "labour market", "100234": "organisation of work and working conditions",
    "100235": "personnel management and staff remuneration", "100237": "transport policy",
    "100238": "organisation of transport", "100239": "land transport",
    "100240": "maritime and inland waterway transport", "100241": "air and space transport",
    "100242": "environmental policy", "100243": "natural environment", "100244": "deterioration of the environment",
    "100245": "agricultural policy", "100246": "agricultural structures and production", "100247": "farming systems",
    "100248": "cultivation of agricultural land", "100249": "means of agricultural production",
    "100250": "agricultural activity", "100252": "fisheries", "100253": "plant product", "100254": "animal product",
    "100255": "processed agricultural produce", "100256": "beverages and sugar", "100257": "foodstuff",
    "100258": "agri-foodstuffs", "100259": "food technology", "100260": "production",
    "100261": "technology and technical regulations", "100262": "research and intellectual property",
    "100263": "energy policy", "100264": "coal and mining industries", "100265": "oil industry",
    "100266": "electrical and nuclear industries", "100268": "industrial structures and policy",
    "100269": "chemistry", "100270": "iron, steel and other metal industries", "100271": "mechanical engineering",
    "100272": "electronics and electrical engineering", "100273": "building and public works",
    "100274": "wood industry", "100275": "leather and textile industries", "100276": "miscellaneous industries",
    "100277": "Europe", "100278": "regions of EU Member States", "100279": "America", "100280": "Africa",
    "100281": "Asia and Oceania", "100282": "economic geography", "100283": "political geography",
    "100284": "overseas countries and territories", "100285": "United Nations",
}

# LexGLUE LEDGAR's 100 labels (the paper's Table 6 lists them, partly garbled by PDF extraction).
LEDGAR_LABELS = (
    "Adjustments", "Agreements", "Amendments", "Anti-Corruption Laws", "Applicable Laws", "Approvals", "Arbitration",
    "Assignments", "Assigns", "Authority", "Authorizations", "Base Salary", "Benefits", "Binding Effects", "Books",
    "Brokers", "Capitalization", "Change In Control", "Closings", "Compliance With Laws", "Confidentiality",
    "Consent To Jurisdiction", "Consents", "Construction", "Cooperation", "Costs", "Counterparts", "Death",
    "Defined Terms", "Definitions", "Disability", "Disclosures", "Duties", "Effective Dates", "Effectiveness",
    "Employment", "Enforceability", "Enforcements", "Entire Agreements", "Erisa", "Existence", "Expenses", "Fees",
    "Financial Statements", "Forfeitures", "Further Assurances", "General", "Governing Laws", "Headings",
    "Indemnifications", "Indemnity", "Insurances", "Integration", "Intellectual Property", "Interests",
    "Interpretations", "Jurisdictions", "Liens", "Litigations", "Miscellaneous", "Modifications", "No Conflicts",
    "No Defaults", "No Waivers", "Non-Disparagement", "Notices", "Organizations", "Participations", "Payments",
    "Positions", "Powers", "Publicity", "Qualifications", "Records", "Releases", "Remedies", "Representations",
    "Sales", "Sanctions", "Severability", "Solvency", "Specific Performance", "Submission To Jurisdiction",
    "Subsidiaries", "Successors", "Survival", "Tax Withholdings", "Taxes", "Terminations", "Terms", "Titles",
    "Transactions With Affiliates", "Use Of Proceeds", "Vacations", "Venues", "Vesting", "Waiver Of Jury Trials",
    "Waivers", "Warranties", "Withholdings",
)

ECTHR_ARTICLES = ("Article 2", "Article 3", "Article 5", "Article 6", "Article 8", "Article 9", "Article 10",
                  "Article 11", "Article 14", "Article 1 of Protocol 1")

SCOTUS_ISSUE_AREAS = ("Criminal Procedure", "Civil Rights", "First Amendment", "Due Process", "Privacy", "Attorneys",
                      "Unions", "Economic Activity", "Judicial Power", "Federalism", "Interstate Relations",
                      "Federal Taxation", "Miscellaneous", "Private Action")

# Prompts: the paper's Table 7 (system prompt, question) and Table 8 (three examples per task), verbatim
# apart from PDF-extraction damage; [LABELS] is the label list of Tables 3 and 6.
IMDB = Task(
    name="imdb",
    labels=("Positive", "Negative"),
    system_prompt="Your task is to determine whether the emotional tone or attitude in the provided Internet Movie "
                  "Database (IMDB) review is positive or negative.",
    question="Is the expressed sentiment conveyed in the IMDB text positive or negative?",
    examples=(
        ("In 1970, after a five-year absence, Kurosawa made what would be his first film in color", "Positive"),
        ("Don't waste your time on this film", "Negative"),
        ("I know technically this isn't the greatest TV show ever", "Positive"),
    ),
    text_name="Review",
    answer_prefix="Sentiment:",
)

ECTHR = Task(
    name="ecthr",
    labels=ECTHR_ARTICLES,
    system_prompt="Identify any violations of the specified European Court of Human Rights (ECTHR) articles "
                  "([LABELS]) based on the provided factual paragraph. Only answer with the following format: "
                  "Answer: Article X, Article X, Article X",
    question="Which articles of the European Court of Human Rights are violated in this case, if any?",
    examples=(
        ("5. The applicant was born in 1960 and lives in Gaziantep", "Article 6"),
        ("7. The applicant was born in 1957 and lives in Nicosia", "Article 8, Article 1 of Protocol 1"),
        ("4. The applicant was born in 1941 and lives in Sosnowiec", "None"),
    ),
    text_name="Facts",
    multi_label=True,
    aliases=(("P1-1", "Article 1 of Protocol 1"), ("Article 1 of Protocol No. 1", "Article 1 of Protocol 1"),
             ("Article 1 of the Protocol No. 1", "Article 1 of Protocol 1"), ("Protocol 1", "Article 1 of Protocol 1"),
             ("Protocol No. 1", "Article 1 of Protocol 1")),
)

EURLEX = Task(
    name="eurlex",
    labels=tuple(EUROVOC_CONCEPTS.values()),
    system_prompt="Given a document from the EUR-Lex portal containing European Union (EU) legislation predict its "
                  "relevant EuroVoc labels among [LABELS].",
    question="Which are the relevant EuroVoc labels of the provided European Union legislation?",
    examples=(
        ("COMMISSION REGULATION (EC) No 1588/1999",
         "EU finance, tariff policy, agricultural activity, fisheries, industrial structures and policy"),
        ("COMMISSION REGULATION (EC) No 854/2007", "trade policy, beverages and sugar"),
        ("COMMISSION REGULATION (EEC) No 1481/83",
         "tariff policy, natural and applied sciences, means of agricultural production"),
    ),
    text_name="Document",
    multi_label=True,
)

LEDGAR = Task(
    name="ledgar",
    labels=LEDGAR_LABELS,
    system_prompt="Identify the single main theme among the specified labels ([LABELS]) within a provided contract "
                  "provision in the Electronic Data Gathering, Analysis, and Retrieval database sourced from the US "
                  "Securities and Exchange Commission.",
    question="Which label represents the single main topic of the provided contract provision?",
    examples=(
        ("Any waiver of a provision of this Agreement", "Waivers"),
        ("This Agreement has been duly executed and delivered", "Enforceability"),
        ("Any written notices required in this Agreement may be made by personal delivery", "Notices"),
    ),
    text_name="Provision",
)

SCOTUS = Task(
    name="scotus",
    labels=SCOTUS_ISSUE_AREAS,
    system_prompt="Identify the single main issue area ([LABELS]) in the provided US Supreme Court opinions. Only "
                  "answer with the relevant area following the format: Answer: X.",
    question="Which single-label represents the relevant SCOTUS issue area of the provided court opinion?",
    examples=(
        ("362 U.S. 58 80 S.Ct. 612 4 L.Ed.2d 535Having considered the briefs and oral arguments submitted by both "
         "sides, the Court makes the following disposition of these matters:", "Civil Rights"),
        ("344 U.S. 443 73 S.Ct. 437 97 L.Ed. 469 Bennie DANIELS and Lloyd Ray Daniels Two general problems are these:",
         "Criminal Procedure"),
        ("358 U.S. 64 79 S.Ct. 116 3 L.Ed.2d 106The motion for leave to file bill of complaint is denied",
         "Interstate Relations"),
    ),
    text_name="Opinion",
)

TASKS = {t.name: t for t in (IMDB, ECTHR, EURLEX, LEDGAR, SCOTUS)}
TASK_FIELDS = ("name", "labels", "system_prompt", "question", "examples", "text_name", "answer_prefix", "multi_label",
               "none_answer", "aliases")


def load_task_file(path: str | Path) -> Task:
    """A user task from YAML or JSON: name, labels, system_prompt, question, examples (a list of [text, answer]
    pairs or {text, answer} objects), and optionally text_name, answer_prefix, multi_label, none_answer, aliases."""
    p = Path(path)
    where = f"task file {p}"
    try:
        content = p.read_text(encoding="utf-8")
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
    unknown = sorted(set(data) - set(TASK_FIELDS))
    if unknown:
        raise InputError(f"unknown field(s) {', '.join(unknown)}", where=where, fix=f"Known fields: {', '.join(TASK_FIELDS)}.")
    missing = [f for f in ("labels", "system_prompt", "question") if not data.get(f)]
    if missing:
        raise InputError(f"missing field(s) {', '.join(missing)}", where=where, fix="Every task needs labels, "
                         "system_prompt and question (examples are optional but help small models).")
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
    if not isinstance(aliases, dict) or any(v not in labels for v in aliases.values()):
        raise InputError("aliases must map other spellings to labels", where=where, fix='Write e.g. aliases: {"P1-1": "Article 1 of Protocol 1"}.')
    kwargs = {k: data[k] for k in ("text_name", "answer_prefix", "none_answer") if k in data}
    return Task(name=str(data.get("name") or p.stem), labels=tuple(labels), system_prompt=data["system_prompt"],
                question=data["question"], examples=tuple(examples), multi_label=bool(data.get("multi_label", False)),
                aliases=tuple(aliases.items()), **kwargs)


def get_task(name: str | Task) -> Task:
    """A preset by name (imdb, ecthr, eurlex, ledgar, scotus), a task file (.yaml/.yml/.json), or a Task."""
    if isinstance(name, Task):
        return name
    if name in TASKS:
        return TASKS[name]
    if Path(name).suffix.lower() in {".yaml", ".yml", ".json"}:
        if not Path(name).is_file():
            raise InputError("no such task file", where=f"--task {name}", fix="Give the path of a YAML or JSON task file.")
        return load_task_file(name)
    raise InputError(f"unknown task {name!r}", where="--task",
                     fix=f"Known tasks: {', '.join(TASKS)}; or give a YAML/JSON task file.")
