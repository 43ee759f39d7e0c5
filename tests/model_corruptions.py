"""Ways a cached model file goes bad, shared by the tests (a small fake model) and
``benchmarks/model_integrity.py`` (the real one): each changes the file at ``path`` in place."""

import json
import os

from otbench.llm import weights


def _flip(path, offset):
    """Change one byte in place and put mtime back, as a careful tamperer (or a tool that keeps times) would."""
    stat = path.stat()
    with path.open("r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)
        handle.seek(offset)
        handle.write(bytes([byte[0] ^ 0x01]))
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _same_size_replacement(path):
    stat = path.stat()
    other = path.with_name("other.bin")
    other.write_bytes(b"GGUF" + b"z" * (stat.st_size - 4))
    os.utime(other, ns=(stat.st_atime_ns, stat.st_mtime_ns))
    other.replace(path)


def _resize(path, change):
    stat = path.stat()
    data = path.read_bytes()
    path.write_bytes(data[:-1] if change < 0 else data + b"\0")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))


def _below_the_file_system(stamp_change):
    """Bytes changed where ctime does not see it (media decay, the raw device): the stamp is rewritten to match
    the changed file, as if nothing had happened, then aged by ``stamp_change``."""
    def corrupt(path):
        _flip(path, 60)
        marker = path.with_suffix(".verified.json")
        recorded = json.loads(marker.read_text())
        recorded["file"] = weights.file_identity(path)
        marker.write_text(json.dumps(stamp_change(recorded)))
    return corrupt


CORRUPTIONS = {
    "a byte flipped mid-file, mtime kept": lambda path: _flip(path, 70),
    "the magic's first byte flipped, mtime kept": lambda path: _flip(path, 0),
    "the last byte flipped, mtime kept": lambda path: _flip(path, path.stat().st_size - 1),
    "one byte cut off": lambda path: _resize(path, -1),
    "one byte appended": lambda path: _resize(path, +1),
    "replaced by another file of the same size and mtime": _same_size_replacement,
    "a byte flipped and the stamp deleted": lambda path: (_flip(path, 10), path.with_suffix(".verified.json").unlink()),
    "a byte flipped and the stamp garbled": lambda path: (_flip(path, 10),
                                                         path.with_suffix(".verified.json").write_text("{not json")),
    "changed below the file system, seen after a reboot": _below_the_file_system(
        lambda recorded: {**recorded, "boot_id": "an-earlier-boot"}),
    "changed below the file system, seen after FULL_CHECK_DAYS": _below_the_file_system(
        lambda recorded: {**recorded, "checked_at": recorded["checked_at"] - weights.FULL_CHECK_DAYS * 86400 - 1}),
}
