"""Raw-text mutations of YAML files, for benchmarks/fuzz.py: byte flips, truncation,
indentation breaks, tabs, anchors and aliases (before their anchor, undefined, merge keys),
duplicated, dropped and swapped lines (duplicate keys), stray YAML syntax and tags, CRLF,
BOM, a second document, an empty file and one past the size limit."""

from __future__ import annotations

import random


def count_steps(rng: random.Random) -> int:
    """How many mutations a case makes: 1, sometimes up to 4."""
    n = 1
    while n < 4 and rng.random() < 0.35:
        n += 1
    return n


TOKENS = [
    b"{", b"}", b"[", b"]", b": ", b"- ", b"&x ", b"*x ", b"!!binary aGVsbG8= ", b"---\n",
    b"!!python/object/apply:os.system ['true'] ", b"%YAML 1.1\n---\n", b"...\n", b"? ", b"|",
    b">", b"'", b'"', b"#", b"\t", b"\x00", b"\xef\xbb\xbf", b"@", b"`", b"<<: *x\n", b"!!set ",
    b"!!omap ", b"\xff\xfe",
]  # fmt: skip


def _lines(text: bytes) -> list[bytes]:
    return text.split(b"\n")


def byte_flip(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    data = bytearray(text)
    for _ in range(rng.randint(1, 8)):
        if data:
            data[rng.randrange(len(data))] = rng.randrange(256)
    return bytes(data), "flip bytes"


def truncate(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(text) + 1)
    return text[:at], f"truncate at byte {at}"


def indent(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    if rng.random() < 0.5:
        lines[i] = b" " * rng.randint(1, 3) + lines[i]
    else:
        lines[i] = lines[i][rng.randint(1, 3) :] if lines[i].startswith(b" ") else lines[i]
    return b"\n".join(lines), f"break the indentation of line {i + 1}"


def tabs(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    lines = _lines(text)
    i = rng.randrange(len(lines))
    stripped = lines[i].lstrip(b" ")
    lines[i] = b"\t" * max(1, (len(lines[i]) - len(stripped)) // 2) + stripped
    return b"\n".join(lines), f"tabs on line {i + 1}"


def alias(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    lines = _lines(text)
    keyed = [
        i for i, line in enumerate(lines) if b": " in line and not line.lstrip().startswith(b"#")
    ]
    if len(keyed) < 2:
        return text, "no lines for an alias"
    a, b = sorted(rng.sample(keyed, 2))
    if rng.random() < 0.5:
        a, b = b, a  # an alias before its anchor
    key, _, value = lines[a].partition(b": ")
    lines[a] = key + b": &anc " + value
    key, _, _ = lines[b].partition(b": ")
    lines[b] = key + rng.choice([b": *anc", b": *nope", b": [*anc, *anc]"])
    if rng.random() < 0.3:  # a merge key
        indent_ = lines[b][: len(lines[b]) - len(lines[b].lstrip())]
        lines.insert(b + 1, indent_ + b"<<: *anc")
    return b"\n".join(lines), f"anchor on line {a + 1}, alias on line {b + 1}"


def line_edit(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    lines = _lines(text)
    i, j = rng.randrange(len(lines)), rng.randrange(len(lines))
    what = rng.choice(["duplicate", "delete", "swap"])
    if what == "duplicate":
        lines.insert(i, lines[i])
    elif what == "delete":
        del lines[i]
    else:
        lines[i], lines[j] = lines[j], lines[i]
    return b"\n".join(lines), f"{what} line {i + 1}"


def token(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    at = rng.randrange(len(text) + 1)
    piece = rng.choice(TOKENS)
    return text[:at] + piece + text[at:], f"insert {piece[:20]!r} at byte {at}"


def whole_file(rng: random.Random, text: bytes) -> tuple[bytes, str]:
    what = rng.choice(["crlf", "bom", "second document", "empty", "comments only", "big"])
    if what == "crlf":
        return text.replace(b"\n", b"\r\n"), what
    if what == "bom":
        return b"\xef\xbb\xbf" + text, what
    if what == "second document":
        return text + b"\n---\nname: other\n", what
    if what == "empty":
        return b"", what
    if what == "comments only":
        return b"# nothing\n", what
    return text * (1_100_000 // max(len(text), 1) + 1), what  # past the 1 MB limit


RAW = [byte_flip, truncate, indent, tabs, alias, alias, line_edit, line_edit, token, token]
RAW += [whole_file]


def mutate_text(rng: random.Random, text: bytes) -> tuple[bytes, list[str]]:
    steps = []
    for _ in range(count_steps(rng)):
        text, step = rng.choice(RAW)(rng, text)
        steps.append(step)
    return text, steps
