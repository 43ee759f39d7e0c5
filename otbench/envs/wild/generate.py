"""``python -m otbench.envs.wild.generate``: build Wild's dialogues from BFCL's tests, deterministically.

Each dialogue is planned first: a number of task-kind switches (the dialogue's index modulo 4, so every
count from 0 to 3 is equally common), then a sequence of four task kinds with exactly that many switches,
then a hidden intention for each later tool task. It is then realised task by task from BFCL's data:

- a task with everything stated is a BFCL question as BFCL wrote it (single or parallel calls, with its
  gold calls), or a request phrased from a function's :class:`~otbench.envs.wild.catalogue.Phrasing`
  with the arguments of one of BFCL's gold calls, or a :class:`~otbench.envs.wild.catalogue.Chain`
  (calls feeding each other) seeded with BFCL's gold values;
- a task with a hidden intention builds on an earlier task: the same request again with a new value
  ("Now do the same for 12", "And over 15 years?"), or another function of the same family about the
  earlier subject ("What's the company name behind that stock?", "And the age rating?"); said one or two
  turns later it is partial information (value left unsaid) or coreference (value referred to), three or
  more turns later a long-range dependency;
- a clarification request leaves its subject out ("Can you find the current price of a stock?") and the
  user's next turn gives it; chitchat is small talk, sometimes about something named earlier.

Every gold call is run (in this process, with the project's implementations) and its output stored; a
realisation whose calls fail, repeat an earlier call, or cannot carry a planned intention is tried again,
and a planned intention no attempt could carry falls back to another (the stored label is what the task
is). The offered functions are the ones the tasks need plus the most confusable others (same family,
same parameter names, similar names), numbered ``function_1..N`` once for the whole environment in a
seeded order. ``--check`` regenerates and compares with the committed files.
"""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from otbench.arguments import OneLineParser
from otbench.envs.bfcl.data import ALL_CATEGORIES, BfclTest, load_tests
from otbench.envs.bfcl.functions import FUNCTIONS
from otbench.envs.wild.catalogue import EQUIVALENT, PHRASINGS
from otbench.envs.wild.metrics import TOOL_KINDS
from otbench.envs.wild.realise import Bank, Made, realise
from otbench.envs.wild.scenario import Dialogue, count_switches
from otbench.errors import ConfigError
from otbench.exits import run_main
from otbench.outputs import OUTPUT_DIRECTORY, check_outputs

TOOLSET_FORMAT = "otbench.wild.toolset/1"
DATA_DIRECTORY = Path(__file__).parent / "data"
TOOLSET_FILE, DIALOGUES_FILE = "toolset.json", "dialogues.jsonl"
_KIND_WEIGHTS = {"single": 3.0, "series": 2.0, "parallel": 2.0, "series_parallel": 1.5, "clarification": 1.5,
                 "chitchat": 1.5}
_ATTEMPTS = 80


@dataclass(frozen=True)
class GenerationSpec:
    """Everything the generated data depends on (besides BFCL's wheel and the function implementations)."""

    seed: int = 0
    train: int = 32
    test: int = 48
    distractors: int = 4
    """Functions offered besides those the tasks need: the most confusable ones but one, and one at random."""


DEFAULT_SPEC = GenerationSpec()


# -- dialogues -----------------------------------------------------------------------------------------------------
def plan_kinds(rng: random.Random, switches: int) -> list[str]:
    """Four task kinds with exactly ``switches`` changes between neighbours, at least two of them tool tasks."""
    kinds = list(_KIND_WEIGHTS)
    weights = list(_KIND_WEIGHTS.values())
    while True:
        if switches == 0:
            plan = [rng.choices(["single", "series", "parallel"], [4, 3, 3])[0]] * 4
        else:
            positions = set(rng.sample(range(3), switches))
            plan = [rng.choices(kinds, weights)[0]]
            for boundary in range(3):
                if boundary in positions:
                    others = [k for k in kinds if k != plan[-1]]
                    plan.append(rng.choices(others, [_KIND_WEIGHTS[k] for k in others])[0])
                else:
                    plan.append(plan[-1])
        if sum(kind in TOOL_KINDS for kind in plan) >= 2:
            return plan


