"""A small GBNF recogniser, so tests can check which texts a grammar admits without a model.

It reads the GBNF that llama.cpp reads (rules ``name ::= expr``, alternatives, sequences, string
literals, character classes, groups and the ``* + ? {m} {m,} {m,n}`` repetitions) and decides
whether a whole text matches ``root``. Matching is by sets of end positions, so ambiguity needs
no backtracking; it is meant for replies of a few kilobytes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True)
class Node:
    kind: str  # "lit", "class", "ref", "seq", "alt", "rep"
    value: object = None
    children: tuple[Node, ...] = ()
    low: int = 0
    high: int | None = None


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "\\": "\\", '"': '"', "[": "[", "]": "]", "-": "-", "^": "^", "/": "/"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0

    def space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in " \t":
            self.pos += 1

    def char(self) -> str:
        """One possibly escaped character of a literal or class."""
        c = self.text[self.pos]
        self.pos += 1
        if c != "\\":
            return c
        e = self.text[self.pos]
        self.pos += 1
        if e == "x":
            code, self.pos = self.text[self.pos : self.pos + 2], self.pos + 2
            return chr(int(code, 16))
        if e == "u":
            code, self.pos = self.text[self.pos : self.pos + 4], self.pos + 4
            return chr(int(code, 16))
        return _ESCAPES[e]

    def alternatives(self) -> Node:
        options = [self.sequence()]
        while self.pos < len(self.text) and self.text[self.pos] == "|":
            self.pos += 1
            options.append(self.sequence())
        return options[0] if len(options) == 1 else Node("alt", children=tuple(options))

    def sequence(self) -> Node:
        items = []
        while True:
            self.space()
            if self.pos >= len(self.text) or self.text[self.pos] in "|)":
                break
            items.append(self.postfix(self.atom()))
        return items[0] if len(items) == 1 else Node("seq", children=tuple(items))

    def atom(self) -> Node:
        c = self.text[self.pos]
        if c == '"':
            self.pos += 1
            chars = []
            while self.text[self.pos] != '"':
                chars.append(self.char())
            self.pos += 1
            return Node("lit", "".join(chars))
        if c == "[":
            self.pos += 1
            negated = self.text[self.pos] == "^"
            self.pos += negated
            ranges = []
            while self.text[self.pos] != "]":
                start = self.char()
                end = start
                if self.text[self.pos] == "-" and self.text[self.pos + 1] != "]":
                    self.pos += 1
                    end = self.char()
                ranges.append((start, end))
            self.pos += 1
            return Node("class", (negated, tuple(ranges)))
        if c == "(":
            self.pos += 1
            inner = self.alternatives()
            assert self.text[self.pos] == ")", self.text[self.pos:]
            self.pos += 1
            return inner
        name = re.match(r"[a-zA-Z0-9-]+", self.text[self.pos :])
        assert name, f"cannot read {self.text[self.pos:]!r}"
        self.pos += name.end()
        return Node("ref", name.group())

    def postfix(self, node: Node) -> Node:
        if self.pos >= len(self.text):
            return node
        c = self.text[self.pos]
        if c in "*+?":
            self.pos += 1
            return Node("rep", children=(node,), low=1 if c == "+" else 0, high=1 if c == "?" else None)
        bounds = re.match(r"\{(\d+)(,(\d*))?\}", self.text[self.pos :])
        if bounds:
            self.pos += bounds.end()
            low = int(bounds.group(1))
            high = low if bounds.group(2) is None else (int(bounds.group(3)) if bounds.group(3) else None)
            return Node("rep", children=(node,), low=low, high=high)
        return node


def parse_grammar(text: str) -> dict[str, Node]:
    rules = {}
    for line in text.splitlines():
        if line.strip():
            name, body = line.split("::=", 1)
            parser = _Parser(body.strip())
            rules[name.strip()] = parser.alternatives()
            assert parser.pos == len(parser.text), f"rule {name!r} not fully read"
    return rules


class Grammar:
    """``Grammar(gbnf).accepts(text)``: does the whole text match the ``root`` rule?"""

    def __init__(self, gbnf: str) -> None:
        self.rules = parse_grammar(gbnf)
        missing = {n.value for n in self._nodes() if n.kind == "ref"} - set(self.rules)
        assert not missing, f"undefined rules: {missing}"

    def _nodes(self):
        stack = list(self.rules.values())
        while stack:
            node = stack.pop()
            yield node
            stack.extend(node.children)

    def accepts(self, text: str) -> bool:
        @cache
        def ends(node: Node, start: int) -> frozenset[int]:
            if node.kind == "lit":
                return frozenset([start + len(node.value)]) if text.startswith(node.value, start) else frozenset()
            if node.kind == "class":
                if start >= len(text):
                    return frozenset()
                negated, ranges = node.value
                inside = any(low <= text[start] <= high for low, high in ranges)
                return frozenset([start + 1]) if inside != negated else frozenset()
            if node.kind == "ref":
                return ends(self.rules[node.value], start)
            if node.kind == "alt":
                return frozenset().union(*(ends(child, start) for child in node.children))
            if node.kind == "seq":
                positions = frozenset([start])
                for child in node.children:
                    positions = frozenset().union(*(ends(child, p) for p in positions)) if positions else positions
                return positions
            # repetition: breadth-first over counts
            (child,) = node.children
            reached = frozenset([start]) if node.low == 0 else frozenset()
            frontier, count = frozenset([start]), 0
            while frontier and (node.high is None or count < node.high):
                frontier = frozenset().union(*(ends(child, p) for p in frontier))
                count += 1
                if count >= node.low:
                    new = frontier - reached
                    reached |= frontier
                    if node.high is None and not new:
                        break
            return reached

        return len(text) in ends(self.rules["root"], 0)