def plan_intentions(rng: random.Random, kinds: list[str]) -> list[str]:
    """A hidden intention for each tool task after the first (none for the others): a long-range dependency
    only where an earlier task's values lie three or more turns back, and twice as likely there (it is
    possible in few places); stating everything half as likely as each hidden intention."""
    starts = [sum(2 if k == "clarification" else 1 for k in kinds[:index]) for index in range(len(kinds))]
    stated = [start + (1 if kind == "clarification" else 0) for start, kind in zip(starts, kinds, strict=True)]
    plan = []
    for index, kind in enumerate(kinds):
        if not index or kind not in TOOL_KINDS:
            plan.append("none")
            continue
        far = any(starts[index] - stated[j] >= 3 for j in range(index) if kinds[j] != "chitchat")
        options = {"none": 0.5, "partial_information": 1.0, "coreference": 1.0, "long_range": 2.0 if far else 0.0}
        plan.append(rng.choices(list(options), list(options.values()))[0])
    return plan


def make_dialogue(bank: Bank, spec: GenerationSpec, split: str, index: int, openings: set[str]) -> Dialogue:
    """Dialogue ``index`` of ``split``; its first message is none of ``openings`` (a reference agent and a
    reader tell dialogues apart by it), and is added to them."""
    rng = random.Random(f"wild:{spec.seed}:{split}:{index}")
    switches = index % 4
    kinds = plan_kinds(rng, switches)
    intentions = plan_intentions(rng, kinds)
    best: list[Made] | None = None
    for _ in range(_ATTEMPTS):
        made = realise(bank, split, rng, kinds, intentions)
        if made is None or made[0].task.messages[0] in openings:
            continue
        if best is None or _carried(made, intentions) > _carried(best, intentions):
            best = made
        if _carried(best, intentions) == len(kinds):
            break
    if best is None:
        raise RuntimeError(f"no realisation of {split} dialogue {index}: {kinds}")
    tasks = tuple(m.task for m in best)
    openings.add(tasks[0].messages[0])
    needed = sorted({call.function for task in tasks for call in task.calls})
    functions = tuple(sorted({*needed, *distractors(rng, bank, needed, spec.distractors)}))
    return Dialogue(f"wild-{split}-{index:03d}", split, count_switches([t.kind for t in tasks]), functions, tasks)


def _carried(made: list[Made], intentions: list[str]) -> int:
    return sum(m.task.intention == wanted for m, wanted in zip(made, intentions, strict=True))


_NAME_TOKEN = re.compile(r"[A-Z]?[a-z]+|[A-Z]+(?![a-z])|\d+")
_COMMON_TOKENS = {"get", "by", "calculate", "calc", "the", "of", "from", "based", "on", "to", "name"}


def _tokens(name: str) -> set[str]:
    return {t.lower() for t in _NAME_TOKEN.findall(name)} - _COMMON_TOKENS


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def confusability(bank: Bank, a: str, b: str) -> float:
    """How easily one function is taken for another: same family, same parameter names, similar names."""
    family = PHRASINGS[a].family if a in PHRASINGS else ""
    same_family = bool(family) and b in PHRASINGS and PHRASINGS[b].family == family
    parameters = [set(bank.schemas[name].get("parameters", {}).get("properties", {})) for name in (a, b)]
    return 3.0 * same_family + 2.0 * _jaccard(*parameters) + _jaccard(_tokens(a), _tokens(b))


def distractors(rng: random.Random, bank: Bank, needed: list[str], count: int) -> list[str]:
    """``count`` functions besides ``needed``: the most confusable with any of them, and one at random."""
    candidates = sorted(name for name in bank.schemas if name not in needed and name in FUNCTIONS
                        and not any(frozenset({name, other}) in EQUIVALENT for other in needed))
    ties = {name: rng.random() for name in candidates}
    ranked = sorted(candidates, key=lambda g: (-max(confusability(bank, f, g) for f in needed), ties[g]))
    chosen = ranked[: max(count - 1, 0)]
    rest = [name for name in candidates if name not in chosen]
    return chosen + ([rng.choice(rest)] if count and rest else [])


def generate(tests: Sequence[BfclTest], spec: GenerationSpec = DEFAULT_SPEC) -> tuple[list[dict[str, Any]], list[Dialogue]]:
    """The toolset (BFCL's docs of every function offered, in the order that numbers them) and the dialogues
    (train first)."""
    bank = Bank.from_tests(tests)
    openings: set[str] = set()
    dialogues = [make_dialogue(bank, spec, split, index, openings)
                 for split, size in (("train", spec.train), ("test", spec.test)) for index in range(size)]
    used = sorted({name for dialogue in dialogues for name in dialogue.functions})
    random.Random(f"wild:{spec.seed}:names").shuffle(used)
    return [bank.schemas[name] for name in used], dialogues


def render_files(toolset: list[dict[str, Any]], dialogues: list[Dialogue]) -> tuple[bytes, bytes]:
    """The two data files' bytes, exactly as committed."""
    # keys keep their order: BFCL's parameters are shown in the order BFCL lists them
    toolset_bytes = (json.dumps({"format": TOOLSET_FORMAT, "functions": toolset}, indent=1, ensure_ascii=False)
                     + "\n").encode()
    dialogue_bytes = "".join(json.dumps(d.to_dict(), ensure_ascii=False) + "\n" for d in dialogues).encode()
    return toolset_bytes, dialogue_bytes


def fingerprint_of(toolset_bytes: bytes, dialogue_bytes: bytes) -> str:
    return hashlib.sha256(toolset_bytes + b"\0" + dialogue_bytes).hexdigest()


def statistics(dialogues: list[Dialogue]) -> dict[str, Any]:
    """Counts by split, task kind, hidden intention and switches (what PROVENANCE.md reports)."""
    tasks = [task for d in dialogues for task in d.tasks]
    return {
        "dialogues": dict(Counter(d.split for d in dialogues)),
        "kinds": dict(Counter(t.kind for t in tasks)),
        "intentions": dict(Counter(t.intention for t in tasks)),
        "switches": dict(sorted(Counter(d.switches for d in dialogues).items())),
        "origins": dict(Counter(t.origin.split(":")[0] for t in tasks)),
        "turns": dict(sorted(Counter(len(d.messages) for d in dialogues).items())),
        "functions_offered": dict(sorted(Counter(len(d.functions) for d in dialogues).items())),
    }


def main(argv: list[str] | None = None) -> int:
    parser = OneLineParser(prog="python -m otbench.envs.wild.generate", description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=OUTPUT_DIRECTORY, default=DATA_DIRECTORY,
                        help="where to write the files (default: the package)")
    parser.add_argument("--check", action="store_true", help="regenerate and compare with the files in --out")
    args = parser.parse_args(argv)
    if args.check:
        missing = [name for name in (TOOLSET_FILE, DIALOGUES_FILE) if not (args.out / name).is_file()]
        if missing:
            raise ConfigError(f"--out {args.out} has no {' and no '.join(missing)} to compare with: "
                              "leave --check out to write them there")
    else:
        check_outputs(parser, args, store=False)
    toolset, dialogues = generate(load_tests(ALL_CATEGORIES))
    toolset_bytes, dialogue_bytes = render_files(toolset, dialogues)
    if args.check:
        same = ((args.out / TOOLSET_FILE).read_bytes() == toolset_bytes
                and (args.out / DIALOGUES_FILE).read_bytes() == dialogue_bytes)
        print("the committed data is what the generator makes" if same else "the committed data DIFFERS")
        return 0 if same else 1
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / TOOLSET_FILE).write_bytes(toolset_bytes)
    (args.out / DIALOGUES_FILE).write_bytes(dialogue_bytes)
    print(json.dumps({"fingerprint": fingerprint_of(toolset_bytes, dialogue_bytes), "functions": len(toolset),
                      **statistics(dialogues)}, indent=1))
    return 0


if __name__ == "__main__":
    run_main(main)
